//! Distributed strongly connected components over the directed edges: every vertex gets
//! the smallest vertex number of its SCC (the numbering follows the ids, so the
//! smallest id). The labels live in a replicated vector (`NONE` while a vertex is
//! undecided); every step is a [`settle`] of pull updates over the block's in- or
//! out-rows:
//!
//! 1. **Trim**: an undecided vertex without an undecided in-neighbour or without an
//!    undecided out-neighbour (itself aside) is an SCC alone; repeated while a round
//!    still removes more than n/1000 vertices.
//! 2. **Pivot** (once): forward reachability from the undecided vertex of the largest
//!    in × out degree, then backward reachability from it among the vertices reached:
//!    its SCC (on Kronecker graphs the giant one), labelled by its smallest member (one
//!    allreduce).
//! 3. **Colouring**, until no vertex is undecided: every undecided vertex takes the
//!    smallest number among the undecided vertices that reach it (forward minimum
//!    propagation); a vertex whose colour is itself is a root, and the undecided vertices
//!    of its colour that reach it backward (through vertices of that colour) are its SCC.
//!    Every member of an SCC has the same colour and is no smaller than it, so the label
//!    is the SCC's smallest member. Each pass decides at least one SCC per colour, after
//!    another trim.
//!
//! Work per round: a scan of the undecided rows (a bitmap test per edge; the updates
//! only at rows next to a change); communication per round: the changes, 8 bytes each,
//! or 4n bytes when most vertices changed.

use super::adjacency::VertexValues;
use super::comm::{try_filled, Comm};
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::settle::{settle, View};
use super::{unweighted_kernel, DistResult, Input};
use lpf::Context;
use std::time::Instant;

/// The label of an undecided vertex (no vertex number: there are at most 2^32 − 1).
const NONE: u32 = u32::MAX;

/// Strongly connected components of `input`: every vertex of this process with the
/// smallest id of its SCC (a vertex on no cycle is its own SCC). Collective; the same
/// error on every process.
pub fn scc_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<u64>> {
    scc_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`scc_spmd`], calling `observe` on every process after each round (`round k,
/// changed c`: the vertices whose colour or label changed in it).
pub(crate) fn scc_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<u64>> {
    unweighted_kernel(ctx, input, threads, "SCC", |comm, g, threads| Ok(g.labelled(compute(comm, g, threads, observe)?)))
}

/// The SCC of every vertex of this process's block: its smallest vertex number.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, threads: usize, observe: Observer<'_>) -> DistResult<Computed<u32>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let (n, lo, rows) = (adj.n, adj.lo, adj.rows());
    let (inn, out) = (adj.inn.csr(), adj.out.csr());
    let me = comm.me;
    let (mut label, mut colour) = comm.agree((|| Ok((try_filled(n, NONE, me, "the SCC labels")?, try_filled(n, NONE, me, "the SCC colours")?)))())?;
    let mut progress = Rounds::start("round", observe);
    let mut rounds = 0usize;
    let mut tick = |changes: u64| {
        rounds += 1;
        progress.done(rounds, "changed", Measure::Count(changes));
    };
    let trim = |comm: &mut Comm<'_>, label: &mut [u32], tick: &mut dyn FnMut(u64)| {
        let alone = |k: usize, view: &View<'_>, _: &mut Vec<u32>| {
            let v = lo + k;
            let (ins, outs) = (inn.line(k).0, out.line(k).0);
            if view.get(v) != NONE || !view.stale(ins.iter().chain(outs).copied()) {
                return None;
            }
            let live = |row: &[u32]| row.iter().any(|&u| u as usize != v && view.get(u as usize) == NONE);
            (!live(ins) || !live(outs)).then_some(v as u32)
        };
        settle(comm, label, lo, &inn.ptr, threads, n as u64 / 1000, alone, |_, c| tick(c))
    };
    // Forward: every undecided vertex takes the smallest colour of its undecided
    // in-neighbours.
    let forward = |comm: &mut Comm<'_>, colour: &mut [u32], label: &[u32], tick: &mut dyn FnMut(u64)| {
        let least = |k: usize, view: &View<'_>, _: &mut Vec<u32>| {
            let v = lo + k;
            let ins = inn.line(k).0;
            if label[v] != NONE || !view.stale(ins.iter().copied()) {
                return None;
            }
            // Decided vertices have no colour (NONE), so they never give the least.
            let c = ins.iter().map(|&u| view.get(u as usize)).min()?;
            (c < view.get(v)).then_some(c)
        };
        settle(comm, colour, lo, &inn.ptr, threads, 0, least, |_, c| tick(c))
    };
    // Backward: the roots (colour = itself), then every undecided vertex with an
    // out-neighbour labelled with its colour in this pass.
    let backward = |comm: &mut Comm<'_>, label: &mut [u32], colour: &[u32], tick: &mut dyn FnMut(u64)| {
        let reach = |k: usize, view: &View<'_>, _: &mut Vec<u32>| {
            let v = lo + k;
            let (c, outs) = (colour[v], out.line(k).0);
            if view.get(v) != NONE || c == NONE {
                return None;
            }
            if c as usize == v {
                return Some(c);
            }
            (view.stale(outs.iter().copied()) && outs.iter().any(|&w| view.get(w as usize) == c)).then_some(c)
        };
        settle(comm, label, lo, &out.ptr, threads, 0, reach, |_, c| tick(c))
    };
    trim(comm, &mut label, &mut tick)?;
    // The pivot: the undecided vertex of the largest (in-degree + 1)(out-degree + 1),
    // the smallest such number.
    let mut best = 0u64;
    for k in 0..rows {
        if label[lo + k] == NONE {
            let score = ((inn.line(k).0.len() as u64 + 1) * (out.line(k).0.len() as u64 + 1)).min(u32::MAX as u64);
            best = best.max(score << 32 | (NONE - (lo + k) as u32) as u64);
        }
    }
    let best = comm.max_u64(best)?;
    if best != 0 {
        let pivot = NONE - (best & NONE as u64) as u32;
        colour[pivot as usize] = pivot;
        forward(comm, &mut colour, &label, &mut tick)?;
        backward(comm, &mut label, &colour, &mut tick)?;
        // Its SCC is labelled with the pivot: relabel it with its smallest member.
        let least = (lo..lo + rows).find(|&v| label[v] == pivot).map_or(u64::MAX, |v| v as u64);
        let mut least = [least];
        comm.allreduce_u64(&mut least, |a, b| *a = (*a).min(*b))?;
        let least = least[0] as u32;
        label.iter_mut().filter(|l| **l == pivot).for_each(|l| *l = least);
    }
    loop {
        trim(comm, &mut label, &mut tick)?;
        if label.iter().all(|&l| l != NONE) {
            break;
        }
        for (v, (c, &l)) in colour.iter_mut().zip(&label).enumerate() {
            *c = if l == NONE { v as u32 } else { NONE };
        }
        forward(comm, &mut colour, &label, &mut tick)?;
        backward(comm, &mut label, &colour, &mut tick)?;
    }
    drop(colour);
    Ok(Computed { values: label[lo..lo + rows].to_vec(), rounds, seconds: t1.elapsed().as_secs_f64() })
}
