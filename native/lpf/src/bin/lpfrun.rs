//! `lpfrun`: starts an LPF program as P processes that meet over TCP.
//!
//! ```text
//! lpfrun -n P [--engine tcp|hybrid|shm] [--threads K] [--hosts FILE] [--port N]
//!        [--timeout-ms T] [--] prog args...
//! ```
//!
//! The reference LPF launcher's spellings are accepted too: `-np P` (and `-npes P`) for
//! `-n P`, `-engine E` for `--engine E`, and its engine name `pthread` for `shm` (an
//! alias in the engine registry, `lpf::config`, as is `threads`). With `shm` (threads
//! of one process) lpfrun runs the program once with `LPF_MAX_PROCS=P`. Its other
//! options: `-probe SECONDS` is checked and has no effect (g and l come from lpfprobe's
//! tables here); `-mpirun,ARG` passes ARG to mpirun (ignored, with a note, on an engine
//! that does not run under mpirun); its tuning options (`REFERENCE_TUNING`) are accepted
//! without effect, with a note; the others (`REFERENCE_REFUSED`) are refused by name.
//!
//! The engines that run under mpirun (mpimsg, mpirma; hybrid when `LPF_HYBRID_NET` is
//! one of them) are started by `mpirun -np P` in lpfrun's place (`run_under_mpirun`).
//!
//! Numbers are checked against their ranges (P and K 1..=65535, N 0..=65535, as
//! `LPF_NPROCS`, `LPF_THREADS` and `LPF_TCP_PORT`): a value out of range is a usage error
//! naming it, never a value cut to fit.
//!
//! `lpfrun --list-engines` prints the registry, one engine a line: its name, the cargo
//! feature it needs (`-`: none, it is in the default library), its launcher, then its
//! aliases (`shm - none pthread threads`). `lpfcc` takes its engines from there.
//!
//! The processes' standard output and error go through lpfrun line by line: each
//! complete line is written with one write under a lock, so lines of different
//! processes never mix, however the processes write them (a line longer than 64 KiB is
//! passed on in 64 KiB pieces; a last line without a newline is passed on at the end).
//! On shm the LPF processes are threads of one OS process writing to the same pipe:
//! lpfrun cannot tell their writes apart, so their lines are whole only if each thread
//! writes a line at once.
//!
//! Every process gets `LPF_ENGINE`, `LPF_TCP_MASTER`, `LPF_TCP_PORT`, `LPF_PID`,
//! `LPF_NPROCS`, `LPF_THREADS`, `LPF_TCP_SECRET` (128 random bits per run), `LPF_TCP_JOB`
//! (`lpfrun-<lpfrun's pid>-<8 random hex digits drawn apart from the secret>`: it travels
//! in clear) and `LPF_TCP_TIMEOUT_MS`, so that `Root::exec` in it joins the job (a C
//! program linked with `liblpf_core` joins before `main`, which then runs in pid 0's
//! process only: docs/compatibility.md, "Launched programs"). With
//! `--hosts`, process i runs on line i mod h of the file (pid 0 on the first host, which
//! is the master); processes for local hosts are started, for the others an ssh command
//! is printed. The secret is on no command line and in no output: local processes get
//! it in their environment; for remote ones lpfrun writes it to a file of mode 0600 (in
//! a fresh 0700 directory under `$XDG_RUNTIME_DIR` or the temporary directory) and each
//! printed command reads it through ssh's standard input (`ssh host '... read -r
//! LPF_TCP_SECRET ...' < FILE`); the file is deleted when the local processes end, or
//! stays (lpfrun says so) when every process is remote.
//!
//! Before starting anything, lpfrun checks that the job fits this machine (exit 1 with
//! the limit named otherwise): every process keeps a TCP connection to every other, so
//! it needs about P + 32 file descriptors (hard limit, `ulimit -Hn`), and the local
//! processes need at least K + 2 tasks each (kernel.pid_max, kernel.threads-max,
//! `ulimit -u` for users other than root).
//!
//! lpfrun waits for its processes. Each leads its own process group and gets SIGKILL
//! when lpfrun dies (`PR_SET_PDEATHSIG`), so none outlives lpfrun, even a SIGKILLed
//! one. When a process fails (non-zero exit or a signal), lpfrun names the one that
//! caused it (pid, OS pid, exit status or signal; failures are gathered for 250 ms and a
//! process killed by a signal is named before those that exited with an error, which
//! are typically its peers, failing because it died; a process that ended the job
//! through `lpf_abort` or the debug layer, which tells lpfrun so with SIGUSR1 just
//! before it exits, is named before both), sends SIGTERM to the others'
//! groups and SIGKILL 2 s later, and exits with its code (128 + signal for a signal). SIGTERM, SIGINT and SIGHUP to lpfrun are forwarded to every process
//! group the same way (a second one kills at once), and lpfrun then exits with 128 +
//! that signal. Else it exits 0.

