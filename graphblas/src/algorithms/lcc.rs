//! Local clustering coefficient (Graphalytics LCC). The neighbours of v are
//! `N(v) = in(v) ∪ out(v)` without v itself; `LCC(v)` is the number of directed edges
//! `u → w` with `u, w ∈ N(v)`, `u ≠ w`, divided by `|N(v)| (|N(v)| − 1)`, and 0 when
//! `|N(v)| < 2`. Duplicate edges count once and self-loops not at all. On an
//! undirected graph (every edge stored both ways) this is the usual coefficient: each
//! undirected edge among the neighbours counts twice, over `d (d − 1)`.
//!
//! Written as LAGraph's LCC, with its sort by degree: `S = offdiag(A ∪ Aᵀ)` (the
//! neighbour pattern, by [`ewise_add_matrix`] and [`select_matrix`]) and the order
//! "fewer neighbours first, then the smaller number" ([`counted_before`]). Every pair
//! {u, w} of neighbours of v with an edge between them is counted once, from its
//! earlier end u: `[u → w] + [w → u] = [w ∈ Out⁺(u)] + [w ∈ In⁺(u)]`, where `Out⁺(u)` /
//! `In⁺(u)` keep only the out- / in-neighbours after u in the order. Split N(v) into
//! the earlier neighbours `L(v)` and the later ones `U(v)`: a pair whose later end w is
//! in `U(v)` may have its earlier end u anywhere in N(v); one whose w is in `L(v)` has
//! u in `L(v)` too. So, for X in {Out⁺, In⁺}, the numerator of v sums the rows of the
//! masked products `C⟨U⟩ = S plus.pair X` and `C⟨L⟩ = L plus.pair X` ([`mxm_masked`],
//! [`reduce_to_vector`]); the denominator comes from the row counts of S. Each row
//! then meets short lists only — `U(v)` is short for a hub v, `X(u)` is short for a hub
//! u, and the rows of `L` only name vertices u before v — so the work is about
//! Σ_v |U(v)|² (times a log), where the plain `C⟨S⟩ = S plus.pair offdiag(A)` costs
//! Σ_v deg(v)².

use crate::algebra::{Cast, First, Plus, Scalar, PLUS_PAIR};
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{ewise_add_matrix, mxm_masked, reduce_to_vector, select_matrix, Descriptor};
use crate::vector::Vector;

/// The coefficient of every vertex of the graph with adjacency matrix `a` (`a(i, j)`:
/// an edge i → j; values ignored), by vertex number.
pub fn lcc<A: Cast<u64>>(a: &Matrix<A>, threads: usize) -> GrbResult<Vec<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("LCC needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    let at = a.transpose();
    let both = ewise_add_matrix(a, &at, First, threads)?;
    let neighbours = select_matrix(&both, |i, j, _| i != j, threads)?;
    drop(both);
    let degrees = neighbours.row_counts();
    let later = |i: usize, j: usize| counted_before(&degrees, i, j);
    let out_later = select_matrix(a, |i, j, _| later(i, j), threads)?;
    let in_later = select_matrix(&at, |i, j, _| later(i, j), threads)?;
    let split = Neighbours::split(neighbours, later, threads)?;
    coefficients(&split, &out_later, &in_later, threads)
}

/// The neighbour pattern of a block of vertices (row r: N(v) of its r-th vertex, over
/// all n columns) and its two parts by [`counted_before`]: the neighbours before the
/// row's vertex and those after it.
pub(crate) struct Neighbours<X> {
    pub all: Matrix<X>,
    pub earlier: Matrix<X>,
    pub later: Matrix<X>,
}

impl<X: Scalar> Neighbours<X> {
    /// Splits `all` by `after(r, j)`: whether column j comes after the vertex of row r.
    pub fn split(all: Matrix<X>, after: impl Fn(usize, usize) -> bool + Sync, threads: usize) -> GrbResult<Self> {
        let earlier = select_matrix(&all, |r, j, _| !after(r, j), threads)?;
        let later = select_matrix(&all, |r, j, _| after(r, j), threads)?;
        Ok(Neighbours { all, earlier, later })
    }
}

/// Whether vertex `u` comes before `w` in the order LCC counts from: fewer neighbours
/// (`degrees`, by vertex number) first, ties by vertex number. A strict total order,
/// so no vertex comes before itself (self-loops drop out).
pub(crate) fn counted_before(degrees: &[usize], u: usize, w: usize) -> bool {
    (degrees[u], u) < (degrees[w], w)
}

