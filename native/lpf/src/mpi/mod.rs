//! The MPI engines (feature `mpi`): LPF processes are the ranks of an MPI
//! communicator, one LPF process per rank.
//!
//! - `mpimsg`: the shared sync phases ([`crate::phases`]) over MPI control messages,
//!   the data of large puts and gets as non-blocking MPI messages;
//! - `mpirma`: the same meta-data exchange and conflict resolution, the data by MPI
//!   one-sided put/get on one window per global slot ([`onesided`], [`rma`]);
//! - `ibverbs` (feature `ibverbs`): the same one-sided engine over RDMA
//!   (`ibverbs.rs`), MPI for bootstrap and control messages.
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
//!
//! Ranks may also bring several LPF processes each (threads): the hybrid engine
//! ([`crate::hybrid`]) with `mpimsg` or `mpirma` between the ranks
//! ([`MpiInit::world_hybrid`], or `LPF_ENGINE=hybrid LPF_HYBRID_NET=mpimsg|mpirma
//! LPF_THREADS=k`, see [`engine_from_env`]).

mod channel;
#[cfg(feature = "ibverbs")]
mod ibverbs;
pub(crate) mod ffi;
mod msg;
mod prof;
pub(crate) mod onesided;
mod rma;

use crate::config::{Config, EngineKind};
use crate::context::Spmd;
use crate::engine::Superstep;
use crate::network::Network;
use crate::error::{Error, Result};
use crate::phases::driver::SyncId;
use crate::lock::relock;
use crate::phases::{barrier, Layout, MetaAlgo};
use crate::register::Register;
use crate::types::{Args, Pid};
use crate::wait::{Cancel, Host};
use crate::wire::Kind;
use channel::MpiChannel;
use ffi::Comm;
use onesided::OneSidedState;
use std::sync::{Arc, Mutex, OnceLock};
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
    /// Its entry in the engine registry.
    pub const fn engine(self) -> EngineKind {
        match self {
            MpiEngineKind::Msg => EngineKind::MpiMsg,
            MpiEngineKind::Rma => EngineKind::MpiRma,
            MpiEngineKind::Ibverbs => EngineKind::Ibverbs,
        }
    }
    /// The MPI engine `engine` is, if it is one.
    pub const fn of(engine: EngineKind) -> Option<MpiEngineKind> {
        match engine {
            EngineKind::MpiMsg => Some(MpiEngineKind::Msg),
            EngineKind::MpiRma => Some(MpiEngineKind::Rma),
            EngineKind::Ibverbs => Some(MpiEngineKind::Ibverbs),
            _ => None,
        }
    }
    pub const fn name(self) -> &'static str {
        self.engine().name()
    }
    pub fn parse(s: &str) -> Option<MpiEngineKind> {
        EngineKind::from_name(s).and_then(Self::of)
    }
}

/// What the environment asks of an MPI init: the engine between ranks and, for the
/// hybrid engine, the LPF processes (threads) this rank brings.
///
/// - `LPF_ENGINE=mpimsg|mpirma|ibverbs`: that engine, one LPF process per rank (None);
/// - `LPF_ENGINE=hybrid`: the hybrid engine over `LPF_HYBRID_NET` (`mpimsg`, the
///   default, or `mpirma`) with `LPF_THREADS` threads on this rank (default 1; ranks
///   may differ);
/// - anything else: `mpimsg`, one LPF process per rank.
pub fn engine_from_env() -> Result<(MpiEngineKind, Option<Pid>)> {
    let c = Config::from_env()?;
    if c.engine != EngineKind::Hybrid {
        return Ok((MpiEngineKind::of(c.engine).unwrap_or(MpiEngineKind::Msg), None));
    }
    let kind = match c.hybrid_net {
        None | Some(EngineKind::MpiMsg) => MpiEngineKind::Msg,
        Some(EngineKind::MpiRma) => MpiEngineKind::Rma,
        Some(_) => {
            return Err(Error::config(
                "LPF_ENGINE=hybrid over MPI: LPF_HYBRID_NET=tcp names no MPI engine the hybrid engine runs over \
                 (mpimsg or mpirma)",
            ))
        }
    };
    Ok((kind, Some(c.threads.unwrap_or(1))))
}

