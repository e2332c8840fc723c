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


use lpf::config::EngineKind;
use opts::{parse, runs_under_mpirun, hybrid_net, usage, Opts};
use output::{Forwarders, Sink, FORWARD_GRACE};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use supervise::{stop_all, supervise, wait_set, Proc};

/// `eprintln!` in one write(2), so that a line of lpfrun is never cut by the output of
/// the processes that share its standard error.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let line = format!("{}\n", format_args!($($arg)*));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

mod opts;
mod output;
mod supervise;

fn main() {
    let o = parse();
    if runs_under_mpirun(o.engine) {
        run_under_mpirun(&o);
    }
    let job = Job::new(&o);
    check_fits(&o, &job);
    let secret_file = secret_file_for_remotes(&o, &job);
    // The signals lpfrun handles are blocked and taken with sigtimedwait, so that a
    // child's end is seen at once (the first to end is the one reported) and a stop
    // request is forwarded to every child. Children start with nothing blocked.
    let set = wait_set();
    // SAFETY: changes this thread's mask (lpfrun has no other threads).
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let (mut running, forwarders, remote) = start_processes(&o, &job, secret_file.as_deref());
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

/// What the processes of one run share: the hosts, where pid 0 listens, the secret and
/// the job's name.
struct Job {
    /// The hosts of `--hosts` (process i on line i mod h), else this one.
    hosts: Vec<String>,
    /// Whether the hosts come from `--hosts` (else every process is local).
    listed: bool,
    master: String,
    port: u16,
    secret: String,
    name: String,
    /// lpfrun's working directory, where the remote commands start too.
    cwd: String,
}

impl Job {
    fn new(o: &Opts) -> Job {
        let hosts = read_hosts(o);
        let master = if is_local(&hosts[0]) && o.hosts.is_none() { "127.0.0.1".to_string() } else { hosts[0].clone() };
        let port = o.port.unwrap_or_else(|| {
            // A port the OS considers free now; pid 0 binds it again at once.
            std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(7177)
        });
        // 128 random bits (32 characters, above the TCP engine's minimum of 16 bytes). The
        // job name is drawn separately: it travels in clear in every HELLO, so it must say
        // nothing about the secret.
        let secret = random_hex(16);
        let name = format!("lpfrun-{}-{}", std::process::id(), random_hex(4));
        let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| ".".into());
        Job { hosts, listed: o.hosts.is_some(), master, port, secret, name, cwd }
    }

    fn host(&self, pid: u32) -> &str {
        &self.hosts[pid as usize % self.hosts.len()]
    }

    fn is_remote(&self, pid: u32) -> bool {
        self.listed && !is_local(self.host(pid))
    }

    /// The LPF variables of process `pid` (all but the secret).
    fn env(&self, o: &Opts, pid: u32) -> Vec<(&'static str, String)> {
        if o.engine == EngineKind::Shm {
            vec![("LPF_ENGINE", o.engine.name().to_string()), ("LPF_MAX_PROCS", o.n.to_string())]
        } else {
            vec![
                ("LPF_ENGINE", o.engine.name().to_string()),
                ("LPF_TCP_MASTER", self.master.clone()),
                ("LPF_TCP_PORT", self.port.to_string()),
                ("LPF_PID", pid.to_string()),
                ("LPF_NPROCS", o.n.to_string()),
                ("LPF_THREADS", o.threads.to_string()),
                ("LPF_TCP_JOB", self.name.clone()),
                ("LPF_TCP_TIMEOUT_MS", o.timeout_ms.to_string()),
            ]
        }
    }
}

/// The hosts of `--hosts` (comments after `#` and empty lines left out), else this one.
fn read_hosts(o: &Opts) -> Vec<String> {
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
    hosts
}

/// Exits (status 1, naming the limit) unless this machine can hold the job's local
/// processes ([`check_limits`]).
fn check_fits(o: &Opts, job: &Job) {
    let local = (0..processes_of(o)).filter(|&pid| !job.is_remote(pid)).count() as u64;
    let threads_per_process = if o.engine == EngineKind::Shm { o.n } else { o.threads };
    if let Err(why) = check_limits(o.n, local, threads_per_process) {
        say!("lpfrun: cannot run {} processes: {why}", o.n);
        std::process::exit(1);
    }
}

