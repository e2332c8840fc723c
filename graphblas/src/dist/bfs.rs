//! Distributed direction-optimising BFS: the level loop of
//! [`crate::algorithms::bfs`] ([`search`]) on every process's block of vertices, the
//! blocks' exchanges by [`Comm`]:
//!
//! * **push** (small frontier): each process walks the out-rows of its frontier
//!   vertices, claims the unvisited neighbours of its block and sends the others to
//!   their owners (alltoallv), which claim them;
//! * **pull** (large frontier): the blocks' frontier bitmaps are gathered on every
//!   process (allgatherv, n/8 bytes in all), and every unvisited vertex of the block
//!   looks for one in-neighbour in it, stopping at the first.
//!
//! One allreduce per level sums the frontier's size, its out-edges, its in-edges and
//! the targets it reached, so every process takes the same direction and stops at the
//! same level. One process exchanges nothing.
//!
//! The same levels walk the edges backwards (push over the in-rows, pull over the
//! out-rows) or both ways (both over their union): the hop distances *to* landmarks
//! ([`distances_to`], GraphX's ShortestPaths), one search per landmark.

use super::adjacency::{Adjacency, VertexValues};
use super::build::even_start;
use super::comm::{try_filled, Comm};
use super::graph::{Computed, Graph};
use super::load::Weights;
use super::progress::{Measure, Observer, Rounds};
use super::{finish, DistError, DistResult, Input};
use crate::algebra::LOr;
use super::marks::{FROM, TO};
use crate::algorithms::bfs::{search, Block, Exchange, Expanded, Searched, Start, Targets, UNREACHABLE};
use crate::matrix::Rows;
use crate::matrix::Matrix;
use crate::ops::{ewise_add_matrix, Direction};
use lpf::Context;
use std::time::Instant;

/// Depth of every vertex of this process from the vertex with id `source` (as the
/// input writes it), following edges forward; [`UNREACHABLE`] (i64::MAX) where the
/// source does not lead. A `source` that is no vertex of the graph is an error.
/// Collective; the same result or error on every process.
pub fn bfs_spmd(ctx: &mut Context, input: Input, source: u64, threads: usize) -> DistResult<VertexValues<i64>> {
    bfs_spmd_with(ctx, input, source, threads, Direction::Auto)
}

/// As [`bfs_spmd`]; `direction` `Push` or `Pull` forces every level that way (tests,
/// measurements), `Auto` chooses per level.
pub fn bfs_spmd_with(ctx: &mut Context, input: Input, source: u64, threads: usize, direction: Direction) -> DistResult<VertexValues<i64>> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, source, threads.max(1), direction, &mut |_| {});
    finish(comm, r)
}

/// As [`bfs_spmd`], calling `observe` on every process after each level (`level d,
/// frontier c`: the vertices at depth d, from d = 0, the source).
pub fn bfs_spmd_observed(ctx: &mut Context, input: Input, source: u64, threads: usize, observe: Observer<'_>) -> DistResult<VertexValues<i64>> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, source, threads.max(1), Direction::Auto, observe);
    finish(comm, r)
}

fn run(
    comm: &mut Comm<'_>,
    input: Input,
    source: u64,
    threads: usize,
    forced: Direction,
    observe: Observer<'_>,
) -> DistResult<VertexValues<i64>> {
    let g = Graph::from_input(comm, input, threads, Weights::Ignored, "BFS")?;
    let s = g.label_number(source, "BFS source")?;
    let load_seconds = g.load_seconds();
    let c = compute(comm, &g, s, threads, forced, observe)?;
    Ok(g.vertex_values(c, load_seconds))
}

/// The depths of this process's block from vertex number `source`.
pub(crate) fn compute(
    comm: &mut Comm<'_>,
    g: &Graph,
    source: usize,
    threads: usize,
    forced: Direction,
    observe: Observer<'_>,
) -> DistResult<Computed<i64>> {
    let t1 = Instant::now();
    let (lo, hi) = g.block();
    let sources = if (lo..hi).contains(&source) { vec![(source - lo) as u32] } else { Vec::new() };
    let start = Start { sources, targets: None, last_level: usize::MAX };
    let s = levels(comm, &Walk::forward(g.adjacency()), start, threads, forced, &mut Rounds::start("level", observe))?;
    Ok(Computed { values: s.depth, rounds: s.levels, seconds: t1.elapsed().as_secs_f64() })
}

