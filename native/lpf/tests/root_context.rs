//! `LPF_ROOT` as a context of one process ([`Root::context`], #17 item 1) and `probe`'s
//! p, the runtime's processors at every depth (#17 item 2), on the shared-memory engine.
//! (The C interface's tests: tests/c/root_context.c, tests/c/probe_nested.c.)

use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};

#[test]
fn the_root_context_is_a_section_of_one_process() {
    let mut c = Root::with_max_procs(3).context().unwrap();
    assert_eq!((c.pid(), c.nprocs()), (0, 1));
    c.resize_memory_register(2).unwrap();
    c.resize_message_queue(4).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    let mut src = [7u64, 8];
    let mut dst = [0u64; 3];
    let s = c.register_local(&mut src).unwrap();
    let d = c.register_global(&mut dst).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    c.put(s.slot(), 8, 0, d.slot(), 16, 8, MSG_DEFAULT).unwrap();
    c.get(0, d.slot(), 0, s.slot(), 0, 8, MSG_DEFAULT).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    assert_eq!(c.slice(&d), &[0, 0, 8]);
    assert_eq!(c.slice(&s), &[0, 8]);
    assert!(c.put(s.slot(), 0, 1, d.slot(), 0, 8, MSG_DEFAULT).unwrap_err().message().contains("pid 1"));
    // p is the root's, not the section's 1.
    assert_eq!(c.probe().unwrap().p, 3);
}

#[test]
fn probe_reports_the_runtimes_processors_at_every_depth() {
    let root = Root::with_max_procs(4);
    assert_eq!(root.probe().unwrap().p, 4);
    let p_of = |ctx: &Context| ctx.probe().unwrap().p;
    root.exec(
        2,
        &|ctx: &mut Context, _| {
            assert_eq!(p_of(ctx), 4, "in the section");
            ctx.exec(
                2,
                &|inner: &mut Context, _| {
                    assert_eq!(p_of(inner), 4, "in a nested section");
                    inner.exec(2, &|deeper: &mut Context, _| assert_eq!(p_of(deeper), 4, "two deep"), Args::none()).unwrap();
                },
                Args::none(),
            )
            .unwrap();
            ctx.rehook(&|again: &mut Context, _| assert_eq!(p_of(again), 4, "in a rehook"), Args::none()).unwrap();
        },
        Args::none(),
    )
    .unwrap();
}
