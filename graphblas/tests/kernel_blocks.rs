//! The distributed kernels where one process's block of vertices meets the next, in
//! the default loop (tests/kernels.rs covers the same paths in sweeps that run whole
//! only with the feature `full-sweep`): small graphs at p = 2 and 3 (blocks of unequal
//! sizes, and at n = 150 blocks that start inside a 64-bit word of a bitmap), sources
//! on both sides of every block boundary, each process passing an unequal share of the
//! edges. A kernel that forgets its block's first vertex (`lo`) or is off by one at a
//! block's end is right at p = 1 and wrong here: BFS with every level pulled (the
//! frontier bitmaps of all blocks placed together), SSSP across the boundaries both
//! ways, WCC with components in and across every block, CDLP with ties between labels,
//! LCC with a self-loop on every vertex. Each kernel against the references of `common`.

mod common;

use common::*;
use graphblas::dist::{bfs_spmd_with, cdlp_spmd, lcc_spmd, sssp_spmd, wcc_spmd, DistResult, Input, VertexValues};
use graphblas::Direction;
use lpf::Context;

/// The process counts: two block splits of every graph here, at least one uneven.
const PS: [u32; 2] = [2, 3];
const THREADS: [usize; 2] = [1, 2];

/// Process `pid`'s share of `edges` among `p`: the first half of the edges to process
/// 0, the rest dealt round the others (so the shares differ, and no process's share is
/// its own block's edges).
fn share<E: Copy>(edges: &[E], pid: usize, p: usize) -> Vec<E> {
    let half = edges.len() / 2;
    match pid {
        0 => edges[..half].to_vec(),
        _ => edges[half..].iter().skip(pid - 1).step_by(p - 1).copied().collect(),
    }
}

/// `kernel` on p processes over the numbered graph `0..n` with `edges` (each process
/// its [`share`]), the blocks put together in vertex order.
fn run_numbered<T: Copy + Send + std::fmt::Debug + 'static>(
    p: u32,
    n: usize,
    edges: &[(usize, usize)],
    kernel: impl Fn(&mut Context, Input) -> DistResult<VertexValues<T>> + Sync + Send + 'static,
) -> Vec<T> {
    let edges: Vec<(u64, u64)> = edges.iter().map(|&(u, v)| (u as u64, v as u64)).collect();
    let res = run_all(shm, p, LIMIT, move |ctx| {
        let mine = share(&edges, ctx.pid() as usize, p as usize);
        kernel(ctx, Input::NumberedEdges { n: n as u64, edges: mine })
    });
    gather(&res, &(0..n as u64).collect::<Vec<_>>())
}

/// A path 0 → 1 → … → n−1 (every block boundary an edge) with `chords` random edges
/// on top: the path crosses every block boundary, the chords make levels wider.
fn path_with_chords(seed: u64, n: usize, chords: usize) -> Graph {
    let mut g = random_graph(seed, n, chords);
    g.edges.extend((1..n).map(|v| (v - 1, v)));
    g.name = format!("path of {n} with {chords} chords");
    g
}

/// Every vertex of a small graph; of a larger one the vertices on both sides of each
/// block boundary at p = 2 and 3, and the ends.
fn boundary_vertices(n: usize) -> Vec<usize> {
    if n < 20 {
        return (0..n).collect();
    }
    let mut s = vec![0, n - 1];
    for p in PS.map(|p| p as usize) {
        s.extend((1..p).flat_map(|q| [q * n / p - 1, q * n / p]));
    }
    s.sort_unstable();
    s.dedup();
    s
}

/// Every level pulled (and, apart, pushed), from the vertices at the block boundaries
/// ([`boundary_vertices`]): the pull reads the frontier bitmaps of all blocks placed
/// at their blocks' first bits.
#[test]
fn bfs_every_level_pulled_from_the_block_boundaries() {
    for g in [path_with_chords(1, 7, 2), path_with_chords(2, 150, 40)] {
        for s in boundary_vertices(g.n) {
            let want = reference_bfs(g.n, &g.edges, s);
            for p in PS {
                for direction in [Direction::Pull, Direction::Push] {
                    let got = run_numbered(p, g.n, &g.edges, move |ctx, input| bfs_spmd_with(ctx, input, s as u64, 2, direction));
                    assert_eq!(got, want, "BFS of {} from {s} [p={p} {direction:?}]", g.name);
                }
            }
        }
    }
}

