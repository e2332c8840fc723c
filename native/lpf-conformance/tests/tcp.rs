//! The conformance suite on the TCP engine: each LPF process is a thread of this test
//! that makes its own TCP init over loopback (pid 0 binds port 0 and hands the port to
//! the others), once with the direct and once with the Bruck meta-data exchange.

mod tcp_launcher;

use lpf::tcp::MetaAlgo;
use lpf::{Args, Context, Pid, Result};
use lpf_conformance::{collectives_suite, conformance_suite, Launcher};
use tcp_launcher::run_over_tcp;

struct Tcp(MetaAlgo);

impl Launcher for Tcp {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        run_over_tcp(&vec![1; p as usize], self.0, false, spmd, args)
    }
    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        Some((0..p).map(|q| q..q + 1).collect())
    }
}

mod direct {
    use super::*;
    conformance_suite!(Tcp(MetaAlgo::Direct));
    collectives_suite!(Tcp(MetaAlgo::Direct));
}

mod bruck {
    use super::*;
    conformance_suite!(Tcp(MetaAlgo::Bruck));
}

/// Init traps, strays, faults and leaks. Tests that need separate OS processes (kill -9)
/// or a quiet process (counting file descriptors and threads) re-run this test binary
/// as a child that executes the ignored test `faults::child` with `LPF_TEST_CHILD` set.
mod faults {
    use super::run_over_tcp;
    use lpf::tcp::{MetaAlgo, TcpConfig, TcpInit};
    use lpf::{Args, Context, Pid, MSG_DEFAULT, SYNC_DEFAULT};
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// A port nobody listens on (bound and released; the kernel will not reuse it at
    /// once).
    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    fn cfg(port: u16, pid: Pid, n: Pid) -> TcpConfig {
        TcpConfig::new("127.0.0.1", port, pid, n).timeout(Duration::from_secs(20)).job("faults").secret("the right secret, 16+ bytes")
    }

