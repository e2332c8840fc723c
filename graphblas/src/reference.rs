//! Plain, obviously-correct sequential PageRank: the test oracle.
//!
//! Deliberately written differently from the fast kernel — push instead of
//! pull, edge list instead of CSR, division instead of a precomputed
//! reciprocal, a `BTreeSet` for de-duplication — so that agreement between
//! the two is evidence, not a tautology.

use std::collections::BTreeSet;

/// Result of [`reference_pagerank`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceResult {
    /// Ranks.
    pub ranks: Vec<f64>,
    /// Iterations performed.
    pub iterations: usize,
    /// L1 change of the last iteration.
    pub residual: f64,
}

/// PageRank over the edge set of `edges` (duplicates count once,
/// self-loops count as edges) on `n` vertices, with uniform redistribution
/// of dangling mass, starting from `1/n`, stopping when the L1 change is
/// below `tol` or after `max_iters` iterations.
pub fn reference_pagerank(n: usize, edges: &[(usize, usize)], alpha: f64, tol: f64, max_iters: usize) -> ReferenceResult {
    let edge_set: BTreeSet<(usize, usize)> = edges.iter().copied().collect();
    let mut outdeg = vec![0usize; n];
    for &(u, _) in &edge_set {
        outdeg[u] += 1;
    }
    let mut r = vec![1.0 / n as f64; n];
    let mut iterations = 0;
    let mut residual = if n == 0 { 0.0 } else { f64::INFINITY };
    while n > 0 && iterations < max_iters {
        let mut dangling = 0.0;
        for u in 0..n {
            if outdeg[u] == 0 {
                dangling += r[u];
            }
        }
        let teleport = (alpha * dangling + (1.0 - alpha)) / n as f64;
        let mut next = vec![0.0; n];
        for &(u, v) in &edge_set {
            next[v] += r[u] / outdeg[u] as f64;
        }
        for x in next.iter_mut() {
            *x = alpha * *x + teleport;
        }
        residual = 0.0;
        for u in 0..n {
            residual += (next[u] - r[u]).abs();
        }
        r = next;
        iterations += 1;
        if residual < tol {
            break;
        }
    }
    ReferenceResult { ranks: r, iterations, residual }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cycle_is_uniform_and_sums_to_one() {
        let r = reference_pagerank(2, &[(0, 1), (1, 0)], 0.85, 1e-10, 100);
        assert_eq!(r.ranks, vec![0.5, 0.5]);
        let r = reference_pagerank(4, &[(0, 1), (2, 1), (3, 1)], 0.85, 1e-12, 1000);
        assert!((r.ranks.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(r.ranks[1] > r.ranks[0]);
        assert!(r.residual < 1e-12);
    }
}