/// The coefficients of the rows of `neighbours` given, for at least every vertex u
/// that is some row's neighbour, its out-row `out_later` and its in-row `in_later`
/// (n × n) restricted to the vertices [`counted_before`] puts after u.
pub(crate) fn coefficients<X: Cast<u64>, Y: Cast<u64>, Z: Cast<u64>>(
    neighbours: &Neighbours<X>,
    out_later: &Matrix<Y>,
    in_later: &Matrix<Z>,
    threads: usize,
) -> GrbResult<Vec<f64>> {
    let desc = Descriptor::with_threads(threads);
    let Neighbours { all, earlier, later } = neighbours;
    let mut counts = Vector::<u64>::empty(all.nrows());
    let add = |x: u64, y: u64| x + y;
    // (mask, A): pairs ending after the row's vertex, then pairs ending before it.
    for (mask, a) in [(later, all), (earlier, earlier)] {
        for closed in [mxm_masked::<u64, _, _, _, _>(mask, PLUS_PAIR, a, out_later, threads)?, mxm_masked(mask, PLUS_PAIR, a, in_later, threads)?] {
            reduce_to_vector(&mut counts, None, Some(&add), Plus, &closed, &desc)?;
        }
    }
    let degrees = all.row_counts();
    Ok(counts
        .to_dense_with(0)
        .iter()
        .zip(&degrees)
        .map(|(&t, &d)| if d < 2 { 0.0 } else { t as f64 / (d as f64 * (d - 1) as f64) })
        .collect())
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_triangle_and_its_reverse_edges() {
        // 0 -> 1, 1 -> 2, 2 -> 0: N(v) has the two others, one directed edge among
        // them: 1 / (2 * 1) = 0.5 each. 3 -> 0 adds a neighbour of 0 without edges to
        // the others: N(0) = {1, 2, 3}, 1 edge (1 -> 2) over 6.
        let a = Matrix::<bool>::from_edges(4, 4, &[(0, 1), (1, 2), (2, 0), (3, 0)]).unwrap();
        assert_eq!(lcc(&a, 1).unwrap(), vec![1.0 / 6.0, 0.5, 0.5, 0.0]);
        // Both directions of every triangle edge: 2 of 2 possible for 1 and 2.
        let a = Matrix::<bool>::from_edges(3, 3, &[(0, 1), (1, 0), (1, 2), (2, 1), (2, 0), (0, 2)]).unwrap();
        assert_eq!(lcc(&a, 2).unwrap(), vec![1.0, 1.0, 1.0]);
    }

    /// A hub joined both ways to L leaves that form a directed cycle. Row by row, every
    /// leaf names the hub, whose row has L entries: scanning it from every leaf is L²
    /// steps (9 · 10¹⁰ here: about 30 s on 2 cores), while meeting each leaf's 3 neighbours with it
    /// costs a few searches. Bounded: the computation runs on its own thread and a
    /// result later than the limit is a failure, not a hang.
    #[test]
    fn a_hub_costs_its_low_degree_neighbours_only_their_degree() {
        const L: usize = 300_000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
        let mut edges = Vec::with_capacity(3 * L);
        for leaf in 1..=L {
            edges.extend([(0, leaf), (leaf, 0), (leaf, leaf % L + 1)]);
        }
        let a = Matrix::<bool>::from_edges(L + 1, L + 1, &edges).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(lcc(&a, 2)));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("LCC of a hub with {L} leaves took over {LIMIT:?}")).unwrap();
        // The hub: the L cycle edges among its L neighbours. A leaf: neighbours hub,
        // previous and next leaf; the hub's 2 + 2 edges with them, none between them.
        assert_eq!(got[0], L as f64 / (L as f64 * (L - 1) as f64));
        assert!(got[1..].iter().all(|&c| c == 4.0 / 6.0), "a leaf's coefficient is not 4 / 6");
    }

    #[test]
    fn self_loops_count_neither_as_neighbour_nor_as_edge() {
        // 0 -> 0, 1 -> 1 and the path 1 -> 0 -> 2: N(0) = {1, 2} with no edge between
        // them (the self-loop 1 -> 1 is not an edge u -> w with u != w).
        let a = Matrix::<bool>::from_edges(3, 3, &[(0, 0), (1, 1), (1, 0), (0, 2)]).unwrap();
        assert_eq!(lcc(&a, 1).unwrap(), vec![0.0, 0.0, 0.0]);
    }
}
