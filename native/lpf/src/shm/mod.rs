//! The shared-memory engine: the processes of a section are threads of one process.
//!
//! A sync is two barriers with the data exchange between them. Each process publishes
//! its superstep (register and queue grouped by peer) and arrives at the first barrier;
//! then every process carries out the requests that *write into its own memory*: the
//! puts addressed to it, read straight from their origin's memory, and its own gets,
//! read straight from their source's memory. So no two threads ever write the same
//! memory, overlapping puts end as one serialisation (the destination's processing
//! order), and a superstep costs O(p + h) per process plus the copies. The second
//! barrier releases the sources. The origin has checked every request already; the
//! owner of each area checks again (O(1) each), so that even a register that changed
//! under a request cannot be written out of bounds: such an error fails the sync
//! everywhere, after the barrier, with nothing written for the bad request.

pub(crate) mod barrier;

use crate::context::{run_process, run_process_in, Spmd};
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::queue::Request;
use crate::lock::relock;
use crate::types::{Args, Pid, SyncAttr};
use crate::wait::{Cancel, LookCost, Patience};
use barrier::{Barrier, Outcome};
use std::cell::Cell;
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

/// The state the threads of one section share.
pub(crate) struct Shared {
    nprocs: Pid,
    barrier: Barrier,
    /// What each process publishes for the step between two barriers: a pointer to
    /// its [`Phase`], live until the second barrier.
    published: Box<[CachePadded<AtomicPtr<Phase<'static>>>]>,
    /// The first error found during an exchange; it fails the context for everyone.
    error: OnceLock<Error>,
    rehooks: Rendezvous,
}

impl Shared {
    fn new(nprocs: Pid) -> Arc<Shared> {
        Arc::new(Shared {
            nprocs,
            barrier: Barrier::new(nprocs),
            published: (0..nprocs).map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut()))).collect(),
            error: OnceLock::new(),
            rehooks: Rendezvous::new(nprocs),
        })
    }
}

/// Hands out one [`Shared`] per round to the `nprocs` processes that join the round, so
/// threads that already exist (rehook, hook) can start a section together.
pub(crate) struct Rendezvous {
    nprocs: Pid,
    rounds: Mutex<HashMap<u64, (Arc<Shared>, Pid)>>,
}

impl Rendezvous {
    fn new(nprocs: Pid) -> Self {
        Rendezvous { nprocs, rounds: Mutex::new(HashMap::new()) }
    }

    fn join(&self, round: u64) -> Arc<Shared> {
        let mut rounds = relock(&self.rounds);
        let entry = rounds.entry(round).or_insert_with(|| (Shared::new(self.nprocs), 0));
        entry.1 += 1;
        let shared = entry.0.clone();
        if entry.1 == self.nprocs {
            rounds.remove(&round);
        }
        shared
    }
}

/// The collective a process is in, with what it brings to it. Tagged so that
/// processes calling different collectives (a user error) are told so, instead of
/// reading each other's data as the wrong type.
enum Phase<'a> {
    Sync(&'a Superstep<'a>),
    Allgather(&'a [u64]),
    Rehook,
}

impl Phase<'_> {
    fn name(&self) -> &'static str {
        match self {
            Phase::Sync(_) => "sync",
            Phase::Allgather(_) => "sync (registering global slots)",
            Phase::Rehook => "rehook",
        }
    }
}

pub(crate) struct ShmEngine {
    shared: Arc<Shared>,
    pid: Pid,
    rehooks: u64,
    /// How this process waits at the barrier (its spin adapts across waits).
    patience: Cell<Patience>,
    /// Stops this process's waits and syncs when set.
    cancel: Cancel,
    /// Whether this process has departed the barrier (a cancelled wait does).
    departed: Cell<bool>,
}

/// How the processes of a shared-memory section of `nprocs` threads wait:
/// `LPF_SPIN_US`, else by whether the section's threads outnumber the cores.
pub(crate) fn patience_for(spin_setting: Option<Duration>, nprocs: Pid) -> Patience {
    Patience::new(LookCost::SHARED_MEMORY, spin_setting, nprocs as usize, crate::wait::cores())
}

impl ShmEngine {
    fn boxed(shared: Arc<Shared>, pid: Pid, patience: Patience, cancel: Cancel) -> Box<dyn Engine> {
        Box::new(ShmEngine { shared, pid, rehooks: 0, patience: Cell::new(patience), cancel, departed: Cell::new(false) })
    }

