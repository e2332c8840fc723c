//! The hybrid engine: several LPF processes (threads) per OS process, shared memory
//! among the threads of one OS process, a [`Network`] between OS processes: the TCP
//! mesh ([`crate::tcp`]) or MPI (`mpimsg` or `mpirma`, feature `mpi`).
//!
//! A sync is the shared-memory engine's two barriers (its [`Barrier`], which threads
//! may leave for good) around one network exchange: every thread publishes its
//! superstep and arrives; the first thread then runs the network's sync for the whole
//! group ([`Network::sync`], e.g. [`crate::tcp::exchange::sync`]) - requests among the
//! group's own threads become local copies inside the same write-conflict resolution,
//! requests to other OS processes travel coalesced per destination process - and stores
//! the outcome; the second barrier releases everyone with it. A thread that leaves
//! breaks the local barrier (its siblings' syncs fail) and tells the other OS processes
//! its group left, so nobody waits for it.

use crate::context::Spmd;
use crate::lock::relock;
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::network::Network;
use crate::register::Register;
use crate::shm::barrier::Barrier;
use crate::types::{Args, Pid, SyncAttr};
use crate::wait::{Cancel, LookCost, Patience};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering::*};
use std::sync::{Arc, Mutex};

/// Engine name for `LPF_ENGINE` and probe tables.
pub const ENGINE_NAME: &str = crate::config::EngineKind::Hybrid.name();

/// What the threads of one OS process share in one section.
struct Group {
    net: Mutex<Box<dyn Network>>,
    base: Pid,
    nprocs: Pid,
    /// The global pids of each OS process (its threads share memory).
    nodes: Vec<std::ops::Range<Pid>>,
    barrier: Barrier,
    /// The collective operation each thread is in, with what it brings to it (see
    /// [`Op`]): valid between the two barriers of the operation.
    published: Box<[CachePadded<AtomicPtr<Op<'static>>>]>,
    /// The result of an allgather.
    gather_out: Mutex<Vec<u64>>,
    /// The outcome of the current operation, written by thread 0 between the barriers.
    outcome: Mutex<Result<()>>,
    next: Mutex<Option<Arc<Group>>>,
    /// Whether the other OS processes were told this group left.
    gone: AtomicBool,
    failure: Mutex<String>,
    /// The OS process's cancel token (the network's): every thread of the group
    /// carries it.
    cancel: Cancel,
    /// How the group's threads wait at their barrier (each keeps its own copy).
    patience: Patience,
}

/// A collective operation of the group's threads, tagged so that threads in different
/// operations fail instead of misreading each other.
enum Op<'a> {
    Sync(&'a Superstep<'a>),
    /// The thread's values, and its register at an activation point.
    Allgather(&'a [u64], Option<&'a Register>),
    Rehook,
    /// The end of the section (only on networks that need [`Network::finish`]).
    Finish,
}

impl Op<'_> {
    fn name(&self) -> &'static str {
        match self {
            Op::Sync(_) => "sync",
            Op::Rehook => "rehook",
            Op::Finish => "the end of the section (returned from its SPMD function)",
            Op::Allgather(..) => "the allgather of a sync that registers global slots (register_global)",
        }
    }
}

