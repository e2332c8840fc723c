//! The converted graph (`graph convert`, [`Format::Csr`]): every kernel gives from it
//! exactly what it gives from the input it was converted from (ids, values, rounds, n,
//! nnz), on 1..4 processes with 1 and 2 threads (shm; tcp and hybrid for one case),
//! for sparse ids, weights (SSSP) and declared vertices; a graph converted without
//! weights is SSSP's error; a damaged file is the same error on every process, naming
//! the file; a failed conversion leaves no file. Also the edge-list reader's threads:
//! the same edges and the same first error as one thread.

mod common;

use common::*;
use graphblas::dist::{
    bfs_spmd, cdlp_spmd, convert_to_csr_spmd, kcore_spmd, lcc_spmd, mis_spmd, pagerank_spmd, scc_spmd, sssp_spmd, triangles_spmd,
    wcc_spmd, DistError, Format, Input, VertexValues,
};
use graphblas::io::{read_csr_header, CsrSide};
use graphblas::kron::KronParams;
use graphblas::PageRankConfig;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

/// What a kernel answers, without its times.
fn answer<T: Debug>(r: Result<VertexValues<T>, DistError>) -> String {
    match r {
        Ok(v) => format!("n {} nnz {} first {} rounds {} ids {:?} values {:?}", v.n, v.nnz, v.first_index, v.rounds, v.ids, v.values),
        Err(e) => format!("error {e}"),
    }
}

/// Every kernel's answer on `input` (this process's part); `source` for BFS and SSSP.
fn every_kernel(ctx: &mut lpf::Context, input: &Input, source: u64, threads: usize) -> Vec<String> {
    let i = || input.clone();
    let pr = pagerank_spmd(ctx, i(), &PageRankConfig { threads, ..PageRankConfig::fixed_iterations(5) })
        .map(|r| format!("n {} nnz {} ids {:?} index {:?} ranks {:?} iterations {}", r.n, r.nnz, r.ids, r.index, r.ranks, r.iterations))
        .unwrap_or_else(|e| format!("error {e}"));
    vec![
        answer(bfs_spmd(ctx, i(), source, threads)),
        answer(wcc_spmd(ctx, i(), threads)),
        answer(sssp_spmd(ctx, i(), source, threads)),
        answer(cdlp_spmd(ctx, i(), 3, threads)),
        answer(lcc_spmd(ctx, i(), threads)),
        answer(scc_spmd(ctx, i(), threads)),
        answer(triangles_spmd(ctx, i(), threads)),
        answer(kcore_spmd(ctx, i(), threads)),
        answer(mis_spmd(ctx, i(), 7, threads)),
        pr,
    ]
}

/// An edge list with sparse ids (some beyond 2^32), self-loops and parallel edges of
/// different weights: `(text, the first edge's source)`.
fn sparse_weighted_edges(seed: u64, ids: usize, m: usize) -> (String, u64) {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    let id = |k: u64| if k % 5 == 0 { (1 << 33) + k * 7919 } else { k * k * 13 + 3 };
    let mut text = String::from("# sparse ids\n");
    let mut first = None;
    for e in 0..m {
        let (u, v) = (id(next() % ids as u64), id(next() % ids as u64));
        let v = if e % 17 == 0 { u } else { v };
        first.get_or_insert(u);
        text += &format!("{u} {v} {}\n", 1 + next() % 9);
        if e % 11 == 0 {
            text += &format!("{u} {v} 0.5\n");
        }
    }
    (text, first.unwrap())
}

fn convert(launch: Launcher, p: u32, input: &Input, to: &Path, threads: usize, weighted: bool) -> Vec<Result<(u64, u64), DistError>> {
    let (input, to) = (input.clone(), to.to_path_buf());
    run_all(launch, p, LIMIT, move |ctx| convert_to_csr_spmd(ctx, input.clone(), &to, threads, weighted))
}

fn converted(launch: Launcher, p: u32, input: &Input, to: &Path, weighted: bool) {
    for r in convert(launch, p, input, to, 2, weighted) {
        r.unwrap_or_else(|e| panic!("converting {input:?}: {e}"));
    }
}

/// Every kernel from `a` and from `b` on `p` processes and `threads` threads: each
/// process's answers, by pid.
fn answers(launch: Launcher, p: u32, input: &Input, source: u64, threads: usize) -> Vec<Vec<String>> {
    let input = input.clone();
    run_all(launch, p, LIMIT, move |ctx| every_kernel(ctx, &input, source, threads))
}

