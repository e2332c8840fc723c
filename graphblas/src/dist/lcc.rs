//! Distributed local clustering coefficient: the triangle sums of
//! [`crate::algorithms::lcc`], each triangle counted by the process that owns its
//! first corner in LCC's order. The block's rows of `A + Aᵀ` come from the kernels'
//! adjacency (its out- and in-rows); the order needs every vertex's neighbour count
//! (one all-gather); each process keeps its rows' later neighbours (`U`) and asks the
//! owners for the `U` rows of those neighbours (one alltoallv of vertex numbers, one of
//! the rows back), so it holds its triangles' edges and nothing else. A triangle's
//! corners are credited wherever they live: the per-vertex sums are added over the
//! processes (a reduce-scatter and all-gather of n words).

use super::adjacency::{Adjacency, VertexValues};
use super::build::even_owner;
use super::comm::{try_zeroed, Comm};
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{unweighted_kernel, DistResult, Input};
use crate::algorithms::lcc::{coefficients, counting_order};
use crate::matrix::Matrix;
use crate::ops::triangle_sums;
use crate::parallel::{balanced_row_blocks, run_blocks};
use lpf::Context;
use std::time::Instant;

/// The local clustering coefficient of every vertex of this process (Graphalytics
/// LCC: neighbours = in ∪ out without the vertex, directed edges among them over
/// `d (d − 1)`, 0 below two neighbours). Collective; the same error on every process.
pub fn lcc_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<f64>> {
    lcc_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`lcc_spmd`], calling `observe` on every process after each of its two phases:
/// `phase 1, candidates c` once every process knows every vertex's neighbour count (c:
/// the vertices with two or more neighbours), `phase 2, links l` once the triangle sums
/// are added up (l: the edges among the vertices' neighbours, summed over the vertices).
pub(crate) fn lcc_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<f64>> {
    unweighted_kernel(ctx, input, threads, "LCC", |comm, g, threads| compute(comm, g, threads, observe))
}


/// The coefficients of this process's block.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<f64>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let mut progress = Rounds::start("phase", observe);
    let (lo, hi) = (adj.lo, adj.lo + adj.rows());
    let (sums, degrees) = triangle_sums_everywhere(comm, adj, threads, Weighing::Directions, "links", &mut progress)?;
    let values = coefficients(&sums[lo..hi], &degrees[lo..hi]);
    Ok(Computed { values, rounds: 1, seconds: t1.elapsed().as_secs_f64() })
}

/// What a triangle credits each corner with: the directed edges between the other two
/// (LCC's numerator), or 1 (the triangle count).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Weighing {
    Directions,
    Unit,
}

/// The triangle sums of every vertex of the undirected simple graph (`sums`, all n,
/// the same on every process) and every vertex's neighbour count: each process counts
/// the triangles whose first corner (in LCC's order) is its own. Reports phase 1
/// (`candidates`) and phase 2 (`measure`: the sums' total). Collective.
///
/// The counting runs in the numbering of LCC's order ([`counting_order`]): each
/// process writes its rows' later neighbours straight from its out- and in-rows in
/// that numbering, so no `A + Aᵀ` and no selection is built, and fetches the rows of
/// those neighbours from their owners (none with one process).
pub(crate) fn triangle_sums_everywhere(
    comm: &mut Comm<'_>,
    adj: &Adjacency,
    threads: usize,
    weighing: Weighing,
    measure: &'static str,
    progress: &mut Rounds<'_>,
) -> DistResult<(Vec<u64>, Vec<usize>)> {
    let (lo, hi, n) = (adj.lo, adj.lo + adj.rows(), adj.n);
    let blocks = row_blocks(adj, threads);
    let mine: Vec<u32> = run_blocks(blocks.windows(2).map(|w| w[0]..w[1]).collect(), |_, rows| {
        rows.map(|k| adj.neighbours(k).count() as u32).collect::<Vec<u32>>()
    })?
    .concat();
    let (degrees, _) = comm.allgatherv(&mine)?;
    drop(mine);
    let degrees: Vec<usize> = degrees.into_iter().map(|d| d as usize).collect();
    progress.done(1, "candidates", Measure::Count(degrees.iter().filter(|&&d| d >= 2).count() as u64));
    let rank = counting_order(&degrees);
    let later = later_rows(adj, &rank, weighing, &blocks)?;
    let ranked = if comm.p == 1 {
        placed_rows(n, comm.me, (0..adj.rows()).map(|k| (rank[lo + k] as usize, later.csr().line(k))))?
    } else {
        let mut vertex_at = vec![0u32; n];
        for (v, &r) in rank.iter().enumerate() {
            vertex_at[r as usize] = v as u32;
        }
        let mut wanted: Vec<u32> = later.csr().idx.iter().map(|&r| vertex_at[r as usize]).collect();
        drop(vertex_at);
        wanted.extend(lo as u32..hi as u32);
        wanted.sort_unstable();
        wanted.dedup();
        let got = rows_of(comm, adj, &later, &wanted)?;
        drop(later);
        comm.agree(placed_rows(n, comm.me, Replies { wanted: &wanted, got: &got, at: 0 }.map(|(u, row)| (rank[u as usize] as usize, row))))?
    };
    let mut corners: Vec<u32> = rank[lo..hi].to_vec();
    corners.sort_unstable();
    let mut sums = triangle_sums(&ranked, &corners, threads)?;
    drop(ranked);
    comm.allreduce_sum_u64_long(&mut sums)?;
    let sums: Vec<u64> = rank.iter().map(|&r| sums[r as usize]).collect();
    progress.done(2, measure, Measure::Count(sums.iter().sum()));
    Ok((sums, degrees))
}

