//! PageRank as GraphX computes it (GraphFrames' `pageRank` and
//! `parallelPersonalizedPageRank`), which differs from the Graphalytics PageRank of
//! [`super::rank`]: every vertex starts at 1.0 and an iteration sets
//! `r'(v) = a + (1 - a) Σ_{u → v} r(u) / outdeg(u)` (a = the reset probability); a vertex
//! without out-edges spreads nothing, its rank is lost; after the last iteration the ranks
//! are scaled to sum to n. Personalized, one vector per source s_k: `r_k` starts as the
//! indicator of s_k, the reset term is `a [v = s_k]`, and each vector is scaled to sum
//! to 1 at the end. Several sources run together: one pass over the edges per iteration
//! updates every vector (each vertex's values side by side).
//!
//! Each process updates its block of rows from its in-edges (the kernels' adjacency,
//! duplicates once, self-loops kept: a self-loop counts in the out-degree and feeds the
//! vertex itself, as in GraphX) and a replicated vector of contributions `r(u) /
//! outdeg(u)`, all-gathered after each iteration (8 n w bytes per process). A row's sum
//! runs over its in-neighbours in ascending order, so the ranks do not depend on the
//! number of processes or threads, but for the final scaling's sum.
//!
//! The gathers of contributions are random reads; on a skewed graph (R-MAT) a few
//! vertices of high out-degree take most of them. So each process keeps its copy of the
//! contributions in *hot order* — vertices by decreasing out-degree, those without
//! out-edges (never read) left out — rewritten from the all-gathered vector after each
//! exchange, and reads them through its in-edges' positions in that order (computed
//! once): the often-read entries share cache lines (Graphalytics' PageRank renumbers
//! by out-degree for the same reason). The sums' order does not change.

use super::comm::{try_filled, try_zeroed, Comm};
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{DistError, DistResult};
use crate::algorithms::pagerank::{check_parameters_named, prefetch, ParameterNames, PREFETCH_DISTANCE};
use crate::parallel::{balanced_row_blocks, run_dynamic, split_by_bounds};
use std::time::Instant;

/// GraphX PageRank's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphxPageRankConfig {
    /// GraphX's `resetProbability` (1 - the damping factor), in [0, 1].
    pub reset_probability: f64,
    /// 0: exactly `max_iters` iterations; > 0: stop after the first iteration whose
    /// largest per-vertex change is below `tol` (`max_iters` still the cap).
    pub tol: f64,
    /// At least 1.
    pub max_iters: usize,
}

impl GraphxPageRankConfig {
    /// The parameters' check (graphblas's one check of PageRank parameters), naming them
    /// as this struct does.
    pub fn check(&self) -> Result<(), String> {
        let names = ParameterNames { alpha: "reset_probability", tol: "tol", max_iters: "max_iters" };
        check_parameters_named(self.reset_probability, self.tol, i64::try_from(self.max_iters).unwrap_or(i64::MAX), names)
    }
}

/// The ranks of this process's block and how the iterations ended.
pub(crate) struct Ranks {
    /// `max(1, sources)` values per vertex, vertex by vertex.
    pub computed: Computed<f64>,
    /// The largest per-vertex change of the last iteration (before the scaling).
    pub residual: f64,
    /// `tol > 0` and the change fell below it.
    pub converged: bool,
}

/// Row blocks per thread: the blocks are taken from a queue, so uneven rows even out.
const BLOCKS_PER_THREAD: usize = 16;