    /// Waits at the barrier: before the exchange (`cancellable`: the peers may be
    /// anywhere, and a cancelled process departs), or after it (where the peers only
    /// finish their copies, which may read this process's memory: never left early).
    fn barrier(&self, cancellable: bool) -> Result<()> {
        let mut patience = self.patience.get();
        let mut departed = false;
        let cancel = if cancellable { &self.cancel } else { &Cancel::NEVER };
        let r = self.shared.barrier.wait_for_peers(self.pid, &mut patience, cancel, &mut departed);
        self.patience.set(patience);
        self.departed.set(self.departed.get() | departed);
        r
    }

    /// Runs one collective step: publish `mine`, barrier, check that every process is
    /// in the same collective, run `body` with access to the others' phases, barrier.
    /// An error of `body` on any process fails the step on every process (it is
    /// shared before the second barrier and read after it).
    fn step(&self, mine: Phase<'_>, body: impl for<'p> FnOnce(&'p dyn Fn(Pid) -> &'p Phase<'p>) -> Result<()>) -> Result<()> {
        let sh = &*self.shared;
        if let Some(e) = sh.error.get() {
            return Err(e.clone());
        }
        sh.published[self.pid as usize].store(&mine as *const Phase as *mut Phase<'static>, Release);
        self.barrier(true)?;
        // SAFETY: between the two barriers every process's published phase (and what
        // it borrows) is live and unchanged: its owner is blocked in this function.
        let peer = |q: Pid| unsafe { &*sh.published[q as usize].load(Acquire) };
        let result = match (0..sh.nprocs).find(|&q| std::mem::discriminant(peer(q)) != std::mem::discriminant(&mine)) {
            Some(q) => Err(Error::out_of_step(format!(
                "collectives out of step: process {} called {} while process {q} called {}",
                self.pid,
                mine.name(),
                peer(q).name()
            ))),
            None => body(&peer),
        };
        if let Err(e) = result {
            let _ = sh.error.set(e);
        }
        self.barrier(false)?;
        sh.error.get().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// Carries out the requests that write into this process's memory; `phase(q)` is
    /// process q's `Phase::Sync`.
    ///
    /// # Safety
    /// Only inside [`ShmEngine::step`], whose barriers keep every peer's superstep live
    /// and unchanged.
    unsafe fn exchange<'p>(&self, mine: &Superstep<'_>, phase: &'p dyn Fn(Pid) -> &'p Phase<'p>) -> Result<()> {
        let sh = &*self.shared;
        let peer = |q: Pid| match phase(q) {
            Phase::Sync(step) => *step,
            _ => unreachable!("phases were checked to agree"),
        };
        // The target side of the message count, checked before any write.
        let incoming: usize = (0..sh.nprocs).map(|q| peer(q).queue.to_peer(self.pid).len()).sum();
        if incoming > mine.queue.capacity() {
            return Err(Error::exhausted(format!(
                "process {} is the target of {incoming} messages in this superstep but reserved room for {} \
                 (resize_message_queue)",
                self.pid,
                mine.queue.capacity()
            )));
        }
        // Every request is carried out or refused (nothing written); the first refusal
        // fails the sync. `copy`, not `copy_nonoverlapping`: a put to self may overlap.
        let mut first_error = None;
        let mut done = |r: Result<()>| first_error = first_error.take().or(r.err());
        for q in 0..sh.nprocs {
            for r in peer(q).queue.to_peer(self.pid) {
                if let Request::Put { src, dst_slot, dst_offset, size, .. } = *r {
                    let what = format_args!("put from process {q} into process {}", self.pid);
                    let dst = mine.register.area(dst_slot, "lpf_put").and_then(|a| a.range(dst_slot, dst_offset, size, "lpf_put", what));
                    done(dst.map(|dst| std::ptr::copy(src, dst, size)));
                }
            }
        }
        for r in mine.queue.requests() {
            if let Request::Get { src_pid, src_slot, src_offset, dst, size } = *r {
                let what = format_args!("get by process {} from process {src_pid}", self.pid);
                let src = peer(src_pid).register.area(src_slot, "lpf_get").and_then(|a| a.range(src_slot, src_offset, size, "lpf_get", what));
                done(src.map(|src| std::ptr::copy(src, dst, size)));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The engine of a section of one process, on the calling thread (`LPF_ROOT` used as a
/// context, [`crate::Root::context`]).
pub(crate) fn solo() -> Box<dyn Engine> {
    ShmEngine::boxed(Shared::new(1), 0, Patience::without_spin(LookCost::SHARED_MEMORY), Cancel::NEVER)
}

impl Engine for ShmEngine {
    fn name(&self) -> &'static str {
        crate::config::EngineKind::Shm.name()
    }
    fn pid(&self) -> Pid {
        self.pid
    }
    fn nprocs(&self) -> Pid {
        self.shared.nprocs
    }
    /// All processes are threads of one OS process: one node.
    fn nodes(&self) -> Vec<std::ops::Range<Pid>> {
        std::iter::once(0..self.shared.nprocs).collect()
    }
    fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        // SAFETY: `exchange` runs inside `step`, between its barriers.
        self.step(Phase::Sync(step), |phase| unsafe { self.exchange(step, phase) })
    }

    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()> {
        let n = mine.len();
        self.step(Phase::Allgather(mine), |phase| {
            for q in 0..self.shared.nprocs {
                let Phase::Allgather(theirs) = phase(q) else { unreachable!("phases were checked to agree") };
                if theirs.len() != n {
                    return Err(crate::register::unequal_global_registrations(self.pid, n, q, theirs.len()));
                }
                all[q as usize * n..(q as usize + 1) * n].copy_from_slice(theirs);
            }
            Ok(())
        })
    }

    fn fresh(&mut self) -> Result<Box<dyn Engine>> {
        // A collective step, so that rehook fails, not hangs, when a peer has left.
        self.step(Phase::Rehook, |_| Ok(()))?;
        self.rehooks += 1;
        Ok(ShmEngine::boxed(self.shared.rehooks.join(self.rehooks), self.pid, self.patience.get(), self.cancel.clone()))
    }

    fn leave(&mut self) {
        if !self.departed.replace(true) {
            self.shared.barrier.depart();
        }
    }
}

/// The number of processors a root `exec` may use: `LPF_MAX_PROCS` when set, else the
/// machine's hardware threads.
pub(crate) fn max_procs_from_env() -> Result<Pid> {
    let hardware = || std::thread::available_parallelism().map_or(1, |n| n.get() as Pid);
    Ok(crate::config::Config::from_env()?.max_procs.unwrap_or_else(hardware))
}

/// The stack size of a process thread: `RUST_MIN_STACK` when set (as for every Rust
/// thread), else 2 MiB. Given to the thread builder explicitly, so that a failure to
/// start threads can say how much memory each one needed.
fn thread_stack_size() -> usize {
    std::env::var("RUST_MIN_STACK").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(2 << 20)
}

/// Address space a process thread takes besides its stack: its guard page and the
/// alternate signal stack (with guard) the Rust runtime maps for each thread.
const THREAD_OVERHEAD: u64 = 64 << 10;

/// The address space this process has mapped now (`/proc/self/statm`), in bytes.
fn address_space_used() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0)?)
}

/// Memory mappings a new thread adds: its stack and guard page (glibc), the
/// alternate signal stack and its guard page (the Rust runtime), and a share of
/// malloc's per-thread arenas (measured: 4.3 per thread).
const MAPS_PER_THREAD: u64 = 5;

/// `vm.max_map_count`, read once per process: a system setting that changes rarely,
/// and [`check_room_for_threads`] runs before every parallel operation of graphblas.
fn max_map_count() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(|| std::fs::read_to_string("/proc/sys/vm/max_map_count").ok()?.trim().parse().ok())
}

/// The memory mappings this process has now (the lines of `/proc/self/maps`).
fn maps_in_use() -> Option<u64> {
    use std::io::Read;
    let mut text = Vec::new();
    std::fs::File::open("/proc/self/maps").and_then(|mut f| f.read_to_end(&mut text)).ok()?;
    Some(text.iter().filter(|&&b| b == b'\n').count() as u64)
}

/// Checks, before `threads` new threads are created (LPF processes of a section, or
/// any program's worker threads), that they fit under the process's limits with room
/// left for the memory the program then uses:
///
/// - their stacks under the address-space limit (`RLIMIT_AS`, `ulimit -v`), with a
///   quarter of the limit (at least 64 MiB) left over: each stack is reserved address
///   space, so a few thousand threads fill a limit of some GB;
/// - their memory mappings under `vm.max_map_count` (65530 by default: some 10,000
///   threads), with a quarter of the limit left over.
///
/// A thread started in the last bytes or mappings fails where no error can be
/// returned: the Rust runtime aborts the program when it cannot map a new thread's
/// signal stack, or when an allocation fails. `OutOfMemory` (nothing was started)
/// when they do not fit, with a message naming the limit; no check without a limit.
/// Creating the threads can still fail on other limits (ulimit -u, threads-max, a
/// cgroup's pids.max), which `std::thread::Builder` reports as an error to the
/// callers. Cheap for a few threads: the mappings are counted (a read of
/// `/proc/self/maps`, about what starting a thread costs) only when the threads'
/// own would take 1/32 of the limit or more, as fewer cannot exhaust it unless the
/// process is at the limit already, where its own allocations fail first.
pub fn check_room_for_threads(threads: usize) -> Result<()> {
    const MIB: u64 = 1 << 20;
    if threads == 0 {
        return Ok(());
    }
    let threads = threads as u64;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    let as_limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0 && lim.rlim_cur != libc::RLIM_INFINITY;
    if let (true, Some(used)) = (as_limited, address_space_used()) {
        #[allow(clippy::useless_conversion)] // rlim_t is u32 on some 32-bit targets
        let limit = u64::from(lim.rlim_cur);
        let stack = thread_stack_size() as u64;
        let stacks = threads.saturating_mul(stack + THREAD_OVERHEAD);
        let spare = (limit / 4).max(64 << 20);
        let left = limit.saturating_sub(used);
        if stacks.saturating_add(spare) > left {
            return Err(Error::out_of_memory(format!(
                "the {threads} new threads need {} MiB of address space for their stacks ({threads} x {} KiB) \
                 and {} MiB must stay free for the program's memory, but the address-space limit (ulimit -v) of \
                 {} MiB leaves {} MiB ({} MiB are in use): lower the number of processes or threads, or raise the limit",
                stacks / MIB,
                (stack + THREAD_OVERHEAD) >> 10,
                spare / MIB,
                limit / MIB,
                left / MIB,
                used / MIB
            )));
        }
    }
    let maps = threads.saturating_mul(MAPS_PER_THREAD);
    let Some(max_maps) = max_map_count().filter(|&m| maps.saturating_mul(32) >= m) else {
        return Ok(());
    };
    let Some(used) = maps_in_use() else { return Ok(()) };
    let spare = max_maps / 4;
    let left = max_maps.saturating_sub(used);
    if maps.saturating_add(spare) > left {
        return Err(Error::out_of_memory(format!(
            "the {threads} new threads need {maps} memory mappings ({threads} x {MAPS_PER_THREAD}: stacks, signal \
             stacks, guard pages) and {spare} must stay free for the program's memory, but the limit \
             vm.max_map_count of {max_maps} leaves {left} ({used} are in use): lower the number of processes or \
             threads, or raise the limit (sysctl vm.max_map_count)"
        )));
    }
    Ok(())
}

/// Starts processes `1..n` of a section, each on a new thread of `scope` (named
/// `name(pid)`, with the stack of [`thread_stack_size`]) running `run(pid)`, once they
/// fit under the process's limits ([`check_room_for_threads`], `what` naming them). Stops at the first thread that cannot be created (`cannot_start(pid, why)`
/// says so); the processes never started leave `barrier`. Returns the threads started
/// and why the others were not.
pub(crate) fn start_processes<'s, F>(
    scope: &'s std::thread::Scope<'s, '_>,
    n: Pid,
    barrier: &Barrier,
    what: std::fmt::Arguments<'_>,
    name: impl Fn(Pid) -> String,
    cannot_start: impl Fn(Pid, std::io::Error) -> Error,
    run: F,
) -> (Vec<ScopedJoinHandle<'s, Result<()>>>, Option<Error>)
where
    F: Fn(Pid) -> Result<()> + Send + Copy + 's,
{
    let mut handles = Vec::new();
    let mut failure = check_room_for_threads(n as usize - 1).map_err(|e| e.context(what)).err();
    if failure.is_none() && handles.try_reserve_exact(n as usize - 1).is_err() {
        failure = Some(Error::out_of_memory(format!("{what}: cannot allocate the table of their threads")));
    }
    let stack = thread_stack_size();
    for pid in 1..n {
        if failure.is_some() {
            break;
        }
        let thread = std::thread::Builder::new().name(name(pid)).stack_size(stack);
        match thread.spawn_scoped(scope, move || run(pid)) {
            Ok(h) => handles.push(h),
            Err(e) => failure = Some(cannot_start(pid, e)),
        }
    }
    if failure.is_some() {
        for _ in handles.len() + 1..n as usize {
            barrier.depart();
        }
    }
    (handles, failure)
}

/// The first error of `first` and of the processes on `threads`, all joined (a thread
/// that panicked is an error).
pub(crate) fn first_error(first: impl IntoIterator<Item = Result<()>>, threads: Vec<ScopedJoinHandle<'_, Result<()>>>) -> Result<()> {
    let joined = threads.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::fatal("process thread panicked"))));
    let all: Vec<Result<()>> = first.into_iter().chain(joined).collect();
    all.into_iter().find(Result::is_err).unwrap_or(Ok(()))
}

