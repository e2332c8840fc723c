//! Weakly connected components: edges are followed in both directions; every vertex
//! gets the smallest vertex number of its component (in the crate's numbering, which
//! follows the input's ids in ascending order, so this is the smallest original id).
//!
//! Afforest (Sutton, Ben-Nun, Barak 2018): a union-find over a parent array `comp`
//! that the threads link without locks, by compare-and-swap. A link hooks the larger
//! of two roots under the smaller, so every parent is at most its child, a root is the
//! smallest vertex of its tree, and the label of a vertex is its root.
//!
//! 1. Sampling: every vertex is linked with its first two out-neighbours (one
//!    neighbour per pass, each pass followed by a compression that points every
//!    vertex at its root). On graphs with a giant component this already puts most
//!    vertices in it.
//! 2. The most frequent root among [`SAMPLES`] vertices drawn with a fixed seed is
//!    taken for the giant component.
//! 3. Full pass: every vertex whose parent is not that root is linked with the rest of
//!    its out-neighbours and all its in-neighbours. A vertex in the giant component
//!    may be skipped: each edge u → v is seen from both ends (as u's out-edge and v's
//!    in-edge), so it is linked unless both ends were in the giant tree already. A
//!    final compression gives the labels.
//!
//! [`Forest`] holds these steps for a block of vertices so that the distributed kernel
//! (`dist::wcc`) runs them on each process's block and combines the forests.

use crate::algebra::Scalar;
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Matrix, Rows};
use crate::parallel::{run_phases, Member};
use crate::prng::Xoshiro256;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Out-neighbours each vertex is linked with before the giant component is chosen.
pub(crate) const SAMPLED_NEIGHBOURS: usize = 2;

/// Vertices drawn to find the giant component.
const SAMPLES: usize = 1024;

/// Seed of the draw (fixed: the processes of the distributed kernel draw the same
/// vertices from the same forest, so they agree on the giant component).
const SAMPLE_SEED: u64 = 0x5eed_cc;

/// The component label (smallest vertex number of its component) of every vertex of
/// the graph with adjacency matrix `a` (edge directions and values ignored: every
/// stored entry is an edge).
pub fn wcc<A: Scalar>(a: &Matrix<A>, threads: usize) -> GrbResult<Vec<u32>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(GrbError::InvalidValue(format!("WCC needs a square adjacency matrix, got {} x {}", n, a.ncols())));
    }
    let edges = BlockEdges { lo: 0, out: Rows::of(a.csr()), inn: Rows::of(a.csc()) };
    let (forest, _) = Forest::single(n, &edges, threads)?;
    Ok(forest.into_labels(0, n))
}

/// The edges of the vertices `lo..lo + rows`: row k of `out` holds the out-neighbours
/// of vertex `lo + k`, row k of `inn` its in-neighbours (vertex numbers of the whole
/// graph).
pub(crate) struct BlockEdges<'a> {
    pub lo: usize,
    pub out: Rows<'a>,
    pub(crate) inn: Rows<'a>,
}

impl BlockEdges<'_> {
    fn rows(&self) -> usize {
        self.out.count()
    }
}

/// The union-find forest over all `n` vertices: `parent[v] <= v`, in v's component;
/// a root is its own parent and the smallest vertex of its tree.
pub(crate) struct Forest {
    parent: Vec<AtomicU32>,
}

impl Forest {
    /// Every vertex its own tree.
    pub(crate) fn singletons(n: usize) -> Forest {
        Forest { parent: (0..n as u32).map(AtomicU32::new).collect() }
    }

    /// The whole of Afforest on a graph held by one process (`edges` the block of all
    /// vertices), its phases on one team of `threads` threads: the sampling, the giant
    /// component, one full pass and the final compression. Returns the forest (every
    /// vertex pointing at its root) and the links of the full pass that joined two trees.
    pub(crate) fn single(n: usize, edges: &BlockEdges<'_>, threads: usize) -> GrbResult<(Forest, u64)> {
        debug_assert_eq!((edges.lo, edges.rows()), (0, n), "one block of all the vertices");
        let forest = Forest::singletons(n);
        let joined = run_phases(threads, |m| {
            forest.sample(edges, m);
            // Every member draws the same root (the forest is the same for all after
            // the compression's barrier).
            let joined = forest.link_rest(edges, forest.giant(), SAMPLED_NEIGHBOURS, m);
            forest.compress(m);
            joined
        })?;
        Ok((forest, joined.iter().sum()))
    }

