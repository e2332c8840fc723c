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

pub mod barrier;

use crate::context::{run_process, Spmd};
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::queue::Request;
use crate::types::{Args, Pid, SyncAttr};
use barrier::{Barrier, Outcome};
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Engine name for `LPF_ENGINE` and probe tables.
pub const ENGINE_NAME: &str = "shm";

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
        let mut rounds = self.rounds.lock().unwrap_or_else(|e| e.into_inner());
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
}

impl ShmEngine {
    fn boxed(shared: Arc<Shared>, pid: Pid) -> Box<dyn Engine> {
        Box::new(ShmEngine { shared, pid, rehooks: 0 })
    }

    fn broken(&self) -> Error {
        Error::fatal(format!(
            "sync on process {}: a peer has left the section (returned from its SPMD function, \
             failed, or called sync a different number of times)",
            self.pid
        ))
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
        if sh.barrier.wait() == Outcome::Broken {
            return Err(self.broken());
        }
        // SAFETY: between the two barriers every process's published phase (and what
        // it borrows) is live and unchanged: its owner is blocked in this function.
        let peer = |q: Pid| unsafe { &*sh.published[q as usize].load(Acquire) };
        let result = match (0..sh.nprocs).find(|&q| std::mem::discriminant(peer(q)) != std::mem::discriminant(&mine)) {
            Some(q) => Err(Error::fatal(format!(
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
        if sh.barrier.wait() == Outcome::Broken {
            return Err(self.broken());
        }
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
            return Err(Error::fatal(format!(
                "process {} is the target of {incoming} messages in this superstep but reserved room for {} \
                 (resize_message_queue)",
                self.pid,
                mine.queue.capacity()
            )));
        }
        let mut first_error = None;
        for q in 0..sh.nprocs {
            for r in peer(q).queue.to_peer(self.pid) {
                if let Request::Put { src, dst_slot, dst_offset, size, .. } = *r {
                    let what = format_args!("put from process {q} into process {}", self.pid);
                    match mine.register.area(dst_slot).and_then(|a| a.range(dst_slot, dst_offset, size, what)) {
                        // `copy`, not `copy_nonoverlapping`: a put to self may overlap.
                        Ok(dst) => std::ptr::copy(src, dst, size),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
            }
        }
        for r in mine.queue.requests() {
            if let Request::Get { src_pid, src_slot, src_offset, dst, size } = *r {
                let what = format_args!("get by process {} from process {src_pid}", self.pid);
                match peer(src_pid).register.area(src_slot).and_then(|a| a.range(src_slot, src_offset, size, what)) {
                    Ok(src) => std::ptr::copy(src, dst, size),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Engine for ShmEngine {
    fn name(&self) -> &'static str {
        ENGINE_NAME
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
                    return Err(Error::fatal(format!(
                        "register_global is collective, but process {} registered {n} global slots in this \
                         superstep and process {q} registered {}",
                        self.pid,
                        theirs.len()
                    )));
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
        Ok(ShmEngine::boxed(self.shared.rehooks.join(self.rehooks), self.pid))
    }

    fn leave(&mut self) {
        self.shared.barrier.depart();
    }
}

/// The number of processors a root `exec` may use: `LPF_MAX_PROCS` when set, else the
/// machine's hardware threads.
pub fn max_procs_from_env() -> Result<Pid> {
    match std::env::var("LPF_MAX_PROCS") {
        Ok(v) => match v.trim().parse::<Pid>() {
            Ok(n) if n >= 1 => Ok(n.min(barrier::MAX_PROCS)),
            _ => Err(Error::fatal(format!("LPF_MAX_PROCS={v:?} is not a positive integer"))),
        },
        Err(_) => Ok(std::thread::available_parallelism().map(|n| n.get() as Pid).unwrap_or(1)),
    }
}

/// `exec` on the shared-memory engine: `min(p, free)` processes, pid 0 on the calling
/// thread and the others on new threads; the processors left over are divided among
/// the children as their `free_p`, for nested `exec`. Returns a fatal error if any
/// process failed; pid 0's output is in `args.output` either way.
pub fn exec_threads(p: Pid, free: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let free = free.clamp(1, barrier::MAX_PROCS);
    let n = p.clamp(1, free);
    let spare = free - n;
    let child_free = |pid: Pid| 1 + spare / n + Pid::from(pid < spare % n);
    let shared = Shared::new(n);
    let symbols = args.symbols;
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(n as usize - 1);
        for pid in 1..n {
            let theirs = shared.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("lpf-shm-{pid}"))
                .spawn_scoped(scope, move || {
                    run_process(ShmEngine::boxed(theirs, pid), child_free(pid), spmd, Args::for_peer(symbols))
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Processes that will never exist have left: the others' syncs fail.
                    for _ in pid..n {
                        shared.barrier.depart();
                    }
                    handles.push(scope.spawn(move || Err(Error::fatal(format!("cannot start process {pid}: {e}")))));
                    break;
                }
            }
        }
        let mut results = vec![run_process(ShmEngine::boxed(shared.clone(), 0), child_free(0), spmd, args)];
        results.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::fatal("process thread panicked")))));
        results
    });
    results.into_iter().find(|r| r.is_err()).unwrap_or(Ok(()))
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
}

/// How long `lpf_pthread_initialize` waits for the rest of its group, unless
/// `LPF_PTHREAD_TIMEOUT_MS` says otherwise.
pub const PTHREAD_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);

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
    failed: Option<String>,
}

