//! Breadth-first search: the depth of every vertex from a source, following directed
//! edges forward; a vertex the source cannot reach has depth [`UNREACHABLE`]
//! (Graphalytics: 9223372036854775807).
//!
//! Direction-optimising (Beamer, Asanović, Patterson 2012), as a native level loop over
//! the rows of a block of vertices ([`search`]), shared by the local [`bfs`] (one block:
//! the whole graph) and the distributed searches of [`crate::dist::bfs`] (one block per
//! process, the exchanges behind [`Exchange`]):
//!
//! * a **push** level walks the out-rows of the frontier, kept as a list of block
//!   vertices, and claims each unvisited neighbour by a compare-and-swap on its depth;
//!   the claimed ones are the next frontier. Neighbours owned by other blocks are
//!   routed to their owners (one irregular all-to-all), which claim them the same way;
//! * a **pull** level reads the frontier as a bitmap of all n vertices (the blocks'
//!   bitmaps, gathered): every unvisited block vertex scans its in-row and stops at the
//!   first in-neighbour in it, setting its bit of the next frontier's bitmap.
//!
//! Small frontiers push; once the frontier's out-edges outweigh the edges left to
//! explore, levels pull, until the frontier shrinks again ([`next_direction`]). The
//! counts the rule reads (the frontier's vertices, out-edges and in-edges) are summed
//! as the frontier is claimed, and over the blocks by one small reduction per level;
//! one block (one process) exchanges nothing.

use crate::algebra::Cast;
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Matrix, Rows};
use crate::ops::Direction;
use crate::parallel::run_blocks;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Depth of a vertex the source does not reach.
pub const UNREACHABLE: i64 = i64::MAX;

/// Push turns to pull when the frontier's out-edges exceed 1/`ALPHA` of the edges
/// still unexplored (Beamer's α).
pub(crate) const ALPHA: u64 = 14;
/// Pull turns back to push when the frontier holds fewer than 1/`BETA` of the
/// vertices (Beamer's β).
pub(crate) const BETA: u64 = 24;

/// The direction of the next level: the rule of Beamer et al. with [`ALPHA`] and
/// [`BETA`]. `frontier_edges` are the out-edges of the frontier, `unexplored_edges` the
/// edges into vertices not yet visited (what a pull may have to read).
pub(crate) fn next_direction(current: Direction, n: u64, frontier_vertices: u64, frontier_edges: u64, unexplored_edges: u64) -> Direction {
    match current {
        Direction::Pull if frontier_vertices * BETA >= n => Direction::Pull,
        Direction::Pull => Direction::Push,
        _ if frontier_edges * ALPHA > unexplored_edges => Direction::Pull,
        _ => Direction::Push,
    }
}

/// Depths from `source` in the graph with adjacency matrix `a` (`a(i, j)` present:
/// an edge i → j; values ignored). `threads` threads per level.
pub fn bfs<A: Cast<bool>>(a: &Matrix<A>, source: usize, threads: usize) -> GrbResult<Vec<i64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("BFS needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    if source >= n {
        return Err(GrbError::InvalidValue(format!("BFS source {source} is not a vertex (the graph has {n})")));
    }
    let block = Block { n, starts: &[0, n], lo: 0, push: Rows::of(a.csr()), pull: Rows::of(a.csc()), edges: a.nvals() as u64 };
    let start = Start { sources: vec![source as u32], targets: None, last_level: usize::MAX };
    Ok(search(&mut Alone, &block, start, threads, Direction::Auto, &mut |_| {})?.depth)
}

/// One block of the graph as a search walks it: vertices `starts[b]..starts[b + 1]`
/// belong to block b (the blocks of all processes, in order; this one is `lo..lo +
/// rows`, `rows` the rows of `push` and of `pull`).
pub(crate) struct Block<'a> {
    /// Vertices in the whole graph.
    pub n: usize,
    /// The first vertex of every block, and n.
    pub(crate) starts: &'a [usize],
    /// The first vertex of this block.
    pub lo: usize,
    /// Row k: the vertices the search steps to from block vertex k.
    pub push: Rows<'a>,
    /// Row k: the vertices the search steps from to reach block vertex k.
    pub pull: Rows<'a>,
    /// The entries of `push` over all blocks.
    pub edges: u64,
}

