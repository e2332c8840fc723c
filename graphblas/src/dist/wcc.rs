//! Distributed weakly connected components: Afforest ([`crate::algorithms::wcc`]) on
//! each process's block (its vertices' out- and in-neighbours), with the parent array
//! of all n vertices replicated on every process and linked by its threads.
//!
//! One process runs the algorithm as is: one link pass, no communication. With p > 1
//! each process's forest holds only its own edges; an element-wise min of valid forests
//! (every parent at most its vertex and in its component) is again one, so the forests
//! are combined by [`Comm::allreduce_long`] with min (reduce-scatter + allgather,
//! 2(p − 1)/p · 4n bytes per process) and compressed:
//!
//! 1. sampling (the first two out-neighbours of each block vertex), combine;
//!    the giant component is then drawn from the same forest everywhere (again after
//!    each later combine);
//! 2. link passes: every block vertex whose parent is not the giant root is linked with
//!    all its out- and in-neighbours, the links that joined two trees are summed over
//!    the processes (one 8-byte allreduce); if some did, the forests are combined and
//!    the pass repeats. The min keeps only one of two parents (process 1 links a–c,
//!    process 2 b–c), hence the repeats. A pass in which no process joined two trees
//!    started from the same combined forest everywhere and found every edge inside one
//!    of its trees (an edge u → v is held by the owners of u and v, and is skipped by
//!    both only if u and v are both in the giant tree): that forest is the components.
//!
//! A pass that joins trees lowers some parent, so the passes end. Cost with R passes:
//! R combines (the sampling one and R − 1 after passes) and R sums.

use super::adjacency::VertexValues;
use super::comm::Comm;
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{unweighted_kernel, DistResult, Input};
use crate::algorithms::wcc::{BlockEdges, Forest};
use crate::matrix::Rows;
use crate::parallel::run_phases;
use lpf::Context;
use std::time::Instant;

/// Weakly connected components of `input`: every vertex of this process with the
/// smallest id of its component (edge directions ignored; isolated vertices are their
/// own component). Collective; the same error on every process.
pub fn wcc_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<u64>> {
    wcc_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`wcc_spmd`], calling `observe` on every process after each link pass (`round k,
/// changed c`: the links of the pass that joined two trees, summed over the processes;
/// 0 in the last pass when p > 1).
pub(crate) fn wcc_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<u64>> {
    unweighted_kernel(ctx, input, threads, "WCC", |comm, g, threads| Ok(g.labelled(compute(comm, g, threads, observe)?)))
}

/// The component of every vertex of this process's block: the smallest vertex number
/// in it. `rounds`: the link passes run.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<u32>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let edges = BlockEdges { lo: adj.lo, out: Rows::of(adj.out.csr()), inn: Rows::of(adj.inn.csr()) };
    let mut progress = Rounds::start("round", observe);
    let (forest, rounds) = if comm.p == 1 {
        let (forest, joined) = Forest::single(adj.n, &edges, threads)?;
        progress.done(1, "changed", Measure::Count(joined));
        (forest, 1)
    } else {
        let mut forest = Forest::singletons(adj.n);
        run_phases(threads, |m| forest.sample(&edges, m))?;
        combine(comm, &mut forest, threads)?;
        let mut pass = 1;
        loop {
            // Drawn again after each combine: the giant tree may have been hooked
            // under a smaller root.
            let giant = forest.giant();
            // Every edge of the non-giant vertices: the combine may have dropped
            // sampled links of this process.
            let mine: u64 = run_phases(threads, |m| forest.link_rest(&edges, giant, 0, m))?.iter().sum();
            let joined = comm.sum_u64(mine)?;
            progress.done(pass, "changed", Measure::Count(joined));
            if joined == 0 {
                // No tree changed in this pass: the forest is still the compressed
                // combined one.
                break (forest, pass);
            }
            combine(comm, &mut forest, threads)?;
            pass += 1;
        }
    };
    let values = forest.into_labels(adj.lo, adj.rows());
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}

/// The element-wise min of every process's forest, compressed: the same forest on
/// every process.
fn combine(comm: &mut Comm<'_>, forest: &mut Forest, threads: usize) -> DistResult<()> {
    forest.with_parents(|parents| comm.allreduce_long(parents, |a, b| a.min(b)))?;
    run_phases(threads, |m| forest.compress(m))?;
    Ok(())
}