/// GraphFrames' BFS paths on this block's `marks` ([`FROM`], [`TO`]): a search from
/// every vertex marked `FROM` that stops after the first level `L` reaching a vertex
/// marked `TO`, or after level `max_length`. Found: `rounds = L` and the depth of every
/// vertex on a shortest path from a `FROM` vertex to a `TO` vertex (the path DAG: its
/// depth-k vertices lead to a depth-(k + 1) one of it; [`on_shortest_paths`]), the rest
/// [`UNREACHABLE`]; not found: every depth `UNREACHABLE` and `rounds` the deepest level
/// searched (0 without a `FROM` vertex).
pub(crate) fn compute_paths(
    comm: &mut Comm<'_>,
    g: &Graph,
    marks: &[u8],
    max_length: usize,
    threads: usize,
    observe: Observer<'_>,
) -> DistResult<(Computed<i64>, bool)> {
    let t1 = Instant::now();
    let sources = marks.iter().enumerate().filter(|(_, &m)| m & FROM != 0).map(|(k, _)| k as u32).collect();
    let start = Start { sources, targets: Some(Targets { marks, bit: TO }), last_level: max_length };
    let s = levels(comm, &Walk::forward(g.adjacency()), start, threads, Direction::Auto, &mut Rounds::start("level", observe))?;
    let mut depth = s.depth;
    let rounds = match s.found {
        Some(level) => {
            on_shortest_paths(comm, g.adjacency(), marks, &mut depth, level)?;
            level
        }
        None => {
            depth.fill(UNREACHABLE);
            s.levels.saturating_sub(1)
        }
    };
    Ok((Computed { values: depth, rounds, seconds: t1.elapsed().as_secs_f64() }, s.found.is_some()))
}

/// Keeps the depths (this block's, of a search that first reached a `TO` vertex at
/// `length`) of the vertices on a shortest path from a `FROM` vertex to a `TO` vertex,
/// and sets the others to [`UNREACHABLE`]: the `TO` vertices at depth `length`, then,
/// level by level backwards, the depth-k vertices with an out-edge to one kept at
/// k + 1. One allgatherv of the kept ids per level, so that a caller who joins the
/// paths reads only the vertices they run through (a search to a hub reaches most of
/// the graph within a few levels; its paths, few vertices). Collective.
fn on_shortest_paths(comm: &mut Comm<'_>, adj: &Adjacency, marks: &[u8], depth: &mut [i64], length: usize) -> DistResult<()> {
    let (n, lo) = (adj.n, adj.lo);
    let out = adj.out.csr();
    let at = |k: usize| depth.iter().enumerate().filter(move |&(_, &d)| d == k as i64).map(|(v, _)| v);
    let mut kept: Vec<u32> = at(length).filter(|&v| marks[v] & TO != 0).map(|v| (lo + v) as u32).collect();
    let mut keep = vec![false; depth.len()];
    // Bit w of `next`: vertex w is kept at the level below the one being decided.
    let mut next = comm.agree(try_filled((n + 63) / 64, 0u64, comm.me, "the kept vertices of a BFS level"))?;
    for k in (0..length).rev() {
        for &w in &kept {
            keep[w as usize - lo] = true;
        }
        let (all, _) = comm.allgatherv(&kept)?;
        for &w in &all {
            next[w as usize / 64] |= 1 << (w % 64);
        }
        kept = at(k)
            .filter(|&v| out.line(v).0.iter().any(|&w| next[w as usize / 64] >> (w % 64) & 1 != 0))
            .map(|v| (lo + v) as u32)
            .collect();
        for &w in &all {
            next[w as usize / 64] = 0;
        }
    }
    for &w in &kept {
        keep[w as usize - lo] = true;
    }
    for (d, keep) in depth.iter_mut().zip(keep) {
        if !keep {
            *d = UNREACHABLE;
        }
    }
    Ok(())
}

