//! The SuiteSparse side of `bench/kernels.sh` (`bench/gb_kernels.py`, python-graphblas
//! from scripts/setup.sh) is LAGraph's, not a weakened stand-in: its WCC must be
//! LG_CC_FastSV6 with the sampling phase (the giant component found from 4 sampled
//! neighbours per vertex, its edges skipped in the main FastSV loop) and its SSSP
//! LAGraph's delta-stepping (buckets of width delta, light and heavy edges). Each runs on a
//! graph that exercises that path, reports the path's facts, and its result is checked
//! against the references of `common` (union-find, Dijkstra) by gb_kernels.py's --check.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);

/// Runs gb_kernels.py and returns its report line.
fn gb_kernels(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gb_kernels.py");
    let out = run_limited(Command::new("python3").arg(&script).args(args), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "gb_kernels.py {args:?} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout.lines().find(|l| l.starts_with("graphblas ")).unwrap_or_else(|| panic!("no report line: {stdout}")).to_string()
}

/// The value of `key=` in a report line.
fn fact(line: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    line.split(' ')
        .find_map(|w| w.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key}= in: {line}"))
        .to_string()
}

fn number(line: &str, key: &str) -> u64 {
    fact(line, key).parse().unwrap_or_else(|_| panic!("{key}= is not a count in: {line}"))
}

/// A giant component (GIANT vertices: a path through them all plus 6 random edges each)
/// plus 100 paths of 5 vertices and isolated vertices, ids shuffled so that no component
/// is a range: with 2 * 7 * GIANT > 8 n undirected entries, FastSV6 samples (nnz > 8 n,
/// n > 1024).
const N: usize = 3000;
const GIANT: usize = 2400;

fn giant_plus_small_components() -> (Graph, Vec<usize>) {
    let id: Vec<usize> = graphblas::prng::permutation(N, 27).into_iter().map(|v| v as usize).collect();
    let mut rng = graphblas::prng::Xoshiro256::new(5);
    let mut edges = Vec::new();
    for p in 0..GIANT {
        if p + 1 < GIANT {
            edges.push((id[p], id[p + 1]));
        }
        for _ in 0..6 {
            edges.push((id[p], id[rng.below(GIANT as u64) as usize]));
        }
    }
    for start in (GIANT..GIANT + 500).step_by(5) {
        for p in start..start + 4 {
            edges.push((id[p + 1], id[p]));
        }
    }
    (Graph::new("giant plus small components", N, &edges), id)
}

#[test]
fn suitesparse_wcc_is_fastsv6_with_its_sampling_phase() {
    let dir = TempDir::new("gbwcc");
    let (g, id) = giant_plus_small_components();
    let bin = dir.path("g.bin");
    g.binary(&bin);
    let want = reference_wcc(g.n, &g.edges);
    let check: String = want.iter().enumerate().map(|(v, l)| format!("{v} {l}\n")).collect();
    let check = dir.file("wcc.txt", check.as_bytes());
    let line = gb_kernels(&[bin.to_str().unwrap(), "wcc", "--threads", "2", "--check", check.to_str().unwrap()]);
    assert_eq!(fact(&line, "sampled"), "1", "FastSV6's sampling phase did not run: {line}");
    // The component found from the samples is the giant one (its root is a giant vertex),
    // and the main loop skipped the giant's edges: at least the path and random edges'
    // two directions, less what a sample can miss.
    let key = number(&line, "sample_key") as usize;
    assert_eq!(want[key], want[id[0]], "the sampled key is not in the giant component: {line}");
    let sampled_giant = number(&line, "sample_giant") as usize;
    assert!(sampled_giant > GIANT / 2 && sampled_giant <= GIANT, "sampled giant of {sampled_giant} vertices: {line}");
    let skipped = number(&line, "skipped_edges") as usize;
    assert!(skipped > 2 * GIANT * 5, "{skipped} edges skipped in the main loop: {line}");
    assert!(number(&line, "pruned_nnz") < 2 * 500, "the main loop kept the giant's edges: {line}");
    assert_eq!(fact(&line, "equal"), "1", "labels differ from union-find: {line}");
}

#[test]
fn suitesparse_sssp_is_delta_stepping_over_several_buckets() {
    let dir = TempDir::new("gbsssp");
    // weights 0..199 (zeros included) against the benchmark's delta of 29: light and
    // heavy edges, and distances over many buckets
    let g = WeightedGraph::weigh(&random_graph(11, 400, 2400), 3, 200);
    let edges = dir.file("g.wel", g.edge_list().as_bytes());
    let source = g.edges[0].0;
    let want = reference_sssp(g.n, &g.edges, source);
    let (ids, _) = g.named();
    let check: String = ids.iter().map(|&v| format!("{v} {}\n", want[v as usize])).collect();
    let check = dir.file("sssp.txt", check.as_bytes());
    let line = gb_kernels(&[
        edges.to_str().unwrap(),
        "sssp",
        "--source",
        &source.to_string(),
        "--threads",
        "2",
        "--check",
        check.to_str().unwrap(),
    ]);
    assert_eq!(fact(&line, "delta"), "29", "{line}");
    let farthest = want.iter().copied().filter(|d| d.is_finite()).fold(0.0, f64::max);
    assert!(farthest > 3.0 * 29.0, "the test graph's distances span too few buckets ({farthest})");
    let buckets = number(&line, "buckets");
    assert!(buckets as f64 >= (farthest / 29.0).floor(), "{buckets} buckets for distances up to {farthest}: {line}");
    assert!(number(&line, "light_rounds") >= buckets, "{line}");
    assert_eq!(fact(&line, "equal"), "1", "distances differ from Dijkstra: {line}");
}
