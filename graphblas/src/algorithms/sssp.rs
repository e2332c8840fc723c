//! Single-source shortest paths over non-negative `f64` edge weights, following
//! directed edges forward; a vertex the source cannot reach has distance
//! [`f64::INFINITY`] (Graphalytics). Of parallel edges the lightest counts (the
//! matrix is built with [`crate::matrix::DupPolicy::Min`]).
//!
//! Delta-stepping (Meyer and Sanders): bucket i holds the vertices whose tentative
//! distance lies in `[i·delta, (i + 1)·delta)`. The smallest non-empty bucket is
//! processed: the out-edges of its vertices are relaxed, and a vertex whose distance
//! falls goes to the bucket of its new distance, the current one included, which is
//! then processed again; once it stays empty its vertices are final, and the next
//! non-empty bucket follows. A small delta approaches Dijkstra (few relaxations, many
//! buckets), a large one Bellman-Ford (one bucket, rounds until nothing improves).
//!
//! The work goes in *supersteps* ([`delta_stepping`]): every thread relaxes a share of
//! the current bucket's entries (taken from one list in chunks) and puts the vertices it
//! improves into its own bins (no contention on shared buckets). A thread whose own bin
//! of the current bucket is small then goes on with it alone, without waiting for the
//! others ("bucket fusion": long chains of light edges inside one bucket cost no
//! superstep each). Between supersteps one thread gathers the bins of the next bucket
//! into the list, and, in the distributed kernel, sends the relaxations of edges into
//! other processes' blocks to their owners and agrees with the other processes on the
//! next bucket ([`Processes`]).
//!
//! Distances are kept as the bits of their `f64` in `AtomicU64`s: for non-negative
//! floats and +infinity the IEEE 754 bit patterns order as the unsigned integers do, so
//! `fetch_min` on the bits is an atomic minimum of the distances ([`Distances`]).
//! Every distance is `+0.0` (the source) plus weights `>= 0`: never negative, and never
//! `-0.0` (a weight `-0.0` passes the loaders' `w >= 0` check, but `+0.0 + -0.0` and
//! `x + -0.0` are `+0.0` and `x`), so the order holds. Improvements are strict (a
//! relaxation that only equals a distance changes nothing), so zero-weight cycles end.
//!
//! When every weight is an integer and no path can reach `u32::MAX` (n · the largest
//! weight below it; [`exact_in_u32`]), the supersteps run on `u32` distances and
//! weights instead (`AtomicU32::fetch_min`): the same sums exactly, in half the bytes
//! per distance and per edge weight, which is what a relaxation's random access to
//! its target's distance and the scan of the edges cost.

use crate::algorithms::pagerank::prefetch;
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::parallel::{even_blocks, run_blocks, run_team, split_by_bounds, Team};
use crossbeam_utils::CachePadded;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, RwLock};

/// Distances from `source` in the graph with weighted adjacency matrix `a` (`a(i, j)`:
/// an edge i → j of that weight, ≥ 0). `threads` threads; delta as [`default_delta`].
pub fn sssp(a: &Matrix<f64>, source: usize, threads: usize) -> GrbResult<Vec<f64>> {
    sssp_with_delta(a, source, threads, None)
}

/// As [`sssp`] with buckets of width `delta` (> 0; infinity: one bucket); `None`:
/// [`default_delta`].
pub fn sssp_with_delta(a: &Matrix<f64>, source: usize, threads: usize, delta: Option<f64>) -> GrbResult<Vec<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("SSSP needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    if source >= n {
        return Err(GrbError::InvalidValue(format!("SSSP source {source} is not a vertex (the graph has {n})")));
    }
    if let Some(w) = a.csr().val.iter().find(|w| !(**w >= 0.0)) {
        return Err(GrbError::InvalidValue(format!("SSSP needs edge weights >= 0, the matrix holds {w}")));
    }
    let (as_u32, max_weight) = edges_in_u32(a, threads)?;
    let delta = match delta {
        Some(d) => check_delta(d)?,
        None => default_delta(max_weight, a.nvals() as u64, n),
    };
    let in_u32 = as_u32.as_deref().filter(|_| exact_in_u32(true, max_weight, n));
    let (dist, _) = delta_stepping(a, 0, source, delta, in_u32, threads, &mut OneProcess, |_, _| {})?;
    Ok(dist)
}

/// `delta` if it can be a bucket width: a number > 0 (infinity: one bucket).
pub fn check_delta(delta: f64) -> GrbResult<f64> {
    if delta > 0.0 {
        Ok(delta)
    } else {
        Err(GrbError::InvalidValue(format!("the SSSP bucket width delta must be > 0, got {delta}")))
    }
}