/// `exec` on the shared-memory engine: `min(p, free)` processes, pid 0 on the calling
/// thread and the others on new threads; the processors left over are divided among
/// the children as their `free_p`, for nested `exec`. Returns a fatal error if any
/// process failed; pid 0's output is in `args.output` either way.
///
/// When the threads would not fit under the address-space or memory-map limit, `exec`
/// fails at once with `OutOfMemory` ([`check_room_for_threads`]). No process runs `spmd` before every
/// thread exists: the new threads wait at the section's barrier until pid 0 has started
/// them all. When a thread cannot be created (thread limits such as `ulimit -u`), the
/// section does not start: every thread already created returns without running
/// `spmd`, and `exec` fails with a message naming how many threads were started.
pub fn exec_threads(p: Pid, free: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    exec_threads_in(p, free, free, spmd, args, &Cancel::NEVER)
}

/// [`exec_threads`] in a runtime of `runtime` processors (what the processes' `probe`
/// reports as p): the `free` ones of a root exec, the parent's runtime for a nested one,
/// whose processes carry `cancel` (a nested section's: its parent's token).
pub(crate) fn exec_threads_in(p: Pid, free: Pid, runtime: Pid, spmd: Spmd<'_>, args: Args<'_>, cancel: &Cancel) -> Result<()> {
    let spin = crate::config::Config::from_env()?.spin;
    let free = free.clamp(1, crate::types::MAX_PROCS);
    let n = p.clamp(1, free);
    let spare = free - n;
    let child_free = |pid: Pid| 1 + spare / n + Pid::from(pid < spare % n);
    let shared = Shared::new(n);
    let patience = patience_for(spin, n);
    let symbols = args.symbols;
    let not_started = || Error::exhausted("the section did not start: another of its threads could not be created");
    let cannot_start = |pid: Pid, e: std::io::Error| {
        Error::exhausted(format!(
            "exec of {n} processes: cannot create the thread of process {pid} ({e}); {pid} of {n} \
             processes were started, each a thread with a {} KiB stack: lower p (LPF_MAX_PROCS) or \
             raise the limits on threads and memory (ulimit -u, ulimit -v, \
             /proc/sys/kernel/threads-max)",
            thread_stack_size() >> 10
        ))
    };
    // The start gate: broken when a later thread could not be created.
    let gate = || shared.barrier.wait(&mut Patience::without_spin(LookCost::SHARED_MEMORY)) == Outcome::Complete;
    let engine = |pid: Pid| ShmEngine::boxed(shared.clone(), pid, patience, cancel.clone());
    let run = |pid: Pid| {
        if !gate() {
            return Err(not_started());
        }
        run_process_in(engine(pid), child_free(pid), Some(runtime), exec_threads_in, spmd, Args::for_peer(symbols))
    };
    std::thread::scope(|scope| {
        let what = format_args!("exec of {n} processes");
        let (threads, failure) = start_processes(scope, n, &shared.barrier, what, |pid| format!("lpf-shm-{pid}"), cannot_start, run);
        let mine = match failure {
            None if gate() => run_process_in(engine(0), child_free(0), Some(runtime), exec_threads_in, spmd, args),
            None => Err(not_started()),
            Some(e) => {
                // pid 0 leaves too (those never created have): the gate completes
                // broken, and the threads that exist return at once.
                shared.barrier.depart();
                Err(e)
            }
        };
        // Every other result is joined (so no thread outlives the exec); pid 0's error
        // comes first: it names the cause when the section did not start.
        first_error([mine], threads)
    })
}

