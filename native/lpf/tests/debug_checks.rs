//! The debug layer's checks ([`lpf::checks`], #17 item 5), switched on for this test
//! binary: each misuse the default mode accepts is a fatal error naming the call. The C
//! side (abort with the message): tests/c/debug_misuse.c.

use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};

/// Runs `body` on `p` shm processes with the checks on; the messages of the processes'
/// failures, one a line ("" if none failed).
fn failure(p: u32, body: &(dyn Fn(&mut Context) + Sync)) -> String {
    lpf::checks::enable();
    let failures = std::sync::Mutex::new(Vec::new());
    let run = |ctx: &mut Context, _: Args<'_>| {
        ctx.resize_memory_register(4).unwrap();
        ctx.resize_message_queue(8).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        body(ctx);
        if let Some(e) = ctx.failure() {
            failures.lock().unwrap().push(e.message().to_string());
        }
    };
    let section = Root::with_max_procs(p).exec(p, &run, Args::none());
    let failures = failures.into_inner().unwrap();
    assert_eq!(section.is_err(), !failures.is_empty());
    failures.join("\n")
}

#[test]
fn unknown_attributes_are_refused() {
    let e = failure(1, &|ctx| {
        let _ = ctx.sync(7);
    });
    assert!(e.contains("sync: unknown sync attribute 7"), "{e}");
    let e = failure(1, &|ctx| {
        let mut a = [0u8; 8];
        let g = ctx.register_global(&mut a).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let _ = ctx.put(g.slot(), 0, 0, g.slot(), 4, 4, 3);
    });
    assert!(e.contains("put: unknown message attribute 3"), "{e}");
}

