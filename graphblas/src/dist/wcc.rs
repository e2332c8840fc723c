//! Distributed weakly connected components: the FastSV rounds of
//! [`crate::algorithms::wcc`] on each process's block (its vertices' out- and
//! in-neighbours), the parent vector replicated; the proposed parents of all blocks
//! are combined by an element-wise min over the processes (reduce-scatter +
//! allgather, 2(p − 1)/p · 4n bytes per round).

use super::adjacency::VertexValues;
use super::comm::Comm;
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{unweighted_kernel, DistResult, Input};
use crate::algorithms::wcc::fastsv;
use lpf::Context;
use std::time::Instant;

/// Weakly connected components of `input`: every vertex of this process with the
/// smallest id of its component (edge directions ignored; isolated vertices are their
/// own component). Collective; the same error on every process.
pub fn wcc_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<u64>> {
    wcc_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`wcc_spmd`], calling `observe` on every process after each round (`round k,
/// changed c`: the vertices whose grandparent changed, 0 in the last round).
pub fn wcc_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<u64>> {
    unweighted_kernel(ctx, input, threads, "WCC", |comm, g, threads| Ok(g.labelled(compute(comm, g, threads, observe)?)))
}


/// The component of every vertex of this process's block: the smallest vertex number
/// in it.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<u32>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let neighbours = [(&adj.out, false), (&adj.inn, false)];
    let mut progress = Rounds::start("round", observe);
    let (parents, rounds) = fastsv(adj.n, adj.lo, &neighbours, threads, |f| comm.allreduce_long(f, |a, b| a.min(b)), |k, c| {
        progress.done(k, "changed", Measure::Count(c))
    })?;
    let values = parents[adj.lo..adj.lo + adj.rows()].to_vec();
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}