use lpf::config::{EngineKind, Launcher, ENGINES};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// `eprintln!` in one write(2), so that a line of lpfrun is never cut by the output of
/// the processes that share its standard error.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let line = format!("{}\n", format_args!($($arg)*));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

fn usage(msg: &str) -> ! {
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

struct Opts {
    n: u32,
    engine: EngineKind,
    threads: u32,
    hosts: Option<String>,
    port: Option<u16>,
    timeout_ms: u64,
    /// `-mpirun,ARG`s, for mpirun (the engines it starts, see [`run_under_mpirun`]).
    mpirun_args: Vec<String>,
    prog: Vec<String>,
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

fn parse() -> Opts {
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

/// `n` random bytes from the OS, in hex.
fn random_hex(n: usize) -> String {
    let mut b = vec![0u8; n];
    if let Err(e) = getrandom::fill(&mut b) {
        say!("lpfrun: cannot read the OS random source: {e}");
        std::process::exit(1);
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn is_local(host: &str) -> bool {
    if matches!(host, "localhost" | "127.0.0.1" | "::1") {
        return true;
    }
    let own = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    host == own.trim()
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}

/// How a child ended, from its wait status: lpfrun's exit code for it (128 + signal
/// for a signal), and the words that report it.
fn ended(status: i32) -> (i32, String) {
    if libc::WIFEXITED(status) {
        (libc::WEXITSTATUS(status), format!("exited with status {}", libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        (128 + libc::WTERMSIG(status), format!("was killed by {}", signal_name(libc::WTERMSIG(status))))
    } else {
        (1, format!("ended with wait status {status:#x}"))
    }
}

/// The signals lpfrun waits for: children ending, and requests to stop.
const STOP_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The signal a child sends lpfrun (`LPF_LAUNCHER_PID`) just before it ends the job
/// with `lpf_abort`'s exit status ([`lpf::abort_job`]): its peers, seeing it go, may
/// exit with their own errors at the same moment, and it must be named as the cause.
const ABORT_SIGNAL: i32 = libc::SIGUSR1;

fn wait_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, ABORT_SIGNAL);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// The secret for processes on remote hosts: written to a fresh 0600 file in a 0700
/// directory, which the printed ssh commands feed to ssh's standard input, so that it
/// appears on no command line and in no output.
fn write_secret_file(secret: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let base = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from).filter(|d| d.is_dir()).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("lpfrun-{}-{}", std::process::id(), random_hex(8)));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let path = dir.join("secret");
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
    writeln!(f, "{secret}")?;
    Ok(path)
}

fn remove_secret_file(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// A number from a file of /proc.
fn proc_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Checks, before anything starts, that this machine can hold the job: each TCP
/// process keeps a connection to every other (about `n` + 32 file descriptors), and
/// the `local` processes started here are at least `threads` + 2 tasks each (threads
/// and the TCP progress thread). Without it, `-n 100000` forked until the kernel ran
/// out of pids, with every process already waiting for the others.
fn check_limits(n: u32, local: u64, threads: u32) -> Result<(), String> {
    let limit = |res| {
        let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the struct it is given.
        (unsafe { libc::getrlimit(res, &mut l) } == 0).then_some(l)
    };
    let fds = u64::from(n) + 32;
    if let Some(l) = limit(libc::RLIMIT_NOFILE) {
        if l.rlim_max != libc::RLIM_INFINITY && fds > l.rlim_max {
            return Err(format!(
                "each process keeps a connection to every other, so it needs about {fds} file descriptors, but the \
                 hard limit on them (ulimit -Hn) is {}",
                l.rlim_max
            ));
        }
    }
    let tasks = local * (u64::from(threads) + 2);
    let pid_max = proc_number("/proc/sys/kernel/pid_max").unwrap_or(u64::MAX);
    let threads_max = proc_number("/proc/sys/kernel/threads-max").unwrap_or(u64::MAX);
    // The 4th field of /proc/loadavg is "running/existing" tasks.
    let existing = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().nth(3)?.split_once('/')?.1.parse::<u64>().ok())
        .unwrap_or(0);
    let room = pid_max.min(threads_max).saturating_sub(existing);
    if tasks > room {
        return Err(format!(
            "the {local} processes to start here need at least {tasks} tasks ({} thread(s) each and 2 of LPF), but \
             this machine has room for {room} more (kernel.pid_max {pid_max}, kernel.threads-max {threads_max}, \
             {existing} exist)",
            threads
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        if let Some(l) = limit(libc::RLIMIT_NPROC) {
            if l.rlim_cur != libc::RLIM_INFINITY && tasks > l.rlim_cur {
                return Err(format!(
                    "the {local} processes to start here need at least {tasks} tasks ({threads} thread(s) each and 2 \
                     of LPF), but the limit on this user's processes and threads (ulimit -u) is {}",
                    l.rlim_cur
                ));
            }
        }
    }
    Ok(())
}

/// The OS processes of the job: on shm one process of P threads, else P.
fn processes_of(o: &Opts) -> u32 {
    if o.engine == EngineKind::Shm {
        1
    } else {
        o.n
    }
}

/// Where a forwarded stream goes.
#[derive(Clone, Copy)]
enum Sink {
    Stdout,
    Stderr,
}

/// A line longer than this is passed on in pieces of this size (so that a process
/// writing without newlines cannot make lpfrun hold unbounded memory).
const MAX_LINE: usize = 64 * 1024;

/// How long lpfrun waits, after its processes ended, for output still in the pipes
/// (held open by something they started).
const FORWARD_GRACE: Duration = Duration::from_secs(2);

/// Writes `bytes` (whole lines) to `sink` in one locked write, so that lines of
/// different processes, and lpfrun's own messages, never mix.
fn emit(sink: Sink, bytes: &[u8]) {
    use std::io::Write;
    let _ = match sink {
        Sink::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|_| out.flush())
        }
        Sink::Stderr => std::io::stderr().lock().write_all(bytes),
    };
}

/// Threads that pass the processes' output on line by line (module docs).
#[derive(Default)]
struct Forwarders {
    started: usize,
    done: Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>,
}

impl Forwarders {
    fn start(&mut self, pipe: Option<impl std::io::Read + Send + 'static>, sink: Sink) {
        let Some(mut pipe) = pipe else { return };
        let (tx, _) = self.done.get_or_insert_with(std::sync::mpsc::channel);
        let tx = tx.clone();
        self.started += 1;
        // Threads start with lpfrun's signal mask (the handled signals blocked), so
        // every signal still goes to the sigtimedwait of the main thread.
        std::thread::spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                pending.extend_from_slice(&chunk[..n]);
                let whole = match pending.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None if pending.len() >= MAX_LINE => pending.len(),
                    None => continue,
                };
                emit(sink, &pending[..whole]);
                pending.drain(..whole);
            }
            if !pending.is_empty() {
                emit(sink, &pending);
            }
            let _ = tx.send(());
        });
    }

    /// Waits until every stream has ended, at most `grace`.
    fn finish(self, grace: Duration) {
        let Some((_, rx)) = self.done else { return };
        let until = Instant::now() + grace;
        for _ in 0..self.started {
            if rx.recv_timeout(until.saturating_duration_since(Instant::now())).is_err() {
                say!("lpfrun: output of the processes still open {grace:?} after they ended (a process they started holds it); not waiting for it");
                return;
            }
        }
    }
}

