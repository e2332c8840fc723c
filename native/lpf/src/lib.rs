//! LPF, Lightweight Parallel Foundations: a BSP communication layer with cost
//! guarantees (Suijlen and Yzelman), in Rust.
//!
//! A program is a set of processes running one SPMD function. Communication is by
//! one-sided `put` and `get` on registered memory, completed by `sync`, the end of a
//! superstep; a superstep in which each process sends and receives at most h bytes is
//! priced at `h·g + l` by [`Context::probe`] (how that compares with measured supersteps:
//! docs/design.md, "Cost model"). Nothing is pre-allocated: a section starts with no memory slots and
//! no message capacity; call both resize functions and `sync` first.
//!
//! ```
//! use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};
//!
//! Root::with_max_procs(4).exec(4, &|ctx: &mut Context, _args: Args| {
//!     let (pid, p) = (ctx.pid(), ctx.nprocs());
//!     ctx.resize_memory_register(2).unwrap();
//!     ctx.resize_message_queue(2).unwrap();
//!     ctx.sync(SYNC_DEFAULT).unwrap();
//!     let mut mine = [pid as u64];
//!     let mut from_left = [u64::MAX];
//!     let src = ctx.register_local(&mut mine).unwrap();
//!     let dst = ctx.register_global(&mut from_left).unwrap();
//!     ctx.sync(SYNC_DEFAULT).unwrap();
//!     ctx.put(src.slot(), 0, (pid + 1) % p, dst.slot(), 0, 8, MSG_DEFAULT).unwrap();
//!     ctx.sync(SYNC_DEFAULT).unwrap();
//!     assert_eq!(ctx.slice(&dst)[0], ((pid + p - 1) % p) as u64);
//! }, Args::none()).unwrap();
//! ```
//!
//! # Which trait does what
//!
//! A [`Context`] (`context.rs`) is one process's handle: it checks every call, keeps
//! the register and the queue, and hands each superstep to its engine. Below it, each
//! trait is one job, with its implementations:
//!
//! ```text
//! Engine       one process's side of a section: sync, allgather, fresh, leave
//! │            ShmEngine (shm/): threads of one OS process; a sync is two barriers
//! │            NetEngine (network.rs): one LPF process per OS process, over a Network
//! │            HybridEngine (hybrid/): threads sharing memory, over a Network
//! └─ Network   one section between OS processes: its sync runs phases::driver::sync
//!    │         TcpSection (tcp/), mpi::Section (mpi/); hook.rs picks the engine above
//!    ├─ Channel    control messages between nodes (meta-data, barriers, allgathers)
//!    │             Mesh (tcp/mesh.rs), MpiChannel (mpi/channel.rs)
//!    └─ Transport  the data of a sync: send_payloads, exchange, complete
//!       │          TcpStreams (tcp/exchange.rs), MpiMessages (mpi/msg.rs),
//!       │          OneSidedState (mpi/onesided.rs)
//!       └─ OneSided    a one-sided transport's own calls: expose, post, complete
//!                      MpiRma (mpi/rma.rs), Verbs (mpi/ibverbs.rs)
//! ```
//!
//! docs/design.md gives the sync phase by phase and the layers the files form.

pub mod checks;
pub mod collectives;
pub mod config;
pub(crate) mod context;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod hook;
pub(crate) mod hybrid;
pub(crate) mod lock;
pub mod machine;
#[cfg(feature = "mpi")]
pub mod mpi;
pub(crate) mod network;
pub(crate) mod phases;
pub(crate) mod queue;
pub(crate) mod register;
pub mod shm;
pub mod tcp;
pub(crate) mod types;
pub(crate) mod wait;
pub(crate) mod wire;

pub use config::{Config, EngineKind};
pub use context::{Context, Registered, Spmd};
pub use error::{Error, ErrorKind, Reason, Result};
pub use machine::{CostPoint, CostTable, Machine};
pub use shm::ShmInit;
pub use types::{Args, Func, Memslot, MsgAttr, Pid, Pod, SyncAttr, MAX_P, MSG_DEFAULT, SYNC_DEFAULT};
pub use wait::Cancel;

/// Ends the whole job now with exit status `code` (`lpf_abort`, and the C debug layer
/// on misuse). No destructor, exit handler or stdio flush of the process runs: other
/// threads may be inside LPF calls, and running their owners' destructors under them is
/// what made the reference end its pthread engine with `quick_exit` rather than `exit`.
/// Under MPI (initialised and not finalised) every rank ends through `MPI_Abort` on
/// `MPI_COMM_WORLD` with `code`, which `mpirun` exits with; otherwise this OS process
/// exits with `code`, and `lpfrun` ends the other processes of its job and exits with it.
pub fn abort_job(code: i32) -> ! {
    #[cfg(feature = "mpi")]
    mpi::ffi::abort_world(code);
    // Started by lpfrun: tell it that this process ends the job, so that it names this
    // one as the cause and exits with `code`, not with the status of a peer that
    // exits at the same moment because this one went (its ABORT_SIGNAL).
    if let Some(launcher) = Config::from_env().ok().and_then(|c| c.launcher_pid) {
        // SAFETY: getppid and kill have no memory effects; the signal goes to our parent
        // only when it is the lpfrun that named itself.
        unsafe {
            if libc::getppid() as u32 == launcher {
                libc::kill(launcher as libc::pid_t, libc::SIGUSR1);
            }
        }
    }
    // SAFETY: _exit ends the process at once; nothing of it runs afterwards.
    unsafe { libc::_exit(code) }
}