/// The file the remote processes read the secret from, when there are any; lpfrun
/// exits (status 1) if it cannot be written.
fn secret_file_for_remotes(o: &Opts, job: &Job) -> Option<PathBuf> {
    if !(0..o.n).any(|pid| job.is_remote(pid)) {
        return None;
    }
    match write_secret_file(&job.secret) {
        Ok(p) => Some(p),
        Err(e) => {
            say!("lpfrun: cannot write the job's secret for the remote hosts to a private file: {e}");
            std::process::exit(1);
        }
    }
}

/// Starts the local processes, their output passed on by `Forwarders`, and prints
/// the ssh command of each remote one: the running processes, their forwarders and the
/// number of remote processes. If one cannot start, lpfrun ends ([`abandon_start`]).
fn start_processes(o: &Opts, job: &Job, secret_file: Option<&Path>) -> (Vec<Proc>, Forwarders, u32) {
    let me = std::process::id() as libc::pid_t;
    let mut running: Vec<Proc> = Vec::new();
    let mut forwarders = Forwarders::default();
    let mut remote = 0;
    for pid in 0..processes_of(o) {
        let env = job.env(o, pid);
        if job.is_remote(pid) {
            let file = secret_file.expect("written when a process is remote");
            print_remote_command(o, job, pid, &env, file);
            remote += 1;
            continue;
        }
        match spawn_local(o, job, &env, me) {
            // The child is reaped with waitpid (`supervise`), not through `Child`.
            Ok(mut ch) => {
                forwarders.start(ch.stdout.take(), Sink::Stdout);
                forwarders.start(ch.stderr.take(), Sink::Stderr);
                running.push(Proc { pid, os_pid: ch.id() as libc::pid_t });
            }
            Err(e) => {
                say!("lpfrun: cannot start `{}` as pid {pid}: {e}", o.prog[0]);
                abandon_start(&running, secret_file);
            }
        }
    }
    (running, forwarders, remote)
}

/// Prints the ssh command that starts process `pid` (variables `env`) on its remote
/// host, reading the secret from `secret_file` through ssh's standard input.
fn print_remote_command(o: &Opts, job: &Job, pid: u32, env: &[(&str, String)], secret_file: &Path) {
    let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
    let prog: Vec<String> = o.prog.iter().map(|s| shell_quote(s)).collect();
    // The remote shell reads the secret from ssh's standard input.
    let remote_cmd = format!(
        "cd {} && IFS= read -r LPF_TCP_SECRET && export LPF_TCP_SECRET && exec env {} {}",
        shell_quote(&job.cwd),
        vars.join(" "),
        prog.join(" ")
    );
    println!("ssh {} {} < {}", job.host(pid), shell_quote(&remote_cmd), shell_quote(&secret_file.display().to_string()));
}

/// Starts one local process with the variables `env` and the secret, its output piped;
/// `me` is lpfrun's OS pid.
fn spawn_local(o: &Opts, job: &Job, env: &[(&str, String)], me: libc::pid_t) -> std::io::Result<std::process::Child> {
    let mut c = Command::new(&o.prog[0]);
    c.args(&o.prog[1..]).envs(env.iter().map(|(k, v)| (k, v))).env("LPF_TCP_SECRET", &job.secret);
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
    c.spawn()
}

/// A process could not start: the ones `running` are killed and reaped, the secret
/// file is removed, and lpfrun exits with status 127.
fn abandon_start(running: &[Proc], secret_file: Option<&Path>) -> ! {
    stop_all(running, libc::SIGKILL);
    for p in running {
        // SAFETY: waitpid on our own child.
        unsafe { libc::waitpid(p.os_pid, &mut 0, 0) };
    }
    if let Some(f) = secret_file {
        remove_secret_file(f);
    }
    std::process::exit(127);
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

/// The secret for processes on remote hosts: written to a fresh 0600 file in a 0700
/// directory, which the printed ssh commands feed to ssh's standard input, so that it
/// appears on no command line and in no output.
fn write_secret_file(secret: &str) -> std::io::Result<PathBuf> {
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

fn remove_secret_file(path: &Path) {
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