/// One local process of the job.
struct Proc {
    pid: u32,
    os_pid: libc::pid_t,
}

/// Whether `engine` is started through mpirun: the registry's MPI engines, and hybrid
/// when its network (`LPF_HYBRID_NET` in lpfrun's environment) is one of them.
fn runs_under_mpirun(engine: EngineKind) -> bool {
    match engine {
        EngineKind::Hybrid => hybrid_net().launcher() == Launcher::Mpirun,
        e => e.launcher() == Launcher::Mpirun,
    }
}

/// The hybrid engine's network: `LPF_HYBRID_NET`, read through `lpf::config` as every
/// LPF variable (an invalid LPF variable is a usage error here, as it would be in the
/// processes).
fn hybrid_net() -> EngineKind {
    match lpf::config::Config::from_env() {
        Ok(c) => c.root_hybrid_net(),
        Err(e) => usage(e.message()),
    }
}

/// Starts the job as `mpirun [--allow-run-as-root] --oversubscribe ARGS... -x LPF_ENGINE
/// ... -np P prog args` in place of lpfrun (exec: mpirun then waits for the processes,
/// forwards their output and signals, and exits with the failing one's status). As root
/// mpirun needs --allow-run-as-root; --oversubscribe lets P exceed the cores, as the
/// other engines allow. For mpirma, `OMPI_MCA_osc=^ucx` unless set: Open MPI's UCX
/// one-sided component fails without an RDMA device (docs/mpi.md).
fn run_under_mpirun(o: &Opts) -> ! {
    let mut c = Command::new("mpirun");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.arg("--allow-run-as-root");
    }
    c.arg("--oversubscribe").args(&o.mpirun_args);
    c.env("LPF_ENGINE", o.engine.name()).args(["-x", "LPF_ENGINE"]);
    let uses_rma = o.engine == EngineKind::MpiRma || (o.engine == EngineKind::Hybrid && hybrid_net() == EngineKind::MpiRma);
    if uses_rma && std::env::var_os("OMPI_MCA_osc").is_none() {
        c.env("OMPI_MCA_osc", "^ucx");
    }
    if o.engine == EngineKind::Hybrid {
        c.env("LPF_THREADS", o.threads.to_string()).args(["-x", "LPF_THREADS", "-x", "LPF_HYBRID_NET"]);
    }
    c.args(["-np", &o.n.to_string()]).args(&o.prog);
    let e = c.exec();
    say!("lpfrun: cannot start mpirun for engine {} (Open MPI's mpirun must be on the PATH): {e}", o.engine);
    std::process::exit(127)
}

