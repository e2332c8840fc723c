//! A latency-tuned barrier that processes may leave for good.
//!
//! The whole state is one 64-bit word, changed only by compare-and-swap:
//! `generation:31 | broken:1 | departed:16 | arrived:16`. A barrier episode completes
//! when every process has either arrived or departed; it completes *broken* when any
//! process has departed, which is how an unmatched sync or an early return of one
//! process turns into a fatal error everywhere instead of a deadlock. The broken bit is
//! written by whoever completes the episode and kept until the next one completes, so
//! every waiter reads the same outcome even if a peer departs right after.
//!
//! Waiting follows the library's wait policy ([`crate::wait`]): spin (a 2-process sync
//! on idle cores completes in well under a microsecond), then yield, then sleep on a
//! condition variable, so that an oversubscribed run (more processes than cores) or a
//! busy host does not burn the CPU it waits for. A waiter whose cancel token is set
//! takes its arrival back and departs instead ([`Outcome::Cancelled`]).

use crate::error::{Error, Result};
use crate::types::Pid;
use crate::wait::{Cancel, Patience, Pause};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Condvar, Mutex};

use crate::types::MAX_PROCS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    /// Some process has departed: the episode completed without it.
    Broken,
    /// The waiter's cancel token was set before the episode completed: its arrival was
    /// taken back and it has departed (the episode completes broken for the others).
    Cancelled,
}

pub struct Barrier {
    nprocs: u32,
    state: CachePadded<AtomicU64>,
    sleepers: CachePadded<AtomicU32>,
    lock: Mutex<()>,
    wake: Condvar,
}

#[derive(Clone, Copy)]
struct Word {
    generation: u32,
    broken: bool,
    departed: u32,
    arrived: u32,
}

impl Word {
    fn unpack(w: u64) -> Word {
        Word {
            generation: (w >> 33) as u32,
            broken: (w >> 32) & 1 == 1,
            departed: ((w >> 16) & 0xffff) as u32,
            arrived: (w & 0xffff) as u32,
        }
    }
    fn pack(self) -> u64 {
        (((self.generation & 0x7fff_ffff) as u64) << 33)
            | ((self.broken as u64) << 32)
            | ((self.departed as u64) << 16)
            | self.arrived as u64
    }
    /// The word after the episode completes.
    fn completed(self) -> Word {
        Word { generation: self.generation.wrapping_add(1), broken: self.departed > 0, departed: self.departed, arrived: 0 }
    }
}

