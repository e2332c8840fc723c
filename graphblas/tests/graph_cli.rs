//! The `graph` binary: `graph bfs`, `wcc`, `sssp`, `cdlp`, `lcc` and `pr` end to end on every engine the
//! tests launch (shm in-process, tcp and hybrid under `lpfrun`), outputs against the
//! references of `common` (a queue BFS, a union-find, Dijkstra, a label-propagation loop,
//! LCC from its definition, power iteration), errors and usage. Every run is
//! bounded (`run_limited`).

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn graph(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_graph"));
    c.args(args);
    c
}

fn under_lpfrun(engine: &str, args: &[&str]) -> Command {
    let mut c = Command::new(lpfrun());
    c.args(["-n", "2", "--engine", engine]);
    if engine == "hybrid" {
        c.args(["--threads", "2"]);
    }
    c.arg("--").arg(env!("CARGO_BIN_EXE_graph")).args(args);
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `id value` lines.
fn read_values(path: &Path) -> (Vec<u64>, Vec<i64>) {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse::<u64>().unwrap(), b.parse::<i64>().unwrap())
        })
        .unzip()
}

/// A graph with isolated declared vertices, a self-loop, duplicates and 4+ components.
fn test_graph() -> Graph {
    let mut g = random_graph(5, 40, 30);
    g.edges.extend([(2, 2), (7, 8), (7, 8)]);
    g
}

#[test]
fn bfs_and_wcc_outputs_match_the_references_on_every_engine() {
    let dir = TempDir::new("gcli");
    let g = test_graph();
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let source = g.edges[0].0;
    let named = g.named();
    let k = |v: usize| named.binary_search(&(v as u64)).unwrap();
    let named_edges: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (k(u), k(v))).collect();
    // (input, ids, BFS reference, WCC reference in ids, source id)
    let mtx_ids: Vec<u64> = (1..=g.n as u64).collect();
    let cases = [
        (&mtx, mtx_ids.clone(), reference_bfs(g.n, &g.edges, source), reference_wcc(g.n, &g.edges).iter().map(|&r| mtx_ids[r] as i64).collect::<Vec<_>>(), source as u64 + 1),
        (&el, named.clone(), reference_bfs(named.len(), &named_edges, k(source)), reference_wcc(named.len(), &named_edges).iter().map(|&r| named[r] as i64).collect(), source as u64),
    ];
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("shm", vec!["-p", "1"]),
        ("shm", vec!["-p", "3", "--threads", "2"]),
        ("tcp", vec![]),
        ("hybrid", vec![]),
    ];
    for (input, ids, bfs_want, wcc_want, src) in &cases {
        for (engine, extra) in &runs {
            for kernel in ["bfs", "wcc"] {
                let out = dir.path(&format!("{kernel}-{engine}.txt"));
                let src = src.to_string();
                let mut args = vec![kernel, "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()];
                if kernel == "bfs" {
                    args.extend(["--source", &src]);
                }
                args.extend(extra.iter().copied());
                let mut cmd = if *engine == "shm" { graph(&args) } else { under_lpfrun(engine, &args) };
                let o = run_limited(&mut cmd, LIMIT);
                let tag = format!("{kernel} {} [{engine} {extra:?}]", input.display());
                assert!(o.status.success(), "{tag}: {}", stderr(&o));
                let so = String::from_utf8_lossy(&o.stdout);
                assert_eq!(so.matches("summary ").count(), 1, "{tag}: one summary: {so}");
                assert!(so.contains(&format!("summary kernel={kernel} n={} ", ids.len())), "{tag}: {so}");
                let (got_ids, values) = read_values(&out);
                assert_eq!(&got_ids, ids, "{tag}");
                assert_eq!(&values, if kernel == "bfs" { bfs_want } else { wcc_want }, "{tag}");
                std::fs::remove_file(&out).unwrap();
            }
        }
    }
}