/// `x == y`, else a failure showing where they part (the answers are long).
fn assert_same(x: &str, y: &str, tag: &str) {
    if x != y {
        let at = x.bytes().zip(y.bytes()).position(|(a, b)| a != b).unwrap_or(x.len().min(y.len()));
        let from = at.saturating_sub(80);
        let show = |s: &str| s.get(from..(at + 80).min(s.len())).unwrap_or("").to_string();
        panic!("{tag}: answers part at byte {at}:\n  {}\n  {}", show(x), show(y));
    }
}

/// The place of SSSP in [`every_kernel`]'s answers.
const SSSP: usize = 2;

/// Every kernel (but SSSP unless `sssp`) answers the same from `a` and from `b`.
fn assert_same_answers(launch: Launcher, engine: &str, ps: &[u32], a: &Input, b: &Input, source: u64, sssp: bool) {
    for &p in ps {
        for threads in [1, 2] {
            let (x, y) = (answers(launch, p, a, source, threads), answers(launch, p, b, source, threads));
            for (q, (x, y)) in x.iter().zip(&y).enumerate() {
                for (k, (x, y)) in x.iter().zip(y).enumerate().filter(|&(k, _)| sssp || k != SSSP) {
                    assert_same(x, y, &format!("kernel {k}, process {q} of {p} x {threads} on {engine}: {a:?} vs {b:?}"));
                }
            }
        }
    }
}

#[test]
fn every_kernel_answers_the_same_from_the_converted_graph() {
    let dir = TempDir::new("csr-same");
    let (text, source) = sparse_weighted_edges(3, 40, 300);
    let el = Input::File { path: dir.file("g.el", text.as_bytes()), format: Format::Edges };
    let weighted = dir.path("w.gcsr");
    converted(shm, 3, &el, &weighted, true);
    // The file does not depend on the processes that wrote it.
    for p in [1, 2, 4] {
        let again = dir.path(&format!("w{p}.gcsr"));
        converted(shm, p, &el, &again, true);
        assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&weighted).unwrap(), "converted on {p} processes");
    }
    let hdr = read_csr_header(&weighted).unwrap();
    assert!(hdr.has_ids && hdr.has_weights, "{hdr:?}");
    assert_same_answers(shm, "shm", &[1, 2, 3, 4], &el, &Input::file(&weighted), source, true);

    // Declared vertices (isolated ones too) and ids 1..n: MatrixMarket; 0..n: R-MAT,
    // whose file then has no ids section. A file found by its magic, not its name.
    let g = random_graph(9, 30, 70);
    let mtx = Input::file(dir.file("g.mtx", g.mtx_pattern().as_bytes()));
    let from_mtx = dir.path("mtx.graph");
    converted(shm, 2, &mtx, &from_mtx, false);
    assert_same_answers(shm, "shm", &[1, 3], &mtx, &Input::file(&from_mtx), g.edges[0].0 as u64 + 1, false);
    let rmat = Input::Rmat(KronParams::graph500(7, 5));
    let from_rmat = dir.path("rmat.gcsr");
    converted(shm, 2, &rmat, &from_rmat, false);
    assert!(!read_csr_header(&from_rmat).unwrap().has_ids);
    assert_same_answers(shm, "shm", &[1, 2, 4], &rmat, &Input::File { path: from_rmat, format: Format::Csr }, 3, false);
}

#[test]
fn converted_over_tcp_loads_on_hybrid() {
    let dir = TempDir::new("csr-tcp");
    let (text, source) = sparse_weighted_edges(4, 30, 200);
    let el = Input::File { path: dir.file("g.el", text.as_bytes()), format: Format::Edges };
    let to = dir.path("g.gcsr");
    converted(tcp, 2, &el, &to, true);
    let local = dir.path("local.gcsr");
    converted(shm, 1, &el, &local, true);
    assert!(std::fs::read(&to).unwrap() == std::fs::read(&local).unwrap(), "converted over tcp and locally");
    assert_same_answers(hybrid, "hybrid", &[3], &el, &Input::file(&to), source, true);
    assert_same_answers(tcp, "tcp", &[2], &el, &Input::file(&to), source, true);
}

