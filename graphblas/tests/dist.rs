//! Distributed PageRank against the local reference: every input path, p = 1..4,
//! 1 and 2 threads per process, both exchanges.

mod common;

use common::*;
use graphblas::dist::{
    pagerank_spmd, pagerank_spmd_with, DistOptions, DistributedResult, Exchange, Format, Input,
};
use graphblas::kron::KronParams;
use graphblas::PageRankConfig;
use std::path::PathBuf;

const PS: [u32; 4] = [1, 2, 3, 4];
const THREADS: [usize; 2] = [1, 2];

fn run_file(launch: Launcher, p: u32, threads: usize, path: PathBuf, format: Format, exchange: Exchange) -> Vec<Result<DistributedResult, graphblas::dist::DistError>> {
    run_all(launch, p, LIMIT, move |ctx| {
        let cfg = PageRankConfig { threads, ..Default::default() };
        let opts = DistOptions { exchange, ..Default::default() };
        pagerank_spmd_with(ctx, Input::File { path: path.clone(), format }, &cfg, &opts)
    })
}

/// Checks one input against its reference for every p, thread count and exchange.
fn check_all(what: &str, ids: &[u64], want: &(Vec<f64>, usize), input: impl Fn() -> Input + Sync + Send + Clone + 'static) {
    for (engine, launch) in launchers() {
        for p in PS {
            for threads in THREADS {
                for exchange in [Exchange::Allgather, Exchange::Plan] {
                    let mk = input.clone();
                    let res = run_all(launch, p, LIMIT, move |ctx| {
                        let cfg = PageRankConfig { threads, ..Default::default() };
                        let opts = DistOptions { exchange, ..Default::default() };
                        pagerank_spmd_with(ctx, mk(), &cfg, &opts)
                    });
                    let (got, iters) = assemble(&res, ids);
                    let tag = format!("{what} [{engine} p={p} threads={threads} {exchange:?}]");
                    assert_eq!(iters, want.1, "{tag}: iterations");
                    assert_close(&got, &want.0, &tag);
                    let r0 = res[0].as_ref().unwrap();
                    assert_eq!(r0.exchange.kind, exchange);
                    assert!(r0.converged && r0.residual < 1e-7, "{tag}: residual {}", r0.residual);
                }
            }
        }
    }
}

#[test]
fn special_graphs_every_file_format() {
    let dir = TempDir::new("special");
    let cfg = PageRankConfig::default();
    for (k, g) in special_graphs().into_iter().enumerate() {
        // MatrixMarket and binary files declare their vertices (isolated ones hold
        // rank); an edge list's vertices are the ids some edge names.
        let (want, ids) = (g.reference_declared(&cfg), g.declared());
        let ids1: Vec<u64> = ids.iter().map(|x| x + 1).collect();
        let mtx = dir.file(&format!("g{k}.mtx"), g.mtx_pattern().as_bytes());
        check_all(&format!("{} (mtx pattern)", g.name), &ids1, &want, move || Input::file(mtx.clone()));
        let bin = dir.path(&format!("g{k}.bin"));
        g.binary(&bin);
        check_all(&format!("{} (bin)", g.name), &ids, &want, move || Input::file(bin.clone()));
        if !g.edges.is_empty() {
            let el = dir.file(&format!("g{k}.edges"), g.edge_list().as_bytes());
            check_all(&format!("{} (edges)", g.name), &g.named(), &g.reference(&cfg), move || Input::file(el.clone()));
        }
    }
}

#[test]
fn empty_graphs_are_an_error_on_every_process() {
    let dir = TempDir::new("empty");
    let mut files = vec![dir.file("none.txt", b"# nothing here\n\n")];
    for (k, g) in empty_graphs().into_iter().enumerate() {
        files.push(dir.file(&format!("e{k}.mtx"), g.mtx_pattern().as_bytes()));
        let bin = dir.path(&format!("e{k}.bin"));
        g.binary(&bin);
        files.push(bin);
    }
    for f in files {
        for p in PS {
            let res = run_file(shm, p, 1, f.clone(), Format::Auto, Exchange::Auto);
            for r in &res {
                let e = r.as_ref().expect_err("a graph without vertices is an error").to_string();
                assert!(e.contains(&f.display().to_string()) && e.contains("the graph has no vertices"), "{e}");
            }
        }
    }
}