/// The bucket width for `edges` edges of largest weight `max_weight` among `n`
/// vertices: the largest weight over the mean out-degree, as Meyer and Sanders suggest
/// (delta = Θ(1/d) for weights in [0, 1] and mean degree d): a bucket's relaxations
/// then re-insert into it only through the few edges lighter than delta (little
/// Bellman-Ford work), while the buckets, each a superstep or more, stay few. On the
/// benchmark's Kronecker graphs (weights 1..63) this is 63/15 = 4.2 over the declared
/// vertices of scale 18 and 63/22.7 = 2.8 over those an edge list names, against
/// GAP's documented 2 (delta 1..8 there scan within 15% of the m edges). 1 when the
/// formula gives no positive number (no edges, all weights 0).
pub(crate) fn default_delta(max_weight: f64, edges: u64, n: usize) -> f64 {
    let delta = max_weight / (edges as f64 / n as f64);
    if delta.is_finite() && delta > 0.0 {
        delta
    } else {
        1.0
    }
}

/// What a superstep of [`delta_stepping`] needs from the other processes.
pub(crate) trait Processes {
    type Error: From<GrbError>;
    /// The number of processes; 1: the whole graph is here, and neither
    /// [`Processes::exchange`] nor [`Processes::agree`] is called.
    fn count(&self) -> usize;
    /// The process owning vertex `v` of `n` when there are `p` processes.
    fn owner(v: usize, n: usize, p: usize) -> usize;
    /// `send` holds `counts[q]` pairs `[vertex, distance bits]` for each process q in
    /// turn; returns the pairs the others sent this process (global vertex numbers).
    fn exchange(&mut self, send: &[[u64; 2]], counts: &[usize]) -> Result<Vec<[u64; 2]>, Self::Error>;
    /// The smallest `next_bucket` and the sum of `improved` over all processes.
    fn agree(&mut self, next_bucket: u64, improved: u64) -> Result<(u64, u64), Self::Error>;
}

/// The whole graph in one process.
struct OneProcess;

impl Processes for OneProcess {
    type Error = GrbError;
    fn count(&self) -> usize {
        1
    }
    fn owner(_: usize, _: usize, _: usize) -> usize {
        0
    }
    fn exchange(&mut self, send: &[[u64; 2]], _: &[usize]) -> GrbResult<Vec<[u64; 2]>> {
        Ok(send.to_vec())
    }
    fn agree(&mut self, next_bucket: u64, improved: u64) -> GrbResult<(u64, u64)> {
        Ok((next_bucket, improved))
    }
}

/// No bucket: the bins are empty.
const NO_BUCKET: u64 = u64::MAX;

/// The largest bucket number: distances beyond `MAX_BUCKET · delta` share it (a
/// coarser bucket is still correct, only less ordered), and bucket numbers plus the
/// near window never overflow.
const MAX_BUCKET: u64 = 1 << 62;

/// Buckets held in a ring of vectors from the current one on; farther ones in a map.
const NEAR: u64 = 128;

/// Entries taken from the shared list at a time.
const CHUNK: usize = 64;

/// A thread goes on alone with its own bin of the current bucket while it holds fewer
/// entries than this; a larger bin waits for the next superstep, where all threads
/// share it.
const FUSE_BELOW: usize = 1024;

/// The bucket of distance `d` (≥ 0, finite) when the buckets have width 1 / `per_delta`
/// (`per_delta` ≥ 0: the reciprocal of delta, computed once; a multiplication per
/// improvement costs a few cycles where a division costs tens).
fn bucket(d: f64, per_delta: f64) -> u64 {
    // Multiplication by a non-negative number and the float-to-integer cast
    // (saturating; NaN, from 0 · infinity, goes to MAX_BUCKET through `min`) are
    // monotone, so a larger distance never has a smaller bucket. Which bucket a
    // distance on a boundary falls in does not matter for the result, only that the
    // same distance always falls in the same one.
    (d * per_delta).min(MAX_BUCKET as f64) as u64
}

/// A distance type of the supersteps. `f64` takes any weights ≥ 0; `u32` holds the
/// same sums exactly when every weight is an integer and no path can reach
/// `u32::MAX` ([`exact_in_u32`]), in half the bytes (the distances of a block fit the
/// caches better, and so do the edges' weights).
pub(crate) trait Distance: Copy + PartialEq + Send + Sync + 'static {
    type Atomic: Send + Sync;
    const ZERO: Self;
    fn unreached() -> Self::Atomic;
    fn load(a: &Self::Atomic) -> Self;
    /// Lowers `a` to `d` if `d` is smaller; whether it was.
    fn lower(a: &Self::Atomic, d: Self) -> bool;
    fn plus(self, w: Self) -> Self;
    /// As `f64`, unreached as infinity.
    fn to_f64(self) -> f64;
    /// The 64 bits a distance travels in to its owner, and back.
    fn to_wire(self) -> u64;
    fn from_wire(bits: u64) -> Self;
}

