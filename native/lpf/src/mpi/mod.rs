//! The MPI engines (feature `mpi`): LPF processes are the ranks of an MPI
//! communicator, one LPF process per rank.
//!
//! - `mpimsg`: the shared sync phases ([`crate::phases`]) over MPI control messages,
//!   the data of large puts and gets as non-blocking MPI messages;
//! - `mpirma`: the same meta-data exchange and conflict resolution, the data by MPI
//!   one-sided put/get on one window per global slot ([`onesided`], [`rma`]);
//! - `ibverbs` (feature `ibverbs`): the same one-sided engine over RDMA
//!   ([`crate::ibverbs`]), MPI for bootstrap and control messages.
//!
//! ```no_run
//! use lpf::mpi::{MpiEngineKind, MpiInit};
//! use lpf::{Args, Context};
//! // In every rank of `mpirun -n P prog`:
//! let init = MpiInit::world(MpiEngineKind::Msg).unwrap(); // lpf_mpi_initialize_with_mpicomm
//! init.hook(&|ctx: &mut Context, _args: Args| { /* SPMD code */ }, Args::none()).unwrap();
//! drop(init); // lpf_mpi_finalize
//! ```
//!
//! Or `Root::exec` with `LPF_ENGINE=mpimsg|mpirma|ibverbs` in a program started by
//! `mpirun`: see [`exec_from_env`]. See docs/mpi.md for the design and fault behaviour.

mod channel;
pub mod ffi;
mod msg;
mod prof;
pub(crate) mod onesided;
mod rma;

use crate::context::{run_process, Spmd};
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::phases::{barrier, MetaAlgo};
use crate::register::Register;
use crate::types::{Args, Pid, SyncAttr};
use crate::wire::Kind;
use channel::MpiChannel;
use ffi::Comm;
use onesided::OneSidedState;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

pub use ffi::MPI_Comm;

/// Which MPI engine sections run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiEngineKind {
    /// `mpimsg`: data by MPI message passing.
    Msg,
    /// `mpirma`: data by MPI one-sided communication.
    Rma,
    /// `ibverbs`: data by RDMA (needs the `ibverbs` feature and an RDMA device).
    Ibverbs,
}

impl MpiEngineKind {
    pub fn name(self) -> &'static str {
        match self {
            MpiEngineKind::Msg => "mpimsg",
            MpiEngineKind::Rma => "mpirma",
            MpiEngineKind::Ibverbs => "ibverbs",
        }
    }
    pub fn parse(s: &str) -> Option<MpiEngineKind> {
        match s {
            "mpimsg" => Some(MpiEngineKind::Msg),
            "mpirma" => Some(MpiEngineKind::Rma),
            "ibverbs" => Some(MpiEngineKind::Ibverbs),
            _ => None,
        }
    }
    /// `LPF_ENGINE` if it names an MPI engine, else `mpimsg`.
    pub fn from_env() -> MpiEngineKind {
        std::env::var("LPF_ENGINE").ok().and_then(|e| Self::parse(&e)).unwrap_or(MpiEngineKind::Msg)
    }
}

/// What the sections of one init share: the control channel over the init's
/// communicator.
struct Node {
    ch: MpiChannel,
    comm: Comm,
    /// Whether `comm` is ours to free (a duplicate).
    owned: bool,
}

