//! Distributed direction-optimising BFS. Each level, on every process's block:
//!
//! * **push** (small frontier): `reach = frontier any.pair A_out` over the block's
//!   out-edges ([`vxm`], push), the reached ids go to their owners (alltoallv), and
//!   each owner keeps the ones not yet visited;
//! * **pull** (large frontier): the frontier is gathered on every process
//!   (allgatherv of its ids, in pid order hence sorted), and every unvisited vertex of
//!   the block looks for one in-neighbour in it (`next⟨¬visited⟩ = A_in any.pair
//!   frontier`, [`mxv`], pull: a row stops at its first hit).
//!
//! One allreduce per level sums the frontier's size, its out-edges and the in-edges of
//! the newly visited vertices, so every process takes the same direction
//! ([`next_direction`]) and stops at the same level.
//!
//! The same levels walk the edges backwards (push over the in-rows, pull over the
//! out-rows) or both ways (both over their union): the hop distances *to* landmarks
//! ([`distances_to`], GraphX's ShortestPaths), one search per landmark.

use super::adjacency::{Adjacency, VertexValues};
use super::build::even_owner;
use super::comm::{try_filled, Comm};
use super::graph::{Computed, Graph};
use super::load::Weights;
use super::progress::{Measure, Observer, Rounds};
use super::{finish, DistResult, Input};
use crate::algebra::{LOr, ANY_PAIR};
use super::marks::{FROM, TO};
use crate::algorithms::bfs::{next_direction, UNREACHABLE};
use crate::matrix::Matrix;
use crate::ops::{apply, assign_scalar, ewise_add_matrix, mxv, vxm, Descriptor, Direction};
use crate::vector::{Mask, Vector};
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
    let search = Search { sources, targets: None, last_level: usize::MAX };
    let s = levels(comm, &Walk::forward(g.adjacency()), search, threads, forced, &mut Rounds::start("level", observe))?;
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
    let search = Search { sources, targets: Some(marks), last_level: max_length };
    let s = levels(comm, &Walk::forward(g.adjacency()), search, threads, Direction::Auto, &mut Rounds::start("level", observe))?;
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

/// Where a search starts and where it stops.
pub(crate) struct Search<'a> {
    /// This block's sources (offsets into the block), ascending: level 0.
    pub sources: Vec<u32>,
    /// The vertex marks of this block: the search stops after the first level that
    /// reaches a vertex marked [`TO`] (none: it runs until no vertex is left).
    pub targets: Option<&'a [u8]>,
    /// The last level whose vertices get depths (they are not expanded).
    pub last_level: usize,
}

/// How a search ended.
pub(crate) struct Searched {
    /// The depth of every vertex of the block, [`UNREACHABLE`] where the search did not
    /// come.
    pub depth: Vec<i64>,
    /// Levels with vertices (the largest depth + 1).
    pub levels: usize,
    /// The first level that reached a target, if one did.
    pub found: Option<usize>,
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
        let s = levels(comm, &walk, Search { sources, targets: None, last_level: usize::MAX }, threads, Direction::Auto, &mut progress)?;
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

fn levels(
    comm: &mut Comm<'_>,
    walk: &Walk<'_>,
    search: Search<'_>,
    threads: usize,
    forced: Direction,
    progress: &mut Rounds<'_>,
) -> DistResult<Searched> {
    let (p, n, lo, rows) = (comm.p, walk.n, walk.lo, walk.push.nrows());
    let (outdeg, indeg) = (walk.push.row_counts(), walk.pull.row_counts());
    let desc = Descriptor::with_threads(threads);
    let mut depth: Vector<i64> = Vector::empty(rows);
    let Search { sources, targets, last_level } = search;
    let mut frontier: Vector<bool> = Vector::Sparse { n: rows, val: vec![true; sources.len()], idx: sources };
    let mut unexplored = walk.edges;
    let mut direction = Direction::Push;
    let debug = crate::settings::Settings::from_env()?.debug;
    for level in 0.. {
        let t = Instant::now();
        assign_scalar(&mut depth, Some(&Mask::structure(&frontier)), None, level, &desc)?;
        let mut stats = [frontier.nvals() as u64, 0, 0, 0];
        for (v, _) in frontier.entries() {
            stats[1] += outdeg[v] as u64;
            stats[2] += indeg[v] as u64;
            stats[3] += targets.is_some_and(|m| m[v] & TO != 0) as u64;
        }
        comm.allreduce_u64(&mut stats, |a, b| *a += *b)?;
        let [frontier_vertices, frontier_edges, explored, reached_targets] = stats;
        let level = level as usize;
        let searched = |depth: &Vector<i64>, found| Searched { depth: depth.to_dense_with(UNREACHABLE), levels: level + 1, found };
        if frontier_vertices == 0 {
            return Ok(Searched { levels: level, ..searched(&depth, None) });
        }
        if reached_targets > 0 || level >= last_level {
            progress.done(level, "frontier", Measure::Count(frontier_vertices));
            return Ok(searched(&depth, (reached_targets > 0).then_some(level)));
        }
        unexplored = unexplored.saturating_sub(explored);
        direction = match forced {
            Direction::Auto => next_direction(direction, n as u64, frontier_vertices, frontier_edges, unexplored),
            d => d,
        };
        let unvisited = Mask::structure(&depth).complement();
        let mut next = Vector::empty(rows);
        if direction == Direction::Pull {
            let mine: Vec<u32> = sparse_indices(&frontier).iter().map(|&k| (lo + k as usize) as u32).collect();
            let (all, _) = comm.allgatherv(&mine)?;
            let whole = Vector::Sparse { n, val: vec![true; all.len()], idx: all };
            mxv(&mut next, Some(&unvisited), None, ANY_PAIR, walk.pull, &whole, &desc.replace().direction(Direction::Pull))?;
        } else {
            let mut reach = Vector::empty(n);
            vxm(&mut reach, None, None, ANY_PAIR, &frontier, walk.push, &desc.direction(Direction::Push))?;
            let reached = sparse_indices(&reach);
            let mut counts = vec![0usize; p];
            for &v in &reached {
                counts[even_owner(v as usize, n, p)] += 1;
            }
            // `reached` is ascending, so it is already grouped by owner.
            let (mut got, _) = comm.alltoallv(&reached, &counts)?;
            for v in got.iter_mut() {
                *v -= lo as u32;
            }
            got.sort_unstable();
            got.dedup();
            let candidates = Vector::Sparse { n: rows, val: vec![true; got.len()], idx: got };
            apply(&mut next, Some(&unvisited), None, |x| x, &candidates, &desc.replace())?;
        }
        if debug {
            eprintln!(
                "bfs process {}: level {level} {direction:?}: frontier {frontier_vertices} vertices, {frontier_edges} edges; {:.6} s",
                comm.me,
                t.elapsed().as_secs_f64()
            );
        }
        progress.done(level, "frontier", Measure::Count(frontier_vertices));
        frontier = next;
    }
    unreachable!("the levels are unbounded")
}

/// The indices of the present entries.
fn sparse_indices(v: &Vector<bool>) -> Vec<u32> {
    match v {
        Vector::Sparse { idx, .. } => idx.clone(),
        Vector::Dense(d) => (0..d.len() as u32).collect(),
    }
}