/// Distances as the bits of non-negative `f64`s, which order as the distances do
/// (module documentation): `fetch_min` on them is an atomic minimum.
impl Distance for f64 {
    type Atomic = AtomicU64;
    const ZERO: f64 = 0.0;
    fn unreached() -> AtomicU64 {
        AtomicU64::new(f64::INFINITY.to_bits())
    }
    #[inline]
    fn load(a: &AtomicU64) -> f64 {
        f64::from_bits(a.load(Relaxed))
    }
    #[inline]
    fn lower(a: &AtomicU64, d: f64) -> bool {
        let bits = d.to_bits();
        // The plain load first: most relaxations do not improve, and a read does not
        // take the cache line from the other threads.
        bits < a.load(Relaxed) && bits < a.fetch_min(bits, Relaxed)
    }
    #[inline]
    fn plus(self, w: f64) -> f64 {
        self + w
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn to_wire(self) -> u64 {
        self.to_bits()
    }
    fn from_wire(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// Integer distances, `u32::MAX` for unreached (no path reaches it: [`exact_in_u32`]).
impl Distance for u32 {
    type Atomic = AtomicU32;
    const ZERO: u32 = 0;
    fn unreached() -> AtomicU32 {
        AtomicU32::new(u32::MAX)
    }
    #[inline]
    fn load(a: &AtomicU32) -> u32 {
        a.load(Relaxed)
    }
    #[inline]
    fn lower(a: &AtomicU32, d: u32) -> bool {
        d < a.load(Relaxed) && d < a.fetch_min(d, Relaxed)
    }
    #[inline]
    fn plus(self, w: u32) -> u32 {
        // Never saturates under the bound of `exact_in_u32`; if it did, the sum would
        // read as unreached and improve nothing rather than wrap to a small number.
        self.saturating_add(w)
    }
    fn to_f64(self) -> f64 {
        if self == u32::MAX {
            f64::INFINITY
        } else {
            self as f64
        }
    }
    fn to_wire(self) -> u64 {
        self as u64
    }
    fn from_wire(bits: u64) -> u32 {
        bits as u32
    }
}

/// Whether the distances over `n` vertices with weights that are all integers
/// (`integral`) of at most `max_weight` are exact in `u32`: a tentative distance is
/// the length of a simple path (an improvement through a cycle would need the cycle's
/// vertex to improve on itself), so below n · max_weight, which must stay below
/// `u32::MAX` (unreached). Then every sum is the same integer as in `f64`.
pub(crate) fn exact_in_u32(integral: bool, max_weight: f64, n: usize) -> bool {
    integral && max_weight * (n as f64) < u32::MAX as f64
}

/// Tentative distances of a block's vertices.
struct Distances<D: Distance>(Vec<D::Atomic>);

impl<D: Distance> Distances<D> {
    fn new(rows: usize) -> Distances<D> {
        Distances((0..rows).map(|_| D::unreached()).collect())
    }

    #[inline]
    fn get(&self, v: usize) -> D {
        D::load(&self.0[v])
    }

    /// Lowers vertex `v`'s distance to `d` if `d` is smaller; whether it was.
    #[inline]
    fn lower(&self, v: usize, d: D) -> bool {
        D::lower(&self.0[v], d)
    }

    fn into_values(self) -> Vec<f64> {
        self.0.iter().map(|d| D::load(d).to_f64()).collect()
    }
}

/// An out-edge as a relaxation reads it: the target and the weight side by side, so
/// that a vertex's edges are one run of memory (one stream of cache lines where
/// separate target and weight arrays are two, each starting with a miss of its own at
/// every vertex taken from a bucket).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct Edge<D> {
    pub(crate) target: u32,
    pub(crate) weight: D,
}

/// The out-edges of `out` in its CSR order, their weights converted by `weight`, made
/// on `threads` threads.
fn edges_of<D: Copy + Send + Default>(out: &Matrix<f64>, threads: usize, weight: impl Fn(f64) -> D + Sync) -> GrbResult<Vec<Edge<D>>> {
    let csr = out.csr();
    let mut edges = vec![Edge { target: 0, weight: D::default() }; csr.val.len()];
    let bounds = even_blocks(edges.len(), threads.max(1));
    let parts: Vec<(usize, &mut [Edge<D>])> = split_by_bounds(&mut edges, &bounds).into_iter().enumerate().collect();
    run_blocks(parts, |_, (k, part)| {
        for ((e, &t), &w) in part.iter_mut().zip(&csr.idx[bounds[k]..]).zip(&csr.val[bounds[k]..]) {
            *e = Edge { target: t, weight: weight(w) };
        }
    })?;
    Ok(edges)
}

/// A vertex (offset in the block) put in a bin with the distance it had then; the
/// entry is stale once the vertex's distance has fallen further (a newer entry holds
/// it).
#[derive(Clone, Copy)]
struct Entry<D> {
    v: u32,
    d: D,
}

/// One thread's bins: the buckets `current..current + NEAR` in a ring, later ones
/// in a map (with a tiny delta the buckets are many and sparse). No bucket before
/// `current` has entries.
struct Bins<D> {
    current: u64,
    near: Vec<Vec<Entry<D>>>,
    far: BTreeMap<u64, Vec<Entry<D>>>,
}

impl<D> Bins<D> {
    fn new() -> Bins<D> {
        Bins { current: 0, near: (0..NEAR).map(|_| Vec::new()).collect(), far: BTreeMap::new() }
    }

    fn push(&mut self, b: u64, e: Entry<D>) {
        debug_assert!(b >= self.current);
        if b - self.current < NEAR {
            self.near[(b % NEAR) as usize].push(e);
        } else {
            self.far.entry(b).or_default().push(e);
        }
    }

    /// The bin of the current bucket.
    fn current_bin(&mut self) -> &mut Vec<Entry<D>> {
        &mut self.near[(self.current % NEAR) as usize]
    }

    /// The smallest bucket with entries, or [`NO_BUCKET`].
    fn first(&self) -> u64 {
        let near = (self.current..self.current + NEAR).find(|&b| !self.near[(b % NEAR) as usize].is_empty());
        near.or_else(|| self.far.keys().next().copied()).unwrap_or(NO_BUCKET)
    }

    /// Makes `b` (no earlier bucket has entries) the current bucket and moves its
    /// entries to the end of `to`.
    fn take(&mut self, b: u64, to: &mut Vec<Entry<D>>) {
        debug_assert!(b >= self.current && b <= MAX_BUCKET);
        self.current = b;
        while let Some(e) = self.far.first_entry() {
            if *e.key() >= b + NEAR {
                break;
            }
            let (k, mut entries) = e.remove_entry();
            let bin = &mut self.near[(k % NEAR) as usize];
            if bin.is_empty() {
                *bin = entries;
            } else {
                bin.append(&mut entries);
            }
        }
        to.append(self.current_bin());
    }
}

/// What one thread keeps between supersteps; the lead reads it between two waits.
struct Worker<D> {
    bins: Bins<D>,
    /// Relaxations of edges into other processes' blocks, per owner: `[vertex, bits]`.
    remote: Vec<Vec<[u64; 2]>>,
    /// Vertices whose distance this thread lowered in this superstep.
    improved: u64,
}

/// The state the team shares.
struct Shared<'a, D: Distance> {
    /// The block's out-edges: row k's `edges[ptr[k]..ptr[k + 1]]`.
    ptr: &'a [usize],
    edges: &'a [Edge<D>],
    lo: usize,
    /// 1 / delta ([`bucket`]).
    per_delta: f64,
    dist: Distances<D>,
    /// The smallest distance sent to each vertex's owner so far (all n vertices; empty
    /// with one process): a relaxation no smaller cannot lower the owner's distance,
    /// which is at most that, so it is not sent.
    sent: Distances<D>,
    /// The entries of the current bucket, taken `CHUNK` at a time from `next`.
    list: RwLock<Vec<Entry<D>>>,
    next: AtomicUsize,
    /// Each on cache lines of its own: a thread writes its worker at every improvement
    /// (bins, count), and two workers on one line would move it between the cores.
    workers: Vec<CachePadded<Mutex<Worker<D>>>>,
    /// Set by the lead when no bucket is left (or an exchange failed).
    done: AtomicBool,
    fuse_below: usize,
}

impl<D: Distance> Shared<'_, D> {
    /// Relaxes the out-edges of `e`'s vertex unless the entry is stale: an improved
    /// local vertex goes to `w`'s bins, an edge into another block to `w.remote`.
    fn relax(&self, e: Entry<D>, w: &mut Worker<D>, owner: &(dyn Fn(usize) -> usize + Sync)) {
        let v = e.v as usize;
        if self.dist.get(v) != e.d {
            return;
        }
        let (from, to) = (self.ptr[v], self.ptr[v + 1]);
        let rows = self.dist.0.len();
        for &Edge { target: t, weight } in &self.edges[from..to] {
            let d = e.d.plus(weight);
            let local = (t as usize).wrapping_sub(self.lo);
            if local < rows {
                if self.dist.lower(local, d) {
                    w.bins.push(bucket(d.to_f64(), self.per_delta), Entry { v: local as u32, d });
                    w.improved += 1;
                }
            } else if self.sent.lower(t as usize, d) {
                w.remote[owner(t as usize)].push([t as u64, d.to_wire()]);
            }
        }
    }

