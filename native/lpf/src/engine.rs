//! The interface every engine implements: one implementation per engine, the rest of
//! the library (validation, registers, queues, collectives) shared.

use crate::error::Result;
use crate::queue::MessageQueue;
use crate::register::Register;
use crate::types::{Pid, SyncAttr};
use crate::wait::Cancel;

/// What an engine sees of one process at the fence: its register and its queue,
/// already grouped by peer. Both stay unchanged until the engine's `sync` returns.
pub struct Superstep<'a> {
    pub register: &'a Register,
    pub queue: &'a MessageQueue,
}

/// One process's side of a running SPMD section on some engine.
pub trait Engine: Send {
    /// The engine's name, as `LPF_ENGINE` spells it and probe tables are keyed.
    fn name(&self) -> &'static str;
    fn pid(&self) -> Pid;
    fn nprocs(&self) -> Pid;
    /// Which processes share memory: contiguous pid ranges ("nodes"), in pid order,
    /// covering `0..nprocs()`, the same on every process. Collectives use it to move
    /// data within a node before moving it between nodes. The default, every process
    /// alone, is right for engines whose processes share nothing (TCP, MPI with one
    /// rank per process); an engine whose processes share memory overrides it.
    fn nodes(&self) -> Vec<std::ops::Range<Pid>> {
        (0..self.nprocs()).map(|q| q..q + 1).collect()
    }
    /// The token that cancels this process: once set, its waits fail
    /// ([`crate::Reason::Cancelled`]) and so does every sync from its start. Nested
    /// sections (`exec` from inside) carry it too.
    fn cancel(&self) -> &Cancel;
    /// Carries out every request of the superstep (the fence). The puts and gets of all
    /// processes are complete when this returns `Ok` on any process. A process that has
    /// left makes every later call fail with a fatal error instead of waiting for it.
    fn sync(&mut self, step: &Superstep<'_>, attr: SyncAttr) -> Result<()>;
    /// Collective: `all[q * mine.len()..][..mine.len()]` receives process q's `mine`
    /// (every process passes the same length). The context calls it at the start of a
    /// sync in which global slots were registered, to learn every process's sizes of
    /// them, so that puts and gets check remote bounds when they are called. Fails like
    /// `sync` when a process has left.
    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()>;
    /// The activation point of the global slots registered in this superstep: what the
    /// context calls (instead of [`Engine::allgather`]) at the start of such a sync,
    /// with the register, so that engines with remote memory access can expose the new
    /// slots and exchange their keys in the same collective. The default is the
    /// allgather of the sizes.
    fn activate(&mut self, register: &Register, mine: &[u64], all: &mut [u64]) -> Result<()> {
        let _ = register;
        self.allgather(mine, all)
    }
    /// Collective: an engine over the same processes, sharing no state with this one
    /// (for `rehook`). Fails if a process of this one has left.
    fn fresh(&mut self) -> Result<Box<dyn Engine>>;
    /// This process stops taking part: from now on peers' syncs fail rather than wait
    /// for it. Called exactly once, when the SPMD function returns or the process fails
    /// (after [`Engine::finish`] if that was called).
    fn leave(&mut self);
    /// The SPMD function returned and this process did not fail: on engines whose
    /// syncs do not agree on errors (a destination that rejects a request fails, its
    /// origins' syncs return `Ok`, and they learn of it at their next sync), waits
    /// until every process has finished and fails if one of them failed, so that the
    /// hook or exec reports a failed section on every process. Engines whose syncs fail
    /// everywhere together need nothing here.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