/// The hop distance from every vertex of this process's block to each of `landmarks`
/// (vertex numbers), following the edges forward (`undirected`: either way):
/// `landmarks.len()` values per vertex, vertex by vertex, [`UNREACHABLE`] where a vertex
/// does not lead to the landmark. One search per landmark from the landmark backwards;
/// the rounds are the most levels a search ran.
pub(crate) fn distances_to(
    comm: &mut Comm<'_>,
    g: &Graph,
    landmarks: &[usize],
    undirected: bool,
    threads: usize,
    observe: Observer<'_>,
) -> DistResult<Computed<i64>> {
    let t1 = Instant::now();
    let adj = g.adjacency();
    let both;
    let walk = if undirected {
        both = comm.agree(ewise_add_matrix(&adj.out, &adj.inn, LOr, threads).map_err(Into::into))?;
        let edges = comm.sum_u64(both.nvals() as u64)?;
        Walk { n: adj.n, lo: adj.lo, push: &both, pull: &both, edges }
    } else {
        Walk { n: adj.n, lo: adj.lo, push: &adj.inn, pull: &adj.out, edges: adj.nnz }
    };
    let w = landmarks.len();
    let mut values = comm.agree(try_filled(adj.rows() * w, UNREACHABLE, comm.me, "the distances to the landmarks"))?;
    let mut progress = Rounds::start("level", observe);
    let mut rounds = 0;
    for (k, &landmark) in landmarks.iter().enumerate() {
        let sources = if (adj.lo..adj.lo + adj.rows()).contains(&landmark) { vec![(landmark - adj.lo) as u32] } else { Vec::new() };
        let s = levels(comm, &walk, Start { sources, targets: None, last_level: usize::MAX }, threads, Direction::Auto, &mut progress)?;
        for (i, d) in s.depth.into_iter().enumerate() {
            values[i * w + k] = d;
        }
        rounds = rounds.max(s.levels);
    }
    Ok(Computed { values, rounds, seconds: t1.elapsed().as_secs_f64() })
}

/// The edges a search follows, as this process's rows `lo..lo + rows` of n columns:
/// `push` row k lists the vertices the search steps to from vertex lo + k, `pull` row k
/// those it steps from to reach lo + k; `edges`: the entries of `push` over all
/// processes.
struct Walk<'a> {
    n: usize,
    lo: usize,
    push: &'a Matrix<bool>,
    pull: &'a Matrix<bool>,
    edges: u64,
}

impl Walk<'_> {
    /// Along the edges.
    fn forward(adj: &Adjacency) -> Walk<'_> {
        Walk { n: adj.n, lo: adj.lo, push: &adj.out, pull: &adj.inn, edges: adj.nnz }
    }
}

/// The search of [`crate::algorithms::bfs`] over this process's block: the blocks of
/// all processes, the exchanges by `comm`.
fn levels(
    comm: &mut Comm<'_>,
    walk: &Walk<'_>,
    start: Start<'_>,
    threads: usize,
    forced: Direction,
    progress: &mut Rounds<'_>,
) -> DistResult<Searched> {
    let (p, n) = (comm.p, walk.n);
    let starts: Vec<usize> = (0..=p).map(|q| even_start(q, n, p)).collect();
    let block = Block { n, starts: &starts, lo: walk.lo, push: Rows::of(walk.push.csr()), pull: Rows::of(walk.pull.csr()), edges: walk.edges };
    let debug = crate::settings::Settings::from_env()?.debug;
    let me = comm.me;
    let mut t = Instant::now();
    let mut expanded = |e: &Expanded| {
        if debug {
            let (level, direction, vertices, edges) = (e.level, e.direction, e.vertices, e.edges);
            eprintln!("bfs process {me}: level {level} {direction:?}: frontier {vertices} vertices, {edges} edges; {:.6} s", t.elapsed().as_secs_f64());
            t = Instant::now();
        }
        progress.done(e.level, "frontier", Measure::Count(e.vertices));
    };
    search(&mut Processes { comm }, &block, start, threads, forced, &mut expanded)
}

/// The exchanges of a search between the processes.
struct Processes<'a, 'c> {
    comm: &'a mut Comm<'c>,
}

impl Exchange for Processes<'_, '_> {
    type Error = DistError;

    fn sum(&mut self, counts: &mut [u64]) -> DistResult<()> {
        self.comm.allreduce_u64(counts, |a, b| *a += *b)
    }

    fn route(&mut self, send: &[u32], counts: &[usize]) -> DistResult<Vec<u32>> {
        Ok(self.comm.alltoallv(send, counts)?.0)
    }

    fn gather(&mut self, mine: &[u64]) -> DistResult<Vec<u64>> {
        Ok(self.comm.allgatherv(mine)?.0)
    }
}
