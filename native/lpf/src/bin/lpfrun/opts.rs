//! lpfrun's command line: the options, the reference launcher's spellings, and which
//! engines mpirun starts.

use lpf::config::{EngineKind, Launcher, ENGINES};

pub(crate) fn usage(msg: &str) -> ! {
    eprintln!("lpfrun: {msg}");
    eprintln!(
        "usage: lpfrun -n|-np P [--engine|-engine ENGINE] [--threads K] [--hosts FILE] [--port N] [--timeout-ms T] [--] prog args...\n\
         \x20      lpfrun --list-engines   (every engine of the registry: name, cargo feature, launcher, aliases)\n\
         ENGINE: {} (default tcp)",
        lpfrun_engines()
    );
    std::process::exit(2)
}

/// The engines lpfrun starts (the registry's engines that need no other launcher), with
/// their aliases.
fn lpfrun_engines() -> String {
    ENGINES
        .iter()
        .filter(|e| e.launcher != Launcher::Mpirun)
        .map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()).collect::<Vec<_>>().join("|"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) struct Opts {
    pub n: u32,
    pub engine: EngineKind,
    pub threads: u32,
    pub hosts: Option<String>,
    pub port: Option<u16>,
    pub timeout_ms: u64,
    /// `-mpirun,ARG`s, for mpirun (the engines it starts, see `run_under_mpirun`).
    pub mpirun_args: Vec<String>,
    pub prog: Vec<String>,
}

/// The reference launcher's tuning options (each with a value): they tune its engines'
/// internals (pinning, spin locks, all-to-all and message sizes, logging) and change no
/// result, so they are accepted and have no effect here.
const REFERENCE_TUNING: [&str; 8] =
    ["-pinning", "-spinlock", "-a2amode", "-tiny-msg-size", "-write-conflict-block-size", "-max-mpi-msg-size", "-ibverbs-mtu", "-log"];

/// The reference launcher's options this lpfrun refuses, with what to use instead: each
/// would change what runs, so taking it silently would run something else.
const REFERENCE_REFUSED: [(&str, &str); 5] = [
    ("-N", "the number of OS processes is -n P (and --threads K per process on hybrid)"),
    ("-process-per", "hybrid's layout is -n P processes of --threads K threads each"),
    ("-bsplib", "BSPlib's safe/fast mode and hp registrations are bsplib_create's arguments here"),
    ("-show", "lpfrun starts the processes itself (mpirun for mpimsg and mpirma), with no command to show"),
    ("-no-auto-init", "a program that initialises LPF itself defines the published symbol LPF_MPI_AUTO_INITIALIZE as 0"),
];

pub(crate) fn parse() -> Opts {
    let mut a = std::env::args().skip(1);
    let mut o = Opts {
        n: 0,
        engine: EngineKind::Tcp,
        threads: 1,
        hosts: None,
        port: None,
        timeout_ms: 60_000,
        mpirun_args: Vec::new(),
        prog: Vec::new(),
    };
    while let Some(arg) = a.next() {
        match arg.as_str() {
            // The reference's -probe SECONDS: how long its lpf_probe measures the machine.
            // Here g and l come from the tables lpfprobe measured beforehand, so the
            // value is checked and has no effect.
            "-probe" => {
                let v = a.next().unwrap_or_else(|| usage("-probe needs a number of seconds"));
                if !v.parse::<f64>().is_ok_and(|s| s.is_finite() && s >= 0.0) {
                    usage(&format!("-probe: expected a number of seconds >= 0, got {v:?}"));
                }
            }
            s if s.starts_with("-mpirun,") => o.mpirun_args.push(s["-mpirun,".len()..].to_string()),
            s if REFERENCE_TUNING.contains(&s) => {
                let v = a.next().unwrap_or_else(|| usage(&format!("{s} needs a value")));
                say!("lpfrun: {s} {v}: accepted and without effect (it tunes the reference LPF's engines)");
            }
            "-verbose" => {}
            s if REFERENCE_REFUSED.iter().any(|(name, _)| *name == s) => {
                let why = REFERENCE_REFUSED.iter().find(|(name, _)| *name == s).map_or("", |(_, why)| why);
                usage(&format!("the reference launcher's option {s} is not supported: {why}"))
            }
            "-n" | "--np" | "-np" | "-npes" => o.n = number(a.next(), &arg, 1..=MAX_PROCS),
            "--engine" | "-engine" => {
                let name = a.next().unwrap_or_else(|| usage(&format!("{arg} needs a value")));
                // `pthread`, the reference's name of its shared-memory engine, is an alias.
                o.engine = EngineKind::parse(&name).unwrap_or_else(|e| usage(&format!("--engine: {}", e.message())));
            }
            "--threads" => o.threads = number(a.next(), "--threads", 1..=MAX_PROCS),
            "--hosts" => o.hosts = Some(a.next().unwrap_or_else(|| usage("--hosts needs a file"))),
            "--port" => o.port = Some(number(a.next(), "--port", 0..=u16::MAX)),
            "--timeout-ms" => o.timeout_ms = number(a.next(), "--timeout-ms", 0..=u64::MAX),
            "-h" | "--help" => usage("help"),
            "--list-engines" => {
                for e in &ENGINES {
                    let mut columns = vec![e.name, e.feature.unwrap_or("-"), e.launcher.name()];
                    columns.extend(e.aliases);
                    println!("{}", columns.join(" "));
                }
                std::process::exit(0)
            }
            "--" => o.prog.extend(a.by_ref()),
            s if s.starts_with('-') && o.prog.is_empty() => usage(&format!("unknown option {s}")),
            _ => {
                o.prog.push(arg);
                o.prog.extend(a.by_ref());
            }
        }
    }
    checked(o)
}

