//! PageRank, process-local, in pull form.
//!
//! With `A` the adjacency matrix (row = source, col = target):
//!
//! ```text
//! r' = α · Aᵀ (r ./ outdeg) + (α · Σ_{dangling j} r_j + (1 − α)) / n
//! ```
//!
//! Dangling vertices (out-degree 0) spread their rank uniformly, so the
//! ranks keep summing to 1. The matrix is stored as the CSR of `Aᵀ` (rows =
//! targets, entries = in-neighbours), so each new rank is a *gather* over
//! `contrib[j] = r[j] / outdeg[j]`, with `1/outdeg` precomputed. One
//! iteration is a single fused pass over the rows: gather, write the new
//! rank, the new contribution, and accumulate the dangling mass and the L1
//! change. That is ~12 bytes of traffic per edge (4-byte index + 8-byte
//! gathered contribution) plus a few words per vertex.
//!
//! **Distribution seam.** [`step_block`] works on one contiguous block of
//! rows and reads the *full* contribution vector; it returns the block's
//! partial sums. A distributed run gives each LPF process a row block and
//! only adds two collectives per iteration: an all-gather of `contrib` and
//! an all-reduce of [`StepPartials`]. Threads inside a process use exactly
//! the same seam (their partials are summed locally).

use crate::algebra::{Plus, Scalar, Times, PLUS_FIRST};
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{ewise_add, ewise_mult, vxm, Descriptor};
use crate::parallel::{balanced_row_blocks_weighted, run_dynamic, split_by_bounds};
use crate::vector::Vector;
use std::time::Instant;

/// PageRank parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageRankConfig {
    /// Damping factor α (probability of following a link).
    pub alpha: f64,
    /// Stop when the L1 change of an iteration is below this; 0 never stops early
    /// (Graphalytics' fixed iteration count, [`PageRankConfig::fixed_iterations`]).
    pub tol: f64,
    /// Hard iteration limit.
    pub max_iters: usize,
    /// Threads to use inside this process.
    pub threads: usize,
}

impl PageRankConfig {
    /// The one check of the parameters a caller chooses (see [`check_parameters`]).
    pub fn check(&self) -> Result<(), String> {
        check_parameters(self.alpha, self.tol, i64::try_from(self.max_iters).unwrap_or(i64::MAX))
    }
}

/// The names a caller's API gives PageRank's three parameters, for the messages of
/// [`check_parameters_named`]: a user reads the names of the API they called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParameterNames {
    pub alpha: &'static str,
    pub tol: &'static str,
    pub max_iters: &'static str,
}

impl ParameterNames {
    /// This crate's names (the fields of [`PageRankConfig`]).
    pub(crate) const RUST: ParameterNames = ParameterNames { alpha: "alpha", tol: "tol", max_iters: "max_iters" };
}

/// The one check of PageRank's parameters, whoever passes them (the `pagerank` CLI, the
/// distributed entry points, the Spark bridge for Scala and Python): its message names
/// the parameter (this crate's name) and the value given.
pub fn check_parameters(alpha: f64, tol: f64, max_iters: i64) -> Result<(), String> {
    check_parameters_named(alpha, tol, max_iters, ParameterNames::RUST)
}

/// [`check_parameters`] with the parameters named as the caller's API names them.
pub fn check_parameters_named(alpha: f64, tol: f64, max_iters: i64, names: ParameterNames) -> Result<(), String> {
    let ParameterNames { alpha: a, tol: t, max_iters: m } = names;
    if !(0.0..=1.0).contains(&alpha) {
        return Err(format!("{a} must be in [0, 1], got {alpha}"));
    }
    if !(tol.is_finite() && tol >= 0.0) {
        return Err(format!("{t} must be a finite number >= 0, got {tol} (0 runs exactly {m} iterations)"));
    }
    if max_iters < 1 {
        return Err(format!("{m} must be at least 1, got {max_iters}"));
    }
    Ok(())
}

impl Default for PageRankConfig {
    fn default() -> Self {
        PageRankConfig { alpha: 0.85, tol: 1e-7, max_iters: 1000, threads: 1 }
    }
}