/// What pid 0 of an init chooses for every rank: the random token, the meta-data
/// algorithm (`LPF_MPI_META`; None: by the number of ranks) and the test switches
/// (whether syncs agree on errors, docs/mpi.md "Errors"; the chunk size of long
/// control messages).
#[derive(Debug, PartialEq)]
struct Agreed {
    token: u64,
    meta: Option<MetaAlgo>,
    agree_errors: bool,
    body_chunk: Option<usize>,
}

impl Agreed {
    const BYTES: usize = 18;

    fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[..8].copy_from_slice(&self.token.to_le_bytes());
        b[8] = MetaAlgo::to_byte(self.meta);
        b[9] = self.agree_errors as u8;
        b[10..].copy_from_slice(&(self.body_chunk.unwrap_or(0) as u64).to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8; Self::BYTES]) -> Agreed {
        let word = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
        Agreed {
            token: word(0..8),
            meta: MetaAlgo::from_byte(b[8]),
            agree_errors: b[9] != 0,
            body_chunk: Some(word(10..18) as usize).filter(|&c| c > 0),
        }
    }
}

/// What the sections of one init share: the control channel over the init's
/// communicator (a duplicate, ours to free).
struct Node {
    ch: MpiChannel,
    comm: Comm,
}

/// One process's membership of an MPI job (`lpf_init_t` of
/// `lpf_mpi_initialize_with_mpicomm`): usable for any number of [`MpiInit::hook`]
/// calls, collective over its communicator; dropping it is `lpf_mpi_finalize`.
pub struct MpiInit {
    node: Arc<Mutex<Node>>,
    kind: MpiEngineKind,
    rank: usize,
    size: usize,
    /// Sections run on the hybrid engine (threads in ranks).
    hybrid: bool,
    /// Rank r holds global pids `offsets[r]..offsets[r + 1]` (one each unless hybrid).
    offsets: Vec<Pid>,
}

impl MpiInit {
    /// Over `MPI_COMM_WORLD`, initialising MPI first unless the program did (then MPI
    /// is finalised at process exit).
    pub fn world(kind: MpiEngineKind) -> Result<MpiInit> {
        Self::over_world(kind, None)
    }

    /// Over `MPI_COMM_WORLD` on the hybrid engine: this rank brings `threads` LPF
    /// processes (shared memory among them, `kind` - `mpimsg` or `mpirma` - between the
    /// ranks); other ranks may bring other counts (collective: the counts are
    /// gathered). Global pids number the ranks' threads in rank order.
    pub fn world_hybrid(kind: MpiEngineKind, threads: Pid) -> Result<MpiInit> {
        Self::over_world(kind, Some(threads))
    }

    /// [`MpiInit::world`] or [`MpiInit::world_hybrid`], as [`engine_from_env`] says.
    pub fn world_from_env() -> Result<MpiInit> {
        let (kind, threads) = engine_from_env()?;
        Self::over_world(kind, threads)
    }

    /// Over `MPI_COMM_WORLD`, with `threads` LPF processes on this rank if hybrid,
    /// initialising MPI first unless the program did.
    fn over_world(kind: MpiEngineKind, threads: Option<Pid>) -> Result<MpiInit> {
        ffi::ensure_initialized(threads)?;
        Self::over(ffi::world(), kind, threads)
    }

    /// Over the processes of `comm` (collective over it; the communicator is
    /// duplicated, so the caller's traffic never mixes with LPF's).
    ///
    /// # Safety
    /// `comm` must be a valid communicator of an initialised MPI, used with
    /// `MPI_THREAD_SERIALIZED` or better if several threads call MPI.
    pub unsafe fn with_comm(comm: MPI_Comm, kind: MpiEngineKind) -> Result<MpiInit> {
        Self::with_comm_threads(comm, kind, None)
    }

    /// [`MpiInit::with_comm`] on the hybrid engine: this rank brings `threads` LPF
    /// processes (see [`MpiInit::world_hybrid`]). Several threads call MPI (one at a
    /// time): MPI must be initialised with `MPI_THREAD_SERIALIZED` or better when any
    /// rank brings more than one.
    ///
    /// # Safety
    /// As [`MpiInit::with_comm`].
    pub unsafe fn with_comm_hybrid(comm: MPI_Comm, kind: MpiEngineKind, threads: Pid) -> Result<MpiInit> {
        Self::with_comm_threads(comm, kind, Some(threads))
    }