/// GraphX PageRank on the graph: plain when `sources` (vertex numbers, distinct) is
/// empty, else one personalized vector per source. Collective.
pub(crate) fn compute(
    comm: &mut Comm<'_>,
    g: &Graph,
    sources: &[usize],
    cfg: &GraphxPageRankConfig,
    threads: usize,
    observe: Observer<'_>,
) -> DistResult<Ranks> {
    let t1 = Instant::now();
    let me = comm.me;
    let adj = g.adjacency();
    let (n, lo, rows) = (adj.n, adj.lo, adj.rows());
    let inn = adj.inn.csr();
    let personalized = !sources.is_empty();
    let w = sources.len().max(1);
    let reset = cfg.reset_probability;
    let inv_outdeg: Vec<f64> = adj.out.row_counts().iter().map(|&d| if d == 0 { 0.0 } else { 1.0 / d as f64 }).collect();
    // The (row, vector) of each source in this block, by row: where the reset term goes.
    let mut resets: Vec<(usize, usize)> =
        sources.iter().enumerate().filter(|(_, &s)| (lo..lo + rows).contains(&s)).map(|(k, &s)| (s - lo, k)).collect();
    resets.sort_unstable();
    let start = if personalized { 0.0 } else { 1.0 };
    let mut ranks = comm.agree(try_filled(rows * w, start, me, "the ranks of the block"))?;
    for &(i, k) in &resets {
        ranks[i * w + k] = 1.0;
    }
    let mut mine = comm.agree(try_zeroed::<f64>(rows * w, me, "the contributions of the block"))?;
    for (c, (r, d)) in mine.chunks_exact_mut(w).zip(ranks.chunks_exact(w).zip(&inv_outdeg)) {
        for (c, r) in c.iter_mut().zip(r) {
            *c = r * d;
        }
    }
    let hot = HotOrder::new(comm, adj)?;
    let hot = comm.agree(hot)?;
    let mut contributions = comm.agree(try_zeroed::<f64>(hot.order.len() * w, me, "the contributions in hot order"))?;
    hot.rewrite(&comm.allgatherv(&mine)?.0, w, &mut contributions);
    let blocks = if threads > 1 { balanced_row_blocks(&inn.ptr, threads * BLOCKS_PER_THREAD) } else { vec![0, rows] };
    let value_bounds: Vec<usize> = blocks.iter().map(|&b| b * w).collect();
    let base = if personalized { 0.0 } else { reset };
    let mut progress = Rounds::start("iteration", observe);
    let (mut iterations, mut residual, mut converged) = (0, 0.0, false);
    while iterations < cfg.max_iters {
        let work: Vec<_> = split_by_bounds(&mut ranks, &value_bounds)
            .into_iter()
            .zip(split_by_bounds(&mut mine, &value_bounds))
            .zip(blocks.windows(2).map(|b| b[0]..b[1]))
            .collect();
        let read: &[f64] = &contributions;
        let update = |_, ((r, c), range): ((&mut [f64], &mut [f64]), std::ops::Range<usize>)| {
            let first = resets.partition_point(|&(i, _)| i < range.start);
            let row = Row { ptr: &inn.ptr, idx: &hot.sources, contributions: read, inv_outdeg: &inv_outdeg, w, reset, base };
            row.update(range, &resets[first..], r, c)
        };
        let changes = comm.agree(run_dynamic(work, threads, update).map_err(DistError::from))?;
        let change = changes.into_iter().fold(0.0, f64::max);
        // Changes are >= 0 (or NaN), whose bits order as their values.
        residual = f64::from_bits(comm.max_u64(change.to_bits())?);
        iterations += 1;
        progress.done(iterations, "change", Measure::Real(residual));
        converged = cfg.tol > 0.0 && residual < cfg.tol;
        if converged || iterations == cfg.max_iters {
            break;
        }
        hot.rewrite(&comm.allgatherv(&mine)?.0, w, &mut contributions);
    }
    drop((hot, contributions, mine));
    // GraphX's scaling: each vector's sum over all vertices, in pid order.
    let mut sums = vec![0.0; w];
    for r in ranks.chunks_exact(w) {
        for (s, r) in sums.iter_mut().zip(r) {
            *s += r;
        }
    }
    let (partials, _) = comm.allgatherv(&sums)?;
    sums.fill(0.0);
    for part in partials.chunks_exact(w) {
        for (s, x) in sums.iter_mut().zip(part) {
            *s += x;
        }
    }
    if personalized {
        for r in ranks.chunks_exact_mut(w) {
            for (r, s) in r.iter_mut().zip(&sums) {
                *r /= s;
            }
        }
    } else {
        let factor = n as f64 / sums[0];
        ranks.iter_mut().for_each(|r| *r *= factor);
    }
    Ok(Ranks { computed: Computed { values: ranks, rounds: iterations, seconds: t1.elapsed().as_secs_f64() }, residual, converged })
}

/// The vertices with out-edges by decreasing out-degree (ties by number), and the block's
/// in-edges' sources as positions in that order.
struct HotOrder {
    /// `order[j]`: the vertex at position j.
    order: Vec<u32>,
    /// The in-CSR's column indices, each source replaced by its position.
    sources: Vec<u32>,
}

