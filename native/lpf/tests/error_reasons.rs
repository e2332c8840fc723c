//! An error's [`Reason`] on the main failure paths (#16 item 5): a caller tells a peer
//! that left from a misuse, an exhausted capacity or a refused secret by matching the
//! reason, not the text. On the shared-memory engine (`Root`) and over TCP (each
//! process a thread of this test with its own TCP init over loopback; every wait is
//! bounded by the init's timeout, so a hang fails the test).

use lpf::tcp::{TcpConfig, TcpInit};
use lpf::{Args, Context, ErrorKind, Pid, Reason, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::sync::Mutex;
use std::time::Duration;

const SECRET: &str = "the secret of the error tests";

fn cfg(port: u16, pid: Pid, n: Pid) -> TcpConfig {
    TcpConfig::new("127.0.0.1", port, pid, n).timeout(Duration::from_secs(10)).job("error-reasons").secret(SECRET)
}

/// Runs `spmd` on `n` TCP processes (threads of this test); each process's result.
fn over_tcp(n: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync)) -> Vec<lpf::Result<()>> {
    let prepared = TcpInit::prepare(cfg(0, 0, n)).unwrap();
    let port = prepared.bound_port();
    std::thread::scope(|s| {
        let others: Vec<_> = (1..n).map(|pid| s.spawn(move || TcpInit::new(cfg(port, pid, n))?.hook(spmd, Args::none()))).collect();
        let mut all = vec![prepared.join().and_then(|init| init.hook(spmd, Args::none()))];
        all.extend(others.into_iter().map(|h| h.join().unwrap()));
        all
    })
}

/// A context of one process (the root's) with a local and a global slot of 16 bytes;
/// `f` gets it after the sync that activates them.
fn with_two_slots(f: impl FnOnce(&mut Context, lpf::Memslot, lpf::Memslot)) {
    let mut c = Root::new().context().unwrap();
    c.resize_memory_register(2).unwrap();
    c.resize_message_queue(2).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    let mut src = [1u64; 2];
    let mut dst = [0u64; 2];
    let s = c.register_local(&mut src).unwrap();
    let d = c.register_global(&mut dst).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    f(&mut c, s.slot(), d.slot());
}

#[test]
fn a_bad_pid_is_misuse_naming_the_call() {
    with_two_slots(|c, s, d| {
        // Pid 1 of a section of 1.
        let e = c.put(s, 0, 1, d, 0, 8, MSG_DEFAULT).unwrap_err();
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" }, "{e}");
        assert!(e.message().contains("pid 1 is not below nprocs 1"), "{e}");
        // Every later call names the first failure's reason.
        let e = c.sync(SYNC_DEFAULT).unwrap_err();
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" }, "{e}");
    });
}

#[test]
fn a_range_past_an_area_is_misuse_naming_the_call() {
    with_two_slots(|c, s, d| {
        // 16 bytes from offset 8 of a 16-byte area.
        let e = c.get(0, d, 8, s, 0, 16, MSG_DEFAULT).unwrap_err();
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_get" }, "{e}");
        assert!(e.message().contains("exceeds the 16 bytes"), "{e}");
    });
}

#[test]
fn a_register_beyond_memory_is_resource_exhausted() {
    let mut c = Root::new().context().unwrap();
    let e = c.resize_memory_register(usize::MAX / 2).unwrap_err();
    assert_eq!((e.kind(), e.reason()), (ErrorKind::OutOfMemory, Reason::ResourceExhausted), "{e}");
    let e = c.resize_message_queue(usize::MAX / 2).unwrap_err();
    assert_eq!((e.kind(), e.reason()), (ErrorKind::OutOfMemory, Reason::ResourceExhausted), "{e}");
    // The calls had no effect: the context goes on.
    c.sync(SYNC_DEFAULT).unwrap();
}

/// Issue 24 item 10: a fatal error puts the process in the failed state, so a section in
/// which every process met one and returned normally (no sync left to notice) fails with
/// it, on shared memory and over TCP. Before, `register_global_raw` of a NULL pointer was
/// not even refused, and the C interface's refusal was not remembered by the context:
/// `lpf_exec` returned success.
#[test]
fn a_section_whose_processes_all_failed_and_returned_fails() {
    let spmd = |ctx: &mut Context, _: Args<'_>| {
        ctx.resize_memory_register(1).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        // SAFETY: refused before the pointer is kept or used.
        let e = unsafe { ctx.register_global_raw(std::ptr::null_mut(), 400 << 20) }.unwrap_err();
        assert_eq!((e.kind(), e.reason()), (ErrorKind::Fatal, Reason::Misuse { call: "lpf_register_global" }), "{e}");
        assert_eq!(ctx.failure(), Some(&e));
    };
    let check = |r: &lpf::Result<()>| {
        let e = r.as_ref().expect_err("a section of failed processes succeeded");
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_register_global" }, "{e}");
        assert!(e.message().contains("NULL pointer with size 419430400"), "{e}");
    };
    for p in [1, 3] {
        check(&Root::with_max_procs(p).exec(p, &spmd, Args::none()));
    }
    over_tcp(2, &spmd).iter().for_each(check);
    // The failed state: later syncs fail too; a local register of NULL likewise.
    let mut c = Root::new().context().unwrap();
    c.resize_memory_register(1).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    // SAFETY: refused before the pointer is kept or used.
    let e = unsafe { c.register_local_raw(std::ptr::null_mut(), 8) }.unwrap_err();
    assert_eq!(e.reason(), Reason::Misuse { call: "lpf_register_local" }, "{e}");
    assert!(c.sync(SYNC_DEFAULT).unwrap_err().message().contains("this process failed earlier"));
    // NULL with size 0 registers nothing and is no error.
    let mut c = Root::new().context().unwrap();
    c.resize_memory_register(1).unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
    // SAFETY: an empty area is never read or written.
    unsafe { c.register_local_raw(std::ptr::null_mut(), 0) }.unwrap();
    c.sync(SYNC_DEFAULT).unwrap();
}

