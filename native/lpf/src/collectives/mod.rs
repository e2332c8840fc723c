//! Collective communication on top of the LPF primitives: broadcast, reduce, allreduce,
//! gather, scatter, allgather (equal and uneven parts) and alltoall, with user
//! reduction operators.
//!
//! # Resources
//!
//! A [`Collectives`] object belongs to one context (like the reference's `lpf_coll_t`).
//! It owns a scratch buffer registered as one **global** slot, and during each call it
//! lends the caller's buffer to LPF as one **local** slot (registered and deregistered
//! within the call). So it needs, on top of whatever the program uses itself:
//!
//! * [`Collectives::MEMORY_SLOTS`] = 2 memory slots;
//! * [`Collectives::messages`]`(p)` = 2(p - 1) messages per superstep: in any superstep
//!   of any collective a process issues at most p - 1 puts/gets and is the target of at
//!   most p - 1 (2(p - 1) counts both, so it is enough whichever way an engine counts).
//!
//! LPF's resize calls are not additive (the last one before a sync wins), so
//! [`Collectives::with_config`] takes the program's own needs ([`Config::user_slots`],
//! [`Config::user_msgs`]) and makes *one* pair of resize calls for the sum. A program
//! that resizes again later must add `MEMORY_SLOTS` and `messages(p)` to its request.
//! [`Collectives::attach`] does no resize at all, for programs that already did.
//!
//! # Calls
//!
//! Every call is collective: all processes make the same calls in the same order, with
//! the same root, the same sizes and the same operator. Requests the program queued
//! before a call are allowed; they complete in the call's first sync (at p = 1 a call
//! does not sync at all). On return, every message of the call is complete and the
//! caller's buffers may be reused. Misuse that a single process can see (a buffer of the
//! wrong length, a root out of range) panics, which makes the process fail and its
//! peers' syncs return a fatal error; a call on more than [`Config::max_bytes`] bytes
//! returns `OutOfMemory` on every process and has no effect.
//!
//! # Algorithms and their BSP costs
//!
//! n is the size in bytes of the vector a call is about (see each method), p the
//! number of processes, g and l the machine's BSP parameters, c the local cost of
//! combining one byte with a reduction operator. A superstep in which every process
//! sends and receives at most h bytes costs h·g + l.
//!
//! * **allgather, gather, scatter, alltoall**: one superstep, h = (p - 1)/p · n, which
//!   is optimal in both h and the number of supersteps; no other algorithm is used.
//!   Multi-round schemes (recursive doubling, Bruck, trees) exist to cut the *number of
//!   messages* a process sends, which matters in message-passing (LogP) models; in BSP
//!   each extra round costs a whole l and they move at least as many bytes.
//! * **broadcast**: *direct* (one superstep: everyone reads the vector from the root,
//!   h = (p - 1)·n at the root) for small n; *two-phase* (scatter then allgather, two
//!   supersteps, h = (p - 1)/p · n each) for large n.
//! * **reduce, allreduce**: *direct* (one superstep: every vector goes to the root /
//!   to everyone, h = (p - 1)·n, then a local combine of p vectors) for small n;
//!   *two-phase* (reduce-scatter: process q combines block q of all vectors; then a
//!   gather to the root / an allgather; two supersteps with h = (p - 1)/p · n each)
//!   for large n.
//!
//! The switch is where the predicted costs cross (see [`Collectives::switch_bytes`]),
//! using g and l from `probe` unless a [`CostModel`] is given. Binomial trees are not
//! used: a tree takes ⌈log₂ p⌉ supersteps of h = n each, ⌈log₂ p⌉·(n·g + l); for p ≥ 3
//! that is never below two-phase's 2(p - 1)/p·n·g + 2l, and for small n, where the
//! l terms dominate, the one-superstep direct algorithm beats it (its h = (p - 1)·n is
//! still below l/g there). For p = 2 a tree *is* the direct algorithm.
//!
//! Reductions combine in process order, `x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}` (left to right), on
//! every path, so the operator needs to be associative but not commutative, and the
//! result is bitwise the same whichever algorithm ran (also for floating point).
//!
//! # Hierarchical machines
//!
//! [`Context::nodes`] says which processes share memory. When there are several nodes
//! and some hold more than one process (the hybrid engine: threads of several OS
//! processes), the flat algorithms send the *same* bytes over the network once per
//! process of the receiving node: a flat direct broadcast moves the vector k times into
//! a node of k processes, a flat allgather of combined blocks (the second phase of
//! two-phase allreduce) k times each block. The hierarchical algorithms
//! ([`Algorithm::Hierarchical`]) move each byte into each node once and spread it inside
//! the node by shared-memory copies, for one more superstep (in LPF every sync is global,
//! so an intra-node superstep still costs l). They are chosen per call under a node
//! cost model ([`Collectives::predicted_node_cost`]): network bytes per node at g,
//! shared-memory copies at c.
//!
//! What stays flat, and why:
//!
//! * **The fold order.** A leader does *not* pre-combine its node's vectors and then
//!   combine the partial results between nodes: `(x_0 ⊕ x_1) ⊕ (x_2 ⊕ x_3)` is not
//!   bitwise `((x_0 ⊕ x_1) ⊕ x_2) ⊕ x_3` for floating point, and the guarantee above
//!   would break. Every hierarchical path folds each element left to right in one place,
//!   as the flat algorithms do, so the results are bitwise identical; the hierarchy
//!   removes replicated transfers, not the transfer of the individual vectors.
//! * **reduce** (to one root): the flat algorithms already move each byte across the
//!   network at most once (each vector once to the root, or each block once to its
//!   combiner and each combined block once to the root), so there is no replication to
//!   remove, and without pre-combining the hierarchy could only add supersteps.
//! * **allgather, gather, scatter, alltoall**: gather, scatter and alltoall move distinct
//!   bytes between every pair, nothing to remove. Allgather replicates (node i receives
//!   every remote part k_i times); a hierarchical allgather (remote parts to one process
//!   per node, then a shared-memory superstep) saves (k_i - 1)·(p - k_i)/p·n bytes of
//!   network per node for one l plus the copies: on the measured hybrid 2 × 2 (l ≈ 1 ms,
//!   g ≈ 8·10⁻¹⁰ s/B) it pays only above n ≈ 2l/g ≈ 2.5 MB, beyond what allgather is used
//!   for here (PageRank vectors are gathered by the get-plan exchange at that size), so it
//!   is not implemented.