impl Barrier {
    pub fn new(nprocs: u32) -> Barrier {
        assert!((1..=MAX_PROCS).contains(&nprocs), "barrier for {nprocs} processes");
        Barrier {
            nprocs,
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: CachePadded::new(AtomicU32::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// [`Barrier::wait_or_cancel`] in a collective operation of LPF process `pid`: an
    /// error when a peer left (the barrier counts departures, not who departed), or
    /// when `cancel` was set while waiting; then this process has departed, and
    /// `departed` says so (so that it does not depart twice).
    pub(crate) fn wait_for_peers(&self, pid: Pid, patience: &mut Patience, cancel: &Cancel, departed: &mut bool) -> Result<()> {
        match self.wait_or_cancel(patience, cancel) {
            Outcome::Complete => Ok(()),
            Outcome::Broken => Err(Error::peer_left(None, format!(
                "sync on process {pid}: a peer has left the section (returned from its SPMD function, failed, or \
                 called sync a different number of times)"
            ))),
            Outcome::Cancelled => {
                *departed = true;
                Err(cancel.check().expect_err("a cancelled wait has its token set").context(format_args!("sync on process {pid}")))
            }
        }
    }

    /// Arrives and waits until every process has arrived or departed.
    pub fn wait(&self, patience: &mut Patience) -> Outcome {
        self.wait_or_cancel(patience, &Cancel::NEVER)
    }

    /// [`Barrier::wait`], or [`Outcome::Cancelled`] (this process departed) when
    /// `cancel` is set before the episode completes.
    pub fn wait_or_cancel(&self, patience: &mut Patience, cancel: &Cancel) -> Outcome {
        let mut cur = self.state.load(Acquire);
        loop {
            let w = Word::unpack(cur);
            let next = if w.arrived + 1 + w.departed >= self.nprocs {
                w.completed()
            } else {
                Word { arrived: w.arrived + 1, ..w }
            };
            match self.state.compare_exchange_weak(cur, next.pack(), AcqRel, Acquire) {
                Ok(_) if next.generation != w.generation => {
                    self.wake_sleepers();
                    return outcome(next);
                }
                Ok(_) => return self.wait_for_generation_after(w.generation, patience, cancel),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Leaves for good: every current and future episode completes (broken) without
    /// this process.
    pub fn depart(&self) {
        let mut cur = self.state.load(Acquire);
        loop {
            let w = Word::unpack(cur);
            let w = Word { departed: w.departed + 1, ..w };
            let next = if w.arrived > 0 && w.arrived + w.departed >= self.nprocs { w.completed() } else { w };
            match self.state.compare_exchange_weak(cur, next.pack(), AcqRel, Acquire) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        self.wake_sleepers();
    }

    fn wake_sleepers(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            let _guard = crate::lock::relock(&self.lock);
            self.wake.notify_all();
        }
    }

    fn wait_for_generation_after(&self, generation: u32, patience: &mut Patience, cancel: &Cancel) -> Outcome {
        let done = |w: u64| {
            let w = Word::unpack(w);
            (w.generation != generation).then(|| outcome(w))
        };
        let mut wait = patience.start();
        loop {
            if let Some(o) = done(self.state.load(Acquire)) {
                patience.end(wait);
                return o;
            }
            match patience.pause(&mut wait, cancel) {
                Ok(Pause::Spin) => std::hint::spin_loop(),
                Ok(Pause::Yield) => std::thread::yield_now(),
                Ok(Pause::Block(slice)) => {
                    if let Some(o) = self.sleep(slice, &done) {
                        patience.end(wait);
                        return o;
                    }
                }
                Err(_) => return self.withdraw(generation),
            }
        }
    }

    /// Sleeps until woken or `slice` passed; the outcome if the episode completed.
    fn sleep(&self, slice: std::time::Duration, done: &impl Fn(u64) -> Option<Outcome>) -> Option<Outcome> {
        let guard = crate::lock::relock(&self.lock);
        self.sleepers.fetch_add(1, SeqCst);
        // The SeqCst pair (sleepers then state here, state then sleepers in the waker)
        // rules out a lost wake-up; the slice bounds the sleep for the cancel token.
        let o = done(self.state.load(SeqCst));
        if o.is_none() {
            drop(self.wake.wait_timeout(guard, slice).unwrap_or_else(|e| e.into_inner()));
        }
        self.sleepers.fetch_sub(1, SeqCst);
        o.or_else(|| done(self.state.load(Acquire)))
    }

    /// A cancelled waiter of episode `generation` takes its arrival back and departs.
    /// If the episode completed meanwhile, it completed with this process (the others
    /// may be reading what it published): its outcome stands, and the cancellation is
    /// seen at the next wait or sync.
    fn withdraw(&self, generation: u32) -> Outcome {
        let mut cur = self.state.load(Acquire);
        loop {
            let w = Word::unpack(cur);
            if w.generation != generation {
                return outcome(w);
            }
            // Arrived + departed stays the same, so the episode is as far from complete
            // as before: the processes still to come complete it (broken).
            let next = Word { arrived: w.arrived - 1, departed: w.departed + 1, ..w };
            match self.state.compare_exchange_weak(cur, next.pack(), AcqRel, Acquire) {
                Ok(_) => return Outcome::Cancelled,
                Err(actual) => cur = actual,
            }
        }
    }
}

fn outcome(w: Word) -> Outcome {
    if w.broken {
        Outcome::Broken
    } else {
        Outcome::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::LookCost;
    use std::sync::Arc;
    use std::time::Duration;

    fn patience(p: u32) -> Patience {
        Patience::new(LookCost::SHARED_MEMORY, None, p as usize, crate::wait::cores())
    }

    #[test]
    fn all_arrive_many_times() {
        for p in [1u32, 2, 3, 8] {
            let b = Arc::new(Barrier::new(p));
            let counter = Arc::new(AtomicU32::new(0));
            std::thread::scope(|s| {
                for _ in 0..p {
                    let (b, counter) = (b.clone(), counter.clone());
                    s.spawn(move || {
                        let mut pat = patience(p);
                        for round in 0..200u32 {
                            counter.fetch_add(1, SeqCst);
                            assert_eq!(b.wait(&mut pat), Outcome::Complete);
                            assert!(counter.load(SeqCst) >= (round + 1) * p);
                            assert_eq!(b.wait(&mut pat), Outcome::Complete);
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn departure_breaks_current_and_later_episodes() {
        let b = Arc::new(Barrier::new(3));
        std::thread::scope(|s| {
            let b1 = b.clone();
            let waiter = s.spawn(move || (b1.wait(&mut patience(3)), b1.wait(&mut patience(3))));
            let b2 = b.clone();
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                b2.depart();
            });
            // The third process arrives once, then departs while the other waits again.
            assert_eq!(b.wait(&mut patience(3)), Outcome::Broken);
            b.depart();
            assert_eq!(waiter.join().unwrap(), (Outcome::Broken, Outcome::Broken));
        });
    }

    #[test]
    fn a_cancelled_waiter_departs_and_the_others_complete_broken() {
        let b = Arc::new(Barrier::new(3));
        let cancel = Cancel::new();
        std::thread::scope(|s| {
            let (b1, c1) = (b.clone(), cancel.clone());
            let cancelled = s.spawn(move || b1.wait_or_cancel(&mut patience(3), &c1));
            let b2 = b.clone();
            let other = s.spawn(move || b2.wait(&mut patience(3)));
            std::thread::sleep(Duration::from_millis(100));
            cancel.cancel("test");
            // Its arrival taken back: the third process's arrival completes the
            // episode, broken.
            assert_eq!(cancelled.join().unwrap(), Outcome::Cancelled);
            assert_eq!(b.wait(&mut patience(3)), Outcome::Broken);
            assert_eq!(other.join().unwrap(), Outcome::Broken);
            // Later episodes complete without it, broken.
            let b3 = b.clone();
            let again = s.spawn(move || b3.wait(&mut patience(3)));
            assert_eq!(b.wait(&mut patience(3)), Outcome::Broken);
            assert_eq!(again.join().unwrap(), Outcome::Broken);
        });
    }
}
