//! Single-source shortest paths over non-negative `f64` edge weights, following
//! directed edges forward; a vertex the source cannot reach has distance
//! [`f64::INFINITY`] (Graphalytics). Of parallel edges the lightest counts (the
//! matrix is built with [`crate::matrix::DupPolicy::Min`]).
//!
//! Frontier Bellman-Ford: the frontier holds the vertices whose distance changed in
//! the last round, with that distance. Each round
//!
//! 1. `reach = frontier min.plus A` ([`vxm`] with [`MIN_PLUS`]; the direction is
//!    chosen by cost: push the frontier's out-edges while it is small, pull over the
//!    columns when it is large);
//! 2. `next = reach⟨reach(i) < dist(i)⟩` ([`select_by`]): only improvements go on;
//! 3. `dist min= next`; stop when `next` is empty.
//!
//! `dist` is dense (infinity for no path yet), so steps 2 and 3 cost the entries of
//! `reach` and `next`, not n, when these are few.
//!
//! With weights ≥ 0 every round either improves some distance or ends the loop, and
//! after round k every vertex whose shortest path has k edges is final, so at most
//! n rounds run; a zero-weight cycle stops because improvements are strict.

use crate::algebra::MIN_PLUS;
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{apply, select_by, vxm, Descriptor};
use crate::vector::Vector;

/// Distances from `source` in the graph with weighted adjacency matrix `a` (`a(i, j)`:
/// an edge i → j of that weight, ≥ 0). `threads` threads per operation.
pub fn sssp(a: &Matrix<f64>, source: usize, threads: usize) -> GrbResult<Vec<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("SSSP needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    if source >= n {
        return Err(GrbError::InvalidValue(format!("SSSP source {source} is not a vertex (the graph has {n})")));
    }
    if let Some(w) = a.csr().val.iter().find(|w| w.is_nan() || **w < 0.0) {
        return Err(GrbError::InvalidValue(format!("SSSP needs edge weights >= 0, the matrix holds {w}")));
    }
    let (dist, _) = frontier_bellman_ford(a, 0, source, threads, &mut OneBlock, |_, _| {})?;
    Ok(dist)
}

/// What a round of [`frontier_bellman_ford`] needs from the other blocks.
pub(crate) trait Blocks {
    type Error: From<GrbError>;
    /// The round's tentative distances over all n vertices → those of this block's
    /// vertices (the smallest per vertex).
    fn to_block(&mut self, reach: Vector<f64>) -> Result<Vector<f64>, Self::Error>;
    /// `k` summed over all blocks.
    fn total(&mut self, k: u64) -> Result<u64, Self::Error>;
}

/// The whole graph as one block.
struct OneBlock;

impl Blocks for OneBlock {
    type Error = GrbError;
    fn to_block(&mut self, reach: Vector<f64>) -> GrbResult<Vector<f64>> {
        Ok(reach)
    }
    fn total(&mut self, k: u64) -> GrbResult<u64> {
        Ok(k)
    }
}

/// The rounds of frontier Bellman-Ford over the rows `lo..lo + out.nrows()` of a graph
/// whose out-edges from these rows are `out` (all n columns). `blocks` turns the
/// round's tentative distances over all n vertices into those of this block's vertices
/// (identity for one block; min-combined at the owners for the distributed kernel) and
/// sums the counts of improved vertices over all blocks, so every block stops at the
/// same round. `observe(round, improved)` follows each round (from 1; `improved`: the
/// vertices of all blocks whose distance fell, 0 in the last). Returns this block's
/// distances and the rounds run.
pub(crate) fn frontier_bellman_ford<B: Blocks>(
    out: &Matrix<f64>,
    lo: usize,
    source: usize,
    threads: usize,
    blocks: &mut B,
    mut observe: impl FnMut(usize, u64),
) -> Result<(Vec<f64>, usize), B::Error> {
    let (rows, n) = (out.nrows(), out.ncols());
    let desc = Descriptor::with_threads(threads);
    let min: &(dyn Fn(f64, f64) -> f64 + Sync) = &|x, y| x.min(y);
    let mine = (lo..lo + rows).contains(&source);
    let start = if mine { vec![(source - lo, 0.0)] } else { vec![] };
    // Dense, infinity where no path is known yet (as LAGraph keeps it): a round's
    // comparison and update then read and write only the frontier's positions.
    let mut frontier = Vector::sparse(rows, &start)?;
    let mut dist = Vector::filled(rows, f64::INFINITY);
    apply(&mut dist, None, Some(min), |x| x, &frontier, &desc)?;
    for round in 1.. {
        let mut reach = Vector::empty(n);
        vxm(&mut reach, None, None, MIN_PLUS, &frontier, out, &desc)?;
        let reach = blocks.to_block(reach)?;
        let mut next = Vector::empty(rows);
        select_by(&mut next, None, None, |x, d: Option<f64>| d.is_none_or(|d| x < d), &reach, &dist, &desc)?;
        let improved = blocks.total(next.nvals() as u64)?;
        observe(round, improved);
        if improved == 0 {
            return Ok((dist.to_dense_with(f64::INFINITY), round));
        }
        apply(&mut dist, None, Some(min), |x| x, &next, &desc)?;
        frontier = next;
    }
    unreachable!("the rounds are unbounded")
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
            assert_eq!(sssp(&a, 0, threads).unwrap(), vec![0.0, 2.0, 1.0, 2.0, inf, inf]);
            assert_eq!(sssp(&a, 5, threads).unwrap(), vec![2.0, 4.0, 3.0, 4.0, inf, 0.0]);
        }
        assert!(sssp(&a, 6, 1).is_err());
        let neg = Matrix::from_triples(2, 2, &[(0, 1, -1.0)], DupPolicy::Min).unwrap();
        assert!(sssp(&neg, 0, 1).is_err());
    }

    /// A star of 2 million edges from the source, then a path of 2,000 weighted edges
    /// from one leaf among the other vertices: after the first rounds, 2,000 rounds
    /// with one improved vertex each while 2 million vertices have a distance. A round
    /// that touches all n positions (bitmaps of the product, of the distances, a full
    /// write-back) costs milliseconds, 2,000 of them seconds; one that costs its
    /// frontier (sparse results, dense distances read and written at the frontier)
    /// microseconds. Bounded: a result later than the limit is a failure, not a hang.
    #[test]
    fn a_round_costs_its_frontier_not_n() {
        const N: usize = 1 << 22;
        const LEAVES: usize = N / 2;
        const PATH: usize = 2000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
        let mut t: Vec<(usize, usize, f64)> = (1..=LEAVES).map(|v| (0, v, 1.0)).collect();
        let path = |k: usize| if k == 0 { 1 } else { LEAVES + k };
        t.extend((0..PATH).map(|k| (path(k), path(k + 1), 0.5)));
        let a = Matrix::from_triples(N, N, &t, DupPolicy::Min).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(sssp(&a, 0, 2)));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("SSSP of {PATH} rounds over {N} vertices took over {LIMIT:?}")).unwrap();
        assert!(got[1..=LEAVES].iter().all(|&d| d == 1.0));
        assert!((1..=PATH).all(|k| got[path(k)] == 1.0 + k as f64 * 0.5));
        assert!(got[path(PATH) + 1..].iter().all(|&d| d == f64::INFINITY));
    }
}