mod algorithms;
mod cost;

pub use cost::CostModel;

use crate::context::{Context, Registered};
use crate::error::{Error, Result};
use crate::types::{Memslot, Pid, Pod, SYNC_DEFAULT};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::mem::{size_of, ManuallyDrop};

/// The alignment (and allocation unit) of the scratch buffer.
const LINE: usize = 64;

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; LINE]);

// SAFETY: 64 bytes with no padding; every bit pattern is valid.
unsafe impl Pod for Line {}

/// The collectives of this module, for [`Collectives::algorithm`] and friends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
}

/// Which algorithm a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// p = 1: local copies only, no sync.
    Local,
    /// One superstep.
    Direct,
    /// Two supersteps with h = (p - 1)/p · n each (scatter or reduce-scatter, then
    /// allgather or gather).
    TwoPhase,
    /// Broadcast and allreduce on a machine of several nodes (see [`Context::nodes`])
    /// of which some hold more than one process: data crosses between nodes once per
    /// node and spreads inside a node by shared-memory copies. The [`Inter`] part says
    /// how it moves between nodes; see [`Collectives::broadcast`] and
    /// [`Collectives::allreduce`] for the algorithms and their costs.
    Hierarchical(Inter),
}

/// How a hierarchical algorithm moves data between nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Inter {
    /// Whole vectors, one superstep.
    Direct,
    /// Blocks, two supersteps: scatter then allgather (broadcast), or reduce-scatter
    /// then allgather (allreduce).
    TwoPhase,
}

/// Whether [`Collectives`] may use [`Algorithm::Hierarchical`]; see
/// [`Collectives::set_hierarchy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Hierarchy {
    /// When the node cost model predicts it is cheaper than the flat algorithm.
    #[default]
    Auto,
    /// Never: always the flat (direct or two-phase) algorithm.
    Never,
    /// Always when the machine is hierarchical (for benchmarks and tests).
    Always,
}

/// How to set up a [`Collectives`].
#[derive(Clone, Debug)]
pub struct Config {
    /// The largest vector, in bytes, any call will be about (the `n` of each method).
    pub max_bytes: usize,
    /// Memory slots the program needs itself, added to ours in the one resize call.
    pub user_slots: usize,
    /// Messages per superstep the program needs itself, added likewise.
    pub user_msgs: usize,
    /// Algorithm selection parameters; `None`: [`CostModel::from_probe`].
    pub cost: Option<CostModel>,
}

