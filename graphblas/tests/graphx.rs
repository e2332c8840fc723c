//! GraphFrames' kernels on a keyed graph (`dist::Graph`, issue 26): GraphX PageRank
//! (plain, personalized, several sources at once) against a plain sequential model of
//! GraphX's iteration, and the hop distances to landmarks against a breadth-first search
//! over the reversed (or undirected) edges; graphs with dangling vertices, self-loops,
//! duplicate edges and isolated vertices (given as vertex ids), 1-4 processes, 1 and 2
//! threads; and the refusals of bad sources, landmarks and parameters.

mod common;

use common::*;
use graphblas::dist::{DistError, Graph as Loaded, GraphxPageRankConfig, GraphxRanks, KeyedEdges, KeyedValues, VertexId, VertexIds};

/// The id of vertex number v: spread out and negative, so that the numbering matters.
fn id(v: usize) -> i64 {
    7 * v as i64 - 20
}

/// Process q's part of `g`: every p-th edge from q (duplicates kept), and every vertex
/// as a vertex id on the process `v % p` (so isolated vertices exist).
fn part(g: &Graph, q: usize, p: usize) -> KeyedEdges {
    let ends = g.edges.iter().enumerate().filter(|(k, _)| k % p == q).flat_map(|(_, &(u, v))| [id(u), id(v)]).collect();
    let vertices = (0..g.n).filter(|v| v % p == q).map(id).collect();
    KeyedEdges { ends: VertexIds::Integral(ends), vertices: VertexIds::Integral(vertices), weights: None }
}

/// The graphs: random ones with dangling and isolated vertices (more vertices than the
/// edges name) and self-loops, a star into a dangling hub, a lone self-loop beside an
/// isolated vertex, a path.
fn graphs() -> Vec<Graph> {
    let mut g = random_graph(11, 60, 150);
    g.edges.extend([(3, 3), (5, 5), (7, 8), (7, 8)]);
    vec![
        g,
        random_graph(12, 200, 300),
        Graph::new("star into a dangling hub", 12, &(1..12).map(|i| (i, 0)).collect::<Vec<_>>()),
        Graph::new("a self-loop and an isolated vertex", 2, &[(0, 0)]),
        Graph::new("path", 5, &[(0, 1), (1, 2), (2, 3), (3, 4)]),
    ]
}

/// GraphX's PageRank, sequentially, on the distinct edges of `g`: plain without
/// `sources`, else one personalized vector per source. Returns the ranks (vertex by
/// vertex, `max(1, sources)` each), the iterations, the last largest change, converged.
fn model(g: &Graph, sources: &[usize], reset: f64, max_iters: usize, tol: f64) -> (Vec<f64>, usize, f64, bool) {
    let mut edges = g.edges.clone();
    edges.sort_unstable();
    edges.dedup();
    let n = g.n;
    let mut outdeg = vec![0usize; n];
    for &(u, _) in &edges {
        outdeg[u] += 1;
    }
    let vectors: Vec<Option<usize>> = if sources.is_empty() { vec![None] } else { sources.iter().map(|&s| Some(s)).collect() };
    let mut out = vec![vec![0.0; n]; vectors.len()];
    let (mut iterations, mut residual, mut converged) = (0, 0.0, false);
    for (k, source) in vectors.iter().enumerate() {
        let mut rank: Vec<f64> = (0..n).map(|v| if source.is_none_or(|s| s == v) { 1.0 } else { 0.0 }).collect();
        let mut change = 0.0;
        let mut it = 0;
        while it < max_iters {
            let mut sum = vec![0.0; n];
            for &(u, v) in &edges {
                sum[v] += rank[u] / outdeg[u] as f64;
            }
            let next: Vec<f64> =
                (0..n).map(|v| if source.is_none_or(|s| s == v) { reset } else { 0.0 } + (1.0 - reset) * sum[v]).collect();
            change = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            rank = next;
            it += 1;
            if tol > 0.0 && change < tol {
                break;
            }
        }
        let total: f64 = rank.iter().sum();
        out[k] = rank.iter().map(|r| if source.is_some() { r / total } else { r * n as f64 / total }).collect();
        // Run together, the vectors stop once every one of them changed less than tol,
        // and the change is the largest of them all: the model runs each vector alone,
        // which is the same with fixed iterations (the tests run several sources with a
        // tolerance apart).
        iterations = iterations.max(it);
        residual = f64::max(residual, change);
        converged = tol > 0.0 && residual < tol;
    }
    let w = vectors.len();
    let ranks = (0..n * w).map(|i| out[i % w][i / w]).collect();
    (ranks, iterations, residual, converged)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// Every process's share of a run put together: ids all in order, blocks in pid order.
fn together<T: Clone>(outs: &[&KeyedValues<Vec<T>>], n: usize, w: usize) -> Vec<T> {
    let mut ids = Vec::new();
    let mut values = Vec::new();
    for r in outs {
        let VertexIds::Integral(i) = &r.ids else { panic!("integral ids") };
        assert_eq!(r.values.len(), w * i.len());
        ids.extend_from_slice(i);
        values.extend_from_slice(&r.values);
    }
    assert_eq!(ids, (0..n).map(id).collect::<Vec<_>>(), "every vertex once, ascending, blocks in pid order");
    values
}

/// Runs `f` on the graph loaded on p processes.
fn on_graph<T: Send + 'static>(g: &Graph, p: u32, f: impl Fn(&mut lpf::Context, &Loaded) -> T + Sync + Send + 'static) -> Vec<T> {
    let g = Graph { name: g.name.clone(), n: g.n, edges: g.edges.clone() };
    run_all(shm, p, LIMIT, move |ctx| {
        let loaded = Loaded::load(ctx, part(&g, ctx.pid() as usize, p as usize), 1).unwrap();
        f(ctx, &loaded)
    })
}

