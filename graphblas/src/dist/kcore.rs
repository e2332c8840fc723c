//! Distributed k-core decomposition: the coreness of every vertex in the undirected
//! simple graph (edge directions ignored, self-loops dropped, each pair once; an
//! isolated vertex 0), by the iterated h-index (Lü, Zhou, Zhang, Stanley 2016; Montresor,
//! De Pellegrini, Miorandi 2013): every vertex starts at its degree and repeatedly
//! lowers its estimate to the h-index of its neighbours' estimates (the largest h such
//! that h neighbours have an estimate of at least h). The estimates never fall below the
//! coreness and reach it, in any order of updates, so the replicated estimates are
//! [`settle`]d: each round costs a bitmap scan of the block's neighbour lists plus
//! O(degree) at the rows next to a change, and the changes' exchange.

use super::adjacency::VertexValues;
use super::comm::{try_zeroed, Comm};
use super::graph::{Computed, Graph};
use super::load::Weights;
use super::progress::{Measure, Observer, Rounds};
use super::settle::{settle, Readers, View};
use super::{finish, DistResult, Input};
use lpf::Context;
use std::time::Instant;

/// The coreness of every vertex of `input` (as an undirected simple graph). Collective;
/// the same error on every process.
pub fn kcore_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<i64>> {
    kcore_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`kcore_spmd`], calling `observe` on every process after each round (`round k,
/// lowered c`: the vertices whose estimate fell in it, 0 in the last).
pub fn kcore_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<i64>> {
    let mut comm = Comm::new(ctx)?;
    let r = (|| {
        let threads = threads.max(1);
        let g = Graph::from_input(&mut comm, input, threads, Weights::Ignored, "k-core")?;
        let load_seconds = g.load_seconds();
        let c = compute(&mut comm, &g, threads, observe)?;
        Ok(g.vertex_values(c, load_seconds))
    })();
    finish(comm, r)
}

/// The coreness of every vertex of this process's block.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<i64>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let (lo, rows) = (adj.lo, adj.rows());
    let me = comm.me;
    let degrees = comm.agree((|| {
        let mut d = try_zeroed::<u32>(rows, me, "the degrees of the block")?;
        for (k, d) in d.iter_mut().enumerate() {
            *d = adj.neighbours(k).count() as u32;
        }
        Ok(d)
    })())?;
    let (mut estimates, _) = comm.allgatherv(&degrees)?;
    // Balance the threads by the rows' in- and out-edges together.
    let work: Vec<usize> = adj.inn.csr().ptr.iter().zip(&adj.out.csr().ptr).map(|(a, b)| a + b).collect();
    // A neighbour's fall matters to a vertex only when it falls below the vertex's
    // estimate e: after its update, a vertex has e neighbours of estimate >= e, so its
    // h-index stays e until one of them drops below e.
    let below = |old: u32, new: u32, e: u32| old >= e && new < e;
    let readers = comm.agree(Readers::new(adj.n, rows, me, |k, f| adj.neighbours(k).for_each(&mut *f), below))?;
    let mut progress = Rounds::start("round", observe);
    let h_index = |k: usize, view: &View<'_>, counts: &mut Vec<u32>| {
        let cap = view.get(lo + k);
        if cap == 0 || !view.stale(adj.neighbours(k)) {
            return None;
        }
        // counts[x]: the neighbours whose estimate, capped at ours, is x.
        counts.clear();
        counts.resize(cap as usize + 1, 0);
        for u in adj.neighbours(k) {
            counts[view.get(u as usize).min(cap) as usize] += 1;
        }
        let mut at_least = 0;
        let h = (1..=cap).rev().find(|&h| {
            at_least += counts[h as usize];
            at_least >= h
        });
        let h = h.unwrap_or(0);
        (h < cap).then_some(h)
    };
    let rounds = settle(comm, &mut estimates, lo, &work, threads, 0, Some(&readers), h_index, |k, c| progress.done(k, "lowered", Measure::Count(c)))?;
    let values = estimates[lo..lo + rows].iter().map(|&x| x as i64).collect();
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}
