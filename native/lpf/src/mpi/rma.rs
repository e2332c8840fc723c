//! `mpirma`'s transport: one MPI window per global slot, created over the section's
//! communicator at the slot's activation point and freed when the slot is withdrawn
//! (both collective, at points every process is known to reach). Each window is in a
//! passive-target epoch (`MPI_Win_lock_all`) for its whole life: a sync issues
//! `MPI_Put`/`MPI_Get` on the windows it touches and completes them with
//! `MPI_Win_flush_all`; the LPF final barrier then tells the targets, which call
//! `MPI_Win_sync`. No fence: a fence is collective over all processes for every window,
//! so it would cost one collective per slot per sync, and a process that left would
//! block it.

use super::ffi::{self, Comm, Win};
use super::onesided::{OneSided, Op, OpKind};
use crate::error::{Error, Result};

pub(crate) struct MpiRma {
    comm: Comm,
    wins: Vec<Option<Win>>,
    staged: Vec<(usize, *mut u8, usize)>,
    touched: Vec<usize>,
}

// SAFETY: MPI handles and pointers into registered memory, used only by the thread
// running the section (MPI is initialised for serialized use).
unsafe impl Send for MpiRma {}

impl MpiRma {
    pub fn new(comm: Comm) -> MpiRma {
        MpiRma { comm, wins: Vec::new(), staged: Vec::new(), touched: Vec::new() }
    }

    fn win(&self, index: usize) -> Result<Win> {
        self.wins
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| Error::fatal(format!("mpirma: global slot {index} has no window (not activated)")))
    }
}

impl OneSided for MpiRma {
    fn key_words(&self) -> usize {
        0
    }

    fn expose(&mut self, index: usize, ptr: *mut u8, size: usize) -> Result<Vec<u64>> {
        self.staged.push((index, ptr, size));
        Ok(Vec::new())
    }

    fn publish(&mut self, index: usize, _keys: &[u64]) -> Result<()> {
        let at = self.staged.iter().position(|s| s.0 == index).ok_or_else(|| Error::fatal("mpirma: slot not staged"))?;
        let (_, ptr, size) = self.staged.remove(at);
        let w = ffi::win_create(ptr, size, self.comm)?;
        if self.wins.len() <= index {
            self.wins.resize(index + 1, None);
        }
        self.wins[index] = Some(w);
        Ok(())
    }

    fn withdraw(&mut self, index: usize) -> Result<()> {
        if let Some(mut w) = self.wins.get_mut(index).and_then(Option::take) {
            ffi::win_free(&mut w)?;
        }
        Ok(())
    }

    fn post(&mut self, ops: &[Op]) -> Result<()> {
        for op in ops {
            let w = self.win(op.index)?;
            // SAFETY: `op.local` is a checked piece of local memory (a put source or a
            // resolved piece of a get destination) that stays valid and untouched until
            // `complete` returns, which the sync calls before returning.
            match op.kind {
                OpKind::Write => unsafe { ffi::put(op.local, op.len, op.pid, op.off, w)? },
                OpKind::Read => unsafe { ffi::get(op.local, op.len, op.pid, op.off, w)? },
            }
            if !self.touched.contains(&op.index) {
                self.touched.push(op.index);
            }
        }
        Ok(())
    }

    fn complete(&mut self, _posted: usize) -> Result<()> {
        for index in std::mem::take(&mut self.touched) {
            ffi::win_flush_all(self.win(index)?)?;
        }
        Ok(())
    }

    fn arrived(&mut self, index: usize) -> Result<()> {
        match self.wins.get(index).copied().flatten() {
            Some(w) => ffi::win_sync(w),
            None => Ok(()),
        }
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
