//! Weakly connected components: edges are followed in both directions; every vertex
//! gets the smallest vertex number of its component (in the crate's numbering, which
//! follows the input's ids in ascending order, so this is the smallest original id).
//!
//! FastSV (Zhang, Azad, Hu 2020, as LAGraph's `LG_CC_FastSV`) over a parent vector
//! `f` (start: every vertex its own parent) and the grandparents `gf = f(f)`, each
//! round:
//!
//! 1. `mngf = A min.second gf` ⊕min `Aᵀ min.second gf`: the smallest grandparent among
//!    the out- and in-neighbours ([`mxv`] with [`MIN_SECOND`]);
//! 2. stochastic hooking `f(f(i)) min= mngf(i)` ([`assign_indices`]);
//! 3. aggressive hooking `f(i) min= mngf(i)`, shortcutting `f(i) min= gf(i)`
//!    ([`apply`] with a min accumulator);
//! 4. `gf = f(f)` ([`extract`]); stop when `gf` did not change.
//!
//! Labels only decrease and the smallest vertex of a component keeps itself as
//! parent, so at the fixed point every vertex points at it.

use crate::algebra::{Cast, Min, MIN_SECOND};
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{apply, assign_indices, extract, mxv, Descriptor};
use crate::vector::Vector;

/// The component label (smallest vertex number of its component) of every vertex of
/// the graph with adjacency matrix `a` (edge directions and values ignored).
pub fn wcc<A: Cast<u32>>(a: &Matrix<A>, threads: usize) -> GrbResult<Vec<u32>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("WCC needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    let (labels, _) = fastsv::<A, GrbError>(n, 0, &[(a, false), (a, true)], threads, |_| Ok(()), |_, _| {})?;
    Ok(labels)
}

/// FastSV over the rows `lo..lo + nloc` of an `n`-vertex graph, replicated parent
/// vector: `neighbours` are matrices whose rows (or columns, when the flag says
/// transposed) are this block's vertices and whose entries are their neighbours
/// (all `n` columns); together they must give every edge of the block's vertices in
/// both directions. `combine` makes the proposed parents of all blocks one vector
/// (identity for a single block; an element-wise min over the processes for the
/// distributed kernel) — every block then holds the same `f`, takes the same stopping
/// decision, and the loop stays in step. `observe(round, changed)` follows each round
/// (from 1; `changed`: the vertices whose grandparent changed, 0 in the last). Returns
/// the labels and the rounds run.
pub(crate) fn fastsv<A: Cast<u32>, E: From<GrbError>>(
    n: usize,
    lo: usize,
    neighbours: &[(&Matrix<A>, bool)],
    threads: usize,
    mut combine: impl FnMut(&mut Vec<u32>) -> Result<(), E>,
    mut observe: impl FnMut(usize, u64),
) -> Result<(Vec<u32>, usize), E> {
    let desc = Descriptor::with_threads(threads);
    let nloc = neighbours.first().map_or(0, |&(m, t)| if t { m.ncols() } else { m.nrows() });
    let own: Vec<u32> = (lo as u32..(lo + nloc) as u32).collect();
    let min: &(dyn Fn(u32, u32) -> u32 + Sync) = &|x, y| x.min(y);
    let mut f: Vec<u32> = (0..n as u32).collect();
    let mut gf = Vector::dense(f.clone());
    for round in 1.. {
        let mut mngf = Vector::empty(nloc);
        for (k, &(m, transposed)) in neighbours.iter().enumerate() {
            let d = if transposed { desc.transpose() } else { desc };
            mxv(&mut mngf, None, (k > 0).then_some(min), MIN_SECOND, m, &gf, &d)?;
        }
        let own_parents = f[lo..lo + nloc].to_vec();
        let mut proposed = Vector::dense(f);
        assign_indices(&mut proposed, Min, &mngf, &own_parents)?;
        assign_indices(&mut proposed, Min, &mngf, &own)?;
        apply(&mut proposed, None, Some(min), |x| x, &gf, &desc)?;
        f = proposed.to_dense_with(0);
        combine(&mut f)?;
        let fv = Vector::dense(f.clone());
        let mut next = Vector::empty(n);
        extract(&mut next, None, None, &fv, &f, &desc)?;
        let changed = next.differences(&gf);
        observe(round, changed as u64);
        if changed == 0 {
            return Ok((f, round));
        }
        gf = next;
    }
    unreachable!("the rounds are unbounded")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_take_their_smallest_vertex() {
        // {0, 3, 5} (3 -> 0 and 5 -> 3: only weakly connected), {1, 2}, {4} alone, {6} with a self-loop.
        let a = Matrix::<bool>::from_edges(7, 7, &[(3, 0), (5, 3), (2, 1), (2, 1), (6, 6)]).unwrap();
        assert_eq!(wcc(&a, 1).unwrap(), vec![0, 1, 1, 0, 4, 0, 6]);
        assert_eq!(wcc(&a, 2).unwrap(), vec![0, 1, 1, 0, 4, 0, 6]);
    }

    #[test]
    fn long_path_numbered_backwards() {
        // A path n-1 -> n-2 -> ... -> 0 numbered against the direction of the hooks.
        let n = 200;
        let edges: Vec<(usize, usize)> = (1..n).map(|i| (i, i - 1)).collect();
        let a = Matrix::<bool>::from_edges(n, n, &edges).unwrap();
        assert_eq!(wcc(&a, 2).unwrap(), vec![0; n]);
    }
}