fn lock(m: &Mutex<Node>) -> MutexGuard<'_, Node> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One process's membership of an MPI job (`lpf_init_t` of
/// `lpf_mpi_initialize_with_mpicomm`): usable for any number of [`MpiInit::hook`]
/// calls, collective over its communicator; dropping it is `lpf_mpi_finalize`.
pub struct MpiInit {
    node: Arc<Mutex<Node>>,
    kind: MpiEngineKind,
    rank: usize,
    size: usize,
}

impl MpiInit {
    /// Over `MPI_COMM_WORLD`, initialising MPI first unless the program did (then MPI
    /// is finalised at process exit).
    pub fn world(kind: MpiEngineKind) -> Result<MpiInit> {
        ffi::ensure_initialized()?;
        Self::over(ffi::world(), kind)
    }

    /// Over the processes of `comm` (collective over it; the communicator is
    /// duplicated, so the caller's traffic never mixes with LPF's).
    ///
    /// # Safety
    /// `comm` must be a valid communicator of an initialised MPI, used with
    /// `MPI_THREAD_SERIALIZED` or better if several threads call MPI.
    pub unsafe fn with_comm(comm: MPI_Comm, kind: MpiEngineKind) -> Result<MpiInit> {
        if !ffi::is_active() {
            return Err(Error::fatal("MPI is not initialised (call MPI_Init first) or already finalised"));
        }
        Self::over(Comm(comm), kind)
    }

    fn over(comm: Comm, kind: MpiEngineKind) -> Result<MpiInit> {
        if kind == MpiEngineKind::Ibverbs {
            // Fail before any collective: every rank finds the same (missing) device.
            #[cfg(feature = "ibverbs")]
            crate::ibverbs::probe_device()?;
            #[cfg(not(feature = "ibverbs"))]
            return Err(Error::fatal("LPF_ENGINE=ibverbs: this library was built without the `ibverbs` feature"));
        }
        let comm = ffi::dup(comm)?;
        Self::from_dup(comm, kind)
    }

    fn from_dup(comm: Comm, kind: MpiEngineKind) -> Result<MpiInit> {
        let (rank, size) = ffi::rank_size(comm)?;
        // Pid 0 chooses the random permutation and the meta-data algorithm for all.
        let mut agreed = [0u8; 9];
        if rank == 0 {
            let mut t = [0u8; 8];
            getrandom::fill(&mut t).map_err(|e| Error::fatal(format!("OS random source: {e}")))?;
            agreed[..8].copy_from_slice(&t);
            agreed[8] = match std::env::var("LPF_MPI_META").ok().and_then(|v| MetaAlgo::parse(&v)) {
                Some(MetaAlgo::Direct) => 1,
                Some(MetaAlgo::Bruck) => 2,
                None => 0,
            };
        }
        ffi::bcast(comm, &mut agreed, 0)?;
        let token = u64::from_le_bytes(agreed[..8].try_into().unwrap());
        let meta = match agreed[8] {
            1 => MetaAlgo::Direct,
            2 => MetaAlgo::Bruck,
            _ => MetaAlgo::for_nodes(size),
        };
        let ch = MpiChannel::new(comm, rank, size, token, meta)?;
        Ok(MpiInit { node: Arc::new(Mutex::new(Node { ch, comm, owned: true })), kind, rank, size })
    }

    /// This process's pid (its rank).
    pub fn pid(&self) -> Pid {
        self.rank as Pid
    }

    /// Number of LPF processes (ranks).
    pub fn nprocs(&self) -> Pid {
        self.size as Pid
    }

    pub fn engine_name(&self) -> &'static str {
        self.kind.name()
    }

    /// `lpf_hook`: runs `spmd` as this rank's LPF process, together with every other
    /// rank of the init, which must hook too. Fatal if this process's part failed, in
    /// particular when a peer left while a sync needed it.
    pub fn hook(&self, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        let engine = MpiEngine::open(self.node.clone(), self.kind)?;
        run_process(Box::new(engine), 1, spmd, args)
    }

    /// An init over ranks `0..p` of this one (collective over all of its ranks; the
    /// others get `None`). For running sections on fewer processes than `mpirun` started.
    pub fn split(&self, p: Pid) -> Result<Option<MpiInit>> {
        let comm = lock(&self.node).comm;
        let part = ffi::split(comm, ((self.rank as Pid) < p).then_some(0), self.rank as i32)?;
        match part {
            None => Ok(None),
            Some(c) => Self::from_dup(c, self.kind).map(Some),
        }
    }

    /// Broadcasts `data` from pid 0 to every process of the init (collective; a helper
    /// for launchers that report pid 0's outcome everywhere).
    pub fn broadcast(&self, data: &mut Vec<u8>) -> Result<()> {
        let node = lock(&self.node);
        let mut len = (data.len() as u64).to_le_bytes();
        ffi::bcast(node.comm, &mut len, 0)?;
        data.resize(u64::from_le_bytes(len) as usize, 0);
        ffi::bcast(node.comm, data, 0)
    }

    /// Every process's `mine`, in pid order, on every process (collective; a helper for
    /// tests that check all processes' results together).
    pub fn allgather_bytes(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        ffi::allgather_bytes(lock(&self.node).comm, mine)
    }

    /// A barrier over the init's processes (collective).
    pub fn barrier(&self) -> Result<()> {
        ffi::barrier(lock(&self.node).comm)
    }

    /// The reference for the benchmark: the time, in seconds, of one `MPI_Alltoall`
    /// with `block` bytes to every process (collective). Measured as LPF's supersteps
    /// are: each of `reps` samples times a run of back-to-back calls (as many as fill
    /// about 0.5 ms, the same count on every rank) and takes the mean; the best sample
    /// of the slowest rank is returned. (Timing single calls after a barrier would
    /// mostly measure the skew with which the ranks leave the barrier.)
    pub fn time_alltoall(&self, block: usize, reps: usize) -> Result<f64> {
        let comm = lock(&self.node).comm;
        let send = vec![1u8; block * self.size];
        let mut recv = vec![0u8; block * self.size];
        ffi::alltoall(comm, &send, &mut recv, block)?;
        ffi::barrier(comm)?;
        let t = ffi::wtime();
        ffi::alltoall(comm, &send, &mut recv, block)?;
        let once = (ffi::wtime() - t).max(1e-8);
        let mut calls = ((5e-4 / once).ceil() as u64).clamp(1, 1 << 16).to_le_bytes();
        ffi::bcast(comm, &mut calls, 0)?;
        let calls = u64::from_le_bytes(calls);
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            ffi::barrier(comm)?;
            let t = ffi::wtime();
            for _ in 0..calls {
                ffi::alltoall(comm, &send, &mut recv, block)?;
            }
            best = best.min((ffi::wtime() - t) / calls as f64);
        }
        // Everyone reports the slowest process's best.
        let mut b = best.to_le_bytes().to_vec();
        let mut all = vec![0u8; 8 * self.size];
        ffi::alltoall(comm, &b.repeat(self.size), &mut all, 8)?;
        b.clear();
        Ok(all.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).fold(0.0, f64::max))
    }
}