/// The init object of the shared-memory engine (`lpf_pthread_initialize`): the threads
/// of an existing program, each with its pid, form one group that can `hook` any number
/// of times.
///
/// Forming a group is a rendezvous: every joiner waits until all `nprocs` threads of its
/// group have joined, or fails after a timeout naming the pids that never came. Groups
/// are told apart by a key: [`ShmInit::join`] takes the job's identity (so any number of
/// jobs can form groups at once in one process); [`ShmInit::new`], for the C interface,
/// which carries no name, keys by `nprocs` alone, so a C program must not fill two
/// groups of the same size at once. Under one key, a pid joining twice or a different
/// `nprocs` fails the whole group at once.
pub struct ShmInit {
    group: Arc<Rendezvous>,
    pid: Pid,
    nprocs: Pid,
    hooks: std::cell::Cell<u64>,
    /// Carried by this thread's processes of every hook (see [`ShmInit::join_cancellable`]).
    cancel: Cancel,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum GroupKey {
    /// `lpf_pthread_initialize`: the interface names no group, only its size.
    Unnamed(Pid),
    /// A group named by its job.
    Job(String),
}

impl GroupKey {
    fn describe(&self) -> String {
        match self {
            GroupKey::Unnamed(n) => format!("the unnamed group of {n} threads"),
            GroupKey::Job(k) => format!("group {k:?}"),
        }
    }
}

/// A group whose threads are still arriving.
struct Filling {
    group: Arc<Rendezvous>,
    nprocs: Pid,
    joined: Vec<bool>,
    count: Pid,
    /// Set when the group cannot form; every waiter returns it.
    failed: Option<Error>,
}

impl Filling {
    fn missing(&self) -> Vec<Pid> {
        (0..self.nprocs).filter(|&p| !self.joined[p as usize]).collect()
    }