#[test]
fn sssp_needs_a_graph_converted_with_weights() {
    let dir = TempDir::new("csr-sssp");
    let (text, source) = sparse_weighted_edges(5, 20, 60);
    let el = Input::File { path: dir.file("g.el", text.as_bytes()), format: Format::Edges };
    let plain = dir.path("plain.gcsr");
    converted(shm, 2, &el, &plain, false);
    assert!(!read_csr_header(&plain).unwrap().has_weights);
    for p in [1, 3] {
        let input = Input::file(&plain);
        let got = run_all(shm, p, LIMIT, move |ctx| sssp_spmd(ctx, input.clone(), source, 2));
        for r in &got {
            let e = r.as_ref().unwrap_err();
            assert_eq!(e, got[0].as_ref().unwrap_err());
            let s = e.to_string();
            assert!(s.contains(&plain.display().to_string()) && s.contains("SSSP needs edge weights") && s.contains("--weighted"), "{s}");
        }
    }
    // The other kernels run on it as on the input.
    let a = answers(shm, 2, &el, source, 1);
    let b = answers(shm, 2, &Input::file(&plain), source, 1);
    for (x, y) in a.iter().zip(&b) {
        for k in (0..x.len()).filter(|&k| k != SSSP) {
            assert_same(&x[k], &y[k], &format!("kernel {k}"));
        }
    }
}

/// Each process's BFS and WCC (or with `sssp` SSSP's) result on `path`: all must be the
/// same error, naming it.
fn assert_same_error_everywhere(path: &Path, source: u64, says: &str, sssp: bool) {
    for p in [1, 2, 3, 4] {
        let input = Input::file(path);
        let got = run_all(shm, p, LIMIT, move |ctx| {
            let second = if sssp { answer(sssp_spmd(ctx, input.clone(), source, 1)) } else { answer(wcc_spmd(ctx, input.clone(), 1)) };
            vec![answer(bfs_spmd(ctx, input.clone(), source, 2)), second]
        });
        let first = if sssp { &got[0][1] } else { &got[0][0] };
        for r in got.iter().flatten().filter(|r| !sssp || r.starts_with("error")) {
            assert_eq!(r, first, "{} on {p} processes", path.display());
        }
        assert!(first.starts_with(&format!("error {}: ", path.display())) && first.contains(says), "{first} should say {says:?}");
    }
}

#[test]
fn a_damaged_file_is_the_same_error_on_every_process() {
    let dir = TempDir::new("csr-bad");
    let (text, source) = sparse_weighted_edges(6, 40, 400);
    let el = Input::File { path: dir.file("g.el", text.as_bytes()), format: Format::Edges };
    let good_path = dir.path("good.gcsr");
    converted(shm, 2, &el, &good_path, true);
    let good = std::fs::read(&good_path).unwrap();
    let hdr = read_csr_header(&good_path).unwrap();
    let n = hdr.n as usize;
    let damaged = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        dir.file(name, &b)
    };
    for cut in [4, 20, 40, hdr.indices_at(CsrSide::Out) as usize + 6, good.len() / 2, good.len() - 1] {
        let says = if cut < 8 { "bad magic" } else { "truncated" };
        let cut_file = damaged(&format!("cut{cut}.gcsr"), &|b| b.truncate(cut));
        assert_same_error_everywhere(&cut_file, source, says, false);
        assert_same_error_everywhere(&cut_file, source, says, true);
    }
    assert_same_error_everywhere(&damaged("magic.gcsr", &|b| b[3] = b'X'), source, "bad magic", false);
    assert_same_error_everywhere(&damaged("long.gcsr", &|b| b.push(0)), source, "trailing", false);
    // The last out-index of a row near the end set to n.
    let out_idx = hdr.indices_at(CsrSide::Out) as usize;
    let last = out_idx + 4 * (hdr.m as usize - 1);
    assert_same_error_everywhere(&damaged("index.gcsr", &|b| b[last..last + 4].copy_from_slice(&(n as u32).to_le_bytes())), source, "not below the vertex count", false);
    // An in-index that repeats the one before it (a duplicate edge).
    let in_idx = hdr.indices_at(CsrSide::In) as usize;
    let in_off = hdr.offsets_at(CsrSide::In) as usize;
    let offsets: Vec<u64> = good[in_off..in_off + 8 * (n + 1)].chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let row = (0..n).rev().find(|&r| offsets[r + 1] - offsets[r] >= 2).unwrap();
    let at = in_idx + 4 * offsets[row] as usize;
    assert_same_error_everywhere(&damaged("dup.gcsr", &|b| b.copy_within(at..at + 4, at + 4)), source, "not above the index before it", false);
    // Offsets that go down: row 1's start past row 2's.
    let out_off = hdr.offsets_at(CsrSide::Out) as usize;
    let bigger = (hdr.m).to_le_bytes();
    assert_same_error_everywhere(&damaged("offsets.gcsr", &|b| b[out_off + 8..out_off + 16].copy_from_slice(&bigger)), source, "below the previous row's", false);
    let beyond = (hdr.m + 1).to_le_bytes();
    assert_same_error_everywhere(&damaged("past.gcsr", &|b| b[in_off + 16..in_off + 24].copy_from_slice(&beyond)), source, "in-edge offset of row 2", false);
    // Ids out of order.
    assert_same_error_everywhere(&damaged("ids.gcsr", &|b| b.copy_within(40..48, 32)), source, "vertex ids not strictly ascending", false);
    let weight = damaged("weight.gcsr", &|b| {
        let w = hdr.weights_at() as usize + 8;
        b[w..w + 8].copy_from_slice(&(-1.0f64).to_le_bytes())
    });
    assert_same_error_everywhere(&weight, source, "negative", true);
    assert_same_error_everywhere(&dir.path("missing.gcsr"), source, "cannot open", false);
}