impl Drop for MpiInit {
    fn drop(&mut self) {
        let mut node = lock(&self.node);
        node.ch.close(Instant::now() + Duration::from_secs(2));
        if node.owned && ffi::is_active() {
            let mut c = node.comm;
            ffi::free(&mut c);
            node.owned = false;
        }
    }
}

/// A process of a section on an MPI engine.
struct MpiEngine {
    node: Arc<Mutex<Node>>,
    kind: MpiEngineKind,
    section: u32,
    step: u64,
    pid: Pid,
    nprocs: Pid,
    /// The section's own communicator: data messages and windows.
    data: Comm,
    tag_ub: i32,
    os: Option<OneSidedState>,
    failure: String,
    /// Whether `finish` told the others this process finished (then `leave` need not).
    finished: bool,
}

impl MpiEngine {
    /// Starts a section on every process of the node (collective).
    fn open(node: Arc<Mutex<Node>>, kind: MpiEngineKind) -> Result<MpiEngine> {
        let (section, data, pid, nprocs) = {
            let mut n = lock(&node);
            let section = n.ch.open_section();
            let data = ffi::dup(n.comm)?;
            (section, data, n.ch.me as Pid, n.ch.n as Pid)
        };
        let os = match kind {
            MpiEngineKind::Msg => None,
            MpiEngineKind::Rma => Some(OneSidedState::new(Box::new(rma::MpiRma::new(data)))),
            #[cfg(feature = "ibverbs")]
            MpiEngineKind::Ibverbs => Some(OneSidedState::new(Box::new(crate::ibverbs::Verbs::connect(data)?))),
            #[cfg(not(feature = "ibverbs"))]
            MpiEngineKind::Ibverbs => return Err(Error::fatal("the ibverbs engine is not built in (feature `ibverbs`)")),
        };
        Ok(MpiEngine { node, kind, section, step: 0, pid, nprocs, data, tag_ub: ffi::tag_ub(data), os, failure: String::new(), finished: false })
    }

