//! Distributed local clustering coefficient: each process computes the coefficients of
//! its block of vertices with [`crate::algorithms::lcc`]'s masked product. The block's
//! neighbour pattern comes from the kernels' adjacency (its out- and in-rows); the
//! product also needs the out-edges of every neighbour, most of them owned by other
//! processes: each process asks the owners for the out-rows of the neighbours it
//! names (one alltoallv of vertex numbers, one of the rows back), so it holds the
//! edges among its vertices' neighbourhoods and nothing else.

use super::adjacency::{build, Adjacency, VertexValues};
use super::build::even_owner;
use super::comm::{try_filled, try_zeroed, Comm};
use super::{finish, load, require_vertices, DistResult, Input};
use crate::algebra::First;
use crate::algorithms::lcc::coefficients;
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
    let fetched = out_rows_of_columns(comm, &adj, &neighbours)?;
    let edges = select_matrix(&fetched, |u, w, _| u != w, threads)?;
    drop(fetched);
    let values = coefficients(&neighbours, &edges, threads)?;
    Ok(adj.values(&labels, values, 1, load_seconds, t1.elapsed().as_secs_f64()))
}

/// An n × n matrix holding the out-row of every vertex that is a column of `block`
/// (fetched from its owner), and no other row. Collective: two alltoallv.
fn out_rows_of_columns(comm: &mut Comm<'_>, adj: &Adjacency, block: &Matrix<bool>) -> DistResult<Matrix<bool>> {
    let (p, me, n) = (comm.p, comm.me, adj.n);
    let mut wanted: Vec<u32> = block.csr().idx.clone();
    wanted.sort_unstable();
    wanted.dedup();
    // Ascending, so the requests to each owner are contiguous and in owner order.
    let mut counts = vec![0usize; p];
    for &u in &wanted {
        counts[even_owner(u as usize, n, p)] += 1;
    }
    let (asked, asked_counts) = comm.alltoallv(&wanted, &counts)?;
    // To each asker, in the order asked: the row's length, then its columns.
    let out = adj.out.csr();
    let (mut reply, mut reply_counts) = (Vec::new(), vec![0usize; p]);
    let mut at = 0;
    for q in 0..p {
        let start = reply.len();
        for &u in &asked[at..at + asked_counts[q]] {
            let (row, _) = out.line(u as usize - adj.lo);
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
    comm.agree(rows_from_replies(n, me, &wanted, &got))
}

/// The matrix of the fetched rows: `got` holds, for each of the ascending `wanted`,
/// its length and its columns.
fn rows_from_replies(n: usize, me: usize, wanted: &[u32], got: &[u32]) -> DistResult<Matrix<bool>> {
    let mut ptr = try_zeroed::<usize>(n + 1, me, "the row offsets of the neighbours' out-edges")?;
    let mut idx = try_zeroed::<u32>(got.len() - wanted.len(), me, "the neighbours' out-edges")?;
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
    let val = try_filled(idx.len(), true, me, "the neighbours' out-edge pattern")?;
    Ok(Matrix::from_csr_parts(n, n, ptr, idx, val)?)
}