impl Config {
    pub fn new(max_bytes: usize) -> Config {
        Config { max_bytes, user_slots: 0, user_msgs: 0, cost: None }
    }
}

/// The collectives of one context: a scratch buffer registered once, and the cost
/// model that picks algorithms. See the [module documentation](self).
pub struct Collectives {
    p: usize,
    me: usize,
    /// The scratch buffer's registration; dropped (which withdraws the slot from
    /// communication) before the memory is freed.
    scratch: ManuallyDrop<Registered<'static, Line>>,
    base: *mut u8,
    /// The scratch's allocation; its size is the scratch's size.
    layout: Layout,
    max_bytes: usize,
    cost: CostModel,
    /// `ctx.nodes()`, as usize ranges.
    nodes: Vec<std::ops::Range<usize>>,
    /// The distinct node sizes and how many nodes have each (for the node cost model).
    node_sizes: Vec<(usize, usize)>,
    hierarchy: Hierarchy,
}

impl Drop for Collectives {
    fn drop(&mut self) {
        // SAFETY: dropped exactly once, here; afterwards no put or get can reach the
        // memory (the slot is dead or deregistered), so it can be freed.
        unsafe {
            ManuallyDrop::drop(&mut self.scratch);
            dealloc(self.base, self.layout);
        }
    }
}

/// Block q of the block distribution of `n` elements over `p` parts, as (first element,
/// elements): `start(q)..start(q + 1)` with `start(q) = ⌊q·n/p⌋` (sizes differ by at most one).
fn block(q: usize, n: usize, p: usize) -> (usize, usize) {
    let start = |q: usize| ((q as u128 * n as u128) / p as u128) as usize;
    (start(q), start(q + 1) - start(q))
}

fn bytes_of<T>(n: usize) -> usize {
    n * size_of::<T>()
}

/// Registers `len` elements at `ptr` as a local slot for the duration of `f`.
///
/// # Safety
/// The memory must stay valid for `f`; if `f` makes LPF write into it (gets), the
/// caller must hold it mutably.
unsafe fn lend<T: Pod, R>(
    ctx: &mut Context,
    ptr: *const T,
    len: usize,
    f: impl FnOnce(&mut Context, Memslot) -> Result<R>,
) -> Result<R> {
    let slot = ctx.register_local_raw(ptr as *mut u8, bytes_of::<T>(len))?;
    let r = f(ctx, slot);
    let d = ctx.deregister(slot);
    let v = r?;
    d?;
    Ok(v)
}

/// [`lend`] of a slice the caller holds mutably, which LPF may read (puts) and write
/// (gets).
fn lend_mut<T: Pod, R>(ctx: &mut Context, data: &mut [T], f: impl FnOnce(&mut Context, Memslot) -> Result<R>) -> Result<R> {
    // SAFETY: `data` is held mutably for the whole call, so nothing else reads or writes it while LPF does.
    unsafe { lend(ctx, data.as_mut_ptr(), data.len(), f) }
}

fn sync(ctx: &mut Context) -> Result<()> {
    ctx.sync(SYNC_DEFAULT)
}

impl Collectives {
    /// Memory slots a `Collectives` uses: its scratch (global) and one local slot
    /// during each call.
    pub const MEMORY_SLOTS: usize = 2;

    /// Messages per superstep a `Collectives` needs at `p` processes: 2(p - 1).
    pub fn messages(p: Pid) -> usize {
        2 * (p as usize).saturating_sub(1)
    }

    /// Resizes the register to `MEMORY_SLOTS` and the queue to `messages(p)` (nothing
    /// for the program itself), then as [`Collectives::attach`]. Two syncs.
    pub fn new(ctx: &mut Context, max_bytes: usize) -> Result<Collectives> {
        Self::with_config(ctx, &Config::new(max_bytes))
    }

