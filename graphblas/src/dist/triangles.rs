//! Distributed triangle count per vertex of the undirected simple graph (edge
//! directions ignored, self-loops dropped, each pair once): LCC's triangle sums
//! ([`super::lcc`]) with every triangle crediting each of its corners 1. Each triangle
//! is found once, by the process owning its first corner in LCC's order (fewer
//! neighbours first), over the rows it fetched of its later neighbours; the sums are
//! added over the processes. Work about Σ_{(a, b)} min(|U(b)|, |U(a)| log |U(b)|) over
//! the oriented edges (a, b) (see [`crate::ops::triangle_sums`]).

use super::adjacency::VertexValues;
use super::comm::Comm;
use super::graph::{Computed, Graph};
use super::lcc::{triangle_sums_everywhere, Weighing};
use super::progress::{Observer, Rounds};
use super::{unweighted_kernel, DistResult, Input};
use lpf::Context;
use std::time::Instant;

/// The number of triangles at every vertex of `input` (as an undirected simple graph).
/// Collective; the same error on every process.
pub fn triangles_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<i64>> {
    triangles_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`triangles_spmd`], calling `observe` on every process after each of its two
/// phases: `phase 1, candidates c` (the vertices with two or more neighbours), `phase 2,
/// corners t` (the counts' total: three per triangle).
pub(crate) fn triangles_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<i64>> {
    unweighted_kernel(ctx, input, threads, "triangle count", |comm, g, threads| compute(comm, g, threads, observe))
}

/// The triangle count of every vertex of this process's block.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<i64>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let mut progress = Rounds::start("phase", observe);
    let (sums, _) = triangle_sums_everywhere(comm, adj, threads, Weighing::Unit, "corners", &mut progress)?;
    let values = sums[adj.lo..adj.lo + adj.rows()].iter().map(|&t| t as i64).collect();
    Ok(Computed { values, rounds: 1, seconds: t1.elapsed().as_secs_f64() })
}