    fn fail(&mut self, what: &str, e: Error) -> Error {
        let e = Error::fatal(format!("{what} on process {}: {}", self.pid, e.message()));
        if self.failure.is_empty() {
            self.failure = e.message().to_string();
        }
        e
    }
}

impl Engine for MpiEngine {
    fn name(&self) -> &'static str {
        self.kind.name()
    }
    fn pid(&self) -> Pid {
        self.pid
    }
    fn nprocs(&self) -> Pid {
        self.nprocs
    }

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        self.step += 1;
        let r = {
            let mut node = lock(&self.node);
            match &mut self.os {
                None => msg::sync(&mut node.ch, self.data, self.tag_ub, self.section, self.step, step),
                Some(os) => onesided::sync(&mut node.ch, os, self.section, self.step, step),
            }
        };
        r.map_err(|e| self.fail("sync", e))
    }

    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.step += 1;
        let r = crate::phases::allgather(&mut lock(&self.node).ch, self.section, self.step, mine, mine.len(), all);
        r.map_err(|e| self.fail("sync", e))
    }

    fn activate(&mut self, register: &Register, mine: &[u64], all: &mut [u64]) -> Result<()> {
        if self.os.is_none() {
            return self.allgather(mine, all);
        }
        self.step += 1;
        let r = {
            let mut node = lock(&self.node);
            onesided::activate(&mut node.ch, self.os.as_mut().unwrap(), self.section, self.step, register, mine, all)
        };
        r.map_err(|e| self.fail("sync", e))
    }

    fn fresh(&mut self) -> Result<Box<dyn Engine>> {
        self.step += 1;
        let r = barrier(&mut lock(&self.node).ch, self.section, self.step, Kind::Fresh, None);
        r.map_err(|e| self.fail("rehook", e))?;
        Ok(Box::new(MpiEngine::open(self.node.clone(), self.kind)?))
    }

    fn finish(&mut self) -> Result<()> {
        self.finished = true;
        let r = lock(&self.node).ch.finish(self.section);
        r.map_err(|e| self.fail("the end of the section", e))
    }

    fn leave(&mut self) {
        prof::report(self.pid as usize);
        let mut node = lock(&self.node);
        if !self.finished {
            node.ch.leave(self.section, &self.failure);
        }
        // Collective over the section (every process leaves, in the end): windows.
        if let Some(os) = &mut self.os {
            os.close();
        }
        if ffi::is_active() {
            ffi::free(&mut self.data);
        }
    }
}

/// `exec` from the root with `LPF_ENGINE=mpimsg|mpirma|ibverbs`, in a program started
/// by `mpirun -n P`: every rank calls it (as with `lpfrun`, every process runs the
/// program); pid 0 = rank 0 gets `args.input`/`args.output`, the others run the same
/// SPMD function with no input or output. The init over `MPI_COMM_WORLD` (and MPI
/// itself, unless the program initialised it) is made on the first call and kept.
pub fn exec_from_env(kind: MpiEngineKind, p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let init = world_init(kind)?;
    if p < init.nprocs() {
        return Err(Error::fatal(format!(
            "exec over MPI runs on all {} ranks of the job (asked for {p}); start mpirun with fewer processes",
            init.nprocs()
        )));
    }
    if init.pid() == 0 {
        init.hook(spmd, args)
    } else {
        init.hook(spmd, Args { input: &[], output: &mut [], symbols: args.symbols })
    }
}

/// The init over `MPI_COMM_WORLD` that [`exec_from_env`] uses (made once, kept).
pub fn world_init(kind: MpiEngineKind) -> Result<&'static MpiInit> {
    static INIT: OnceLock<std::result::Result<MpiInit, Error>> = OnceLock::new();
    let init = INIT.get_or_init(|| MpiInit::world(kind));
    let init = init.as_ref().map_err(|e| e.clone())?;
    if init.kind != kind {
        return Err(Error::fatal(format!("this process already runs the {} engine", init.kind.name())));
    }
    Ok(init)
}
