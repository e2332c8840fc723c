//! Distributed maximal independent set of the undirected simple graph (edge directions
//! ignored, self-loops ignored): the greedy set in the order of priorities hashed from
//! (seed, vertex number), ties by number — a vertex is in the set exactly when none of
//! its neighbours of earlier priority is. Computed by Luby-style rounds (Blelloch,
//! Fineman, Shun 2012: O(log² n) rounds for random priorities, w.h.p.) on a replicated
//! state vector that is [`settle`]d: an undecided vertex with a neighbour in the set is
//! out; one whose undecided neighbours all come later (and none is in) is in. Every
//! decision agrees with the greedy order, so the set depends only on the seed and the
//! graph (its ids and edges): not on the number of processes or threads.

use super::adjacency::VertexValues;
use super::comm::{try_zeroed, Comm};
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::settle::{settle, View};
use super::{unweighted_kernel, DistResult, Input};
use lpf::Context;
use std::time::Instant;

const UNDECIDED: u32 = 0;
const IN: u32 = 1;
const OUT: u32 = 2;

/// The maximal independent set of `input` for `seed`: 1 for every vertex of this
/// process in the set, 0 for the others. Collective; the same error on every process.
pub fn mis_spmd(ctx: &mut Context, input: Input, seed: i64, threads: usize) -> DistResult<VertexValues<i64>> {
    mis_spmd_observed(ctx, input, seed, threads, &mut |_| {})
}

/// As [`mis_spmd`], calling `observe` on every process after each round (`round k,
/// decided c`: the vertices that joined or left in it, 0 in the last).
pub(crate) fn mis_spmd_observed(ctx: &mut Context, input: Input, seed: i64, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<i64>> {
    unweighted_kernel(ctx, input, threads, "MIS", |comm, g, threads| compute(comm, g, seed, threads, observe))
}

/// SplitMix64's finaliser: a bijection of u64 that mixes every bit into every other.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// The priority of vertex `v` for `seed`: earlier is smaller.
#[inline]
fn priority(seed: u64, v: u32) -> (u64, u32) {
    (mix(seed ^ mix(v as u64 ^ 0x9e3779b97f4a7c15)), v)
}

/// 1 (in the set) or 0 for every vertex of this process's block.
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, seed: i64, threads: usize, observe: Observer<'_>) -> DistResult<Computed<i64>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let (n, lo, rows) = (adj.n, adj.lo, adj.rows());
    let seed = seed as u64;
    let mut state = comm.agree(try_zeroed::<u32>(n, comm.me, "the MIS states"))?;
    let work: Vec<usize> = adj.inn.csr().ptr.iter().zip(&adj.out.csr().ptr).map(|(a, b)| a + b).collect();
    let mut progress = Rounds::start("round", observe);
    let decide = |k: usize, view: &View<'_>, _: &mut Vec<u32>| {
        let v = (lo + k) as u32;
        if view.get(v as usize) != UNDECIDED || !view.stale(adj.neighbours(k)) {
            return None;
        }
        let mine = priority(seed, v);
        let mut first = true;
        for u in adj.neighbours(k) {
            match view.get(u as usize) {
                IN => return Some(OUT),
                UNDECIDED if first && priority(seed, u) < mine => first = false,
                _ => {}
            }
        }
        first.then_some(IN)
    };
    let rounds = settle(comm, &mut state, lo, &work, threads, 0, decide, |k, c| progress.done(k, "decided", Measure::Count(c)))?;
    let values = state[lo..lo + rows].iter().map(|&s| (s == IN) as i64).collect();
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}