    /// Step 1 of the module documentation: each vertex of the block linked with its
    /// first [`SAMPLED_NEIGHBOURS`] out-neighbours, a compression after each.
    pub(crate) fn sample(&self, edges: &BlockEdges<'_>, m: &Member<'_>) {
        for r in 0..SAMPLED_NEIGHBOURS {
            m.share(edges.rows(), piece(edges.rows(), m), |rows| {
                for k in rows {
                    if let Some(&v) = edges.out.line(k).get(r) {
                        self.link((edges.lo + k) as u32, v);
                    }
                }
            });
            self.compress(m);
        }
    }

    /// The most frequent root among [`SAMPLES`] vertices drawn with a fixed seed (the
    /// smallest such root on a tie), or 0 without vertices. The same on every process
    /// whose forest is the same.
    pub(crate) fn giant(&self) -> u32 {
        let n = self.parent.len() as u64;
        if n == 0 {
            return 0;
        }
        let mut rng = Xoshiro256::new(SAMPLE_SEED);
        let mut roots: Vec<u32> = (0..SAMPLES).map(|_| self.root(rng.below(n) as u32)).collect();
        roots.sort_unstable();
        let (mut best, mut best_count) = (roots[0], 0);
        for run in roots.chunk_by(|a, b| a == b) {
            if run.len() > best_count {
                (best, best_count) = (run[0], run.len());
            }
        }
        best
    }

    /// Step 3: every vertex of the block whose parent is not `giant` linked with its
    /// out-neighbours from the `skip`-th on and all its in-neighbours. Returns the
    /// links that joined two trees, of this member. A vertex whose parent is `giant` is
    /// in the giant tree for good (trees only merge), so it is skipped.
    pub(crate) fn link_rest(&self, edges: &BlockEdges<'_>, giant: u32, skip: usize, m: &Member<'_>) -> u64 {
        let mut joined = 0u64;
        m.share(edges.rows(), piece(edges.rows(), m), |rows| {
            for k in rows {
                let u = (edges.lo + k) as u32;
                if self.parent_of(u) == giant {
                    continue;
                }
                for &v in edges.out.line(k).get(skip..).unwrap_or(&[]) {
                    joined += self.link(u, v) as u64;
                }
                for &v in edges.inn.line(k) {
                    joined += self.link(u, v) as u64;
                }
            }
        });
        joined
    }

    /// Points every vertex at its root (no link runs meanwhile, so the roots stay).
    pub(crate) fn compress(&self, m: &Member<'_>) {
        m.share(self.parent.len(), piece(self.parent.len(), m), |vertices| {
            for v in vertices {
                let cell = &self.parent[v];
                loop {
                    let p = cell.load(Relaxed);
                    let grandparent = self.parent[p as usize].load(Relaxed);
                    if grandparent == p {
                        break;
                    }
                    // Another ancestor in the same tree: the trees do not change.
                    cell.store(grandparent, Relaxed);
                }
            }
        });
    }

    /// Runs `f` on the parents as plain numbers (the distributed kernel combines them
    /// over the processes); `f` must leave a forest: every parent at most its vertex
    /// and in its component. The array is converted in place, without copying.
    pub(crate) fn with_parents<R>(&mut self, f: impl FnOnce(&mut [u32]) -> R) -> R {
        let mut plain: Vec<u32> = std::mem::take(&mut self.parent).into_iter().map(AtomicU32::into_inner).collect();
        let r = f(&mut plain);
        self.parent = plain.into_iter().map(AtomicU32::new).collect();
        r
    }

    /// The labels of the vertices `lo..lo + rows`: their parents, which a compression
    /// has made their roots. The whole array (`lo` = 0) is converted in place.
    pub(crate) fn into_labels(self, lo: usize, rows: usize) -> Vec<u32> {
        debug_assert!((lo..lo + rows).all(|v| self.parent[v].load(Relaxed) == self.root(v as u32)), "not compressed");
        if lo == 0 {
            let mut labels: Vec<u32> = self.parent.into_iter().map(AtomicU32::into_inner).collect();
            labels.truncate(rows);
            labels
        } else {
            self.parent[lo..lo + rows].iter().map(|p| p.load(Relaxed)).collect()
        }
    }

    #[inline]
    fn parent_of(&self, v: u32) -> u32 {
        self.parent[v as usize].load(Relaxed)
    }

    #[inline]
    fn root(&self, mut v: u32) -> u32 {
        loop {
            let p = self.parent_of(v);
            if p == v {
                return v;
            }
            v = p;
        }
    }