    /// [`MpiInit::with_comm`] or [`MpiInit::with_comm_hybrid`] (`threads` Some).
    ///
    /// # Safety
    /// As [`MpiInit::with_comm`].
    pub unsafe fn with_comm_threads(comm: MPI_Comm, kind: MpiEngineKind, threads: Option<Pid>) -> Result<MpiInit> {
        if !ffi::is_active() {
            return Err(Error::misuse("lpf_mpi_initialize_with_mpicomm", "MPI is not initialised (call MPI_Init first) or already finalised"));
        }
        Self::over(Comm(comm), kind, threads)
    }

    fn over(comm: Comm, kind: MpiEngineKind, threads: Option<Pid>) -> Result<MpiInit> {
        if kind == MpiEngineKind::Ibverbs {
            // Fail before any collective: every rank finds the same (missing) device.
            #[cfg(feature = "ibverbs")]
            ibverbs::probe_device()?;
            #[cfg(not(feature = "ibverbs"))]
            return Err(Error::config("LPF_ENGINE=ibverbs: this library was built without the `ibverbs` feature"));
        }
        Self::from_dup(ffi::dup(comm)?, kind, threads)
    }

    /// Takes ownership of `comm` (freed if this fails).
    fn from_dup(mut comm: Comm, kind: MpiEngineKind, threads: Option<Pid>) -> Result<MpiInit> {
        Self::from_dup_inner(comm, kind, threads).inspect_err(|_| ffi::free(&mut comm))
    }

    fn from_dup_inner(comm: Comm, kind: MpiEngineKind, threads: Option<Pid>) -> Result<MpiInit> {
        // Before any collective: every rank of a job has the same environment, so all
        // fail alike on an invalid value.
        let config = Config::from_env()?;
        let (rank, size) = ffi::rank_size(comm)?;
        // Every rank's LPF processes (threads), whether it asks for the hybrid engine,
        // and whether several of its threads may call MPI: one allgather, so that every
        // rank reaches the same verdict below.
        let k = threads.unwrap_or(1);
        let mut mine = k.to_le_bytes().to_vec();
        mine.push(threads.is_some() as u8);
        mine.push(ffi::thread_serialized()? as u8);
        let all = ffi::allgather_bytes(comm, &mine)?;
        let threads_of = |b: &Vec<u8>| Pid::from_le_bytes(b[..4].try_into().unwrap());
        let bad = all.iter().map(threads_of).enumerate().find(|&(_, kr)| kr == 0 || kr > crate::types::MAX_PROCS);
        if let Some((r, kr)) = bad {
            return Err(Error::config(format!("MPI init: rank {r} brings {kr} threads (1..=65535 allowed)")));
        }
        let hybrid = all.iter().any(|b| b[4] != 0 || threads_of(b) > 1);
        let offsets = Layout::offsets_of(all.iter().map(threads_of), "MPI init")?;
        if hybrid && !matches!(kind, MpiEngineKind::Msg | MpiEngineKind::Rma) {
            return Err(Error::config(format!("the hybrid engine runs over mpimsg or mpirma, not {}", kind.name())));
        }
        if let Some(r) = all.iter().position(|b| threads_of(b) > 1 && b[5] == 0) {
            return Err(Error::config(format!(
                "the hybrid engine over MPI: rank {r} brings several threads but its MPI was not initialised with \
                 MPI_THREAD_SERIALIZED or better (a program that initialises MPI calls MPI_Init_thread for it; \
                 where LPF initialises MPI, LPF_MPI_THREAD_LEVEL=single forbids it)"
            )));
        }
        // Pid 0 chooses for all (see `Agreed`).
        let mut agreed = [0u8; Agreed::BYTES];
        if rank == 0 {
            let mine = Agreed {
                token: crate::network::random_u64()?,
                meta: config.mpi_meta,
                agree_errors: config.testing.mpi_agree_errors,
                body_chunk: config.testing.mpi_body_chunk,
            };
            agreed = mine.to_bytes();
        }
        ffi::bcast(comm, &mut agreed, 0)?;
        let agreed = Agreed::from_bytes(&agreed);
        let meta = agreed.meta.unwrap_or_else(|| MetaAlgo::for_nodes(size));
        let mut ch = MpiChannel::new(comm, rank, offsets.clone(), agreed.token, meta, config.spin)?;
        ch.agree_errors = agreed.agree_errors;
        ch.body_chunk = agreed.body_chunk.unwrap_or(ffi::CHUNK).min(ffi::CHUNK);
        Ok(MpiInit { node: Arc::new(Mutex::new(Node { ch, comm })), kind, rank, size, hybrid, offsets })
    }

