//! The graph as the kernels (BFS, WCC, CDLP, LCC) see it: the input loaded and
//! relabelled by [`super::load`], its edges routed to the owners of their targets and
//! deduplicated by [`super::build::route_and_dedup`] — the steps PageRank takes — and
//! then each in-edge also sent to the owner of its source, so that every process holds
//! both the in- and the out-neighbours of its block of vertices, as two `bool`
//! pattern matrices of its rows × all n columns (CSR only: the kernels walk rows).
//!
//! Vertices keep the dense input numbering `0..n` (ascending input id) in even blocks:
//! process q owns `even_start(q)..even_start(q + 1)`, so a result is already in
//! ascending id order per process and processes follow each other in pid order.
//! PageRank's renumbering by out-degree (for its summation order and cost model) is
//! not applied: these kernels' results do not depend on the order of the sums, and
//! WCC's label — the smallest id of a component — is the smallest input number.

use super::build::{bucket, csr_by_target, even_owner, even_start, route_and_dedup};
use super::comm::{try_filled, Comm};
use super::load::RawEdges;
use super::DistResult;
use crate::matrix::Matrix;

/// One process's share of a kernel's result.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexValues<T> {
    /// Vertices in the whole graph.
    pub n: u64,
    /// Edges in the whole graph (duplicates counted once; R-MAT: without self-loops).
    pub nnz: u64,
    /// The ids of this process's vertices as in the input, ascending; the blocks of the
    /// processes follow each other in pid order.
    pub ids: Vec<u64>,
    /// The value of `ids[k]` (BFS: depth; WCC: the smallest id of its component; SSSP:
    /// distance; CDLP: label; LCC: local clustering coefficient).
    pub values: Vec<T>,
    /// Position of `ids[0]` in the ascending order of all ids.
    pub first_index: u64,
    /// BFS: levels run (the largest finite depth + 1); WCC: Afforest link passes (1 on one
    /// process; with more, until a pass joins no trees); SSSP:
    /// delta-stepping supersteps (the last one improved nothing); CDLP: iterations; LCC: 1
    /// (one triangle count).
    pub rounds: usize,
    /// Read/generate, route and build, seconds (this process).
    pub load_seconds: f64,
    /// The kernel itself, seconds (this process).
    pub compute_seconds: f64,
}

/// This process's block of the graph.
pub(crate) struct Adjacency {
    pub n: usize,
    pub nnz: u64,
    /// First vertex number of this block.
    pub lo: usize,
    /// `inn(k, u)`: an edge u → lo + k.
    pub(crate) inn: Matrix<bool>,
    /// `out(k, v)`: an edge lo + k → v.
    pub out: Matrix<bool>,
}

impl Adjacency {
    pub fn rows(&self) -> usize {
        self.inn.nrows()
    }

    /// The neighbours of row `k` (vertex `lo + k`) in the undirected simple graph: its
    /// out- and in-neighbours merged, each once, without the vertex itself, ascending.
    pub fn neighbours(&self, k: usize) -> Neighbours<'_> {
        let (out, inn) = (self.out.csr().line(k).0, self.inn.csr().line(k).0);
        Neighbours { out, inn, own: (self.lo + k) as u32 }
    }
}

/// The merge of two ascending rows without repeats and without `own`.
pub(crate) struct Neighbours<'a> {
    out: &'a [u32],
    inn: &'a [u32],
    own: u32,
}

impl Neighbours<'_> {
    /// The next neighbour with the number of the two rows holding it (1 or 2: the
    /// directed edges between it and the vertex).
    #[inline]
    pub(crate) fn next_with_directions(&mut self) -> Option<(u32, u32)> {
        loop {
            let (u, d) = match (self.out.first(), self.inn.first()) {
                (Some(&a), Some(&b)) => {
                    if a <= b {
                        self.out = &self.out[1..];
                    }
                    if b <= a {
                        self.inn = &self.inn[1..];
                    }
                    (a.min(b), if a == b { 2 } else { 1 })
                }
                (Some(&a), None) => {
                    self.out = &self.out[1..];
                    (a, 1)
                }
                (None, Some(&b)) => {
                    self.inn = &self.inn[1..];
                    (b, 1)
                }
                (None, None) => return None,
            };
            if u != self.own {
                return Some((u, d));
            }
        }
    }
}

impl Iterator for Neighbours<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        self.next_with_directions().map(|(u, _)| u)
    }
}

/// Routes and deduplicates the loaded edges and builds this process's in- and
/// out-adjacency. Collective.
pub(crate) fn build(comm: &mut Comm<'_>, raw: RawEdges) -> DistResult<Adjacency> {
    let (p, me, n) = (comm.p, comm.me, raw.n);
    let routed = route_and_dedup(comm, raw)?;
    let nnz = comm.sum_u64(routed.src.len() as u64)?;
    let (lo, rows) = (routed.lo, routed.rows());
    debug_assert_eq!((lo, lo + rows), (even_start(me, n, p), even_start(me + 1, n, p)));
    // Every in-edge u → t of this block, as (t, u), to the owner of u.
    let each = |f: &mut dyn FnMut([u32; 2])| {
        for i in 0..rows {
            for &u in &routed.src[routed.ptr[i]..routed.ptr[i + 1]] {
                f([(lo + i) as u32, u])
            }
        }
    };
    let (send, counts) = bucket(me, p, routed.src.len(), each, |e| even_owner(e[1] as usize, n, p))?;
    let (recv, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let (out_ptr, out_idx) = csr_by_target(me, lo, rows, &recv, false)?;
    drop(recv);
    let in_vals = try_filled(routed.src.len(), true, me, "the in-edge pattern")?;
    let out_vals = try_filled(out_idx.len(), true, me, "the out-edge pattern")?;
    let inn = Matrix::from_csr_parts(rows, n, routed.ptr, routed.src, in_vals)?;
    let out = Matrix::from_csr_parts(rows, n, out_ptr, out_idx, out_vals)?;
    Ok(Adjacency { n, nnz, lo, inn, out })
}
