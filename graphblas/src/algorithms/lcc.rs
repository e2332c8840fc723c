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
//! ([`counted_before`]; counted in that order's numbering, [`in_counting_order`]), so a hub's
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
    let rank = counting_order(&degrees);
    let ranked = in_counting_order(&later, &rank)?;
    drop(later);
    let corners: Vec<u32> = (0..n as u32).collect();
    let sums = triangle_sums(&ranked, &corners, threads)?;
    let sums: Vec<u64> = rank.iter().map(|&r| sums[r as usize]).collect();
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

/// The positions of the vertices in the order LCC counts from ([`counted_before`]):
/// `rank[v]` is v's place when the vertices are sorted by (neighbour count, number).
/// The triangles are counted in this numbering ([`in_counting_order`]), as GAP's `tc`
/// relabels by degree: a hub's marks, credits and sums then sit beside the other hubs'
/// at the end of the per-thread arrays, which stay in cache while the many short rows
/// of a skewed graph are scanned against them. A counting sort: O(n + largest count).
pub(crate) fn counting_order(degrees: &[usize]) -> Vec<u32> {
    let top = degrees.iter().copied().max().unwrap_or(0);
    let mut start = vec![0usize; top + 2];
    for &d in degrees {
        start[d + 1] += 1;
    }
    for d in 0..=top {
        start[d + 1] += start[d];
    }
    // Vertices visited by ascending number, so ties keep number order.
    degrees
        .iter()
        .map(|&d| {
            let r = start[d];
            start[d] += 1;
            r as u32
        })
        .collect()
}

/// The rows of `later` (an orientation by [`counted_before`]: every column of row v
/// comes after v) renumbered by `rank` ([`counting_order`]): row `rank[v]` holds
/// `rank[x]` for the x of row v, ascending, with their values. The orientation makes
/// every column of a row larger than the row in the new numbering as in the old one.
pub(crate) fn in_counting_order(later: &Matrix<u32>, rank: &[u32]) -> GrbResult<Matrix<u32>> {
    let n = later.nrows();
    let c = later.csr();
    let mut vertex_at = vec![0u32; n];
    for (v, &r) in rank.iter().enumerate() {
        vertex_at[r as usize] = v as u32;
    }
    let mut ptr = Vec::with_capacity(n + 1);
    ptr.push(0usize);
    let mut idx = Vec::with_capacity(c.idx.len());
    let mut val = Vec::with_capacity(c.idx.len());
    // One (new column, value) pair per entry packed in a u64, sorted per row.
    let mut row: Vec<u64> = Vec::new();
    for &v in &vertex_at {
        let (cols, vals) = c.line(v as usize);
        row.clear();
        row.extend(cols.iter().zip(vals).map(|(&x, &w)| (rank[x as usize] as u64) << 32 | w as u64));
        row.sort_unstable();
        idx.extend(row.iter().map(|&e| (e >> 32) as u32));
        val.extend(row.iter().map(|&e| e as u32));
        ptr.push(idx.len());
    }
    Matrix::from_csr_parts(n, n, ptr, idx, val)
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