impl Filling {
    fn missing(&self) -> Vec<Pid> {
        (0..self.nprocs).filter(|&p| !self.joined[p as usize]).collect()
    }

    /// What a waiter of this group returns now, if anything: the group formed or failed.
    fn outcome(&self, pid: Pid) -> Option<Result<ShmInit>> {
        if let Some(why) = &self.failed {
            return Some(Err(Error::fatal(why.clone())));
        }
        (self.count == self.nprocs)
            .then(|| Ok(ShmInit { group: self.group.clone(), pid, nprocs: self.nprocs, hooks: 0.into() }))
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

impl ShmInit {
    /// `lpf_pthread_initialize`: joins thread `pid` of `nprocs` to the unnamed group of
    /// that size, waiting for the others up to `LPF_PTHREAD_TIMEOUT_MS` (default 60 s).
    pub fn new(pid: Pid, nprocs: Pid) -> Result<ShmInit> {
        let timeout = match std::env::var("LPF_PTHREAD_TIMEOUT_MS") {
            Err(_) => PTHREAD_TIMEOUT_DEFAULT,
            Ok(v) => match v.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => Duration::from_millis(ms),
                _ => {
                    return Err(Error::fatal(format!(
                        "LPF_PTHREAD_TIMEOUT_MS={v:?} is not a positive number of milliseconds"
                    )))
                }
            },
        };
        Self::form(GroupKey::Unnamed(nprocs), pid, nprocs, timeout)
    }

    /// Joins thread `pid` of `nprocs` to the group named `key` (the job's identity: every
    /// thread of one job passes the same key, different jobs different keys). Returns
    /// once all `nprocs` threads have joined; fails after `timeout` naming the pids
    /// still missing, and at once for every thread of the group if a pid joins twice
    /// or threads disagree on `nprocs`.
    pub fn join(key: &str, pid: Pid, nprocs: Pid, timeout: Duration) -> Result<ShmInit> {
        Self::form(GroupKey::Job(key.to_owned()), pid, nprocs, timeout)
    }

    fn form(key: GroupKey, pid: Pid, nprocs: Pid, timeout: Duration) -> Result<ShmInit> {
        if nprocs == 0 || nprocs > barrier::MAX_PROCS || pid >= nprocs {
            return Err(Error::fatal(format!(
                "pthread initialize: pid {pid} of nprocs {nprocs} is out of range (nprocs 1..={}, pid < nprocs)",
                barrier::MAX_PROCS
            )));
        }
        let forming = forming();
        // A timeout too far off to add to now is as good as none (a year).
        let deadline = Instant::now() + timeout.min(Duration::from_secs(365 * 24 * 3600));
        let mut table = forming.table.lock().unwrap_or_else(|e| e.into_inner());
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
        let fail_group = |table: &mut HashMap<GroupKey, Arc<Mutex<Filling>>>, f: &mut Filling, why: String| {
            f.failed = Some(why.clone());
            table.remove(&key);
            forming.changed.notify_all();
            Err(Error::fatal(why))
        };
        {
            let mut f = filling.lock().unwrap_or_else(|e| e.into_inner());
            if f.nprocs != nprocs {
                let why = format!(
                    "pthread initialize: pid {pid} joined {} with nprocs {nprocs}, but it was formed with nprocs {}",
                    key.describe(),
                    f.nprocs
                );
                return fail_group(&mut table, &mut f, why);
            }
            if std::mem::replace(&mut f.joined[pid as usize], true) {
                let why = format!("pthread initialize: pid {pid} of {nprocs} joined {} twice", key.describe());
                return fail_group(&mut table, &mut f, why);
            }
            f.count += 1;
            if f.count == nprocs {
                table.remove(&key);
                forming.changed.notify_all();
            }
        }
        loop {
            let mut f = filling.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(outcome) = f.outcome(pid) {
                return outcome;
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
                return fail_group(&mut table, &mut f, why);
            }
            drop(f);
            table = forming.changed.wait_timeout(table, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
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
        let free = max_procs_from_env().unwrap_or(1);
        let free_p = 1 + free.saturating_sub(self.nprocs) / self.nprocs;
        run_process(ShmEngine::boxed(shared, self.pid), free_p, spmd, args)
    }
}
