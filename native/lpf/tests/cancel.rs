//! Cancelling an LPF process (#24 item 3): a [`Cancel`] token set from another thread
//! makes the process fail with [`Reason::Cancelled`] at its next wait (at once when it
//! is waiting) or sync, and its peers fail with [`Reason::PeerLeft`] where they need it
//! (no sync of theirs waits for it). Likewise while the group forms. On the
//! shared-memory engine (`ShmInit`), over TCP and on the hybrid engine (each OS process
//! a thread of this test with its own TCP init over loopback).
//!
//! In each section one process computes (until the test lets it go on) while the others
//! sync at once. Without cancellation a waiting process would wait for the computing
//! one, which the test lets go only after the cancelled processes returned, or after
//! [`RELEASE`]: a cancelled process that does not notice shows as one that returned no
//! earlier than that.

use lpf::tcp::{TcpConfig, TcpInit};
use lpf::{Args, Cancel, Context, Pid, Reason, ShmInit, SYNC_DEFAULT};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// When the computing process goes on to its syncs at the latest.
const RELEASE: Duration = Duration::from_secs(20);
/// When the test cancels.
const CANCEL_AFTER: Duration = Duration::from_millis(300);

#[derive(Clone, Copy, Debug)]
enum Engine {
    /// Three threads of one group.
    Shm,
    /// Three OS processes (one LPF process each).
    Tcp,
    /// Two OS processes of two threads each.
    Hybrid,
}

impl Engine {
    /// The inits (OS processes) and the LPF processes of each.
    fn layout(self) -> (Pid, Pid) {
        match self {
            Engine::Shm | Engine::Tcp => (3, 1),
            Engine::Hybrid => (2, 2),
        }
    }
}

/// How each LPF process's two syncs ended (the first error, if any), and when (since
/// its section started).
type Outcomes = BTreeMap<Pid, (lpf::Result<()>, Duration)>;

