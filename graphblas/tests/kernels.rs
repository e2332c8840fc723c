//! Distributed BFS, WCC, SSSP and CDLP against references written here (a plain queue
//! BFS, a union-find, a binary-heap Dijkstra and a label-propagation loop over the edge
//! list, not the crate's code):
//! every input path, p = 1..4, 1 and 2 threads, both BFS directions forced and chosen;
//! exact equality (SSSP weights are integer-valued, so every sum is exact); LCC (from its
//! definition, with sets) and Graphalytics PageRank (plain power iteration) within 1e-12;
//! all six also on the TCP and hybrid engines in-process (`every_kernel_on_tcp_and_hybrid`). Bad input
//! (absent source, missing or malformed file, empty graph; for SSSP negative or NaN
//! weights and inputs without weights) is the same clear error on every process. Every run is bounded by the launcher's watchdog (`run_all`).
//! The two slowest sweeps (`bfs_deep_and_wide_graphs_from_block_boundaries`,
//! `sssp_delta_stepping_distributed_against_dijkstra`) run whole with the feature
//! `full-sweep` (the test command's), else at p = 2 and 3 with 2 threads.

mod common;

use common::*;
use graphblas::algorithms;
use graphblas::dist::{bfs_spmd_observed, bfs_spmd_with, cdlp_spmd, lcc_spmd, pagerank_spmd, sssp_spmd, sssp_spmd_with, wcc_spmd, DistError, Input, Measure};
use graphblas::kron::KronParams;
use graphblas::{pagerank, Direction, DupPolicy, Matrix, PageRankConfig};

const PS: [u32; 4] = [1, 2, 3, 4];
const THREADS: [usize; 2] = [1, 2];

/// Whether the slowest sweeps run whole (feature `full-sweep`, which the test command
/// sets) or their subset: p = 2 and 3 (an even and an uneven block split), 2 threads.
const FULL: bool = cfg!(feature = "full-sweep");

/// The process counts and thread counts of a sweep: all of them, or the subset.
fn sweep_ps() -> &'static [u32] {
    if FULL { &PS } else { &[2, 3] }
}
fn sweep_threads() -> &'static [usize] {
    if FULL { &THREADS } else { &[2] }
}

/// A graph on the vertices `ids` (ascending; `ids[k]` the id of vertex k) with every
/// input that keeps these ids, each as a fresh `Input`.
struct Case {
    name: String,
    n: usize,
    edges: Vec<(usize, usize)>,
    ids: Vec<u64>,
    input: Box<dyn Fn() -> Input + Sync + Send>,
}

/// The input paths of `g`: MatrixMarket (declares 1..=n), binary (declares 0..n), an
/// edge list and in-memory edges with sparse u64 ids (both: only the ids some edge
/// names, relabelled densely).
fn cases(dir: &TempDir, tag: &str, g: &Graph) -> Vec<Case> {
    let mut out = Vec::new();
    let declared = |ids: Vec<u64>, name: &str, input: Box<dyn Fn() -> Input + Sync + Send>| Case {
        name: format!("{} ({name})", g.name),
        n: g.n,
        edges: g.edges.clone(),
        ids,
        input,
    };
    let mtx = dir.file(&format!("{tag}.mtx"), g.mtx_pattern().as_bytes());
    out.push(declared((1..=g.n as u64).collect(), "mtx", Box::new(move || Input::file(mtx.clone()))));
    let bin = dir.path(&format!("{tag}.bin"));
    g.binary(&bin);
    out.push(declared((0..g.n as u64).collect(), "bin", Box::new(move || Input::file(bin.clone()))));
    if !g.edges.is_empty() {
        // Only named vertices exist: renumber the edges onto them.
        let named = g.named();
        let k = |v: usize| named.binary_search(&(v as u64)).unwrap();
        let edges: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (k(u), k(v))).collect();
        let el = dir.file(&format!("{tag}.el"), g.edge_list().as_bytes());
        out.push(Case { name: format!("{} (edges)", g.name), n: named.len(), edges: edges.clone(), ids: named.clone(), input: Box::new(move || Input::file(el.clone())) });
        let sparse = |v: u64| (1u64 << 40) + v * 1_000_003;
        let given: Vec<(u64, u64)> = g.edges.iter().map(|&(u, v)| (sparse(u as u64), sparse(v as u64))).collect();
        out.push(Case {
            name: format!("{} (in-memory, sparse ids)", g.name),
            n: named.len(),
            edges,
            ids: named.iter().map(|&v| sparse(v)).collect(),
            input: Box::new(move || Input::Edges(given.clone())),
        });
    }
    out
}

/// Several components, isolated vertices, self-loops and duplicate edges.
fn graphs() -> Vec<Graph> {
    let mut gs = special_graphs();
    let mut multi = random_graph(7, 60, 45);
    multi.edges.extend([(3, 3), (3, 3), (10, 11), (10, 11), (59, 0)]);
    multi.name = "random, many components".into();
    gs.push(multi);
    // Sparse enough that the first levels push, dense enough that later ones pull.
    gs.push(random_graph(11, 1500, 2600));
    gs
}

/// A few sources per graph: the first vertex of an edge, the largest vertex, an isolated one.
fn sources(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut s = vec![edges.first().map_or(0, |e| e.0), n - 1];
    let mut touched = vec![false; n];
    for &(u, v) in edges {
        touched[u] = true;
        touched[v] = true;
    }
    s.extend(touched.iter().position(|&t| !t));
    s.sort_unstable();
    s.dedup();
    s
}