    /// Whether its syncs agree on errors (a request rejected at its destination fails
    /// that sync everywhere), at the cost of a message round per communicating sync:
    /// test switch `LPF_MPI_AGREE_ERRORS=1` on pid 0 when the init was made.
    pub fn agrees_on_errors(&self) -> bool {
        relock(&self.node).ch.agree_errors
    }

    /// This rank's index in the init (its pid, unless hybrid: see
    /// [`MpiInit::local_procs`]).
    pub fn pid(&self) -> Pid {
        self.rank as Pid
    }

    /// Number of ranks (of LPF processes, unless hybrid: see [`MpiInit::total_procs`]).
    pub fn nprocs(&self) -> Pid {
        self.size as Pid
    }

    /// Number of LPF processes (all threads of all ranks).
    pub fn total_procs(&self) -> Pid {
        self.offsets[self.size]
    }

    /// The LPF processes this rank runs: global pids `first..first + count`.
    pub fn local_procs(&self) -> (Pid, Pid) {
        (self.offsets[self.rank], self.offsets[self.rank + 1] - self.offsets[self.rank])
    }

    /// The engine sections run on: `mpimsg`, `mpirma`, `ibverbs`, or `hybrid`.
    pub fn engine_name(&self) -> &'static str {
        crate::hook::engine_name(self.hybrid, self.kind.name())
    }

    /// The MPI engine between ranks.
    pub fn kind(&self) -> MpiEngineKind {
        self.kind
    }

    /// The token that cancels this rank's LPF processes in the sections hooked from now
    /// on: once set, their syncs and waits fail ([`crate::Reason::Cancelled`]), except
    /// the waits for data in flight to or from their memory, which complete first.
    pub fn set_cancel(&self, cancel: &Cancel) {
        relock(&self.node).ch.cancel = cancel.clone();
    }

    /// `lpf_hook`: runs `spmd` as this rank's LPF process, together with every other
    /// rank of the init, which must hook too. Fatal if this process's part failed, in
    /// particular when a peer left while a sync needed it.
    ///
    /// On the hybrid engine this thread is the rank's first LPF process (it gets
    /// `args`) and the rank's other threads are started (with no input or output).
    pub fn hook(&self, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        let section = Section::open(self.node.clone(), self.kind)?;
        crate::hook::on_network(Box::new(section), self.hybrid, self.kind.name(), None, spmd, args)
    }

    /// [`MpiInit::hook`] on a part made by [`MpiInit::split`] of a job of `job_p` LPF
    /// processes, for a root `lpf_exec` asking for fewer: the section's `lpf_probe`
    /// gives the job's p, and its processes share the job's out as their free_p.
    pub fn hook_part(&self, job_p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        let section = Section::open(self.node.clone(), self.kind)?;
        crate::hook::on_network(Box::new(section), self.hybrid, self.kind.name(), Some(job_p), spmd, args)
    }

    /// How many LPF processes each rank of [`MpiInit::split`]`(p)` runs: ranks `0..p`
    /// one each; on the hybrid engine the fewest first ranks whose threads hold p
    /// processes, each with its own thread count but the last, which runs the rest.
    /// Empty if this init has fewer than p processes.
    pub fn split_layout(&self, p: Pid) -> Vec<Pid> {
        if !self.hybrid {
            return if p as usize <= self.size { vec![1; p as usize] } else { Vec::new() };
        }
        if p == 0 || p > self.total_procs() {
            return Vec::new();
        }
        let mut layout = Vec::new();
        let mut left = p;
        for r in 0..self.size {
            let k = (self.offsets[r + 1] - self.offsets[r]).min(left);
            layout.push(k);
            left -= k;
            if left == 0 {
                break;
            }
        }
        layout
    }

    /// An init over the first ranks of this one holding p LPF processes (see
    /// [`MpiInit::split_layout`]; on the hybrid engine it is hybrid too) - collective
    /// over all ranks of this init; the others get `None`. For running sections on
    /// fewer processes than `mpirun` started. Without the hybrid engine and with p
    /// above the number of ranks, all ranks.
    pub fn split(&self, p: Pid) -> Result<Option<MpiInit>> {
        let comm = relock(&self.node).comm;
        let layout = if self.hybrid { self.split_layout(p) } else { vec![1; (p as usize).min(self.size)] };
        let part = ffi::split(comm, (self.rank < layout.len()).then_some(0), self.rank as i32)?;
        part.map(|c| Self::from_dup(c, self.kind, self.hybrid.then(|| layout[self.rank]))).transpose()
    }

    /// Broadcasts `data` from pid 0 to every process of the init (collective; a helper
    /// for launchers that report pid 0's outcome everywhere).
    pub fn broadcast(&self, data: &mut Vec<u8>) -> Result<()> {
        let node = relock(&self.node);
        let mut len = (data.len() as u64).to_le_bytes();
        ffi::bcast(node.comm, &mut len, 0)?;
        data.resize(u64::from_le_bytes(len) as usize, 0);
        ffi::bcast(node.comm, data, 0)
    }

    /// Every process's `mine`, in pid order, on every process (collective; a helper for
    /// tests that check all processes' results together).
    pub fn allgather_bytes(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        ffi::allgather_bytes(relock(&self.node).comm, mine)
    }

    /// A barrier over the init's processes (collective).
    pub fn barrier(&self) -> Result<()> {
        ffi::barrier(relock(&self.node).comm)
    }

    /// The reference for the benchmark: a timer of `MPI_Alltoall` with `block` bytes to
    /// every process, measured as the probe measures LPF's supersteps (collective,
    /// like every use of the timer). Each sample times a run of back-to-back calls
    /// lasting about `sample_time` (the same count on every rank: rank 0's choice) and
    /// takes the mean per call; a sample counts at its slowest rank. Samples can be
    /// taken one at a time between other measurements, so that both see the same
    /// machine. (Timing single calls after a barrier would mostly measure the skew with
    /// which the ranks leave the barrier.)
    pub fn alltoall_timer(&self, block: usize, sample_time: f64) -> Result<AlltoallTimer> {
        let comm = relock(&self.node).comm;
        let send = vec![1u8; block * self.size];
        let mut recv = vec![0u8; block * self.size];
        ffi::alltoall(comm, &send, &mut recv, block)?;
        ffi::barrier(comm)?;
        let t = ffi::wtime();
        ffi::alltoall(comm, &send, &mut recv, block)?;
        let once = (ffi::wtime() - t).max(1e-8);
        let mut calls = ((sample_time / once).ceil() as u64).clamp(1, 1 << 24).to_le_bytes();
        ffi::bcast(comm, &mut calls, 0)?;
        Ok(AlltoallTimer { comm, block, calls: u64::from_le_bytes(calls), send, recv, mine: Vec::new() })
    }
}

