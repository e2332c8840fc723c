//! Distributed k-core decomposition: the coreness of every vertex in the undirected
//! simple graph (edge directions ignored, self-loops dropped, each pair once; an
//! isolated vertex 0), by peeling in levels: at level k every vertex left with at most
//! k neighbours left is removed (its coreness is k), which lowers its neighbours'
//! counts, and removals repeat at k until none is due; then k jumps to the smallest
//! count left anywhere. Each process keeps its block sorted by count as Batagelj and
//! Zaversnik's bins (an O(1) move per lowered count), so a level's removals are a run
//! of that order; a round's removals go to every process (one all-gather of their
//! numbers), and each lowers its rows that neighbour them through the block's neighbour
//! lists transposed. Work O(m) per process overall, one all-gather per round (rounds:
//! the levels plus the repeats inside them, a few per distinct coreness).

use super::adjacency::VertexValues;
use super::comm::{try_zeroed, Comm};
use super::graph::{Computed, Graph};
use super::progress::{Measure, Observer, Rounds};
use super::{unweighted_kernel, DistResult, Input};
use lpf::Context;
use std::time::Instant;

/// The coreness of every vertex of `input` (as an undirected simple graph). Collective;
/// the same error on every process.
pub fn kcore_spmd(ctx: &mut Context, input: Input, threads: usize) -> DistResult<VertexValues<i64>> {
    kcore_spmd_observed(ctx, input, threads, &mut |_| {})
}

