//! Distributed single-source shortest paths: the delta-stepping supersteps of
//! [`crate::algorithms::sssp`] on each process's block of vertices, which holds its
//! vertices' weighted out-edges (all n columns). Per superstep: the threads relax the
//! current bucket's vertices of the block (and go on locally with the vertices they
//! improve into the same bucket, bucket fusion); the relaxations of edges into other
//! blocks that are below every distance sent to that vertex before go to their owners
//! as `(vertex, distance)` pairs (one alltoallv, 16 bytes a pair, plus its 2p-word
//! count exchange), each owner keeps the smaller distances and
//! bins the vertices that improved; one allgather of 2 words per process (the
//! smallest bucket holding entries, the vertices improved) names the next bucket, the
//! same everywhere, and ends the loop when no process holds any. With one process
//! there is neither exchange nor collective in the loop.
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
use crate::algorithms::sssp::{check_delta, default_delta, delta_stepping, edges_in_u32, exact_in_u32, Processes};
use crate::matrix::{Coo, DupPolicy, Matrix};
use lpf::Context;
use std::time::Instant;

/// Distance of every vertex of this process from the vertex with id `source` (as the
/// input writes it), following edges forward with their weights; `f64::INFINITY`
/// where the source does not lead. The input must carry non-negative weights (a
/// MatrixMarket real or integer file, an edge list with a weight column); a source
/// that is no vertex is an error. Collective; the same result or error everywhere.
pub fn sssp_spmd(ctx: &mut Context, input: Input, source: u64, threads: usize) -> DistResult<VertexValues<f64>> {
    sssp_spmd_with(ctx, input, source, threads, None, &mut |_| {})
}

/// As [`sssp_spmd`], with buckets of width `delta` (> 0, infinity: one bucket; the same
/// on every process; `None`: [`default_delta`] of the whole graph), calling `observe` on
/// every process after each superstep (`round k, improved c`: the vertices whose
/// distance fell, 0 in the last).
pub fn sssp_spmd_with(
    ctx: &mut Context,
    input: Input,
    source: u64,
    threads: usize,
    delta: Option<f64>,
    observe: Observer<'_>,
) -> DistResult<VertexValues<f64>> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, source, threads.max(1), delta, observe);
    finish(comm, r)
}

fn run(comm: &mut Comm<'_>, input: Input, source: u64, threads: usize, delta: Option<f64>, observe: Observer<'_>) -> DistResult<VertexValues<f64>> {
    let delta = delta.map(check_delta).transpose()?;
    let g = Graph::from_input(comm, input, threads, Weights::Required { kernel: "SSSP" }, "SSSP")?;
    let s = g.label_number(source, "SSSP source")?;
    let load_seconds = g.load_seconds();
    let c = compute(comm, &g, s, threads, delta, observe)?;
    Ok(g.vertex_values(c, load_seconds))
}

/// The distances of this process's block from vertex number `source`, with buckets
/// of width `delta` (`None`: [`default_delta`]).
pub(crate) fn compute(
    comm: &mut Comm<'_>,
    g: &Graph,
    source: usize,
    threads: usize,
    delta: Option<f64>,
    observe: Observer<'_>,
) -> DistResult<Computed<f64>> {
    let out = g.weighted("SSSP")?;
    let (lo, _) = g.block();
    let t1 = Instant::now();
    // Every process learns the same counts and largest weight: the same delta
    // everywhere, as the bucket numbers must be, and the same distance type.
    // Made at load (the same on every process: the same load path everywhere).
    let made;
    let (as_u32, max_weight) = match g.edges_u32() {
        Some((w, max)) => (w.as_deref(), *max),
        None => {
            made = comm.agree(edges_in_u32(out, threads).map_err(DistError::from))?;
            (made.0.as_deref(), made.1)
        }
    };
    let local = [out.nvals() as u64, as_u32.is_some() as u64, max_weight.to_bits()];
    let all = comm.allgather_u64s(&local)?;
    let each = || all.chunks(3);
    let integral = each().all(|c| c[1] == 1);
    let max_weight = each().map(|c| f64::from_bits(c[2])).fold(0.0, f64::max);
    let delta = match delta {
        Some(d) => d,
        None => default_delta(max_weight, each().map(|c| c[0]).sum(), g.n() as usize),
    };
    let in_u32 = as_u32.filter(|_| exact_in_u32(integral, max_weight, g.n() as usize));
    let mut progress = Rounds::start("round", observe);
    let (dist, rounds) = delta_stepping(out, lo, source, delta, in_u32, threads, &mut Owners { comm }, |k, c| {
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

/// The processes, each owning an even block of the vertices.
struct Owners<'a, 'c> {
    comm: &'a mut Comm<'c>,
}

impl Processes for Owners<'_, '_> {
    type Error = DistError;

    fn count(&self) -> usize {
        self.comm.p
    }

    fn owner(v: usize, n: usize, p: usize) -> usize {
        even_owner(v, n, p)
    }

    fn exchange(&mut self, send: &[[u64; 2]], counts: &[usize]) -> DistResult<Vec<[u64; 2]>> {
        Ok(self.comm.alltoallv(send, counts)?.0)
    }

    fn agree(&mut self, next_bucket: u64, improved: u64) -> DistResult<(u64, u64)> {
        let all = self.comm.allgather_u64s(&[next_bucket, improved])?;
        Ok((all.chunks(2).map(|c| c[0]).min().unwrap_or(next_bucket), all.chunks(2).map(|c| c[1]).sum()))
    }
}
