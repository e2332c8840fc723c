//! A shared-memory `exec` of more processes than the machine can hold threads for is an
//! error, returned before any thread starts (issue 24 item 4). The exec runs in a child
//! process (this test binary again, running the ignored test `child`), so that an abort
//! inside the Rust runtime is seen as the child's end, not as this test's.

use lpf::{Args, Context, ErrorKind, Reason, Root, SYNC_DEFAULT};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The most processes a section can have.
const ABSURD_P: u32 = 65535;

/// Without any limit set (`ulimit -v` unlimited), 65535 process threads need some
/// 330,000 memory mappings; the default `vm.max_map_count` (65530) holds about 13,000
/// threads. Before, the exec started threads until the mappings ran out and the Rust
/// runtime aborted the program ("failed to allocate an alternative stack"); now it
/// fails at once with `OUT_OF_MEMORY` naming the limit, no process runs, and the next
/// exec works.
#[test]
fn an_exec_of_more_threads_than_memory_mappings_is_an_error() {
    let max_maps: u64 = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap().trim().parse().unwrap();
    if max_maps / 5 > 2 * ABSURD_P as u64 {
        eprintln!("skipped: vm.max_map_count = {max_maps} holds {ABSURD_P} threads (the case needs the default 65530)");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("LPF_TEST_ABSURD_EXEC", "1")
        .env_remove("LPF_MAX_PROCS")
        .env_remove("LPF_ENGINE")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child ended with {}:\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("absurd exec: refused"), "{stdout}\n{stderr}");
    assert!(stdout.contains("next exec: ok"), "{stdout}\n{stderr}");
}

/// The exec of the test above (does nothing unless started by it).
#[test]
#[ignore]
fn child() {
    if std::env::var("LPF_TEST_ABSURD_EXEC").is_err() {
        return;
    }
    let ran = AtomicU32::new(0);
    let spmd = |ctx: &mut Context, _: Args<'_>| {
        ran.fetch_add(1, Ordering::Relaxed);
        ctx.sync(SYNC_DEFAULT).unwrap();
    };
    let e = Root::with_max_procs(ABSURD_P).exec(ABSURD_P, &spmd, Args::none()).expect_err("an exec of 65535 threads");
    assert_eq!((e.kind(), e.reason()), (ErrorKind::OutOfMemory, Reason::ResourceExhausted), "{e}");
    let m = e.message();
    assert!(m.starts_with("exec of 65535 processes: the 65534 new threads need"), "{m}");
    assert!(m.contains("vm.max_map_count"), "{m}");
    assert_eq!(ran.load(Ordering::Relaxed), 0, "a process ran although the section did not start");
    println!("absurd exec: refused ({m})");
    Root::with_max_procs(4).exec(4, &spmd, Args::none()).expect("an exec of 4 after the refused one");
    assert_eq!(ran.load(Ordering::Relaxed), 4);
    println!("next exec: ok");
}
