//! Distributed local clustering coefficient: each process computes the coefficients of
//! its block of vertices with [`crate::algorithms::lcc`]'s masked products. The
//! block's neighbour pattern comes from the kernels' adjacency (its out- and in-rows);
//! the order LCC counts from needs every vertex's neighbour count (one all-gather);
//! the products also need, for every neighbour, its out- and in-row cut to the
//! vertices after it in that order, most of them owned by other processes: each
//! process cuts its own rows, then asks the owners for the rows of the neighbours it
//! names (one alltoallv of vertex numbers, two of the rows back), so it holds those
//! edges among its vertices' neighbourhoods and nothing else.

use super::adjacency::{build, Adjacency, VertexValues};
use super::build::even_owner;
use super::comm::{try_filled, try_zeroed, Comm};
use super::{finish, load, require_vertices, DistResult, Input};
use crate::algebra::First;
use crate::algorithms::lcc::{coefficients, counted_before, Neighbours};
use crate::matrix::Matrix;
use crate::ops::{ewise_add_matrix, select_matrix};
use lpf::Context;
use std::time::Instant;

/// The local clustering coefficient of every vertex of this process (Graphalytics
/// LCC: neighbours = in ∪ out without the vertex, directed edges among them over
/// `d (d − 1)`, 0 below two neighbours). Collective; the same error on every process.
pub fn lcc_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<f64>> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, threads.max(1));
    finish(comm, r)
}

fn run(comm: &mut Comm<'_>, input: Input, threads: usize) -> DistResult<VertexValues<f64>> {
    let t0 = Instant::now();
    let what = input.describe();
    let mut raw = load::load(comm, input, threads)?;
    require_vertices(raw.n, &what, "LCC")?;
    let labels = raw.labels.take().expect("the loader names every vertex");
    let adj = build(comm, raw)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let lo = adj.lo;
    let both = ewise_add_matrix(&adj.out, &adj.inn, First, threads)?;
    let neighbours = select_matrix(&both, |i, j, _| lo + i != j, threads)?;
    drop(both);
    let mine: Vec<u32> = neighbours.row_counts().iter().map(|&d| d as u32).collect();
    let (degrees, _) = comm.allgatherv(&mine)?;
    let degrees: Vec<usize> = degrees.into_iter().map(|d| d as usize).collect();
    let later = |i: usize, j: usize| counted_before(&degrees, lo + i, j);
    let out_later = select_matrix(&adj.out, |i, j, _| later(i, j), threads)?;
    let in_later = select_matrix(&adj.inn, |i, j, _| later(i, j), threads)?;
    let wanted = columns_of(&neighbours);
    let out_later = rows_of(comm, &adj, &out_later, &wanted)?;
    let in_later = rows_of(comm, &adj, &in_later, &wanted)?;
    let split = Neighbours::split(neighbours, later, threads)?;
    let values = coefficients(&split, &out_later, &in_later, threads)?;
    Ok(adj.values(&labels, values, 1, load_seconds, t1.elapsed().as_secs_f64()))
}

/// The vertices that are a column of `block`, ascending.
fn columns_of(block: &Matrix<bool>) -> Vec<u32> {
    let mut wanted: Vec<u32> = block.csr().idx.clone();
    wanted.sort_unstable();
    wanted.dedup();
    wanted
}

/// An n × n matrix holding, for every vertex of the ascending `wanted`, its row of
/// `rows` (a block of this process's rows × n, as `adj`'s; fetched from its owner),
/// and no other row. Collective: two alltoallv.
fn rows_of(comm: &mut Comm<'_>, adj: &Adjacency, rows: &Matrix<bool>, wanted: &[u32]) -> DistResult<Matrix<bool>> {
    let (p, me, n) = (comm.p, comm.me, adj.n);
    // Ascending, so the requests to each owner are contiguous and in owner order.
    let mut counts = vec![0usize; p];
    for &u in wanted {
        counts[even_owner(u as usize, n, p)] += 1;
    }
    let (asked, asked_counts) = comm.alltoallv(wanted, &counts)?;
    // To each asker, in the order asked: the row's length, then its columns.
    let rows = rows.csr();
    let (mut reply, mut reply_counts) = (Vec::new(), vec![0usize; p]);
    let mut at = 0;
    for q in 0..p {
        let start = reply.len();
        for &u in &asked[at..at + asked_counts[q]] {
            let (row, _) = rows.line(u as usize - adj.lo);
            reply.push(row.len() as u32);
            reply.extend_from_slice(row);
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
/// its length and its columns.
fn rows_from_replies(n: usize, me: usize, wanted: &[u32], got: &[u32]) -> DistResult<Matrix<bool>> {
    let mut ptr = try_zeroed::<usize>(n + 1, me, "the row offsets of the neighbours' edges")?;
    let mut idx = try_zeroed::<u32>(got.len() - wanted.len(), me, "the neighbours' edges")?;
    let (mut pos, mut at) = (0, 0);
    for &u in wanted {
        let len = got[pos] as usize;
        ptr[u as usize + 1] = len;
        idx[at..at + len].copy_from_slice(&got[pos + 1..pos + 1 + len]);
        (pos, at) = (pos + 1 + len, at + len);
    }
    for v in 0..n {
        ptr[v + 1] += ptr[v];
    }
    let val = try_filled(idx.len(), true, me, "the neighbours' edge pattern")?;
    Ok(Matrix::from_csr_parts(n, n, ptr, idx, val)?)
}
