//! Distributed community detection by label propagation: the iterations of
//! [`crate::algorithms::cdlp`] on each process's block (its vertices' out- and
//! in-neighbours, from the kernels' adjacency, duplicates removed), the labels
//! replicated; after each iteration the blocks' new labels are gathered everywhere
//! (allgatherv, blocks in pid order: 4n bytes per process per iteration).

use super::adjacency::VertexValues;
use super::comm::Comm;
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{unweighted_kernel, DistError, DistResult, Input};
use crate::algorithms::cdlp::propagate;
use lpf::Context;
use std::time::Instant;

/// The label of every vertex of this process after `iterations` synchronous
/// iterations (Graphalytics CDLP), as an id of the input: every vertex starts with its
/// own id and takes the most frequent label of its in- and out-neighbours, ties to the
/// smallest. Collective; the same error on every process.
pub fn cdlp_spmd(ctx: &mut Context, input: Input, iterations: usize, threads: usize) -> DistResult<VertexValues<u64>> {
    cdlp_spmd_observed(ctx, input, iterations, threads, &mut |_| {})
}

/// As [`cdlp_spmd`], calling `observe` on every process after each iteration
/// (`iteration k, changed c`: the vertices whose label changed).
pub(crate) fn cdlp_spmd_observed(
    ctx: &mut Context,
    input: Input,
    iterations: usize,
    threads: usize,
    observe: Observer<'_>,
) -> DistResult<VertexValues<u64>> {
    unweighted_kernel(ctx, input, threads, "CDLP", |comm, g, threads| Ok(g.labelled(compute(comm, g, iterations, threads, observe)?)))
}


/// The label of every vertex of this process's block after `iterations` iterations, as
/// a vertex number.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, iterations: usize, threads: usize, observe: Observer<'_>) -> DistResult<Computed<u32>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let lines = [adj.out.csr(), adj.inn.csr()];
    let mut progress = Rounds::start("iteration", observe);
    let values = propagate::<bool, DistError>(adj.n, adj.lo, &lines, iterations, threads, |block| Ok(comm.allgatherv(&block)?.0), |k, c| {
        progress.done(k, "changed", Measure::Count(c))
    })?;
    Ok(Computed { values, rounds: iterations, seconds: t1.elapsed().as_secs_f64() })
}
