//! Distributed SCC, triangle count, k-core and MIS (issue 26) against sequential models
//! written here, not the crate's code: Tarjan's SCC (labels: the smallest member),
//! triangles by neighbour-set intersection, coreness by repeated peeling, and for MIS the
//! definition (independent and maximal) plus the same set on every p and thread count
//! for one seed. Random graphs with self-loops, duplicate edges, isolated vertices and
//! several components; p = 1..4 LPF processes (shared memory), 1 and 2 threads.

mod common;

use common::*;
use graphblas::dist::{kcore_spmd, kcore_spmd_observed, mis_spmd, scc_spmd, triangles_spmd, DistError, Input, Measure, VertexValues};
use std::collections::BTreeSet;

const PS: [u32; 4] = [1, 2, 3, 4];
const THREADS: [usize; 2] = [1, 2];

/// The graphs: random ones of several densities (self-loops and duplicates added, the
/// last vertices isolated), a long cycle, a chain of 2-cycles numbered against its
/// direction, a complete graph with a pendant path.
fn graphs() -> Vec<Graph> {
    let mut gs = Vec::new();
    for (seed, n, m) in [(1u64, 30usize, 40usize), (2, 60, 120), (3, 80, 240), (4, 200, 500), (5, 40, 400)] {
        let mut g = random_graph(seed, n, m);
        // Isolated: the last 5 vertices lose their edges; a self-loop and a duplicate.
        g.edges.retain(|&(u, v)| u < n - 5 && v < n - 5);
        let (a, b) = g.edges[0];
        g.edges.extend([(a, b), (a, a), (n - 6, n - 6), (b, a)]);
        gs.push(g);
    }
    let n = 50;
    gs.push(Graph::new("a cycle", n, &(0..n).map(|v| ((v + 1) % n, v)).collect::<Vec<_>>()));
    let mut chain = Vec::new();
    for k in 0..20 {
        let (a, b) = (40 - 2 * k, 39 - 2 * k);
        chain.extend([(a, b), (b, a)]);
        if k > 0 {
            chain.push((a + 1, a));
        }
    }
    gs.push(Graph::new("a chain of 2-cycles numbered backwards", 41, &chain));
    let mut dense: Vec<(usize, usize)> = (0..8).flat_map(|u| (0..8).filter(move |&v| v != u).map(move |v| (u, v))).collect();
    dense.extend([(7, 8), (8, 9), (9, 10), (10, 10)]);
    gs.push(Graph::new("K8 with a pendant path", 12, &dense));
    gs
}

/// Tarjan's algorithm (recursive; the graphs are small): every vertex with the smallest
/// vertex of its SCC.
fn reference_scc(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    struct T {
        out: Vec<Vec<usize>>,
        index: Vec<usize>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        label: Vec<usize>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = t.next;
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for k in 0..t.out[v].len() {
            let w = t.out[v][k];
            if t.index[w] == usize::MAX {
                visit(t, w);
                t.low[v] = t.low[v].min(t.low[w]);
            } else if t.on[w] {
                t.low[v] = t.low[v].min(t.index[w]);
            }
        }
        if t.low[v] == t.index[v] {
            let at = t.stack.iter().rposition(|&x| x == v).unwrap();
            let members: Vec<usize> = t.stack.drain(at..).collect();
            let least = *members.iter().min().unwrap();
            for x in members {
                t.on[x] = false;
                t.label[x] = least;
            }
        }
    }
    let mut out = vec![Vec::new(); n];
    for &(u, v) in edges {
        out[u].push(v);
    }
    let mut t = T { out, index: vec![usize::MAX; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), next: 0, label: vec![usize::MAX; n] };
    for v in 0..n {
        if t.index[v] == usize::MAX {
            visit(&mut t, v);
        }
    }
    t.label
}

/// The neighbour sets of the undirected simple graph.
fn neighbour_sets(n: usize, edges: &[(usize, usize)]) -> Vec<BTreeSet<usize>> {
    let mut s = vec![BTreeSet::new(); n];
    for &(u, v) in edges {
        if u != v {
            s[u].insert(v);
            s[v].insert(u);
        }
    }
    s
}

/// Per vertex, the pairs of its neighbours that are neighbours of each other.
fn reference_triangles(n: usize, edges: &[(usize, usize)]) -> Vec<i64> {
    let s = neighbour_sets(n, edges);
    (0..n).map(|v| s[v].iter().map(|&u| s[u].intersection(&s[v]).count() as i64).sum::<i64>() / 2).collect()
}