#[test]
fn bad_input_fails_everywhere_with_no_output() {
    let dir = TempDir::new("gclibad");
    let el = dir.file("g.el", b"1 2\n2 3\n");
    let bad = dir.file("bad.el", b"1 2\n2 x\n");
    let out = dir.path("out.txt");
    let o_ = out.to_str().unwrap();
    for engine in ["shm", "tcp"] {
        let cmd = |args: &[&str]| if engine == "shm" { graph(&[args, &["-p", "2"]].concat()) } else { under_lpfrun(engine, args) };
        // A source that is no vertex: exit 1, the message naming it, no output file.
        let o = run_limited(&mut cmd(&["bfs", "--source", "7", "--input", el.to_str().unwrap(), "-o", o_]), LIMIT);
        assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
        assert!(stderr(&o).contains("the BFS source 7 is not a vertex of the graph"), "{engine}: {}", stderr(&o));
        // A malformed line: file:line, for both kernels.
        for kernel in [&["wcc"][..], &["bfs", "--source", "1"]] {
            let o = run_limited(&mut cmd(&[kernel, &["--input", bad.to_str().unwrap(), "-o", o_]].concat()), LIMIT);
            assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
            assert!(stderr(&o).contains(&format!("{}:2:", bad.display())), "{engine}: {}", stderr(&o));
        }
        assert_eq!(dir.listing(), vec!["bad.el", "g.el"], "{engine}: no output, no partial file");
    }
    // Usage errors: exit 2 naming the problem.
    for (args, says) in [
        (vec!["bfs", "--input", "x.el"], "bfs needs --source"),
        (vec!["pagerank"], "unknown kernel"),
        (vec!["wcc", "--source", "1", "--input", "x.el"], "unknown argument \"--source\""),
        (vec!["bfs", "--source", "1", "--input", "x.el", "--direction", "up"], "unknown direction"),
        (vec!["wcc", "--iterations", "3", "--input", "x.el"], "unknown argument \"--iterations\""),
        (vec!["cdlp", "--iterations", "x", "--input", "x.el"], "--iterations"),
        (vec!["wcc", "--input", "x.el", "--rmat", "4"], "exactly one of"),
        (vec!["wcc", "--rmat", "4", "--threads", "0"], "at least 1"),
    ] {
        let o = run_limited(&mut graph(&args), LIMIT);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn rmat_runs_and_reports() {
    let o = run_limited(&mut graph(&["wcc", "--rmat", "10", "-p", "2", "--threads", "2"]), LIMIT);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("summary kernel=wcc n=1024 "));
    let o = run_limited(&mut graph(&["bfs", "--rmat", "10", "--source", "0", "--direction", "push"]), LIMIT);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Under `lpfrun` every OS process prints the agreed error at the same moment into the
/// shared stderr; each message must arrive as one intact line. Before, `eprintln!`
/// wrote a line in several pieces and two processes' pieces interleaved
/// ("graphgraph: error: : error: ..."): about 1 run in 10 on tcp, so 20 runs caught it
/// nearly always.
#[test]
fn errors_of_several_processes_arrive_as_whole_lines() {
    let dir = TempDir::new("gcliline");
    let bad = dir.file("bad.el", b"1 2\n2 x\n");
    let want = format!("graph: error: {}:2: target id is not a valid non-negative integer", bad.display());
    for run in 0..20 {
        let o = run_limited(&mut under_lpfrun("tcp", &["wcc", "--input", bad.to_str().unwrap()]), LIMIT);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert!(!lines.is_empty() && lines.iter().all(|l| *l == want), "run {run}: garbled error lines:\n{err}");
    }
}

/// `id distance` lines (`infinity` where the source does not lead).
fn read_distances(path: &Path) -> (Vec<u64>, Vec<f64>) {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse::<u64>().unwrap(), if b == "infinity" { f64::INFINITY } else { b.parse::<f64>().unwrap() })
        })
        .unzip()
}

