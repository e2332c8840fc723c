//! Waiting processes leave the cores to the processes they wait for (#24 item 11): on a
//! host whose cores are taken (by other work, or by more LPF processes than cores), the
//! CPU time a process spends inside `sync` stays a small part of the computation it
//! waits for, on the shared-memory, TCP and hybrid engines. What is measured is CPU
//! time (each thread's own clock), not speed.
//!
//! The test pins itself (and so the processes and threads it starts) to two cores, so
//! that the host is the same everywhere. In each superstep one process (in turn)
//! computes [`WORK`] of CPU time and the others sync at once: with busy-waiting, every
//! waiter burns CPU (the core the computing process needs, or a core other work
//! needs) for up to the spin of each wait; blocking costs only the wake-ups.

use lpf::{Args, Context, Root, SYNC_DEFAULT};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const STEPS: u32 = 1500;
/// The CPU time the computing process spends in each superstep.
const WORK: Duration = Duration::from_micros(100);
/// The CPU time all processes together may spend inside `sync`, as a part of all the
/// computation (`STEPS * WORK`). Measured on a 2-core VM (at a load of 15 from other
/// work besides): 2.3-2.5 (tcp), 5.8-7.2 (shm) and 12.2-12.4 (hybrid) with the
/// busy-waiting before the fix, 0.53-0.62, 0.23 and 0.18-0.30 after (the CPU time of
/// the sync itself: system calls, wake-ups).
const MOST: f64 = 1.2;

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Pins the calling thread (and what it starts from now on) to the first two CPUs it
/// may run on; how many that is (1 on a single-CPU host).
fn pin_to_two_cores() -> usize {
    // SAFETY: cpu_set_t is plain data; the calls read and write the set they are given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
        let mine: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).take(2).collect();
        let mut two: libc::cpu_set_t = std::mem::zeroed();
        for &c in &mine {
            libc::CPU_SET(c, &mut two);
        }
        assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &two), 0);
        mine.len()
    }
}

/// The computation of one LPF process: [`STEPS`] supersteps, process `step % p`
/// computing in each; returns the CPU time this process spent inside `sync`.
fn rotate(ctx: &mut Context) -> Duration {
    let (pid, p) = (ctx.pid(), ctx.nprocs());
    ctx.sync(SYNC_DEFAULT).unwrap();
    let mut in_sync = Duration::ZERO;
    for step in 0..STEPS {
        if step % p == pid {
            let start = thread_cpu();
            while thread_cpu() - start < WORK {}
        }
        let before = thread_cpu();
        ctx.sync(SYNC_DEFAULT).unwrap();
        in_sync += thread_cpu() - before;
    }
    in_sync
}

/// Checks the CPU time `in_sync` the processes spent inside sync (one entry each).
fn check(what: &str, in_sync: &[Duration]) {
    let total: Duration = in_sync.iter().sum();
    let work = WORK * STEPS;
    let part = total.as_secs_f64() / work.as_secs_f64();
    eprintln!("{what}: {} processes spent {total:?} of CPU time inside sync, {part:.2} of the {work:?} computed", in_sync.len());
    assert!(
        part <= MOST,
        "{what}: the waiting processes burnt {total:?} of CPU time inside sync ({in_sync:?}), {part:.2} of the {work:?} \
         the computing ones needed (at most {MOST})"
    );
}

/// Other work on the host: as many busy threads as cores, for the time `body` runs.
fn with_busy_host<T>(cores: usize, body: impl FnOnce() -> T) -> T {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..cores {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let r = body();
        stop.store(true, Ordering::Relaxed);
        r
    })
}

/// As many shared-memory processes as cores (so spinning is not ruled out by their
/// count), on a host whose cores other work keeps busy.
#[test]
fn shm_waiting_on_a_busy_host_leaves_the_cores_to_the_others() {
    let cores = pin_to_two_cores();
    let in_sync = std::sync::Mutex::new(Vec::new());
    with_busy_host(cores, || {
        Root::with_max_procs(cores as u32)
            .exec(cores as u32, &|ctx: &mut Context, _: Args<'_>| {
                let t = rotate(ctx);
                in_sync.lock().unwrap().push(t);
            }, Args::none())
            .unwrap();
    });
    check("shm on a busy host", &in_sync.into_inner().unwrap());
}

/// `lpfrun args` running the ignored test `child` of this binary, which prints the CPU
/// time each of its LPF processes spent inside sync; those times.
fn lpfrun_children(args: &[&str]) -> Vec<Duration> {
    let out = Command::new(env!("CARGO_BIN_EXE_lpfrun"))
        .args(args)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "lpfrun {args:?}: {}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let times: Vec<Duration> = text
        .lines()
        // (The test harness may print "test child ... " before it on the same line.)
        .filter_map(|l| l.split_once("in-sync-cpu-ns ").map(|(_, n)| n))
        .map(|n| Duration::from_nanos(n.trim().parse().unwrap()))
        .collect();
    assert!(!times.is_empty(), "lpfrun {args:?} printed no times:\n{text}");
    times
}

/// Twice as many TCP processes as cores.
#[test]
fn tcp_waiting_with_more_processes_than_cores_leaves_the_cores_to_the_others() {
    let cores = pin_to_two_cores();
    let n = (2 * cores).to_string();
    let times = lpfrun_children(&["-n", &n, "--engine", "tcp"]);
    assert_eq!(times.len(), 2 * cores);
    check("tcp, twice as many processes as cores", &times);
}

/// As many hybrid OS processes as cores, two threads each.
#[test]
fn hybrid_waiting_with_more_processes_than_cores_leaves_the_cores_to_the_others() {
    let cores = pin_to_two_cores();
    let n = cores.to_string();
    let times = lpfrun_children(&["-n", &n, "--engine", "hybrid", "--threads", "2"]);
    assert_eq!(times.len(), 2 * cores);
    check("hybrid, two threads per process, as many processes as cores", &times);
}

/// One OS process of the lpfrun jobs above: runs [`rotate`] on its LPF processes.
#[test]
#[ignore = "run by lpfrun from the tests above"]
fn child() {
    Root::new()
        .exec(lpf::MAX_P, &|ctx: &mut Context, _: Args<'_>| {
            let t = rotate(ctx);
            println!("in-sync-cpu-ns {}", t.as_nanos());
        }, Args::none())
        .unwrap();
}