/// The vertices of a block marked as targets: those with `bit` set in `marks`.
#[derive(Clone, Copy)]
pub(crate) struct Targets<'a> {
    pub marks: &'a [u8],
    pub bit: u8,
}

/// Where a search starts and where it stops.
pub(crate) struct Start<'a> {
    /// This block's sources (offsets into the block), each once: level 0.
    pub sources: Vec<u32>,
    /// The search stops after the first level that reaches a target (none: it runs
    /// until no vertex is left).
    pub(crate) targets: Option<Targets<'a>>,
    /// The last level whose vertices get depths (they are not expanded).
    pub(crate) last_level: usize,
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

/// A level expanded (or the last one, which a search stops at): the same on every
/// block.
pub(crate) struct Expanded {
    pub level: usize,
    pub direction: Direction,
    /// The frontier: the vertices at depth `level`, and their out-edges.
    pub vertices: u64,
    pub edges: u64,
}

/// The communication between the blocks of a search; called only when there are two
/// or more. Collective: every block makes the same calls in the same order.
pub(crate) trait Exchange {
    type Error: From<GrbError>;
    /// Element-wise sums over the blocks.
    fn sum(&mut self, counts: &mut [u64]) -> Result<(), Self::Error>;
    /// `send` holds one part per block (`counts[b]` vertices for block b); returns what
    /// every block sent to this one.
    fn route(&mut self, send: &[u32], counts: &[usize]) -> Result<Vec<u32>, Self::Error>;
    /// Every block's `mine`, concatenated in block order.
    fn gather(&mut self, mine: &[u64]) -> Result<Vec<u64>, Self::Error>;
}

/// The exchange of a search with one block, which makes no calls.
struct Alone;

impl Exchange for Alone {
    type Error = GrbError;
    fn sum(&mut self, _: &mut [u64]) -> GrbResult<()> {
        Ok(())
    }
    fn route(&mut self, send: &[u32], _: &[usize]) -> GrbResult<Vec<u32>> {
        Ok(send.to_vec())
    }
    fn gather(&mut self, mine: &[u64]) -> GrbResult<Vec<u64>> {
        Ok(mine.to_vec())
    }
}

/// Work (edges or rows) below which a level runs on the calling thread alone: starting
/// threads costs tens of microseconds, more than a small level.
const PARALLEL_WORK: usize = 1 << 14;
/// Frontier vertices a thread takes at a time in a push level.
const PUSH_CHUNK: usize = 64;
/// Rows a thread takes at a time in a pull level: whole words of the next bitmap.
const PULL_CHUNK: usize = 1024;

/// The direction-optimising search over `block`: a claim is a compare-and-swap on the
/// vertex's i64 depth, which becomes the result without a copy. `forced` `Push` or
/// `Pull` takes that direction at every level; `expanded` is told of every level with
/// vertices. Collective over the blocks.
pub(crate) fn search<X: Exchange>(
    x: &mut X,
    block: &Block<'_>,
    start: Start<'_>,
    threads: usize,
    forced: Direction,
    expanded: &mut dyn FnMut(&Expanded),
) -> Result<Searched, X::Error> {
    search_with(x, block, start, threads, forced, PARALLEL_WORK, expanded)
}