    /// Resizes the register to `cfg.user_slots + MEMORY_SLOTS` and the queue to
    /// `cfg.user_msgs + messages(p)`, syncs, then as [`Collectives::attach`]. Two syncs.
    pub fn with_config(ctx: &mut Context, cfg: &Config) -> Result<Collectives> {
        let slots = cfg.user_slots.checked_add(Self::MEMORY_SLOTS);
        let msgs = cfg.user_msgs.checked_add(Self::messages(ctx.nprocs()));
        let (Some(slots), Some(msgs)) = (slots, msgs) else {
            return Err(Error::out_of_memory("Collectives: the requested capacities overflow"));
        };
        ctx.resize_memory_register(slots)?;
        ctx.resize_message_queue(msgs)?;
        sync(ctx)?;
        Self::attach(ctx, cfg)
    }

    /// Allocates and registers the scratch buffer and syncs once (a global slot is
    /// usable after the next sync); no resize. The register must have room for
    /// `MEMORY_SLOTS` more slots and the queue for `messages(p)` more messages, as the
    /// program's own resize calls arranged. Collective.
    ///
    /// The scratch holds max(`max_bytes` + 64·p, p·m) bytes, where m is the largest
    /// vector a direct reduce or allreduce runs on (below the switch point).
    pub(crate) fn attach(ctx: &mut Context, cfg: &Config) -> Result<Collectives> {
        let cost = cfg.cost.map_or_else(|| CostModel::from_probe(ctx), Ok)?;
        let p = ctx.nprocs() as usize;
        let me = ctx.pid() as usize;
        let nodes: Vec<std::ops::Range<usize>> = ctx.nodes().into_iter().map(|r| r.start as usize..r.end as usize).collect();
        // Non-empty ranges, each starting where the last ended, from 0 to p.
        let covers = nodes.iter().try_fold(0, |at, r| (r.start == at && r.end > at).then_some(r.end)) == Some(p);
        assert!(covers, "Collectives: engine {} describes its nodes as {nodes:?}, which is not a partition of 0..{p} into consecutive ranges", ctx.engine_name());
        let mut node_sizes: Vec<(usize, usize)> = Vec::new();
        for r in &nodes {
            match node_sizes.iter_mut().find(|(k, _)| *k == r.len()) {
                Some((_, count)) => *count += 1,
                None => node_sizes.push((r.len(), 1)),
            }
        }
        let oom = || Error::out_of_memory(format!("Collectives: cannot allocate scratch for max_bytes = {}", cfg.max_bytes));
        let direct_cap = [Collective::Reduce, Collective::Allreduce]
            .iter()
            .map(|&k| cost::switch_bytes(cost, p, k).map_or(cfg.max_bytes, |s| s.saturating_sub(1).min(cfg.max_bytes)))
            .max()
            .unwrap_or(0);
        let two_phase = cfg.max_bytes.checked_add(p.checked_mul(LINE).ok_or_else(oom)?).ok_or_else(oom)?;
        let direct = if p > 1 { p.checked_mul(direct_cap).ok_or_else(oom)? } else { 0 };
        let scratch_bytes = two_phase.max(direct).checked_next_multiple_of(LINE).ok_or_else(oom)?;
        let layout = Layout::from_size_align(scratch_bytes, LINE).map_err(|_| oom())?;
        // SAFETY: the size is at least 64 (p >= 1), so not zero.
        let base = unsafe { alloc_zeroed(layout) };
        if base.is_null() {
            return Err(oom());
        }
        // SAFETY: a fresh allocation of scratch_bytes / 64 lines, freed only in Drop,
        // after the registration that borrows it is gone.
        let lines: &'static mut [Line] = unsafe { std::slice::from_raw_parts_mut(base.cast(), scratch_bytes / LINE) };
        let scratch = match ctx.register_global(lines) {
            Ok(r) => r,
            Err(e) => {
                // SAFETY: allocated above with `layout`; the failed registration keeps no pointer.
                unsafe { dealloc(base, layout) };
                return Err(e);
            }
        };
        let coll = Collectives {
            p,
            me,
            scratch: ManuallyDrop::new(scratch),
            base,
            layout,
            max_bytes: cfg.max_bytes,
            cost,
            nodes,
            node_sizes,
            hierarchy: Hierarchy::Auto,
        };
        sync(ctx)?;
        Ok(coll)
    }

    /// Deregisters the scratch (collective, like every `deregister` of a global slot)
    /// and frees it. Dropping a `Collectives` instead frees the memory too, but its
    /// global slot id stays taken until the context ends.
    pub fn release(self, ctx: &mut Context) -> Result<()> {
        ctx.deregister(self.scratch.slot())
    }