/// See [`MpiInit::alltoall_timer`]. Every method is collective.
pub struct AlltoallTimer {
    comm: Comm,
    block: usize,
    calls: u64,
    send: Vec<u8>,
    recv: Vec<u8>,
    /// This rank's seconds per call, one per sample.
    mine: Vec<f64>,
}

impl AlltoallTimer {
    /// Takes one sample.
    pub fn sample(&mut self) -> Result<()> {
        ffi::barrier(self.comm)?;
        let t = ffi::wtime();
        for _ in 0..self.calls {
            ffi::alltoall(self.comm, &self.send, &mut self.recv, self.block)?;
        }
        self.mine.push((ffi::wtime() - t) / self.calls as f64);
        Ok(())
    }

    /// Seconds per call over the samples so far, each at its slowest rank.
    pub fn result(&self) -> Result<AlltoallTime> {
        let bytes: Vec<u8> = self.mine.iter().flat_map(|t| t.to_le_bytes()).collect();
        let all = ffi::allgather_bytes(self.comm, &bytes)?;
        let at = |r: &Vec<u8>, k: usize| r.get(8 * k..8 * k + 8).map_or(f64::NAN, |b| f64::from_le_bytes(b.try_into().unwrap()));
        let slowest: Vec<f64> = (0..self.mine.len()).map(|k| all.iter().map(|r| at(r, k)).fold(0.0, f64::max)).collect();
        if slowest.is_empty() {
            return Err(Error::fatal("alltoall timer: no samples"));
        }
        let mean = slowest.iter().sum::<f64>() / slowest.len() as f64;
        let best = slowest.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(AlltoallTime { mean, best })
    }
}