    /// [`Shared::relax`] for each entry of `entries`, asking the cache `AHEAD` entries in
    /// advance for the vertex's distance and row start: both are random reads (the
    /// entries come in the order their vertices improved), and a miss on each, one after
    /// the other, before the row can be scanned was what a relaxation waited for most.
    fn relax_all(&self, entries: &[Entry<D>], w: &mut Worker<D>, owner: &(dyn Fn(usize) -> usize + Sync)) {
        const AHEAD: usize = 8;
        for (k, &e) in entries.iter().enumerate() {
            if let Some(later) = entries.get(k + AHEAD) {
                let v = later.v as usize;
                prefetch(&self.dist.0, v);
                prefetch(self.ptr, v);
            }
            self.relax(e, w, owner);
        }
    }

    /// One thread's part of a superstep: shares of the list, then its own bin of the
    /// current bucket while that is small.
    fn superstep(&self, k: usize, owner: &(dyn Fn(usize) -> usize + Sync)) {
        let mut w = self.workers[k].lock().expect("worker poisoned");
        {
            let list = self.list.read().expect("list poisoned");
            loop {
                let at = self.next.fetch_add(CHUNK, Relaxed);
                if at >= list.len() {
                    break;
                }
                self.relax_all(&list[at..(at + CHUNK).min(list.len())], &mut w, owner);
            }
        }
        loop {
            let bin = w.bins.current_bin();
            if bin.is_empty() || bin.len() >= self.fuse_below {
                break;
            }
            let entries = std::mem::take(bin);
            self.relax_all(&entries, &mut w, owner);
        }
    }
}

