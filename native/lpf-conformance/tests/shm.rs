//! The conformance suite on the shared-memory engine, started both ways: `exec` from
//! the root, and `hook` by threads that already exist (`lpf_pthread_initialize`).

use lpf::{Args, Context, Pid, Result, Root, ShmInit};
use lpf_conformance::{collectives_suite, conformance_suite, Launcher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `exec` from the root on exactly p processes, however many cores there are.
struct Exec;

impl Launcher for Exec {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        Root::with_max_procs(p).exec(p, spmd, args)
    }
    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        Some(std::iter::once(0..p).collect())
    }
}

/// p threads that each join a pthread-style init and hook.
struct Hook;

/// A key no other group of this test process uses: the tests run at once, each
/// forming its own groups.
fn fresh_key() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("conformance-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

const JOIN_TIMEOUT: Duration = Duration::from_secs(60);

impl Launcher for Hook {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        let key = fresh_key();
        let key = key.as_str();
        let mut args = Some(args);
        std::thread::scope(|s| {
            let peers: Vec<_> = (1..p)
                .map(|pid| s.spawn(move || ShmInit::join(key, pid, p, JOIN_TIMEOUT)?.hook(spmd, Args::none())))
                .collect();
            let mine = ShmInit::join(key, 0, p, JOIN_TIMEOUT).and_then(|init| init.hook(spmd, args.take().unwrap()));
            let theirs: Vec<Result<()>> = peers.into_iter().map(|h| h.join().unwrap()).collect();
            std::iter::once(mine).chain(theirs).find(|r| r.is_err()).unwrap_or(Ok(()))
        })
    }
    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        Some(std::iter::once(0..p).collect())
    }
}

mod exec {
    use super::*;
    conformance_suite!(Exec);
    collectives_suite!(Exec);
}

mod hook {
    use super::*;
    conformance_suite!(Hook);
    collectives_suite!(Hook);
}

#[test]
fn nested_exec_divides_free_processors() {
    let mut out = [0u8; 8];
    Root::with_max_procs(8)
        .exec(2, &|ctx: &mut Context, args: Args<'_>| {
            let free = ctx.probe().unwrap().free_p;
            assert_eq!(free, 4);
            let mut got = [0u8; 4];
            ctx.exec(lpf::MAX_P, &|inner: &mut Context, args: Args<'_>| {
                if inner.pid() == 0 {
                    args.output.copy_from_slice(&inner.nprocs().to_le_bytes());
                }
                // Grandchildren: one processor each is left.
                assert_eq!(inner.probe().unwrap().free_p, 1);
            }, Args::new(&[], &mut got))
            .unwrap();
            if ctx.pid() == 0 {
                args.output[..4].copy_from_slice(&got);
            }
        }, Args::new(&[], &mut out))
        .unwrap();
    assert_eq!(u32::from_le_bytes(out[..4].try_into().unwrap()), 4);
}

#[test]
fn hook_rejects_bad_pids() {
    assert!(ShmInit::new(3, 3).is_err());
    assert!(ShmInit::new(0, 0).is_err());
}

/// Runs `jobs` groups at once, group j of `sizes[j]` threads under its own key; in each
/// hook every process puts `tag(j, pid)` to its right neighbour. Returns per job, per
/// pid, what arrived.
fn ring_of_jobs(sizes: &[Pid], keys: &[String]) -> Vec<Vec<u64>> {
    let tag = |job: usize, pid: Pid| (job as u64) << 32 | u64::from(pid);
    std::thread::scope(|s| {
        let handles: Vec<Vec<_>> = sizes
            .iter()
            .enumerate()
            .map(|(job, &p)| {
                let key = keys[job].as_str();
                (0..p)
                    .map(move |pid| {
                        s.spawn(move || {
                            let got = Mutex::new(u64::MAX);
                            let spmd = |ctx: &mut Context, _a: Args<'_>| {
                                let (me, n) = (ctx.pid(), ctx.nprocs());
                                assert_eq!(n, p, "job {job}: section of the wrong size");
                                ctx.resize_memory_register(2).unwrap();
                                ctx.resize_message_queue(2).unwrap();
                                ctx.sync(lpf::SYNC_DEFAULT).unwrap();
                                let mut mine = [tag(job, me)];
                                let mut from_left = [u64::MAX];
                                let src = ctx.register_local(&mut mine).unwrap();
                                let dst = ctx.register_global(&mut from_left).unwrap();
                                ctx.sync(lpf::SYNC_DEFAULT).unwrap();
                                ctx.put(src.slot(), 0, (me + 1) % n, dst.slot(), 0, 8, lpf::MSG_DEFAULT).unwrap();
                                ctx.sync(lpf::SYNC_DEFAULT).unwrap();
                                *got.lock().unwrap() = ctx.slice(&dst)[0];
                            };
                            ShmInit::join(key, pid, p, JOIN_TIMEOUT)?.hook(&spmd, Args::none())?;
                            Ok::<u64, lpf::Error>(got.into_inner().unwrap())
                        })
                    })
                    .collect()
            })
            .collect();
        handles
            .into_iter()
            .map(|hs| hs.into_iter().map(|h| h.join().unwrap().expect("hook failed")).collect())
            .collect()
    })
}