/// Repeated peeling: for k = 1, 2, ..., remove vertices of degree < k until none is
/// left below k; a vertex removed while peeling for k has coreness k − 1.
fn reference_coreness(n: usize, edges: &[(usize, usize)]) -> Vec<i64> {
    let mut s = neighbour_sets(n, edges);
    let mut core = vec![-1i64; n];
    let mut left = n;
    let mut k = 0;
    while left > 0 {
        k += 1;
        loop {
            let low: Vec<usize> = (0..n).filter(|&v| core[v] < 0 && s[v].len() < k).collect();
            if low.is_empty() {
                break;
            }
            for v in low {
                core[v] = k as i64 - 1;
                left -= 1;
                for u in std::mem::take(&mut s[v]) {
                    s[u].remove(&v);
                }
            }
        }
    }
    core
}

/// The graph's edges dealt to `p` processes, every vertex 0..n declared.
fn part(g: &Graph, p: u32, q: usize) -> Input {
    let edges = g.edges.iter().enumerate().filter(|(k, _)| k % p as usize == q).map(|(_, &(u, v))| (u as u64, v as u64)).collect();
    Input::NumberedEdges { n: g.n as u64, edges }
}

/// The processes' values in vertex order, checking the blocks cover 0..n in pid order.
fn gather<T: Copy>(res: &[Result<VertexValues<T>, DistError>], n: usize) -> Vec<T> {
    let mut ids = Vec::new();
    let mut all = Vec::new();
    for r in res {
        let r = r.as_ref().unwrap_or_else(|e| panic!("run failed: {e}"));
        assert_eq!(r.first_index as usize, ids.len());
        ids.extend_from_slice(&r.ids);
        all.extend_from_slice(&r.values);
    }
    assert_eq!(ids, (0..n as u64).collect::<Vec<_>>());
    all
}

/// Runs `kernel` on `g` for every p and thread count; checks each result with `check`.
fn every_run<T: Copy + Send + 'static>(
    g: &Graph,
    kernel: fn(&mut lpf::Context, Input, usize) -> Result<VertexValues<T>, DistError>,
    check: impl Fn(&[T], &str),
) {
    for p in PS {
        for threads in THREADS {
            let g2 = Graph { name: g.name.clone(), n: g.n, edges: g.edges.clone() };
            let res = run_all(shm, p, LIMIT, move |ctx| kernel(ctx, part(&g2, p, ctx.pid() as usize), threads));
            check(&gather(&res, g.n), &format!("{} [p={p} threads={threads}]", g.name));
        }
    }
}

#[test]
fn scc_against_tarjan() {
    for g in graphs() {
        let want: Vec<u64> = reference_scc(g.n, &g.edges).into_iter().map(|l| l as u64).collect();
        assert!(want.iter().enumerate().any(|(v, &l)| l != v as u64) || g.name.contains("random 1"), "{}: a non-trivial SCC", g.name);
        every_run(&g, scc_spmd, |got, what| assert_eq!(got, want, "SCC of {what}"));
    }
}

#[test]
fn triangles_against_neighbour_set_intersection() {
    for g in graphs() {
        let want = reference_triangles(g.n, &g.edges);
        every_run(&g, triangles_spmd, |got, what| assert_eq!(got, want, "triangles of {what}"));
    }
}

#[test]
fn kcore_against_peeling() {
    for g in graphs() {
        let want = reference_coreness(g.n, &g.edges);
        every_run(&g, kcore_spmd, |got, what| assert_eq!(got, want, "coreness of {what}"));
    }
}

/// k-core's progress: one line per coreness met, ascending, counting its vertices, the
/// same on every process.
#[test]
fn kcore_reports_each_coreness_with_its_vertices() {
    let params = graphblas::kron::KronParams::graph500(9, 5);
    let g = kron_graph(&params);
    let core = reference_coreness(g.n, &g.edges);
    let mut want: std::collections::BTreeMap<usize, u64> = Default::default();
    for &c in &core {
        *want.entry(c as usize).or_default() += 1;
    }
    for p in [1u32, 3] {
        let lines = run_all(shm, p, LIMIT, move |ctx| {
            let mut lines = Vec::new();
            kcore_spmd_observed(ctx, Input::Rmat(params), 1, &mut |r| lines.push((r.unit, r.round, r.measure, r.value)))?;
            Ok::<_, DistError>(lines)
        });
        let want: Vec<_> = want.iter().map(|(&k, &c)| ("core", k, "peeled", Measure::Count(c))).collect();
        for l in &lines {
            assert_eq!(l.as_ref().unwrap(), &want, "k-core's progress on {p}");
        }
    }
}