    pub fn cost_model(&self) -> CostModel {
        self.cost
    }

    /// The bytes a call may be about at most ([`Config::max_bytes`]).
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The size of the scratch buffer in bytes.
    pub fn scratch_bytes(&self) -> usize {
        self.layout.size()
    }
    /// The nodes (processes that share memory) as `ctx.nodes()` described them when
    /// this object was made.
    pub fn nodes(&self) -> &[std::ops::Range<usize>] {
        &self.nodes
    }

    /// Whether the machine is hierarchical: more than one node, and some node with more
    /// than one process. Only then can [`Algorithm::Hierarchical`] run.
    pub fn is_hierarchical(&self) -> bool {
        self.nodes.len() > 1 && self.nodes.len() < self.p
    }

    /// Sets when broadcast and allreduce use [`Algorithm::Hierarchical`] (default
    /// [`Hierarchy::Auto`]). Like every call, collective: every process must set the
    /// same policy before the same call.
    pub fn set_hierarchy(&mut self, h: Hierarchy) {
        self.hierarchy = h;
    }

    pub fn hierarchy(&self) -> Hierarchy {
        self.hierarchy
    }

    fn check_size(&self, what: &str, bytes: usize) -> Result<()> {
        if bytes > self.max_bytes {
            return Err(Error::out_of_memory(format!(
                "{what} on {bytes} bytes exceeds the max_bytes = {} this Collectives was made for",
                self.max_bytes
            )));
        }
        Ok(())
    }

    fn check_scratch(&self, what: &str, bytes: usize) -> Result<()> {
        if bytes > self.scratch_bytes() {
            return Err(Error::out_of_memory(format!(
                "{what} needs {bytes} bytes of scratch, more than the {} allocated (elements this large need a \
                 larger max_bytes)",
                self.scratch_bytes()
            )));
        }
        Ok(())
    }

    fn slot(&self) -> Memslot {
        self.scratch.slot()
    }