impl PageRankConfig {
    /// Graphalytics PageRank: exactly `iterations` iterations from `1/n` (no tolerance
    /// test: `tol` 0, and an L1 change is never below 0), damping 0.85, dangling mass
    /// spread over all vertices; one thread.
    pub fn fixed_iterations(iterations: usize) -> Self {
        PageRankConfig { alpha: 0.85, tol: 0.0, max_iters: iterations, threads: 1 }
    }
}

/// Outcome of a PageRank run.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRankResult {
    /// Rank per vertex; sums to 1 (up to rounding) for `n > 0`.
    pub ranks: Vec<f64>,
    /// Iterations performed.
    pub iterations: usize,
    /// L1 change of the last iteration.
    pub residual: f64,
    /// Whether `residual < tol` was reached within `max_iters`.
    pub converged: bool,
    /// Wall time spent in the iterations (excludes setup), seconds.
    pub iteration_seconds: f64,
}

/// Internal vertex numbering of a [`PullGraph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VertexOrder {
    /// Keep the input ids.
    Natural,
    /// Renumber by decreasing out-degree. The gather reads `contrib[j]`
    /// once per out-edge of `j`, so this packs the most-read entries into
    /// a few cache lines and pages: on R-MAT graphs most gathers then hit
    /// L1/L2 and the TLB instead of missing to L3/DRAM. Ranks are mapped
    /// back to input ids before they are returned.
    OutDegreeDescending,
}

/// The graph in the layout the pull iteration needs.
#[derive(Clone, Debug, PartialEq)]
pub struct PullGraph {
    n: usize,
    /// `order[k]` = input id of internal vertex `k`; `None` for `Natural`.
    order: Option<Vec<u32>>,
    /// CSR of Aᵀ: `src[ptr[i]..ptr[i+1]]` are the in-neighbours of `i`.
    ptr: Vec<usize>,
    src: Vec<u32>,
    /// `1 / outdeg(j)`, or 0 for dangling vertices (which also flags them).
    inv_outdeg: Vec<f64>,
}

impl PullGraph {
    /// From an adjacency matrix (row = source, col = target). Values are
    /// ignored: every stored entry is one edge; self-loops count.
    pub fn from_matrix<T: Scalar>(a: &Matrix<T>) -> GrbResult<Self> {
        Self::from_matrix_ordered(a, VertexOrder::OutDegreeDescending)
    }

    /// As [`PullGraph::from_matrix`], with an explicit internal vertex order.
    pub(crate) fn from_matrix_ordered<T: Scalar>(a: &Matrix<T>, order: VertexOrder) -> GrbResult<Self> {
        if a.nrows() != a.ncols() {
            return Err(GrbError::DimensionMismatch {
                op: "pagerank",
                detail: format!("adjacency matrix must be square, got {} x {}", a.nrows(), a.ncols()),
            });
        }
        let n = a.nrows();
        let csc = a.csc();
        let outdeg: Vec<usize> = a.row_counts();
        let inv = |d: usize| if d > 0 { 1.0 / d as f64 } else { 0.0 };
        match order {
            VertexOrder::Natural => Ok(PullGraph {
                n,
                order: None,
                ptr: csc.ptr.clone(),
                src: csc.idx.clone(),
                inv_outdeg: outdeg.iter().map(|&d| inv(d)).collect(),
            }),
            VertexOrder::OutDegreeDescending => {
                let mut order: Vec<u32> = (0..n as u32).collect();
                // Stable, so ties keep input order (deterministic).
                order.sort_by_key(|&v| std::cmp::Reverse(outdeg[v as usize]));
                let mut new_id = vec![0u32; n];
                for (k, &v) in order.iter().enumerate() {
                    new_id[v as usize] = k as u32;
                }
                let mut ptr = Vec::with_capacity(n + 1);
                ptr.push(0);
                let mut src = Vec::with_capacity(csc.idx.len());
                for &v in &order {
                    let start = src.len();
                    src.extend(csc.line(v as usize).0.iter().map(|&j| new_id[j as usize]));
                    // Ascending sources keep each row's gather moving forward.
                    src[start..].sort_unstable();
                    ptr.push(src.len());
                }
                let inv_outdeg = order.iter().map(|&v| inv(outdeg[v as usize])).collect();
                Ok(PullGraph { n, order: Some(order), ptr, src, inv_outdeg })
            }
        }
    }