/// Bounds of `threads` blocks of the adjacency's rows of about equal out- plus in-edges.
fn row_blocks(adj: &Adjacency, threads: usize) -> Vec<usize> {
    let (out, inn) = (&adj.out.csr().ptr, &adj.inn.csr().ptr);
    let both: Vec<usize> = out.iter().zip(inn).map(|(a, b)| a + b).collect();
    balanced_row_blocks(&both, threads.max(1))
}

/// Row k: the neighbours x of vertex `lo + k` that come after it in LCC's order, as
/// `rank[x]`, ascending, each with its weight (the directed edges between the two, 1
/// or 2, or 1 for [`Weighing::Unit`]): the block's rows of the orientation `U`,
/// renumbered. Threads take the row `blocks`.
fn later_rows(adj: &Adjacency, rank: &[u32], weighing: Weighing, blocks: &[usize]) -> DistResult<Matrix<u32>> {
    let parts = run_blocks(blocks.windows(2).map(|w| w[0]..w[1]).collect(), |_, rows| {
        let (mut lens, mut entries) = (Vec::with_capacity(rows.len()), Vec::new());
        for k in rows {
            let v = adj.lo + k;
            let at = entries.len();
            let mut neighbours = adj.neighbours(k);
            while let Some((x, directions)) = neighbours.next_with_directions() {
                if rank[x as usize] > rank[v] {
                    let w = if weighing == Weighing::Unit { 1 } else { directions };
                    entries.push((rank[x as usize] as u64) << 32 | w as u64);
                }
            }
            entries[at..].sort_unstable();
            lens.push(entries.len() - at);
        }
        (lens, entries)
    })?;
    let mut ptr = Vec::with_capacity(adj.rows() + 1);
    ptr.push(0usize);
    let total: usize = parts.iter().map(|(_, e)| e.len()).sum();
    let (mut idx, mut val) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (lens, entries) in parts {
        for len in lens {
            ptr.push(ptr[ptr.len() - 1] + len);
        }
        idx.extend(entries.iter().map(|&e| (e >> 32) as u32));
        val.extend(entries.iter().map(|&e| e as u32));
    }
    Ok(Matrix::from_csr_parts(adj.rows(), adj.n, ptr, idx, val)?)
}

/// An n × n matrix holding each given row (position, (columns, values)) at its
/// position, and no other row; its arrays claimed fallibly (process `me` names itself
/// in the error).
fn placed_rows<'a>(n: usize, me: usize, rows: impl Iterator<Item = (usize, (&'a [u32], &'a [u32]))> + Clone) -> DistResult<Matrix<u32>> {
    let mut ptr = try_zeroed::<usize>(n + 1, me, "the row offsets of the neighbours' edges")?;
    for (at, (cols, _)) in rows.clone() {
        ptr[at + 1] = cols.len();
    }
    for v in 0..n {
        ptr[v + 1] += ptr[v];
    }
    let mut idx = try_zeroed::<u32>(ptr[n], me, "the neighbours' edges")?;
    let mut val = try_zeroed::<u32>(ptr[n], me, "the neighbours' edge weights")?;
    for (at, (cols, vals)) in rows {
        idx[ptr[at]..ptr[at + 1]].copy_from_slice(cols);
        val[ptr[at]..ptr[at + 1]].copy_from_slice(vals);
    }
    Ok(Matrix::from_csr_parts(n, n, ptr, idx, val)?)
}

/// The rows of `rows_of`'s reply: for each of the ascending `wanted`, its length, its
/// columns and its values.
#[derive(Clone)]
struct Replies<'a> {
    wanted: &'a [u32],
    got: &'a [u32],
    at: usize,
}

impl<'a> Iterator for Replies<'a> {
    type Item = (u32, (&'a [u32], &'a [u32]));

    fn next(&mut self) -> Option<Self::Item> {
        let (&u, rest) = self.wanted.split_first()?;
        let len = self.got[self.at] as usize;
        let row = &self.got[self.at + 1..self.at + 1 + 2 * len];
        (self.wanted, self.at) = (rest, self.at + 1 + 2 * len);
        Some((u, row.split_at(len)))
    }
}

/// For every vertex of the ascending `wanted`, its row of `rows` (a block of this
/// process's rows, as `adj`'s; fetched from its owner) with its values: for each, its
/// length, its columns and its values ([`Replies`]). Collective: two alltoallv.
fn rows_of(comm: &mut Comm<'_>, adj: &Adjacency, rows: &Matrix<u32>, wanted: &[u32]) -> DistResult<Vec<u32>> {
    let (p, n) = (comm.p, adj.n);
    // Ascending, so the requests to each owner are contiguous and in owner order.
    let mut counts = vec![0usize; p];
    for &u in wanted {
        counts[even_owner(u as usize, n, p)] += 1;
    }
    let (asked, asked_counts) = comm.alltoallv(wanted, &counts)?;
    // To each asker, in the order asked: the row's length, its columns, its values.
    let rows = rows.csr();
    let (mut reply, mut reply_counts) = (Vec::new(), vec![0usize; p]);
    let mut at = 0;
    for q in 0..p {
        let start = reply.len();
        for &u in &asked[at..at + asked_counts[q]] {
            let (row, values) = rows.line(u as usize - adj.lo);
            reply.push(row.len() as u32);
            reply.extend_from_slice(row);
            reply.extend_from_slice(values);
        }
        at += asked_counts[q];
        reply_counts[q] = reply.len() - start;
    }
    drop(asked);
    let (got, _) = comm.alltoallv(&reply, &reply_counts)?;
    Ok(got)
}