#[test]
fn huge_and_sparse_ids_need_no_memory_and_come_back() {
    // Ids 0, 1 and 2^63 + 5 (and 4e9, beyond u32): a 3-vertex graph, labelled as in the
    // file. Before relabelling, memory grew with the largest id (abort or OOM).
    let dir = TempDir::new("hugeid");
    let big = (1u64 << 63) + 5;
    let text = format!("0 1\n1 {big}\n{big} 0 2.5\n0 {big}\n4000000000 1\n");
    let el = dir.file("huge.el", text.as_bytes());
    let g = Graph::new("dense", 4, &[(0, 1), (1, 3), (3, 0), (0, 3), (2, 1)]);
    let want = g.reference(&PageRankConfig::default());
    let ids = vec![0, 1, 4_000_000_000, big];
    check_all("huge ids (edges)", &ids, &want, move || Input::file(el.clone()));
    // The same through the sparse relabelling path (forced) and through in-memory edges.
    std::env::set_var("GBPR_RELABEL", "sparse");
    let dense = random_graph(3, 50, 200);
    let el2 = dir.file("dense.el", dense.edge_list().as_bytes());
    check_all("random (edges, sparse relabelling)", &dense.named(), &dense.reference(&PageRankConfig::default()), move || Input::file(el2.clone()));
    std::env::remove_var("GBPR_RELABEL");
}

#[test]
fn random_graphs_mtx_variants() {
    let dir = TempDir::new("rand");
    let cfg = PageRankConfig::default();
    for seed in 0..3u64 {
        let g = random_graph(seed, 40 + 17 * seed as usize, 150 + 40 * seed as usize);
        let want = g.reference_declared(&cfg);
        let ids1: Vec<u64> = g.declared().iter().map(|x| x + 1).collect();
        let real = dir.file(&format!("r{seed}.mtx"), g.mtx_real().as_bytes());
        check_all(&format!("{} (mtx real)", g.name), &ids1, &want, move || Input::File { path: real.clone(), format: Format::Mtx });
        let int = dir.file(&format!("i{seed}.txt"), g.mtx_integer().as_bytes());
        // Format given explicitly overrides the extension.
        check_all(&format!("{} (mtx integer)", g.name), &ids1, &want, move || Input::File { path: int.clone(), format: Format::Mtx });
    }
}

#[test]
fn symmetric_mtx() {
    let dir = TempDir::new("sym");
    let cfg = PageRankConfig::default();
    let g = random_graph(9, 35, 90);
    // Lower triangle (with diagonal) listed; the reader mirrors off-diagonal entries.
    let lower: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (u.max(v), u.min(v))).collect();
    let mut text = format!("%%MatrixMarket matrix coordinate pattern symmetric\n{} {} {}\n", g.n, g.n, lower.len());
    for &(u, v) in &lower {
        text += &format!("{} {}\n", u + 1, v + 1);
    }
    let mut full = lower.clone();
    full.extend(lower.iter().filter(|(u, v)| u != v).map(|&(u, v)| (v, u)));
    let sym = Graph::new("sym", g.n, &full);
    let want = sym.reference_declared(&cfg);
    let ids1: Vec<u64> = sym.declared().iter().map(|x| x + 1).collect();
    let path = dir.file("sym.mtx", text.as_bytes());
    check_all("symmetric pattern mtx", &ids1, &want, move || Input::file(path.clone()));
    // Real symmetric too.
    let mut text = format!("%%MatrixMarket matrix coordinate real symmetric\n{} {} {}\n", g.n, g.n, lower.len());
    for &(u, v) in &lower {
        text += &format!("{} {} 2.5\n", u + 1, v + 1);
    }
    let path = dir.file("symr.mtx", text.as_bytes());
    check_all("symmetric real mtx", &ids1, &want, move || Input::file(path.clone()));
}

#[test]
fn rmat_matches_kron_matrix() {
    let params = KronParams::graph500(9, 77);
    let cfg = PageRankConfig::default();
    let g = kron_graph(&params);
    check_all("rmat scale 9", &g.declared(), &g.reference_declared(&cfg), move || Input::Rmat(params));
}

