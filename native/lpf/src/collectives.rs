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

use crate::context::{Context, Registered};
use crate::error::{Error, Result};
use crate::types::{Memslot, Pid, Pod, MSG_DEFAULT, SYNC_DEFAULT};
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

/// The parameters algorithm selection uses: g in seconds per byte of an h-relation,
/// l in seconds per superstep, c in seconds per byte combined by a reduction operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    pub g: f64,
    pub l: f64,
    pub c: f64,
}

/// Default combine cost: about 10 GB/s, a streaming pass of one core.
pub const DEFAULT_COMBINE_COST: f64 = 1e-10;

impl CostModel {
    /// g and l from `ctx.probe()` at this context's process count (for messages of
    /// 1 KiB), c = [`DEFAULT_COMBINE_COST`]. The same on every process.
    pub fn from_probe(ctx: &Context) -> Result<CostModel> {
        let m = ctx.probe()?;
        let p = ctx.nprocs();
        Ok(CostModel { g: m.g(p, 1024, SYNC_DEFAULT), l: m.l(p, 1024, SYNC_DEFAULT), c: DEFAULT_COMBINE_COST })
    }
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
    layout: Layout,
    scratch_bytes: usize,
    max_bytes: usize,
    cost: CostModel,
    /// `ctx.nodes()`, as usize ranges.
    nodes: Vec<std::ops::Range<usize>>,
    /// The index in `nodes` of this process's node.
    my_node: usize,
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

/// Block distribution of `n` elements over `p` processes: block q is
/// `start(q)..start(q + 1)` with `start(q) = ⌊q·n/p⌋` (sizes differ by at most one).
fn block_start(q: usize, n: usize, p: usize) -> usize {
    ((q as u128 * n as u128) / p as u128) as usize
}

fn fold<T>(acc: &mut [T], x: &[T], op: &impl Fn(&mut T, &T)) {
    debug_assert_eq!(acc.len(), x.len());
    for (a, b) in acc.iter_mut().zip(x) {
        op(a, b);
    }
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
    pub fn attach(ctx: &mut Context, cfg: &Config) -> Result<Collectives> {
        let cost = match cfg.cost {
            Some(c) => c,
            None => CostModel::from_probe(ctx)?,
        };
        let p = ctx.nprocs() as usize;
        let me = ctx.pid() as usize;
        let nodes: Vec<std::ops::Range<usize>> = ctx.nodes().into_iter().map(|r| r.start as usize..r.end as usize).collect();
        let covers = !nodes.is_empty()
            && nodes[0].start == 0
            && nodes.last().is_some_and(|r| r.end == p)
            && nodes.windows(2).all(|w| w[0].end == w[1].start)
            && nodes.iter().all(|r| !r.is_empty());
        assert!(covers, "Collectives: engine {} describes its nodes as {nodes:?}, which is not a partition of 0..{p} into consecutive ranges", ctx.engine_name());
        let my_node = nodes.partition_point(|r| r.end <= me);
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
            .map(|&k| switch_bytes(cost, p, k).map_or(cfg.max_bytes, |s| s.saturating_sub(1).min(cfg.max_bytes)))
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
            scratch_bytes,
            max_bytes: cfg.max_bytes,
            cost,
            nodes,
            my_node,
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
        self.scratch_bytes
    }

    /// The smallest n (bytes) at which `kind` switches from the direct to the
    /// two-phase algorithm under this object's cost model, or `None` if it never does
    /// (every kind other than broadcast, reduce and allreduce; broadcast at p ≤ 2).
    pub fn switch_bytes(&self, kind: Collective) -> Option<usize> {
        switch_bytes(self.cost, self.p, kind)
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

    /// The algorithm a call of `kind` on `bytes` bytes runs.
    ///
    /// Flat choice: direct below [`Collectives::switch_bytes`], two-phase from there on
    /// (and for a reduction whose direct algorithm would not fit the scratch), local at
    /// p = 1. On a hierarchical machine ([`Collectives::is_hierarchical`]), broadcast
    /// and allreduce then compare, under the node cost model
    /// ([`Collectives::predicted_node_cost`]), the flat choice with the cheaper of the
    /// two hierarchical ones, and run the cheapest (ties go to the flat algorithm);
    /// [`Collectives::set_hierarchy`] can force either side.
    pub fn algorithm(&self, kind: Collective, bytes: usize) -> Algorithm {
        let flat = self.flat_algorithm(kind, bytes);
        if flat == Algorithm::Local
            || !self.is_hierarchical()
            || self.hierarchy == Hierarchy::Never
            || !matches!(kind, Collective::Broadcast | Collective::Allreduce)
        {
            return flat;
        }
        let hier_direct_fits = kind != Collective::Allreduce || self.direct_fits(bytes);
        let direct = Algorithm::Hierarchical(Inter::Direct);
        let two = Algorithm::Hierarchical(Inter::TwoPhase);
        let hier = if hier_direct_fits && self.predicted_node_cost(kind, direct, bytes) <= self.predicted_node_cost(kind, two, bytes) {
            direct
        } else {
            two
        };
        if self.hierarchy == Hierarchy::Always || self.predicted_node_cost(kind, hier, bytes) < self.predicted_node_cost(kind, flat, bytes) {
            hier
        } else {
            flat
        }
    }

    fn direct_fits(&self, bytes: usize) -> bool {
        bytes.checked_mul(self.p).is_some_and(|b| b <= self.scratch_bytes)
    }

    fn flat_algorithm(&self, kind: Collective, bytes: usize) -> Algorithm {
        if self.p == 1 {
            return Algorithm::Local;
        }
        if self.switch_bytes(kind).is_some_and(|s| bytes >= s) {
            return Algorithm::TwoPhase;
        }
        let direct_fits = match kind {
            Collective::Reduce | Collective::Allreduce => self.direct_fits(bytes),
            _ => true,
        };
        if direct_fits {
            Algorithm::Direct
        } else {
            Algorithm::TwoPhase
        }
    }

    /// The predicted BSP cost in seconds of `alg` for `kind` on `bytes` bytes: for the
    /// flat algorithms the per-process model of the [module documentation](self); for
    /// [`Algorithm::Hierarchical`], which only the node model can describe,
    /// [`Collectives::predicted_node_cost`].
    pub fn predicted_cost(&self, kind: Collective, alg: Algorithm, bytes: usize) -> f64 {
        if let Algorithm::Hierarchical(_) = alg {
            return if matches!(kind, Collective::Broadcast | Collective::Allreduce) && self.is_hierarchical() {
                self.predicted_node_cost(kind, alg, bytes)
            } else {
                f64::INFINITY
            };
        }
        let (h, work, steps) = cost_terms(self.p, kind, alg);
        let n = bytes as f64;
        h * n * self.cost.g + work * n * self.cost.c + steps * self.cost.l
    }

    /// The predicted cost in seconds of `alg` for `kind` (broadcast or allreduce; other
    /// kinds: [`Collectives::predicted_cost`]) on `bytes` bytes under the node model: a
    /// superstep costs H·g + L·c + l, where H is the most bytes any node sends or
    /// receives over the network (between nodes) and L the most bytes any node copies
    /// inside itself (shared memory; a copy is a streaming pass like a combine, so it is
    /// charged c), plus c per byte of combining on the busiest process. For broadcast it
    /// is the worst case over the root's node. The formulas per superstep are in the
    /// documentation of [`Collectives::broadcast`] and [`Collectives::allreduce`].
    pub fn predicted_node_cost(&self, kind: Collective, alg: Algorithm, bytes: usize) -> f64 {
        if !matches!(kind, Collective::Broadcast | Collective::Allreduce) || self.p == 1 {
            return self.predicted_cost(kind, alg, bytes);
        }
        node_cost(self.cost, self.p, &self.node_sizes, kind, alg, bytes as f64)
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
        if bytes > self.scratch_bytes {
            return Err(Error::out_of_memory(format!(
                "{what} needs {bytes} bytes of scratch, more than the {} allocated (elements this large need a \
                 larger max_bytes)",
                self.scratch_bytes
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
        debug_assert!(offset + bytes_of::<T>(len) <= self.scratch_bytes);
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
        let (p, me, root) = (self.p, self.me, root as usize);
        let s = size_of::<T>();
        match self.algorithm(Collective::Broadcast, n) {
            Algorithm::Local => Ok(()),
            Algorithm::Direct => {
                if me == root {
                    unsafe { self.part::<T>(0, data.len()) }.copy_from_slice(data);
                    return sync(ctx);
                }
                let slot = self.slot();
                let len = data.len();
                unsafe {
                    lend(ctx, data.as_mut_ptr(), len, |ctx, dst| {
                        if n > 0 {
                            ctx.get(root as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                        }
                        sync(ctx)
                    })
                }
            }
            Algorithm::Hierarchical(inter) => self.broadcast_hierarchical(ctx, root, data, inter),
            Algorithm::TwoPhase => {
                let ne = data.len();
                let block = |q: usize| (block_start(q, ne, p), block_start(q + 1, ne, p) - block_start(q, ne, p));
                let slot = self.slot();
                // Phase 1 (scatter): the vector goes to the root's scratch; each process
                // fetches its block into the same place of its own scratch.
                if me == root {
                    unsafe { self.part::<T>(0, ne) }.copy_from_slice(data);
                } else {
                    let (start, len) = block(me);
                    if len > 0 {
                        ctx.get(root as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)?;
                // Phase 2 (allgather): every block from its owner, straight into `data`.
                if me == root {
                    return sync(ctx);
                }
                let (start, len) = block(me);
                data[start..start + len].copy_from_slice(unsafe { self.part::<T>(start * s, len) });
                unsafe {
                    lend(ctx, data.as_mut_ptr(), ne, |ctx, dst| {
                        for q in (0..p).filter(|&q| q != me) {
                            let (start, len) = block(q);
                            if len > 0 {
                                ctx.get(q as Pid, slot, start * s, dst, start * s, len * s, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)
                    })
                }
            }
        }
    }

    /// [`Algorithm::Hierarchical`] broadcast (see [`Collectives::broadcast`]).
    fn broadcast_hierarchical<T: Pod>(&mut self, ctx: &mut Context, root: usize, data: &mut [T], inter: Inter) -> Result<()> {
        let (me, s, ne) = (self.me, size_of::<T>(), data.len());
        let n = bytes_of::<T>(ne);
        let m = self.nodes.len();
        let slot = self.slot();
        let root_node = self.node_of(root);
        let rep = |i: usize| if i == root_node { root } else { self.nodes[i].start };
        let mine = self.my_node;
        // Blocks between nodes: block j (of m) belongs to node j's representative.
        let block = |j: usize| (block_start(j, ne, m), block_start(j + 1, ne, m) - block_start(j, ne, m));
        // The vector is served from the scratch: the root's, then the representatives'.
        if me == root {
            unsafe { self.part::<T>(0, ne) }.copy_from_slice(data);
        }
        let ptr = data.as_mut_ptr();
        unsafe {
            lend(ctx, ptr, ne, |ctx, dst| {
                // Superstep 1: into the root's node by shared memory; to the other
                // nodes' representatives over the network (whole, or block j).
                if mine == root_node {
                    if me != root && n > 0 {
                        ctx.get(root as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                    }
                } else if me == rep(mine) {
                    let (start, len) = if inter == Inter::Direct { (0, ne) } else { block(mine) };
                    if len > 0 {
                        ctx.get(root as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)?;
                if inter == Inter::TwoPhase {
                    // Superstep 2: representatives allgather the blocks (the root has all).
                    if mine != root_node && me == rep(mine) {
                        for j in (0..m).filter(|&j| j != mine) {
                            let (start, len) = block(j);
                            if len > 0 {
                                ctx.get(rep(j) as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                            }
                        }
                    }
                    sync(ctx)?;
                }
                // Last superstep: the other nodes' members fetch the vector from their
                // representative by shared memory.
                if mine != root_node {
                    if me == rep(mine) {
                        std::slice::from_raw_parts_mut(ptr, ne).copy_from_slice(self.part::<T>(0, ne));
                    } else if n > 0 {
                        ctx.get(rep(mine) as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)
            })
        }
    }

    /// The index of the node holding process q.
    fn node_of(&self, q: usize) -> usize {
        self.nodes.partition_point(|r| r.end <= q)
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

    fn reduction<T: Pod>(&mut self, ctx: &mut Context, root: Option<Pid>, data: &mut [T], op: &impl Fn(&mut T, &T)) -> Result<()> {
        Self::check_type::<T>();
        if let Some(r) = root {
            self.check_root(r);
        }
        let kind = if root.is_some() { Collective::Reduce } else { Collective::Allreduce };
        let what = if root.is_some() { "reduce" } else { "allreduce" };
        let n = bytes_of::<T>(data.len());
        self.check_size(what, n)?;
        let (p, me) = (self.p, self.me);
        let root = root.map(|r| r as usize);
        let slot = self.slot();
        let ne = data.len();
        match self.algorithm(kind, n) {
            Algorithm::Local => Ok(()),
            Algorithm::Direct => {
                self.check_scratch(what, p * n)?;
                let receives = |q: usize| root.is_none_or(|r| r == q);
                unsafe {
                    lend(ctx, data.as_mut_ptr(), ne, |ctx, src| {
                        if n > 0 {
                            for q in (0..p).filter(|&q| q != me && receives(q)) {
                                ctx.put(src, 0, q as Pid, slot, me * n, n, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)
                    })?;
                }
                if receives(me) {
                    unsafe { self.fold_direct(data, op) };
                }
                Ok(())
            }
            Algorithm::TwoPhase => {
                let s = size_of::<T>();
                let stride = ne.div_ceil(p) * s;
                self.check_scratch(what, p * stride)?;
                // One pointer for both the registration and our own access to `data`.
                let ptr = data.as_mut_ptr();
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        self.reduce_scatter(ctx, lent, ptr, ne, op)?;
                        // Then gather (to the root) or allgather (to all) the combined
                        // blocks, read from scratch block 0 of their owners.
                        if root.is_none_or(|r| r == me) {
                            self.own_block(ptr, ne);
                            for q in (0..p).filter(|&q| q != me) {
                                let (start, len) = self.block(q, ne);
                                if len > 0 {
                                    ctx.get(q as Pid, slot, 0, lent, start * s, len * s, MSG_DEFAULT)?;
                                }
                            }
                        }
                        sync(ctx)
                    })
                }
            }
            Algorithm::Hierarchical(Inter::Direct) => {
                debug_assert!(root.is_none());
                self.check_scratch(what, p * n)?;
                let leader = self.nodes[self.my_node].start;
                let ptr = data.as_mut_ptr();
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        // Superstep 1: my vector to every node's leader (scratch block
                        // me), over the network to the other nodes' leaders.
                        if n > 0 {
                            for l in self.nodes.iter().map(|r| r.start).filter(|&l| l != me) {
                                ctx.put(lent, 0, l as Pid, slot, me * n, n, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)?;
                        // The leaders fold all p vectors exactly as the flat direct
                        // algorithm does; the result ends in scratch block 0, from which
                        // the members fetch it (superstep 2, shared memory).
                        let data = std::slice::from_raw_parts_mut(ptr, ne);
                        if me == leader {
                            self.fold_direct(data, op);
                            if me == 0 {
                                self.part::<T>(0, ne).copy_from_slice(data);
                            }
                        } else if n > 0 {
                            ctx.get(leader as Pid, slot, 0, lent, 0, n, MSG_DEFAULT)?;
                        }
                        sync(ctx)
                    })
                }
            }
            Algorithm::Hierarchical(Inter::TwoPhase) => {
                debug_assert!(root.is_none());
                let s = size_of::<T>();
                let stride = ne.div_ceil(p) * s;
                self.check_scratch(what, p * stride)?;
                let node = self.nodes[self.my_node].clone();
                let leader = node.start;
                let (before, after) = (self.block(node.start, ne).0, self.block(node.end, ne).0);
                let ptr = data.as_mut_ptr();
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        // Superstep 1: the flat reduce-scatter (so every block is folded
                        // exactly as there); process q's result block sits in its scratch
                        // block 0 and in its `data`.
                        self.reduce_scatter(ctx, lent, ptr, ne, op)?;
                        self.own_block(ptr, ne);
                        // Superstep 2: every process fetches its node mates' blocks
                        // (shared memory); the leader also fetches every other node's
                        // blocks (network: each block enters each node once).
                        let leads = me == leader;
                        for q in (0..p).filter(|&q| q != me && (leads || node.contains(&q))) {
                            let (start, len) = self.block(q, ne);
                            if len > 0 {
                                ctx.get(q as Pid, slot, 0, lent, start * s, len * s, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)?;
                        // Superstep 3: the members fetch the other nodes' blocks, two
                        // ranges around their node's, from the leader's scratch (shared
                        // memory), where the leader copies them first.
                        if leads {
                            let data = std::slice::from_raw_parts(ptr, ne);
                            self.part::<T>(0, before).copy_from_slice(&data[..before]);
                            self.part::<T>(after * s, ne - after).copy_from_slice(&data[after..]);
                        } else {
                            for (start, len) in [(0, before), (after, ne - after)] {
                                if len > 0 {
                                    ctx.get(leader as Pid, slot, start * s, lent, start * s, len * s, MSG_DEFAULT)?;
                                }
                            }
                        }
                        sync(ctx)
                    })
                }
            }
        }
    }

    /// Block q of the block distribution of `ne` elements over the p processes, as
    /// (first element, elements).
    fn block(&self, q: usize, ne: usize) -> (usize, usize) {
        let start = block_start(q, ne, self.p);
        (start, block_start(q + 1, ne, self.p) - start)
    }

    /// After a superstep in which every process q put its vector x_q into scratch block
    /// q (n bytes each) of this process: `data` (x_me) becomes x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1},
    /// folded left to right. Unless this is process 0 the fold runs in scratch block 0
    /// (x_0), which then holds the result too.
    ///
    /// # Safety
    /// Between syncs, with the scratch blocks filled as described.
    unsafe fn fold_direct<T: Pod>(&self, data: &mut [T], op: &impl Fn(&mut T, &T)) {
        let (p, me, ne) = (self.p, self.me, data.len());
        let n = bytes_of::<T>(ne);
        if me == 0 {
            for q in 1..p {
                fold(data, self.part::<T>(q * n, ne), op);
            }
        } else {
            let acc = self.part::<T>(0, ne);
            for q in 1..p {
                if q == me {
                    fold(acc, data, op);
                } else {
                    fold(acc, self.part::<T>(q * n, ne), op);
                }
            }
            data.copy_from_slice(acc);
        }
    }

    /// Copies this process's combined block (scratch block 0, after
    /// [`Collectives::reduce_scatter`]) into its place in `data` (`ptr`, `ne` elements).
    ///
    /// # Safety
    /// As `reduce_scatter`, after it.
    unsafe fn own_block<T: Pod>(&self, ptr: *mut T, ne: usize) {
        let (start, len) = self.block(self.me, ne);
        std::slice::from_raw_parts_mut(ptr.add(start), len).copy_from_slice(self.part::<T>(0, len));
    }

    /// The reduce-scatter superstep of the two-phase reductions: block q of every
    /// process's vector goes to process q (into scratch block `sender` of stride
    /// ⌈ne/p⌉ elements), one sync, then this process folds its block in process order
    /// into scratch block 0 ([`Collectives::own_block`] copies it into `data`). `ptr`
    /// is `data`, lent as `lent`.
    ///
    /// # Safety
    /// `ptr` must be the `ne` elements lent as `lent`, held mutably by the caller.
    unsafe fn reduce_scatter<T: Pod>(&self, ctx: &mut Context, lent: Memslot, ptr: *mut T, ne: usize, op: &impl Fn(&mut T, &T)) -> Result<()> {
        let (p, me, s) = (self.p, self.me, size_of::<T>());
        let stride = ne.div_ceil(p) * s;
        let slot = self.slot();
        for q in (0..p).filter(|&q| q != me) {
            let (start, len) = self.block(q, ne);
            if len > 0 {
                ctx.put(lent, start * s, q as Pid, slot, me * stride, len * s, MSG_DEFAULT)?;
            }
        }
        sync(ctx)?;
        // Combine my block in process order into scratch block 0 (which holds x_0's
        // block unless I am process 0).
        let (start, len) = self.block(me, ne);
        let mine = &mut *std::ptr::slice_from_raw_parts_mut(ptr.add(start), len);
        let acc = self.part::<T>(0, len);
        if me == 0 {
            acc.copy_from_slice(mine);
        }
        for q in 1..p {
            if q == me {
                fold(acc, mine, op);
            } else {
                fold(acc, self.part::<T>(q * stride, len), op);
            }
        }
        Ok(())
    }

    /// Scatter: the root's `src` (p·k elements, ignored elsewhere) is cut into p
    /// blocks of k = `dst.len()` elements; process q receives block q in `dst`.
    /// n = p·k elements in bytes. 1 superstep, h = (p - 1)/p·n at the root; local work
    /// n/p per process.
    pub fn scatter<T: Pod>(&mut self, ctx: &mut Context, root: Pid, src: &[T], dst: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        self.check_root(root);
        let (p, me, root) = (self.p, self.me, root as usize);
        let k = dst.len();
        if me == root {
            assert_eq!(src.len(), p * k, "scatter: the root's src must hold nprocs * dst.len() elements");
        }
        let kb = bytes_of::<T>(k);
        self.check_size("scatter", p * kb)?;
        if p == 1 {
            dst.copy_from_slice(src);
            return Ok(());
        }
        let slot = self.slot();
        if me == root {
            dst.copy_from_slice(&src[me * k..(me + 1) * k]);
            unsafe {
                lend(ctx, src.as_ptr(), src.len(), |ctx, lent| {
                    if kb > 0 {
                        for q in (0..p).filter(|&q| q != me) {
                            ctx.put(lent, q * kb, q as Pid, slot, 0, kb, MSG_DEFAULT)?;
                        }
                    }
                    sync(ctx)
                })
            }
        } else {
            sync(ctx)?;
            dst.copy_from_slice(unsafe { self.part::<T>(0, k) });
            Ok(())
        }
    }

    /// Gather: process q's `src` (k elements, the same k everywhere) lands in block q
    /// of the root's `dst` (p·k elements; ignored elsewhere). n = p·k elements in bytes.
    /// 1 superstep, h = (p - 1)/p·n at the root; local work n/p per process.
    pub fn gather<T: Pod>(&mut self, ctx: &mut Context, root: Pid, src: &[T], dst: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        self.check_root(root);
        let (p, me, root) = (self.p, self.me, root as usize);
        let k = src.len();
        if me == root {
            assert_eq!(dst.len(), p * k, "gather: the root's dst must hold nprocs * src.len() elements");
        }
        let kb = bytes_of::<T>(k);
        self.check_size("gather", p * kb)?;
        if p == 1 {
            dst.copy_from_slice(src);
            return Ok(());
        }
        let slot = self.slot();
        if me == root {
            dst[me * k..(me + 1) * k].copy_from_slice(src);
            let len = dst.len();
            unsafe {
                lend(ctx, dst.as_mut_ptr(), len, |ctx, lent| {
                    if kb > 0 {
                        for q in (0..p).filter(|&q| q != me) {
                            ctx.get(q as Pid, slot, 0, lent, q * kb, kb, MSG_DEFAULT)?;
                        }
                    }
                    sync(ctx)
                })
            }
        } else {
            unsafe { self.part::<T>(0, k) }.copy_from_slice(src);
            sync(ctx)
        }
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

    /// Every process's part `part(q) = (offset, len)` of `data` (its own already in
    /// place) reaches every process.
    fn allgather_parts<T: Pod>(&mut self, ctx: &mut Context, what: &str, data: &mut [T], part: &dyn Fn(usize) -> (usize, usize)) -> Result<()> {
        let n = bytes_of::<T>(data.len());
        self.check_size(what, n)?;
        let (p, me) = (self.p, self.me);
        if p == 1 {
            return Ok(());
        }
        let s = size_of::<T>();
        let (off, len) = part(me);
        unsafe { self.part::<T>(0, len) }.copy_from_slice(&data[off..off + len]);
        let slot = self.slot();
        let ne = data.len();
        unsafe {
            lend(ctx, data.as_mut_ptr(), ne, |ctx, lent| {
                for q in (0..p).filter(|&q| q != me) {
                    let (off, len) = part(q);
                    if len > 0 {
                        ctx.get(q as Pid, slot, 0, lent, off * s, len * s, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)
            })
        }
    }

    /// Alltoall: `src` and `dst` hold p blocks of k = len/p elements; block q of
    /// process r's `src` lands in block r of process q's `dst`. n = `src` in bytes.
    /// 1 superstep, h = (p - 1)/p·n; local work n (blocks into the scratch and the own
    /// block into `dst`).
    pub fn alltoall<T: Pod>(&mut self, ctx: &mut Context, src: &[T], dst: &mut [T]) -> Result<()> {
        Self::check_type::<T>();
        let (p, me) = (self.p, self.me);
        assert_eq!(src.len(), dst.len(), "alltoall: src and dst must have the same length");
        assert_eq!(src.len() % p, 0, "alltoall: the length must be a multiple of nprocs");
        let k = src.len() / p;
        let kb = bytes_of::<T>(k);
        self.check_size("alltoall", p * kb)?;
        dst[me * k..(me + 1) * k].copy_from_slice(&src[me * k..(me + 1) * k]);
        if p == 1 {
            return Ok(());
        }
        for q in (0..p).filter(|&q| q != me) {
            unsafe { self.part::<T>(q * kb, k) }.copy_from_slice(&src[q * k..(q + 1) * k]);
        }
        let slot = self.slot();
        let len = dst.len();
        unsafe {
            lend(ctx, dst.as_mut_ptr(), len, |ctx, lent| {
                if kb > 0 {
                    for q in (0..p).filter(|&q| q != me) {
                        ctx.get(q as Pid, slot, me * kb, lent, q * kb, kb, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)
            })
        }
    }
}

/// (h, local work, supersteps) per byte of n for each algorithm, as in the methods'
/// documentation.
fn cost_terms(p: usize, kind: Collective, alg: Algorithm) -> (f64, f64, f64) {
    let pf = p as f64;
    let spread = (pf - 1.0) / pf;
    match (kind, alg) {
        (_, Algorithm::Local) => (0.0, 0.0, 0.0),
        (Collective::Broadcast, Algorithm::Direct) => (pf - 1.0, 0.0, 1.0),
        (Collective::Broadcast, Algorithm::TwoPhase) => (2.0 * spread, 0.0, 2.0),
        (Collective::Reduce | Collective::Allreduce, Algorithm::Direct) => (pf - 1.0, pf - 1.0, 1.0),
        (Collective::Reduce | Collective::Allreduce, Algorithm::TwoPhase) => (2.0 * spread, spread, 2.0),
        (_, _) => (spread, 0.0, 1.0),
    }
}

/// The node model of [`Collectives::predicted_node_cost`] for broadcast and allreduce.
/// `sizes` lists the distinct node sizes k and how many nodes have each; n is in bytes.
fn node_cost(cost: CostModel, p: usize, sizes: &[(usize, usize)], kind: Collective, alg: Algorithm, n: f64) -> f64 {
    let pf = p as f64;
    let m = sizes.iter().map(|&(_, c)| c).sum::<usize>() as f64;
    // One superstep: `f(is_root_node, k)` = (network bytes, local bytes) of a node of k
    // processes; the superstep costs the largest of each. For allreduce no node is the
    // root's (`root` = None); for broadcast `root` is the index in `sizes` of the root
    // node's size.
    let step = |root: Option<usize>, f: &dyn Fn(bool, f64) -> (f64, f64)| -> f64 {
        let (mut h, mut w) = (0f64, 0f64);
        for (i, &(k, count)) in sizes.iter().enumerate() {
            let is_root = root == Some(i);
            let mut cases = vec![];
            if is_root {
                cases.push(true);
            }
            if !is_root || count > 1 {
                cases.push(false);
            }
            for r in cases {
                let (a, b) = f(r, k as f64);
                h = h.max(a);
                w = w.max(b);
            }
        }
        h * cost.g + w * cost.c + cost.l
    };
    let c = cost.c;
    match (kind, alg) {
        (_, Algorithm::Local) => 0.0,
        (Collective::Allreduce, Algorithm::Direct) => step(None, &|_, k| (k * (pf - k) * n, k * (k - 1.0) * n)) + (pf - 1.0) * n * c,
        (Collective::Allreduce, Algorithm::TwoPhase) => {
            2.0 * step(None, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf)) + (pf - 1.0) / pf * n * c
        }
        (Collective::Allreduce, Algorithm::Hierarchical(Inter::Direct)) => {
            step(None, &|_, k| ((k * (m - 1.0) * n).max((pf - k) * n), (k - 1.0) * n))
                + step(None, &|_, k| (0.0, (k - 1.0) * n))
                + (pf - 1.0) * n * c
        }
        (Collective::Allreduce, Algorithm::Hierarchical(Inter::TwoPhase)) => {
            step(None, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf))
                + step(None, &|_, k| (((pf - k) * n / pf).max(k * (m - 1.0) * n / pf), (k * (k - 1.0) + pf - k) * n / pf))
                + step(None, &|_, k| (0.0, (k - 1.0) * (pf - k) * n / pf))
                + (pf - 1.0) / pf * n * c
        }
        (Collective::Broadcast, _) => (0..sizes.len())
            .map(|r| {
                let r = Some(r);
                match alg {
                    Algorithm::Direct => step(r, &|root, k| if root { ((pf - k) * n, k * n) } else { (k * n, 0.0) }),
                    Algorithm::TwoPhase => {
                        step(r, &|root, k| if root { ((pf - k) * n / pf, (k - 1.0) * n / pf + n) } else { (k * n / pf, 0.0) })
                            + step(r, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf))
                    }
                    Algorithm::Hierarchical(Inter::Direct) => {
                        step(r, &|root, k| if root { ((m - 1.0) * n, k * n) } else { (n, 0.0) })
                            + step(r, &|root, k| (0.0, if root { 0.0 } else { k * n }))
                    }
                    Algorithm::Hierarchical(Inter::TwoPhase) => {
                        step(r, &|root, k| if root { ((m - 1.0) * n / m, k * n) } else { (n / m, 0.0) })
                            + step(r, &|_, _| ((m - 1.0) * n / m, 0.0))
                            + step(r, &|root, k| (0.0, if root { 0.0 } else { k * n }))
                    }
                    Algorithm::Local => 0.0,
                }
            })
            .fold(0.0, f64::max),
        _ => f64::INFINITY,
    }
}

/// Where two-phase becomes cheaper than direct: cost_d(n) = a_d·n + l and
/// cost_t(n) = a_t·n + 2l cross at n = l / (a_d - a_t).
fn switch_bytes(cost: CostModel, p: usize, kind: Collective) -> Option<usize> {
    if p <= 1 || !matches!(kind, Collective::Broadcast | Collective::Reduce | Collective::Allreduce) {
        return None;
    }
    let slope = |alg| {
        let (h, w, _) = cost_terms(p, kind, alg);
        h * cost.g + w * cost.c
    };
    let d = slope(Algorithm::Direct) - slope(Algorithm::TwoPhase);
    // Guard against round-off making a zero difference (broadcast at p = 2) positive;
    // NaN parameters never switch.
    let switches = d > 1e-9 * slope(Algorithm::Direct) && cost.l >= 0.0;
    if !switches {
        return None;
    }
    let x = (cost.l / d).floor() + 1.0;
    if x.is_finite() && x < (usize::MAX / 2) as f64 {
        Some(x as usize)
    } else {
        None
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
                    let len = block_start(q + 1, n, p) - block_start(q, n, p);
                    assert!(len == n / p || len == n / p + 1);
                    total += len;
                }
                assert_eq!(total, n);
            }
        }
    }

    #[test]
    fn switch_points_follow_the_cost_model() {
        let cost = CostModel { g: 1e-9, l: 1e-6, c: 1e-9 };
        assert_eq!(switch_bytes(cost, 2, Collective::Broadcast), None);
        assert_eq!(switch_bytes(cost, 1, Collective::Allreduce), None);
        assert_eq!(switch_bytes(cost, 4, Collective::Allgather), None);
        for p in 2..10 {
            for kind in [Collective::Broadcast, Collective::Reduce, Collective::Allreduce] {
                if let Some(s) = switch_bytes(cost, p, kind) {
                    let at = |n: usize| {
                        let (hd, wd, sd) = cost_terms(p, kind, Algorithm::Direct);
                        let (ht, wt, st) = cost_terms(p, kind, Algorithm::TwoPhase);
                        let n = n as f64;
                        let d = hd * n * cost.g + wd * n * cost.c + sd * cost.l;
                        let t = ht * n * cost.g + wt * n * cost.c + st * cost.l;
                        (d, t)
                    };
                    let (d, t) = at(s);
                    assert!(t <= d * (1.0 + 1e-9), "p {p} {kind:?}: at the switch two-phase must not cost more");
                    let (d, t) = at(s.saturating_sub(2));
                    assert!(d <= t * (1.0 + 1e-9), "p {p} {kind:?}: below the switch direct must not cost more");
                }
            }
        }
        // Reductions at p = 2 switch because of the combine work.
        assert!(switch_bytes(cost, 2, Collective::Allreduce).is_some());
    }

    #[test]
    fn node_model_counts_network_bytes_per_node() {
        // Only g counts: network bytes of the busiest node, in units of n.
        let cost = CostModel { g: 1.0, l: 0.0, c: 0.0 };
        let at = |sizes: &[(usize, usize)], kind, alg| {
            let p = sizes.iter().map(|&(k, c)| k * c).sum();
            node_cost(cost, p, sizes, kind, alg, 1.0)
        };
        let hd = Algorithm::Hierarchical(Inter::Direct);
        let ht = Algorithm::Hierarchical(Inter::TwoPhase);
        let two_by_two = [(2, 2)];
        // Flat direct allreduce: each node receives 2 vectors for each of its 2 processes.
        assert_eq!(at(&two_by_two, Collective::Allreduce, Algorithm::Direct), 4.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, hd), 2.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, Algorithm::TwoPhase), 2.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, ht), 1.5);
        assert_eq!(at(&two_by_two, Collective::Broadcast, Algorithm::Direct), 2.0);
        assert_eq!(at(&two_by_two, Collective::Broadcast, hd), 1.0);
        // 1 + 2 + 1: the node of 2 sends its 2 vectors to 2 others either way.
        let uneven = [(1, 2), (2, 1)];
        assert_eq!(at(&uneven, Collective::Allreduce, Algorithm::Direct), 4.0);
        assert_eq!(at(&uneven, Collective::Allreduce, hd), 4.0);
        // Every process alone: hierarchical direct is flat direct plus a superstep.
        let cost = CostModel { g: 1.0, l: 1.0, c: 0.0 };
        let flat = node_cost(cost, 4, &[(1, 4)], Collective::Allreduce, Algorithm::Direct, 1.0);
        assert_eq!(node_cost(cost, 4, &[(1, 4)], Collective::Allreduce, hd, 1.0), flat + 1.0);
    }
}
