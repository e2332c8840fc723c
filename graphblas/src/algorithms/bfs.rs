//! Breadth-first search: the depth of every vertex from a source, following directed
//! edges forward; a vertex the source cannot reach has depth [`UNREACHABLE`]
//! (Graphalytics: 9223372036854775807).
//!
//! Direction-optimising (Beamer, Asanović, Patterson 2012): each level is
//! `next⟨¬visited⟩ = frontier any.pair A` ([`vxm`] with [`ANY_PAIR`] and the
//! complemented structure of the depth vector as mask). Small frontiers push
//! (scatter the out-edges of the frontier); once the frontier's out-edges outweigh the
//! edges left to explore, levels pull (every unvisited vertex scans its in-edges and
//! stops at the first one from the frontier), until the frontier shrinks again.

use crate::algebra::{Cast, ANY_PAIR};
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{assign_scalar, vxm, Descriptor, Direction};
use crate::vector::{Mask, Vector};

/// Depth of a vertex the source does not reach.
pub const UNREACHABLE: i64 = i64::MAX;

/// Push turns to pull when the frontier's out-edges exceed 1/`ALPHA` of the edges
/// still unexplored (Beamer's α).
pub const ALPHA: u64 = 14;
/// Pull turns back to push when the frontier holds fewer than 1/`BETA` of the
/// vertices (Beamer's β).
pub const BETA: u64 = 24;

/// The direction of the next level: the rule of Beamer et al. with [`ALPHA`] and
/// [`BETA`]. `frontier_edges` are the out-edges of the frontier, `unexplored_edges` the
/// edges into vertices not yet visited (what a pull may have to read).
pub fn next_direction(current: Direction, n: u64, frontier_vertices: u64, frontier_edges: u64, unexplored_edges: u64) -> Direction {
    match current {
        Direction::Pull if frontier_vertices * BETA >= n => Direction::Pull,
        Direction::Pull => Direction::Push,
        _ if frontier_edges * ALPHA > unexplored_edges => Direction::Pull,
        _ => Direction::Push,
    }
}

/// Depths from `source` in the graph with adjacency matrix `a` (`a(i, j)` present:
/// an edge i → j; values ignored). `threads` threads per operation.
pub fn bfs<A: Cast<bool>>(a: &Matrix<A>, source: usize, threads: usize) -> GrbResult<Vec<i64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("BFS needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    if source >= n {
        return Err(GrbError::InvalidValue(format!("BFS source {source} is not a vertex (the graph has {n})")));
    }
    let (outdeg, indeg) = (a.row_counts(), a.col_counts());
    let desc = Descriptor::with_threads(threads);
    let mut depth: Vector<i64> = Vector::empty(n);
    let mut frontier: Vector<bool> = Vector::sparse(n, &[(source, true)])?;
    let mut unexplored = a.nvals() as u64;
    let mut direction = Direction::Push;
    for level in 0.. {
        assign_scalar(&mut depth, Some(&Mask::structure(&frontier)), None, level, &desc)?;
        let (mut frontier_edges, mut explored) = (0u64, 0u64);
        for (v, _) in frontier.entries() {
            frontier_edges += outdeg[v] as u64;
            explored += indeg[v] as u64;
        }
        unexplored = unexplored.saturating_sub(explored);
        direction = next_direction(direction, n as u64, frontier.nvals() as u64, frontier_edges, unexplored);
        let unvisited = Mask::structure(&depth).complement();
        let mut next = Vector::empty(n);
        vxm(&mut next, Some(&unvisited), None, ANY_PAIR, &frontier, a, &desc.replace().direction(direction))?;
        if next.nvals() == 0 {
            break;
        }
        frontier = next;
    }
    Ok(depth.to_dense_with(UNREACHABLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_cycle_and_unreachable() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 4 isolated, 5 -> 0 (not reachable from 0).
        let a = Matrix::<bool>::from_edges(6, 6, &[(0, 1), (1, 2), (2, 0), (2, 3), (5, 0), (1, 1)]).unwrap();
        assert_eq!(bfs(&a, 0, 1).unwrap(), vec![0, 1, 2, 3, UNREACHABLE, UNREACHABLE]);
        assert_eq!(bfs(&a, 5, 2).unwrap(), vec![1, 2, 3, 4, UNREACHABLE, 0]);
        assert!(bfs(&a, 6, 1).is_err());
    }

    #[test]
    fn direction_rule() {
        assert_eq!(next_direction(Direction::Push, 1000, 10, 100, 10_000), Direction::Push);
        assert_eq!(next_direction(Direction::Push, 1000, 10, 1000, 10_000), Direction::Pull);
        assert_eq!(next_direction(Direction::Pull, 1000, 100, 0, 0), Direction::Pull);
        assert_eq!(next_direction(Direction::Pull, 1000, 40, 0, 0), Direction::Push);
    }

    /// A path of 2,000 edges among 4 million vertices: 2,000 levels of one vertex each.
    /// A level that touches all n positions (bitmaps of the depth, the masks and the
    /// product) costs milliseconds here, 2,000 of them tens of seconds; one that costs
    /// its frontier (sparse results, merged write-backs, masks of n bits) well under a
    /// second in all. Bounded: a result later than the limit is a failure, not a hang.
    #[test]
    fn a_level_costs_its_frontier_not_n() {
        const N: usize = 1 << 22;
        const PATH: usize = 2000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
        let edges: Vec<(usize, usize)> = (0..PATH).map(|v| (v, v + 1)).collect();
        let a = Matrix::<bool>::from_edges(N, N, &edges).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(bfs(&a, 0, 2)));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("BFS of {PATH} levels over {N} vertices took over {LIMIT:?}")).unwrap();
        assert!((0..=PATH).all(|v| got[v] == v as i64) && got[PATH + 1..].iter().all(|&d| d == UNREACHABLE));
    }
}
