//! `mpirma`'s transport: MPI windows created over the section's communicator at a
//! slot's activation point and freed when the slot is withdrawn (both collective, at
//! points every process is known to reach). A rank holding one LPF process creates one
//! window per global slot; a rank of the hybrid engine holds k LPF processes (threads),
//! each with its own memory for the slot, so there are `kmax` windows per slot (kmax:
//! the most threads any rank has): window t of the slot exposes thread t's memory (an
//! empty area on ranks with fewer threads), and LPF process q = offsets[r] + t is
//! reached through window t at rank r. Each window is in a passive-target epoch
//! (`MPI_Win_lock_all`) for its whole life: a sync issues `MPI_Put`/`MPI_Get` on the
//! windows it touches and completes them with `MPI_Win_flush_all`; the LPF final
//! barrier then tells the targets, which call `MPI_Win_sync`. No fence: a fence is
//! collective over all processes for every window, so it would cost one collective per
//! slot per sync, and a process that left would block it.

use super::ffi::{self, Comm, Win};
use super::onesided::{grown, OneSided, Op, OpKind};
use crate::error::{Error, Result};
use crate::types::Pid;

pub(crate) struct MpiRma {
    comm: Comm,
    /// Rank r holds global pids `offsets[r]..offsets[r + 1]`.
    offsets: Vec<Pid>,
    /// Windows per slot: the most LPF processes any rank holds.
    kmax: usize,
    /// `wins[index][t]`: window t of global slot `index`.
    wins: Vec<Option<Vec<Win>>>,
    /// Exposed but not yet published: (index, thread, area).
    staged: Vec<(usize, usize, *mut u8, usize)>,
    /// Windows written or read in this sync: (index, t).
    touched: Vec<(usize, usize)>,
}

// SAFETY: MPI handles and pointers into registered memory, used only by the thread
// running the section (MPI is initialised for serialized use).
unsafe impl Send for MpiRma {}

impl MpiRma {
    pub fn new(comm: Comm, offsets: Vec<Pid>) -> MpiRma {
        let kmax = offsets.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(1);
        MpiRma { comm, offsets, kmax, wins: Vec::new(), staged: Vec::new(), touched: Vec::new() }
    }

    /// Global pid -> (rank, thread).
    fn locate(&self, pid: usize) -> (usize, usize) {
        let r = self.offsets.partition_point(|&o| o as usize <= pid) - 1;
        (r, pid - self.offsets[r] as usize)
    }

    /// The windows of global slot `index` (none if it is not activated).
    fn wins_of(&self, index: usize) -> &[Win] {
        self.wins.get(index).and_then(Option::as_deref).unwrap_or_default()
    }

    fn win(&self, index: usize, t: usize) -> Result<Win> {
        let w = self.wins_of(index).get(t).copied();
        w.ok_or_else(|| Error::protocol(format!("mpirma: global slot {index} has no window (not activated)")))
    }
}

impl OneSided for MpiRma {
    fn key_words(&self) -> usize {
        0
    }

    fn expose(&mut self, index: usize, t: usize, ptr: *mut u8, size: usize) -> Result<Vec<u64>> {
        self.staged.push((index, t, ptr, size));
        Ok(Vec::new())
    }

    fn publish(&mut self, index: usize, _keys: &[u64]) -> Result<()> {
        // On a single rank every LPF process is local: the sync copies with memcpy and
        // never posts a one-sided operation, so no window is needed (and none is made:
        // some MPI builds cannot create one on a one-rank communicator, e.g. Open MPI
        // 4.1 whose UCX one-sided component lacks a device).
        if self.offsets.len() <= 2 {
            self.staged.retain(|s| s.0 != index);
            *grown(&mut self.wins, index) = Some(Vec::new());
            return Ok(());
        }
        // Window t: thread t's area, or an empty one where this rank has no thread t
        // (every rank creates the same kmax windows, in the same order).
        let mut wins = Vec::with_capacity(self.kmax);
        for t in 0..self.kmax {
            let (ptr, size) = match self.staged.iter().position(|s| s.0 == index && s.1 == t) {
                Some(at) => {
                    let (_, _, ptr, size) = self.staged.remove(at);
                    (ptr, size)
                }
                None => (std::ptr::null_mut(), 0),
            };
            match ffi::win_create(ptr, size, self.comm) {
                Ok(w) => wins.push(w),
                Err(e) => {
                    for mut w in wins {
                        let _ = ffi::win_free(&mut w);
                    }
                    return Err(e);
                }
            }
        }
        *grown(&mut self.wins, index) = Some(wins);
        Ok(())
    }

    fn withdraw(&mut self, index: usize) -> Result<()> {
        if let Some(wins) = self.wins.get_mut(index).and_then(Option::take) {
            for mut w in wins {
                ffi::win_free(&mut w)?;
            }
        }
        Ok(())
    }

    fn post(&mut self, ops: &[Op]) -> Result<()> {
        for op in ops {
            let (rank, t) = self.locate(op.pid);
            let w = self.win(op.index, t)?;
            // `op.local` is a checked piece of local memory that stays valid and untouched
            // until `complete` flushes the window, which the sync calls before returning.
            match op.kind {
                // SAFETY: a put's source, valid and unchanged until the flush (above).
                OpKind::Write => unsafe { ffi::put(op.local, op.len, rank, op.off, w)? },
                // SAFETY: a resolved piece of a get's destination, valid and untouched by
                // others until the flush (above).
                OpKind::Read => unsafe { ffi::get(op.local, op.len, rank, op.off, w)? },
            }
            if !self.touched.contains(&(op.index, t)) {
                self.touched.push((op.index, t));
            }
        }
        Ok(())
    }

    fn complete(&mut self, _posted: usize) -> Result<()> {
        for (index, t) in std::mem::take(&mut self.touched) {
            ffi::win_flush_all(self.win(index, t)?)?;
        }
        Ok(())
    }

    fn arrived(&mut self, index: usize) -> Result<()> {
        for &w in self.wins_of(index) {
            ffi::win_sync(w)?;
        }
        Ok(())
    }

    fn close(&mut self) {
        for index in 0..self.wins.len() {
            if let Err(e) = self.withdraw(index) {
                eprintln!("lpf: {e}");
            }
        }
        self.staged.clear();
    }
}