/// Runs a section on `engine` in which the last LPF process computes (until the test
/// lets it go on) and the others sync twice at once; the tokens of the inits (OS
/// processes) `victims` are set after [`CANCEL_AFTER`]. The computing process goes on
/// once every other cancelled process returned (or after [`RELEASE`]), or at the
/// cancel when `go_on_at_cancel`. Returns each LPF process's outcome and whether the
/// cancelled processes other than the computing one returned before it went on.
fn run(engine: Engine, victims: &[Pid], go_on_at_cancel: bool) -> (Outcomes, bool) {
    let (inits, k) = engine.layout();
    let total = inits * k;
    let computing = total - 1;
    let tokens: Vec<Cancel> = (0..inits).map(|_| Cancel::new()).collect();
    let release = AtomicBool::new(false);
    let outcomes = Mutex::new(Outcomes::new());
    let spmd = |ctx: &mut Context, _: Args<'_>| {
        let t0 = Instant::now();
        if ctx.pid() == computing {
            while !release.load(Ordering::SeqCst) && t0.elapsed() < RELEASE {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let r = ctx.sync(SYNC_DEFAULT).and_then(|()| ctx.sync(SYNC_DEFAULT));
        outcomes.lock().unwrap().insert(ctx.pid(), (r, t0.elapsed()));
    };
    let cancelled_returned_first = std::thread::scope(|s| {
        let spmd = &spmd;
        let hooks: Vec<_> = match engine {
            Engine::Shm => (0..inits)
                .map(|pid| {
                    let token = &tokens[pid as usize];
                    s.spawn(move || {
                        let init = ShmInit::join_cancellable("cancel-test", pid, inits, RELEASE, token)?;
                        init.hook(spmd, Args::none())
                    })
                })
                .collect(),
            Engine::Tcp | Engine::Hybrid => {
                let cfg = |port: u16, pid: Pid| {
                    TcpConfig::new("127.0.0.1", port, pid, inits)
                        .timeout(RELEASE)
                        .job(format!("cancel-test-{engine:?}"))
                        .threads(k)
                        .cancel(&tokens[pid as usize])
                };
                let master = TcpInit::prepare(cfg(0, 0)).unwrap();
                let port = master.bound_port();
                let mut hooks = vec![s.spawn(move || master.join()?.hook(spmd, Args::none()))];
                hooks.extend((1..inits).map(|pid| {
                    let cfg = cfg(port, pid);
                    s.spawn(move || TcpInit::new(cfg)?.hook(spmd, Args::none()))
                }));
                hooks
            }
        };
        std::thread::sleep(CANCEL_AFTER);
        for &v in victims {
            tokens[v as usize].cancel("the test cancels it");
        }
        if go_on_at_cancel {
            release.store(true, Ordering::SeqCst);
        }
        let cancelled: Vec<Pid> = victims.iter().flat_map(|&v| v * k..(v + 1) * k).filter(|&p| p != computing).collect();
        let t0 = Instant::now();
        let returned = || cancelled.iter().all(|p| outcomes.lock().unwrap().contains_key(p));
        while !returned() && t0.elapsed() < RELEASE {
            std::thread::sleep(Duration::from_millis(10));
        }
        let first = returned() && !release.load(Ordering::SeqCst);
        release.store(true, Ordering::SeqCst);
        for h in hooks {
            assert!(h.join().unwrap().is_err(), "a hook of a cancelled section returned Ok");
        }
        first
    });
    (outcomes.into_inner().unwrap(), cancelled_returned_first)
}

/// The reason of `pid`'s error.
fn reason(outcomes: &Outcomes, pid: Pid) -> Reason {
    match &outcomes[&pid].0 {
        Ok(()) => panic!("process {pid}'s syncs succeeded in a cancelled section: {outcomes:?}"),
        Err(e) => e.reason(),
    }
}

/// Checks that the processes of the inits `victims` failed `Cancelled` (with the
/// reason given in the message), the others `PeerLeft`. A cancelled process may see a
/// cancelled peer leave before it sees its own token (a thread of the same hybrid OS
/// process, or any process when all are cancelled): `PeerLeft` then; one of them at
/// least fails `Cancelled`.
fn check(engine: Engine, outcomes: &Outcomes, victims: &[Pid]) {
    let (inits, k) = engine.layout();
    let may_see_a_peer_leave = k > 1 || victims.len() == inits as usize;
    for (&pid, (r, _)) in outcomes {
        let got = reason(outcomes, pid);
        let saw_a_peer_leave = may_see_a_peer_leave && matches!(got, Reason::PeerLeft { .. });
        if victims.contains(&(pid / k)) && !saw_a_peer_leave {
            assert_eq!(got, Reason::Cancelled, "{engine:?}: process {pid}: {outcomes:?}");
            let message = format!("{r:?}");
            assert!(message.contains("the test cancels it"), "{engine:?}: the reason is not in the error: {message}");
        } else {
            assert!(matches!(got, Reason::PeerLeft { .. }), "{engine:?}: process {pid} failed with {got:?}: {outcomes:?}");
        }
    }
    let cancelled = outcomes.keys().filter(|&&p| reason(outcomes, p) == Reason::Cancelled).count();
    assert!(cancelled > 0, "{engine:?}: no process failed Cancelled: {outcomes:?}");
}

/// An OS process waiting in sync is cancelled: it returns (`Cancelled`) at once; the
/// others fail (`PeerLeft`) where they need it, once the computing one went on.
fn cancel_a_waiting_process(engine: Engine) {
    let (outcomes, first) = run(engine, &[0], false);
    assert!(first, "{engine:?}: the cancelled process did not return until the computing one went on: {outcomes:?}");
    check(engine, &outcomes, &[0]);
}

/// The computing process is cancelled: its next sync fails `Cancelled` at its start,
/// and the waiting processes `PeerLeft`.
fn cancel_the_computing_process(engine: Engine) {
    let (inits, _) = engine.layout();
    let (outcomes, _) = run(engine, &[inits - 1], true);
    check(engine, &outcomes, &[inits - 1]);
}

/// Every OS process is cancelled (as Spark kills every task of a cancelled job): the
/// waiting ones return at once, the computing one at its next sync.
fn cancel_every_process(engine: Engine) {
    let (inits, _) = engine.layout();
    let all: Vec<Pid> = (0..inits).collect();
    let (outcomes, first) = run(engine, &all, false);
    assert!(first, "{engine:?}: the waiting processes did not return until the computing one went on: {outcomes:?}");
    check(engine, &outcomes, &all);
}

#[test]
fn shm_a_cancelled_waiting_process_returns_at_once() {
    cancel_a_waiting_process(Engine::Shm);
}

#[test]
fn shm_a_cancelled_computing_process_fails_at_its_next_sync() {
    cancel_the_computing_process(Engine::Shm);
}

#[test]
fn shm_a_cancelled_section_ends_without_waiting_for_its_computing_process() {
    cancel_every_process(Engine::Shm);
}

#[test]
fn tcp_a_cancelled_waiting_process_returns_at_once() {
    cancel_a_waiting_process(Engine::Tcp);
}

#[test]
fn tcp_a_cancelled_computing_process_fails_at_its_next_sync() {
    cancel_the_computing_process(Engine::Tcp);
}

#[test]
fn tcp_a_cancelled_section_ends_without_waiting_for_its_computing_process() {
    cancel_every_process(Engine::Tcp);
}

#[test]
fn hybrid_a_cancelled_waiting_process_returns_at_once() {
    cancel_a_waiting_process(Engine::Hybrid);
}

#[test]
fn hybrid_a_cancelled_computing_process_fails_at_its_next_sync() {
    cancel_the_computing_process(Engine::Hybrid);
}

#[test]
fn hybrid_a_cancelled_section_ends_without_waiting_for_its_computing_process() {
    cancel_every_process(Engine::Hybrid);
}

/// A group of three in which one never joins: the cancelled joiner fails `Cancelled`,
/// the other `PeerLeft`, both long before the join's timeout.
#[test]
fn shm_a_cancelled_join_fails_the_forming_group_at_once() {
    let tokens = [Cancel::new(), Cancel::new()];
    let started = Instant::now();
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2u32)
            .map(|pid| {
                let token = &tokens[pid as usize];
                s.spawn(move || ShmInit::join_cancellable("cancel-join-test", pid, 3, RELEASE, token).map(|_| ()))
            })
            .collect();
        std::thread::sleep(CANCEL_AFTER);
        tokens[0].cancel("the test cancels the join");
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(started.elapsed() < RELEASE / 2, "the joins waited {:?}", started.elapsed());
    let e0 = results[0].as_ref().unwrap_err();
    assert_eq!(e0.reason(), Reason::Cancelled, "{e0}");
    assert!(e0.message().contains("the test cancels the join"), "{e0}");
    let e1 = results[1].as_ref().unwrap_err();
    assert_eq!(e1.reason(), Reason::PeerLeft { pid: Some(0) }, "{e1}");
}

