//! `lpfrun` starts separate OS processes that meet over TCP, and `Root::exec` in each
//! of them runs one section across all of them. The program lpfrun starts is this test
//! binary again, running the ignored test `child`.

use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `lpfrun args` running the test `child` of this binary, with `child_env`.
fn lpfrun_child(args: &[&str], child_env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lpfrun"));
    c.args(args).arg(std::env::current_exe().unwrap()).args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    c.envs(child_env.iter().copied());
    c
}

fn lpfrun(args: &[&str], child_env: &[(&str, &str)]) -> std::process::Output {
    lpfrun_child(args, child_env).output().unwrap()
}

/// `cmd` with the soft and hard limit of `resource` set to `value` in its process.
fn with_rlimit(mut cmd: Command, resource: libc::__rlimit_resource_t, value: libc::rlim_t) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit in the forked child before exec; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: value, rlim_max: value };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
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
    // Every process is remote: the secret's file stays for the commands; remove it.
    if let Some((_, file)) = text.lines().next().and_then(|l| l.rsplit_once(" < ")) {
        let file = std::path::Path::new(file.trim_matches('\''));
        let _ = std::fs::remove_file(file);
        let _ = std::fs::remove_dir(file.parent().unwrap());
    }
}

/// `--engine` takes the registry's names and aliases; an unknown one is refused with the
/// known engines listed, an MPI engine with the launcher it needs.
#[test]
fn engines_are_checked_against_the_registry() {
    let run = |engine: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_lpfrun")).args(["-n", "2", "--engine", engine, "/bin/true"]).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for alias in ["shm", "pthread", "threads"] {
        assert_eq!(run(alias).0, Some(0), "{alias}: {}", run(alias).1);
    }
    let (code, err) = run("nosuch");
    assert_eq!(code, Some(2), "{err}");
    for kind in lpf::EngineKind::ALL {
        assert!(err.contains("nosuch") && err.contains(kind.name()), "{err}");
    }
}

