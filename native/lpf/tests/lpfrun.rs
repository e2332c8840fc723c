//! `lpfrun` starts separate OS processes that meet over TCP, and `Root::exec` in each
//! of them runs one section across all of them. The program lpfrun starts is this test
//! binary again, running the ignored test `child`.

use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn lpfrun(args: &[&str], child_env: &[(&str, &str)]) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_lpfrun"));
    c.args(args).arg(exe).args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    c.envs(child_env.iter().copied());
    c.output().unwrap()
}

#[test]
fn exec_runs_across_processes_on_tcp_and_hybrid() {
    for (args, total) in [(&["-n", "3"][..], 3u64), (&["-n", "2", "--engine", "hybrid", "--threads", "2"][..], 4)] {
        let out = lpfrun(args, &[("LPF_TEST_WANT", &total.to_string())]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        assert_eq!(text.matches("child ok").count(), args[1].parse::<usize>().unwrap(), "{text}");
    }
}

#[test]
fn a_failing_process_fails_the_run_with_its_code() {
    let out = lpfrun(&["-n", "3"], &[("LPF_TEST_WANT", "3"), ("LPF_TEST_EXIT", "7")]);
    assert_eq!(out.status.code(), Some(7), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn hosts_file_prints_ssh_commands_for_remote_hosts() {
    let dir = std::env::temp_dir().join(format!("lpfrun-hosts-{}", std::process::id()));
    std::fs::write(&dir, "# master first\nnode-a.example\nnode-b.example\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
        .args(["-n", "3", "--hosts", dir.to_str().unwrap(), "--port", "7177", "/bin/true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("ssh node-a.example").count(), 2, "{text}");
    assert_eq!(text.matches("ssh node-b.example").count(), 1, "{text}");
    assert!(text.contains("LPF_TCP_MASTER=node-a.example") && text.contains("LPF_PID=2"), "{text}");
    std::fs::remove_file(dir).unwrap();
}

/// Runs `cmd` in its own process group and kills the group if it has not ended
/// within `limit`: a hang is a test failure, not a hung test.
fn output_within(mut cmd: Command, limit: Duration) -> (std::process::Output, Duration) {
    use std::os::unix::process::CommandExt;
    let start = Instant::now();
    let mut child = cmd.process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let group = child.id() as i32;
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the process group we created.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            let _ = child.wait();
            panic!("no result within {limit:?}: hung (the process group was killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    (std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }, elapsed)
}

/// Issue #13 item 7: more threads per process than fit under `ulimit -v 4000000`
/// (hybrid engine): the exec fails before starting them, with a message naming the
/// address space they need, and lpfrun ends within 30 s. Before, a failed spawn was
/// reported by spawning another thread, which panicked, and the process hung (or the
/// Rust runtime aborted a thread started in the last megabytes).
#[test]
fn hybrid_thread_creation_failure_ends_in_an_error() {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_lpfrun"));
    c.args(["-n", "2", "--threads", "5000"]).arg(exe).args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    c.env("LPF_TEST_WANT", "10000");
    // SAFETY: setrlimit in the forked child before exec; it allocates nothing.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 4_000_000 * 1024, rlim_max: 4_000_000 * 1024 };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (out, took) = output_within(c, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{}\n{err}", out.status);
    assert!(err.contains("10000 new process threads need") || err.contains("4999 new process threads need"), "{err}");
    assert!(err.contains("address-space limit (ulimit -v)"), "{err}");
    assert!(!err.contains("SIGABRT") && !err.contains("failed to spawn thread"), "{err}");
    eprintln!("failed as expected in {took:?}");
}

/// One process of the runs above (does nothing unless started by lpfrun).
#[test]
#[ignore]
fn child() {
    let Ok(want) = std::env::var("LPF_TEST_WANT") else { return };
    let want: u64 = want.parse().unwrap();
    let me: u32 = std::env::var("LPF_PID").unwrap().parse().unwrap();
    if std::env::var("LPF_TEST_EXIT").is_ok() && me == 1 {
        std::process::exit(7);
    }
    let mut out = [0u8; 8];
    let r = Root::new().exec(lpf::MAX_P, &|ctx: &mut Context, args: Args<'_>| {
        let (pid, n) = (ctx.pid(), ctx.nprocs());
        assert_eq!(n as u64, want);
        lpf_setup(ctx);
        let mut a = [pid as u64 + 1];
        let mut sum = vec![0u64; n as usize];
        let s = ctx.register_local(&mut a).unwrap();
        let d = ctx.register_global(&mut sum).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        for q in 0..n {
            ctx.put(s.slot(), 0, q, d.slot(), 8 * pid as usize, 8, MSG_DEFAULT).unwrap();
        }
        ctx.sync(SYNC_DEFAULT).unwrap();
        let total: u64 = ctx.slice(&d).iter().sum();
        assert_eq!(total, n as u64 * (n as u64 + 1) / 2);
        if pid == 0 {
            args.output.copy_from_slice(&total.to_le_bytes());
        }
    }, Args::new(&[], &mut out));
    if let Err(e) = r {
        panic!("pid {me}: exec failed: {e}");
    }
    if std::env::var("LPF_ENGINE").is_ok() && me == 0 {
        assert_eq!(u64::from_le_bytes(out), want * (want + 1) / 2);
    }
    println!("child ok");
}

fn lpf_setup(ctx: &mut Context) {
    ctx.resize_memory_register(2).unwrap();
    ctx.resize_message_queue(2 * ctx.nprocs() as usize).unwrap();
    ctx.sync(SYNC_DEFAULT).unwrap();
}