/// Independent (no edge between two members, self-loops aside) and maximal (every
/// other vertex has a member neighbour); the same set for one seed on every p and thread
/// count; another seed gives another set on the larger graphs.
#[test]
fn mis_is_independent_maximal_and_fixed_by_its_seed() {
    for g in graphs() {
        let s = neighbour_sets(g.n, &g.edges);
        let mut sets = Vec::new();
        for seed in [0i64, -3, 12345] {
            let mut first: Option<Vec<i64>> = None;
            for p in PS {
                for threads in THREADS {
                    let g2 = Graph { name: g.name.clone(), n: g.n, edges: g.edges.clone() };
                    let res = run_all(shm, p, LIMIT, move |ctx| mis_spmd(ctx, part(&g2, p, ctx.pid() as usize), seed, threads));
                    let got = gather(&res, g.n);
                    let what = format!("MIS of {} (seed {seed}) [p={p} threads={threads}]", g.name);
                    assert!(got.iter().all(|&x| x == 0 || x == 1), "{what}: {got:?}");
                    for v in 0..g.n {
                        let members = s[v].iter().filter(|&&u| got[u] == 1).count();
                        if got[v] == 1 {
                            assert_eq!(members, 0, "{what}: {v} and a neighbour are both in");
                        } else {
                            assert!(members > 0, "{what}: {v} could join");
                        }
                    }
                    assert_eq!(first.get_or_insert_with(|| got.clone()), &got, "{what}: the same set as on 1 process");
                }
            }
            sets.push(first.unwrap());
        }
        if g.n >= 100 {
            assert!(sets[0] != sets[1] || sets[1] != sets[2], "{}: the seed chooses the set", g.name);
        }
    }
}

#[test]
fn rmat_graph_kernels_against_the_models() {
    let params = graphblas::kron::KronParams::graph500(9, 5);
    let g = kron_graph(&params);
    let scc: Vec<u64> = reference_scc(g.n, &g.edges).into_iter().map(|l| l as u64).collect();
    let (tri, core) = (reference_triangles(g.n, &g.edges), reference_coreness(g.n, &g.edges));
    assert!(tri.iter().any(|&t| t > 0) && core.iter().any(|&c| c > 2));
    for p in [1u32, 2, 3] {
        let r = run_all(shm, p, LIMIT, move |ctx| scc_spmd(ctx, Input::Rmat(params), 2));
        assert_eq!(gather(&r, g.n), scc, "SCC of {} on {p}", g.name);
        let r = run_all(shm, p, LIMIT, move |ctx| triangles_spmd(ctx, Input::Rmat(params), 2));
        assert_eq!(gather(&r, g.n), tri, "triangles of {} on {p}", g.name);
        let r = run_all(shm, p, LIMIT, move |ctx| kcore_spmd(ctx, Input::Rmat(params), 1));
        assert_eq!(gather(&r, g.n), core, "coreness of {} on {p}", g.name);
    }
}

/// An empty graph is each kernel's error, the same on every process.
#[test]
fn an_empty_graph_is_every_kernels_error() {
    for p in [1u32, 3] {
        let res = run_all(shm, p, LIMIT, |ctx| {
            let empty = || Input::Edges(vec![]);
            (
                scc_spmd(ctx, empty(), 1).map(|_| ()),
                triangles_spmd(ctx, empty(), 1).map(|_| ()),
                kcore_spmd(ctx, empty(), 1).map(|_| ()),
                mis_spmd(ctx, empty(), 7, 1).map(|_| ()),
            )
        });
        for (k, name) in ["SCC", "triangle count", "k-core", "MIS"].iter().enumerate() {
            for r in &res {
                let e = match k {
                    0 => r.0.clone(),
                    1 => r.1.clone(),
                    2 => r.2.clone(),
                    _ => r.3.clone(),
                };
                let e = e.expect_err("an empty graph").to_string();
                assert!(e.contains("the graph has no vertices") && e.contains(name), "{e}");
            }
        }
    }
}
