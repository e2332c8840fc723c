//! The network between the OS processes of a job (the TCP mesh, MPI), one section of
//! it behind [`Network`], and the engine of one LPF process per OS process over any
//! network, [`NetEngine`] (the `tcp`, `mpimsg`, `mpirma` and `ibverbs` engines). The
//! hybrid engine composes the same networks with shared memory; `hook.rs` chooses
//! between the two for an init's sections.

use crate::context::{run_part_process, run_process, Spmd};
use crate::engine::{Engine, Superstep};
use crate::error::{Error, ErrorKind, Result};
use crate::register::Register;
use crate::types::{Args, Pid, SyncAttr};
use crate::wait::{Cancel, Host};

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
    /// The token that cancels this OS process's LPF processes (its waits fail once set).
    fn cancel(&self) -> &Cancel;
    /// The LPF processes on this host and the spin setting (how waits behave here).
    fn host(&self) -> Host;
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
    /// The LPF processes of this OS process returned from their SPMD function without
    /// failing (see [`Engine::finish`]): waits for the other OS processes, fails if one
    /// failed or is still in another operation (TCP: a barrier; MPI, whose syncs do not
    /// fail everywhere together: every rank's leave message).
    fn finish(&mut self) -> Result<()>;
    /// This OS process's group leaves the section: the others are told `why`.
    fn leave(&mut self, why: &str);
}

/// `exec` from the root over a whole job of `total` LPF processes that `launcher`
/// started (`p` must cover them all; `over` names the network): `hook` runs the SPMD
/// function with `args` in the process holding pid 0 (`first`), with no input or output
/// in the others.
pub(crate) fn exec_whole_job(
    p: Pid,
    total: Pid,
    first: bool,
    over: &str,
    launcher: &str,
    args: Args<'_>,
    hook: impl FnOnce(Args<'_>) -> Result<()>,
) -> Result<()> {
    if p < total {
        return Err(Error::misuse("lpf_exec", format!(
            "exec over {over} runs on all {total} LPF processes of the job (asked for {p}); start {launcher} with \
             fewer processes"
        )));
    }
    hook(if first { args } else { Args::for_peer(args.symbols) })
}

/// One LPF process of a section hooked over an init, which is a part of a job of
/// `job_p` processes or (None) the whole runtime. An `exec` inside it runs on threads
/// of this OS process.
pub(crate) fn run_section_process(engine: Box<dyn Engine>, job_p: Option<Pid>, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let nested_exec = crate::shm::exec_threads_in;
    match job_p {
        Some(total) => run_part_process(engine, total, nested_exec, spmd, args),
        None => run_process(engine, 1, nested_exec, spmd, args),
    }
}

/// `N` bytes from the OS random source (job tokens, the TCP handshake's nonces).
pub(crate) fn random<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    // Without an OS random source there is no authentication worth the name: no fallback.
    getrandom::fill(&mut b).map_err(|e| Error::io(format!("OS random source: {e}")))?;
    Ok(b)
}

pub(crate) fn random_u64() -> Result<u64> {
    random().map(u64::from_le_bytes)
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

    /// The next collective operation, `what` in errors, as `op(network, its step)`.
    fn next_step<T>(&mut self, what: &str, op: impl FnOnce(&mut dyn Network, u64) -> Result<T>) -> Result<T> {
        self.step += 1;
        op(&mut *self.net, self.step).map_err(|e| failed(what, self.pid, e, &mut self.failure))
    }
}

/// The error of operation `what` (sync, rehook, the end of the section) on process
/// `pid`, kept in `failure` (the reason the process gives the others when it leaves) if
/// it is the first.
pub(crate) fn failed(what: &str, pid: Pid, e: Error, failure: &mut String) -> Error {
    let e = Error::with_reason(ErrorKind::Fatal, e.reason(), format!("{what} on process {pid}: {}", e.message()));
    if failure.is_empty() {
        *failure = e.message().to_string();
    }
    e
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
    fn cancel(&self) -> &Cancel {
        self.net.cancel()
    }

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        self.next_step("sync", |net, s| net.sync(s, &[step]))
    }

    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.next_step("sync", |net, s| net.allgather(s, mine, mine.len(), all))
    }

    fn activate(&mut self, register: &Register, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.next_step("sync", |net, s| net.activate(s, &[register], mine, mine.len(), all))
    }

    fn fresh(&mut self) -> Result<Box<dyn Engine>> {
        let net = self.next_step("rehook", |net, s| net.fresh(s))?;
        Ok(Box::new(NetEngine::new(net, self.name)))
    }

    /// A process that returned while others still sync (or rehook) must fail as they
    /// do, and on networks whose syncs do not agree on errors, a process must learn
    /// here that a peer failed: [`Network::finish`].
    fn finish(&mut self) -> Result<()> {
        self.net.finish().map_err(|e| failed("the end of the section", self.pid, e, &mut self.failure))
    }

    fn leave(&mut self) {
        self.net.leave(&self.failure);
    }
}
