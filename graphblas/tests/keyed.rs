//! Kernels on a keyed graph (`dist::Graph`, issue 25): the ids, integers (`i64`) or byte
//! strings, are numbered inside the LPF job, and every kernel's results with ids equal
//! the results of the same graph numbered by hand (`Input::NumberedEdges`, the path the
//! other tests check against references), mapped through the ids: the numbering follows
//! the ids' order, so vertex k of the numbered graph is the k-th smallest id. Random
//! graphs with isolated vertices (given as vertex ids), 1-4 processes; also the errors
//! of a keyed load and of a source that is no vertex. GraphFrames' BFS paths on marked
//! vertices against the sequential model, and the check of distinct vertex ids.

mod common;

use common::*;
use graphblas::dist::{
    bfs_spmd, cdlp_spmd, lcc_spmd, pagerank_spmd, sssp_spmd, wcc_spmd, ByteKeys, DistError, DistOptions, Graph as Loaded, Input,
    KeyedEdges, KeyedPaths, KeyedValues, VertexId, VertexIds, VertexSection, VertexValues, FROM, TO,
};
use graphblas::prng::Xoshiro256;
use graphblas::reference::reference_bfs_paths;
use graphblas::PageRankConfig;

/// `n` distinct ids in ascending order, of the kind asked for: integers spread over the
/// whole i64 range (i64::MIN and i64::MAX among them, negatives), or byte strings in
/// byte order (the empty string, non-UTF-8 bytes, a long one).
fn ids(n: usize, bytes: bool, seed: u64) -> Vec<VertexId> {
    let mut rng = Xoshiro256::new(seed);
    if !bytes {
        let mut v: Vec<i64> = vec![i64::MIN, i64::MAX, -1, 0];
        while v.len() < 4 * n + 8 {
            v.push(rng.next_u64() as i64);
        }
        v.sort_unstable();
        v.dedup();
        let step = v.len() / n;
        let mut picked: Vec<i64> = (0..n).map(|k| v[k * step]).collect();
        picked[n - 1] = i64::MAX;
        picked[0] = i64::MIN;
        return picked.into_iter().map(VertexId::Integral).collect();
    }
    let mut v: Vec<Vec<u8>> = vec![Vec::new(), vec![0xff, 0xfe, 0], vec![b'a'; 300], "é".as_bytes().to_vec()];
    while v.len() < n {
        let len = rng.below(6) as usize;
        v.push((0..len).map(|_| rng.below(256) as u8).collect());
        v.sort();
        v.dedup();
    }
    v.sort();
    v.truncate(n);
    v.into_iter().map(VertexId::Bytes).collect()
}

fn collect(of: &[VertexId], bytes: bool) -> VertexIds {
    if bytes {
        let mut k = ByteKeys::new();
        for id in of {
            let VertexId::Bytes(b) = id else { unreachable!() };
            k.push(b);
        }
        VertexIds::Bytes(k)
    } else {
        VertexIds::Integral(of.iter().map(|id| if let VertexId::Integral(i) = id { *i } else { unreachable!() }).collect())
    }
}

fn listed(ids: &VertexIds) -> Vec<VertexId> {
    match ids {
        VertexIds::Integral(v) => v.iter().map(|&i| VertexId::Integral(i)).collect(),
        VertexIds::Bytes(k) => k.iter().map(|b| VertexId::Bytes(b.to_vec())).collect(),
    }
}

/// Process q's part of `g` with the ids `id`: every p-th edge from q, weights k % 5,
/// and as vertex ids every vertex without an edge (on a process chosen by its number)
/// plus a few with edges (duplicates of endpoints).
fn part(g: &Graph, id: &[VertexId], bytes: bool, weighted: bool, q: usize, p: usize) -> KeyedEdges {
    let mut ends = Vec::new();
    let mut weights = Vec::new();
    for (k, &(u, v)) in g.edges.iter().enumerate().filter(|(k, _)| k % p == q) {
        ends.push(id[u].clone());
        ends.push(id[v].clone());
        weights.push((k % 5) as f64);
    }
    let mut named = vec![false; g.n];
    for &(u, v) in &g.edges {
        named[u] = true;
        named[v] = true;
    }
    let vertices: Vec<VertexId> = (0..g.n).filter(|&v| (!named[v] || v % 7 == 0) && v % p == q).map(|v| id[v].clone()).collect();
    KeyedEdges { ends: collect(&ends, bytes), vertices: collect(&vertices, bytes), weights: weighted.then_some(weights) }
}