    /// A block of rows built elsewhere (the distributed code): `n` rows, CSR `ptr`/`src`
    /// of their in-neighbours (column ids as the caller's contribution vector indexes
    /// them), and `1/outdeg` of each row's vertex (0 if dangling). No reordering.
    pub(crate) fn from_parts(n: usize, ptr: Vec<usize>, src: Vec<u32>, inv_outdeg: Vec<f64>) -> Self {
        debug_assert_eq!(ptr.len(), n + 1);
        debug_assert_eq!(inv_outdeg.len(), n);
        PullGraph { n, order: None, ptr, src, inv_outdeg }
    }

    /// The in-neighbour lists (CSR of this graph's rows of Aᵀ).
    #[doc(hidden)]
    pub fn csr(&self) -> (&[usize], &[u32]) {
        (&self.ptr, &self.src)
    }

    /// `1/outdeg` per row (0 for dangling rows).
    #[doc(hidden)]
    pub(crate) fn inv_outdeg(&self) -> &[f64] {
        &self.inv_outdeg
    }

    /// Rewrites every column id through `f` (the distributed plan exchange compacts
    /// column ids to a local numbering).
    pub(crate) fn map_sources(&mut self, f: impl Fn(u32) -> u32) {
        for s in self.src.iter_mut() {
            *s = f(*s);
        }
    }

    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of edges.
    pub fn nnz(&self) -> usize {
        self.src.len()
    }

    /// Row blocks balanced by estimated cost (for threads or processes).
    /// A row costs its in-degree plus [`ROW_COST`] edge-equivalents.
    pub(crate) fn row_blocks(&self, parts: usize) -> Vec<usize> {
        balanced_row_blocks_weighted(&self.ptr, parts, ROW_COST)
    }

    /// Initial contribution vector and dangling mass for `r = 1/n`.
    fn initial_contrib(&self, r: &[f64]) -> (Vec<f64>, f64) {
        let contrib = r.iter().zip(&self.inv_outdeg).map(|(&x, &d)| x * d).collect();
        let dangling = r.iter().zip(&self.inv_outdeg).map(|(&x, &d)| if d == 0.0 { x } else { 0.0 }).sum();
        (contrib, dangling)
    }
}

/// Cost of a row in edge-equivalents for block balancing. Measured on
/// kron20 (degree-ordered): ~0.95 ns per gathered edge vs ~6 ns of per-row
/// work (loop setup, mispredicted exit of short loops, three stores).
pub(crate) const ROW_COST: usize = 6;

/// Number of work chunks per iteration. Fixed (not derived from the thread
/// count) so that partial sums are always combined in the same order and
/// results are bit-identical for any number of threads; 256 chunks give
/// dynamic load balancing enough granularity for a handful of threads.
pub(crate) const CHUNKS: usize = 256;

/// Partial sums of one block step; combined by addition (locally across
/// threads, and by an all-reduce across processes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct StepPartials {
    /// Σ |r'_i − r_i| over the block.
    pub residual: f64,
    /// Σ r'_i over the block's dangling vertices (for the next iteration).
    pub dangling: f64,
}

/// One PageRank update of rows `lo..lo + ranks.len()`.
///
/// * `contrib` — full contribution vector of the previous iterate
///   (`r_j / outdeg_j`, 0 for dangling `j`), indexed by global vertex id;
/// * `base` — `(α · dangling + (1 − α)) / n` of the previous iterate;
/// * `ranks` — this block's ranks: old on entry, new on return;
/// * `contrib_out` — receives this block's new contributions.
pub(crate) fn step_block(
    g: &PullGraph,
    lo: usize,
    contrib: &[f64],
    alpha: f64,
    base: f64,
    ranks: &mut [f64],
    contrib_out: &mut [f64],
) -> StepPartials {
    assert_eq!(ranks.len(), contrib_out.len());
    let hi = lo + ranks.len();
    let ptr = &g.ptr[lo..=hi];
    let inv = &g.inv_outdeg[lo..hi];
    let src = &g.src[..];
    // Prefetch target: the source PREFETCH_DISTANCE edges ahead in the flat edge
    // stream (across row ends), clamped to the last edge.
    let last = src.len().saturating_sub(1);
    let ahead = |e: usize| src[(e + PREFETCH_DISTANCE).min(last)] as usize;
    let mut residual = 0.0;
    let mut dangling = 0.0;
    for (k, (r, c)) in ranks.iter_mut().zip(contrib_out.iter_mut()).enumerate() {
        let (a, b) = (ptr[k], ptr[k + 1]);
        // Two independent accumulators halve the add-latency chain on
        // high-degree rows; the order differs from a single sum only by
        // rounding. Even positions of the row go to s0, odd ones to s1.
        let mut s0 = 0.0;
        let mut s1 = 0.0;
        let mut e = a;
        while e + 2 <= b {
            prefetch(contrib, ahead(e));
            prefetch(contrib, ahead(e + 1));
            s0 += contrib[src[e] as usize];
            s1 += contrib[src[e + 1] as usize];
            e += 2;
        }
        if e < b {
            prefetch(contrib, ahead(e));
            s0 += contrib[src[e] as usize];
        }
        let new = alpha * (s0 + s1) + base;
        residual += (new - *r).abs();
        *r = new;
        let d = inv[k];
        *c = new * d;
        dangling += if d == 0.0 { new } else { 0.0 };
    }
    StepPartials { residual, dangling }
}