/// As [`search`], with levels of `parallel_work` or more edges or rows on `threads`
/// threads (the tests take 0: every level parallel).
fn search_with<X: Exchange>(
    x: &mut X,
    block: &Block<'_>,
    start: Start<'_>,
    threads: usize,
    forced: Direction,
    parallel_work: usize,
    expanded: &mut dyn FnMut(&Expanded),
) -> Result<Searched, X::Error> {
    let n = block.n;
    let p = block.starts.len() - 1;
    let rows = block.push.count();
    let mut s = Search::new(block, start.targets, threads.max(1), parallel_work)?;
    let mut tally = Tally::default();
    for &k in &start.sources {
        s.depth[k as usize].store(0, Relaxed);
        s.count(&mut tally, k as usize);
    }
    let mut frontier = Frontier::List(start.sources);
    let words = rows.div_ceil(64);
    // The frontier's bitmap (this block's bits) in pull levels, the next one's, and at
    // two or more blocks all blocks' bits.
    let (mut bits, mut next_bits, mut whole) = (Vec::new(), Vec::new(), Vec::new());
    let mut unexplored = block.edges;
    let mut direction = Direction::Push;
    for level in 0.. {
        let mut counts = [tally.vertices, tally.edges, tally.explored, tally.targets];
        if p > 1 {
            x.sum(&mut counts)?;
        }
        let [vertices, edges, explored, reached] = counts;
        if vertices == 0 {
            return Ok(Searched { depth: s.depths(), levels: level, found: None });
        }
        if reached > 0 || level >= start.last_level {
            expanded(&Expanded { level, direction, vertices, edges });
            return Ok(Searched { depth: s.depths(), levels: level + 1, found: (reached > 0).then_some(level) });
        }
        unexplored = unexplored.saturating_sub(explored);
        direction = match forced {
            Direction::Auto => next_direction(direction, n as u64, vertices, edges, unexplored),
            d => d,
        };
        let depth = level as i64 + 1;
        if direction == Direction::Pull {
            if let Frontier::List(list) = &frontier {
                if bits.is_empty() {
                    bits = atomic_words(words)?;
                    next_bits = atomic_words(words)?;
                    s.open = atomic_words(words)?;
                }
                for w in &bits {
                    w.store(0, Relaxed);
                }
                for &k in list {
                    bits[k as usize / 64].fetch_or(1 << (k % 64), Relaxed);
                }
                frontier = Frontier::Bits;
            }
            let front = if p > 1 {
                if whole.is_empty() {
                    whole = atomic_words(n.div_ceil(64))?;
                }
                let mine: Vec<u64> = bits.iter().map(|w| w.load(Relaxed)).collect();
                let all = x.gather(&mine)?;
                place_blocks(block.starts, &all, &whole);
                &whole
            } else {
                &bits
            };
            // Once the open vertices are known, a pull reads their words and at most the
            // edges left to explore (this block's share, roughly).
            let work = if s.open_known { words + (unexplored / p as u64) as usize } else { rows };
            tally = s.pull(front, &next_bits, depth, work)?;
            s.open_known = true;
            std::mem::swap(&mut bits, &mut next_bits);
        } else {
            let list = match std::mem::replace(&mut frontier, Frontier::Bits) {
                Frontier::List(list) => list,
                Frontier::Bits => set_bits(&bits),
            };
            let pushed = s.push(&list, depth, p)?;
            let (mut next, mut t) = (pushed.claimed, pushed.tally);
            if p > 1 {
                let received = x.route(&pushed.send, &pushed.counts)?;
                let (claimed, got) = s.claim(&received, depth)?;
                next.extend(claimed);
                t.add(&got);
            }
            tally = t;
            frontier = Frontier::List(next);
        }
        expanded(&Expanded { level, direction, vertices, edges });
    }
    unreachable!("the levels are unbounded")
}

/// How this block holds the frontier: a list of its vertices (push) or the bitmap of
/// the search's pull levels.
enum Frontier {
    List(Vec<u32>),
    Bits,
}

/// The frontier's counts on this block, which the direction rule and the stop read.
#[derive(Clone, Copy, Default)]
struct Tally {
    vertices: u64,
    /// Their out-edges (push rows).
    edges: u64,
    /// Their in-edges (pull rows): edges no longer to explore.
    explored: u64,
    /// Those of them that are targets.
    targets: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.vertices += o.vertices;
        self.edges += o.edges;
        self.explored += o.explored;
        self.targets += o.targets;
    }
}

/// A push's outcome: the vertices it claimed (block offsets), their tally, and the
/// neighbours owned by other blocks, grouped by owner (`counts[b]` for block b).
struct Pushed {
    claimed: Vec<u32>,
    tally: Tally,
    send: Vec<u32>,
    counts: Vec<usize>,
}

/// The state of one search on its block.
struct Search<'a> {
    block: &'a Block<'a>,
    lo: usize,
    rows: usize,
    /// The block's depths, [`UNREACHABLE`] while unvisited.
    depth: Vec<AtomicI64>,
    /// From the first pull level on (`open_known`), the bit of every block vertex that
    /// a pull must still look at: not visited, with an in-edge. Pulls then skip the
    /// visited and unreachable ones a word at a time instead of testing each.
    open: Vec<AtomicU64>,
    open_known: bool,
    targets: Option<Targets<'a>>,
    threads: usize,
    parallel_work: usize,
}