impl HotOrder {
    /// Every vertex's out-degree (one all-gather), the order by a counting sort, the
    /// positions of the block's in-edges' sources. Collective; the allocations' error is
    /// this process's own (to agree on).
    fn new(comm: &mut Comm<'_>, adj: &super::adjacency::Adjacency) -> DistResult<DistResult<HotOrder>> {
        let me = comm.me;
        let block: Vec<u32> = adj.out.row_counts().iter().map(|&d| d as u32).collect();
        let (outdeg, _) = comm.allgatherv(&block)?;
        Ok((|| {
            let top = outdeg.iter().copied().max().unwrap_or(0) as usize;
            // Counting sort by decreasing degree, stable (ascending numbers within one).
            let mut start = try_zeroed::<usize>(top + 2, me, "the hot order's degree counts")?;
            for &d in &outdeg {
                start[top - d as usize + 1] += 1;
            }
            for k in 1..start.len() {
                start[k] += start[k - 1];
            }
            let hot = outdeg.iter().filter(|&&d| d > 0).count();
            let mut order = try_zeroed::<u32>(hot, me, "the hot order")?;
            let mut position = try_zeroed::<u32>(outdeg.len(), me, "the positions in the hot order")?;
            for (u, &d) in outdeg.iter().enumerate() {
                if d > 0 {
                    let j = &mut start[top - d as usize];
                    order[*j] = u as u32;
                    position[u] = *j as u32;
                    *j += 1;
                }
            }
            let idx = &adj.inn.csr().idx;
            let mut sources = try_zeroed::<u32>(idx.len(), me, "the in-edges' positions in the hot order")?;
            for (s, &u) in sources.iter_mut().zip(idx.iter()) {
                *s = position[u as usize];
            }
            Ok(HotOrder { order, sources })
        })())
    }

    /// `all` (w values per vertex, by number) into `hot` (w per position).
    fn rewrite(&self, all: &[f64], w: usize, hot: &mut [f64]) {
        for (to, &u) in hot.chunks_exact_mut(w).zip(&self.order) {
            to.copy_from_slice(&all[u as usize * w..(u as usize + 1) * w]);
        }
    }
}

/// What an iteration's update of a block of rows reads.
struct Row<'a> {
    /// The block's in-edges (CSR over the block's rows), their sources as positions in
    /// the hot order.
    ptr: &'a [usize],
    idx: &'a [u32],
    /// `w` contributions per position of the hot order.
    contributions: &'a [f64],
    inv_outdeg: &'a [f64],
    w: usize,
    reset: f64,
    /// The reset term of every vertex: the reset probability for plain PageRank, 0 when
    /// personalized (then `resets` add it at the sources).
    base: f64,
}

impl Row<'_> {
    /// Rows `range` of the block: their new ranks into `r` and contributions into `c`
    /// (`w` each, from the range's start); `resets` (row, vector) from the range's start
    /// on, by row. Returns the largest change.
    fn update(&self, range: std::ops::Range<usize>, resets: &[(usize, usize)], r: &mut [f64], c: &mut [f64]) -> f64 {
        // A width known at compile time lets the compiler unroll the per-edge loop.
        match self.w {
            1 => self.update_width::<1>(range, resets, r, c),
            2 => self.update_width::<2>(range, resets, r, c),
            3 => self.update_width::<3>(range, resets, r, c),
            4 => self.update_width::<4>(range, resets, r, c),
            _ => self.update_width::<0>(range, resets, r, c),
        }
    }

    /// [`Row::update`] for `W` vectors, or `self.w` when `W` is 0.
    fn update_width<const W: usize>(&self, range: std::ops::Range<usize>, mut resets: &[(usize, usize)], r: &mut [f64], c: &mut [f64]) -> f64 {
        let w = if W > 0 { W } else { self.w };
        let (src, x) = (self.idx, self.contributions);
        let mut sums = vec![0.0; w];
        let acc = &mut sums[..w];
        let mut change = 0.0f64;
        let first = range.start;
        // The gathers are random: as in Graphalytics' step, the contribution an edge
        // PREFETCH_DISTANCE edges ahead is asked for early (a hint; no bits change).
        let last = src.len().saturating_sub(1);
        for i in range {
            acc.fill(0.0);
            for e in self.ptr[i]..self.ptr[i + 1] {
                prefetch(x, src[(e + PREFETCH_DISTANCE).min(last)] as usize * w);
                let at = src[e] as usize * w;
                let x = &x[at..at + w];
                for k in 0..w {
                    acc[k] += x[k];
                }
            }
            for a in acc.iter_mut() {
                *a = self.base + (1.0 - self.reset) * *a;
            }
            while let Some((&(_, k), rest)) = resets.split_first().filter(|((row, _), _)| *row == i) {
                acc[k] += self.reset;
                resets = rest;
            }
            let at = (i - first) * w;
            let d = self.inv_outdeg[i];
            for ((a, r), c) in acc.iter().zip(&mut r[at..at + w]).zip(&mut c[at..at + w]) {
                change = change.max((a - *r).abs());
                *r = *a;
                *c = a * d;
            }
        }
        change
    }
}