/// How far ahead, in edges of the flat CSR stream, [`step_block`] prefetches the
/// gathered contribution. The gathers of short rows (the long tail of an R-MAT
/// graph: half the rows of kron22 have in-degree 0, most others under 10) are
/// random, and a row's loop exit is a mispredicted branch that discards the
/// loads the core had started for the next rows; a software prefetch issued a
/// few hundred edges earlier has them in flight anyway. Measured on kron22
/// (degree order, sum over the 256 chunks of each chunk's best time, kernels
/// interleaved): distance 32: 0.99, 64: 0.90, 128: 0.83, 192-256: 0.69-0.75
/// (2 threads) / 0.81 (1 thread), 384: 0.79, 512: 0.91, 1024: 0.93 of the
/// time without prefetch. Bits are unchanged: a prefetch is only a hint.
pub(crate) const PREFETCH_DISTANCE: usize = 256;

/// Hints the cache to fetch `values[j]` (PageRank's gathered contributions, SSSP's
/// distances and row starts; no effect on other targets).
#[inline(always)]
pub(crate) fn prefetch<T>(values: &[T], j: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = values.as_ptr().wrapping_add(j) as *const i8;
        // SAFETY: `_mm_prefetch` is a hint that never faults and reads nothing
        // into the program (any address is allowed, even outside `values`);
        // SSE is part of the x86_64 baseline.
        unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (values, j);
}

/// Runs PageRank on a prepared [`PullGraph`] (an error only when its threads cannot
/// be had, [`GrbError::ThreadsUnavailable`](crate::GrbError::ThreadsUnavailable)).
pub fn pagerank_pull(g: &PullGraph, cfg: &PageRankConfig) -> GrbResult<PageRankResult> {
    let n = g.n;
    if n == 0 {
        return Ok(PageRankResult { ranks: Vec::new(), iterations: 0, residual: 0.0, converged: true, iteration_seconds: 0.0 });
    }
    let alpha = cfg.alpha;
    let mut ranks = vec![1.0 / n as f64; n];
    let (mut contrib, mut dangling) = g.initial_contrib(&ranks);
    let mut contrib_next = vec![0.0; n];
    let bounds = g.row_blocks(CHUNKS.min(n));
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    let start = Instant::now();
    while iterations < cfg.max_iters {
        let base = (alpha * dangling + (1.0 - alpha)) / n as f64;
        let work: Vec<_> = split_by_bounds(&mut ranks, &bounds)
            .into_iter()
            .zip(split_by_bounds(&mut contrib_next, &bounds))
            .zip(bounds.iter().copied())
            .collect();
        let c = &contrib;
        let partials = run_dynamic(work, cfg.threads, |_, ((r, co), lo)| step_block(g, lo, c, alpha, base, r, co))?;
        // (Distributed: all-gather contrib_next, all-reduce the partials.)
        residual = partials.iter().map(|p| p.residual).sum();
        dangling = partials.iter().map(|p| p.dangling).sum();
        std::mem::swap(&mut contrib, &mut contrib_next);
        iterations += 1;
        if residual < cfg.tol {
            break;
        }
    }
    let iteration_seconds = start.elapsed().as_secs_f64();
    if let Some(order) = &g.order {
        let mut out = vec![0.0; n];
        for (k, &v) in order.iter().enumerate() {
            out[v as usize] = ranks[k];
        }
        ranks = out;
    }
    Ok(PageRankResult { ranks, iterations, residual, converged: residual < cfg.tol, iteration_seconds })
}

