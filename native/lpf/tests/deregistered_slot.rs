//! A slot leaves communication when it is deregistered (or its `Registered` dropped):
//! a put or get queued earlier in the same superstep, whose local side is that slot,
//! must make the call or the next sync fail instead of reading or writing memory the
//! caller may already have freed (#17 item 5, default mode). The C side, also under
//! valgrind: tests/c/debug_misuse.c, modes dereg-queued and put-after-dereg.

use lpf::{Args, Context, Reason, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Runs `body` on `p` shm processes, each with room for 4 slots and 4 requests.
///
/// These sections end in an error on purpose, and `exec` turns a panic into an error
/// too (and returns pid 0's first): an assertion failing inside `body` would pass as
/// the expected failure. So a panic of `body` on any process fails the test here.
fn exec(p: u32, body: &(dyn Fn(&mut Context) + Sync)) -> lpf::Result<()> {
    let panics = Mutex::new(Vec::new());
    let run = |ctx: &mut Context, _: Args<'_>| {
        ctx.resize_memory_register(4).unwrap();
        ctx.resize_message_queue(4).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let pid = ctx.pid();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(ctx))) {
            let what = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            panics.lock().unwrap().push(format!("process {pid}: {}", what.unwrap_or_default()));
            resume_unwind(panic);
        }
    };
    let result = Root::with_max_procs(p).exec(p, &run, Args::none());
    let panics = panics.into_inner().unwrap();
    assert!(panics.is_empty(), "the SPMD function panicked: {panics:?}");
    result
}

#[test]
fn deregistering_the_source_of_a_queued_put_is_refused() {
    let err = exec(2, &|ctx| {
        let mut dst = [0u64; 1];
        let d = ctx.register_global(&mut dst).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let mut src = vec![ctx.pid() as u64 + 1];
        // SAFETY: `src` outlives the registration and the queued put.
        let s = unsafe { ctx.register_local_raw(src.as_mut_ptr().cast(), 8) }.unwrap();
        ctx.put(s, 0, 1 - ctx.pid(), d.slot(), 0, 8, MSG_DEFAULT).unwrap();
        if ctx.pid() == 0 {
            let e = ctx.deregister(s).unwrap_err();
            assert!(e.message().contains("deregister") && e.message().contains(&s.to_string()), "{e}");
            assert!(e.message().contains("queued in this superstep"), "{e}");
            src.fill(0xdead);
            drop(src);
            assert!(ctx.sync(SYNC_DEFAULT).is_err());
        } else {
            // The peer's sync fails too (pid 0 left): no process waits forever.
            assert!(ctx.sync(SYNC_DEFAULT).is_err());
        }
    })
    .unwrap_err();
    assert!(err.message().contains("queued in this superstep"), "{err}");
}

#[test]
fn deregistering_the_destination_of_a_queued_get_is_refused() {
    let err = exec(1, &|ctx| {
        let mut global = [5u64; 1];
        let g = ctx.register_global(&mut global).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let mut dst = vec![0u64];
        // SAFETY: `dst` outlives the registration and the queued get.
        let d = unsafe { ctx.register_local_raw(dst.as_mut_ptr().cast(), 8) }.unwrap();
        ctx.get(0, g.slot(), 0, d, 0, 8, MSG_DEFAULT).unwrap();
        let e = ctx.deregister(d).unwrap_err();
        assert!(e.message().contains(&d.to_string()), "{e}");
        drop(dst);
    })
    .unwrap_err();
    assert!(err.message().contains("queued in this superstep"), "{err}");
}

#[test]
fn a_slot_named_in_an_earlier_superstep_deregisters() {
    exec(1, &|ctx| {
        let mut global = [5u64; 1];
        let g = ctx.register_global(&mut global).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let mut dst = [0u64];
        // SAFETY: `dst` outlives the registration (deregistered below).
        let d = unsafe { ctx.register_local_raw(dst.as_mut_ptr().cast(), 8) }.unwrap();
        ctx.get(0, g.slot(), 0, d, 0, 8, MSG_DEFAULT).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        ctx.deregister(d).unwrap();
        // Named after its deregistration: a misuse of lpf_put naming the slot.
        let e = ctx.put(d, 0, 0, g.slot(), 0, 8, MSG_DEFAULT).unwrap_err();
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" }, "{e}");
        assert!(e.message().contains(&format!("{d} is not registered")), "{e}");
    })
    .unwrap_err();
}

#[test]
fn dropping_a_registered_slice_with_a_queued_put_fails_the_sync() {
    let err = exec(1, &|ctx| {
        let mut dst = [0u64; 1];
        let d = ctx.register_global(&mut dst).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let mut src = vec![7u64];
        let s = ctx.register_local(&mut src).unwrap();
        ctx.put(s.slot(), 0, 0, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
        drop(s);
        drop(src);
        let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
        assert!(e.message().contains("released"), "{e}");
        assert_eq!(ctx.slice(&d), &[0], "nothing was copied from the released memory");
    })
    .unwrap_err();
    assert!(err.message().contains("released"), "{err}");
}
