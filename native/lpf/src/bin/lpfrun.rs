//! `lpfrun`: starts an LPF program as P processes that meet over TCP.
//!
//! ```text
//! lpfrun -n P [--engine tcp|hybrid] [--threads K] [--hosts FILE] [--port N]
//!        [--timeout-ms T] [--] prog args...
//! ```
//!
//! Every process gets `LPF_ENGINE`, `LPF_TCP_MASTER`, `LPF_TCP_PORT`, `LPF_PID`,
//! `LPF_NPROCS`, `LPF_THREADS`, `LPF_TCP_SECRET` (random per run), `LPF_TCP_JOB` and
//! `LPF_TCP_TIMEOUT_MS`, so that `Root::exec` in it joins the job. With `--hosts`, process
//! i runs on line i mod h of the file (pid 0 on the first host, which is the master);
//! processes for local hosts are started, for the others the ssh command is printed.
//! lpfrun waits for its processes; when one fails (non-zero exit or a signal) the others
//! are terminated, and lpfrun exits with the first failure's code (128 + signal for a
//! signal), else 0.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

fn usage(msg: &str) -> ! {
    eprintln!("lpfrun: {msg}");
    eprintln!(
        "usage: lpfrun -n P [--engine tcp|hybrid] [--threads K] [--hosts FILE] [--port N] [--timeout-ms T] [--] prog args..."
    );
    std::process::exit(2)
}

struct Opts {
    n: u32,
    engine: String,
    threads: u32,
    hosts: Option<String>,
    port: Option<u16>,
    timeout_ms: u64,
    prog: Vec<String>,
}

fn parse() -> Opts {
    let mut a = std::env::args().skip(1);
    let mut o = Opts { n: 0, engine: "tcp".into(), threads: 1, hosts: None, port: None, timeout_ms: 60_000, prog: Vec::new() };
    let num = |v: Option<String>, what: &str| -> u64 {
        v.and_then(|v| v.parse().ok()).unwrap_or_else(|| usage(&format!("{what} needs a number")))
    };
    while let Some(arg) = a.next() {
        match arg.as_str() {
            "-n" | "--np" => o.n = num(a.next(), "-n") as u32,
            "--engine" => o.engine = a.next().unwrap_or_else(|| usage("--engine needs a value")),
            "--threads" => o.threads = num(a.next(), "--threads") as u32,
            "--hosts" => o.hosts = Some(a.next().unwrap_or_else(|| usage("--hosts needs a file"))),
            "--port" => o.port = Some(num(a.next(), "--port") as u16),
            "--timeout-ms" => o.timeout_ms = num(a.next(), "--timeout-ms"),
            "-h" | "--help" => usage("help"),
            "--" => {
                o.prog.extend(a.by_ref());
            }
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
    if !matches!(o.engine.as_str(), "tcp" | "hybrid") {
        usage("--engine is tcp or hybrid");
    }
    if o.threads == 0 {
        usage("--threads must be at least 1");
    }
    if o.threads > 1 {
        o.engine = "hybrid".into();
    }
    o
}

fn random_hex() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("OS random source");
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

fn code_of(s: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

fn main() {
    let o = parse();
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
    let secret = random_hex();
    let job = format!("lpfrun-{}-{}", std::process::id(), &secret[..8]);
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| ".".into());
    let mut children: Vec<(u32, Child)> = Vec::new();
    let mut remote = 0;
    for pid in 0..o.n {
        let host = &hosts[pid as usize % hosts.len()];
        let env: Vec<(&str, String)> = vec![
            ("LPF_ENGINE", o.engine.clone()),
            ("LPF_TCP_MASTER", master.clone()),
            ("LPF_TCP_PORT", port.to_string()),
            ("LPF_PID", pid.to_string()),
            ("LPF_NPROCS", o.n.to_string()),
            ("LPF_THREADS", o.threads.to_string()),
            ("LPF_TCP_SECRET", secret.clone()),
            ("LPF_TCP_JOB", job.clone()),
            ("LPF_TCP_TIMEOUT_MS", o.timeout_ms.to_string()),
        ];
        if o.hosts.is_some() && !is_local(host) {
            let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
            let prog: Vec<String> = o.prog.iter().map(|s| shell_quote(s)).collect();
            println!("ssh {host} 'cd {} && env {} {}'", shell_quote(&cwd), vars.join(" "), prog.join(" "));
            remote += 1;
            continue;
        }
        let mut c = Command::new(&o.prog[0]);
        c.args(&o.prog[1..]).envs(env.iter().map(|(k, v)| (k, v)));
        match c.spawn() {
            Ok(ch) => children.push((pid, ch)),
            Err(e) => {
                eprintln!("lpfrun: cannot start `{}` as pid {pid}: {e}", o.prog[0]);
                terminate(&mut children);
                std::process::exit(127);
            }
        }
    }
    if remote > 0 {
        eprintln!("lpfrun: {remote} process(es) must be started on remote hosts with the commands above");
    }
    let mut first_failure: Option<i32> = None;
    while !children.is_empty() {
        let mut i = 0;
        while i < children.len() {
            match children[i].1.try_wait() {
                Ok(Some(status)) => {
                    let (pid, _) = children.remove(i);
                    if !status.success() && first_failure.is_none() {
                        let code = code_of(status);
                        eprintln!("lpfrun: pid {pid} failed ({status}); stopping the others");
                        first_failure = Some(code);
                        terminate(&mut children);
                    }
                }
                Ok(None) => i += 1,
                Err(e) => {
                    eprintln!("lpfrun: waiting for pid {}: {e}", children[i].0);
                    children.remove(i);
                }
            }
        }
        if !children.is_empty() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    std::process::exit(first_failure.unwrap_or(0));
}

/// SIGTERM to every child, SIGKILL to those still there after a grace period.
fn terminate(children: &mut [(u32, Child)]) {
    for (_, c) in children.iter() {
        // SAFETY: kill(2) on the pid of a child we have not reaped yet.
        unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
    }
    let until = Instant::now() + Duration::from_secs(2);
    for (_, c) in children.iter_mut() {
        while Instant::now() < until {
            if let Ok(Some(_)) = c.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = c.kill();
    }
}