    /// A ring of puts, checked.
    fn ring(ctx: &mut Context, _: Args<'_>) {
        let (pid, n) = (ctx.pid(), ctx.nprocs());
        lpf_conformance::setup(ctx, 2, 1);
        let mut a = [pid as u64 + 100];
        let mut b = [0u64];
        let s = ctx.register_local(&mut a).unwrap();
        let d = ctx.register_global(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        assert_eq!(ctx.slice(&d)[0], ((pid + n - 1) % n) as u64 + 100);
    }

    #[test]
    fn master_never_comes_fails_after_the_timeout_naming_host_and_port() {
        let port = free_port();
        let t = Instant::now();
        let e = TcpInit::new(cfg(port, 1, 2).timeout(Duration::from_millis(800))).err().expect("no master");
        let took = t.elapsed();
        assert!(e.is_fatal());
        assert!(e.message().contains(&format!("127.0.0.1:{port}")), "{e}");
        assert!(took >= Duration::from_millis(800) && took < Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn port_in_use_and_foreign_bind_address_are_explained() {
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        let e = TcpInit::prepare(cfg(port, 0, 2)).err().expect("port taken");
        assert!(e.message().contains("in use"), "{e}");
        // Pid 0 started on a machine that is not the master host: binding its address
        // fails (192.0.2.1 is TEST-NET-1, never local; no packet is sent).
        let e = TcpInit::prepare(TcpConfig::new("192.0.2.1", 0, 0, 2)).err().expect("not local");
        assert!(e.message().contains("must run on the master host"), "{e}");
        // Only pid 0 may ask for port 0; pids must be in range.
        assert!(TcpInit::prepare(cfg(0, 1, 2)).is_err());
        assert!(TcpInit::prepare(cfg(1, 2, 2)).is_err());
    }

    #[test]
    fn duplicate_pid_and_wrong_nprocs_are_refused_and_the_job_completes() {
        let prepared = TcpInit::prepare(cfg(0, 0, 3)).unwrap();
        let port = prepared.bound_port();
        std::thread::scope(|s| {
            let master = s.spawn(move || prepared.join()?.hook(&ring, Args::none()));
            // Wrong nprocs: refused at once with the reason.
            let e = TcpInit::new(cfg(port, 1, 4)).err().expect("wrong nprocs");
            assert!(e.message().contains("wrong nprocs"), "{e}");
            // Two processes claim pid 1: one is refused, the other stays.
            let (tx, rx) = mpsc::channel();
            let ones: Vec<_> = (0..2)
                .map(|_| {
                    let tx = tx.clone();
                    s.spawn(move || {
                        let r = TcpInit::new(cfg(port, 1, 3));
                        match r {
                            Err(e) => {
                                tx.send(e.message().to_string()).unwrap();
                                None
                            }
                            Ok(init) => Some(init.hook(&ring, Args::none())),
                        }
                    })
                })
                .collect();
            let refused = rx.recv_timeout(Duration::from_secs(10)).expect("one pid 1 is refused");
            assert!(refused.contains("duplicate pid 1"), "{refused}");
            let two = TcpInit::new(cfg(port, 2, 3)).unwrap().hook(&ring, Args::none());
            assert!(two.is_ok(), "{two:?}");
            let ok: Vec<_> = ones.into_iter().filter_map(|h| h.join().unwrap()).collect();
            assert_eq!(ok.len(), 1);
            assert!(ok[0].is_ok());
            master.join().unwrap().unwrap();
        });
    }

    #[test]
    fn strays_are_refused_and_the_real_job_completes() {
        let prepared = TcpInit::prepare(cfg(0, 0, 2)).unwrap();
        let port = prepared.bound_port();
        std::thread::scope(|s| {
            let master = s.spawn(move || prepared.join()?.hook(&ring, Args::none()));
            // Each stray is answered by the master closing the connection.
            let refused = |bytes: &[u8]| {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let _ = c.write_all(bytes);
                let mut all = Vec::new();
                let _ = c.read_to_end(&mut all);
                // The master's greeting (44 bytes), maybe a refusal, then EOF.
                assert!(all.len() >= 44 && &all[..7] == b"LPF-TCP", "{} bytes", all.len());
            };
            // A port scan: connect and close.
            drop(TcpStream::connect(("127.0.0.1", port)).unwrap());
            refused(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n garbage garbage garbage garbage");
            let mut wrong_version = b"LPF-TCP\0".to_vec();
            wrong_version.extend_from_slice(&99u16.to_le_bytes());
            wrong_version.extend_from_slice(&1u16.to_le_bytes());
            wrong_version.extend_from_slice(&[7u8; 32]);
            refused(&wrong_version);
            let e = TcpInit::new(cfg(port, 1, 2).secret("a wrong secret of 16+ bytes")).err().expect("wrong secret");
            assert!(e.message().contains("authentication") && e.reason() == lpf::Reason::Authentication, "{e}");
            let e = TcpInit::new(cfg(port, 1, 2).job("another job")).err().expect("wrong job");
            assert!(e.message().contains("not this job") && e.reason() == lpf::Reason::Config, "{e}");
            TcpInit::new(cfg(port, 1, 2)).unwrap().hook(&ring, Args::none()).unwrap();
            master.join().unwrap().unwrap();
        });
    }

    /// Two jobs with no secret and no job identity race for one port: job B's pid 1
    /// comes first and is taken into job A (nothing tells them apart); then job B's
    /// pid 0 finds the port taken. It tells job A's pid 0, which fails its job rather
    /// than run with a process of job B (before: job A assembled and ran with job B's
    /// pid 1, and job A's own pid 1 was refused as a duplicate).
    #[test]
    fn two_jobs_racing_for_one_port_without_a_secret_never_mix() {
        let port = free_port();
        let plain = move |pid: Pid, n: Pid| TcpConfig::new("127.0.0.1", port, pid, n).timeout(Duration::from_secs(3));
        std::thread::scope(|s| {
            let a0 = TcpInit::prepare(plain(0, 3)).unwrap();
            let a0 = s.spawn(move || a0.join().map(|_| ()));
            let b1 = s.spawn(move || TcpInit::new(plain(1, 3)).map(|_| ()));
            std::thread::sleep(Duration::from_millis(300));
            let e = TcpInit::prepare(plain(0, 3)).err().expect("job B's pid 0 cannot have the port");
            assert!(e.message().contains("in use") && e.message().contains("another LPF job"), "{e}");
            println!("job B's pid 0: {e}");
            let a1 = s.spawn(move || TcpInit::new(plain(1, 3)).map(|_| ()));
            let a2 = s.spawn(move || TcpInit::new(plain(2, 3)).map(|_| ()));
            let ra0 = a0.join().unwrap();
            let e = ra0.expect_err("job A's pid 0 assembled a job with job B's pid 1 in it");
            assert!(e.message().contains("another LPF job's pid 0"), "{e}");
            println!("job A's pid 0: {e}");
            for (name, h) in [("job B's pid 1", b1), ("job A's pid 1", a1), ("job A's pid 2", a2)] {
                let r = h.join().unwrap();
                assert!(r.is_err(), "{name} joined a job");
            }
        });
    }

    /// The processes other than pid 0 listen on a port of the configured range (for
    /// firewalls): the mesh of 3 assembles with pid 1 listening on the one free port
    /// given (the loss message names it), and a range whose ports are all taken is an
    /// error naming the range.
    #[test]
    fn listeners_use_the_configured_port_range() {
        let (p1, held) = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            (l.local_addr().unwrap().port(), l)
        };
        let in_range = move |pid: Pid, port: u16| cfg(port, pid, 3).listen_ports(p1, p1);
        // All ports of the range taken: pid 1 cannot listen.
        let prepared = TcpInit::prepare(in_range(0, 0).timeout(Duration::from_secs(1))).unwrap();
        let port = prepared.bound_port();
        std::thread::scope(|s| {
            let m = s.spawn(move || prepared.join().map(|_| ()));
            let e = TcpInit::new(in_range(1, port).timeout(Duration::from_secs(1))).err().expect("no free port in the range");
            assert!(e.message().contains(&format!("port range {p1}-{p1}")) && e.message().contains("in use"), "{e}");
            assert!(m.join().unwrap().is_err());
        });
        drop(held);
        // The one port free: pid 1 listens there; pid 1 leaves early, so pid 2's error
        // names pid 1 with that port.
        let prepared = TcpInit::prepare(in_range(0, 0)).unwrap();
        let port = prepared.bound_port();
        std::thread::scope(|s| {
            let quiet = |ctx: &mut Context, _: Args<'_>| {
                let _ = ctx.sync(SYNC_DEFAULT);
            };
            let m = s.spawn(move || prepared.join()?.hook(&quiet, Args::none()));
            let one = s.spawn(move || TcpInit::new(in_range(1, port))?.hook(&|_, _| {}, Args::none()));
            let two = TcpInit::new(in_range(2, port)).unwrap().hook(&quiet, Args::none());
            let e = two.expect_err("pid 1 left early");
            assert!(e.message().contains(&format!("process 1 (127.0.0.1:{p1})")), "{e}");
            assert!(m.join().unwrap().is_err() && one.join().unwrap().is_err());
        });
        assert!(lpf::tcp::parse_port_range("7000-7100").unwrap() == (7000, 7100));
        for bad in ["7100-7000", "0-5", "7000", "a-b", "7000-70000"] {
            assert!(lpf::tcp::parse_port_range(bad).is_err(), "{bad}");
        }
    }

    /// One process returns from its SPMD function at once while the others sync: every
    /// process's hook fails, the early one's included, on TCP and on hybrid (2 + 1 + 1
    /// threads, and 1 + 1 + 1 with the hybrid engine forced).
    #[test]
    fn early_return_fails_every_hook_on_tcp_and_hybrid() {
        for (threads, hybrid) in [([1, 1, 1], false), ([1, 1, 1], true), ([2, 1, 1], true)] {
            let mk = move |pid: Pid, port: u16| cfg(port, pid, 3).threads(threads[pid as usize]).hybrid(hybrid);
            let spmd = |ctx: &mut Context, _: Args<'_>| {
                if ctx.pid() == ctx.nprocs() - 1 {
                    return;
                }
                for _ in 0..3 {
                    if ctx.sync(SYNC_DEFAULT).is_err() {
                        return;
                    }
                }
            };
            let prepared = TcpInit::prepare(mk(0, 0)).unwrap();
            let port = prepared.bound_port();
            let results: Vec<lpf::Result<()>> = std::thread::scope(|s| {
                let others: Vec<_> = (1..3).map(|pid| s.spawn(move || TcpInit::new(mk(pid, port))?.hook(&spmd, Args::none()))).collect();
                let mut all = vec![prepared.join().and_then(|i| i.hook(&spmd, Args::none()))];
                all.extend(others.into_iter().map(|h| h.join().unwrap()));
                all
            });
            for (pid, r) in results.iter().enumerate() {
                let e = r.as_ref().expect_err(&format!("threads {threads:?} hybrid {hybrid}: process {pid}'s hook succeeded"));
                assert!(e.is_fatal() && e.message().contains("left"), "{e}");
                // The processes that waited name one that left (the early one, or one
                // that failed because of it).
                if pid < 2 {
                    assert!(matches!(e.reason(), lpf::Reason::PeerLeft { pid: who } if who != Some(pid as Pid)), "{e}");
                }
            }
        }
    }

    #[test]
    fn one_init_serves_many_hooks() {
        let prepared = TcpInit::prepare(cfg(0, 0, 3)).unwrap();
        let port = prepared.bound_port();
        std::thread::scope(|s| {
            let peers: Vec<_> = (1..3)
                .map(|pid| {
                    s.spawn(move || {
                        let init = TcpInit::new(cfg(port, pid, 3))?;
                        for _ in 0..20 {
                            init.hook(&ring, Args::none())?;
                        }
                        // A failing section leaves the init usable.
                        assert!(init.hook(&|ctx, _| { let _ = ctx.sync(SYNC_DEFAULT); }, Args::none()).is_err());
                        init.hook(&ring, Args::none())
                    })
                })
                .collect();
            let init = prepared.join().unwrap();
            for _ in 0..20 {
                init.hook(&ring, Args::none()).unwrap();
            }
            // Pid 0 returns at once: the others' sync fails ("out of step" / "left"),
            // and so does pid 0's hook (the spec: every process of a section that
            // another left gets FATAL); nobody hangs.
            let e = init.hook(&|_, _| {}, Args::none()).expect_err("pid 0 returned early: its hook must fail too");
            assert!(e.is_fatal(), "{e}");
            init.hook(&ring, Args::none()).unwrap();
            for p in peers {
                p.join().unwrap().unwrap();
            }
        });
    }

    /// A one-process hybrid job of 64 threads whose section allocates nothing and
    /// ignores its failed sync; prints how the hook ended.
    fn hook_many_threads() {
        let cfg = TcpConfig::new("127.0.0.1", 0, 0, 1).threads(64).hybrid(true);
        let spmd = |ctx: &mut Context, _: Args<'_>| {
            let _ = ctx.sync(SYNC_DEFAULT);
        };
        let r = std::panic::catch_unwind(|| TcpInit::new(cfg).and_then(|init| init.hook(&spmd, Args::none())));
        match r {
            Ok(Err(e)) if e.is_fatal() => println!("hook FATAL: {e}"),
            Ok(Err(e)) if e.kind() == lpf::ErrorKind::OutOfMemory => println!("hook OUT_OF_MEMORY: {e}"),
            Ok(other) => println!("hook returned {other:?}"),
            Err(_) => println!("hook PANICKED"),
        }
    }