fn have_mpirun() -> bool {
    Command::new("mpirun").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Issue 28: `lpfrun -engine mpimsg|mpirma -np P` starts the job under mpirun (as the
/// reference's launcher does) with LPF_ENGINE passed on, `-mpirun,ARG` going to mpirun
/// and, for mpirma, Open MPI's UCX one-sided component off; before, lpfrun refused the
/// MPI engines ("runs under mpirun").
#[test]
fn mpi_engines_are_started_under_mpirun() {
    if !have_mpirun() {
        let out = Command::new(env!("CARGO_BIN_EXE_lpfrun")).args(["-np", "2", "-engine", "mpimsg", "/bin/true"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(127) && err.contains("mpirun"), "{err}");
        return;
    }
    for engine in ["mpimsg", "mpirma"] {
        let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
            .args(["-engine", engine, "-mpirun,-x", "-mpirun,LPF_TEST_PASSED=through", "-np", "2"])
            .args(["sh", "-c", "echo \"rank=$OMPI_COMM_WORLD_RANK engine=$LPF_ENGINE passed=$LPF_TEST_PASSED osc=$OMPI_MCA_osc\""])
            .env_remove("OMPI_MCA_osc")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{engine}: {}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        let osc = if engine == "mpirma" { "^ucx" } else { "" };
        for rank in 0..2 {
            let want = format!("rank={rank} engine={engine} passed=through osc={osc}");
            assert!(text.lines().any(|l| l == want), "{engine}: no line {want:?} in\n{text}");
        }
    }
    // hybrid over an MPI network (LPF_HYBRID_NET) runs under mpirun too, with the
    // network and the threads per process passed on.
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
        .args(["-engine", "hybrid", "--threads", "2", "-np", "2"])
        .args(["sh", "-c", "echo \"rank=$OMPI_COMM_WORLD_RANK $LPF_ENGINE over $LPF_HYBRID_NET x $LPF_THREADS\""])
        .env("LPF_HYBRID_NET", "mpimsg")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "hybrid: {}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    for rank in 0..2 {
        let want = format!("rank={rank} hybrid over mpimsg x 2");
        assert!(text.lines().any(|l| l == want), "hybrid: no line {want:?} in\n{text}");
    }
    // A process's exit status is mpirun's, as lpfrun's for the other engines.
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun")).args(["-engine", "mpimsg", "-np", "2", "sh", "-c", "exit 7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Issue 28: the reference launcher's options. `-probe S` and its tuning options are
/// accepted (the reference's test harness passes `-probe 1.0`); `-mpirun,ARG` is ignored
/// with a note on an engine that does not run under mpirun; the options that would run
/// something else are refused by name. Before, each was "unknown option".
#[test]
fn reference_launcher_options_are_accepted_or_refused_by_name() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lpfrun")).args(args).args(["sh", "-c", "echo ran"]).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, out, err) = run(&["-engine", "pthread", "-probe", "1.0", "-n", "2"]);
    assert_eq!((code, out.trim()), (Some(0), "ran"), "{err}");
    let (code, out, err) = run(&["-engine", "tcp", "-pinning", "compact", "-verbose", "-mpirun,-bind-to", "-mpirun,hwthread", "-np", "1"]);
    assert_eq!((code, out.trim()), (Some(0), "ran"), "{err}");
    assert!(err.contains("-pinning compact: accepted and without effect"), "{err}");
    assert!(err.contains("ignoring the mpirun arguments [\"-bind-to\", \"hwthread\"]"), "{err}");
    let (code, out, err) = run(&["-engine", "tcp", "-probe", "soon", "-np", "1"]);
    assert!(code == Some(2) && out.is_empty() && err.contains("-probe: expected a number of seconds"), "{err}");
    for option in ["-N", "-process-per", "-bsplib", "-show", "-no-auto-init"] {
        let (code, out, err) = run(&["-np", "1", option, "1"]);
        assert!(code == Some(2) && out.is_empty(), "{option}: {code:?} {out} {err}");
        assert!(err.contains(&format!("the reference launcher's option {option} is not supported: ")), "{option}: {err}");
    }
}

/// Issue 24 item 6: an option's number out of its range is a usage error naming the
/// option and the value, as `LPF_TCP_PORT=70000` is refused; before, `--port 99999` gave
/// the processes port 34463 (`as u16`), 70000 port 4464, 65536 port 0, and `-n 4294967297`
/// one process. A number in range reaches the processes unchanged.
#[test]
fn option_numbers_out_of_range_are_refused_not_cut_to_fit() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
            .args(args)
            .args(["--", "sh", "-c", "echo port=$LPF_TCP_PORT nprocs=$LPF_NPROCS"])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for (args, range) in [
        (&["-n", "1", "--port", "99999"][..], "0..=65535"),
        (&["-n", "1", "--port", "70000"], "0..=65535"),
        (&["-n", "1", "--port", "65536"], "0..=65535"),
        (&["-n", "1", "--port", "-1"], "0..=65535"),
        (&["-n", "4294967297"], "1..=65535"),
        (&["-n", "1", "--threads", "65536"], "1..=65535"),
        (&["-n", "1", "--timeout-ms", "-5"], "0..=18446744073709551615"),
    ] {
        let (code, out, err) = run(args);
        let (option, value) = (args[args.len() - 2], args[args.len() - 1]);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(&format!("lpfrun: {option}: expected a number in {range}, got \"{value}\"")), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: no process started: {out}");
    }
    let (code, out, err) = run(&["-n", "1", "--port", "65535"]);
    assert_eq!((code, out.trim()), (Some(0), "port=65535 nprocs=1"), "{err}");
}

/// `--list-engines` prints the registry (name, cargo feature or `-`, launcher, aliases),
/// which `lpfcc` reads its engines from (tests/c/run.sh `lpfcc.engines-are-the-registry`).
#[test]
fn list_engines_prints_the_registry() {
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun")).arg("--list-engines").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), lpf::config::ENGINES.len(), "{text}");
    for (columns, e) in lines.iter().zip(&lpf::config::ENGINES) {
        assert_eq!(columns[..3], [e.name, e.feature.unwrap_or("-"), e.launcher.name()], "{text}");
        assert_eq!(columns[3..], *e.aliases, "{text}");
    }
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
    let c = lpfrun_child(&["-n", "2", "--threads", "5000"], &[("LPF_TEST_WANT", "10000")]);
    let c = with_rlimit(c, libc::RLIMIT_AS, 4_000_000 * 1024);
    let (out, took) = output_within(c, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{}\n{err}", out.status);
    assert!(err.contains("10000 new threads need") || err.contains("4999 new threads need"), "{err}");
    assert!(err.contains("address-space limit (ulimit -v)"), "{err}");
    assert!(!err.contains("SIGABRT") && !err.contains("failed to spawn thread"), "{err}");
    eprintln!("failed as expected in {took:?}");
}

/// One process of the runs above (does nothing unless started by lpfrun).
#[test]
#[ignore]
fn child() {
    if std::env::var("LPF_TEST_SLEEP").is_ok() {
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let Ok(want) = std::env::var("LPF_TEST_WANT") else { return };
    let want: u64 = want.parse().unwrap();
    let me: u32 = std::env::var("LPF_PID").unwrap().parse().unwrap();
    if let Ok(prefix) = std::env::var("LPF_TEST_REPORT") {
        report_secret_and_command_lines(&format!("{prefix}.{me}"));
    }
    let kill_self: Option<u32> = std::env::var("LPF_TEST_KILL_SELF").ok().map(|v| v.parse().unwrap());
    if std::env::var("LPF_TEST_EXIT").is_ok() && me == 1 {
        std::process::exit(7);
    }
    let mut out = [0u8; 8];
    let r = Root::new().exec(lpf::MAX_P, &|ctx: &mut Context, args: Args<'_>| {
        let (pid, n) = (ctx.pid(), ctx.nprocs());
        assert_eq!(n as u64, want);
        lpf_setup(ctx);
        if kill_self == Some(pid) {
            // SAFETY: kill(2) on this very process.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if kill_self.is_some() && ctx.sync(SYNC_DEFAULT).is_err() {
            // The others learn of the loss here and end at once, as a C program would.
            std::process::exit(3);
        }
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

/// What a child of lpfrun can see: its secret and job name (from its environment),
/// then the command lines of lpfrun and of every child of lpfrun, one per line.
fn report_secret_and_command_lines(path: &str) {
    let secret = std::env::var("LPF_TCP_SECRET").unwrap_or_default();
    let job = std::env::var("LPF_TCP_JOB").unwrap_or_default();
    let parent = std::os::unix::process::parent_id();
    let cmdline = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default();
    let mut lines = vec![secret, job, cmdline(parent)];
    lines.extend(children_of(parent).into_iter().map(cmdline));
    std::fs::write(path, lines.join("\n")).unwrap();
}

/// Whether `text` contains any `w` consecutive characters of `secret`.
fn contains_piece(text: &str, secret: &str, w: usize) -> Option<String> {
    (0..=secret.len().saturating_sub(w)).map(|i| &secret[i..i + w]).find(|piece| text.contains(piece)).map(str::to_string)
}

/// Issue #13 item 12: the secret (at least 16 bytes) is in no command line, no output
/// of lpfrun and no part of the job name, which travels in clear. Before, the job
/// name was `lpfrun-<pid>-<first 8 hex digits of the secret>`.
#[test]
fn secret_is_on_no_command_line_output_or_job_name() {
    let prefix = std::env::temp_dir().join(format!("lpfrun-report-{}", std::process::id()));
    let prefix = prefix.to_str().unwrap();
    let out = lpfrun(&["-n", "2"], &[("LPF_TEST_WANT", "2"), ("LPF_TEST_REPORT", prefix)]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    for pid in 0..2 {
        let path = format!("{prefix}.{pid}");
        let report = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut lines = report.lines();
        let (secret, job) = (lines.next().unwrap(), lines.next().unwrap());
        assert!(secret.len() >= 32, "a secret of {} characters", secret.len());
        assert!(job.starts_with("lpfrun-"), "job {job:?}");
        assert_eq!(contains_piece(job, secret, 6), None, "the job name {job:?} contains a piece of the secret");
        let command_lines: Vec<&str> = lines.collect();
        assert!(command_lines.len() >= 2, "lpfrun and its children: {command_lines:?}");
        for c in &command_lines {
            assert_eq!(contains_piece(c, secret, 8), None, "command line {c:?} contains a piece of the secret");
        }
        assert_eq!(contains_piece(&stdout, secret, 8), None, "lpfrun's output contains a piece of the secret:\n{stdout}");
        assert_eq!(contains_piece(&stderr, secret, 8), None, "lpfrun's errors contain a piece of the secret:\n{stderr}");
    }
}

/// Issue #13 item 12: the printed ssh commands carry no secret; they feed it from a
/// 0600 file to ssh's standard input, and a command run (with an `ssh` that runs the
/// remote command here) hands the program exactly that secret. Before, the commands
/// said `LPF_TCP_SECRET=<secret>`.
#[test]
fn ssh_commands_carry_the_secret_on_standard_input_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("lpfrun-ssh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, "node-a.example\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
        .args(["-n", "2", "--hosts", hosts.to_str().unwrap(), "--port", "7177", "printenv", "LPF_TCP_SECRET"])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("ssh node-a.example ")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let file = lines[0].rsplit_once(" < ").unwrap().1.trim_matches('\'');
    let meta = std::fs::metadata(file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{file}");
    let parent = std::path::Path::new(file).parent().unwrap();
    assert_eq!(std::fs::metadata(parent).unwrap().permissions().mode() & 0o777, 0o700, "{}", parent.display());
    let secret = std::fs::read_to_string(file).unwrap().trim().to_string();
    assert!(secret.len() >= 32, "a secret of {} characters", secret.len());
    assert_eq!(contains_piece(&stdout, &secret, 8), None, "the printed commands contain a piece of the secret:\n{stdout}");
    assert_eq!(contains_piece(&stderr, &secret, 8), None, "lpfrun's messages contain a piece of the secret:\n{stderr}");
    // Run the first command with an `ssh` that runs the remote command in a local sh.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("ssh"), "#!/bin/sh\nshift\nexec /bin/sh -c \"$1\"\n").unwrap();
    std::fs::set_permissions(bin.join("ssh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ran = Command::new("/bin/sh").arg("-c").arg(lines[0]).env("PATH", path).env_remove("LPF_TCP_SECRET").output().unwrap();
    assert!(ran.status.success(), "{}: {}", ran.status, String::from_utf8_lossy(&ran.stderr));
    assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), secret, "the remote program's LPF_TCP_SECRET");
    std::fs::remove_file(file).unwrap();
    std::fs::remove_dir(parent).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

/// The pids of `pid`'s children.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect()
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Issue #13 item 11: no child outlives lpfrun, whether lpfrun gets SIGTERM or SIGINT
/// (forwarded; lpfrun exits with 128 + signal) or SIGKILL (the children's death
/// signal). Before, the children (sleeping 60 s) all stayed.
#[test]
fn children_end_with_lpfrun() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGKILL] {
        let mut run = lpfrun_child(&["-n", "2"], &[("LPF_TEST_SLEEP", "1")]).stdout(Stdio::null()).spawn().unwrap();
        let start = Instant::now();
        let mut kids = Vec::new();
        while kids.len() < 2 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
            kids = children_of(run.id());
        }
        assert_eq!(kids.len(), 2, "lpfrun started {kids:?}");
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(run.id() as i32, sig) };
        let status = run.wait().unwrap();
        let gone = Instant::now();
        while kids.iter().any(|&k| alive(k)) && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<u32> = kids.iter().copied().filter(|&k| alive(k)).collect();
        for &k in &left {
            // SAFETY: clean-up of what this test started.
            unsafe { libc::kill(k as i32, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "signal {sig}: children {left:?} outlived lpfrun by 5 s");
        if sig != libc::SIGKILL {
            assert_eq!(status.code(), Some(128 + sig), "signal {sig}: lpfrun {status}");
        }
    }
}

/// Issue #13 item 11: when pid 2 of 3 is SIGKILLed, lpfrun names pid 2 and the signal
/// (and exits 137), not pid 0, which failed after it (lost peer). Before, it blamed
/// whichever failed process came first in pid order once it polled.
#[test]
fn the_process_that_died_is_the_one_reported() {
    for _ in 0..3 {
        let c = lpfrun_child(&["-n", "3"], &[("LPF_TEST_WANT", "3"), ("LPF_TEST_KILL_SELF", "2"), ("LPF_LOG", "quiet")]);
        let (out, _) = output_within(c, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        // (Where lines of lpfrun start: a child's output may precede them on a line.)
        let report: Vec<&str> = err.match_indices("lpfrun: ").map(|(i, _)| err[i..].lines().next().unwrap()).collect();
        assert_eq!(report.len(), 1, "{err}");
        assert!(report[0].starts_with("lpfrun: pid 2 (OS process ") && report[0].contains(" was killed by signal 9 (SIGKILL)"), "{err}");
        assert_eq!(out.status.code(), Some(137), "{err}");
    }
}

/// Issue #13 item 7: a job this machine cannot hold is refused before any process
/// starts, with the limit named: too few file descriptors for the full mesh (hard
/// limit 64 for 100 processes), too few processes for the user (as nobody, ulimit -u
/// 50; root only). Before, lpfrun started what it could (100 sleeping processes, or
/// fork failed part-way), and `-n 100000` forked until the kernel ran out of pids.
#[test]
fn jobs_beyond_the_limits_are_refused_before_anything_starts() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lpfrun"));
    c.args(["-n", "100", "sleep", "5"]);
    let (out, took) = output_within(with_rlimit(c, libc::RLIMIT_NOFILE, 64), Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("lpfrun: cannot run 100 processes") && err.contains("(ulimit -Hn) is 64"), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");

    let tool = |t: &str| Command::new("sh").args(["-c", &format!("command -v {t}")]).output().is_ok_and(|o| o.status.success());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !tool("setpriv") || !tool("prlimit") {
        eprintln!("skipped the ulimit -u case (needs root, setpriv and prlimit)");
        return;
    }
    let mut c = Command::new("prlimit");
    c.args(["--nproc=50", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]);
    c.args([env!("CARGO_BIN_EXE_lpfrun"), "-n", "100", "sleep", "5"]);
    let (out, took) = output_within(c, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("lpfrun: cannot run 100 processes") && err.contains("(ulimit -u) is 50"), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

/// The two processes of a TCP job started without lpfrun (the variables it would set,
/// `LPF_TCP_SECRET` as `secret` says: None unset), running the test `child`; their
/// exit statuses and standard errors, pid 0 first.
fn tcp_pair(secret: Option<&str>) -> Vec<(bool, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let children: Vec<_> = (0..2)
        .map(|pid| {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
            c.env_remove("LPF_TCP_SECRET");
            c.envs([("LPF_ENGINE", "tcp"), ("LPF_NPROCS", "2"), ("LPF_TCP_MASTER", "127.0.0.1"), ("LPF_TCP_PORT", &port)]);
            c.envs([("LPF_PID", pid.to_string().as_str()), ("LPF_TEST_WANT", "2"), ("LPF_TCP_TIMEOUT_MS", "20000")]);
            if let Some(s) = secret {
                c.env("LPF_TCP_SECRET", s);
            }
            c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
        })
        .collect()
}

/// Issue #24 item 8: `LPF_TCP_SECRET=` (set but empty, as a script writing
/// `LPF_TCP_SECRET=$UNSET_VAR` does) is an error naming the variable, not a run without
/// authentication; leaving the variable unset runs without one, and pid 0 says so once
/// on stderr (the others do not). Before, the empty secret counted as unset: both
/// processes ran, unauthenticated and silent.
#[test]
fn an_empty_secret_is_refused_and_a_run_without_one_says_so_once_on_pid_0() {
    let notice = "runs without a shared secret";
    for (ok, err) in tcp_pair(Some("")) {
        assert!(!ok && err.contains("LPF_TCP_SECRET is set but empty"), "{err}");
    }
    let unset = tcp_pair(None);
    assert!(unset.iter().all(|(ok, _)| *ok), "{unset:?}");
    assert_eq!(unset[0].1.matches(notice).count(), 1, "pid 0's stderr: {}", unset[0].1);
    assert!(unset[0].1.contains("LPF_TCP_SECRET"), "{}", unset[0].1);
    assert_eq!(unset[1].1.matches(notice).count(), 0, "pid 1's stderr: {}", unset[1].1);
    let with = tcp_pair(Some("a secret of 16+ bytes"));
    assert!(with.iter().all(|(ok, err)| *ok && !err.contains(notice)), "{with:?}");
}