/// GraphX PageRank equals the model: plain, personalized by one source, three and five
/// sources together; a fixed number of iterations and a tolerance; on 1-4 processes with 1 and 2
/// threads; the same iterations, convergence and (close) residual everywhere.
#[test]
fn graphx_pagerank_equals_the_sequential_model() {
    for g in graphs() {
        let n = g.n;
        // None, one, three (fewer on small graphs) and five (the update's loop for any
        // width rather than a fixed one).
        let three = [0, n / 2, n - 1].into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().rev().collect();
        let source_lists: Vec<Vec<usize>> = vec![vec![], vec![n - 1], three, (0..n.min(5)).rev().collect()];
        // (reset probability, max iterations, tol): fixed iterations, then a tolerance
        // with a cap; the extremes of the reset probability.
        let settings = [(0.15, 10, 0.0), (0.15, 100, 1e-6), (0.3, 5, 0.0), (1.0, 3, 0.0), (0.0, 4, 0.0)];
        for sources in &source_lists {
            for &(reset, max_iters, tol) in &settings {
                if sources.len() > 1 && tol > 0.0 {
                    continue; // the model runs each vector alone (see `model`); below.
                }
                let (want, iterations, residual, converged) = model(&g, sources, reset, max_iters, tol);
                for p in 1..=4u32 {
                    for threads in [1, 2] {
                        let what = format!("{} on {p} processes, {threads} threads, sources {sources:?}, reset {reset}, {max_iters} iterations, tol {tol}", g.name);
                        let ids: Vec<VertexId> = sources.iter().map(|&s| VertexId::Integral(id(s))).collect();
                        let cfg = GraphxPageRankConfig { reset_probability: reset, tol, max_iters };
                        let outs = on_graph(&g, p, move |ctx, loaded| loaded.graphx_pagerank(ctx, &ids, &cfg, threads, &mut |_| {}).unwrap());
                        let w = sources.len().max(1);
                        let got = together(&outs.iter().map(|r| &r.ranks).collect::<Vec<_>>(), n, w);
                        let all_close = got.iter().zip(&want).all(|(a, b)| close(*a, *b) || (a.is_nan() && b.is_nan()));
                        assert!(all_close, "{what}:\n got {got:?}\nwant {want:?}");
                        for r in &outs {
                            let GraphxRanks { ranks, width, residual: res, converged: conv } = r;
                            assert_eq!((ranks.rounds, *width, *conv), (iterations, w, converged), "{what}");
                            assert!(close(*res, residual), "{what}: residual {res} vs {residual}");
                            assert_eq!(res.to_bits(), outs[0].residual.to_bits(), "{what}: the same residual everywhere");
                        }
                    }
                }
            }
        }
    }
}

/// Three sources with a tolerance: together they stop once every vector changed less
/// than tol, so each vector is the model's run for the iterations the slowest needs.
#[test]
fn parallel_personalized_pagerank_with_a_tolerance_runs_until_every_vector_converged() {
    let g = random_graph(21, 80, 200);
    let sources = [5, 40, 79];
    let tol = 1e-5;
    let slowest = sources.iter().map(|&s| model(&g, &[s], 0.15, 200, tol).1).max().unwrap();
    let (want, ..) = model(&g, &sources, 0.15, slowest, 0.0);
    for p in [1, 3] {
        let ids: Vec<VertexId> = sources.iter().map(|&s| VertexId::Integral(id(s))).collect();
        let cfg = GraphxPageRankConfig { reset_probability: 0.15, tol, max_iters: 200 };
        let outs = on_graph(&g, p, move |ctx, loaded| loaded.graphx_pagerank(ctx, &ids, &cfg, 2, &mut |_| {}).unwrap());
        let got = together(&outs.iter().map(|r| &r.ranks).collect::<Vec<_>>(), g.n, 3);
        assert!(got.iter().zip(&want).all(|(a, b)| close(*a, *b)), "{p} processes");
        assert!(outs.iter().all(|r| r.ranks.rounds == slowest && r.converged && r.residual < tol));
    }
}