/// The processes' keyed results put together: the ids must be all ids in order, blocks
/// in pid order; the values of all vertices.
fn together<V, W>(outs: &[Result<KeyedValues<V>, DistError>], id: &[VertexId], join: impl Fn(&mut Vec<W>, &V)) -> (Vec<W>, usize) {
    let mut all_ids = Vec::new();
    let mut values = Vec::new();
    let rounds = outs[0].as_ref().unwrap().rounds;
    for r in outs {
        let r = r.as_ref().unwrap_or_else(|e| panic!("keyed run failed: {e}"));
        assert_eq!((r.n, r.rounds), (id.len() as u64, rounds));
        all_ids.extend(listed(&r.ids));
        join(&mut values, &r.values);
    }
    assert_eq!(all_ids, id, "every vertex once, ascending ids, blocks in pid order");
    (values, rounds)
}

/// The numbered results put together in vertex order.
fn numbered<T: Copy>(outs: &[Result<VertexValues<T>, DistError>]) -> (Vec<T>, usize) {
    let mut values = Vec::new();
    for r in outs {
        values.extend_from_slice(&r.as_ref().unwrap_or_else(|e| panic!("numbered run failed: {e}")).values);
    }
    (values, outs[0].as_ref().unwrap().rounds)
}

fn check_graph(g: &Graph, p: u32, bytes: bool, seed: u64) {
    let what = format!("{} on {p} processes, {} ids", g.name, if bytes { "byte-string" } else { "integer" });
    let id = ids(g.n, bytes, seed);
    let n = g.n as u64;
    let edges: Vec<(u64, u64)> = g.edges.iter().map(|&(u, v)| (u as u64, v as u64)).collect();
    let weights: Vec<f64> = (0..edges.len()).map(|k| (k % 5) as f64).collect();
    let numbered_input =
        move |q: usize| Input::NumberedEdges { n, edges: edges.iter().enumerate().filter(|(k, _)| k % p as usize == q).map(|(_, e)| *e).collect() };
    let weighted_input = {
        let (edges, weights) = (g.edges.clone(), weights.clone());
        move |q: usize| {
            let ks: Vec<usize> = (0..edges.len()).filter(|k| k % p as usize == q).collect();
            Input::WeightedNumberedEdges { n, edges: ks.iter().map(|&k| (edges[k].0 as u64, edges[k].1 as u64)).collect(), weights: ks.iter().map(|&k| weights[k]).collect() }
        }
    };
    let source = g.edges.first().map_or(0, |e| e.0);
    let cfg = PageRankConfig { tol: 1e-10, ..PageRankConfig::default() };
    // The numbered runs.
    let ni = numbered_input.clone();
    let bfs = numbered(&run_all(shm, p, LIMIT, move |ctx| bfs_spmd(ctx, ni(ctx.pid() as usize), source as u64, 1)));
    let ni = numbered_input.clone();
    let wcc = numbered(&run_all(shm, p, LIMIT, move |ctx| wcc_spmd(ctx, ni(ctx.pid() as usize), 1)));
    let ni = numbered_input.clone();
    let cdlp = numbered(&run_all(shm, p, LIMIT, move |ctx| cdlp_spmd(ctx, ni(ctx.pid() as usize), 3, 2)));
    let ni = numbered_input.clone();
    let lcc = numbered(&run_all(shm, p, LIMIT, move |ctx| lcc_spmd(ctx, ni(ctx.pid() as usize), 1)));
    let sssp = numbered(&run_all(shm, p, LIMIT, move |ctx| sssp_spmd(ctx, weighted_input(ctx.pid() as usize), source as u64, 1)));
    let ni = numbered_input.clone();
    let pr = run_all(shm, p, LIMIT, move |ctx| pagerank_spmd(ctx, ni(ctx.pid() as usize), &cfg));
    let mut ranks = vec![f64::NAN; g.n];
    for r in &pr {
        let r = r.as_ref().unwrap();
        for (v, x) in r.ids.iter().zip(&r.ranks) {
            ranks[*v as usize] = *x;
        }
    }
    let pr_iterations = pr[0].as_ref().unwrap().iterations;

    // The keyed runs: one load, every kernel on it.
    let (g2, id2) = (Graph { name: g.name.clone(), n: g.n, edges: g.edges.clone() }, id.clone());
    let src_id = id[source].clone();
    let outs = run_all(shm, p, LIMIT, move |ctx| {
        let q = ctx.pid() as usize;
        let loaded = Loaded::load(ctx, part(&g2, &id2, bytes, true, q, p as usize), 1).unwrap();
        assert_eq!((loaded.n(), loaded.has_weights()), (g2.n as u64, true));
        assert!(loaded.native_bytes() > 0);
        let obs = &mut |_: &graphblas::dist::RoundProgress| {};
        (
            loaded.bfs(ctx, &src_id, 1, obs),
            loaded.wcc(ctx, 1, obs),
            loaded.cdlp(ctx, 3, 2, obs),
            loaded.lcc(ctx, 1, obs),
            loaded.sssp(ctx, &src_id, 1, obs),
            loaded.pagerank(ctx, &cfg, &DistOptions::default(), &mut |_| {}),
            loaded.nnz(),
        )
    });
    let by_number = |k: usize| id[k].clone();
    let b: Vec<_> = outs.iter().map(|o| o.0.clone()).collect();
    assert_eq!(together(&b, &id, vec_join), bfs, "{what}: BFS");
    let w: Vec<_> = outs.iter().map(|o| o.1.clone()).collect();
    let wcc_ids: Vec<VertexId> = wcc.0.iter().map(|&l| by_number(l as usize)).collect();
    assert_eq!(together(&w, &id, ids_join), (wcc_ids, wcc.1), "{what}: WCC");
    let c: Vec<_> = outs.iter().map(|o| o.2.clone()).collect();
    let cdlp_ids: Vec<VertexId> = cdlp.0.iter().map(|&l| by_number(l as usize)).collect();
    assert_eq!(together(&c, &id, ids_join), (cdlp_ids, cdlp.1), "{what}: CDLP");
    let l: Vec<_> = outs.iter().map(|o| o.3.clone()).collect();
    assert_eq!(together(&l, &id, vec_join), lcc, "{what}: LCC");
    let s: Vec<_> = outs.iter().map(|o| o.4.clone()).collect();
    assert_eq!(together(&s, &id, vec_join), sssp, "{what}: SSSP");
    let r: Vec<_> = outs.iter().map(|o| o.5.clone().map(|r| r.ranks)).collect();
    assert_eq!(together(&r, &id, vec_join), (ranks, pr_iterations), "{what}: PageRank");
    let nnz = distinct_edges(g);
    assert!(outs.iter().all(|o| o.6 == nnz), "{what}: edges once");
}