    /// What a waiter of this group returns now, if anything: the group formed or failed.
    fn outcome(&self, pid: Pid, cancel: &Cancel) -> Option<Result<ShmInit>> {
        if let Some(e) = &self.failed {
            return Some(Err(e.clone()));
        }
        (self.count == self.nprocs).then(|| {
            Ok(ShmInit { group: self.group.clone(), pid, nprocs: self.nprocs, hooks: 0.into(), cancel: cancel.clone() })
        })
    }
}

/// The groups of this OS process that are forming, with a condition variable their
/// waiters sleep on. A group leaves the table once complete or failed, so its key can
/// form a new group later.
struct Forming {
    table: Mutex<HashMap<GroupKey, Arc<Mutex<Filling>>>>,
    changed: std::sync::Condvar,
}

fn forming() -> &'static Forming {
    static FORMING: OnceLock<Forming> = OnceLock::new();
    FORMING.get_or_init(|| Forming { table: Mutex::new(HashMap::new()), changed: std::sync::Condvar::new() })
}

/// The C name of the call that forms a group of threads.
const INITIALIZE: &str = "lpf_pthread_initialize";

impl ShmInit {
    /// `lpf_pthread_initialize`: joins thread `pid` of `nprocs` to the unnamed group of
    /// that size, waiting for the others up to `LPF_PTHREAD_TIMEOUT_MS` (default 60 s).
    pub fn new(pid: Pid, nprocs: Pid) -> Result<ShmInit> {
        let timeout = crate::config::Config::from_env()?.pthread_timeout;
        Self::form(GroupKey::Unnamed(nprocs), pid, nprocs, timeout, &Cancel::NEVER)
    }