#[test]
fn deregistration_count_and_order_must_agree() {
    let e = failure(2, &|ctx| {
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        let ga = ctx.register_global(&mut a).unwrap();
        let gb = ctx.register_global(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        ctx.deregister(ga.slot()).unwrap();
        if ctx.pid() == 1 {
            ctx.deregister(gb.slot()).unwrap();
        }
        let _ = ctx.sync(SYNC_DEFAULT);
    });
    assert!(e.contains("deregistered 2 global slots") && e.contains("process 0 deregistered 1"), "{e}");
    let e = failure(2, &|ctx| {
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        let ga = ctx.register_global(&mut a).unwrap();
        let gb = ctx.register_global(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let order = if ctx.pid() == 0 { [ga.slot(), gb.slot()] } else { [gb.slot(), ga.slot()] };
        for s in order {
            ctx.deregister(s).unwrap();
        }
        let _ = ctx.sync(SYNC_DEFAULT);
    });
    assert!(e.contains("different orders"), "{e}");
}

#[test]
fn a_get_reading_what_a_put_writes_is_a_conflict() {
    let e = failure(2, &|ctx| {
        let mut x = [0u64; 2];
        let mut mine = [ctx.pid() as u64; 2];
        let g = ctx.register_global(&mut x).unwrap();
        let l = ctx.register_local(&mut mine).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let next = 1 - ctx.pid();
        ctx.put(l.slot(), 0, next, g.slot(), 8, 8, MSG_DEFAULT).unwrap();
        if ctx.pid() == 0 {
            ctx.get(next, g.slot(), 4, l.slot(), 8, 8, MSG_DEFAULT).unwrap();
        }
        let _ = ctx.sync(SYNC_DEFAULT);
    });
    assert!(e.contains("read-write conflict in the memory of process 1"), "{e}");
    // Locally: a put's source written by a get of the same superstep.
    let e = failure(1, &|ctx| {
        let mut x = [0u64; 2];
        let g = ctx.register_global(&mut x).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        ctx.get(0, g.slot(), 0, g.slot(), 8, 8, MSG_DEFAULT).unwrap();
        ctx.put(g.slot(), 8, 0, g.slot(), 0, 8, MSG_DEFAULT).unwrap();
        let _ = ctx.sync(SYNC_DEFAULT);
    });
    assert!(e.contains("the put of 8 bytes from process 0 to process 0 (its request 1; source)"), "{e}");
}

#[test]
fn correct_supersteps_pass_the_checks() {
    let e = failure(3, &|ctx| {
        let mut x = [0u64; 4];
        let mut mine = [ctx.pid() as u64 + 1; 2];
        let g = ctx.register_global(&mut x).unwrap();
        let l = ctx.register_local(&mut mine).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        // Everyone writes x[0] of its right neighbour (concurrent writes are defined) and
        // reads x[2..4] of its left one, which nobody writes.
        let (p, pid) = (ctx.nprocs(), ctx.pid());
        ctx.put(l.slot(), 0, (pid + 1) % p, g.slot(), 0, 8, MSG_DEFAULT).unwrap();
        ctx.put(l.slot(), 0, 0, g.slot(), 0, 8, MSG_DEFAULT).unwrap();
        ctx.get((pid + p - 1) % p, g.slot(), 16, l.slot(), 8, 8, MSG_DEFAULT).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let (ga, gb) = (g.slot(), l.slot());
        drop((g, l));
        ctx.deregister(gb).unwrap();
        ctx.deregister(ga).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
    });
    assert_eq!(e, "");
}

#[test]
fn a_full_queue_or_register_is_misuse() {
    // Room for 8 messages and 4 registrations (see `failure`).
    let e = failure(1, &|ctx| {
        let mut a = [0u8; 8];
        let g = ctx.register_global(&mut a).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        for _ in 0..8 {
            ctx.get(0, g.slot(), 0, g.slot(), 0, 1, MSG_DEFAULT).unwrap();
        }
        let e = ctx.get(0, g.slot(), 0, g.slot(), 0, 1, MSG_DEFAULT).unwrap_err();
        assert_eq!(e.reason(), lpf::Reason::Misuse { call: "lpf_get" }, "{e}");
    });
    assert!(e.contains("message queue full: 8 messages reserved"), "{e}");
    let e = failure(1, &|ctx| {
        let mut a = [[0u8; 1]; 5];
        let [a0, a1, a2, a3, a4] = &mut a;
        let _held = [ctx.register_local(a0), ctx.register_local(a1), ctx.register_local(a2), ctx.register_local(a3)];
        let e = ctx.register_local(a4).err().expect("a fifth registration with room for four");
        assert_eq!(e.reason(), lpf::Reason::Misuse { call: "lpf_register_local" }, "{e}");
    });
    assert!(e.contains("memory register full: 4 of 4 slots in use"), "{e}");
}

#[test]
fn a_message_counts_at_its_origin_and_at_its_remote_side() {
    // 5 puts each to the right neighbour: 5 issued + 5 received = 10 > 8 at every process.
    let e = failure(2, &|ctx| {
        let mut a = [0u8; 8];
        let g = ctx.register_global(&mut a).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let right = (ctx.pid() + 1) % ctx.nprocs();
        for k in 0..5 {
            ctx.put(g.slot(), k, right, g.slot(), 0, 1, MSG_DEFAULT).unwrap();
        }
        let _ = ctx.sync(SYNC_DEFAULT);
    });
    assert!(e.contains("too many messages at process 0 in this superstep: its message queue holds 8, but it issued 5 requests and is the remote side of 5"), "{e}");
    // 4 + 4 fits.
    let e = failure(2, &|ctx| {
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        let g = ctx.register_global(&mut a).unwrap();
        let l = ctx.register_local(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let right = (ctx.pid() + 1) % ctx.nprocs();
        for k in 0..4 {
            ctx.put(l.slot(), k, right, g.slot(), 0, 1, MSG_DEFAULT).unwrap();
        }
        ctx.sync(SYNC_DEFAULT).unwrap();
    });
    assert_eq!(e, "");
}

#[test]
fn the_remote_side_of_a_queued_request_may_not_be_deregistered() {
    let e = failure(2, &|ctx| {
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        let src = ctx.register_global(&mut a).unwrap();
        let dst = ctx.register_global(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let right = (ctx.pid() + 1) % ctx.nprocs();
        ctx.put(src.slot(), 0, right, dst.slot(), 0, 8, MSG_DEFAULT).unwrap();
        let _ = ctx.deregister(dst.slot());
    });
    assert!(e.contains("is the remote side of this process's request 0 queued in this superstep"), "{e}");
}