/// `len` zeroed atomic words, or the out-of-memory error.
fn atomic_words(len: usize) -> GrbResult<Vec<AtomicU64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| out_of_memory(len * 8, "a BFS frontier bitmap"))?;
    v.resize_with(len, || AtomicU64::new(0));
    Ok(v)
}

fn out_of_memory(bytes: usize, what: &str) -> GrbError {
    GrbError::InvalidValue(format!("out of memory: cannot allocate {bytes} bytes for {what}"))
}

/// Every block's bits (`all`: block b's words, bit 0 of its first word its first
/// vertex) placed into the bitmap of all vertices, `whole`.
fn place_blocks(starts: &[usize], all: &[u64], whole: &[AtomicU64]) {
    for w in whole {
        w.store(0, Relaxed);
    }
    let mut at = 0;
    for b in starts.windows(2) {
        let (first, len) = (b[0], (b[1] - b[0]).div_ceil(64));
        let (word, shift) = (first / 64, first % 64);
        for (j, &x) in all[at..at + len].iter().enumerate() {
            whole[word + j].fetch_or(x << shift, Relaxed);
            if shift != 0 && word + j + 1 < whole.len() {
                whole[word + j + 1].fetch_or(x >> (64 - shift), Relaxed);
            }
        }
        at += len;
    }
}

/// The positions of the set bits, ascending.
fn set_bits(bits: &[AtomicU64]) -> Vec<u32> {
    let mut list = Vec::new();
    for (j, w) in bits.iter().enumerate() {
        let mut x = w.load(Relaxed);
        while x != 0 {
            list.push((j * 64) as u32 + x.trailing_zeros());
            x &= x - 1;
        }
    }
    list
}

/// Runs `work(&mut state, c)` for chunks c = 0..chunks on `threads` threads that take
/// the next chunk as they finish one (each thread's state made by `make`); the states
/// in thread order.
fn chunked<R: Send>(threads: usize, chunks: usize, make: impl Fn() -> R + Sync, work: impl Fn(&mut R, usize) + Sync) -> GrbResult<Vec<R>> {
    let threads = threads.min(chunks).max(1);
    if threads == 1 {
        let mut r = make();
        (0..chunks).for_each(|c| work(&mut r, c));
        return Ok(vec![r]);
    }
    let next = AtomicUsize::new(0);
    run_blocks(vec![(); threads], |_, ()| {
        let mut r = make();
        loop {
            let c = next.fetch_add(1, Relaxed);
            if c >= chunks {
                return r;
            }
            work(&mut r, c);
        }
    })
}

