//! The `pagerank` binary: output files, progress and summary, conversion, errors.

mod common;

use common::*;
use graphblas_pagerank::kron::{kron_matrix, KronParams};
use graphblas_pagerank::{pagerank, PageRankConfig};
use std::process::{Command, Output};

fn pagerank_bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pagerank")).args(args).output().expect("run pagerank")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parses an output file into (ids, ranks).
fn read_ranks(path: &std::path::Path) -> (Vec<u64>, Vec<f64>) {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse::<u64>().unwrap(), b.parse::<f64>().unwrap())
        })
        .unzip()
}

#[test]
fn mtx_and_edge_list_outputs_match_the_reference() {
    let dir = TempDir::new("cli");
    let g = random_graph(21, 80, 300);
    let want = g.reference(&PageRankConfig::default());
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let max_id = g.edges.iter().map(|&(u, v)| u.max(v)).max().unwrap();
    for (input, base, n) in [(&mtx, 1u64, g.n), (&el, 0, max_id + 1)] {
        for (p, t) in [("1", "1"), ("3", "2")] {
            let out = dir.path("ranks.txt");
            let o = pagerank_bin(&["--input", input.to_str().unwrap(), "-p", p, "--threads", t, "--output", out.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
            let (ids, ranks) = read_ranks(&out);
            assert_eq!(ids, (base..base + n as u64).collect::<Vec<_>>());
            if n == g.n {
                assert_close(&ranks, &want.0, &format!("cli {} p={p}", input.display()));
            } else {
                let sub = Graph::new("el", n, &g.edges).reference(&PageRankConfig::default());
                assert_close(&ranks, &sub.0, "cli edge list");
            }
            let err = stderr(&o);
            assert!(err.contains("iteration 1: residual"), "{err}");
            let summary = String::from_utf8_lossy(&o.stdout);
            assert!(summary.contains(&format!("iterations={}", want.1)) || n != g.n, "{summary}");
            assert!(summary.contains("s_per_iter="), "{summary}");
            std::fs::remove_file(&out).unwrap();
        }
    }
}

#[test]
fn rmat_convert_and_reload() {
    let dir = TempDir::new("cliconv");
    let bin = dir.path("k.bin");
    let o = pagerank_bin(&["--rmat", "9", "--seed", "4", "-p", "2", "--convert-to", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = kron_matrix(&KronParams::graph500(9, 4), 1).unwrap();
    let want = pagerank(&a, &PageRankConfig::default()).unwrap();
    for args in [vec!["--rmat", "9", "--seed", "4"], vec!["--input", bin.to_str().unwrap(), "--format", "bin"]] {
        let out = dir.path("r.txt");
        let mut all = args.clone();
        all.extend(["-p", "4", "--threads", "2", "--quiet", "--output", out.to_str().unwrap()]);
        let o = pagerank_bin(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("iteration 1:"), "--quiet");
        let (ids, ranks) = read_ranks(&out);
        assert_eq!(ids.len(), 512);
        assert_close(&ranks, &want.ranks, &format!("{args:?}"));
    }
}

#[test]
fn bad_input_fails_with_file_and_line_and_no_output() {
    let dir = TempDir::new("clibad");
    let bad = dir.file("bad.mtx", b"%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 q\n3 1\n");
    let out = dir.path("out.txt");
    for p in ["1", "3"] {
        let o = pagerank_bin(&["--input", bad.to_str().unwrap(), "-p", p, "--output", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.contains(&format!("{}:4:", bad.display())), "{err}");
        assert_eq!(dir.listing(), vec!["bad.mtx".to_string()]);
    }
    let o = pagerank_bin(&["--input", dir.path("missing.edges").to_str().unwrap(), "-p", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.edges"), "{}", stderr(&o));
    let o = pagerank_bin(&["--input", "x.unknown"]);
    assert_eq!(o.status.code(), Some(1));
    // Usage errors.
    assert_eq!(pagerank_bin(&["--rmat", "5", "--threads", "0"]).status.code(), Some(2));
    assert_eq!(pagerank_bin(&["--bogus"]).status.code(), Some(2));
    assert_eq!(pagerank_bin(&[]).status.code(), Some(2));
    // An engine LPF does not know: the error of the LPF root, exit 1.
    let o = Command::new(env!("CARGO_BIN_EXE_pagerank")).args(["--rmat", "5"]).env("LPF_ENGINE", "nosuch").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
}