/// A TCP job of three in which pid 2 never comes: pid 1 waits for the roster and pid 0
/// for pid 2; each, cancelled, fails `Cancelled` long before the job's timeout.
#[test]
fn tcp_a_cancelled_join_returns_at_once() {
    let tokens = [Cancel::new(), Cancel::new()];
    let cfg = |port: u16, pid: Pid| {
        TcpConfig::new("127.0.0.1", port, pid, 3).timeout(RELEASE).job("cancel-join-test").cancel(&tokens[pid as usize])
    };
    let master = TcpInit::prepare(cfg(0, 0)).unwrap();
    let port = master.bound_port();
    let results: Vec<(lpf::Result<()>, Duration)> = std::thread::scope(|s| {
        let h0 = s.spawn(move || (master.join().map(drop), Instant::now()));
        let c1 = cfg(port, 1);
        let h1 = s.spawn(move || (TcpInit::new(c1).map(drop), Instant::now()));
        std::thread::sleep(CANCEL_AFTER);
        let mut out = Vec::new();
        for (pid, h) in [(1usize, h1), (0, h0)] {
            let t = Instant::now();
            tokens[pid].cancel("the test cancels the join");
            let (r, at) = h.join().unwrap();
            out.push((r, at.saturating_duration_since(t)));
        }
        out
    });
    for (r, after) in results {
        let e = r.expect_err("a cancelled join succeeded");
        assert_eq!(e.reason(), Reason::Cancelled, "{e}");
        assert!(after < Duration::from_secs(5), "a cancelled join returned {after:?} after the cancel: {e}");
    }
}