/// Seconds per `MPI_Alltoall` call: the mean over samples and the best sample.
#[derive(Clone, Copy, Debug)]
pub struct AlltoallTime {
    pub mean: f64,
    pub best: f64,
}

impl Drop for MpiInit {
    fn drop(&mut self) {
        let mut node = relock(&self.node);
        node.ch.close(Instant::now() + Duration::from_secs(2));
        ffi::free(&mut node.comm);
    }
}

/// One section of an init (hook or rehook): its number, its own communicator (data
/// messages and windows), the one-sided state of `mpirma`/`ibverbs`: the [`Network`]
/// of a process of an MPI engine ([`NetEngine`](crate::network::NetEngine)), or of the
/// threads of a rank on the hybrid engine.
struct Section {
    node: Arc<Mutex<Node>>,
    kind: MpiEngineKind,
    section: u32,
    me: usize,
    offsets: Vec<Pid>,
    data: Comm,
    tag_ub: i32,
    os: Option<OneSidedState>,
    /// Whether `finish` told the others this process finished (then `leave` need not).
    finished: bool,
    /// The channel's, for the engine's look at it outside the node's lock.
    cancel: Cancel,
    host: Host,
}

impl Section {
    /// Starts a section on every process of the node (collective).
    fn open(node: Arc<Mutex<Node>>, kind: MpiEngineKind) -> Result<Section> {
        let (section, data, me, offsets, cancel, host) = {
            let mut n = relock(&node);
            let section = n.ch.sections.open();
            let data = ffi::dup(n.comm)?;
            (section, data, n.ch.layout.me, n.ch.layout.offsets.to_vec(), n.ch.cancel.clone(), n.ch.host)
        };
        let os = match kind {
            MpiEngineKind::Msg => None,
            MpiEngineKind::Rma => Some(OneSidedState::new(Box::new(rma::MpiRma::new(data, offsets.clone())))),
            #[cfg(feature = "ibverbs")]
            MpiEngineKind::Ibverbs => Some(OneSidedState::new(Box::new(ibverbs::Verbs::connect(data)?))),
            #[cfg(not(feature = "ibverbs"))]
            MpiEngineKind::Ibverbs => return Err(Error::config("the ibverbs engine is not built in (feature `ibverbs`)")),
        };
        Ok(Section { node, kind, section, me, offsets, data, tag_ub: ffi::tag_ub(data), os, finished: false, cancel, host })
    }
}

impl Network for Section {
    fn offsets(&self) -> &[Pid] {
        &self.offsets
    }
    fn me(&self) -> usize {
        self.me
    }
    fn cancel(&self) -> &Cancel {
        &self.cancel
    }
    fn host(&self) -> Host {
        self.host
    }

    fn sync(&mut self, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
        let mut node = relock(&self.node);
        match &mut self.os {
            None => msg::sync(&mut node.ch, self.data, self.tag_ub, SyncId { section: self.section, step }, steps),
            Some(os) => onesided::sync(&mut node.ch, os, SyncId { section: self.section, step }, steps),
        }
    }

    fn allgather(&mut self, step: u64, mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
        crate::phases::allgather(&mut relock(&self.node).ch, SyncId { section: self.section, step }, mine, len, all)
    }

    fn activate(&mut self, step: u64, registers: &[&Register], mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
        let Some(os) = self.os.as_mut() else { return self.allgather(step, mine, len, all) };
        onesided::activate(&mut relock(&self.node).ch, os, self.section, step, registers, mine, len, all)
    }

    /// `rehook`: a barrier over this section, then the next one.
    fn fresh(&mut self, step: u64) -> Result<Box<dyn Network>> {
        barrier(&mut relock(&self.node).ch, SyncId { section: self.section, step }.tag(Kind::Fresh), None)?;
        Ok(Box::new(Section::open(self.node.clone(), self.kind)?))
    }