#[test]
fn in_memory_edges_with_sparse_u64_ids() {
    let cfg = PageRankConfig::default();
    for g in [random_graph(5, 60, 200), special_graphs().remove(0)] {
        // Sparse, non-monotone ids; vertices are those in some edge.
        let id = |v: usize| graphblas::prng::mix64(v as u64 + 12345) | 1 << 63;
        let mut ids: Vec<u64> = g.edges.iter().flat_map(|&(u, v)| [id(u), id(v)]).collect();
        ids.sort_unstable();
        ids.dedup();
        let dense = |v: usize| ids.binary_search(&id(v)).unwrap();
        let relabelled: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (dense(u), dense(v))).collect();
        let want = Graph::new("dense", ids.len(), &relabelled).reference(&cfg);
        for p in PS {
            for threads in THREADS {
                let edges: Vec<(u64, u64)> = g.edges.iter().map(|&(u, v)| (id(u), id(v))).collect();
                let res = run_all(shm, p, LIMIT, move |ctx| {
                    // Process q gets every p-th edge (an arbitrary partition).
                    let (q, p) = (ctx.pid() as usize, ctx.nprocs() as usize);
                    let mine: Vec<(u64, u64)> = edges.iter().copied().enumerate().filter(|(k, _)| k % p == q).map(|(_, e)| e).collect();
                    pagerank_spmd(ctx, Input::Edges(mine), &PageRankConfig { threads, ..Default::default() })
                });
                let mut got = vec![f64::NAN; ids.len()];
                for r in &res {
                    let r = r.as_ref().unwrap();
                    assert_eq!(r.iterations, want.1);
                    for (&u, &x) in r.ids.iter().zip(&r.ranks) {
                        let k = ids.binary_search(&u).expect("a returned id is an input id");
                        assert!(got[k].is_nan());
                        got[k] = x;
                    }
                }
                assert_close(&got, &want.0, &format!("in-memory {} p={p} t={threads}", g.name));
            }
        }
    }
}

#[test]
fn numbered_edges_keep_every_numbered_vertex() {
    // "mixed" has vertex 5 in no edge: as a numbered vertex it is one, as in its .mtx.
    let cfg = PageRankConfig::default();
    for g in [special_graphs().remove(0), random_graph(9, 80, 150)] {
        let edges: Vec<(u64, u64)> = g.edges.iter().map(|&(u, v)| (u as u64, v as u64)).collect();
        let n = g.n as u64;
        // Every process passes all edges: duplicates across processes count once.
        check_all(&format!("numbered {}", g.name), &g.declared(), &g.reference_declared(&cfg), move || {
            Input::NumberedEdges { n, edges: edges.clone() }
        });
    }
}

#[test]
fn numbered_edges_out_of_range_or_unequal_counts_fail_on_every_process() {
    let res = run_all(shm, 2, LIMIT, |ctx| {
        let edges = if ctx.pid() == 1 { vec![(0, 3)] } else { vec![(0, 1)] };
        pagerank_spmd(ctx, Input::NumberedEdges { n: 3, edges }, &PageRankConfig::default())
    });
    for r in &res {
        let e = r.as_ref().expect_err("an id >= n is an error").to_string();
        assert!(e.contains("edge 0 of process 1 is (0, 3), but the vertices are numbered 0..3"), "{e}");
    }
    let res = run_all(shm, 2, LIMIT, |ctx| {
        let n = 3 + ctx.pid() as u64;
        pagerank_spmd(ctx, Input::NumberedEdges { n, edges: vec![(0, 1)] }, &PageRankConfig::default())
    });
    for r in &res {
        let e = r.as_ref().expect_err("unequal vertex counts are an error").to_string();
        assert!(e.contains("every process must pass the same count"), "{e}");
    }
}

#[test]
fn p_and_threads_agree_exactly_on_kron() {
    // Per-row sums are the local kernel's, so results differ across p at most by the
    // rounding of the two global sums; iteration counts are identical.
    let params = KronParams::graph500(11, 5);
    let ids = kron_graph(&params).declared();
    let mut first: Option<(Vec<f64>, usize)> = None;
    for p in PS {
        for threads in THREADS {
            let res = run_all(shm, p, LIMIT, move |ctx| {
                pagerank_spmd(ctx, Input::Rmat(params), &PageRankConfig { threads, ..Default::default() })
            });
            let got = assemble(&res, &ids);
            match &first {
                None => first = Some(got),
                Some(f) => {
                    assert_eq!(got.1, f.1);
                    let d = got.0.iter().zip(&f.0).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                    assert!(d < 1e-15, "p={p} t={threads}: max diff {d}");
                }
            }
        }
    }
}