fn main() {
    let o = parse();
    if runs_under_mpirun(o.engine) {
        run_under_mpirun(&o);
    }
    let hosts: Vec<String> = match &o.hosts {
        None => vec!["127.0.0.1".into()],
        Some(f) => std::fs::read_to_string(f)
            .unwrap_or_else(|e| usage(&format!("cannot read {f}: {e}")))
            .lines()
            .map(|l| l.split('#').next().unwrap().trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    };
    if hosts.is_empty() {
        usage("the hosts file names no host");
    }
    let master = if is_local(&hosts[0]) && o.hosts.is_none() { "127.0.0.1".to_string() } else { hosts[0].clone() };
    let port = o.port.unwrap_or_else(|| {
        // A port the OS considers free now; pid 0 binds it again at once.
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(7177)
    });
    // 128 random bits (32 characters, above the TCP engine's minimum of 16 bytes). The
    // job name is drawn separately: it travels in clear in every HELLO, so it must say
    // nothing about the secret.
    let secret = random_hex(16);
    let job = format!("lpfrun-{}-{}", std::process::id(), random_hex(4));
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| ".".into());
    let is_remote = |pid: u32| o.hosts.is_some() && !is_local(&hosts[pid as usize % hosts.len()]);
    let local = (0..processes_of(&o)).filter(|&pid| !is_remote(pid)).count() as u64;
    let threads_per_process = if o.engine == EngineKind::Shm { o.n } else { o.threads };
    if let Err(why) = check_limits(o.n, local, threads_per_process) {
        say!("lpfrun: cannot run {} processes: {why}", o.n);
        std::process::exit(1);
    }
    let secret_file = if (0..o.n).any(is_remote) {
        match write_secret_file(&secret) {
            Ok(p) => Some(p),
            Err(e) => {
                say!("lpfrun: cannot write the job's secret for the remote hosts to a private file: {e}");
                std::process::exit(1);
            }
        }
    } else {
        None
    };

    // The signals lpfrun handles are blocked and taken with sigtimedwait, so that a
    // child's end is seen at once (the first to end is the one reported) and a stop
    // request is forwarded to every child. Children start with nothing blocked.
    let set = wait_set();
    // SAFETY: changes this thread's mask (lpfrun has no other threads).
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let me = std::process::id() as libc::pid_t;

    let mut running: Vec<Proc> = Vec::new();
    let mut forwarders = Forwarders::default();
    let mut remote = 0;
    let processes = processes_of(&o);
    for pid in 0..processes {
        let host = &hosts[pid as usize % hosts.len()];
        let env: Vec<(&str, String)> = if o.engine == EngineKind::Shm {
            vec![("LPF_ENGINE", o.engine.name().to_string()), ("LPF_MAX_PROCS", o.n.to_string())]
        } else {
            vec![
                ("LPF_ENGINE", o.engine.name().to_string()),
                ("LPF_TCP_MASTER", master.clone()),
                ("LPF_TCP_PORT", port.to_string()),
                ("LPF_PID", pid.to_string()),
                ("LPF_NPROCS", o.n.to_string()),
                ("LPF_THREADS", o.threads.to_string()),
                ("LPF_TCP_JOB", job.clone()),
                ("LPF_TCP_TIMEOUT_MS", o.timeout_ms.to_string()),
            ]
        };
        if is_remote(pid) {
            let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
            let prog: Vec<String> = o.prog.iter().map(|s| shell_quote(s)).collect();
            // The remote shell reads the secret from ssh's standard input.
            let remote_cmd = format!(
                "cd {} && IFS= read -r LPF_TCP_SECRET && export LPF_TCP_SECRET && exec env {} {}",
                shell_quote(&cwd),
                vars.join(" "),
                prog.join(" ")
            );
            let file = secret_file.as_deref().expect("written when a process is remote");
            println!("ssh {host} {} < {}", shell_quote(&remote_cmd), shell_quote(&file.display().to_string()));
            remote += 1;
            continue;
        }
        let mut c = Command::new(&o.prog[0]);
        c.args(&o.prog[1..]).envs(env.iter().map(|(k, v)| (k, v))).env("LPF_TCP_SECRET", &secret);
        c.env("LPF_LAUNCHER_PID", std::process::id().to_string());
        // Each child leads its own process group (so that stopping it reaches what it
        // started) and dies with lpfrun, however lpfrun ends (SIGKILL included).
        c.process_group(0);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            c.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != me {
                    // lpfrun died before the death signal was armed.
                    libc::_exit(128 + libc::SIGKILL);
                }
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                Ok(())
            });
        }
        c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        match c.spawn() {
            // The child is reaped below with waitpid, not through `Child`.
            Ok(mut ch) => {
                forwarders.start(ch.stdout.take(), Sink::Stdout);
                forwarders.start(ch.stderr.take(), Sink::Stderr);
                running.push(Proc { pid, os_pid: ch.id() as libc::pid_t });
            }
            Err(e) => {
                say!("lpfrun: cannot start `{}` as pid {pid}: {e}", o.prog[0]);
                stop_all(&running, libc::SIGKILL);
                for p in &running {
                    // SAFETY: waitpid on our own child.
                    unsafe { libc::waitpid(p.os_pid, &mut 0, 0) };
                }
                if let Some(f) = &secret_file {
                    remove_secret_file(f);
                }
                std::process::exit(127);
            }
        }
    }
    if remote > 0 {
        let file = secret_file.as_deref().expect("written when a process is remote");
        say!(
            "lpfrun: {remote} process(es) must be started on remote hosts with the commands above; they read the job's \
             secret from {} (mode 0600){}",
            file.display(),
            if running.is_empty() { ", which stays until you delete it" } else { ", deleted when the local processes end" }
        );
    }

    let had_local = !running.is_empty();
    let code = supervise(&mut running, &set);
    forwarders.finish(FORWARD_GRACE);
    if let (Some(f), true) = (&secret_file, had_local) {
        remove_secret_file(f);
    }
    std::process::exit(code);
}