#[test]
fn a_failed_conversion_writes_nothing() {
    let dir = TempDir::new("csr-fail");
    let bad = dir.file("bad.el", b"1 2 1\n2 3 1\n3 x 1\n");
    let to = dir.path("out.gcsr");
    for p in [1, 2, 3] {
        let cases = [
            (Input::File { path: bad.clone(), format: Format::Edges }, false, format!("{}:3:", bad.display())),
            (Input::Rmat(KronParams::graph500(5, 1)), true, "needs edge weights".to_string()),
        ];
        for (input, weighted, says) in cases {
            let got = convert(shm, p, &input, &to, 2, weighted);
            for r in &got {
                assert_eq!(r, &got[0]);
                let e = r.as_ref().unwrap_err().to_string();
                assert!(e.contains(&says), "{e} should say {says}");
            }
            assert_eq!(dir.listing(), vec!["bad.el"], "no output, no partial file");
        }
    }
    let nowhere = PathBuf::from("/nonexistent-dir/out.gcsr");
    let got = convert(shm, 2, &Input::Rmat(KronParams::graph500(5, 1)), &nowhere, 1, false);
    assert!(matches!(&got[1], Err(DistError::Output { .. })), "{got:?}");
}

/// An edge list of `m` lines with ids that need 64 bits in some parts only, and a
/// weight column.
fn long_edge_list(m: usize) -> String {
    let mut text = String::new();
    for e in 0..m as u64 {
        let u = if e % 1000 == 999 { (1u64 << 40) + e } else { e * 31 % 5003 };
        text += &format!("{u} {} {}\n", (e * 17 + 5) % 4001, e % 7);
    }
    text
}

#[test]
fn the_edge_list_reader_threads_read_what_one_thread_reads() {
    let dir = TempDir::new("csr-threads");
    let text = long_edge_list(40_000);
    assert!(text.len() > 4 << 16, "large enough for 4 threads' parts");
    let el = Input::File { path: dir.file("g.el", text.as_bytes()), format: Format::Edges };
    for p in [1, 2] {
        let one = answers(shm, p, &el, 5, 1);
        for threads in [2, 3, 4] {
            for (q, (x, y)) in answers(shm, p, &el, 5, threads).iter().zip(&one).enumerate() {
                for (k, (x, y)) in x.iter().zip(y).enumerate() {
                    // SCC's and MIS's round counts depend on their threads (whatever
                    // the input): the graph shows in n, nnz, the ids and the values.
                    let values = |s: &str| match (s.find(" rounds"), s.find(" ids")) {
                        (Some(a), Some(b)) => format!("{}{}", &s[..a], &s[b..]),
                        _ => s.to_string(),
                    };
                    assert_same(&values(x), &values(y), &format!("kernel {k}, process {q} of {p} x {threads}"));
                }
            }
        }
    }
    // Two bad lines, in the first and the second half: the first is the error whatever
    // the threads.
    let mut lines: Vec<&str> = text.lines().collect();
    let (a, b) = (lines.len() * 2 / 5, lines.len() * 4 / 5);
    lines[a] = "1 2 3 4";
    lines[b] = "x 1";
    let bad = dir.file("bad.el", (lines.join("\n") + "\n").as_bytes());
    for threads in [1, 2, 4] {
        let input = Input::File { path: bad.clone(), format: Format::Edges };
        let got = run_all(shm, 1, LIMIT, move |ctx| answer(wcc_spmd(ctx, input.clone(), threads)));
        assert!(got[0].contains(&format!("{}:{}: too many fields", bad.display(), a + 1)), "{threads} threads: {}", got[0]);
    }
}
