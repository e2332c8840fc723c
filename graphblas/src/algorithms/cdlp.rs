//! Community detection by label propagation (Graphalytics CDLP): every vertex starts
//! with its own label (its vertex number, which follows the input ids in ascending
//! order, so the smallest number is the smallest id); in each of a fixed number of
//! synchronous iterations every vertex takes the most frequent label among its in- and
//! out-neighbours (the previous iteration's labels), ties to the smallest label. The
//! graph is a set of edges: duplicates count once. An edge u → v and v → u both count
//! (v twice in u's neighbourhood); a self-loop u → u is an edge like the others, so u's
//! own label counts twice (once as out-, once as in-neighbour). A vertex without
//! neighbours keeps its label.
//!
//! Each iteration is one [`mode_mxv`] over the out-edges and the in-edges (the
//! "mode.second" product), and the rows without neighbours keep their old label
//! ([`apply`] with a "second" accumulator).

use crate::algebra::{Cast, Scalar};
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Compressed, Matrix};
use crate::ops::{apply, mode_mxv, Descriptor};
use crate::vector::Vector;

/// Graphalytics' default number of iterations.
pub const DEFAULT_ITERATIONS: usize = 10;

/// The label (a vertex number) of every vertex of the graph with adjacency matrix
/// `a` (`a(i, j)`: an edge i → j; values ignored, duplicates already one entry) after
/// `iterations` iterations.
pub fn cdlp<A: Cast<bool>>(a: &Matrix<A>, iterations: usize, threads: usize) -> GrbResult<Vec<u32>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("CDLP needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    // Rows of the CSR: out-neighbours; rows of the CSC: in-neighbours.
    propagate::<A, GrbError>(n, 0, &[a.csr(), a.csc()], iterations, threads, Ok, |_, _| {})
}

/// The iterations over the rows `lo..lo + nloc` of an `n`-vertex graph: `lines` hold
/// the block's out- and in-neighbours as major lines (all n columns). `gather` makes
/// the block's new labels the labels of all n vertices (identity for one block; an
/// allgather over the processes for the distributed kernel). `observe(iteration,
/// changed)` follows each iteration (from 1; `changed`: the vertices whose label
/// changed). Returns the block's labels.
pub(crate) fn propagate<A: Scalar, E: From<GrbError>>(
    n: usize,
    lo: usize,
    lines: &[&Compressed<A>],
    iterations: usize,
    threads: usize,
    mut gather: impl FnMut(Vec<u32>) -> Result<Vec<u32>, E>,
    mut observe: impl FnMut(usize, u64),
) -> Result<Vec<u32>, E> {
    let nloc = lines.first().map_or(0, |c| c.nmajor());
    let desc = Descriptor::with_threads(threads);
    let second: &(dyn Fn(u32, u32) -> u32 + Sync) = &|_, new| new;
    let mut labels: Vector<u32> = Vector::dense((0..n as u32).collect());
    for iteration in 1..=iterations {
        let most = mode_mxv(lines, &labels, threads)?;
        let mut mine = Vector::dense(labels.to_dense_with(0)[lo..lo + nloc].to_vec());
        apply(&mut mine, None, Some(second), |x| x, &most, &desc)?;
        let next = Vector::dense(gather(mine.to_dense_with(0))?);
        observe(iteration, next.differences(&labels) as u64);
        labels = next;
    }
    Ok(labels.to_dense_with(0)[lo..lo + nloc].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_smallest_label_and_both_directions_count() {
        // 0 -> 1, 1 -> 0 (1 counts 0 twice), 2 -> 1; 3 isolated keeps 3.
        let a = Matrix::<bool>::from_edges(4, 4, &[(0, 1), (1, 0), (2, 1)]).unwrap();
        // Iteration 1: 0 sees {1, 1} -> 1; 1 sees {0, 0, 2} -> 0; 2 sees {1} -> 1.
        assert_eq!(cdlp(&a, 1, 1).unwrap(), vec![1, 0, 1, 3]);
        // Iteration 2 (from [1, 0, 1, 3]): 0 sees {0, 0} -> 0; 1 sees {1, 1, 1} -> 1; 2 sees {0} -> 0.
        assert_eq!(cdlp(&a, 2, 2).unwrap(), vec![0, 1, 0, 3]);
        assert_eq!(cdlp(&a, 0, 1).unwrap(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_self_loop_counts_its_own_label_twice() {
        // 0 -> 0, 0 -> 1, 2 -> 0: 0 sees {0, 0, 1, 2} and keeps 0 (without the
        // self-loop it would take 1).
        let a = Matrix::<bool>::from_edges(3, 3, &[(0, 0), (0, 1), (2, 0)]).unwrap();
        assert_eq!(cdlp(&a, 1, 1).unwrap(), vec![0, 0, 0]);
    }
}