#[test]
fn sssp_outputs_match_dijkstra_on_every_engine() {
    let dir = TempDir::new("gclisssp");
    // Integer-valued weights 0..5 (zeros included; sums exact), a self-loop, a duplicate
    // pair of different weights, isolated declared vertices, several components.
    let mut g = WeightedGraph::weigh(&test_graph(), 3, 5);
    g.edges.extend([(2, 2, 1.0), (7, 8, 4.0), (7, 8, 2.0)]);
    let mtx = dir.file("g.mtx", g.mtx("integer").as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let source = g.edges[0].0;
    let (named, named_edges) = g.named();
    let k = named.binary_search(&(source as u64)).unwrap();
    let cases = [
        (&mtx, (1..=g.n as u64).collect::<Vec<_>>(), reference_sssp(g.n, &g.edges, source), source as u64 + 1),
        (&el, named.clone(), reference_sssp(named.len(), &named_edges, k), source as u64),
    ];
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("shm", vec!["-p", "1"]),
        ("shm", vec!["-p", "3", "--threads", "2"]),
        ("shm", vec!["-p", "2", "--delta", "0.001"]),
        ("shm", vec!["-p", "2", "--threads", "2", "--delta", "inf"]),
        ("tcp", vec![]),
        ("hybrid", vec![]),
    ];
    for (input, ids, want, src) in &cases {
        assert!(want.iter().any(|d| d.is_infinite()) && want.iter().filter(|d| d.is_finite()).count() > 2, "a useful test graph");
        for (engine, extra) in &runs {
            let out = dir.path(&format!("sssp-{engine}.txt"));
            let src = src.to_string();
            let mut args = vec!["sssp", "--source", &src, "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()];
            args.extend(extra.iter().copied());
            let mut cmd = if *engine == "shm" { graph(&args) } else { under_lpfrun(engine, &args) };
            let o = run_limited(&mut cmd, LIMIT);
            let tag = format!("sssp {} [{engine} {extra:?}]", input.display());
            assert!(o.status.success(), "{tag}: {}", stderr(&o));
            let so = String::from_utf8_lossy(&o.stdout);
            assert_eq!(so.matches("summary ").count(), 1, "{tag}: one summary: {so}");
            assert!(so.contains(&format!("summary kernel=sssp n={} ", ids.len())), "{tag}: {so}");
            assert_eq!(&read_distances(&out), &(ids.clone(), want.clone()), "{tag}");
            std::fs::remove_file(&out).unwrap();
        }
    }
}

#[test]
fn sssp_bad_input_fails_everywhere_with_no_output() {
    let dir = TempDir::new("gclisssbad");
    let el = dir.file("g.el", b"1 2 1\n2 3 0\n");
    let neg = dir.file("neg.el", b"1 2 1\n2 3 -0.5\n");
    let pattern = dir.file("p.mtx", b"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n");
    let out = dir.path("out.txt");
    let o_ = out.to_str().unwrap();
    for engine in ["shm", "tcp"] {
        let cmd = |args: &[&str]| if engine == "shm" { graph(&[args, &["-p", "2"]].concat()) } else { under_lpfrun(engine, args) };
        for (file, source, says) in [
            (&el, "7", format!("{}: the SSSP source 7 is not a vertex of the graph", el.display())),
            (&neg, "1", format!("{}:2: weight -0.5 is negative", neg.display())),
            (&pattern, "1", format!("{}:1: SSSP needs edge weights", pattern.display())),
        ] {
            let o = run_limited(&mut cmd(&["sssp", "--source", source, "--input", file.to_str().unwrap(), "-o", o_]), LIMIT);
            assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
            assert!(stderr(&o).contains(&says), "{engine}: {} should say {says}", stderr(&o));
        }
        assert_eq!(dir.listing(), vec!["g.el", "neg.el", "p.mtx"], "{engine}: no output, no partial file");
    }
    let o = run_limited(&mut graph(&["sssp", "--input", "x.el"]), LIMIT);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sssp needs --source"), "{}", stderr(&o));
    for delta in ["0", "-2", "NaN", "x"] {
        let o = run_limited(&mut graph(&["sssp", "--source", "1", "--input", el.to_str().unwrap(), "--delta", delta]), LIMIT);
        assert_eq!(o.status.code(), Some(2), "--delta {delta}: {}", stderr(&o));
    }
    let o = run_limited(&mut graph(&["bfs", "--source", "1", "--input", el.to_str().unwrap(), "--delta", "2"]), LIMIT);
    assert_eq!(o.status.code(), Some(2), "--delta is SSSP's: {}", stderr(&o));
}

#[test]
fn cdlp_outputs_match_the_plain_loop_on_every_engine() {
    let dir = TempDir::new("gclicdlp");
    let g = test_graph();
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let named = g.named();
    let k = |v: usize| named.binary_search(&(v as u64)).unwrap();
    let named_edges: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (k(u), k(v))).collect();
    let mtx_ids: Vec<u64> = (1..=g.n as u64).collect();
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("shm", vec!["-p", "1"]),
        ("shm", vec!["-p", "3", "--threads", "2"]),
        ("tcp", vec![]),
        ("hybrid", vec![]),
    ];
    // (input, ids, edges on 0..ids.len(), --iterations or the default 10)
    for (input, ids, edges) in [(&mtx, &mtx_ids, &g.edges), (&el, &named, &named_edges)] {
        for iterations in [None, Some(3)] {
            let want: Vec<i64> = reference_cdlp(ids.len(), edges, iterations.unwrap_or(10)).iter().map(|&r| ids[r] as i64).collect();
            for (engine, extra) in &runs {
                let out = dir.path(&format!("cdlp-{engine}.txt"));
                let mut args = vec!["cdlp", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()];
                let it = iterations.map(|i: usize| i.to_string());
                if let Some(i) = &it {
                    args.extend(["--iterations", i]);
                }
                args.extend(extra.iter().copied());
                let mut cmd = if *engine == "shm" { graph(&args) } else { under_lpfrun(engine, &args) };
                let o = run_limited(&mut cmd, LIMIT);
                let tag = format!("cdlp {} {iterations:?} [{engine} {extra:?}]", input.display());
                assert!(o.status.success(), "{tag}: {}", stderr(&o));
                let so = String::from_utf8_lossy(&o.stdout);
                assert_eq!(so.matches("summary ").count(), 1, "{tag}: one summary: {so}");
                assert!(so.contains(&format!("summary kernel=cdlp n={} ", ids.len())), "{tag}: {so}");
                assert!(so.contains(&format!(" rounds={} ", iterations.unwrap_or(10))), "{tag}: {so}");
                assert_eq!(read_values(&out), (ids.clone(), want.clone()), "{tag}");
                std::fs::remove_file(&out).unwrap();
            }
        }
    }
}