    /// Joins the trees of `u` and `v`; whether they were two trees. Walks up from both
    /// (`a`, `b`: ancestors of `u` and `v`) until they meet, or until the larger is a
    /// root, which is hooked under the smaller by compare-and-swap; a swap fails only
    /// if another thread hooked that root first, and the walk goes on. After a
    /// compression most links end at once: both parents are the same root.
    #[inline]
    fn link(&self, u: u32, v: u32) -> bool {
        let (mut a, mut b) = (self.parent_of(u), self.parent_of(v));
        while a != b {
            let (high, low) = (a.max(b), a.min(b));
            let above = self.parent_of(high);
            if above == low {
                return false;
            }
            if above == high && self.parent[high as usize].compare_exchange(high, low, Relaxed, Relaxed).is_ok() {
                return true;
            }
            (a, b) = (self.parent_of(self.parent_of(high)), self.parent_of(low));
        }
        false
    }
}

/// The most vertices a thread takes at a time.
const PIECE: usize = 16384;

/// The pieces of a phase over `len` vertices: at least 8 per member when `len` allows
/// (a member that the machine holds up leaves its share to the others), at most
/// [`PIECE`] vertices each.
fn piece(len: usize, m: &Member<'_>) -> usize {
    len.div_ceil(m.threads() * 8).clamp(1, PIECE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_take_their_smallest_vertex() {
        // {0, 3, 5} (3 -> 0 and 5 -> 3: only weakly connected), {1, 2}, {4} alone, {6} with a self-loop.
        let a = Matrix::<bool>::from_edges(7, 7, &[(3, 0), (5, 3), (2, 1), (2, 1), (6, 6)]).unwrap();
        assert_eq!(wcc(&a, 1).unwrap(), vec![0, 1, 1, 0, 4, 0, 6]);
        assert_eq!(wcc(&a, 2).unwrap(), vec![0, 1, 1, 0, 4, 0, 6]);
    }

    #[test]
    fn long_path_numbered_backwards() {
        // A path n-1 -> n-2 -> ... -> 0 numbered against the direction of the hooks.
        let n = 200;
        let edges: Vec<(usize, usize)> = (1..n).map(|i| (i, i - 1)).collect();
        let a = Matrix::<bool>::from_edges(n, n, &edges).unwrap();
        assert_eq!(wcc(&a, 2).unwrap(), vec![0; n]);
    }

    /// A plain sequential union-find over the edge list.
    fn reference(n: usize, edges: &[(usize, usize)]) -> Vec<u32> {
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut v: usize) -> usize {
            while parent[v] != v {
                v = parent[v];
            }
            v
        }
        for &(u, v) in edges {
            let (a, b) = (find(&mut parent, u), find(&mut parent, v));
            parent[a.max(b)] = a.min(b);
        }
        (0..n).map(|v| find(&mut parent, v) as u32).collect()
    }

    #[test]
    fn giant_component_with_small_ones_and_isolated_vertices() {
        // Vertices 0..600 a giant (a random tree joined in both directions), 600..900
        // pairs and triangles, 900..1000 isolated; edges given high-to-low and
        // low-to-high so that both the out- and the in-neighbours matter.
        let mut rng = Xoshiro256::new(3);
        let mut edges: Vec<(usize, usize)> = (1..600).map(|v| if v % 2 == 0 { (v, rng.below(v as u64) as usize) } else { (rng.below(v as u64) as usize, v) }).collect();
        for t in (600..900).step_by(3) {
            edges.extend([(t + 1, t), (t + 2, t + 1)]);
        }
        let a = Matrix::<bool>::from_edges(1000, 1000, &edges).unwrap();
        let want = reference(1000, &edges);
        assert_eq!(want[599], 0);
        for threads in [1, 2, 3] {
            assert_eq!(wcc(&a, threads).unwrap(), want, "threads {threads}");
        }
    }

    #[test]
    fn links_beyond_the_sampled_neighbours_and_through_in_edges() {
        // Vertex 10's first two out-neighbours are in one component, its third in
        // another; 5 -> 20..30: vertices 20..30 have no out-edges, so the sampling
        // never links them, only their in-edges do; so is 40, joined only from 41.
        let mut edges = vec![(10, 1), (10, 2), (10, 3), (1, 0), (3, 4), (41, 40)];
        edges.extend((20..30).map(|v| (5, v)));
        edges.extend((0..5).map(|v| (v + 50, v + 51)));
        let n = 60;
        let a = Matrix::<bool>::from_edges(n, n, &edges).unwrap();
        let want = reference(n, &edges);
        assert_eq!((want[4], want[29], want[41]), (0, 5, 40));
        for threads in [1, 2] {
            assert_eq!(wcc(&a, threads).unwrap(), want);
        }
    }

    #[test]
    fn no_vertices() {
        let a = Matrix::<bool>::from_edges(0, 0, &[]).unwrap();
        assert!(wcc(&a, 2).unwrap().is_empty());
        assert!(wcc(&Matrix::<bool>::from_edges(2, 3, &[]).unwrap(), 1).is_err());
    }
}