/// Regression (hardening item 1): groups were matched by size, so two jobs of one size
/// in one process crossed their data. Jobs of sizes 2, 2, 3 and 4 at once, 20 rounds:
/// every process hears from its own job's left neighbour only.
#[test]
fn concurrent_groups_keep_their_data_apart() {
    let sizes: [Pid; 4] = [2, 2, 3, 4];
    for round in 0..20 {
        let keys: Vec<String> = sizes.iter().map(|_| fresh_key()).collect();
        let got = ring_of_jobs(&sizes, &keys);
        for (job, (&p, values)) in sizes.iter().zip(&got).enumerate() {
            for pid in 0..p {
                let left = (pid + p - 1) % p;
                assert_eq!(values[pid as usize], (job as u64) << 32 | u64::from(left), "round {round}, job {job}, pid {pid}");
            }
        }
    }
}

/// Regression (hardening item 8): threads disagreeing on nprocs under one key fail at
/// once, all of them, instead of waiting.
#[test]
fn join_with_mismatched_nprocs_fails_every_joiner_at_once() {
    let key = fresh_key();
    let start = Instant::now();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| ShmInit::join(&key, 0, 3, JOIN_TIMEOUT).map(|_| ()));
        std::thread::sleep(Duration::from_millis(50));
        let b = s.spawn(|| ShmInit::join(&key, 1, 2, JOIN_TIMEOUT).map(|_| ()));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    for r in [a, b] {
        let e = r.expect_err("a group with two sizes formed");
        assert!(e.message().contains("nprocs 2") && e.message().contains("nprocs 3"), "{e}");
    }
}

#[test]
fn join_of_one_pid_twice_fails_the_group() {
    let key = fresh_key();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| ShmInit::join(&key, 0, 3, JOIN_TIMEOUT).map(|_| ()));
        std::thread::sleep(Duration::from_millis(50));
        let b = s.spawn(|| ShmInit::join(&key, 0, 3, JOIN_TIMEOUT).map(|_| ()));
        (a.join().unwrap(), b.join().unwrap())
    });
    for r in [a, b] {
        assert!(r.expect_err("formed").message().contains("twice"));
    }
}

/// Regression (hardening item 8): a thread that never comes made the others wait for
/// ever; now the wait ends at the timeout with the missing pids named.
#[test]
fn join_with_a_missing_thread_times_out_naming_it() {
    let key = fresh_key();
    let start = Instant::now();
    let (a, c) = std::thread::scope(|s| {
        let a = s.spawn(|| ShmInit::join(&key, 0, 3, Duration::from_millis(300)).map(|_| ()));
        let c = s.spawn(|| ShmInit::join(&key, 2, 3, Duration::from_millis(300)).map(|_| ()));
        (a.join().unwrap(), c.join().unwrap())
    });
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "took {took:?}");
    for r in [a, c] {
        let e = r.expect_err("formed without pid 1");
        assert!(e.message().contains("[1]"), "{e}");
    }
    // The key is free again: a complete group forms under it.
    let keys = vec![key];
    assert_eq!(ring_of_jobs(&[2], &keys), vec![vec![1, 0]]);
}

/// The unnamed groups of `lpf_pthread_initialize` (keyed by size) still form and hook.
#[test]
fn unnamed_group_forms_and_hooks() {
    let got: Vec<Pid> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..5)
            .map(|pid| {
                s.spawn(move || {
                    let init = ShmInit::new(pid, 5).unwrap();
                    let seen = Mutex::new(0);
                    init.hook(&|ctx: &mut Context, _a: Args<'_>| *seen.lock().unwrap() = ctx.nprocs(), Args::none())
                        .unwrap();
                    seen.into_inner().unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(got, vec![5; 5]);
}
