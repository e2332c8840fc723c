//! Distributed single-source shortest paths: the frontier Bellman-Ford rounds of
//! [`crate::algorithms::sssp`] on each process's block of vertices, which holds its
//! vertices' weighted out-edges (all n columns). A round's tentative distances over
//! all vertices go to their owners (one alltoallv of `(vertex, distance)` pairs), the
//! owner keeps the smallest per vertex ([`assign_indices`] with min) and the
//! improvements; one sum over the processes says whether anything improved.
//!
//! Loading is the kernels' (`dist::load` with the weights required, relabelled as
//! every input is); each weighted edge goes to the owner of its source, and parallel
//! edges keep the smallest weight (`DupPolicy::Min`).

use super::adjacency::VertexValues;
use super::build::{bucket, even_owner};
use super::comm::Comm;
use super::graph::{Computed, Graph};
use super::load::Weights;
use super::progress::{Measure, Observer, Rounds};
use super::{finish, DistError, DistResult, Input};
use crate::algebra::Min;
use crate::algorithms::sssp::{frontier_bellman_ford, Blocks};
use crate::matrix::{Coo, DupPolicy, Matrix};
use crate::ops::assign_indices;
use crate::vector::Vector;
use lpf::Context;
use std::time::Instant;

/// Distance of every vertex of this process from the vertex with id `source` (as the
/// input writes it), following edges forward with their weights; `f64::INFINITY`
/// where the source does not lead. The input must carry non-negative weights (a
/// MatrixMarket real or integer file, an edge list with a weight column); a source
/// that is no vertex is an error. Collective; the same result or error everywhere.
pub fn sssp_spmd(ctx: &mut Context, input: Input, source: u64, threads: usize) -> DistResult<VertexValues<f64>> {
    sssp_spmd_observed(ctx, input, source, threads, &mut |_| {})
}

/// As [`sssp_spmd`], calling `observe` on every process after each round (`round k,
/// improved c`: the vertices whose distance fell, 0 in the last round).
pub fn sssp_spmd_observed(ctx: &mut Context, input: Input, source: u64, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<f64>> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, source, threads.max(1), observe);
    finish(comm, r)
}

fn run(comm: &mut Comm<'_>, input: Input, source: u64, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<f64>> {
    let g = Graph::from_input(comm, input, threads, Weights::Required { kernel: "SSSP" }, "SSSP")?;
    let s = g.label_number(source, "SSSP source")?;
    let load_seconds = g.load_seconds();
    let c = compute(comm, &g, s, threads, observe)?;
    Ok(g.vertex_values(c, load_seconds))
}

/// The distances of this process's block from vertex number `source`.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, source: usize, threads: usize, observe: Observer<'_>) -> DistResult<Computed<f64>> {
    let out = g.weighted("SSSP")?;
    let (lo, hi) = g.block();
    let t1 = Instant::now();
    let mut progress = Rounds::start("round", observe);
    let (dist, rounds) = frontier_bellman_ford(out, lo, source, threads, &mut Owners { comm, lo, hi }, |k, c| {
        progress.done(k, "improved", Measure::Count(c))
    })?;
    Ok(Computed { values: dist, rounds, seconds: t1.elapsed().as_secs_f64() })
}

/// Each edge `(src[k], dst[k], weights[k])` to the owner of its source, as
/// `[u << 32 | v, w's bits]`; this process's rows `lo..hi` of the weighted adjacency
/// of the `n` vertices, parallel edges at their minimum.
pub(crate) fn weighted_out_edges(
    comm: &mut Comm<'_>,
    n: usize,
    src: &[u32],
    dst: &[u32],
    weights: Vec<f64>,
    lo: usize,
    hi: usize,
) -> DistResult<Matrix<f64>> {
    let (p, me) = (comm.p, comm.me);
    let each = |f: &mut dyn FnMut([u64; 2])| {
        for k in 0..src.len() {
            f([(src[k] as u64) << 32 | dst[k] as u64, weights[k].to_bits()])
        }
    };
    let (send, counts) = bucket(me, p, src.len(), each, |e| even_owner((e[0] >> 32) as usize, n, p))?;
    drop(weights);
    let (recv, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let mut coo = Coo::new_valued(hi - lo, n);
    let vals = coo.vals.as_mut().expect("valued");
    for e in &recv {
        coo.rows.push(((e[0] >> 32) as usize - lo) as u32);
        coo.cols.push(e[0] as u32);
        vals.push(f64::from_bits(e[1]));
    }
    drop(recv);
    Ok(Matrix::from_coo(&coo, DupPolicy::Min)?)
}

/// The processes' blocks, `lo..hi` this one's.
struct Owners<'a, 'c> {
    comm: &'a mut Comm<'c>,
    lo: usize,
    hi: usize,
}

impl Blocks for Owners<'_, '_> {
    type Error = DistError;

    /// The round's tentative distances over all n vertices to their owners; this
    /// block's vertices with the smallest distance any process proposed.
    fn to_block(&mut self, reach: Vector<f64>) -> DistResult<Vector<f64>> {
        let (p, n) = (self.comm.p, reach.len());
        let entries = reach.entries();
        // `entries` is ascending, so grouped by owner already.
        let mut counts = vec![0usize; p];
        let mut send = Vec::with_capacity(entries.len());
        for &(v, d) in &entries {
            counts[even_owner(v, n, p)] += 1;
            send.push([v as u64, d.to_bits()]);
        }
        let (got, _) = self.comm.alltoallv(&send, &counts)?;
        let indices: Vec<u32> = got.iter().map(|e| (e[0] as usize - self.lo) as u32).collect();
        let values = Vector::dense(got.iter().map(|e| f64::from_bits(e[1])).collect());
        let mut mine = Vector::empty(self.hi - self.lo);
        assign_indices(&mut mine, Min, &values, &indices)?;
        Ok(mine)
    }

    fn total(&mut self, k: u64) -> DistResult<u64> {
        self.comm.sum_u64(k)
    }
}