/// Sources on both sides of every block boundary (every vertex), the path's edges
/// both ways so that distances cross each boundary in both directions.
#[test]
fn sssp_from_every_vertex_across_the_boundaries() {
    let g = path_with_chords(3, 11, 6);
    let mut edges: Vec<(usize, usize, f64)> = g.edges.iter().enumerate().map(|(k, &(u, v))| (u, v, (k % 4) as f64)).collect();
    edges.extend((1..g.n).map(|v| (v, v - 1, 5.0)));
    for s in 0..g.n {
        let want = reference_sssp(g.n, &edges, s);
        for p in PS {
            for threads in THREADS {
                let e = edges.clone();
                let n = g.n as u64;
                let res = run_all(shm, p, LIMIT, move |ctx| {
                    let mine = share(&e, ctx.pid() as usize, p as usize);
                    let input = Input::WeightedNumberedEdges { n, edges: mine.iter().map(|e| (e.0 as u64, e.1 as u64)).collect(), weights: mine.iter().map(|e| e.2).collect() };
                    sssp_spmd(ctx, input, s as u64, threads)
                });
                assert_eq!(gather(&res, &(0..n).collect::<Vec<_>>()), want, "SSSP from {s} [p={p} threads={threads}]");
            }
        }
    }
}

/// Components of two and three vertices in every block and across every boundary, and
/// isolated vertices: a link made from the wrong vertex joins components that are apart.
#[test]
fn wcc_of_small_components_in_every_block() {
    let g = Graph::new("pairs and triples", 12, &[(0, 1), (2, 4), (3, 3), (5, 6), (7, 8), (8, 9), (10, 11), (11, 10)]);
    let shuffled = random_graph(4, 30, 14);
    for g in [g, shuffled] {
        let want: Vec<u64> = reference_wcc(g.n, &g.edges).into_iter().map(|r| r as u64).collect();
        for p in PS {
            for threads in THREADS {
                assert_eq!(run_numbered(p, g.n, &g.edges, move |ctx, input| wcc_spmd(ctx, input, threads)), want, "WCC of {} [p={p} threads={threads}]", g.name);
            }
        }
    }
}

/// Ties: vertex 2 hears labels 0 and 1 once each (and 7 hears 5 and 6), so takes 0
/// (5); a random graph full of ties for more iterations.
#[test]
fn cdlp_ties_go_to_the_smallest_label() {
    let ties = Graph::new("ties", 8, &[(0, 2), (1, 2), (5, 7), (6, 7), (3, 4)]);
    let want = reference_cdlp(ties.n, &ties.edges, 1);
    assert_eq!((want[2], want[7]), (0, 5), "the reference breaks ties to the smallest");
    for g in [ties, random_graph(5, 20, 30)] {
        for iterations in [1, 4] {
            let want: Vec<u64> = reference_cdlp(g.n, &g.edges, iterations).into_iter().map(|l| l as u64).collect();
            for p in PS {
                for threads in THREADS {
                    let got = run_numbered(p, g.n, &g.edges, move |ctx, input| cdlp_spmd(ctx, input, iterations, threads));
                    assert_eq!(got, want, "CDLP of {} ({iterations} iterations) [p={p} threads={threads}]", g.name);
                }
            }
        }
    }
}

/// A self-loop on every vertex (never a neighbour of its vertex) among random edges:
/// every block has vertices whose own number, counted from the block's start, is also
/// a neighbour's.
#[test]
fn lcc_self_loops_in_every_block_are_no_neighbours() {
    let mut g = random_graph(6, 9, 24);
    g.edges.extend((0..g.n).map(|v| (v, v)));
    let want = reference_lcc(g.n, &g.edges);
    assert!(want.iter().filter(|&&c| c > 0.0 && c < 1.0).count() > 2, "a useful test graph");
    for p in PS {
        for threads in THREADS {
            let got = run_numbered(p, g.n, &g.edges, move |ctx, input| lcc_spmd(ctx, input, threads));
            for (v, (x, y)) in got.iter().zip(&want).enumerate() {
                assert!((x - y).abs() <= 1e-12, "LCC of vertex {v}: {x}, want {y} [p={p} threads={threads}]");
            }
        }
    }
}