/// The hops from every vertex to each landmark: a breadth-first search from the
/// landmark over the reversed edges (undirected: over both); landmarks that some or all
/// vertices do not reach (an isolated one), 1-4 processes, 1 and 2 threads.
#[test]
fn landmark_distances_equal_a_bfs_over_the_reversed_edges() {
    for g in graphs() {
        let n = g.n;
        let landmarks: Vec<usize> = [n - 1, 0, n / 3].into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().rev().collect();
        for undirected in [false, true] {
            let reversed: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (v, u)).collect();
            let walked = if undirected { [reversed.clone(), g.edges.clone()].concat() } else { reversed };
            let each: Vec<Vec<i64>> = landmarks.iter().map(|&l| reference_bfs(n, &walked, l)).collect();
            let w = landmarks.len();
            let want: Vec<i64> = (0..n * w).map(|i| each[i % w][i / w]).collect();
            let levels = each.iter().map(|d| d.iter().filter(|&&x| x != UNREACHABLE).max().unwrap() + 1).max().unwrap() as usize;
            for p in 1..=4u32 {
                for threads in [1, 2] {
                    let ids: Vec<VertexId> = landmarks.iter().map(|&l| VertexId::Integral(id(l))).collect();
                    let outs = on_graph(&g, p, move |ctx, loaded| loaded.landmark_distances(ctx, &ids, undirected, threads, &mut |_| {}).unwrap());
                    let got = together(&outs.iter().collect::<Vec<_>>(), n, w);
                    assert_eq!(got, want, "{} on {p} processes, {threads} threads, undirected {undirected}", g.name);
                    assert!(outs.iter().all(|r| r.rounds == levels), "{}: rounds", g.name);
                }
            }
        }
    }
}

/// The same error on every process, returned.
fn one_error<T: std::fmt::Debug>(outs: Vec<Result<T, DistError>>) -> String {
    let first = outs[0].as_ref().err().unwrap_or_else(|| panic!("no error: {outs:?}")).to_string();
    for r in &outs {
        assert_eq!(r.as_ref().err().map(|e| e.to_string()), Some(first.clone()));
    }
    first
}

/// Sources given twice, sources that are no vertex (the first in the list named), no
/// landmark at all, a reset probability outside [0, 1]: the error naming them, on every
/// process.
#[test]
fn bad_sources_landmarks_and_parameters_are_named_everywhere() {
    let g = Graph::new("path", 5, &[(0, 1), (1, 2), (2, 3), (3, 4)]);
    let outs = on_graph(&g, 3, |ctx, loaded| {
        let i = VertexId::Integral;
        let cfg = GraphxPageRankConfig { reset_probability: 0.15, tol: 0.0, max_iters: 3 };
        let mut pr = |sources: &[VertexId], cfg: &GraphxPageRankConfig| loaded.graphx_pagerank(ctx, sources, cfg, 1, &mut |_| {}).map(|_| ());
        let twice = pr(&[i(id(1)), i(id(2)), i(id(1))], &cfg);
        let missing = pr(&[i(id(1)), i(3), i(id(1)), i(4)], &cfg);
        let kind = pr(&[VertexId::Bytes(b"x".to_vec())], &cfg);
        let reset = pr(&[], &GraphxPageRankConfig { reset_probability: 1.5, ..cfg });
        let nan = pr(&[], &GraphxPageRankConfig { reset_probability: f64::NAN, ..cfg });
        let mut paths = |landmarks: &[VertexId]| loaded.landmark_distances(ctx, landmarks, false, 1, &mut |_| {}).map(|_| ());
        (twice, missing, kind, reset, nan, paths(&[]), paths(&[i(id(4)), i(id(4))]), paths(&[i(5)]))
    });
    let errors = |f: &dyn Fn(&(_, _, _, _, _, _, _, _)) -> Result<(), DistError>| one_error(outs.iter().map(f).collect());
    assert_eq!(errors(&|o| o.0.clone()), "the PageRank source list names -13 twice");
    assert_eq!(errors(&|o| o.1.clone()), "the PageRank source 3 is not a vertex of the graph");
    assert_eq!(errors(&|o| o.2.clone()), "the PageRank source 'x' is a byte string, but the graph's vertex ids are integers");
    assert_eq!(errors(&|o| o.3.clone()), "reset_probability must be in [0, 1], got 1.5");
    assert_eq!(errors(&|o| o.4.clone()), "reset_probability must be in [0, 1], got NaN");
    assert_eq!(errors(&|o| o.5.clone()), "shortest paths needs at least one landmark, got none");
    assert_eq!(errors(&|o| o.6.clone()), "the shortest paths landmark list names 8 twice");
    assert_eq!(errors(&|o| o.7.clone()), "the shortest paths landmark 5 is not a vertex of the graph");
}
