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

use crate::context::{run_process, Spmd};
use crate::relock;
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::network::Network;
use crate::register::Register;
use crate::shm::barrier::Barrier;
use crate::types::{Args, Pid, SyncAttr};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::*};
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
    /// Each thread's superstep, valid between the two barriers of a sync.
    published: Box<[CachePadded<AtomicPtr<Superstep<'static>>>]>,
    /// The collective operation each thread is in (see [`Op`]), so that threads in
    /// different operations fail instead of misreading each other.
    ops: Box<[CachePadded<AtomicU64>]>,
    /// Each thread's values for an allgather (and its register at an activation
    /// point: valid between the two barriers), and the gathered result.
    gather_in: Box<[Mutex<Vec<u64>>]>,
    registers: Box<[CachePadded<AtomicPtr<Register>>]>,
    gather_out: Mutex<Vec<u64>>,
    /// The outcome of the current operation, written by thread 0 between the barriers.
    outcome: Mutex<Result<()>>,
    next: Mutex<Option<Arc<Group>>>,
    /// Whether the other OS processes were told this group left.
    gone: AtomicBool,
    failure: Mutex<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Sync,
    Allgather(usize),
    Rehook,
    /// The end of the section (only on networks that need [`Network::finish`]).
    Finish,
}

impl Op {
    fn code(self) -> u64 {
        match self {
            Op::Sync => 1,
            Op::Rehook => 2,
            Op::Allgather(n) => 3 | ((n as u64) << 2),
            Op::Finish => 4,
        }
    }
    fn name(code: u64) -> &'static str {
        match code & 3 {
            1 => "sync",
            2 => "rehook",
            0 => "the end of the section (returned from its SPMD function)",
            _ => "the allgather of a sync that registers global slots (register_global)",
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
        Arc::new(Group {
            net: Mutex::new(net),
            base,
            nprocs,
            nodes,
            barrier: Barrier::new(k),
            published: (0..k).map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut()))).collect(),
            ops: (0..k).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            gather_in: (0..k).map(|_| Mutex::new(Vec::new())).collect(),
            registers: (0..k).map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut()))).collect(),
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

    /// Thread 0's check that every thread of the group is in the same operation.
    fn agree(&self) -> Result<()> {
        let first = self.ops[0].load(Acquire);
        for t in 1..self.k() {
            let op = self.ops[t].load(Acquire);
            if op == first {
                continue;
            }
            let (a, b) = (self.base, self.base + t as Pid);
            let finish = Op::Finish.code();
            if op == finish || first == finish {
                let (gone, other, what) = if op == finish { (b, a, first) } else { (a, b, op) };
                return Err(Error::peer_left(Some(gone), format!(
                    "process {gone} has left the section (returned from its SPMD function) while process {other} is in \
                     {} (sync and rehook are collective: every process calls them the same number of times)",
                    Op::name(what)
                )));
            }
            if op & 3 == 3 && first & 3 == 3 {
                return Err(crate::register::unequal_global_registrations(a, (first >> 2) as usize, b, (op >> 2) as usize));
            }
            return Err(Error::out_of_step(format!(
                "processes {a} and {b} are out of step: one is in {} and the other in {} (register_global, sync and \
                 rehook are collective: every process calls them in the same order)",
                Op::name(first),
                Op::name(op)
            )));
        }
        Ok(())
    }
}

struct HybridEngine {
    group: Arc<Group>,
    t: Pid,
    /// Collective-operation counter (thread 0's is the one the network sees).
    step: u64,
}

impl HybridEngine {
    /// One collective operation of the group: every thread arrives, thread 0 checks that
    /// all are in the same operation and runs `network` for the group, the second
    /// barrier releases everyone with its outcome.
    fn collective(&mut self, op: Op, network: impl FnOnce(&Group, u64) -> Result<()>) -> Result<()> {
        let g = self.group.clone();
        g.ops[self.t as usize].store(op.code(), Release);
        g.barrier.wait_for_peers(self.pid())?;
        self.step += 1;
        if self.t == 0 {
            let r = g.agree().and_then(|_| network(&g, self.step));
            *relock(&g.outcome) = r;
        }
        g.barrier.wait_for_peers(self.pid())?;
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

    fn sync(&mut self, step: &Superstep<'_>, _attr: SyncAttr) -> Result<()> {
        self.group.published[self.t as usize].store(step as *const Superstep as *mut Superstep<'static>, Release);
        self.collective(Op::Sync, |g, n| {
            // SAFETY: between the two barriers every thread of the group is blocked in
            // its sync (`agree` checked it is a sync), holding its superstep (register
            // and queue) unchanged and alive.
            let steps: Vec<&Superstep<'_>> = (0..g.k()).map(|i| unsafe { &*g.published[i].load(Acquire) }).collect();
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
        Ok(Box::new(HybridEngine { group, t: self.t, step: 0 }))
    }

    fn leave(&mut self) {
        let g = &self.group;
        g.barrier.depart();
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
        *relock(&self.group.gather_in[self.t as usize]) = mine.to_vec();
        let reg = register.map_or(std::ptr::null_mut(), |r| r as *const Register as *mut Register);
        self.group.registers[self.t as usize].store(reg, Release);
        self.collective(Op::Allgather(len), |g, n| {
            let mut values = Vec::with_capacity(len * g.k());
            for t in 0..g.k() {
                values.extend_from_slice(&relock(&g.gather_in[t]));
            }
            let mut out = vec![0u64; len * g.nprocs as usize];
            let regs: Vec<*mut Register> = g.registers.iter().map(|r| r.load(Acquire)).collect();
            let mut net = relock(&g.net);
            if regs.iter().all(|r| !r.is_null()) {
                // SAFETY: between the two barriers every thread of the group is blocked
                // in this activation (`agree` checked they are all in it), holding its
                // register unchanged and alive.
                let registers: Vec<&Register> = regs.iter().map(|&r| unsafe { &*r }).collect();
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
pub(crate) fn hook(net: Box<dyn Network>, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let group = Group::new(net);
    let k = group.k() as Pid;
    let symbols = args.symbols;
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(k as usize - 1);
        // Why a thread could not be started: kept here, not handed to another new
        // thread (which could not be started either: `scope.spawn` panics then).
        let room = crate::shm::check_room_for_threads(k as usize - 1, format_args!("{k} threads per process"));
        let mut not_started: Option<Error> = None;
        if let Err(e) = room {
            for _ in 1..k {
                group.barrier.depart();
            }
            not_started = Some(e);
        }
        for t in (1..k).take_while(|_| not_started.is_none()) {
            let engine = HybridEngine { group: group.clone(), t, step: 0 };
            let spawned = std::thread::Builder::new()
                .name(format!("lpf-hybrid-{}", group.base + t))
                .spawn_scoped(scope, move || run_process(Box::new(engine), 1, spmd, Args::for_peer(symbols)));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads that will never exist have left.
                    for _ in t..k {
                        group.barrier.depart();
                    }
                    not_started = Some(Error::exhausted(format!(
                        "cannot start process {} (thread {t} of the {k} of this OS process): {e}",
                        group.base + t
                    )));
                    break;
                }
            }
        }
        let mine = run_process(Box::new(HybridEngine { group: group.clone(), t: 0, step: 0 }), 1, spmd, args);
        // The cause first: the others only saw a sibling missing.
        let mut all: Vec<Result<()>> = not_started.map(Err).into_iter().collect();
        all.push(mine);
        all.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::fatal("process thread panicked")))));
        all
    });
    results.into_iter().find(|r| r.is_err()).unwrap_or(Ok(()))
}