/// `graph lcc` and `graph pr` (Graphalytics' `--iterations N` and the tolerance mode)
/// on every engine: ids as in the input, values within 1e-12 of the references of
/// `common` (the definition with sets; plain power iteration).
#[test]
fn lcc_and_pr_outputs_match_the_references_on_every_engine() {
    let dir = TempDir::new("gclilccpr");
    let mut g = test_graph();
    // Triangles with reciprocal edges, so that coefficients are neither 0 nor 1 only.
    g.edges.extend([(10, 11), (11, 12), (12, 10), (11, 10), (10, 13), (13, 12)]);
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let named = g.named();
    let k = |v: usize| named.binary_search(&(v as u64)).unwrap();
    let named_edges: Vec<(usize, usize)> = g.edges.iter().map(|&(u, v)| (k(u), k(v))).collect();
    let mtx_ids: Vec<u64> = (1..=g.n as u64).collect();
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("shm", vec!["-p", "1"]),
        ("shm", vec!["-p", "3", "--threads", "2"]),
        ("tcp", vec![]),
        ("hybrid", vec![]),
    ];
    for (input, ids, edges) in [(&mtx, &mtx_ids, &g.edges), (&el, &named, &named_edges)] {
        let lcc = reference_lcc(ids.len(), edges);
        assert!(lcc.iter().any(|&c| c > 0.0 && c < 1.0), "a useful test graph");
        let pr = reference_pagerank_fixed(ids.len(), edges, 0.85, 20);
        let kernels: [(&str, &[&str], &Vec<f64>, usize); 2] = [("lcc", &[], &lcc, 1), ("pr", &["--iterations", "20"], &pr, 20)];
        for (kernel, opts, want, rounds) in kernels {
            for (engine, extra) in &runs {
                let out = dir.path(&format!("{kernel}-{engine}.txt"));
                let mut args = vec![kernel, "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()];
                args.extend(opts.iter().copied());
                args.extend(extra.iter().copied());
                let mut cmd = if *engine == "shm" { graph(&args) } else { under_lpfrun(engine, &args) };
                let o = run_limited(&mut cmd, LIMIT);
                let tag = format!("{kernel} {} [{engine} {extra:?}]", input.display());
                assert!(o.status.success(), "{tag}: {}", stderr(&o));
                let so = String::from_utf8_lossy(&o.stdout);
                assert_eq!(so.matches("summary ").count(), 1, "{tag}: one summary: {so}");
                assert!(so.contains(&format!("summary kernel={kernel} n={} ", ids.len())) && so.contains(&format!(" rounds={rounds} ")), "{tag}: {so}");
                let (got_ids, got) = read_distances(&out);
                assert_eq!(&got_ids, ids, "{tag}");
                for (v, (x, y)) in got.iter().zip(want.iter()).enumerate() {
                    assert!((x - y).abs() <= 1e-12, "{tag}: vertex {}: {x} vs {y}", ids[v]);
                }
                std::fs::remove_file(&out).unwrap();
            }
        }
    }
    // The tolerance mode stays: it stops before 1000 iterations, near the fixed point.
    let out = dir.path("pr-tol.txt");
    let o = run_limited(&mut graph(&["pr", "--input", el.to_str().unwrap(), "--tol", "1e-13", "-p", "2", "-o", out.to_str().unwrap()]), LIMIT);
    assert!(o.status.success(), "{}", stderr(&o));
    let so = String::from_utf8_lossy(&o.stdout);
    let rounds: usize = so.split(" rounds=").nth(1).and_then(|r| r.split(' ').next()).and_then(|r| r.parse().ok()).expect("rounds in the summary");
    assert!(rounds > 20 && rounds < 1000, "{so}");
    let (_, got) = read_distances(&out);
    let want = reference_pagerank_fixed(named.len(), &named_edges, 0.85, rounds);
    assert!(got.iter().zip(&want).all(|(x, y)| (x - y).abs() <= 1e-12), "tolerance mode");
}