/// Delta-stepping over the rows `lo..lo + out.nrows()` of a graph whose out-edges from
/// these rows are `out` (all n columns; weights ≥ 0), from vertex `source` (in any
/// block), with buckets of width `delta` (> 0, the same on every process), on `threads`
/// threads. `processes` carries the relaxations of edges into other blocks to their
/// owners and agrees on the next bucket (never called for one process). Each
/// superstep: relax (the current bucket's entries, then bucket fusion), exchange the
/// relaxations of cut edges, apply the received ones (mins) at their owners, agree on
/// the smallest bucket with entries anywhere. `observe(superstep, improved)` follows
/// each superstep (from 1; `improved`: the vertices of all blocks whose distance fell
/// in it; 0 in the last). Returns this block's distances and the supersteps run.
pub(crate) fn delta_stepping<P: Processes>(
    out: &Matrix<f64>,
    lo: usize,
    source: usize,
    delta: f64,
    in_u32: Option<&[Edge<u32>]>,
    threads: usize,
    processes: &mut P,
    observe: impl FnMut(usize, u64),
) -> Result<(Vec<f64>, usize), P::Error> {
    match in_u32 {
        Some(edges) => supersteps(out, edges, lo, source, delta, threads, processes, observe),
        None => {
            let edges = edges_of(out, threads, |w| w)?;
            supersteps(out, &edges, lo, source, delta, threads, processes, observe)
        }
    }
}

/// The out-edges of `out` with `u32` weights if every weight is an integer below 2^32
/// (they are ≥ 0), and the largest weight (0 without any): on `threads` threads.
pub(crate) fn edges_in_u32(out: &Matrix<f64>, threads: usize) -> GrbResult<(Option<Vec<Edge<u32>>>, f64)> {
    let vals = &out.csr().val;
    let bounds = even_blocks(vals.len(), threads.max(1));
    let parts: Vec<&[f64]> = bounds.windows(2).map(|b| &vals[b[0]..b[1]]).collect();
    let blocks = run_blocks(parts, |_, part| {
        // The cast saturates, so a weight of 2^32 or more, or with a fraction, does
        // not come back equal.
        let exact = part.iter().all(|&x| x as u32 as f64 == x);
        (exact, part.iter().fold(0.0f64, |m, &x| m.max(x)))
    })?;
    let exact = blocks.iter().all(|b| b.0);
    let max = blocks.iter().fold(0.0f64, |m, b| m.max(b.1));
    let edges = if exact { Some(edges_of(out, threads, |w| w as u32)?) } else { None };
    Ok((edges, max))
}

