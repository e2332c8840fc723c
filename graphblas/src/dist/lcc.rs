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
use crate::algebra::Plus;
use crate::algorithms::lcc::{coefficients, counted_before, neighbour_counts};
use crate::matrix::Matrix;
use crate::ops::{ewise_add_matrix, pattern_with, select_matrix, triangle_sums};
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
pub fn lcc_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<f64>> {
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
pub(crate) fn triangle_sums_everywhere(
    comm: &mut Comm<'_>,
    adj: &Adjacency,
    threads: usize,
    weighing: Weighing,
    measure: &'static str,
    progress: &mut Rounds<'_>,
) -> DistResult<(Vec<u64>, Vec<usize>)> {
    let (lo, hi) = (adj.lo, adj.lo + adj.rows());
    let directions = ewise_add_matrix(&pattern_with(&adj.out, 1u32)?, &pattern_with(&adj.inn, 1u32)?, Plus, threads)?;
    let mine: Vec<u32> = neighbour_counts(&directions, lo).iter().map(|&d| d as u32).collect();
    let (degrees, _) = comm.allgatherv(&mine)?;
    let degrees: Vec<usize> = degrees.into_iter().map(|d| d as usize).collect();
    progress.done(1, "candidates", Measure::Count(degrees.iter().filter(|&&d| d >= 2).count() as u64));
    let later = select_matrix(&directions, |i, j, _| counted_before(&degrees, lo + i, j), threads)?;
    drop(directions);
    let later = match weighing {
        Weighing::Directions => later,
        Weighing::Unit => pattern_with(&later, 1u32)?,
    };
    let mut wanted = columns_of(&later);
    wanted.extend(lo as u32..hi as u32);
    wanted.sort_unstable();
    wanted.dedup();
    let rows = rows_of(comm, adj, &later, &wanted)?;
    drop(later);
    let mut sums = triangle_sums(&rows, lo..hi, threads)?;
    drop(rows);
    comm.allreduce_sum_u64_long(&mut sums)?;
    progress.done(2, measure, Measure::Count(sums.iter().sum()));
    Ok((sums, degrees))
}

/// The vertices that are a column of `block`, ascending.
fn columns_of(block: &Matrix<u32>) -> Vec<u32> {
    let mut wanted: Vec<u32> = block.csr().idx.clone();
    wanted.sort_unstable();
    wanted.dedup();
    wanted
}

/// An n × n matrix holding, for every vertex of the ascending `wanted`, its row of
/// `rows` (a block of this process's rows × n, as `adj`'s; fetched from its owner)
/// with its values, and no other row. Collective: two alltoallv.
fn rows_of(comm: &mut Comm<'_>, adj: &Adjacency, rows: &Matrix<u32>, wanted: &[u32]) -> DistResult<Matrix<u32>> {
    let (p, me, n) = (comm.p, comm.me, adj.n);
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
    drop(reply);
    // Every process learns whether somebody could not make room.
    comm.agree(rows_from_replies(n, me, wanted, &got))
}

/// The matrix of the fetched rows: `got` holds, for each of the ascending `wanted`,
/// its length, its columns and its values.
fn rows_from_replies(n: usize, me: usize, wanted: &[u32], got: &[u32]) -> DistResult<Matrix<u32>> {
    let entries = (got.len() - wanted.len()) / 2;
    let mut ptr = try_zeroed::<usize>(n + 1, me, "the row offsets of the neighbours' edges")?;
    let mut idx = try_zeroed::<u32>(entries, me, "the neighbours' edges")?;
    let mut val = try_zeroed::<u32>(entries, me, "the neighbours' edge weights")?;
    let (mut pos, mut at) = (0, 0);
    for &u in wanted {
        let len = got[pos] as usize;
        ptr[u as usize + 1] = len;
        idx[at..at + len].copy_from_slice(&got[pos + 1..pos + 1 + len]);
        val[at..at + len].copy_from_slice(&got[pos + 1 + len..pos + 1 + 2 * len]);
        (pos, at) = (pos + 1 + 2 * len, at + len);
    }
    for v in 0..n {
        ptr[v + 1] += ptr[v];
    }
    Ok(Matrix::from_csr_parts(n, n, ptr, idx, val)?)
}