    /// The syncs do not agree on errors (a destination that rejects a request fails
    /// alone): the end of a section waits for every rank ([`MpiChannel::finish`]).
    fn finish(&mut self) -> Result<()> {
        self.finished = true;
        relock(&self.node).ch.finish(self.section)
    }

    fn leave(&mut self, why: &str) {
        prof::report(self.offsets[self.me] as usize);
        let mut node = relock(&self.node);
        if !self.finished {
            node.ch.leave(self.section, why);
        }
        // Collective over the section (every process leaves, in the end): windows.
        if let Some(os) = &mut self.os {
            os.close();
        }
        ffi::free(&mut self.data);
    }
}

/// `exec` from the root with `LPF_ENGINE=mpimsg|mpirma|ibverbs`, in a program started
/// by `mpirun -n P`: every rank calls it (as with `lpfrun`, every process runs the
/// program); pid 0 = rank 0 gets `args.input`/`args.output`, the others run the same
/// SPMD function with no input or output. With `threads`, on the hybrid engine
/// (`LPF_ENGINE=hybrid`, `LPF_HYBRID_NET=mpimsg|mpirma`, `LPF_THREADS=k`: see
/// [`engine_from_env`]): every rank runs its k threads, pid 0 is rank 0's first. The
/// init over `MPI_COMM_WORLD` (and MPI itself, unless the program initialised it) is
/// made on the first call and kept.
pub(crate) fn exec_from_env(kind: MpiEngineKind, threads: Option<Pid>, p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let init = world_init_with(kind, threads)?;
    crate::network::exec_whole_job(p, init.total_procs(), init.pid() == 0, "MPI", "mpirun", args, |args| init.hook(spmd, args))
}

/// The init over `MPI_COMM_WORLD` that [`exec_from_env`] uses (made once, kept).
pub fn world_init(kind: MpiEngineKind) -> Result<&'static MpiInit> {
    world_init_with(kind, None)
}

/// The init of [`world_init_with`], made on its first call.
static WORLD_INIT: OnceLock<std::result::Result<MpiInit, Error>> = OnceLock::new();

/// The engine and the number of LPF processes of the job a root `exec` runs on with
/// `kind` and `threads` (`lpf_probe` on the root): the world init's once made, else the
/// ranks of `MPI_COMM_WORLD` times `threads` (a rank's own count: exact when every rank
/// runs as many, as under one `mpirun`). Initialises MPI if needed (as the exec would),
/// but makes nothing collective.
pub(crate) fn job_from_env(kind: MpiEngineKind, threads: Option<Pid>) -> Result<(&'static str, Pid)> {
    if let Some(Ok(init)) = WORLD_INIT.get() {
        return Ok((init.engine_name(), init.total_procs()));
    }
    ffi::ensure_initialized(threads)?;
    let (_, ranks) = ffi::rank_size(ffi::world())?;
    let engine = crate::hook::engine_name(threads.is_some(), kind.name());
    Ok((engine, (ranks as Pid).saturating_mul(threads.unwrap_or(1))))
}

/// The init over `MPI_COMM_WORLD` that [`exec_from_env`] uses (made once, kept).
pub fn world_init_with(kind: MpiEngineKind, threads: Option<Pid>) -> Result<&'static MpiInit> {
    let init = WORLD_INIT.get_or_init(|| MpiInit::over_world(kind, threads));
    let init = init.as_ref().map_err(|e| e.clone())?;
    if init.kind != kind || init.hybrid != threads.is_some() {
        return Err(Error::config(format!("this process already runs the {} engine", init.engine_name())));
    }
    Ok(init)
}

#[cfg(test)]
mod tests {
    use super::{Agreed, MetaAlgo};

    #[test]
    fn what_pid_0_chooses_survives_the_broadcast_bytes() {
        for a in [
            Agreed { token: 7, meta: None, agree_errors: false, body_chunk: None },
            Agreed { token: u64::MAX, meta: Some(MetaAlgo::Bruck), agree_errors: true, body_chunk: Some(64) },
            Agreed { token: 1, meta: Some(MetaAlgo::Direct), agree_errors: false, body_chunk: Some(1 << 40) },
        ] {
            assert_eq!(Agreed::from_bytes(&a.to_bytes()), a);
        }
    }
}