    /// The scratch from byte `offset` on, as `len` elements of `T`.
    ///
    /// # Safety
    /// Only between syncs; the regions used at the same time must not overlap.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part<T: Pod>(&self, offset: usize, len: usize) -> &mut [T] {
        debug_assert!(offset + bytes_of::<T>(len) <= self.scratch_bytes());
        debug_assert!(offset.is_multiple_of(std::mem::align_of::<T>()));
        std::slice::from_raw_parts_mut(self.base.add(offset).cast::<T>(), len)
    }

    fn check_type<T: Pod>() {
        assert!(std::mem::align_of::<T>() <= LINE, "collectives support element alignments up to {LINE}");
    }

    fn check_root(&self, root: Pid) {
        assert!((root as usize) < self.p, "collective: root {root} is not below nprocs {}", self.p);
    }

    /// Broadcast: the root's `data` is copied into every process's `data` (all of the
    /// same length; n = its size in bytes).
    ///
    /// * direct: 1 superstep, h = (p - 1)·n (the root sends n to each other process);
    ///   local work n (the root copies `data` into its scratch).
    /// * two-phase: 2 supersteps, h = (p - 1)/p·n in each (each process fetches its
    ///   block from the root, then every block from its owner); local work n at the
    ///   root, n/p elsewhere. Cost 2(p - 1)/p·n·g + 2l; chosen when that is below
    ///   (p - 1)·n·g + l, i.e. never at p ≤ 2.
    ///
    /// On a hierarchical machine (m nodes, node i of k_i processes; the root's node is
    /// represented by the root, every other node by its first process):
    ///
    /// * hierarchical, direct between nodes: 2 supersteps. (1) each other node's
    ///   representative fetches the vector from the root (network: H = (m - 1)·n out of
    ///   the root's node, n into each other node) while the root's node mates fetch it
    ///   from the root (shared memory: (k_r - 1)·n); (2) the other nodes' members fetch
    ///   it from their representative (shared memory: (k_i - 1)·n). Flat direct moves
    ///   (p - k_r)·n out of the root's node and k_i·n into node i: the same vector k_i
    ///   times.
    /// * hierarchical, two-phase between nodes: 3 supersteps. (1) representative j
    ///   fetches block j of m from the root, (2) each representative fetches the other
    ///   blocks from their representatives (network: H = (m - 1)/m·n per node in each),
    ///   (3) members fetch the vector from their representative (shared memory).
    ///   Flat two-phase's allgather moves k_i·(p - k_i)/p·n into node i instead.
    pub fn broadcast<T: Pod>(&mut self, ctx: &mut Context, root: Pid, data: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        self.check_root(root);
        let n = bytes_of::<T>(data.len());
        self.check_size("broadcast", n)?;
        self.broadcast_by(ctx, root, data, n)
    }

    /// Reduce: the root's `data` becomes `x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}` element by element,
    /// where x_q is process q's `data` and `op(a, b)` does `a = a ⊕ b`; the other
    /// processes' `data` is left unchanged. n = the size of `data` in bytes.
    ///
    /// * direct: 1 superstep, h = (p - 1)·n (all arrives at the root); local work
    ///   (p - 1)·n combined at the root. Scratch p·n.
    /// * two-phase: reduce-scatter (process q receives block q of every vector and
    ///   combines them, (p - 1)/p·n work) then a gather of the combined blocks to the
    ///   root: 2 supersteps, h = (p - 1)/p·n each.
    ///
    /// Two-phase is chosen when 2(p - 1)/p·n·g + (p - 1)/p·n·c + 2l is below
    /// (p - 1)·n·(g + c) + l.
    pub fn reduce<T: Pod>(&mut self, ctx: &mut Context, root: Pid, data: &mut [T], op: impl Fn(&mut T, &T)) -> Result<()> {
        self.reduction(ctx, Some(root), data, &op)
    }

    /// Allreduce: every process's `data` becomes `x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}` (see
    /// [`Collectives::reduce`]). n = the size of `data` in bytes.
    ///
    /// * direct: 1 superstep, h = (p - 1)·n (each sends its vector to everyone); local
    ///   work (p - 1)·n combined on every process. Cost (p - 1)·n·(g + c) + l: for a few
    ///   words this is one l, the least any allreduce can cost.
    /// * two-phase: reduce-scatter then allgather: 2 supersteps, h = (p - 1)/p·n each,
    ///   local work (p - 1)/p·n. Cost 2(p - 1)/p·n·g + (p - 1)/p·n·c + 2l.
    ///
    /// On a hierarchical machine (m nodes, node i of k_i processes, its leader its first
    /// process; H = network bytes in or out of a node, L = bytes copied inside it):
    ///
    /// * hierarchical, direct between nodes: 2 supersteps. (1) every process puts its
    ///   vector into every leader's scratch: H = max(k_i·(m - 1)·n out, (p - k_i)·n in),
    ///   L = (k_i - 1)·n; each leader folds all p vectors in pid order, as flat direct
    ///   does ((p - 1)·n work); (2) members fetch the result from their leader, L =
    ///   (k_i - 1)·n. Flat direct has H = k_i·(p - k_i)·n: every vector enters a node
    ///   once per process there.
    /// * hierarchical, two-phase between nodes: 3 supersteps. (1) the flat
    ///   reduce-scatter (H = k_i·(p - k_i)/p·n; block q folded on process q in pid
    ///   order, so bitwise as flat); (2) every process fetches its node mates' combined
    ///   blocks (shared memory) and each leader every other node's blocks (network:
    ///   H = max((p - k_i)/p·n in, k_i·(m - 1)/p·n out)); (3) members fetch the other
    ///   nodes' blocks from their leader (L = (k_i - 1)·(p - k_i)/p·n). Flat two-phase's
    ///   allgather has H = k_i·(p - k_i)/p·n instead of (p - k_i)/p·n.
    pub fn allreduce<T: Pod>(&mut self, ctx: &mut Context, data: &mut [T], op: impl Fn(&mut T, &T)) -> Result<()> {
        self.reduction(ctx, None, data, &op)
    }

    /// Scatter: the root's `src` (p·k elements, ignored elsewhere) is cut into p
    /// blocks of k = `dst.len()` elements; process q receives block q in `dst`.
    /// n = p·k elements in bytes. 1 superstep, h = (p - 1)/p·n at the root; local work
    /// n/p per process.
    pub fn scatter<T: Pod>(&mut self, ctx: &mut Context, root: Pid, src: &[T], dst: &mut [T]) -> Result<()> {
        let kb = self.check_rooted::<T>("scatter", root, dst.len(), src.len(), ["src", "dst"])?;
        self.scatter_by(ctx, root as usize, src, dst, kb)
    }

    /// Gather: process q's `src` (k elements, the same k everywhere) lands in block q
    /// of the root's `dst` (p·k elements; ignored elsewhere). n = p·k elements in bytes.
    /// 1 superstep, h = (p - 1)/p·n at the root; local work n/p per process.
    pub fn gather<T: Pod>(&mut self, ctx: &mut Context, root: Pid, src: &[T], dst: &mut [T]) -> Result<()> {
        let kb = self.check_rooted::<T>("gather", root, src.len(), dst.len(), ["dst", "src"])?;
        self.gather_by(ctx, root as usize, src, dst, kb)
    }

    /// The checks of [`Collectives::scatter`] and [`Collectives::gather`] (`what`),
    /// whose blocks are `k` elements and whose root's buffer `names[0]` (of `whole`
    /// elements; `names[1]` is the other) holds p of them: returns the bytes of a block.
    fn check_rooted<T: Pod>(&self, what: &str, root: Pid, k: usize, whole: usize, names: [&str; 2]) -> Result<usize> {
        Self::check_type::<T>();
        self.check_root(root);
        if self.me == root as usize {
            let [whole_name, block_name] = names;
            assert_eq!(whole, self.p * k, "{what}: the root's {whole_name} must hold nprocs * {block_name}.len() elements");
        }
        let kb = bytes_of::<T>(k);
        self.check_size(what, self.p * kb)?;
        Ok(kb)
    }

    /// Allgather: process q's `src` (k elements, the same k everywhere) lands in block
    /// q of every process's `dst` (p·k elements). n = p·k elements in bytes.
    /// 1 superstep, h = (p - 1)/p·n; local work 2n/p (own block into scratch and `dst`).
    pub fn allgather<T: Pod>(&mut self, ctx: &mut Context, src: &[T], dst: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        let (p, me) = (self.p, self.me);
        let k = src.len();
        assert_eq!(dst.len(), p * k, "allgather: dst must hold nprocs * src.len() elements");
        dst[me * k..(me + 1) * k].copy_from_slice(src);
        self.allgather_parts(ctx, "allgather", dst, &|q| (q * k, k))
    }

    /// Allgather of uneven parts, in place: `data` is the whole vector on every process,
    /// process q owns `counts[q]` elements at offset `counts[0] + … + counts[q - 1]`; on
    /// return every process holds every part. n = `data.len()` elements in bytes.
    /// 1 superstep, h = max over q of (n - part of q) received, and the own part sent to
    /// p - 1 processes; local work: the own part once (into the scratch).
    pub fn allgatherv<T: Pod>(&mut self, ctx: &mut Context, counts: &[usize], data: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        assert_eq!(counts.len(), self.p, "allgatherv: counts must have nprocs entries");
        let mut offsets = Vec::with_capacity(self.p + 1);
        offsets.push(0usize);
        for &c in counts {
            offsets.push(offsets.last().unwrap().checked_add(c).expect("allgatherv: counts overflow"));
        }
        assert_eq!(offsets[self.p], data.len(), "allgatherv: counts must add up to data.len()");
        self.allgather_parts(ctx, "allgatherv", data, &|q| (offsets[q], counts[q]))
    }

    /// Alltoall: `src` and `dst` hold p blocks of k = len/p elements; block q of
    /// process r's `src` lands in block r of process q's `dst`. n = `src` in bytes.
    /// 1 superstep, h = (p - 1)/p·n; local work n (blocks into the scratch and the own
    /// block into `dst`).
    pub fn alltoall<T: Pod>(&mut self, ctx: &mut Context, src: &[T], dst: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        let p = self.p;
        assert_eq!(src.len(), dst.len(), "alltoall: src and dst must have the same length");
        assert_eq!(src.len() % p, 0, "alltoall: the length must be a multiple of nprocs");
        let k = src.len() / p;
        let kb = bytes_of::<T>(k);
        self.check_size("alltoall", p * kb)?;
        self.alltoall_by(ctx, src, dst, kb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_everything_evenly() {
        for p in 1..9 {
            for n in 0..40 {
                let mut total = 0;
                for q in 0..p {
                    let len = block(q, n, p).1;
                    assert!(len == n / p || len == n / p + 1);
                    total += len;
                }
                assert_eq!(total, n);
            }
        }
    }
}