impl<'a> Search<'a> {
    fn new(block: &'a Block<'a>, targets: Option<Targets<'a>>, threads: usize, parallel_work: usize) -> GrbResult<Search<'a>> {
        let rows = block.push.count();
        let mut depth = Vec::new();
        depth.try_reserve_exact(rows).map_err(|_| out_of_memory(rows * 4, "the BFS depths"))?;
        depth.resize_with(rows, || AtomicI64::new(UNREACHABLE));
        Ok(Search { block, lo: block.lo, rows, depth, open: Vec::new(), open_known: false, targets, threads, parallel_work })
    }

    /// The threads for a step of `work` edges or rows.
    fn threads_for(&self, work: usize) -> usize {
        if work >= self.parallel_work {
            self.threads
        } else {
            1
        }
    }

    /// Block vertex k joins the frontier being made.
    #[inline]
    fn count(&self, t: &mut Tally, k: usize) {
        t.vertices += 1;
        t.edges += self.block.push.len(k);
        t.explored += self.block.pull.len(k);
        if let Some(m) = self.targets {
            t.targets += (m.marks[k] & m.bit != 0) as u64;
        }
    }

    /// Whether this call visits block vertex k (at `depth`): one claim wins however many
    /// threads reach k in the level.
    #[inline]
    fn visit(&self, k: usize, depth: i64) -> bool {
        let d = &self.depth[k];
        let won = d.load(Relaxed) == UNREACHABLE && d.compare_exchange(UNREACHABLE, depth, Relaxed, Relaxed).is_ok();
        if won && self.open_known {
            self.open[k / 64].fetch_and(!(1 << (k % 64)), Relaxed);
        }
        won
    }

    /// The block that owns vertex v.
    #[inline]
    fn owner(&self, v: u32) -> usize {
        self.block.starts.partition_point(|&s| s <= v as usize) - 1
    }

    /// A push level from the block vertices `frontier` over `p` blocks.
    fn push(&self, frontier: &[u32], depth: i64, p: usize) -> GrbResult<Pushed> {
        let (push, lo, rows) = (self.block.push, self.lo, self.rows);
        let work: usize = frontier.iter().map(|&v| push.len(v as usize) as usize).sum();
        let chunks = frontier.len().div_ceil(PUSH_CHUNK);
        let states = chunked(
            self.threads_for(work),
            chunks,
            || (Vec::new(), Tally::default(), vec![Vec::new(); p]),
            |(claimed, tally, away): &mut (Vec<u32>, Tally, Vec<Vec<u32>>), c| {
                for &v in &frontier[c * PUSH_CHUNK..frontier.len().min((c + 1) * PUSH_CHUNK)] {
                    for &w in push.line(v as usize) {
                        let k = (w as usize).wrapping_sub(lo);
                        if k < rows {
                            if self.visit(k, depth) {
                                claimed.push(k as u32);
                                self.count(tally, k);
                            }
                        } else {
                            away[self.owner(w)].push(w);
                        }
                    }
                }
            },
        )?;
        let mut pushed = Pushed { claimed: Vec::new(), tally: Tally::default(), send: Vec::new(), counts: vec![0; p] };
        for (claimed, tally, _) in &states {
            pushed.claimed.extend_from_slice(claimed);
            pushed.tally.add(tally);
        }
        for b in 0..p {
            for (_, _, away) in &states {
                pushed.send.extend_from_slice(&away[b]);
                pushed.counts[b] += away[b].len();
            }
        }
        Ok(pushed)
    }

    /// Visits the vertices `received` (of this block, numbered in the whole graph; a
    /// vertex may come several times) that are not yet visited: the claimed ones (block
    /// offsets) and their tally.
    fn claim(&self, received: &[u32], depth: i64) -> GrbResult<(Vec<u32>, Tally)> {
        let lo = self.lo;
        let chunks = received.len().div_ceil(PULL_CHUNK);
        let states = chunked(
            self.threads_for(received.len()),
            chunks,
            || (Vec::new(), Tally::default()),
            |(claimed, tally): &mut (Vec<u32>, Tally), c| {
                for &w in &received[c * PULL_CHUNK..received.len().min((c + 1) * PULL_CHUNK)] {
                    let k = w as usize - lo;
                    if self.visit(k, depth) {
                        claimed.push(k as u32);
                        self.count(tally, k);
                    }
                }
            },
        )?;
        let (mut claimed, mut tally) = (Vec::new(), Tally::default());
        for (c, t) in &states {
            claimed.extend_from_slice(c);
            tally.add(t);
        }
        Ok((claimed, tally))
    }

    /// A pull level of about `work` steps: `front` has the bit of every frontier vertex
    /// of the whole graph; `next` gets this block's bits of the next frontier (every
    /// word written). The first one finds the open vertices from the depths and the
    /// rows.
    fn pull(&self, front: &[AtomicU64], next: &[AtomicU64], depth: i64, work: usize) -> GrbResult<Tally> {
        let (pull, rows) = (self.block.pull, self.rows);
        const WORDS: usize = PULL_CHUNK / 64;
        let states = chunked(self.threads_for(work), rows.div_ceil(PULL_CHUNK), Tally::default, |tally, c| {
            for j in c * WORDS..next.len().min((c + 1) * WORDS) {
                let base = j * 64;
                let open = if self.open_known {
                    self.open[j].load(Relaxed)
                } else {
                    (base..rows.min(base + 64))
                        .map(|k| ((self.depth[k].load(Relaxed) == UNREACHABLE && pull.len(k) > 0) as u64) << (k - base))
                        .fold(0, |a, b| a | b)
                };
                let (mut rest, mut found) = (open, 0u64);
                while rest != 0 {
                    let i = rest.trailing_zeros();
                    rest &= rest - 1;
                    let k = base + i as usize;
                    for &w in pull.line(k) {
                        if front[w as usize / 64].load(Relaxed) >> (w % 64) & 1 != 0 {
                            self.depth[k].store(depth, Relaxed);
                            found |= 1 << i;
                            self.count(tally, k);
                            break;
                        }
                    }
                }
                self.open[j].store(open & !found, Relaxed);
                next[j].store(found, Relaxed);
            }
        })?;
        let mut tally = Tally::default();
        states.iter().for_each(|t| tally.add(t));
        Ok(tally)
    }

    /// The depths as the search returns them (in place: an atomic has the layout of
    /// its integer).
    fn depths(self) -> Vec<i64> {
        self.depth.into_iter().map(AtomicI64::into_inner).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_cycle_and_unreachable() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 4 isolated, 5 -> 0 (not reachable from 0).
        let a = Matrix::<bool>::from_edges(6, 6, &[(0, 1), (1, 2), (2, 0), (2, 3), (5, 0), (1, 1)]).unwrap();
        assert_eq!(bfs(&a, 0, 1).unwrap(), vec![0, 1, 2, 3, UNREACHABLE, UNREACHABLE]);
        assert_eq!(bfs(&a, 5, 2).unwrap(), vec![1, 2, 3, 4, UNREACHABLE, 0]);
        assert!(bfs(&a, 6, 1).is_err());
    }

    #[test]
    fn direction_rule() {
        assert_eq!(next_direction(Direction::Push, 1000, 10, 100, 10_000), Direction::Push);
        assert_eq!(next_direction(Direction::Push, 1000, 10, 1000, 10_000), Direction::Pull);
        assert_eq!(next_direction(Direction::Pull, 1000, 100, 0, 0), Direction::Pull);
        assert_eq!(next_direction(Direction::Pull, 1000, 40, 0, 0), Direction::Push);
    }

    /// Depths by a plain queue over the edge list (not the code under test).
    fn queue_bfs(n: usize, edges: &[(usize, usize)], source: usize) -> Vec<i64> {
        let mut out = vec![Vec::new(); n];
        for &(u, v) in edges {
            out[u].push(v);
        }
        let mut depth = vec![UNREACHABLE; n];
        depth[source] = 0;
        let mut queue = std::collections::VecDeque::from([source]);
        while let Some(u) = queue.pop_front() {
            for &v in &out[u] {
                if depth[v] == UNREACHABLE {
                    depth[v] = depth[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        depth
    }

    /// Graphs whose searches take every path of the level loop: many levels of one
    /// vertex (push, and pull once few edges are left), a hub midway (push turns to
    /// pull and back), a star both ways (one huge level), R-MAT (low diameter, skewed
    /// degrees), random (many components).
    fn shapes() -> Vec<(&'static str, usize, Vec<(usize, usize)>)> {
        let path: Vec<(usize, usize)> = (0..299).map(|v| (v, v + 1)).collect();
        let mut hub = path.clone();
        hub.extend((0..300).filter(|&v| v != 150).map(|v| (150, v)));
        hub.extend((300..400).map(|v| (v - 1, v)));
        let star: Vec<(usize, usize)> = (1..500).flat_map(|v| [(0, v), (v, 0)]).collect();
        let params = crate::kron::KronParams::graph500(10, 5);
        let coo = params.generate(0..params.num_edges(), &params.permutation(), 1).unwrap();
        let rmat = coo.rows.iter().zip(&coo.cols).map(|(&u, &v)| (u as usize, v as usize)).collect();
        let mut rng = crate::prng::Xoshiro256::new(3);
        let random = (0..1200).map(|_| (rng.below(1000) as usize, rng.below(1000) as usize)).collect();
        vec![("path", 300, path), ("path with a hub midway", 400, hub), ("star", 500, star), ("R-MAT", 1024, rmat), ("random", 1000, random)]
    }

    /// Every level on several threads (no work is too small for them), every direction,
    /// against the queue.
    #[test]
    fn parallel_levels_in_every_direction_match_a_queue() {
        for (name, n, edges) in shapes() {
            let a = Matrix::<bool>::from_edges(n, n, &edges).unwrap();
            let block = Block { n, starts: &[0, n], lo: 0, push: Rows::of(a.csr()), pull: Rows::of(a.csc()), edges: a.nvals() as u64 };
            for source in [0, n / 2, n - 1] {
                let want = queue_bfs(n, &edges, source);
                let levels = want.iter().filter(|&&d| d != UNREACHABLE).max().unwrap() + 1;
                for threads in [1, 2, 3] {
                    for forced in [Direction::Auto, Direction::Push, Direction::Pull] {
                        let start = Start { sources: vec![source as u32], targets: None, last_level: usize::MAX };
                        let mut seen = Vec::new();
                        let got = search_with(&mut Alone, &block, start, threads, forced, 0, &mut |e| seen.push((e.level, e.direction, e.vertices))).unwrap();
                        let what = format!("{name} from {source}, {threads} threads, {forced:?}");
                        assert_eq!(got.depth, want, "{what}");
                        assert_eq!((got.levels, got.found), (levels as usize, None), "{what}");
                        let sizes: Vec<u64> = (0..levels).map(|d| want.iter().filter(|&&x| x == d).count() as u64).collect();
                        assert_eq!(seen.iter().map(|e| e.2).collect::<Vec<_>>(), sizes, "{what}: the frontiers");
                        if forced != Direction::Auto {
                            assert!(seen.iter().all(|e| e.1 == forced), "{what}: {seen:?}");
                        }
                    }
                }
            }
        }
    }

    /// The search from a block's sources stops at the first level with a target, or at
    /// the last level asked for.
    #[test]
    fn targets_and_the_last_level_stop_the_search() {
        let edges: Vec<(usize, usize)> = (0..99).map(|v| (v, v + 1)).collect();
        let a = Matrix::<bool>::from_edges(100, 100, &edges).unwrap();
        let block = Block { n: 100, starts: &[0, 100], lo: 0, push: Rows::of(a.csr()), pull: Rows::of(a.csc()), edges: 99 };
        let mut marks = vec![0u8; 100];
        marks[40] = 2;
        marks[70] = 2;
        for forced in [Direction::Auto, Direction::Push, Direction::Pull] {
            let start = Start { sources: vec![10, 20], targets: Some(Targets { marks: &marks, bit: 2 }), last_level: usize::MAX };
            let got = search_with(&mut Alone, &block, start, 2, forced, 0, &mut |_| {}).unwrap();
            assert_eq!((got.levels, got.found), (21, Some(20)));
            assert_eq!((got.depth[10], got.depth[19], got.depth[40], got.depth[41]), (0, 9, 20, UNREACHABLE));
            let start = Start { sources: vec![10], targets: None, last_level: 5 };
            let got = search_with(&mut Alone, &block, start, 2, forced, 0, &mut |_| {}).unwrap();
            assert_eq!((got.levels, got.found, got.depth[15], got.depth[16]), (6, None, 5, UNREACHABLE));
        }
    }

    /// Blocks' bitmaps land in the bitmap of all vertices at their first vertex,
    /// word-aligned or not.
    #[test]
    fn block_bitmaps_are_placed_at_their_vertices() {
        let starts = [0usize, 3, 70, 200, 200, 261];
        let set = [0usize, 2, 3, 66, 69, 70, 133, 199, 260];
        let mut all = Vec::new();
        for b in starts.windows(2) {
            let mut words = vec![0u64; (b[1] - b[0]).div_ceil(64)];
            for &v in set.iter().filter(|&&v| (b[0]..b[1]).contains(&v)) {
                words[(v - b[0]) / 64] |= 1 << ((v - b[0]) % 64);
            }
            all.extend(words);
        }
        let whole = atomic_words(261usize.div_ceil(64)).unwrap();
        whole[1].store(u64::MAX, Relaxed);
        place_blocks(&starts, &all, &whole);
        assert_eq!(set_bits(&whole), set.iter().map(|&v| v as u32).collect::<Vec<_>>());
    }

    /// A path of 2,000 edges among 4 million vertices: 2,000 levels of one vertex each.
    /// A level that touches all n positions (bitmaps of the depth, the masks and the
    /// product) costs milliseconds here, 2,000 of them tens of seconds; one that costs
    /// its frontier (sparse results, merged write-backs, masks of n bits) well under a
    /// second in all. Bounded: a result later than the limit is a failure, not a hang.
    #[test]
    fn a_level_costs_its_frontier_not_n() {
        const N: usize = 1 << 22;
        const PATH: usize = 2000;
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
        let edges: Vec<(usize, usize)> = (0..PATH).map(|v| (v, v + 1)).collect();
        let a = Matrix::<bool>::from_edges(N, N, &edges).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(bfs(&a, 0, 2)));
        let got = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("BFS of {PATH} levels over {N} vertices took over {LIMIT:?}")).unwrap();
        assert!((0..=PATH).all(|v| got[v] == v as i64) && got[PATH + 1..].iter().all(|&d| d == UNREACHABLE));
    }
}