impl Group {
    fn new(net: Box<dyn Network>) -> Arc<Group> {
        let (base, k, nprocs, nodes) = {
            let (o, me) = (net.offsets(), net.me());
            let nodes = o.windows(2).map(|w| w[0]..w[1]).collect();
            (o[me], o[me + 1] - o[me], o[o.len() - 1], nodes)
        };
        let (cancel, patience) = (net.cancel().clone(), net.host().patience(LookCost::SHARED_MEMORY));
        Arc::new(Group {
            cancel,
            patience,
            net: Mutex::new(net),
            base,
            nprocs,
            nodes,
            barrier: Barrier::new(k),
            published: (0..k).map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut()))).collect(),
            gather_out: Mutex::new(Vec::new()),
            outcome: Mutex::new(Ok(())),
            next: Mutex::new(None),
            gone: AtomicBool::new(false),
            failure: Mutex::new(String::new()),
        })
    }

    fn k(&self) -> usize {
        self.published.len()
    }

    /// The operation thread `t` published.
    ///
    /// # Safety
    /// Only between the two barriers of a collective operation, when every thread is
    /// blocked in it, its [`Op`] (and what that borrows) live and unchanged.
    unsafe fn op(&self, t: usize) -> &Op<'_> {
        // SAFETY: the caller is between the two barriers of an operation (this
        // function's contract), so thread t stored a pointer to its live Op before the
        // first barrier (Acquire pairs with its Release store) and keeps it unchanged
        // until the second.
        unsafe { &*self.published[t].load(Acquire) }
    }

    /// Thread 0's check that every thread of the group is in the same operation.
    ///
    /// # Safety
    /// As for [`Group::op`].
    unsafe fn agree(&self) -> Result<()> {
        // SAFETY: our caller is between the two barriers of the operation (this
        // function's contract, the same as `op`'s).
        let first = unsafe { self.op(0) };
        for t in 1..self.k() {
            // SAFETY: as above.
            let op = unsafe { self.op(t) };
            let (a, b) = (self.base, self.base + t as Pid);
            match (first, op) {
                (Op::Allgather(x, _), Op::Allgather(y, _)) if x.len() != y.len() => {
                    return Err(crate::register::unequal_global_registrations(a, x.len(), b, y.len()));
                }
                _ if std::mem::discriminant(first) == std::mem::discriminant(op) => {}
                (Op::Finish, _) | (_, Op::Finish) => {
                    let (gone, other, what) = if let Op::Finish = op { (b, a, first) } else { (a, b, op) };
                    return Err(Error::peer_left(Some(gone), format!(
                        "process {gone} has left the section (returned from its SPMD function) while process {other} is in \
                         {} (sync and rehook are collective: every process calls them the same number of times)",
                        what.name()
                    )));
                }
                _ => {
                    return Err(Error::out_of_step(format!(
                        "processes {a} and {b} are out of step: one is in {} and the other in {} (register_global, sync \
                         and rehook are collective: every process calls them in the same order)",
                        first.name(),
                        op.name()
                    )))
                }
            }
        }
        Ok(())
    }
}

struct HybridEngine {
    group: Arc<Group>,
    t: Pid,
    /// Collective-operation counter (thread 0's is the one the network sees).
    step: u64,
    patience: Patience,
    /// Whether this thread has departed the group's barrier (a cancelled wait does).
    departed: bool,
}

impl HybridEngine {
    fn new(group: Arc<Group>, t: Pid) -> HybridEngine {
        let patience = group.patience;
        HybridEngine { group, t, step: 0, patience, departed: false }
    }

    /// One collective operation of the group: every thread publishes `op` and arrives,
    /// thread 0 checks that all are in the same operation and runs `network` for the
    /// group (which may read every thread's op: [`Group::op`]), the second barrier
    /// releases everyone with its outcome.
    fn collective(&mut self, op: Op<'_>, network: impl FnOnce(&Group, u64) -> Result<()>) -> Result<()> {
        let g = self.group.clone();
        let pid = self.pid();
        g.published[self.t as usize].store(&op as *const Op as *mut Op<'static>, Release);
        // A cancelled thread departs from the first barrier (the siblings may be
        // anywhere); at the second the siblings only wait for thread 0's network
        // operation, which reads every thread's op and sees the same token.
        g.barrier.wait_for_peers(pid, &mut self.patience, &g.cancel, &mut self.departed)?;
        self.step += 1;
        if self.t == 0 {
            // SAFETY: between the two barriers, every thread of the group is blocked here.
            let r = unsafe { g.agree() }.and_then(|_| network(&g, self.step));
            *relock(&g.outcome) = r;
        }
        g.barrier.wait_for_peers(pid, &mut self.patience, &Cancel::NEVER, &mut self.departed)?;
        let r = relock(&g.outcome).clone();
        r.map_err(|e| {
            let what = match op {
                Op::Rehook => "rehook",
                Op::Finish => "the end of the section",
                _ => "sync",
            };
            crate::network::failed(what, self.pid(), e, &mut relock(&g.failure))
        })
    }
}

impl Engine for HybridEngine {
    fn name(&self) -> &'static str {
        ENGINE_NAME
    }
    fn pid(&self) -> Pid {
        self.group.base + self.t
    }
    fn nprocs(&self) -> Pid {
        self.group.nprocs
    }
    /// The threads of each OS process.
    fn nodes(&self) -> Vec<std::ops::Range<Pid>> {
        self.group.nodes.clone()
    }
    fn cancel(&self) -> &Cancel {
        &self.group.cancel
    }

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        self.collective(Op::Sync(step), |g, n| {
            // SAFETY: between the two barriers every thread of the group is blocked in
            // its sync (`agree` checked it is a sync), holding its superstep (register
            // and queue) unchanged and alive.
            let steps: Vec<&Superstep<'_>> = (0..g.k())
                .map(|t| match unsafe { g.op(t) } {
                    Op::Sync(step) => *step,
                    _ => unreachable!("agree checked that all are in a sync"),
                })
                .collect();
            relock(&g.net).sync(n, &steps)
        })
    }

    fn allgather(&mut self, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.gather(None, mine, all)
    }

    fn activate(&mut self, register: &Register, mine: &[u64], all: &mut [u64]) -> Result<()> {
        self.gather(Some(register), mine, all)
    }

    /// The group's threads meet and thread 0 waits for the other OS processes
    /// ([`Network::finish`]); a sibling that failed or is still syncing makes it fail.
    fn finish(&mut self) -> Result<()> {
        self.collective(Op::Finish, |g, _| relock(&g.net).finish())
    }

    fn fresh(&mut self) -> Result<Box<dyn Engine>> {
        self.collective(Op::Rehook, |g, n| {
            let next = relock(&g.net).fresh(n)?;
            *relock(&g.next) = Some(Group::new(next));
            Ok(())
        })?;
        let group = relock(&self.group.next).clone().ok_or_else(|| Error::fatal("rehook: no new section"))?;
        Ok(Box::new(HybridEngine::new(group, self.t)))
    }

    fn leave(&mut self) {
        let g = &self.group;
        if !std::mem::replace(&mut self.departed, true) {
            g.barrier.depart();
        }
        if !g.gone.swap(true, AcqRel) {
            let why = relock(&g.failure).clone();
            relock(&g.net).leave(&why);
        }
    }
}