/// PageRank of the graph with adjacency matrix `a` (row = source,
/// col = target; values ignored).
pub fn pagerank<T: Scalar>(a: &Matrix<T>, cfg: &PageRankConfig) -> GrbResult<PageRankResult> {
    pagerank_pull(&PullGraph::from_matrix(a)?, cfg)
}

/// The same algorithm written with the generic GraphBLAS operations
/// (`ewise_mult`, `vxm` over plus-first, `ewise_add`). Slower (it allocates
/// and goes through bitmaps), but it shows the semiring formulation and
/// cross-checks the API against the fused kernel. `a` holds the pattern;
/// its values are ignored.
pub fn pagerank_graphblas(a: &Matrix<f64>, cfg: &PageRankConfig) -> GrbResult<PageRankResult> {
    let g = PullGraph::from_matrix_ordered(a, VertexOrder::Natural)?;
    let n = a.nrows();
    let desc = Descriptor::with_threads(cfg.threads);
    let inv = Vector::dense(g.inv_outdeg.clone());
    let mut r = Vector::filled(n, if n > 0 { 1.0 / n as f64 } else { 0.0 });
    let (mut iterations, mut residual) = (0, if n == 0 { 0.0 } else { f64::INFINITY });
    let start = Instant::now();
    while n > 0 && iterations < cfg.max_iters {
        let rd = r.to_dense_with(0.0);
        let dangling: f64 = rd.iter().zip(&g.inv_outdeg).filter(|(_, &d)| d == 0.0).map(|(&x, _)| x).sum();
        let base = (cfg.alpha * dangling + (1.0 - cfg.alpha)) / n as f64;
        let mut contrib = Vector::empty(n);
        ewise_mult(&mut contrib, None, None, Times, &r, &inv, &desc)?;
        // t(i) = Σ_j contrib(j) · A(j, i), the plus-first semiring keeping
        // the vector operand.
        let mut t = Vector::empty(n);
        vxm(&mut t, None, None, PLUS_FIRST, &contrib, a, &desc)?;
        let mut scaled = Vector::empty(n);
        crate::ops::apply(&mut scaled, None, None, |x| cfg.alpha * x, &t, &desc)?;
        let mut next = Vector::empty(n);
        ewise_add(&mut next, None, None, Plus, &Vector::filled(n, base), &scaled, &desc)?;
        let nd = next.to_dense_with(0.0);
        residual = nd.iter().zip(&rd).map(|(a, b)| (a - b).abs()).sum();
        r = next;
        iterations += 1;
        if residual < cfg.tol {
            break;
        }
    }
    Ok(PageRankResult {
        ranks: r.to_dense_with(0.0),
        iterations,
        residual,
        converged: residual < cfg.tol,
        iteration_seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kron::{kron_matrix, KronParams};
    use crate::prng::Xoshiro256;
    use crate::reference::reference_pagerank;

    fn check_against_reference(n: usize, edges: &[(usize, usize)], what: &str) {
        let a = Matrix::<f64>::from_edges(n, n, edges).unwrap();
        let base = PageRankConfig::default();
        let expect = reference_pagerank(n, edges, base.alpha, base.tol, base.max_iters);
        for threads in [1, 2] {
            let cfg = PageRankConfig { threads, ..base };
            let natural = pagerank_pull(&PullGraph::from_matrix_ordered(&a, VertexOrder::Natural).unwrap(), &cfg).unwrap();
            let runs = [
                ("pull-reordered", pagerank(&a, &cfg).unwrap()),
                ("pull-natural", natural),
                ("graphblas", pagerank_graphblas(&a, &cfg).unwrap()),
            ];
            for (name, got) in runs {
                assert_eq!(got.iterations, expect.iterations, "{what} {name} threads {threads}");
                assert_eq!(got.converged, expect.residual < base.tol);
                assert!((got.residual - expect.residual).abs() < 1e-12, "{what}: residual");
                assert_eq!(got.ranks.len(), n);
                for (i, (x, y)) in got.ranks.iter().zip(&expect.ranks).enumerate() {
                    assert!((x - y).abs() <= 1e-12, "{what} {name} threads {threads}: vertex {i}: {x} vs {y}");
                }
                if n > 0 {
                    let s: f64 = got.ranks.iter().sum();
                    assert!((s - 1.0).abs() < 1e-12, "{what}: sum {s}");
                }
            }
        }
    }

    #[test]
    fn special_graphs_match_reference() {
        check_against_reference(0, &[], "empty graph");
        check_against_reference(1, &[], "one vertex");
        check_against_reference(1, &[(0, 0)], "one vertex with self-loop");
        check_against_reference(5, &[], "zero edges");
        // Dangling vertices (3 and 4), a self-loop (1), duplicate edges
        // (0->1 three times), an isolated vertex (5).
        check_against_reference(6, &[(0, 1), (0, 1), (0, 1), (1, 1), (1, 2), (2, 0), (2, 3), (0, 4)], "mixed");
        check_against_reference(4, &[(0, 1), (1, 2), (2, 3)], "path (last vertex dangling)");
        check_against_reference(50, &(1..50).map(|i| (i, 0)).collect::<Vec<_>>(), "star into a dangling hub");
    }

    #[test]
    fn random_graphs_match_reference() {
        let mut rng = Xoshiro256::new(31337);
        for trial in 0..25 {
            let n = 1 + rng.below(60) as usize;
            let m = rng.below(4 * n as u64) as usize;
            let edges: Vec<(usize, usize)> =
                (0..m).map(|_| (rng.below(n as u64) as usize, rng.below(n as u64) as usize)).collect();
            check_against_reference(n, &edges, &format!("random trial {trial}"));
        }
    }

    #[test]
    fn kron_graph_matches_reference() {
        let a = kron_matrix(&KronParams::graph500(9, 99), 2).unwrap();
        let mut edges = Vec::new();
        for i in 0..a.nrows() {
            for &j in a.csr().line(i).0 {
                edges.push((i, j as usize));
            }
        }
        check_against_reference(a.nrows(), &edges, "kron scale 9");
    }

    #[test]
    fn closed_forms() {
        // Directed 3-cycle: uniform ranks, converged after one iteration.
        let a = Matrix::<bool>::from_edges(3, 3, &[(0, 1), (1, 2), (2, 0)]).unwrap();
        let r = pagerank(&a, &PageRankConfig::default()).unwrap();
        assert_eq!(r.iterations, 1);
        assert!(r.ranks.iter().all(|&x| (x - 1.0 / 3.0).abs() < 1e-15));
        // 0 -> 1 with 1 dangling: the fixed point solves
        // r0 = b, r1 = α r0 + b, b = (α r1 + 1 - α) / 2.
        let a = Matrix::<bool>::from_edges(2, 2, &[(0, 1)]).unwrap();
        let cfg = PageRankConfig { tol: 1e-15, ..Default::default() };
        let r = pagerank(&a, &cfg).unwrap();
        let al: f64 = 0.85;
        // Substituting: b = (α(α b + b) + 1 - α)/2  =>  b (2 - α² - α) = 1 - α.
        let b = (1.0 - al) / (2.0 - al * al - al);
        assert!((r.ranks[0] - b).abs() < 1e-13, "{} vs {b}", r.ranks[0]);
        assert!((r.ranks[1] - (al * b + b)).abs() < 1e-13);
        assert!(r.converged);
    }

    #[test]
    fn max_iters_and_errors() {
        let a = kron_matrix(&KronParams::graph500(8, 1), 1).unwrap();
        let cfg = PageRankConfig { max_iters: 3, ..Default::default() };
        let r = pagerank(&a, &cfg).unwrap();
        assert_eq!(r.iterations, 3);
        assert!(!r.converged);
        assert!(r.residual > cfg.tol);
        let rect = Matrix::<bool>::from_edges(2, 3, &[(0, 2)]).unwrap();
        assert!(pagerank(&rect, &cfg).is_err());
    }

    #[test]
    fn thread_counts_agree_on_kron() {
        let a = kron_matrix(&KronParams::graph500(11, 5), 2).unwrap();
        let r1 = pagerank(&a, &PageRankConfig::default()).unwrap();
        for t in [2, 3, 8] {
            let rt = pagerank(&a, &PageRankConfig { threads: t, ..Default::default() }).unwrap();
            assert_eq!(rt.iterations, r1.iterations);
            // Fixed chunking and ordered reductions: bit-identical.
            assert_eq!(rt.ranks, r1.ranks);
        }
    }
}