/// [`delta_stepping`] with distances of type `D`, the weights of `out`'s entries
/// (in its CSR order) as `weights`.
#[allow(clippy::too_many_arguments)]
fn supersteps<D: Distance, P: Processes>(
    out: &Matrix<f64>,
    edges: &[Edge<D>],
    lo: usize,
    source: usize,
    delta: f64,
    threads: usize,
    processes: &mut P,
    mut observe: impl FnMut(usize, u64),
) -> Result<(Vec<f64>, usize), P::Error> {
    let (rows, n) = (out.nrows(), out.ncols());
    let p = processes.count();
    let threads = threads.max(1);
    let state = Shared {
        ptr: &out.csr().ptr,
        edges,
        lo,
        per_delta: 1.0 / delta,
        dist: Distances::new(rows),
        sent: Distances::new(if p > 1 { n } else { 0 }),
        list: RwLock::new(Vec::new()),
        next: AtomicUsize::new(0),
        workers: (0..threads)
            .map(|_| CachePadded::new(Mutex::new(Worker { bins: Bins::new(), remote: (0..p).map(|_| Vec::new()).collect(), improved: 0 })))
            .collect(),
        done: AtomicBool::new(false),
        // One thread never waits for others: it keeps the whole bucket to itself.
        fuse_below: if threads == 1 { usize::MAX } else { FUSE_BELOW },
    };
    if (lo..lo + rows).contains(&source) {
        state.dist.lower(source - lo, D::ZERO);
        state.list.write().expect("list poisoned").push(Entry { v: (source - lo) as u32, d: D::ZERO });
    }
    let shared = &state;
    let owner = &|v: usize| P::owner(v, n, p);
    let lead = |team: &Team| -> Result<usize, P::Error> {
        let mut send: Vec<[u64; 2]> = Vec::new();
        let mut counts = vec![0usize; p];
        for superstep in 1.. {
            shared.superstep(0, owner);
            team.wait();
            // The members wait for the next superstep: the workers and the list are the
            // lead's until then.
            let mut workers: Vec<_> = shared.workers.iter().map(|w| w.lock().expect("worker poisoned")).collect();
            let mut improved: u64 = workers.iter_mut().map(|w| std::mem::take(&mut w.improved)).sum();
            let first = |workers: &[std::sync::MutexGuard<'_, Worker<D>>]| workers.iter().map(|w| w.bins.first()).min().unwrap_or(NO_BUCKET);
            let decided = if p == 1 {
                Ok(first(&workers))
            } else {
                send.clear();
                for (q, c) in counts.iter_mut().enumerate() {
                    let before = send.len();
                    for w in workers.iter_mut() {
                        send.append(&mut w.remote[q]);
                    }
                    *c = send.len() - before;
                }
                processes.exchange(&send, &counts).and_then(|got| {
                    let bins = &mut workers[0].bins;
                    for [v, bits] in got {
                        let (v, d) = (v as usize - lo, D::from_wire(bits));
                        if shared.dist.lower(v, d) {
                            bins.push(bucket(d.to_f64(), shared.per_delta), Entry { v: v as u32, d });
                            improved += 1;
                        }
                    }
                    let (next, all) = processes.agree(first(&workers), improved)?;
                    improved = all;
                    Ok(next)
                })
            };
            let next = match &decided {
                Ok(next) => *next,
                Err(_) => NO_BUCKET,
            };
            if decided.is_ok() {
                observe(superstep, improved);
            }
            if next != NO_BUCKET {
                let mut list = shared.list.write().expect("list poisoned");
                list.clear();
                for w in workers.iter_mut() {
                    w.bins.take(next, &mut list);
                }
                shared.next.store(0, Relaxed);
            } else {
                shared.done.store(true, Relaxed);
            }
            drop(workers);
            team.wait();
            if next == NO_BUCKET {
                return decided.map(|_| superstep);
            }
        }
        unreachable!("the supersteps are unbounded")
    };
    let member = |k: usize, team: &Team| loop {
        shared.superstep(k, owner);
        team.wait();
        team.wait();
        if shared.done.load(Relaxed) {
            return;
        }
    };
    let supersteps = run_team(threads, lead, member)??;
    Ok((state.dist.into_values(), supersteps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::DupPolicy;

    #[test]
    fn shortest_paths_zero_weights_duplicates_and_unreachable() {
        // 0 -> 1 (5), 0 -> 2 (1), 2 -> 1 (1), 1 -> 3 (0), 3 -> 1 (0): a zero cycle,
        // 0 -> 3 twice (9 and 7: the lighter counts), 4 isolated, 5 -> 0 unreachable from 0.
        let t = [(0, 1, 5.0), (0, 2, 1.0), (2, 1, 1.0), (1, 3, 0.0), (3, 1, 0.0), (0, 3, 9.0), (0, 3, 7.0), (5, 0, 2.0), (2, 2, 0.0)];
        let a = Matrix::from_triples(6, 6, &t, DupPolicy::Min).unwrap();
        let inf = f64::INFINITY;
        for threads in [1, 2] {
            for delta in [None, Some(1e-9), Some(0.5), Some(1.0), Some(3.0), Some(f64::INFINITY)] {
                assert_eq!(sssp_with_delta(&a, 0, threads, delta).unwrap(), vec![0.0, 2.0, 1.0, 2.0, inf, inf], "{delta:?}");
                assert_eq!(sssp_with_delta(&a, 5, threads, delta).unwrap(), vec![2.0, 4.0, 3.0, 4.0, inf, 0.0], "{delta:?}");
            }
        }
        assert!(sssp(&a, 6, 1).is_err());
        let neg = Matrix::from_triples(2, 2, &[(0, 1, -1.0)], DupPolicy::Min).unwrap();
        assert!(sssp(&neg, 0, 1).is_err());
        let nan = Matrix::from_triples(2, 2, &[(0, 1, f64::NAN)], DupPolicy::Min).unwrap();
        assert!(sssp(&nan, 0, 1).is_err());
    }

    /// The invariant [`Distances`] rests on: for non-negative floats and +infinity the
    /// bit patterns order as the numbers, so `fetch_min` on the bits is the minimum.
    /// `-0.0` would break it (its sign bit makes it the largest pattern), and it cannot
    /// arise: sums from `+0.0` with weights `-0.0` stay `+0.0`.
    #[test]
    fn distance_bits_order_as_the_distances() {
        let xs = [0.0, f64::from_bits(1), f64::MIN_POSITIVE, 1e-300, 0.25, 1.0, 1.5, 2.0, 63.0, 1e300, f64::MAX, f64::INFINITY];
        for a in xs {
            for b in xs {
                assert_eq!(a.to_bits() < b.to_bits(), a < b, "{a} {b}");
                let d = Distances::<f64>::new(1);
                d.lower(0, a);
                assert_eq!(d.lower(0, b), b < a, "{a} then {b}");
                assert_eq!(d.get(0), a.min(b));
            }
        }
        assert!((-0.0f64).to_bits() > f64::INFINITY.to_bits());
        assert_eq!((0.0 + -0.0f64).to_bits(), 0.0f64.to_bits());
        assert_eq!((2.5 + -0.0f64).to_bits(), 2.5f64.to_bits());
        // An edge of weight -0.0 (which the loaders' `w >= 0` lets through) from the
        // source: its target gets +0.0, and so does a zero-weight chain on from it.
        let a = Matrix::from_triples(3, 3, &[(0, 1, -0.0), (1, 2, -0.0)], DupPolicy::Min).unwrap();
        for delta in [None, Some(1e-9), Some(f64::INFINITY)] {
            let d = sssp_with_delta(&a, 0, 2, delta).unwrap();
            assert!(d.iter().all(|x| x.to_bits() == 0.0f64.to_bits()), "{d:?}");
        }
        // Equal is no improvement: a zero-weight cycle ends.
        let d = Distances::<f64>::new(1);
        assert!(d.lower(0, 0.0));
        assert!(!d.lower(0, 0.0));
    }

    /// Integer weights run in `u32` when no path can reach `u32::MAX`, else in `f64`;
    /// both give the same distances.
    #[test]
    fn integer_weights_in_u32_only_below_the_bound() {
        assert!(exact_in_u32(true, 63.0, 1 << 20));
        assert!(!exact_in_u32(false, 63.0, 10));
        assert!(!exact_in_u32(true, 2f64.powi(31), 3));
        // One row, an edge to column j of weight ws[j]: the u32 weights (if any) beside
        // their targets, and the largest weight.
        let in_u32 = |ws: &[f64], threads| {
            let t: Vec<(usize, usize, f64)> = ws.iter().enumerate().map(|(j, &w)| (0, j, w)).collect();
            let (edges, max) = edges_in_u32(&Matrix::from_triples(1, ws.len(), &t, DupPolicy::Min).unwrap(), threads).unwrap();
            if let Some(edges) = &edges {
                assert!(edges.iter().enumerate().all(|(j, e)| e.target as usize == j));
            }
            (edges.map(|es| es.iter().map(|e| e.weight).collect::<Vec<u32>>()), max)
        };
        for threads in [1, 2, 3] {
            assert_eq!(in_u32(&[1.0, 0.0, 7.0], threads), (Some(vec![1, 0, 7]), 7.0));
            assert_eq!(in_u32(&[1.0, 0.5], threads), (None, 1.0));
            assert_eq!(in_u32(&[4294967296.0, 1.0], threads), (None, 4294967296.0));
            assert_eq!(in_u32(&[], threads), (Some(vec![]), 0.0));
        }
        // 0 -> 1 -> 2 of 2^31 each: 2^32 does not fit, the f64 path keeps it exact.
        let big = 2f64.powi(31);
        let a = Matrix::from_triples(3, 3, &[(0, 1, big), (1, 2, big)], DupPolicy::Min).unwrap();
        assert_eq!(sssp(&a, 0, 2).unwrap(), vec![0.0, big, 2.0 * big]);
        // The same integer graph both ways.
        let t: Vec<(usize, usize, f64)> = (0..300).map(|k| (k % 97, (k * 31 + 5) % 97, ((k * 7) % 11) as f64)).collect();
        let a = Matrix::from_triples(97, 97, &t, DupPolicy::Min).unwrap();
        for delta in [0.5, 3.0, f64::INFINITY] {
            for threads in [1, 2] {
                let w = edges_in_u32(&a, threads).unwrap().0.unwrap();
                let run = |in_u32| delta_stepping(&a, 0, 0, delta, in_u32, threads, &mut OneProcess, |_, _| {}).unwrap();
                let (d32, s32) = run(Some(&w));
                let (d64, s64) = run(None);
                assert_eq!(d32, d64, "delta {delta} threads {threads}");
                assert!(d32.iter().filter(|d| d.is_finite()).count() > 20 && d32.iter().any(|d| d.is_infinite()));
                if threads == 1 {
                    assert_eq!(s32, s64, "the same supersteps");
                }
            }
        }
    }

    #[test]
    fn buckets_are_monotone_and_bounded() {
        assert_eq!(bucket(0.0, 0.5), 0);
        assert_eq!(bucket(1.999, 0.5), 0);
        assert_eq!(bucket(2.0, 0.5), 1);
        assert_eq!(bucket(1e300, 1.0 / 1e-300), MAX_BUCKET);
        assert_eq!(bucket(f64::MAX, 1.0 / f64::INFINITY), 0);
        let ds = [0.0, 0.1, 0.3, 1.0, 7.5, 1e10, 1e300];
        // The smallest delta's reciprocal is infinite: 0 · infinity is NaN, which
        // goes to the last bucket with everything else (one bucket, still monotone).
        for delta in [f64::from_bits(1), 1e-9, 0.3, 2.0, 1e12, f64::INFINITY] {
            assert!(ds.windows(2).all(|w| bucket(w[0], 1.0 / delta) <= bucket(w[1], 1.0 / delta)), "{delta}");
        }
    }

    #[test]
    fn bins_keep_near_and_far_buckets() {
        let e = |v| Entry { v, d: 0.0f64 };
        let mut bins = Bins::new();
        assert_eq!(bins.first(), NO_BUCKET);
        bins.push(3, e(1));
        bins.push(NEAR + 5, e(2));
        bins.push(MAX_BUCKET, e(3));
        bins.push(3, e(4));
        assert_eq!(bins.first(), 3);
        let mut list = Vec::new();
        bins.take(3, &mut list);
        assert_eq!(list.iter().map(|e| e.v).collect::<Vec<_>>(), [1, 4]);
        assert_eq!(bins.first(), NEAR + 5);
        // The far bucket comes into the ring as the current one moves; a push into
        // the current bucket is found there.
        list.clear();
        bins.take(NEAR + 5, &mut list);
        assert_eq!(list.iter().map(|e| e.v).collect::<Vec<_>>(), [2]);
        bins.push(NEAR + 5, e(5));
        assert_eq!(bins.current_bin().len(), 1);
        bins.current_bin().clear();
        assert_eq!(bins.first(), MAX_BUCKET);
        list.clear();
        bins.take(MAX_BUCKET, &mut list);
        assert_eq!(list.iter().map(|e| e.v).collect::<Vec<_>>(), [3]);
        assert_eq!(bins.first(), NO_BUCKET);
    }

    #[test]
    fn the_default_delta_is_largest_weight_over_mean_degree() {
        // 1000 vertices, 15000 edges, weights up to 63: 63 / 15.
        assert!((default_delta(63.0, 15000, 1000) - 63.0 / 15.0).abs() < 1e-12);
        assert_eq!(default_delta(0.0, 10, 5), 1.0);
        assert_eq!(default_delta(0.0, 0, 5), 1.0);
        assert!(check_delta(f64::INFINITY).is_ok());
        assert!(check_delta(0.0).is_err() && check_delta(-1.0).is_err() && check_delta(f64::NAN).is_err());
    }

    /// A star of 2 million edges from the source, then a path of 2,000 weighted edges
    /// from one leaf among the other vertices: after the first supersteps, hundreds of
    /// buckets with one vertex each while 2 million vertices have a distance. A
    /// superstep that touches all n vertices costs milliseconds, hundreds of them
    /// seconds; one that costs its bucket microseconds. Bounded: a result later than
    /// the limit is a failure, not a hang.
    #[test]
    fn a_superstep_costs_its_bucket_not_n() {
        const N: usize = 1 << 22;
        const LEAVES: usize = N / 2;
        const PATH: usize = 2000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
        let mut t: Vec<(usize, usize, f64)> = (1..=LEAVES).map(|v| (0, v, 1.0)).collect();
        let path = |k: usize| if k == 0 { 1 } else { LEAVES + k };
        t.extend((0..PATH).map(|k| (path(k), path(k + 1), 0.5)));
        let a = Matrix::from_triples(N, N, &t, DupPolicy::Min).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(sssp_with_delta(&a, 0, 2, Some(0.5))));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("SSSP of {PATH} buckets over {N} vertices took over {LIMIT:?}")).unwrap();
        assert!(got[1..=LEAVES].iter().all(|&d| d == 1.0));
        assert!((1..=PATH).all(|k| got[path(k)] == 1.0 + k as f64 * 0.5));
        assert!(got[path(PATH) + 1..].iter().all(|&d| d == f64::INFINITY));
    }
}