#[test]
fn a_peer_that_returns_early_is_peer_left() {
    // Shared memory: the barrier knows only that somebody left.
    let seen = Mutex::new(None);
    let r = Root::with_max_procs(2).exec(
        2,
        &|ctx: &mut Context, _| {
            if ctx.pid() == 0 {
                *seen.lock().unwrap() = Some(ctx.sync(SYNC_DEFAULT).unwrap_err().reason());
            }
        },
        Args::none(),
    );
    assert!(r.is_err());
    assert_eq!(seen.into_inner().unwrap(), Some(Reason::PeerLeft { pid: None }));
    // TCP: the peer is named.
    let results = over_tcp(2, &|ctx: &mut Context, _| {
        if ctx.pid() == 0 {
            let _ = ctx.sync(SYNC_DEFAULT);
        }
    });
    let e = results[0].as_ref().unwrap_err();
    assert_eq!(e.reason(), Reason::PeerLeft { pid: Some(1) }, "{e}");
    assert!(e.message().contains("process 1"), "{e}");
}

/// A sync error found on one process reaches the others through the final barrier
/// with its reason: here process 0 is the target of more messages than its queue has
/// room for, which it finds; process 1 learns it from the barrier.
#[test]
fn a_sync_error_found_elsewhere_keeps_its_reason() {
    let reasons = Mutex::new(vec![None; 2]);
    let results = over_tcp(2, &|ctx: &mut Context, _| {
        let pid = ctx.pid();
        let room = if pid == 0 { 1 } else { 2 };
        ctx.resize_memory_register(2).unwrap();
        ctx.resize_message_queue(room).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        let mut src = [pid as u64; 2];
        let mut dst = [0u64; 2];
        let s = ctx.register_local(&mut src).unwrap();
        let d = ctx.register_global(&mut dst).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        if pid == 1 {
            ctx.put(s.slot(), 0, 0, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
            ctx.put(s.slot(), 8, 0, d.slot(), 8, 8, MSG_DEFAULT).unwrap();
        }
        let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
        assert!(e.message().contains("process 0 is the target of 2 messages"), "process {pid}: {e}");
        reasons.lock().unwrap()[pid as usize] = Some(e.reason());
    });
    assert!(results.iter().all(|r| r.is_err()), "{results:?}");
    assert_eq!(reasons.into_inner().unwrap(), vec![Some(Reason::ResourceExhausted); 2]);
}

#[test]
fn a_wrong_secret_is_authentication() {
    let prepared = TcpInit::prepare(cfg(0, 0, 2).timeout(Duration::from_secs(2))).unwrap();
    let port = prepared.bound_port();
    std::thread::scope(|s| {
        let master = s.spawn(move || prepared.join().map(|_| ()));
        let e = TcpInit::new(cfg(port, 1, 2).secret("a wrong secret of 16+ bytes")).err().expect("wrong secret");
        assert_eq!(e.reason(), Reason::Authentication, "{e}");
        // The master never got its pid 1: it gives up after its timeout.
        let e = master.join().unwrap().unwrap_err();
        assert_eq!(e.reason(), Reason::Timeout, "{e}");
    });
}

/// Pid 0 registers a global slot before a sync and pid 1 does not: pid 0's sync
/// begins with the collective that activates it, pid 1's with the exchange.
fn register_global_on_pid_0_only(ctx: &mut Context, reasons: &Mutex<Vec<Option<Reason>>>) {
    ctx.resize_memory_register(1).unwrap();
    ctx.sync(SYNC_DEFAULT).unwrap();
    let mut area = [0u64; 1];
    let _slot = (ctx.pid() == 0).then(|| ctx.register_global(&mut area).unwrap());
    let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
    reasons.lock().unwrap()[ctx.pid() as usize] = Some(e.reason());
}

#[test]
fn processes_in_different_collectives_are_out_of_step() {
    let reasons = Mutex::new(vec![None; 2]);
    let r = Root::with_max_procs(2).exec(2, &|ctx: &mut Context, _| register_global_on_pid_0_only(ctx, &reasons), Args::none());
    assert!(r.is_err());
    assert_eq!(reasons.into_inner().unwrap(), vec![Some(Reason::OutOfStep); 2], "shared memory");
    // Over TCP the first to see the other's message says OutOfStep; the other may see
    // it leave first.
    let reasons = Mutex::new(vec![None; 2]);
    let results = over_tcp(2, &|ctx: &mut Context, _| register_global_on_pid_0_only(ctx, &reasons));
    assert!(results.iter().all(|r| r.is_err()), "{results:?}");
    let reasons = reasons.into_inner().unwrap();
    assert!(reasons.contains(&Some(Reason::OutOfStep)), "{reasons:?}");
    for (pid, r) in reasons.iter().enumerate() {
        let other = Some(1 - pid as Pid);
        assert!(*r == Some(Reason::OutOfStep) || *r == Some(Reason::PeerLeft { pid: other }), "{pid}: {r:?}");
    }
}

#[test]
fn an_impossible_configuration_is_config() {
    let e = lpf::tcp::parse_port_range("7100-7000").unwrap_err();
    assert_eq!(e.reason(), Reason::Config, "{e}");
    // Only pid 0 may ask for port 0.
    let e = TcpInit::prepare(cfg(0, 1, 2)).err().expect("pid 1 on port 0");
    assert_eq!(e.reason(), Reason::Config, "{e}");
}
