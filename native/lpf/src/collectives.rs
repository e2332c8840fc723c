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

    /// The algorithm a call of `kind` on `bytes` bytes runs: direct below
    /// [`Collectives::switch_bytes`], two-phase from there on (and for a reduction whose
    /// direct algorithm would not fit the scratch), local at p = 1.
    pub fn algorithm(&self, kind: Collective, bytes: usize) -> Algorithm {
        if self.p == 1 {
            return Algorithm::Local;
        }
        if self.switch_bytes(kind).is_some_and(|s| bytes >= s) {
            return Algorithm::TwoPhase;
        }
        let direct_fits = match kind {
            Collective::Reduce | Collective::Allreduce => bytes.checked_mul(self.p).is_some_and(|b| b <= self.scratch_bytes),
            _ => true,
        };
        if direct_fits {
            Algorithm::Direct
        } else {
            Algorithm::TwoPhase
        }
    }

    /// The predicted BSP cost in seconds of `alg` for `kind` on `bytes` bytes.
    pub fn predicted_cost(&self, kind: Collective, alg: Algorithm, bytes: usize) -> f64 {
        let (h, work, steps) = cost_terms(self.p, kind, alg);
        let n = bytes as f64;
        h * n * self.cost.g + work * n * self.cost.c + steps * self.cost.l
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
                if !receives(me) {
                    return Ok(());
                }
                // x_q is in scratch block q, except x_me, which is `data`.
                if me == 0 {
                    for q in 1..p {
                        fold(data, unsafe { self.part::<T>(q * n, ne) }, op);
                    }
                } else {
                    let acc = unsafe { self.part::<T>(0, ne) };
                    for q in 1..p {
                        if q == me {
                            fold(acc, data, op);
                        } else {
                            fold(acc, unsafe { self.part::<T>(q * n, ne) }, op);
                        }
                    }
                    data.copy_from_slice(acc);
                }
                Ok(())
            }
            Algorithm::TwoPhase => {
                let s = size_of::<T>();
                let stride = ne.div_ceil(p) * s;
                self.check_scratch(what, p * stride)?;
                let block = |q: usize| (block_start(q, ne, p), block_start(q + 1, ne, p) - block_start(q, ne, p));
                // One pointer for both the registration and our own access to `data`.
                let ptr = data.as_mut_ptr();
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        // Reduce-scatter: block q of my vector goes to scratch block `me`
                        // at process q.
                        for q in (0..p).filter(|&q| q != me) {
                            let (start, len) = block(q);
                            if len > 0 {
                                ctx.put(lent, start * s, q as Pid, slot, me * stride, len * s, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)?;
                        // Combine my block in process order into scratch block 0 (which
                        // holds x_0's block unless I am process 0).
                        let (start, len) = block(me);
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
                        // Then gather (to the root) or allgather (to all) the combined
                        // blocks, read from scratch block 0 of their owners.
                        let receives = root.is_none_or(|r| r == me);
                        if receives {
                            mine.copy_from_slice(acc);
                            for q in (0..p).filter(|&q| q != me) {
                                let (start, len) = block(q);
                                if len > 0 {
                                    ctx.get(q as Pid, slot, 0, lent, start * s, len * s, MSG_DEFAULT)?;
                                }
                            }
                        }
                        sync(ctx)
                    })
                }
            }
        }
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
}