/// Signal `sig` to every running child's process group.
fn stop_all(running: &[Proc], sig: i32) {
    for p in running {
        // SAFETY: kill(2) on the group of a child not reaped yet (its pid is not reused).
        unsafe { libc::kill(-p.os_pid, sig) };
    }
}

/// Waits for the children. When one fails (non-zero exit or a signal), lpfrun names
/// the one that caused it, with its pid, OS pid and how it ended, then sends the others
/// SIGTERM and, 2 s later, SIGKILL. A SIGTERM, SIGINT or SIGHUP to lpfrun is forwarded
/// to every child the same way (a second one kills them at once). Returns lpfrun's
/// exit code: the cause's code (128 + signal for a signal), else 128 + the stop signal,
/// else 0.
///
/// The cause is not simply the first child seen to fail: a killed process's peers see
/// its connections close and may exit before the kernel reports its own end (and
/// waitpid reports children that ended together in pid order). So failures are
/// gathered for [`SETTLE`] after the first, and a child killed by a signal (none is sent
/// by lpfrun before the report) goes before those that exited with an error, each in
/// the order seen; one that said it ended the job ([`ABORT_SIGNAL`]) goes first.
fn supervise(running: &mut Vec<Proc>, set: &libc::sigset_t) -> i32 {
    // OS pids of the children that sent ABORT_SIGNAL.
    let mut aborted: Vec<libc::pid_t> = Vec::new();
    let mut first_failure: Option<i32> = None;
    let mut stopped_by: Option<i32> = None;
    let mut kill_at: Option<Instant> = None;
    // Failures seen but not reported yet, in the order seen, and when to report.
    let mut failed: Vec<(Proc, i32)> = Vec::new();
    let mut report_at: Option<Instant> = None;
    let grace = Duration::from_secs(2);
    loop {
        // Reap every child that has ended.
        loop {
            let mut status = 0;
            // SAFETY: waitpid on any of our children, without blocking.
            let os_pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if os_pid <= 0 {
                break;
            }
            let Some(i) = running.iter().position(|p| p.os_pid == os_pid) else { continue };
            let p = running.remove(i);
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            if !ok && first_failure.is_none() && stopped_by.is_none() {
                report_at.get_or_insert(Instant::now() + SETTLE);
                failed.push((p, status));
            }
        }
        if report_at.is_some_and(|t| running.is_empty() || Instant::now() >= t) {
            report_at = None;
            take_abort_signals(&mut aborted);
            // A stable sort: among equals, the order seen.
            failed.sort_by_key(|(p, status)| (!aborted.contains(&p.os_pid), !libc::WIFSIGNALED(*status)));
            let (p, status) = &failed[0];
            let (code, mut how) = ended(*status);
            if aborted.contains(&p.os_pid) {
                how = format!("ended the job (lpf_abort) and {how}");
            }
            say!("lpfrun: pid {} (OS process {}) {how}; stopping the other {} process(es)", p.pid, p.os_pid, running.len());
            first_failure = Some(code);
            stop_all(running, libc::SIGTERM);
            kill_at = Some(Instant::now() + grace);
        }
        if running.is_empty() {
            return first_failure.or(stopped_by.map(|s| 128 + s)).unwrap_or(0);
        }
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            stop_all(running, libc::SIGKILL);
            kill_at = None;
        }
        let wait = report_at.map_or(Duration::from_millis(100), |t| t.saturating_duration_since(Instant::now()));
        let timeout = libc::timespec { tv_sec: 0, tv_nsec: wait.min(Duration::from_millis(100)).subsec_nanos() as _ };
        // SAFETY: waits for one of the blocked signals of `set`, at most 100 ms; `info`
        // is ours to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let sig = unsafe { libc::sigtimedwait(set, &mut info, &timeout) };
        if sig == ABORT_SIGNAL {
            // SAFETY: sigtimedwait filled `info` for this signal (si_pid is the sender's).
            aborted.push(unsafe { info.si_pid() });
        }
        if STOP_SIGNALS.contains(&sig) {
            if stopped_by.is_none() && first_failure.is_none() {
                say!("lpfrun: got {}; stopping the {} process(es)", signal_name(sig), running.len());
                stopped_by = Some(sig);
                report_at = None;
                stop_all(running, sig);
                kill_at = Some(Instant::now() + grace);
            } else {
                stop_all(running, libc::SIGKILL);
            }
        }
    }
}

/// Adds the senders of pending [`ABORT_SIGNAL`]s to `aborted`, without waiting: one
/// sent just before the children were all reaped has not been taken by the main wait.
fn take_abort_signals(aborted: &mut Vec<libc::pid_t>) {
    // SAFETY: sigemptyset/sigaddset fill a set we own; sigtimedwait with a zero timeout
    // only takes a pending signal (blocked since before the children started).
    unsafe {
        let mut only: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut only);
        libc::sigaddset(&mut only, ABORT_SIGNAL);
        let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::sigtimedwait(&only, &mut info, &now) == ABORT_SIGNAL {
            aborted.push(info.si_pid());
        }
    }
}

/// How long lpfrun gathers failures after the first before it names the cause.
const SETTLE: Duration = Duration::from_millis(250);