/// As [`kcore_spmd`], calling `observe` on every process after each level that removed
/// vertices (`core k, peeled c`: the c vertices of coreness k).
pub fn kcore_spmd_observed(ctx: &mut Context, input: Input, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<i64>> {
    unweighted_kernel(ctx, input, threads, "k-core", |comm, g, threads| compute(comm, g, threads, observe))
}

/// The coreness of every vertex of this process's block (`threads` is unused: the
/// peeling is sequential in a process, O(its edges)).
pub(crate) fn compute(comm: &mut Comm<'_>, g: &Graph, _threads: usize, observe: Observer<'_>) -> DistResult<Computed<i64>> {
    let adj = g.adjacency();
    let t1 = Instant::now();
    let (lo, rows, me) = (adj.lo, adj.rows(), comm.me);
    let mut peel = comm.agree(Peeling::new(adj.n, rows, me, |k, f| adj.neighbours(k).for_each(&mut *f)))?;
    let mut progress = Rounds::start("core", observe);
    let mut level = comm.max_u64(u64::MAX - peel.least_left())?;
    let mut rounds = 0;
    let mut peeled_at_level = 0u64;
    while level != 0 {
        let k = (u64::MAX - level) as u32;
        rounds += 1;
        let mine: Vec<u32> = peel.remove_up_to(k).iter().map(|&r| (lo + r as usize) as u32).collect();
        let (removed, _) = comm.allgatherv(&mine)?;
        if removed.is_empty() {
            progress.done(k as usize, "peeled", Measure::Count(peeled_at_level));
            peeled_at_level = 0;
            level = comm.max_u64(u64::MAX - peel.least_left())?;
            continue;
        }
        peeled_at_level += removed.len() as u64;
        for &u in &removed {
            peel.lower_neighbours_of(u as usize, k);
        }
    }
    let values = peel.coreness.into_iter().map(i64::from).collect();
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}

/// A process's side of the peeling: its rows' counts of neighbours left, the rows in
/// ascending order of count (Batagelj-Zaversnik bins), and for every vertex the rows
/// that neighbour it.
struct Peeling {
    /// Neighbours not yet removed, per row; frozen at removal (then the coreness).
    left: Vec<u32>,
    coreness: Vec<u32>,
    /// The rows by ascending `left`, removed rows first; `at[r]` is row r's position.
    order: Vec<u32>,
    at: Vec<u32>,
    /// `start[d]`: the position of the first row of count d (d up to the largest + 1).
    start: Vec<u32>,
    /// The rows before `removed` in `order` are removed.
    removed: usize,
    /// For every vertex u, the rows of the block that neighbour u (CSR over n).
    readers_at: Vec<usize>,
    readers: Vec<u32>,
}

impl Peeling {
    /// `lists(k, f)` calls `f` on every neighbour of row k, each once. Claims its memory
    /// fallibly (this process's error).
    fn new(n: usize, rows: usize, me: usize, lists: impl Fn(usize, &mut dyn FnMut(u32))) -> DistResult<Peeling> {
        let mut left = try_zeroed::<u32>(rows, me, "the rows' neighbour counts")?;
        let mut readers_at = try_zeroed::<usize>(n + 1, me, "the readers' offsets")?;
        for (k, d) in left.iter_mut().enumerate() {
            lists(k, &mut |u| {
                *d += 1;
                readers_at[u as usize + 1] += 1;
            });
        }
        for u in 0..n {
            readers_at[u + 1] += readers_at[u];
        }
        let mut fill = readers_at.clone();
        let mut readers = try_zeroed::<u32>(readers_at[n], me, "the rows that neighbour each vertex")?;
        for k in 0..rows {
            lists(k, &mut |u| {
                readers[fill[u as usize]] = k as u32;
                fill[u as usize] += 1;
            });
        }
        drop(fill);
        // Counting sort of the rows by count.
        let most = left.iter().copied().max().unwrap_or(0) as usize;
        let mut start = try_zeroed::<u32>(most + 2, me, "the bins of the neighbour counts")?;
        for &d in &left {
            start[d as usize + 1] += 1;
        }
        for d in 0..=most {
            start[d + 1] += start[d];
        }
        let mut next = start.clone();
        let mut order = try_zeroed::<u32>(rows, me, "the rows in order of count")?;
        let mut at = try_zeroed::<u32>(rows, me, "the rows' places in that order")?;
        for (r, &d) in left.iter().enumerate() {
            let p = next[d as usize];
            order[p as usize] = r as u32;
            at[r] = p;
            next[d as usize] += 1;
        }
        let coreness = try_zeroed::<u32>(rows, me, "the coreness of the block")?;
        Ok(Peeling { left, coreness, order, at, start, removed: 0, readers_at, readers })
    }

    /// The smallest count of a row left, `u64` so that none left reads as 0 after the
    /// callers' `u64::MAX -` (the levels are found by a maximum).
    fn least_left(&self) -> u64 {
        match self.order.get(self.removed) {
            Some(&r) => u64::from(self.left[r as usize]),
            None => u64::MAX,
        }
    }

    /// Removes the rows left with at most `k` neighbours left (coreness `k`), which are
    /// the next run of the order, and returns them.
    fn remove_up_to(&mut self, k: u32) -> &[u32] {
        let from = self.removed;
        let end = match self.start.get(k as usize + 1) {
            Some(&s) => s as usize,
            None => self.order.len(),
        };
        for &r in &self.order[from..end.max(from)] {
            self.coreness[r as usize] = k;
        }
        self.removed = end.max(from);
        &self.order[from..self.removed]
    }

    /// Vertex `u` was removed at level `k`: each row next to it with more than `k`
    /// neighbours left has one fewer. A row falling to `k` joins the end of the run of
    /// level `k` (the next round's removals); rows at `k` or below are removed already
    /// or due, and keep their count.
    fn lower_neighbours_of(&mut self, u: usize, k: u32) {
        for i in self.readers_at[u]..self.readers_at[u + 1] {
            let r = self.readers[i] as usize;
            let d = self.left[r];
            if d <= k {
                continue;
            }
            // Swap r with the first row of its bin, then shrink the bin from the front:
            // r is now the last row of bin d - 1.
            let first = self.start[d as usize] as usize;
            let other = self.order[first] as usize;
            let here = self.at[r] as usize;
            self.order.swap(first, here);
            self.at[other] = here as u32;
            self.at[r] = first as u32;
            self.start[d as usize] += 1;
            self.left[r] = d - 1;
        }
    }
}
