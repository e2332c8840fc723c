//! The network between the OS processes of a job (the TCP mesh, MPI), one section of
//! it behind [`Network`], and the engine of one LPF process per OS process over any
//! network, [`NetEngine`] (the `tcp`, `mpimsg`, `mpirma` and `ibverbs` engines). The
//! hybrid engine ([`crate::hybrid`]) composes the same networks with shared memory.

use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::register::Register;
use crate::types::{Pid, SyncAttr};

/// One section of the network between the OS processes of a job, as the LPF
/// process(es) of one OS process use it: [`NetEngine`]'s one process, or the group of
/// threads of a hybrid engine's OS process, where only one thread calls it at a time
/// (thread 0 inside a collective operation, or the first thread to leave). `step` numbers the
/// collective operations of the section, the same on every OS process.
pub(crate) trait Network: Send {
    /// Which global pids each OS process holds: `offsets()[i]..offsets()[i + 1]`.
    fn offsets(&self) -> &[Pid];
    /// This OS process's index.
    fn me(&self) -> usize;
    /// The sync of this OS process's LPF processes `steps` (global pids
    /// `offsets()[me()]..`), with everyone else's.
    fn sync(&mut self, step: u64, steps: &[&Superstep<'_>]) -> Result<()>;
    /// Allgather: `mine` holds `len` values per LPF process of this OS process; process
    /// q's land at `all[q * len..][..len]`.
    fn allgather(&mut self, step: u64, mine: &[u64], len: usize, all: &mut [u64]) -> Result<()>;
    /// The activation point of the global slots registered in this superstep (see
    /// [`Engine::activate`]), with the register of each LPF process of this OS process.
    fn activate(&mut self, step: u64, registers: &[&Register], mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
        let _ = registers;
        self.allgather(step, mine, len, all)
    }
    /// `rehook`: a barrier over the section, then the next section (the same on every
    /// OS process, which all get here).
    fn fresh(&mut self, step: u64) -> Result<Box<dyn Network>>;
    /// Whether the end of a section needs [`Network::finish`]: networks whose syncs do
    /// not fail everywhere together (MPI) learn there of a failure after a sync.
    fn needs_finish(&self) -> bool {
        false
    }
    /// Every thread of the group returned from its SPMD function without failing (see
    /// [`Engine::finish`]): waits for the other OS processes, fails if one failed.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    /// This OS process's group leaves the section: the others are told `why`.
    fn leave(&mut self, why: &str);
}


/// A section on one LPF process per OS process over a network: the step counter,
/// the error every failed operation returns (naming the operation and the process),
/// and the reason this process gives the others when it leaves (its first error).
pub(crate) struct NetEngine {
    net: Box<dyn Network>,
    name: &'static str,
    /// The last collective operation of the section (the same count everywhere).
    step: u64,
    pid: Pid,
    nprocs: Pid,
    failure: String,
}

impl NetEngine {
    /// The engine `name` (as `LPF_ENGINE` spells it) over a section of a network whose
    /// OS processes hold one LPF process each.
    pub fn new(net: Box<dyn Network>, name: &'static str) -> NetEngine {
        let offsets = net.offsets();
        let (pid, nprocs) = (offsets[net.me()], offsets[offsets.len() - 1]);
        debug_assert_eq!(offsets[net.me() + 1], pid + 1, "NetEngine runs one LPF process per OS process");
        NetEngine { net, name, step: 0, pid, nprocs, failure: String::new() }
    }

    /// The error of operation `what` on this process, kept as the reason to leave if
    /// it is the first.
    fn fail(&mut self, what: &str, e: Error) -> Error {
        let e = Error::fatal(format!("{what} on process {}: {}", self.pid, e.message()));
        if self.failure.is_empty() {
            self.failure = e.message().to_string();
        }
        e
    }
}

impl Engine for NetEngine {
    fn name(&self) -> &'static str {
        self.name
    }
    fn pid(&self) -> Pid {
        self.pid
    }
    fn nprocs(&self) -> Pid {
        self.nprocs
    }

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        self.step += 1;
        let r = self.net.sync(self.step, &[step]);
        r.map_err(|e| self.fail("sync", e))
    }

    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.step += 1;
        let r = self.net.allgather(self.step, mine, mine.len(), all);
        r.map_err(|e| self.fail("sync", e))
    }

    fn activate(&mut self, register: &Register, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.step += 1;
        let r = self.net.activate(self.step, &[register], mine, mine.len(), all);
        r.map_err(|e| self.fail("sync", e))
    }

    fn fresh(&mut self) -> Result<Box<dyn Engine>> {
        self.step += 1;
        let r = self.net.fresh(self.step);
        let net = r.map_err(|e| self.fail("rehook", e))?;
        Ok(Box::new(NetEngine::new(net, self.name)))
    }

    /// A process that returned while others still sync (or rehook) must fail as they
    /// do, and on networks whose syncs do not agree on errors, a process must learn
    /// here that a peer failed: [`Network::finish`].
    fn finish(&mut self) -> Result<()> {
        if !self.net.needs_finish() {
            return Ok(());
        }
        let r = self.net.finish();
        r.map_err(|e| self.fail("the end of the section", e))
    }

    fn leave(&mut self) {
        self.net.leave(&self.failure);
    }
}
