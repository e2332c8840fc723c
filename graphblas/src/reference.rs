//! Plain, obviously-correct sequential PageRank and BFS paths: the test oracles.
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

/// Result of [`reference_bfs_paths`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReferencePaths {
    pub found: bool,
    /// Found: the shortest path's length L; else the deepest level searched.
    pub rounds: usize,
    /// Found: the depth of every vertex on a shortest path from a `from` vertex to a `to`
    /// vertex, else `i64::MAX`; not found: all `i64::MAX`.
    pub depths: Vec<i64>,
}

/// GraphFrames' BFS paths on vertices `0..n`: `from[v]` / `to[v]` say where paths may
/// start / end, `max_length` caps their length. Written as "all distances first, then
/// the cut" (a FIFO queue from every start vertex over the whole graph), not as the
/// kernel's level loop that stops early.
pub fn reference_bfs_paths(n: usize, edges: &[(usize, usize)], from: &[bool], to: &[bool], max_length: usize) -> ReferencePaths {
    let mut adj = vec![Vec::new(); n];
    for &(u, v) in edges {
        adj[u].push(v);
    }
    let mut dist = vec![i64::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for v in (0..n).filter(|&v| from[v]) {
        dist[v] = 0;
        queue.push_back(v);
    }
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u] {
            if dist[v] == i64::MAX {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
    let shortest = (0..n).filter(|&v| to[v]).map(|v| dist[v]).min().unwrap_or(i64::MAX);
    if shortest <= max_length as i64 {
        // The path DAG: the targets at the shortest length, then every edge that steps
        // from depth k onto it, for k from the length down.
        let mut on: Vec<bool> = (0..n).map(|v| to[v] && dist[v] == shortest).collect();
        for k in (0..shortest).rev() {
            for &(u, v) in edges {
                if dist[u] == k && dist[v] == k + 1 && on[v] {
                    on[u] = true;
                }
            }
        }
        let depths = (0..n).map(|v| if on[v] { dist[v] } else { i64::MAX }).collect();
        return ReferencePaths { found: true, rounds: shortest as usize, depths };
    }
    let deepest = dist.iter().filter(|&&d| d != i64::MAX).max().map_or(0, |&d| (d as usize).min(max_length));
    ReferencePaths { found: false, rounds: deepest, depths: vec![i64::MAX; n] }
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

    #[test]
    fn bfs_paths_stop_at_the_first_target_level() {
        // 0 -> 1 -> 2 -> 3, 4 -> 3; from {0, 4}, to {3}: L = 1 (4 -> 3).
        let edges = [(0, 1), (1, 2), (2, 3), (4, 3)];
        let (f, t) = ([true, false, false, false, true], [false, false, false, true, false]);
        let r = reference_bfs_paths(5, &edges, &f, &t, 10);
        // Vertex 0 (from) and 1 (depth 1) lead to no target in one step: not on a path.
        assert_eq!(r, ReferencePaths { found: true, rounds: 1, depths: vec![i64::MAX, i64::MAX, i64::MAX, 1, 0] });
        assert_eq!(reference_bfs_paths(5, &edges, &f, &t, 0), ReferencePaths { found: false, rounds: 0, depths: vec![i64::MAX; 5] });
        let only0 = [true, false, false, false, false];
        assert_eq!(reference_bfs_paths(5, &edges, &only0, &t, 2).rounds, 2);
        assert_eq!(reference_bfs_paths(5, &edges, &only0, &t, 3).depths, vec![0, 1, 2, 3, i64::MAX]);
        // A diamond 0 -> {1, 2} -> 3 with a dead end 0 -> 4 -> 5 and an edge within a
        // level, 4 -> 1: the dead end is cut.
        let diamond = [(0, 1), (0, 2), (1, 3), (2, 3), (0, 4), (4, 5), (4, 1)];
        let (f, t) = ([true, false, false, false, false, false], [false, false, false, true, false, false]);
        assert_eq!(reference_bfs_paths(6, &diamond, &f, &t, 5).depths, vec![0, 1, 1, 2, i64::MAX, i64::MAX]);
    }
}