    /// This test binary's arguments that run only the `child` entry point.
    const CHILD_ARGS: [&str; 5] = ["--exact", "faults::child", "--ignored", "--nocapture", "--test-threads=1"];

    fn child_command(role: &str) -> Command {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.args(CHILD_ARGS);
        c.env("LPF_TEST_CHILD", role);
        c
    }

    /// Runs `cmd` (a child of this binary) for at most 30 s; it must succeed. Its
    /// standard output.
    fn output_of_child(cmd: &mut Command) -> String {
        let mut kid = cmd.env("RUST_BACKTRACE", "0").stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let (st, out) = wait_bounded(&mut kid, Duration::from_secs(30));
        assert!(st.is_some_and(|s| s.success()), "{st:?}: {out}");
        out
    }

    #[test]
    fn kill_minus_9_fails_the_others_within_seconds() {
        let port = free_port();
        let mut kids: Vec<_> = (0..3)
            .map(|pid| {
                child_command("kill")
                    .env("LPF_PID", pid.to_string())
                    .env("LPF_TCP_PORT", port.to_string())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut victim_out = BufReader::new(kids[2].stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("ready") {
            line.clear();
            assert!(victim_out.read_line(&mut line).unwrap() > 0, "the victim ended early");
        }
        let killed = Instant::now();
        kids[2].kill().unwrap(); // SIGKILL
        kids[2].wait().unwrap();
        for k in &mut kids[..2] {
            let out = k.wait_with_output_ref();
            assert!(out.0, "a survivor did not see a fatal sync and hook: {}", out.1);
        }
        let took = killed.elapsed();
        assert!(took < Duration::from_secs(5), "survivors took {took:?}");
    }

    trait WaitRef {
        fn wait_with_output_ref(&mut self) -> (bool, String);
    }
    impl WaitRef for std::process::Child {
        fn wait_with_output_ref(&mut self) -> (bool, String) {
            let mut s = String::new();
            self.stdout.take().unwrap().read_to_string(&mut s).unwrap();
            let ok = self.wait().unwrap().success();
            (ok && s.contains("hook FATAL"), s)
        }
    }

    #[test]
    fn hundred_init_hook_finalize_cycles_leak_no_fds_or_threads() {
        let out = child_command("leak").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("no leak"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Waits for `child` at most `limit`; a child still running then is killed and
    /// reported as hung.
    fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> (Option<std::process::ExitStatus>, String) {
        let t = Instant::now();
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                let mut out = String::new();
                child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
                return (Some(st), out);
            }
            if t.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return (None, format!("hung for more than {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Threads that cannot fit in the address space (limited to 40 MiB above what the
    /// process uses, 16 MiB stacks, 64 threads asked for): the hook refuses before any
    /// thread starts, with LPF_ERR_OUT_OF_MEMORY naming the limit; no panic, no hang.
    #[test]
    fn hybrid_threads_beyond_the_address_space_are_refused_not_a_panic() {
        let out = output_of_child(child_command("spawnfail").env("RUST_MIN_STACK", (16 << 20).to_string()));
        assert!(out.contains("hook OUT_OF_MEMORY") && out.contains("address-space limit (ulimit -v)"), "{out}");
    }

    /// Thread creation failing part-way inside the hybrid engine (as user nobody with
    /// at most 20 processes, which binds only without CAP_SYS_RESOURCE; 64 threads asked
    /// for): the hook returns FATAL naming the thread that could not start; no panic,
    /// no hang (before: `scope.spawn` panicked, then the others waited forever).
    #[test]
    fn thread_creation_failure_in_a_hybrid_hook_is_fatal_not_a_panic() {
        // The suite runs as root (its set-up installs packages); setpriv and prlimit
        // are in util-linux.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().nth(1)).unwrap();
        assert_eq!(uid, "0", "this test drops to user nobody and needs root");
        let mut cmd = Command::new("prlimit");
        cmd.arg("--nproc=20").args(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]);
        cmd.arg(std::env::current_exe().unwrap()).args(CHILD_ARGS).env("LPF_TEST_CHILD", "nprocfail");
        let out = output_of_child(&mut cmd);
        assert!(out.contains("hook FATAL") && out.contains("cannot start process"), "{out}");
    }

    /// Pid 0 out of file descriptors (`ulimit -n 64`) while a stranger holds 100
    /// connections to its port for 2 s: accept fails, and pid 0 pauses instead of
    /// spinning, logging the failure once per interval (before: one "accept failed"
    /// line per attempt, hundreds of thousands); once the stranger lets go, the real
    /// pid 1 joins and the job runs.
    #[test]
    fn accept_failing_for_lack_of_descriptors_backs_off_and_logs_once() {
        let mut kid = Command::new("sh")
            .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
            .arg(std::env::current_exe().unwrap())
            .args(CHILD_ARGS)
            .env("LPF_TEST_CHILD", "fdlimit")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(kid.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("port ") {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "the child ended before binding");
        }
        let port: u16 = line[line.find("port ").unwrap() + 5..].trim().parse().unwrap();
        let stranger: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        let busy = Instant::now();
        std::thread::sleep(Duration::from_secs(2));
        drop(stranger);
        let r = TcpInit::new(cfg(port, 1, 2)).and_then(|init| init.hook(&ring, Args::none()));
        let mut err = String::new();
        let mut stderr = kid.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let _ = stderr.read_to_string(&mut err);
            err
        });
        kid.stdout = Some(out.into_inner());
        let (st, rest) = wait_bounded(&mut kid, Duration::from_secs(30));
        let err = reader.join().unwrap();
        let accept_lines = err.lines().filter(|l| l.contains("accept")).count();
        println!("{accept_lines} accept lines in {:?}, stderr {} bytes; first: {:?}", busy.elapsed(), err.len(), err.lines().find(|l| l.contains("accept")));
        assert!(r.is_ok(), "pid 1: {r:?}");
        assert!(st.is_some_and(|s| s.success()) && rest.contains("job ok"), "pid 0: {st:?} {rest}\n{}", &err[..err.len().min(2000)]);
        assert!((1..=3).contains(&accept_lines), "{accept_lines} lines about failing accepts:\n{}", &err[..err.len().min(2000)]);
        assert!(err.contains("out of file descriptors"), "{}", &err[..err.len().min(2000)]);
    }

    fn count(dir: &str) -> usize {
        std::fs::read_dir(dir).unwrap().count()
    }

    /// The child side of the tests above (does nothing unless started by them).
    #[test]
    #[ignore]
    fn child() {
        match std::env::var("LPF_TEST_CHILD").as_deref() {
            Ok("kill") => {
                let pid: Pid = std::env::var("LPF_PID").unwrap().parse().unwrap();
                let port: u16 = std::env::var("LPF_TCP_PORT").unwrap().parse().unwrap();
                let init = TcpInit::new(cfg(port, pid, 3)).unwrap();
                let r = init.hook(&|ctx, _| {
                    lpf_conformance::setup(ctx, 2, 4);
                    let mut a = [1u64; 64];
                    let mut b = [0u64; 64];
                    let s = ctx.register_local(&mut a).unwrap();
                    let d = ctx.register_global(&mut b).unwrap();
                    ctx.sync(SYNC_DEFAULT).unwrap();
                    let (me, n) = (ctx.pid(), ctx.nprocs());
                    for i in 0u64.. {
                        ctx.put(s.slot(), 0, (me + 1) % n, d.slot(), 0, 512, MSG_DEFAULT).unwrap();
                        if let Err(e) = ctx.sync(SYNC_DEFAULT) {
                            println!("sync FATAL: {e}");
                            return;
                        }
                        if i == 20 {
                            println!("ready");
                            std::io::stdout().flush().unwrap();
                        }
                    }
                }, Args::none());
                match r {
                    Err(e) if e.is_fatal() => println!("hook FATAL: {e}"),
                    other => println!("hook returned {other:?}"),
                }
            }
            Ok("spawnfail") => {
                let status = std::fs::read_to_string("/proc/self/status").unwrap();
                let kb: u64 = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmSize:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                    .unwrap();
                let limit = kb * 1024 + (40 << 20);
                let ok = Command::new("prlimit")
                    .args([format!("--pid={}", std::process::id()), format!("--as={limit}")])
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "prlimit failed");
                hook_many_threads();
            }
            Ok("nprocfail") => hook_many_threads(),
            Ok("fdlimit") => {
                let prepared = TcpInit::prepare(cfg(0, 0, 2)).unwrap();
                println!("port {}", prepared.bound_port());
                std::io::stdout().flush().unwrap();
                prepared.join().unwrap().hook(&ring, Args::none()).unwrap();
                println!("job ok");
            }
            Ok("leak") => {
                let cycle = |i: usize| {
                    let nodes: &[Pid] = if i.is_multiple_of(2) { &[1, 1, 1] } else { &[2, 1] };
                    run_over_tcp(nodes, MetaAlgo::Direct, i % 2 == 1, &ring, Args::none()).unwrap();
                };
                cycle(0);
                cycle(1);
                let (fds, threads) = (count("/proc/self/fd"), count("/proc/self/task"));
                for i in 0..100 {
                    cycle(i);
                }
                // A joined thread can stay listed in /proc/self/task for a moment while
                // the kernel finishes its exit; a leak never goes away.
                let settle = Instant::now() + Duration::from_secs(2);
                let mut after = (count("/proc/self/fd"), count("/proc/self/task"));
                while after != (fds, threads) && Instant::now() < settle {
                    std::thread::yield_now();
                    after = (count("/proc/self/fd"), count("/proc/self/task"));
                }
                assert_eq!(after, (fds, threads), "(fds, threads) after vs before 100 cycles");
                println!("no leak: {fds} fds, {threads} threads");
            }
            _ => {}
        }
    }
}

/// Payloads above the inline limit travel raw, straight into user memory: all-to-all
/// puts and gets of 48 KiB blocks, and large overlapping puts that must end as a
/// serialisation, on both meta-data exchanges and on the hybrid engine.
mod large {
    use super::run_over_tcp;
    use lpf::tcp::MetaAlgo;
    use lpf::Args;
    use lpf_conformance::cases::large_payloads_section as section;

    #[test]
    fn raw_payloads_direct_bruck_and_hybrid() {
        for meta in [MetaAlgo::Direct, MetaAlgo::Bruck] {
            run_over_tcp(&[1, 1, 1], meta, false, &section, Args::none()).unwrap();
            run_over_tcp(&[1, 1, 1, 1, 1], meta, false, &section, Args::none()).unwrap();
            run_over_tcp(&[2, 1, 2], meta, true, &section, Args::none()).unwrap();
        }
    }
}
