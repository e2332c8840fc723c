//! Local clustering coefficient (Graphalytics LCC). The neighbours of v are
//! `N(v) = in(v) ∪ out(v)` without v itself; `LCC(v)` is the number of directed edges
//! `u → w` with `u, w ∈ N(v)`, `u ≠ w`, divided by `|N(v)| (|N(v)| − 1)`, and 0 when
//! `|N(v)| < 2`. Duplicate edges count once and self-loops not at all. On an
//! undirected graph (every edge stored both ways) this is the usual coefficient: each
//! undirected edge among the neighbours counts twice, over `d (d − 1)`.
//!
//! Numerator of v: every pair {x, y} ⊂ N(v) of neighbours joined by an edge adds the
//! number of directed edges between them (1 or 2): the weight of the edge {x, y} of
//! the triangle {v, x, y} of the neighbour pattern `S = offdiag(A ∪ Aᵀ)`. So the
//! numerators are per-vertex sums over triangles of the opposite edge's weight
//! ([`triangle_sums`]), with `W = A + Aᵀ` (pattern counts, by [`pattern_with`] and
//! [`ewise_add_matrix`]) as weights, each triangle found once and credited to its three
//! corners. The orientation is LAGraph's sort by degree: each edge of S kept once, from
//! its earlier end in the order "fewer neighbours first, then the smaller number"
//! ([`counted_before`]; a predicate of [`select_matrix`], so no relabelling), so a hub's
//! row is short and the work is about Σ_{(a, b) ∈ U} min(|U(b)|, |U(a)| log |U(b)|),
//! where LAGraph's masked products `C⟨S⟩ = S plus.pair U` over both directions find
//! every triangle from each of its corners, twice. The denominator comes from the row
//! counts of S. The counts are integers, so the only rounding is the final division.

use crate::algebra::{Plus, Scalar};
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::ops::{ewise_add_matrix, pattern_with, select_matrix, triangle_sums};

/// The coefficient of every vertex of the graph with adjacency matrix `a` (`a(i, j)`:
/// an edge i → j; values ignored), by vertex number.
pub fn lcc<A: Scalar>(a: &Matrix<A>, threads: usize) -> GrbResult<Vec<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("LCC needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    let edges = pattern_with(a, 1u32)?;
    let directions = ewise_add_matrix(&edges, &edges.transpose(), Plus, threads)?;
    drop(edges);
    let degrees = neighbour_counts(&directions, 0);
    let later = select_matrix(&directions, |i, j, _| counted_before(&degrees, i, j), threads)?;
    drop(directions);
    let sums = triangle_sums(&later, 0..n, threads)?;
    Ok(coefficients(&sums, &degrees))
}

/// The number of neighbours of each row's vertex (row r: vertex `first + r`) given the
/// rows of `A + Aᵀ`: the row's entries other than the vertex itself.
pub(crate) fn neighbour_counts(directions: &Matrix<u32>, first: usize) -> Vec<usize> {
    let c = directions.csr();
    (0..directions.nrows())
        .map(|r| {
            let (row, _) = c.line(r);
            row.len() - usize::from(row.binary_search(&((first + r) as u32)).is_ok())
        })
        .collect()
}

/// Whether vertex `u` comes before `w` in the order LCC counts from: fewer neighbours
/// (`degrees`, by vertex number) first, ties by vertex number. A strict total order,
/// so no vertex comes before itself (self-loops drop out).
pub(crate) fn counted_before(degrees: &[usize], u: usize, w: usize) -> bool {
    (degrees[u], u) < (degrees[w], w)
}

/// The coefficients from each vertex's triangle sum (the directed edges among its
/// neighbours) and neighbour count.
pub(crate) fn coefficients(sums: &[u64], degrees: &[usize]) -> Vec<f64> {
    sums.iter()
        .zip(degrees)
        .map(|(&t, &d)| if d < 2 { 0.0 } else { t as f64 / (d as f64 * (d - 1) as f64) })
        .collect()
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

    /// The complete bipartite graph K(m, m), edges from the first side to the second
    /// (no triangles: every coefficient is 0). All degrees are m, so the first side
    /// comes first in the order: U(a) is the whole second side, U(b) empty. Counting
    /// each pair from its earlier end k for every v it is a neighbour of (v on the
    /// second side, k ∈ L(v): m · m rows of m) is m³ steps (8 · 10⁹ here: over 10 s on
    /// 2 cores); finding each triangle once from its first corner, m · m rows that are
    /// empty. Bounded as the hub test above.
    #[test]
    fn a_dense_bipartite_graph_costs_its_edges_not_their_cube() {
        const M: usize = 2000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(4);
        let edges: Vec<(usize, usize)> = (0..M).flat_map(|a| (M..2 * M).map(move |b| (a, b))).collect();
        let a = Matrix::<bool>::from_edges(2 * M, 2 * M, &edges).unwrap();
        drop(edges);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(lcc(&a, 2)));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("LCC of K({M}, {M}) took over {LIMIT:?}")).unwrap();
        assert!(got.iter().all(|&c| c == 0.0), "K(m, m) has no triangles");
    }

    #[test]
    fn self_loops_count_neither_as_neighbour_nor_as_edge() {
        // 0 -> 0, 1 -> 1 and the path 1 -> 0 -> 2: N(0) = {1, 2} with no edge between
        // them (the self-loop 1 -> 1 is not an edge u -> w with u != w).
        let a = Matrix::<bool>::from_edges(3, 3, &[(0, 0), (1, 1), (1, 0), (0, 2)]).unwrap();
        assert_eq!(lcc(&a, 1).unwrap(), vec![0.0, 0.0, 0.0]);
    }
}
