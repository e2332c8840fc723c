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
//! Waiting spins first (a 2-process sync on idle cores completes in well under a
//! microsecond), then yields, then sleeps on a condition variable so that an
//! oversubscribed run (more processes than cores) does not burn the CPU it waits for.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub const MAX_PROCS: u32 = 0xffff;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    /// Some process has departed: the episode completed without it.
    Broken,
}

pub struct Barrier {
    nprocs: u32,
    state: CachePadded<AtomicU64>,
    sleepers: CachePadded<AtomicU32>,
    lock: Mutex<()>,
    wake: Condvar,
    spin_limit: u32,
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
        let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
        Barrier {
            nprocs,
            state: CachePadded::new(AtomicU64::new(0)),
            sleepers: CachePadded::new(AtomicU32::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            // Spinning only pays when every process can have a core of its own.
            spin_limit: if nprocs <= cores { 1 << 14 } else { 0 },
        }
    }

    /// [`Barrier::wait`] in a collective operation of LPF process `pid`: an error when
    /// a peer left (the barrier counts departures, not who departed).
    pub(crate) fn wait_for_peers(&self, pid: crate::types::Pid) -> crate::error::Result<()> {
        if self.wait() == Outcome::Broken {
            return Err(crate::error::Error::peer_left(None, format!(
                "sync on process {pid}: a peer has left the section (returned from its SPMD function, failed, or \
                 called sync a different number of times)"
            )));
        }
        Ok(())
    }

    /// Arrives and waits until every process has arrived or departed.
    pub fn wait(&self) -> Outcome {
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
                Ok(_) => return self.wait_for_generation_after(w.generation),
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
            let _guard = crate::relock(&self.lock);
            self.wake.notify_all();
        }
    }

    fn wait_for_generation_after(&self, generation: u32) -> Outcome {
        let done = |w: u64| {
            let w = Word::unpack(w);
            (w.generation != generation).then(|| outcome(w))
        };
        for _ in 0..self.spin_limit {
            if let Some(o) = done(self.state.load(Acquire)) {
                return o;
            }
            std::hint::spin_loop();
        }
        for _ in 0..64 {
            if let Some(o) = done(self.state.load(Acquire)) {
                return o;
            }
            std::thread::yield_now();
        }
        let mut guard = crate::relock(&self.lock);
        self.sleepers.fetch_add(1, SeqCst);
        let o = loop {
            if let Some(o) = done(self.state.load(SeqCst)) {
                break o;
            }
            // The timeout only guards against a lost wake-up; the SeqCst pair
            // (sleepers then state here, state then sleepers in the waker) rules it out.
            guard = self.wake.wait_timeout(guard, Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
        };
        self.sleepers.fetch_sub(1, SeqCst);
        o
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
    use std::sync::Arc;

    #[test]
    fn all_arrive_many_times() {
        for p in [1u32, 2, 3, 8] {
            let b = Arc::new(Barrier::new(p));
            let counter = Arc::new(AtomicU32::new(0));
            std::thread::scope(|s| {
                for _ in 0..p {
                    let (b, counter) = (b.clone(), counter.clone());
                    s.spawn(move || {
                        for round in 0..200u32 {
                            counter.fetch_add(1, SeqCst);
                            assert_eq!(b.wait(), Outcome::Complete);
                            assert!(counter.load(SeqCst) >= (round + 1) * p);
                            assert_eq!(b.wait(), Outcome::Complete);
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
            let waiter = s.spawn(move || (b1.wait(), b1.wait()));
            let b2 = b.clone();
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                b2.depart();
            });
            // The third process arrives once, then departs while the other waits again.
            assert_eq!(b.wait(), Outcome::Broken);
            b.depart();
            assert_eq!(waiter.join().unwrap(), (Outcome::Broken, Outcome::Broken));
        });
    }
}