#[allow(clippy::ptr_arg)] // the values of a `KeyedValues<Vec<T>>`, as `together` hands them
fn vec_join<T: Clone>(acc: &mut Vec<T>, v: &Vec<T>) {
    acc.extend_from_slice(v);
}

fn ids_join(acc: &mut Vec<VertexId>, v: &VertexIds) {
    acc.extend(listed(v));
}

/// The distinct edges of `g`.
fn distinct_edges(g: &Graph) -> u64 {
    let mut e = g.edges.clone();
    e.sort_unstable();
    e.dedup();
    e.len() as u64
}

/// Random graphs with isolated vertices (more vertices than the edges name), on 1-4
/// processes, integer and byte-string ids: every kernel's keyed results are the numbered
/// results with the ids.
#[test]
fn keyed_kernels_equal_the_numbered_ones() {
    let graphs = [random_graph(3, 40, 50), random_graph(5, 300, 700), Graph::new("a self-loop and isolated vertices", 4, &[(2, 2)])];
    for (k, g) in graphs.iter().enumerate() {
        for p in 1..=4 {
            for bytes in [false, true] {
                check_graph(g, p, bytes, 100 + k as u64);
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

fn keyed(ends: &[i64], vertices: &[i64], weights: Option<Vec<f64>>) -> KeyedEdges {
    KeyedEdges { ends: VertexIds::Integral(ends.to_vec()), vertices: VertexIds::Integral(vertices.to_vec()), weights }
}

fn strings(keys: &[&[u8]]) -> VertexIds {
    let mut k = ByteKeys::new();
    for key in keys {
        k.push(key);
    }
    VertexIds::Bytes(k)
}

/// A source that is no vertex is the error naming it, on every process, for both kinds
/// of ids (a vertex id without edges is a vertex); SSSP on a graph without weights too.
#[test]
fn sources_that_are_no_vertex_are_named() {
    let outs = run_all(shm, 2, LIMIT, |ctx| {
        let q = ctx.pid() as i64;
        let g = Loaded::load(ctx, keyed(&[-5, q], &[99 + q], None), 1)?;
        let missing = g.bfs(ctx, &VertexId::Integral(7), 1, &mut |_| {}).map(|_| ());
        let isolated = g.bfs(ctx, &VertexId::Integral(100), 1, &mut |_| {}).map(|r| r.values);
        let unweighted = g.sssp(ctx, &VertexId::Integral(-5), 1, &mut |_| {}).map(|_| ());
        Ok::<_, DistError>((missing, isolated, unweighted))
    });
    let outs: Vec<_> = outs.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(one_error(outs.iter().map(|o| o.0.clone()).collect()), "the BFS source 7 is not a vertex of the graph");
    // Vertices -5, 0, 1, 99, 100: process 1 holds 1 (of n = 5: blocks 0..2, 2..5).
    let depths: Vec<i64> = outs.iter().flat_map(|o| o.1.clone().unwrap()).collect();
    assert_eq!(depths, vec![i64::MAX, i64::MAX, i64::MAX, i64::MAX, 0]);
    assert!(one_error(outs.iter().map(|o| o.2.clone()).collect()).contains("SSSP needs edge weights"));
    let outs = run_all(shm, 3, LIMIT, |ctx| {
        let ends = strings(&[b"abc", b"", b"\xff"]);
        let ends = if ctx.pid() == 1 { strings(&[b"x", b"y"]) } else { ends };
        let ends = if ctx.pid() == 2 { strings(&[]) } else { ends };
        let g = Loaded::load(ctx, KeyedEdges { ends: ends.clone(), vertices: strings(&[b"lone"]), weights: None }, 1).map(|_| ());
        let ends = if ctx.pid() == 0 { strings(&[b"abc", b"d"]) } else { strings(&[]) };
        let loaded = Loaded::load(ctx, KeyedEdges { ends, vertices: strings(&[]), weights: Some(vec![1.0; ctx.pid() as usize / 2]) }, 1);
        let g2 = loaded.map(|_| ());
        let ends = if ctx.pid() == 0 { strings(&[b"abc", b"d"]) } else { strings(&[]) };
        let w = if ctx.pid() == 0 { vec![2.5] } else { vec![] };
        let g3 = Loaded::load(ctx, KeyedEdges { ends, vertices: strings(&[]), weights: Some(w) }, 1).unwrap();
        let missing = g3.sssp(ctx, &VertexId::Bytes(b"abd".to_vec()), 1, &mut |_| {}).map(|_| ());
        let wrong = g3.bfs(ctx, &VertexId::Integral(1), 1, &mut |_| {}).map(|_| ());
        (g, g2, missing, wrong)
    });
    // Process 0 gives 3 ends: an odd count.
    assert_eq!(one_error(outs.iter().map(|o| o.0.clone()).collect()), "process 0 gives 3 edge ends: two per edge");
    assert_eq!(one_error(outs.iter().map(|o| o.1.clone()).collect()), "process 0 gives 1 edges but 0 weights: one weight per edge");
    assert_eq!(one_error(outs.iter().map(|o| o.2.clone()).collect()), "the SSSP source 'abd' is not a vertex of the graph");
    assert!(one_error(outs.iter().map(|o| o.3.clone()).collect()).contains("the BFS source 1 is an integer, but the graph's vertex ids are byte strings"));
}

/// A negative or NaN weight is the error naming the edge by its ids; ids of different
/// kinds on different processes are an error naming the process.
#[test]
fn bad_weights_and_mixed_kinds_fail_everywhere() {
    let outs = run_all(shm, 2, LIMIT, |ctx| {
        let w = if ctx.pid() == 1 { vec![1.0, f64::NAN] } else { vec![0.0, 0.0] };
        let bad = Loaded::load(ctx, keyed(&[1, 2, -3, i64::MIN], &[], Some(w)), 1).map(|_| ());
        let ends = if ctx.pid() == 1 { strings(&[b"a", b"b"]) } else { VertexIds::Integral(vec![1, 2]) };
        let vertices = if ctx.pid() == 1 { strings(&[]) } else { VertexIds::Integral(vec![]) };
        let mixed = Loaded::load(ctx, KeyedEdges { ends, vertices, weights: None }, 1).map(|_| ());
        (bad, mixed)
    });
    assert_eq!(
        one_error(outs.iter().map(|o| o.0.clone()).collect()),
        "edge 1 of process 1, (-3, -9223372036854775808), has weight NaN: weights must be numbers >= 0"
    );
    assert!(one_error(outs.iter().map(|o| o.1.clone()).collect()).contains("process 1 gives byte-string ids without weights, process 0 gives integer ids"));
}

/// Process q's listed vertices with their marks for BFS paths: every vertex on process
/// `v % p` with a part of its marks, a vertex marked both ways listed a second time (on
/// the next process) with the other part, so the OR of the parts counts.
fn marked_lists(marks: &[u8], id: &[VertexId], bytes: bool, q: usize, p: usize) -> (VertexIds, Vec<u8>) {
    let (mut listed, mut given) = (Vec::new(), Vec::new());
    for (v, &m) in marks.iter().enumerate() {
        if v % p == q {
            listed.push(id[v].clone());
            given.push(if m == FROM | TO { FROM } else { m });
        }
        if m == FROM | TO && (v + 1) % p == q {
            listed.push(id[v].clone());
            given.push(TO);
        }
    }
    (collect(&listed, bytes), given)
}

/// GraphFrames' BFS paths (`Graph::bfs_paths`): random graphs whose vertices are all
/// listed, with random marks (some vertices both "from" and "to", so L = 0 happens; some
/// graphs without a path), 1-4 processes, threads 1 and 2, both kinds of ids; marks given
/// at the load and marks looked up in the loaded graph (the marked ids only); every
/// maxPathLength from 0 to beyond the longest path: the sequential model's depths,
/// rounds and verdict, by id.
#[test]
fn bfs_paths_equal_the_sequential_model() {
    // (n, m, vertices marked "from", marked "to", marked both)
    let cases = [(30usize, 60usize, 2usize, 2usize, 0usize), (60, 110, 1, 1, 0), (80, 300, 3, 1, 0), (40, 60, 3, 3, 1), (40, 25, 1, 1, 0), (50, 90, 1, 2, 0), (100, 160, 1, 1, 0)];
    let mut seen = Vec::new();
    for (k, &(n, m, f, t, both)) in cases.iter().enumerate() {
        let g = random_graph(700 + k as u64, n, m);
        let mut rng = Xoshiro256::new(900 + k as u64);
        let mut marks = vec![0u8; n];
        for (count, mark) in [(both, FROM | TO), (f, FROM), (t, TO)] {
            for _ in 0..count {
                let v = loop {
                    let v = rng.below(n as u64) as usize;
                    if marks[v] == 0 {
                        break v;
                    }
                };
                marks[v] = mark;
            }
        }
        let from: Vec<bool> = marks.iter().map(|m| m & FROM != 0).collect();
        let to: Vec<bool> = marks.iter().map(|m| m & TO != 0).collect();
        let lengths = [0usize, 1, 2, 3, 5, n];
        let want: Vec<_> = lengths.iter().map(|&l| reference_bfs_paths(n, &g.edges, &from, &to, l)).collect();
        seen.extend(want.iter().map(|w| (w.found, w.rounds)));
        for p in 1..=4u32 {
            for bytes in [false, true] {
                let threads = 1 + (p as usize + bytes as usize) % 2;
                let id = ids(n, bytes, 40 + k as u64);
                let (g2, id2, marks2) = (Graph { name: g.name.clone(), n, edges: g.edges.clone() }, id.clone(), marks.clone());
                let outs = run_all(shm, p, LIMIT, move |ctx| {
                    let q = ctx.pid() as usize;
                    let mut edges = part(&g2, &id2, bytes, false, q, p as usize);
                    let (listed, given) = marked_lists(&marks2, &id2, bytes, q, p as usize);
                    edges.vertices = listed;
                    let (loaded, at_load) = Loaded::load_with(ctx, edges, VertexSection { marks: Some(given), unique: false }, threads).unwrap();
                    let at_load = at_load.expect("marks asked for");
                    // The marked ids only, each on one process, looked up in the loaded graph.
                    let mine: Vec<usize> = (0..n).filter(|&v| marks2[v] != 0 && (v * 7) % p as usize == q).collect();
                    let looked_up = loaded.marks(ctx, &collect(&mine.iter().map(|&v| id2[v].clone()).collect::<Vec<_>>(), bytes), &mine.iter().map(|&v| marks2[v]).collect::<Vec<_>>(), true).unwrap();
                    assert_eq!(looked_up, at_load, "process {q}: the marks looked up are the marks given at the load");
                    lengths.iter().map(|&l| loaded.bfs_paths(ctx, &at_load, l, threads, &mut |_| {})).collect::<Vec<_>>()
                });
                for (i, w) in want.iter().enumerate() {
                    let what = format!("{}, {p} processes, byte ids {bytes}, threads {threads}, maxPathLength {}", g.name, lengths[i]);
                    let runs: Vec<Result<KeyedPaths, DistError>> = outs.iter().map(|o| o[i].clone()).collect();
                    assert!(runs.iter().all(|r| r.as_ref().map(|r| r.found) == Ok(w.found)), "{what}: found {runs:?}");
                    let depths: Vec<_> = runs.into_iter().map(|r| r.map(|r| r.depths)).collect();
                    assert_eq!(together(&depths, &id, vec_join), (w.depths.clone(), w.rounds), "{what}");
                }
            }
        }
    }
    // The cases cover: L = 0 (a vertex both ways), paths of 1, 3 and 7 edges (the last
    // cut by maxPathLength 5), a search that ends with no vertex left, and no path.
    for case in [(true, 0), (true, 1), (true, 3), (true, 7), (false, 5), (false, 11), (false, 0)] {
        assert!(seen.contains(&case), "no case {case:?} among {seen:?}");
    }
}

/// Distinct vertex ids (`VertexSection::unique`, `Graph::marks`'s `unique`): an id
/// listed twice by one process or by two is the error naming the smallest such id, on
/// every process, for both kinds of ids; without the check the same lists load. A marked
/// id that is no vertex of the graph is the error naming it.
#[test]
fn ids_listed_twice_and_marked_ids_that_are_no_vertex_are_named() {
    for bytes in [false, true] {
        let id = ids(12, bytes, 5);
        // Process q lists `lists[q]` (vertex numbers); the edges name 0..4.
        let cases: [(&[&[usize]], Option<usize>); 4] = [
            (&[&[5, 6], &[7, 8, 9]], None),
            (&[&[5, 9, 6, 9], &[7]], Some(9)),
            (&[&[8, 5], &[11, 7, 8, 3]], Some(8)),
            (&[&[3, 10], &[10], &[1, 3]], Some(3)),
        ];
        for (lists, twice) in cases {
            let p = lists.len() as u32;
            let lists: Vec<Vec<usize>> = lists.iter().map(|l| l.to_vec()).collect();
            let lists_11 = lists.iter().flatten().any(|&v| v == 11);
            let id2 = id.clone();
            let outs = run_all(shm, p, LIMIT, move |ctx| {
                let q = ctx.pid() as usize;
                let ends: Vec<VertexId> = if q == 0 { [0, 1, 1, 2, 3, 4].iter().map(|&v| id2[v].clone()).collect() } else { vec![] };
                let listed = collect(&lists[q].iter().map(|&v| id2[v].clone()).collect::<Vec<_>>(), bytes);
                let edges = KeyedEdges { ends: collect(&ends, bytes), vertices: listed.clone(), weights: None };
                let checked = Loaded::load_with(ctx, edges.clone(), VertexSection { marks: None, unique: true }, 1).map(|(g, m)| (g.n(), m));
                let loaded = Loaded::load(ctx, edges, 1).unwrap();
                let marks = vec![FROM; listed.len()];
                let looked_up = loaded.marks(ctx, &listed, &marks, true).map(|m| m.count(FROM));
                let unchecked = loaded.marks(ctx, &listed, &marks, false).map(|m| m.count(FROM));
                let absent = if q == 0 { vec![id2[11].clone(), id2[1].clone()] } else { vec![] };
                let absent = loaded.marks(ctx, &collect(&absent, bytes), &[TO, TO][..2 * (q == 0) as usize], false).map(|_| ());
                (checked, looked_up, unchecked, absent, loaded.n())
            });
            let n = outs[0].4;
            let listed_vertices: usize = outs.iter().map(|o| o.2.clone().unwrap()).sum();
            assert!(listed_vertices as u64 <= n);
            match twice {
                None => {
                    assert!(outs.iter().all(|o| o.0 == Ok((n, None))), "{outs:?}");
                    assert_eq!(outs.iter().map(|o| o.1.clone().unwrap()).sum::<usize>(), listed_vertices);
                }
                Some(v) => {
                    let text = format!("vertex id {} appears more than once", id[v]);
                    assert_eq!(one_error(outs.iter().map(|o| o.0.clone()).collect()), text);
                    assert_eq!(one_error(outs.iter().map(|o| o.1.clone()).collect()), text);
                }
            }
            if !lists_11 {
                assert_eq!(one_error(outs.iter().map(|o| o.3.clone()).collect()), format!("the marked vertex {} is not a vertex of the graph", id[11]));
            }
        }
    }
}