fn check_bfs(c: &Case, engines: &[(&'static str, Launcher)]) {
    for s in sources(c.n, &c.edges) {
        let want = reference_bfs(c.n, &c.edges, s);
        for &(engine, launch) in engines {
            for p in PS {
                for threads in THREADS {
                    // The choice everywhere; each direction forced once per p and graph
                    // (on the MatrixMarket input: the directions do not see the format).
                    let forced: &[Direction] = if threads == 1 && c.name.ends_with("(mtx)") {
                        &[Direction::Auto, Direction::Push, Direction::Pull]
                    } else {
                        &[Direction::Auto]
                    };
                    for &direction in forced {
                        let (input, source) = ((c.input)(), c.ids[s]);
                        let res = run_all(launch, p, LIMIT, move |ctx| bfs_spmd_with(ctx, input.clone(), source, threads, direction));
                        let got = gather(&res, &c.ids);
                        assert_eq!(got, want, "BFS of {} from {source} [{engine} p={p} threads={threads} {direction:?}]", c.name);
                    }
                }
            }
        }
    }
}

fn check_wcc(c: &Case, engines: &[(&'static str, Launcher)]) {
    let want: Vec<u64> = reference_wcc(c.n, &c.edges).into_iter().map(|r| c.ids[r]).collect();
    for &(engine, launch) in engines {
        for p in PS {
            for threads in THREADS {
                let input = (c.input)();
                let res = run_all(launch, p, LIMIT, move |ctx| wcc_spmd(ctx, input.clone(), threads));
                assert_eq!(gather(&res, &c.ids), want, "WCC of {} [{engine} p={p} threads={threads}]", c.name);
            }
        }
    }
}

fn check_cdlp(c: &Case, engines: &[(&'static str, Launcher)]) {
    for iterations in [1, 10] {
        let want: Vec<u64> = reference_cdlp(c.n, &c.edges, iterations).into_iter().map(|r| c.ids[r]).collect();
        for &(engine, launch) in engines {
            for p in PS {
                for threads in THREADS {
                    let input = (c.input)();
                    let res = run_all(launch, p, LIMIT, move |ctx| cdlp_spmd(ctx, input.clone(), iterations, threads));
                    assert_eq!(gather(&res, &c.ids), want, "CDLP of {} ({iterations} iterations) [{engine} p={p} threads={threads}]", c.name);
                }
            }
        }
    }
}

/// Within 1e-12 of `want`, vertex by vertex.
fn assert_within(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (v, (x, y)) in got.iter().zip(want).enumerate() {
        assert!((x - y).abs() <= 1e-12, "{what}: vertex {v}: {x} vs {y}");
    }
}

fn check_lcc(c: &Case, engines: &[(&'static str, Launcher)]) {
    let want = reference_lcc(c.n, &c.edges);
    for &(engine, launch) in engines {
        for p in PS {
            for threads in THREADS {
                let input = (c.input)();
                let res = run_all(launch, p, LIMIT, move |ctx| lcc_spmd(ctx, input.clone(), threads));
                assert_within(&gather(&res, &c.ids), &want, &format!("LCC of {} [{engine} p={p} threads={threads}]", c.name));
            }
        }
    }
}

/// The graphs of the other kernels plus a dense one (many triangles, reciprocal edges,
/// self-loops, duplicates) and an undirected one (every edge both ways).
fn lcc_graphs() -> Vec<Graph> {
    let mut gs = graphs();
    let mut dense = random_graph(5, 40, 400);
    dense.edges.extend([(1, 1), (2, 3), (2, 3), (3, 2)]);
    dense.name = "dense random, reciprocal edges".into();
    gs.push(dense);
    let half = random_graph(9, 50, 150);
    let mut undirected = Graph::new("undirected", 50, &[]);
    undirected.edges = half.edges.iter().flat_map(|&(u, v)| [(u, v), (v, u)]).collect();
    gs.push(undirected);
    gs
}

/// Graphalytics PageRank (fixed iterations) against plain power iteration: every
/// process ran exactly the iterations asked (never fewer: a tolerance stop would end
/// these graphs' runs early, some after the first iteration with a zero change).
fn check_pr_fixed(c: &Case, engines: &[(&'static str, Launcher)]) {
    for iterations in [1, 50] {
        let want = reference_pagerank_fixed(c.n, &c.edges, 0.85, iterations);
        for &(engine, launch) in engines {
            for p in PS {
                for threads in THREADS {
                    let input = (c.input)();
                    let cfg = PageRankConfig { threads, ..PageRankConfig::fixed_iterations(iterations) };
                    let res = run_all(launch, p, LIMIT, move |ctx| pagerank_spmd(ctx, input.clone(), &cfg));
                    let (got, ran) = assemble(&res, &c.ids);
                    let what = format!("PR of {} ({iterations} iterations) [{engine} p={p} threads={threads}]", c.name);
                    assert_eq!(ran, iterations, "{what}: iterations run");
                    assert_within(&got, &want, &what);
                }
            }
        }
    }
}

#[test]
fn pr_fixed_iterations_every_input_path_against_power_iteration() {
    let dir = TempDir::new("kpr");
    for (k, g) in graphs().iter().enumerate() {
        for c in cases(&dir, &format!("g{k}"), g) {
            check_pr_fixed(&c, &launchers());
        }
    }
}

#[test]
fn lcc_every_input_path_against_the_definition() {
    let dir = TempDir::new("klcc");
    for (k, g) in lcc_graphs().iter().enumerate() {
        for c in cases(&dir, &format!("g{k}"), g) {
            check_lcc(&c, &launchers());
        }
    }
}

/// A MatrixMarket `symmetric` file is an undirected graph: LCC is the usual
/// coefficient, 2e / (d (d − 1)) with e the undirected edges among the d neighbours,
/// computed here on the unordered pairs.
#[test]
fn lcc_of_a_symmetric_file_is_the_undirected_coefficient() {
    use std::collections::BTreeSet;
    let dir = TempDir::new("klccsym");
    let half = random_graph(13, 45, 160);
    let pairs: BTreeSet<(usize, usize)> = half.edges.iter().map(|&(u, v)| (u.max(v), u.min(v))).collect();
    let mut text = format!("%%MatrixMarket matrix coordinate pattern symmetric\n{0} {0} {1}\n", half.n, pairs.len());
    for &(i, j) in &pairs {
        text.push_str(&format!("{} {}\n", i + 1, j + 1));
    }
    let file = dir.file("sym.mtx", text.as_bytes());
    let nbrs: Vec<BTreeSet<usize>> =
        (0..half.n).map(|v| pairs.iter().filter(|&&(i, j)| i != j && (i == v || j == v)).map(|&(i, j)| i + j - v).collect()).collect();
    let want: Vec<f64> = (0..half.n)
        .map(|v| {
            let d = nbrs[v].len();
            let e = pairs.iter().filter(|&&(i, j)| i != j && nbrs[v].contains(&i) && nbrs[v].contains(&j)).count();
            if d < 2 { 0.0 } else { 2.0 * e as f64 / (d * (d - 1)) as f64 }
        })
        .collect();
    assert!(want.iter().any(|&c| c > 0.0 && c < 1.0), "a useful test graph");
    let ids: Vec<u64> = (1..=half.n as u64).collect();
    for p in PS {
        for threads in THREADS {
            let f = file.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| lcc_spmd(ctx, Input::file(f.clone()), threads));
            assert_within(&gather(&res, &ids), &want, &format!("LCC of a symmetric file [p={p} threads={threads}]"));
        }
    }
}

#[test]
fn cdlp_every_input_path_against_a_plain_loop() {
    let dir = TempDir::new("kcdlp");
    for (k, g) in graphs().iter().enumerate() {
        for c in cases(&dir, &format!("g{k}"), g) {
            check_cdlp(&c, &launchers());
        }
    }
}

#[test]
fn bfs_every_input_path_against_a_queue() {
    let dir = TempDir::new("kbfs");
    for (k, g) in graphs().iter().enumerate() {
        for c in cases(&dir, &format!("g{k}"), g) {
            check_bfs(&c, &launchers());
        }
    }
}

#[test]
fn wcc_every_input_path_against_union_find() {
    let dir = TempDir::new("kwcc");
    for (k, g) in graphs().iter().enumerate() {
        for c in cases(&dir, &format!("g{k}"), g) {
            check_wcc(&c, &launchers());
        }
    }
}

/// Graphs for WCC's special paths, numbered at random so that every process's block
/// holds part of each component: a giant component with many small ones and isolated
/// vertices; vertices joined to the giant component only as the third or later
/// out-neighbour of a giant vertex (so only by their in-edges, the giant vertices being
/// skipped) and small components joined only through a third neighbour; a path and a
/// star, edges in both directions, whose links are split among the processes (the
/// combined forests lose links and the passes repeat).
fn wcc_graphs() -> Vec<Graph> {
    let shuffled = |name: &str, n: usize, edges: &[(usize, usize)], seed: u64| {
        let perm = graphblas::prng::permutation(n, seed);
        let renamed: Vec<(usize, usize)> = edges.iter().map(|&(u, v)| (perm[u] as usize, perm[v] as usize)).collect();
        Graph::new(name, n, &renamed)
    };
    let mut rng = graphblas::prng::Xoshiro256::new(17);
    let mut below = |k: usize| rng.below(k as u64) as usize;
    // Giant: 0..1000 (a random tree, edges either way, and 1500 more edges); triangles
    // and pairs on 1000..1600; 1600..2000 isolated.
    let mut giant: Vec<(usize, usize)> = (1..1000).map(|v| if v % 3 == 0 { (below(v), v) } else { (v, below(v)) }).collect();
    giant.extend((0..1500).map(|_| (below(1000), below(1000))));
    for t in (1000..1600).step_by(3) {
        giant.push((t + 1, t));
        if t % 2 == 0 {
            giant.push((t + 1, t + 2));
        }
    }
    // Giant: 0..200 (a path out of 0, with 0 -> 1, 0 -> 2 first); each 10k < 200
    // also points at 200 + 5k, its third or later out-neighbour, which has no
    // out-edge; 200 + 5k + 1 points at 200 + 5k + 2, 200 + 5k + 3 and, third, at
    // 200 + 5k + 4.
    let mut late: Vec<(usize, usize)> = (1..200).map(|v| (v - 1, v)).collect();
    late.push((0, 2));
    for k in 0..20 {
        let (g, w) = (10 * k, 200 + 5 * k);
        late.extend([(g, g / 3), (g, g / 2 + 1), (g, w), (w + 1, w + 2), (w + 1, w + 3), (w + 1, w + 4)]);
    }
    let n_path = 500;
    let path: Vec<(usize, usize)> = (1..n_path).map(|v| if v % 2 == 0 { (v - 1, v) } else { (v, v - 1) }).collect();
    let n_star = 60;
    let star: Vec<(usize, usize)> = (0..n_star - 1).map(|v| if v % 2 == 0 { (v, n_star - 1) } else { (n_star - 1, v) }).collect();
    vec![
        shuffled("giant, small components and isolated vertices", 2000, &giant, 1),
        shuffled("joined only by in-edges or a third neighbour", 300, &late, 2),
        shuffled("path, edges split among the blocks", n_path, &path, 3),
        Graph::new("star, hub in the last block", n_star, &star),
    ]
}

#[test]
fn wcc_special_paths_on_every_engine() {
    let dir = TempDir::new("kwccspecial");
    let engines: [(&'static str, Launcher); 3] = [("shm", shm), ("tcp", tcp), ("hybrid", hybrid)];
    for (k, g) in wcc_graphs().iter().enumerate() {
        let want = reference_wcc(g.n, &g.edges);
        for threads in [1, 2, 3] {
            let a = Matrix::<bool>::from_edges(g.n, g.n, &g.edges).unwrap();
            let local: Vec<usize> = algorithms::wcc(&a, threads).unwrap().into_iter().map(|x| x as usize).collect();
            assert_eq!(local, want, "local WCC of {} [threads={threads}]", g.name);
        }
        for c in cases(&dir, &format!("w{k}"), g).into_iter().filter(|c| c.name.ends_with("(bin)")) {
            check_wcc(&c, &engines);
        }
    }
}

/// One process links every edge in one pass; with more, the path's links are split
/// among the processes, the first combined forest misses some, and the passes repeat
/// until one joins no trees.
#[test]
fn wcc_passes_repeat_only_when_the_processes_split_the_links() {
    let dir = TempDir::new("kwccrounds");
    let g = wcc_graphs().into_iter().find(|g| g.name.starts_with("path")).expect("the path");
    let bin = dir.path("path.bin");
    g.binary(&bin);
    for p in PS {
        for threads in THREADS {
            let f = bin.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| wcc_spmd(ctx, Input::file(f.clone()), threads));
            let rounds = res[0].as_ref().expect("WCC ran").rounds;
            assert_eq!(gather(&res, &(0..g.n as u64).collect::<Vec<_>>()), vec![0; g.n], "p={p} threads={threads}");
            if p == 1 {
                assert_eq!(rounds, 1, "threads={threads}");
            } else {
                assert!(rounds >= 2, "p={p} threads={threads}: {rounds} passes");
            }
            eprintln!("path p={p} threads={threads}: {rounds} passes");
        }
    }
}

#[test]
fn rmat_unweighted_kernels() {
    let params = KronParams::graph500(9, 3);
    let g = kron_graph(&params);
    let c = Case { name: g.name.clone(), n: g.n, edges: g.edges.clone(), ids: g.declared(), input: Box::new(move || Input::Rmat(params)) };
    check_wcc(&c, &launchers());
    check_bfs(&c, &launchers());
    check_cdlp(&c, &launchers());
    check_lcc(&c, &launchers());
    check_pr_fixed(&c, &launchers());
}

/// BFS on graphs that take every path of the level loop, from the binary input: deep
/// ones (a path: one vertex a level; a path with a hub midway: push, pull around the
/// hub, push again) and wide ones (a star both ways and R-MAT, with blocks of more than
/// 16,384 rows so that levels run on two threads), from the first vertex, the last, the
/// first edge's source and the first vertex of every block (n not a multiple of p:
/// uneven blocks). On shm every direction, forced and chosen, at p = 1..4 and threads 1,
/// 2; on TCP and hybrid the chosen one, threads 2, on the hub path and the star.
#[test]
fn bfs_deep_and_wide_graphs_from_block_boundaries() {
    let dir = TempDir::new("kbfsdeep");
    let path = Graph::new("path", 601, &(0..600).map(|v| (v, v + 1)).collect::<Vec<_>>());
    let mut hub_edges: Vec<(usize, usize)> = (0..700).map(|v| (v, v + 1)).collect();
    hub_edges.extend((0..700).step_by(3).map(|v| (350, v)));
    let hub = Graph::new("path with a hub midway", 701, &hub_edges);
    let star = Graph::new("star both ways", 70_001, &(1..70_001).flat_map(|v| [(0, v), (v, 0)]).collect::<Vec<_>>());
    let rmat = kron_graph(&KronParams::graph500(15, 7));
    let network: [(&'static str, Launcher); 2] = [("tcp", tcp), ("hybrid", hybrid)];
    for (k, g) in [path, hub, star, rmat].iter().enumerate() {
        let file = dir.path(&format!("g{k}.bin"));
        g.binary(&file);
        let ids: Vec<u64> = (0..g.n as u64).collect();
        let on_network = g.name.contains("hub") || g.name.contains("star");
        for &p in sweep_ps() {
            let mut sources = vec![0, g.n - 1, g.edges[0].0];
            sources.extend((1..p as usize).map(|q| q * g.n / p as usize));
            sources.sort_unstable();
            sources.dedup();
            for s in sources {
                let want = reference_bfs(g.n, &g.edges, s);
                let mut runs: Vec<(&str, Launcher, usize, Direction)> = Vec::new();
                for &threads in sweep_threads() {
                    for direction in [Direction::Auto, Direction::Push, Direction::Pull] {
                        runs.push(("shm", shm, threads, direction));
                    }
                }
                if on_network {
                    runs.extend(network.iter().map(|&(name, launch)| (name, launch, 2, Direction::Auto)));
                }
                for (engine, launch, threads, direction) in runs {
                    let f = file.clone();
                    let res = run_all(launch, p, LIMIT, move |ctx| bfs_spmd_with(ctx, Input::file(f.clone()), s as u64, threads, direction));
                    let got = gather(&res, &ids);
                    assert_eq!(got, want, "BFS of {} from {s} [{engine} p={p} threads={threads} {direction:?}]", g.name);
                    let levels = want.iter().filter(|&&d| d != UNREACHABLE).max().unwrap() + 1;
                    assert_eq!(res[0].as_ref().unwrap().rounds, levels as usize, "{} from {s}: the levels", g.name);
                }
                // Every process observes each level with the size of its whole frontier.
                let f = file.clone();
                let seen = run_all(shm, p, LIMIT, move |ctx| {
                    let mut seen = Vec::new();
                    bfs_spmd_observed(ctx, Input::file(f.clone()), s as u64, 2, &mut |r| seen.push((r.round, r.value))).map(|_| seen)
                });
                let sizes: Vec<(usize, Measure)> = (0..)
                    .map(|d| (d as usize, want.iter().filter(|&&x| x == d).count() as u64))
                    .take_while(|&(_, c)| c > 0)
                    .map(|(d, c)| (d, Measure::Count(c)))
                    .collect();
                for r in seen {
                    assert_eq!(r.unwrap(), sizes, "{} from {s} at p={p}: the frontiers observed", g.name);
                }
            }
        }
    }
}

#[test]
fn local_kernels_match_the_references() {
    for g in lcc_graphs() {
        let a = Matrix::<bool>::from_edges(g.n, g.n, &g.edges).unwrap();
        let labels: Vec<usize> = algorithms::wcc(&a, 2).unwrap().into_iter().map(|x| x as usize).collect();
        assert_eq!(labels, reference_wcc(g.n, &g.edges), "{}", g.name);
        for iterations in [0, 1, 2, 10] {
            let labels: Vec<usize> = algorithms::cdlp(&a, iterations, 2).unwrap().into_iter().map(|x| x as usize).collect();
            assert_eq!(labels, reference_cdlp(g.n, &g.edges, iterations), "CDLP of {} ({iterations} iterations)", g.name);
        }
        assert_within(&algorithms::lcc(&a, 2).unwrap(), &reference_lcc(g.n, &g.edges), &format!("LCC of {}", g.name));
        for iterations in [0, 1, 30] {
            let cfg = PageRankConfig { threads: 2, ..PageRankConfig::fixed_iterations(iterations) };
            let got = pagerank(&a, &cfg).unwrap();
            assert_eq!(got.iterations, iterations, "PR of {}", g.name);
            assert_within(&got.ranks, &reference_pagerank_fixed(g.n, &g.edges, 0.85, iterations), &format!("PR of {} ({iterations} iterations)", g.name));
        }
        for s in 0..g.n.min(5) {
            assert_eq!(algorithms::bfs(&a, s, 2).unwrap(), reference_bfs(g.n, &g.edges, s), "{} from {s}", g.name);
        }
    }
}

/// Every process returns an error, all the same; returns it.
fn same_error<T: std::fmt::Debug>(res: &[Result<T, DistError>]) -> String {
    let first = res[0].as_ref().expect_err("an error").to_string();
    for r in res {
        assert_eq!(r.as_ref().expect_err("an error on every process").to_string(), first);
    }
    first
}

#[test]
fn bad_input_is_the_same_clear_error_everywhere() {
    let dir = TempDir::new("kbad");
    let g = Graph::new("small", 5, &[(0, 1), (1, 2), (3, 4)]);
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let bad = dir.file("bad.mtx", b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 x\n");
    let missing = dir.path("missing.el");
    for p in PS {
        // MatrixMarket ids are 1-based: 0 and 6 are no vertices; 5 is (isolated ones count).
        for (input, source) in [(&mtx, 0u64), (&mtx, 6), (&el, 5), (&el, 9)] {
            let f = input.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| bfs_spmd_with(ctx, Input::file(f.clone()), source, 1, Direction::Auto));
            let e = same_error(&res);
            assert!(e.contains(&format!("the BFS source {source} is not a vertex")) && e.contains(&input.display().to_string()), "{e}");
        }
        let f = mtx.clone();
        let ok = run_all(shm, p, LIMIT, move |ctx| bfs_spmd_with(ctx, Input::file(f.clone()), 5, 1, Direction::Auto));
        assert_eq!(gather(&ok, &[1, 2, 3, 4, 5]), vec![UNREACHABLE, UNREACHABLE, UNREACHABLE, UNREACHABLE, 0]);
        for (file, what) in [(&bad, format!("{}:4:", bad.display())), (&missing, missing.display().to_string())] {
            let f = file.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| wcc_spmd(ctx, Input::file(f.clone()), 1));
            let e = same_error(&res);
            assert!(e.starts_with(&what), "{e}");
            let f = file.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| bfs_spmd_with(ctx, Input::file(f.clone()), 1, 2, Direction::Auto));
            assert!(same_error(&res).starts_with(&what));
        }
        let f = bad.clone();
        let res = run_all(shm, p, LIMIT, move |ctx| cdlp_spmd(ctx, Input::file(f.clone()), 10, 1));
        assert!(same_error(&res).starts_with(&format!("{}:4:", bad.display())));
        let f = mtx.clone();
        let cfg = PageRankConfig { alpha: 1.5, ..PageRankConfig::fixed_iterations(10) };
        let res = run_all(shm, p, LIMIT, move |ctx| pagerank_spmd(ctx, Input::file(f.clone()), &cfg));
        assert!(same_error(&res).contains("alpha must be in [0, 1], got 1.5"));
        let f = bad.clone();
        let res = run_all(shm, p, LIMIT, move |ctx| lcc_spmd(ctx, Input::file(f.clone()), 2));
        assert!(same_error(&res).starts_with(&format!("{}:4:", bad.display())));
        let empty = dir.file("empty.el", b"# no edges\n");
        let res = run_all(shm, p, LIMIT, move |ctx| wcc_spmd(ctx, Input::file(empty.clone()), 1));
        assert!(same_error(&res).contains("the graph has no vertices"));
    }
}

/// Graphs for SSSP: integer-valued weights (sums exact in any order, so distances
/// compare exactly), zero weights, duplicates of different weights (the lightest
/// counts), self-loops, isolated declared vertices, several components.
fn weighted_graphs() -> Vec<WeightedGraph> {
    let mixed = WeightedGraph {
        name: "mixed weighted".into(),
        n: 7,
        edges: vec![(0, 1, 3.0), (0, 1, 1.0), (0, 1, 2.0), (1, 1, 0.0), (1, 2, 0.0), (2, 0, 4.0), (2, 3, 2.0), (0, 4, 7.0), (6, 2, 1.0), (3, 4, 0.0), (4, 3, 0.0)],
    };
    let mut multi = random_graph(7, 60, 45);
    multi.edges.extend([(3, 3), (3, 3), (10, 11), (10, 11), (59, 0)]);
    let mut gs = vec![mixed, WeightedGraph::weigh(&multi, 1, 4), WeightedGraph::weigh(&random_graph(11, 1500, 2600), 2, 10)];
    gs.push(WeightedGraph { name: "five declared vertices, no edges".into(), n: 5, edges: vec![] });
    gs
}

/// One weighted input: its name, the expected vertex ids, the edges (as numbered in the
/// reference) and the file.
type WeightedCase = (String, Vec<u64>, Vec<(usize, usize, f64)>, std::path::PathBuf);

/// The weighted inputs of `g`: MatrixMarket integer and real (ids `1..=n` declared),
/// an edge list with a weight column (the ids its edges name), with their ids, edges
/// and input.
fn weighted_cases(dir: &TempDir, tag: &str, g: &WeightedGraph) -> Vec<WeightedCase> {
    let mut out = Vec::new();
    for field in ["integer", "real"] {
        let f = dir.file(&format!("{tag}-{field}.mtx"), g.mtx(field).as_bytes());
        out.push((format!("{} ({field} mtx)", g.name), (1..=g.n as u64).collect(), g.edges.clone(), f));
    }
    if !g.edges.is_empty() {
        let (ids, edges) = g.named();
        out.push((format!("{} (edges)", g.name), ids, edges, dir.file(&format!("{tag}.el"), g.edge_list().as_bytes())));
    }
    out
}

#[test]
fn sssp_every_weighted_input_against_dijkstra() {
    let dir = TempDir::new("ksssp");
    for (k, g) in weighted_graphs().iter().enumerate() {
        for (name, ids, edges, file) in weighted_cases(&dir, &format!("g{k}"), g) {
            check_sssp(&name, &ids, &edges, &file, &launchers());
        }
    }
}

/// SSSP from a few sources of the weighted input `file` against Dijkstra.
fn check_sssp(name: &str, ids: &[u64], edges: &[(usize, usize, f64)], file: &std::path::Path, engines: &[(&'static str, Launcher)]) {
    let n = ids.len();
    let plain: Vec<(usize, usize)> = edges.iter().map(|&(u, v, _)| (u, v)).collect();
    for s in sources(n, &plain) {
        let want = reference_sssp(n, edges, s);
        for &(engine, launch) in engines {
            for p in PS {
                for threads in THREADS {
                    let (f, source) = (file.to_path_buf(), ids[s]);
                    let res = run_all(launch, p, LIMIT, move |ctx| sssp_spmd(ctx, Input::file(f.clone()), source, threads));
                    assert_eq!(gather(&res, ids), want, "SSSP of {name} from {source} [{engine} p={p} threads={threads}]");
                }
            }
        }
    }
}

/// Every kernel on the network engines (TCP, hybrid), in-process, at p = 1..4 x
/// threads 1, 2, on the graph with isolated vertices, self-loops, duplicate edges,
/// many components and a dense cluster (for SSSP with weights 0..3), MatrixMarket input; a
/// source that is no vertex and a bad damping are the same error everywhere.
#[test]
fn every_kernel_on_tcp_and_hybrid() {
    let engines: [(&'static str, Launcher); 2] = [("tcp", tcp), ("hybrid", hybrid)];
    let dir = TempDir::new("knet");
    let mut g = graphs().into_iter().find(|g| g.name == "random, many components").expect("the graph");
    // A dense cluster: many triangles, some edges both ways, so LCC sees varied values.
    g.edges.extend((30..37).flat_map(|u| (30..37).filter(move |&v| u != v && (u * 7 + v) % 3 != 0).map(move |v| (u, v))));
    // The input paths do not depend on the engine (the shm tests take every one).
    for c in cases(&dir, "multi", &g).into_iter().filter(|c| c.name.ends_with("(mtx)")) {
        check_bfs(&c, &engines);
        check_wcc(&c, &engines);
        check_cdlp(&c, &engines);
        check_lcc(&c, &engines);
        check_pr_fixed(&c, &engines);
    }
    let w = WeightedGraph::weigh(&g, 1, 4);
    for (name, ids, edges, file) in weighted_cases(&dir, "wmulti", &w).into_iter().filter(|c| c.0.contains("integer")) {
        check_sssp(&name, &ids, &edges, &file, &engines);
    }
    let mtx = dir.file("small.mtx", Graph::new("small", 5, &[(0, 1), (1, 2), (3, 4)]).mtx_pattern().as_bytes());
    for &(_, launch) in &engines {
        for p in PS {
            let f = mtx.clone();
            let res = run_all(launch, p, LIMIT, move |ctx| bfs_spmd_with(ctx, Input::file(f.clone()), 9, 2, Direction::Auto));
            assert!(same_error(&res).contains("the BFS source 9 is not a vertex"));
            let f = mtx.clone();
            let cfg = PageRankConfig { alpha: -0.1, ..PageRankConfig::fixed_iterations(10) };
            let res = run_all(launch, p, LIMIT, move |ctx| pagerank_spmd(ctx, Input::file(f.clone()), &cfg));
            assert!(same_error(&res).contains("alpha must be in [0, 1]"));
        }
    }
}

#[test]
fn local_sssp_matches_dijkstra() {
    for g in weighted_graphs() {
        let t: Vec<(usize, usize, f64)> = g.edges.clone();
        let a = Matrix::from_triples(g.n, g.n, &t, DupPolicy::Min).unwrap();
        for s in 0..g.n.min(5) {
            for threads in THREADS {
                assert_eq!(algorithms::sssp(&a, s, threads).unwrap(), reference_sssp(g.n, &g.edges, s), "{} from {s}", g.name);
            }
        }
    }
}

/// Graphs for delta-stepping's special paths (weights are integers or halves and
/// quarters, so every sum is exact): weights spanning many bucket widths, zero-weight
/// edges and cycles (a vertex re-enters the current bucket), a long path (one bucket
/// after another), parallel edges of different weights, vertices the source does not
/// reach.
fn delta_graphs() -> Vec<WeightedGraph> {
    let spread = {
        let g = random_graph(5, 120, 420);
        let mut rng = graphblas::prng::Xoshiro256::new(9);
        // 0, small, and up to 2^10: from inside one bucket to hundreds of them.
        let edges = g.edges.iter().map(|&(u, v)| (u, v, (rng.below(11) as f64).exp2().floor() - 1.0 + rng.below(3) as f64 * 0.25)).collect();
        WeightedGraph { name: "weights over many deltas".into(), n: g.n, edges }
    };
    let zero = WeightedGraph {
        name: "zero weights and zero cycles".into(),
        n: 9,
        edges: vec![
            (0, 1, 0.0), (1, 2, 0.0), (2, 0, 0.0), (2, 3, 0.0), (3, 3, 0.0), (3, 4, 1.0), (4, 5, 0.0), (5, 4, 0.0),
            (5, 6, 0.0), (6, 4, 0.0), (0, 6, 5.0), (6, 7, 2.0), (1, 7, 3.0), (7, 1, 0.0),
        ],
    };
    // 0 -> 1 -> ... -> 299 alternating 1 and 0.5, a heavy shortcut 0 -> 299 (200) that
    // loses, a light one 0 -> 150 (3) that wins, and a tail 300..310 off the path.
    let mut path: Vec<(usize, usize, f64)> = (0..299).map(|k| (k, k + 1, if k % 2 == 0 { 1.0 } else { 0.5 })).collect();
    path.extend([(0, 299, 200.0), (0, 150, 3.0)]);
    path.extend((300..310).map(|k| (k, k + 1, 1.0)));
    let long = WeightedGraph { name: "long path".into(), n: 311, edges: path };
    let parallel = WeightedGraph {
        name: "parallel edges".into(),
        n: 6,
        edges: vec![(0, 1, 5.0), (0, 1, 2.0), (0, 1, 9.0), (1, 2, 3.0), (1, 2, 0.0), (0, 2, 2.5), (2, 3, 4.0), (2, 3, 4.0), (3, 4, 1.0), (3, 4, 0.25)],
    };
    vec![spread, zero, long, parallel]
}

/// The bucket widths tried: tiny (Dijkstra-like: a bucket per distance), small and
/// medium, huge and infinite (Bellman-Ford-like: one bucket), and the default.
const DELTAS: [Option<f64>; 6] = [Some(1e-6), Some(0.3), Some(4.0), Some(1e12), Some(f64::INFINITY), None];

/// Sources: the ones [`sources`] picks, and the vertices on both sides of every block
/// boundary at p = 2..4.
fn delta_sources(g: &WeightedGraph) -> Vec<usize> {
    let plain: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v, _)| (u, v)).collect();
    let mut s = sources(g.n, &plain);
    for p in 2..=4 {
        for q in 1..p {
            let start = q * g.n / p;
            s.extend([start - 1, start]);
        }
    }
    s.sort_unstable();
    s.dedup();
    s
}

#[test]
fn sssp_delta_stepping_against_dijkstra() {
    for g in delta_graphs() {
        let a = Matrix::from_triples(g.n, g.n, &g.edges, DupPolicy::Min).unwrap();
        for s in delta_sources(&g) {
            let want = reference_sssp(g.n, &g.edges, s);
            for delta in DELTAS {
                for threads in [1, 2, 4] {
                    assert_eq!(algorithms::sssp_with_delta(&a, s, threads, delta).unwrap(), want, "{} from {s}, delta {delta:?}, {threads} threads", g.name);
                }
            }
        }
    }
}

#[test]
fn sssp_delta_stepping_distributed_against_dijkstra() {
    for g in delta_graphs() {
        let ids: Vec<u64> = (0..g.n as u64).collect();
        let input = |g: &WeightedGraph, pid: usize, p: usize| {
            // Each process passes a share of the edges (the loader sends them to their owners).
            let mine: Vec<&(usize, usize, f64)> = g.edges.iter().skip(pid).step_by(p).collect();
            Input::WeightedNumberedEdges {
                n: g.n as u64,
                edges: mine.iter().map(|e| (e.0 as u64, e.1 as u64)).collect(),
                weights: mine.iter().map(|e| e.2).collect(),
            }
        };
        for s in delta_sources(&g) {
            let want = reference_sssp(g.n, &g.edges, s);
            for (engine, launch) in launchers() {
                // Every width on shm; the tiny, huge and default ones on the network engines
                // (the subset: tiny, infinite and default on shm, the default elsewhere).
                let deltas: &[Option<f64>] = match (engine == "shm", FULL) {
                    (true, true) => &DELTAS,
                    (false, true) => &[Some(1e-6), Some(1e12), None],
                    (true, false) => &[Some(1e-6), Some(f64::INFINITY), None],
                    (false, false) => &[None],
                };
                for &delta in deltas {
                    for &p in sweep_ps() {
                        for &threads in sweep_threads() {
                            let g2 = WeightedGraph { name: g.name.clone(), n: g.n, edges: g.edges.clone() };
                            let res = run_all(launch, p, LIMIT, move |ctx| {
                                let i = input(&g2, ctx.pid() as usize, p as usize);
                                sssp_spmd_with(ctx, i, s as u64, threads, delta, &mut |_| {})
                            });
                            assert_eq!(gather(&res, &ids), want, "{} from {s}, delta {delta:?} [{engine} p={p} threads={threads}]", g.name);
                        }
                    }
                }
            }
        }
    }
}

/// A superstep's progress: numbered from 1, the improvements summed over the
/// processes, the last superstep improving nothing; on a path of unit weights every
/// vertex improves once. A bucket width that is not a positive number is refused
/// everywhere.
#[test]
fn sssp_supersteps_and_delta_checks() {
    let n = 40;
    let edges: Vec<(u64, u64)> = (0..n - 1).map(|k| (k, k + 1)).collect();
    for p in PS {
        for delta in [Some(0.5), Some(3.0), None] {
            let e = edges.clone();
            let res = run_all(shm, p, LIMIT, move |ctx| {
                let mut seen = Vec::new();
                let me = ctx.pid() as usize;
                let mine: Vec<(u64, u64)> = e.iter().copied().skip(me).step_by(p as usize).collect();
                let w = vec![1.0; mine.len()];
                let input = Input::WeightedNumberedEdges { n, edges: mine, weights: w };
                let r = sssp_spmd_with(ctx, input, 0, 2, delta, &mut |x| seen.push((x.round, x.measure, x.value)))?;
                Ok::<_, DistError>((r.rounds, seen))
            });
            let (rounds, seen) = res[0].as_ref().unwrap().clone();
            for r in &res {
                assert_eq!(r.as_ref().unwrap(), &(rounds, seen.clone()), "p={p} delta {delta:?}: every process reports the same");
            }
            assert_eq!(seen.len(), rounds, "p={p} delta {delta:?}");
            assert!(seen.iter().enumerate().all(|(k, x)| x.0 == k + 1 && x.1 == "improved"), "p={p} delta {delta:?}: {seen:?}");
            let improved: u64 = seen.iter().map(|x| match x.2 { graphblas::dist::Measure::Count(c) => c, _ => panic!("a count") }).sum();
            assert_eq!(improved, n - 1, "p={p} delta {delta:?}: {seen:?}");
            assert_eq!(seen.last().unwrap().2, graphblas::dist::Measure::Count(0), "p={p} delta {delta:?}");
        }
        for bad in [0.0, -1.0, f64::NAN] {
            let res = run_all(shm, p, LIMIT, move |ctx| {
                sssp_spmd_with(ctx, Input::WeightedNumberedEdges { n: 2, edges: vec![(0, 1)], weights: vec![1.0] }, 0, 1, Some(bad), &mut |_| {})
            });
            assert!(same_error(&res).contains("delta must be > 0"), "p={p} delta {bad}");
        }
    }
    let a = Matrix::from_triples(2, 2, &[(0, 1, 1.0)], DupPolicy::Min).unwrap();
    assert!(algorithms::sssp_with_delta(&a, 0, 1, Some(0.0)).is_err());
}

#[test]
fn sssp_bad_input_is_the_same_clear_error_everywhere() {
    let dir = TempDir::new("ksssp-bad");
    let g = WeightedGraph { name: "small".into(), n: 5, edges: vec![(0, 1, 1.0), (1, 2, 2.0), (3, 4, 0.0)] };
    let mtx = dir.file("g.mtx", g.mtx("integer").as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let negative = dir.file("neg.el", b"0 1 1\n# a comment\n1 2 -2\n");
    let nan = dir.file("nan.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n2 3 nan\n");
    let pattern = dir.file("p.mtx", Graph::new("p", 3, &[(0, 1)]).mtx_pattern().as_bytes());
    let unweighted = dir.file("u.el", b"0 1\n1 2\n");
    let cases: Vec<(Input, u64, String)> = vec![
        (Input::file(mtx.clone()), 0, format!("{}: the SSSP source 0 is not a vertex", mtx.display())),
        (Input::file(mtx.clone()), 6, "the SSSP source 6 is not a vertex".into()),
        (Input::file(el.clone()), 5, format!("{}: the SSSP source 5 is not a vertex", el.display())),
        (Input::file(negative.clone()), 0, format!("{}:3: weight -2 is negative", negative.display())),
        (Input::file(nan.clone()), 1, format!("{}:4: weight NaN is negative or not a number", nan.display())),
        (Input::file(pattern.clone()), 1, format!("{}:1: SSSP needs edge weights", pattern.display())),
        (Input::file(unweighted.clone()), 0, format!("{}:1: missing weight", unweighted.display())),
        (Input::Rmat(KronParams::graph500(4, 1)), 0, "SSSP needs edge weights".into()),
        (Input::Edges(vec![(0, 1)]), 0, "SSSP needs edge weights".into()),
    ];
    for p in PS {
        for (input, source, says) in &cases {
            let (input, source) = (input.clone(), *source);
            let res = run_all(shm, p, LIMIT, move |ctx| sssp_spmd(ctx, input.clone(), source, 2));
            let e = same_error(&res);
            assert!(e.contains(says.as_str()), "p={p}: {e:?} should say {says:?}");
        }
        // The isolated declared vertex 5 is a vertex: a source reaching nothing.
        let f = mtx.clone();
        let ok = run_all(shm, p, LIMIT, move |ctx| sssp_spmd(ctx, Input::file(f.clone()), 5, 1));
        let inf = f64::INFINITY;
        assert_eq!(gather(&ok, &[1, 2, 3, 4, 5]), vec![inf, inf, inf, inf, 0.0]);
    }
}