/// `LPF_ROOT`: the context outside any SPMD section, from which `exec` starts one.
#[derive(Clone, Debug)]
pub struct Root {
    max_procs: Option<Pid>,
}

impl Default for Root {
    fn default() -> Self {
        Self::new()
    }
}

impl Root {
    /// A root whose `exec` uses at most `LPF_MAX_PROCS` (else all hardware threads)
    /// processes, on the engine `LPF_ENGINE` names (default `shm`).
    pub fn new() -> Root {
        Root { max_procs: None }
    }

    /// A root that may start up to `n` processes whatever the machine has
    /// (oversubscription), ignoring `LPF_MAX_PROCS`.
    pub fn with_max_procs(n: Pid) -> Root {
        Root { max_procs: Some(n.max(1)) }
    }

    /// The processors available to `exec`.
    pub fn max_procs(&self) -> Result<Pid> {
        self.max_procs.map_or_else(shm::max_procs_from_env, Ok)
    }

    /// `lpf_exec(LPF_ROOT, p, spmd, args)`: runs `spmd` on `min(p, max_procs)` processes;
    /// pid 0 gets `args.input` and `args.output`, all get `args.symbols`. Returns a fatal
    /// error if any process failed (pid 0's output still arrives).
    pub fn exec(&self, p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        match RootEngine::from_env()? {
            RootEngine::Shm => shm::exec_threads(p, self.max_procs()?, spmd, args),
            // Every OS process of the job (started by lpfrun) joins over TCP; with
            // threads in the processes when hybrid.
            RootEngine::Tcp => tcp::exec_from_env(p, spmd, args),
            // Every rank of the job (started by mpirun) joins MPI_COMM_WORLD.
            #[cfg(feature = "mpi")]
            RootEngine::Mpi(kind, threads) => mpi::exec_from_env(kind, threads, p, spmd, args),
        }
    }

    /// `lpf_probe(LPF_ROOT, ...)`: the runtime a root `exec` uses, on the engine
    /// `LPF_ENGINE` names: p is all its processors (on shm `max_procs`; under `lpfrun`
    /// or `mpirun` the job's LPF processes), the same p every section of it reports;
    /// g and l are that engine's.
    pub fn probe(&self) -> Result<Machine> {
        let (engine, p) = match RootEngine::from_env()? {
            RootEngine::Shm => (EngineKind::Shm.cost_table(), self.max_procs()?),
            RootEngine::Tcp => tcp::job_from_env()?,
            #[cfg(feature = "mpi")]
            RootEngine::Mpi(kind, threads) => mpi::job_from_env(kind, threads)?,
        };
        Ok(Machine::new(p, p, engine))
    }

    /// `LPF_ROOT` used as a context: a section of one process (pid 0 of 1) on the calling
    /// thread, on which every primitive works as in any section (resizes, registrations,
    /// puts and gets to itself, sync), for sequential code and library initialisers. Its
    /// `probe` is the root's ([`Root::probe`] gives the runtime's p); its `exec` starts
    /// threads of this process, as a nested exec does.
    pub fn context(&self) -> Result<Context> {
        let runtime = self.probe()?.p;
        Ok(Context::new(shm::solo(), self.max_procs()?, Some(runtime), shm::exec_threads_in))
    }
}

/// The engine of a root `exec`, as the configuration (`LPF_ENGINE`, `LPF_HYBRID_NET`,
/// `LPF_THREADS`) names it.
enum RootEngine {
    Shm,
    /// TCP between the OS processes lpfrun started (hybrid too: threads in them).
    Tcp,
    /// An MPI engine between the ranks mpirun started; `Some(threads)`: the hybrid
    /// engine with that many threads in this rank.
    #[cfg(feature = "mpi")]
    Mpi(mpi::MpiEngineKind, Option<Pid>),
}

impl RootEngine {
    fn from_env() -> Result<RootEngine> {
        let cfg = Config::from_env()?;
        let engine = cfg.engine_built()?;
        // The hybrid engine runs over the network LPF_HYBRID_NET names: TCP (lpfrun)
        // or an MPI engine (mpirun).
        let (net, threads) = match engine {
            EngineKind::Hybrid => (cfg.root_hybrid_net(), Some(cfg.threads.unwrap_or(1))),
            e => (e, None),
        };
        match net {
            EngineKind::Shm => Ok(RootEngine::Shm),
            EngineKind::Tcp => Ok(RootEngine::Tcp),
            #[cfg(feature = "mpi")]
            EngineKind::MpiMsg | EngineKind::MpiRma | EngineKind::Ibverbs => {
                Ok(RootEngine::Mpi(mpi::MpiEngineKind::of(net).expect("an MPI engine"), threads))
            }
            // Not reached: engine_built refused the engines this build lacks.
            #[cfg(not(feature = "mpi"))]
            EngineKind::MpiMsg | EngineKind::MpiRma | EngineKind::Ibverbs => {
                let _ = threads;
                Err(Error::config(format!("engine {net}: this library was built without MPI")))
            }
            EngineKind::Hybrid => Err(Error::config("the hybrid engine cannot run over itself")),
        }
    }
}

/// `lpf_exec(LPF_ROOT, ...)` with the default root.
pub fn exec(p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    Root::new().exec(p, spmd, args)
}