#[test]
fn lcc_and_pr_bad_input_and_usage() {
    let dir = TempDir::new("gclilccbad");
    let bad = dir.file("bad.el", b"1 2\n2 x\n");
    let out = dir.path("out.txt");
    let o_ = out.to_str().unwrap();
    for engine in ["shm", "tcp"] {
        let cmd = |args: &[&str]| if engine == "shm" { graph(&[args, &["-p", "2"]].concat()) } else { under_lpfrun(engine, args) };
        for kernel in [&["lcc"][..], &["pr", "--iterations", "5"]] {
            let o = run_limited(&mut cmd(&[kernel, &["--input", bad.to_str().unwrap(), "-o", o_]].concat()), LIMIT);
            assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
            assert!(stderr(&o).contains(&format!("{}:2:", bad.display())), "{engine}: {}", stderr(&o));
        }
        assert_eq!(dir.listing(), vec!["bad.el"], "{engine}: no output, no partial file");
    }
    for (args, says) in [
        (vec!["pr", "--iterations", "5", "--tol", "1e-9", "--input", "x.el"], "not both"),
        (vec!["pr", "--damping", "1.5", "--input", "x.el"], "alpha must be in [0, 1], got 1.5 (alpha is --damping"),
        (vec!["pr", "--tol", "-1", "--input", "x.el"], "tol must be a finite number >= 0, got -1"),
        (vec!["lcc", "--iterations", "3", "--input", "x.el"], "unknown argument \"--iterations\""),
        (vec!["lcc", "--source", "1", "--input", "x.el"], "unknown argument \"--source\""),
    ] {
        let o = run_limited(&mut graph(&args), LIMIT);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

/// `cmd` whose process runs with `resource` limited to `value` (soft and hard), and
/// with `as_nobody` as user nobody when this test runs as root (RLIMIT_NPROC does not
/// bind root).
fn limited(mut cmd: Command, resource: libc::__rlimit_resource_t, value: libc::rlim_t, as_nobody: bool) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (setrlimit, setgroups, setgid, setuid) in
    // the forked child before exec; nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: value, rlim_max: value };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if as_nobody && libc::geteuid() == 0 && (libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(65534) != 0 || libc::setuid(65534) != 0) {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// A failure of `graph` that is an error message, not a crash: exit status 1, one
/// `graph: error:` line containing `says`, and no panic text.
fn assert_resource_error(o: &Output, says: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: {}\n{err}", o.status);
    assert!(err.contains("graph: error: ") && err.contains(says), "{what}: {err}");
    for crash in ["panicked", "RUST_BACKTRACE", "stack backtrace", "fatal runtime error"] {
        assert!(!err.contains(crash), "{what}: {crash:?} in\n{err}");
    }
}

/// Issue 24 item 4: more kernel threads than fit under `ulimit -v 4000000` (the issue's
/// run: `--engine hybrid -p 2 --threads 60000`, and on shm) are an error naming the
/// thread count and the limit. Before, `scope.spawn` panicked inside
/// `graphblas::parallel::run_blocks` and the panic text reached the user.
#[test]
fn threads_beyond_the_address_space_limit_are_an_error_naming_them() {
    for run in [&["--engine", "hybrid", "-p", "2"][..], &["-p", "1"]] {
        let args = [&["wcc", "--rmat", "8", "--threads", "60000"], run].concat();
        let cmd = limited(graph(&args), libc::RLIMIT_AS, 4_000_000 * 1024, false);
        let o = run_limited(&mut { cmd }, LIMIT);
        assert_resource_error(&o, "cannot run on 60000 threads", &format!("{args:?}"));
        assert!(stderr(&o).contains("address-space limit (ulimit -v)"), "{args:?}: {}", stderr(&o));
    }
    // A count no process could ever run is refused before anything is sized by it
    // (its block tables alone were a 32 GB allocation, which aborted).
    let o = run_limited(&mut graph(&["wcc", "--rmat", "8", "-p", "2", "--threads", "4000000000"]), LIMIT);
    assert_resource_error(&o, "cannot run on 4000000000 threads: more than the 65535", "--threads 4000000000");
}

/// Issue 24 item 4: threads the OS refuses part-way (here `ulimit -u`) are the same
/// error, after the threads already started have been joined.
#[test]
fn threads_the_os_refuses_are_an_error_naming_them() {
    // User nobody (when this runs as root) may not reach the build's binary (a checkout
    // under /root): it runs a copy in a directory of its own that anyone may read.
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("nproc");
    let exe = dir.path("graph");
    std::fs::copy(env!("CARGO_BIN_EXE_graph"), &exe).unwrap();
    for p in [&dir.0, &exe] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut copy = Command::new(&exe);
    copy.args(["wcc", "--rmat", "8", "-p", "1", "--threads", "60"]);
    let cmd = limited(copy, libc::RLIMIT_NPROC, 10, true);
    let o = run_limited(&mut { cmd }, LIMIT);
    assert_resource_error(&o, "cannot run on 60 threads: the OS refused to create a thread", "ulimit -u 10");
}

/// Issue 24 item 5: the engine is what LPF's configuration says it is. `LPF_ENGINE=" shm"`
/// is shm (LPF trims it) and runs one process; before, the CLI compared the raw string,
/// took " shm" for a network engine and started a section of 65535 threads. A value LPF
/// refuses ("SHM", "nosuch") is its error naming the variable; `--engine` takes the
/// registry's names and aliases.
#[test]
fn the_engine_is_what_lpf_configuration_says() {
    let run = |env: Option<&str>, extra: &[&str]| {
        let mut c = graph(&[&["wcc", "--rmat", "6"], extra].concat());
        if let Some(v) = env {
            c.env("LPF_ENGINE", v);
        }
        run_limited(&mut c, LIMIT)
    };
    for v in [" shm", "shm ", "\tpthread\n", ""] {
        let o = run(Some(v), &[]);
        assert!(o.status.success(), "LPF_ENGINE={v:?}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(" p=1 "), "LPF_ENGINE={v:?}: one process by default");
    }
    for v in ["SHM", "nosuch", "s hm"] {
        let o = run(Some(v), &[]);
        assert_resource_error(&o, &format!("LPF_ENGINE={v:?}: expected shm (pthread, threads), tcp, hybrid"), v);
    }
    for alias in ["pthread", "threads", "shm"] {
        let o = run(None, &["--engine", alias, "-p", "2"]);
        assert!(o.status.success(), "--engine {alias}: {}", stderr(&o));
    }
    let o = run(None, &["--engine", "nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--engine: \"nosuch\" names no engine of this library (known: shm (pthread, threads), tcp"), "{}", stderr(&o));
}

/// Issue 24 item 5: graphblas's own variables are parsed in one place, and a bad value is
/// an error naming it (before, `GBPR_RELABEL=dense` or `GBPR_DEBUG=no` were silently
/// taken as "auto" and "on", and a bad `GBPR_PROC_ROW_COST` as the defaults).
#[test]
fn gbpr_variables_are_checked() {
    let dir = TempDir::new("gbpr");
    let el = dir.file("g.el", test_graph().edge_list().as_bytes());
    let run = |kernel: &[&str], var: &str, value: &str| {
        let mut c = graph(&[kernel, &["--input", el.to_str().unwrap(), "-p", "2"]].concat());
        run_limited(c.env(var, value), LIMIT)
    };
    for (var, bad, allowed) in [
        ("GBPR_RELABEL", "dense", "auto or sparse"),
        ("GBPR_DEBUG", "no", "0 or 1"),
        ("GBPR_PROC_ROW_COST", "12,x", "A or A,B (non-negative integers)"),
        ("GBPR_PROC_ROW_COST", "1,2,3", "A or A,B (non-negative integers)"),
    ] {
        let o = run(&["pr"], var, bad);
        assert_resource_error(&o, &format!("{var}={bad:?}: expected {allowed}"), var);
        assert!(o.stdout.is_empty(), "{var}={bad:?}: no summary");
    }
    // Valid values take effect: the forced sparse relabelling gives the same result, the
    // debug line appears, and the empty value is unset.
    let plain = run(&["wcc", "--output", dir.path("a.txt").to_str().unwrap()], "GBPR_RELABEL", "");
    let sparse = run(&["wcc", "--output", dir.path("b.txt").to_str().unwrap()], "GBPR_RELABEL", "sparse");
    assert!(plain.status.success() && sparse.status.success(), "{}{}", stderr(&plain), stderr(&sparse));
    assert_eq!(read_values(&dir.path("a.txt")), read_values(&dir.path("b.txt")));
    let o = run(&["pr", "--iterations", "3"], "GBPR_DEBUG", "1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches(": rows ").count(), 2, "one debug line per process: {}", stderr(&o));
}

#[test]
fn convert_writes_a_graph_every_kernel_loads_with_the_same_output() {
    let dir = TempDir::new("gcliconv");
    let g = test_graph();
    let el = dir.file("g.el", g.edge_list().as_bytes());
    let to = dir.path("g.gcsr");
    let o = run_limited(&mut graph(&["convert", "--input", el.to_str().unwrap(), "--to", to.to_str().unwrap(), "-p", "2", "--threads", "2"]), LIMIT);
    assert!(o.status.success(), "{}", stderr(&o));
    let so = String::from_utf8_lossy(&o.stdout);
    assert!(so.contains("summary kernel=convert ") && so.contains(&format!("converted to {}", to.display())), "{so}");
    let source = g.edges[0].0.to_string();
    for (kernel, extra) in [("bfs", vec!["--source", source.as_str()]), ("wcc", vec![])] {
        let outputs: Vec<(Vec<u64>, Vec<i64>)> = [&el, &to]
            .iter()
            .map(|input| {
                let out = dir.path(&format!("{kernel}.txt"));
                let mut args = vec![kernel, "--input", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "-p", "3"];
                args.extend(extra.iter().copied());
                let o = run_limited(&mut graph(&args), LIMIT);
                assert!(o.status.success(), "{kernel} {}: {}", input.display(), stderr(&o));
                let r = read_values(&out);
                std::fs::remove_file(&out).unwrap();
                r
            })
            .collect();
        assert_eq!(outputs[0], outputs[1], "{kernel} from the edge list and from the converted graph");
    }
    // SSSP needs the weights, which this conversion did not keep: exit 1 naming the file.
    let o = run_limited(&mut graph(&["sssp", "--source", &source, "--input", to.to_str().unwrap()]), LIMIT);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{}: SSSP needs edge weights", to.display())), "{}", stderr(&o));
    for (args, says) in [
        (vec!["convert", "--input", "x.el"], "convert needs --to FILE"),
        (vec!["convert", "--input", "x.el", "--to", "y.gcsr", "-o", "z"], "unknown argument \"-o\""),
        (vec!["bfs", "--source", "1", "--input", "x.gcsr", "--one-based"], "--one-based applies to edge lists only"),
    ] {
        let o = run_limited(&mut graph(&args), LIMIT);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(dir.listing(), vec!["g.el", "g.gcsr"]);
}