    /// Joins thread `pid` of `nprocs` to the group named `key` (the job's identity: every
    /// thread of one job passes the same key, different jobs different keys). Returns
    /// once all `nprocs` threads have joined; fails after `timeout` naming the pids
    /// still missing, and at once for every thread of the group if a pid joins twice
    /// or threads disagree on `nprocs`.
    pub fn join(key: &str, pid: Pid, nprocs: Pid, timeout: Duration) -> Result<ShmInit> {
        Self::join_cancellable(key, pid, nprocs, timeout, &Cancel::NEVER)
    }

    /// [`ShmInit::join`], stopped by `cancel`: once it is set, a join still waiting for
    /// the group fails ([`crate::Reason::Cancelled`]) and so does the group for the
    /// threads that joined it (they see this pid leave); every hook's process of this
    /// thread carries the token (see [`crate::Cancel`]).
    pub fn join_cancellable(key: &str, pid: Pid, nprocs: Pid, timeout: Duration, cancel: &Cancel) -> Result<ShmInit> {
        Self::form(GroupKey::Job(key.to_owned()), pid, nprocs, timeout, cancel)
    }

    fn form(key: GroupKey, pid: Pid, nprocs: Pid, timeout: Duration, cancel: &Cancel) -> Result<ShmInit> {
        if nprocs == 0 || nprocs > crate::types::MAX_PROCS || pid >= nprocs {
            return Err(Error::misuse(INITIALIZE, format!(
                "pthread initialize: pid {pid} of nprocs {nprocs} is out of range (nprocs 1..={}, pid < nprocs)",
                crate::types::MAX_PROCS
            )));
        }
        let forming = forming();
        // A timeout too far off to add to now is as good as none (a year).
        let deadline = Instant::now() + timeout.min(Duration::from_secs(365 * 24 * 3600));
        let mut table = relock(&forming.table);
        let filling = table
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Mutex::new(Filling {
                    group: Arc::new(Rendezvous::new(nprocs)),
                    nprocs,
                    joined: vec![false; nprocs as usize],
                    count: 0,
                    failed: None,
                }))
            })
            .clone();
        // A group's state changes only under the table's lock too (the one waiters sleep
        // on), so no change is missed between a waiter's look and its sleep.
        let fail_group = |table: &mut HashMap<GroupKey, Arc<Mutex<Filling>>>, f: &mut Filling, e: Error| {
            f.failed = Some(e.clone());
            table.remove(&key);
            forming.changed.notify_all();
            Err(e)
        };
        {
            let mut f = relock(&filling);
            if f.nprocs != nprocs {
                let why = format!(
                    "pthread initialize: pid {pid} joined {} with nprocs {nprocs}, but it was formed with nprocs {}",
                    key.describe(),
                    f.nprocs
                );
                return fail_group(&mut table, &mut f, Error::misuse(INITIALIZE, why));
            }
            if std::mem::replace(&mut f.joined[pid as usize], true) {
                let why = format!("pthread initialize: pid {pid} of {nprocs} joined {} twice", key.describe());
                return fail_group(&mut table, &mut f, Error::misuse(INITIALIZE, why));
            }
            f.count += 1;
            if f.count == nprocs {
                table.remove(&key);
                forming.changed.notify_all();
            }
        }
        loop {
            let mut f = relock(&filling);
            if let Some(outcome) = f.outcome(pid, cancel) {
                return outcome;
            }
            if let Err(e) = cancel.check() {
                let why = format!("pthread initialize: pid {pid} of {} was cancelled while the group formed", key.describe());
                let _ = fail_group(&mut table, &mut f, Error::peer_left(Some(pid), format!("{why}: {}", e.message())));
                return Err(e.context(why));
            }
            let now = Instant::now();
            if now >= deadline {
                let why = format!(
                    "pthread initialize: {} did not form within {} ms: pids {:?} of {nprocs} never joined \
                     (every thread must call it with the same nprocs and its own pid)",
                    key.describe(),
                    timeout.as_millis(),
                    f.missing()
                );
                return fail_group(&mut table, &mut f, Error::timeout(why));
            }
            drop(f);
            let slice = (deadline - now).min(crate::wait::BLOCK_SLICE);
            table = forming.changed.wait_timeout(table, slice).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }
    pub fn nprocs(&self) -> Pid {
        self.nprocs
    }

    /// `lpf_hook`: runs `spmd` with this thread as process `pid`, together with the
    /// other threads of the group (each passes its own args).
    pub fn hook(&self, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        let round = self.hooks.get() + 1;
        self.hooks.set(round);
        let shared = self.group.join(round);
        let config = match crate::config::Config::from_env() {
            Ok(c) => c,
            Err(e) => {
                // This process fails before it starts: the others must not wait for it.
                shared.barrier.depart();
                return Err(e);
            }
        };
        let free = config.max_procs.unwrap_or_else(|| crate::wait::cores() as Pid);
        let free_p = 1 + free.saturating_sub(self.nprocs) / self.nprocs;
        let engine = ShmEngine::boxed(shared, self.pid, patience_for(config.spin, self.nprocs), self.cancel.clone());
        run_process(engine, free_p, exec_threads_in, spmd, args)
    }
}
