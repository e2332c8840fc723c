//! The conformance suite on the shared-memory engine, started both ways: `exec` from
//! the root, and `hook` by threads that already exist (`lpf_pthread_initialize`).

use lpf::{Args, Context, Pid, Result, Root, ShmInit};
use lpf_conformance::{collectives_suite, conformance_suite, Launcher};
use std::sync::Mutex;

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

/// Groups are matched by size only, so two tests must not fill groups at once.
static ONE_GROUP_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Launcher for Hook {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        let _one = ONE_GROUP_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mut args = Some(args);
        std::thread::scope(|s| {
            let peers: Vec<_> = (1..p)
                .map(|pid| s.spawn(move || ShmInit::new(pid, p)?.hook(spmd, Args::none())))
                .collect();
            let mine = ShmInit::new(0, p).and_then(|init| init.hook(spmd, args.take().unwrap()));
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