/// The options `o` if they go together (else a usage error); more than one thread per
/// process selects the hybrid engine.
fn checked(mut o: Opts) -> Opts {
    if o.n == 0 {
        usage("-n P (P >= 1) is required");
    }
    if o.prog.is_empty() {
        usage("no program given");
    }
    if runs_under_mpirun(o.engine) {
        if o.hosts.is_some() || o.port.is_some() {
            usage(&format!("engine {} runs under mpirun: --hosts and --port do not apply (mpirun's own options do, as -mpirun,ARG)", o.engine));
        }
        if o.threads > 1 && o.engine != EngineKind::Hybrid {
            usage(&format!("engine {} runs one LPF process per MPI process: --threads does not apply", o.engine));
        }
    } else if !o.mpirun_args.is_empty() {
        // As the reference's launcher does for its pthread engine.
        say!("lpfrun: ignoring the mpirun arguments {:?}: engine {} does not run under mpirun", o.mpirun_args, o.engine);
    }
    if o.engine == EngineKind::Shm && (o.threads > 1 || o.hosts.is_some()) {
        usage("engine shm runs P threads in one process: --threads and --hosts do not apply");
    }
    if o.threads > 1 {
        o.engine = EngineKind::Hybrid;
    }
    o
}

/// The most processes a job (and threads a process) can have: LPF_NPROCS' and
/// LPF_THREADS' limit.
const MAX_PROCS: u32 = 65535;

/// The value of option `what`, a decimal number in `range`; else a usage error naming
/// the option, the value and the range (never a value cut to fit: `--port 99999` is not
/// port 34463).
fn number<T: std::str::FromStr + PartialOrd + std::fmt::Display>(v: Option<String>, what: &str, range: std::ops::RangeInclusive<T>) -> T {
    let v = v.unwrap_or_else(|| usage(&format!("{what} needs a number")));
    match v.parse::<T>() {
        Ok(n) if range.contains(&n) => n,
        _ => usage(&format!("{what}: expected a number in {}..={}, got {v:?}", range.start(), range.end())),
    }
}

/// Whether `engine` is started through mpirun: the registry's MPI engines, and hybrid
/// when its network (`LPF_HYBRID_NET` in lpfrun's environment) is one of them.
pub(crate) fn runs_under_mpirun(engine: EngineKind) -> bool {
    match engine {
        EngineKind::Hybrid => hybrid_net().launcher() == Launcher::Mpirun,
        e => e.launcher() == Launcher::Mpirun,
    }
}

/// The hybrid engine's network: `LPF_HYBRID_NET`, read through `lpf::config` as every
/// LPF variable (an invalid LPF variable is a usage error here, as it would be in the
/// processes).
pub(crate) fn hybrid_net() -> EngineKind {
    match lpf::config::Config::from_env() {
        Ok(c) => c.root_hybrid_net(),
        Err(e) => usage(e.message()),
    }
}