impl HybridEngine {
    /// The allgather of a sync that registers global slots, for the group: plain
    /// (`register` None) or at the activation point (every thread's register).
    fn gather(&mut self, register: Option<&Register>, mine: &[u64], all: &mut [u64]) -> Result<()> {
        let len = mine.len();
        self.collective(Op::Allgather(mine, register), |g, n| {
            let mut values = Vec::with_capacity(len * g.k());
            let mut registers = Vec::with_capacity(g.k());
            for t in 0..g.k() {
                // SAFETY: between the two barriers every thread of the group is blocked
                // in this allgather (`agree` checked they are all in it), holding its
                // values and register unchanged and alive.
                let Op::Allgather(theirs, register) = (unsafe { g.op(t) }) else { unreachable!("agree checked it") };
                values.extend_from_slice(theirs);
                registers.extend(*register);
            }
            let mut out = vec![0u64; len * g.nprocs as usize];
            let mut net = relock(&g.net);
            if registers.len() == g.k() {
                net.activate(n, &registers, &values, len, &mut out)?;
            } else {
                net.allgather(n, &values, len, &mut out)?;
            }
            *relock(&g.gather_out) = out;
            Ok(())
        })?;
        all.copy_from_slice(&relock(&self.group.gather_out)[..all.len()]);
        Ok(())
    }
}

/// `hook` on the hybrid engine over the section `net` (just opened, on every OS
/// process): this thread is the OS process's first LPF process; the others run on new
/// threads (with no input or output).
/// `job_p` as in [`crate::hook::on_network`].
pub(crate) fn hook(net: Box<dyn Network>, job_p: Option<Pid>, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let group = Group::new(net);
    let (k, base) = (group.k() as Pid, group.base);
    let run = |t: Pid, args: Args<'_>| {
        crate::network::run_section_process(Box::new(HybridEngine::new(group.clone(), t)), job_p, spmd, args)
    };
    let symbols = args.symbols;
    let cannot_start = |t: Pid, e: std::io::Error| {
        Error::exhausted(format!("cannot start process {} (thread {t} of the {k} of this OS process): {e}", base + t))
    };
    std::thread::scope(|scope| {
        // Why a thread could not be started is kept here, not handed to another new
        // thread (which could not be started either: `scope.spawn` panics then); the
        // threads that will never exist have left.
        let name = |t: Pid| format!("lpf-hybrid-{}", base + t);
        let others = |t: Pid| run(t, Args::for_peer(symbols));
        let what = format_args!("{k} threads per process");
        let (threads, not_started) = crate::shm::start_processes(scope, k, &group.barrier, what, name, cannot_start, others);
        let mine = run(0, args);
        // The cause first: the others only saw a sibling missing.
        crate::shm::first_error(not_started.map(Err).into_iter().chain([mine]), threads)
    })
}
