//! The `pagerank` binary: output files, progress and summary, conversion, errors.

// The graph crate's test helpers (graphs, references, launchers), shared rather than copied.
#[path = "../../graphblas/tests/common/mod.rs"]
mod common;

use common::*;
use graphblas::kron::KronParams;
use graphblas::PageRankConfig;
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
    let cfg = PageRankConfig::default();
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    // A MatrixMarket file declares its vertices (1-based ids); an edge list's are the
    // ids its edges name.
    for (input, ids, want) in [(&mtx, g.declared().iter().map(|x| x + 1).collect::<Vec<_>>(), g.reference_declared(&cfg)), (&el, g.named(), g.reference(&cfg))] {
        for (p, t) in [("1", "1"), ("3", "2")] {
            let out = dir.path("ranks.txt");
            let o = pagerank_bin(&["--input", input.to_str().unwrap(), "-p", p, "--threads", t, "--output", out.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
            let (got_ids, ranks) = read_ranks(&out);
            assert_eq!(got_ids, ids);
            assert_close(&ranks, &want.0, &format!("cli {} p={p}", input.display()));
            let err = stderr(&o);
            assert!(err.contains("iteration 1: residual"), "{err}");
            let summary = String::from_utf8_lossy(&o.stdout);
            assert!(summary.contains(&format!("iterations={}", want.1)), "{summary}");
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
    let kg = kron_graph(&KronParams::graph500(9, 4));
    let want = kg.reference_declared(&PageRankConfig::default());
    for args in [vec!["--rmat", "9", "--seed", "4"], vec!["--input", bin.to_str().unwrap(), "--format", "bin"]] {
        let out = dir.path("r.txt");
        let mut all = args.clone();
        all.extend(["-p", "4", "--threads", "2", "--quiet", "--output", out.to_str().unwrap()]);
        let o = pagerank_bin(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("iteration 1:"), "--quiet");
        let (ids, ranks) = read_ranks(&out);
        assert_eq!(ids, kg.declared());
        assert_close(&ranks, &want.0, &format!("{args:?}"));
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

#[repr(C)]
struct Rusage {
    ru_utime: [i64; 2],
    ru_stime: [i64; 2],
    ru_maxrss: i64,
    rest: [i64; 13],
}

extern "C" {
    fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut Rusage) -> i32;
}

/// What [`run_measured`] saw of a child.
struct Measured {
    code: i32,
    stdout: String,
    stderr: String,
    /// Peak resident set, KB.
    max_rss_kb: i64,
    /// User + system CPU time, seconds (independent of how loaded the machine is).
    cpu_seconds: f64,
}

/// Runs `cmd` to its end (killed and a failure after `limit`) and returns its exit
/// status, output, peak resident set and CPU time (wait4's rusage of this child).
fn run_measured(cmd: &mut Command, limit: std::time::Duration) -> Measured {
    use std::io::Read;
    use std::process::Stdio;
    // Reaped by wait4 below (for its rusage), or killed and waited for on a hang.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let t0 = std::time::Instant::now();
    let pid = child.id() as i32;
    let mut status = 0i32;
    // SAFETY: Rusage is plain C data (integers), for which all-zero bytes are a value.
    let mut ru: Rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: a plain FFI call with pointers to live locals; the child is reaped
        // here, not by `child`.
        let r = unsafe { wait4(pid, &mut status, 1 /* WNOHANG */, &mut ru) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed");
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} hung (> {limit:?})");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let code = if status & 0x7f == 0 { (status >> 8) & 0xff } else { 128 + (status & 0x7f) };
    let seconds = |tv: [i64; 2]| tv[0] as f64 + tv[1] as f64 * 1e-6;
    Measured {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        max_rss_kb: ru.ru_maxrss,
        cpu_seconds: seconds(ru.ru_utime) + seconds(ru.ru_stime),
    }
}

#[test]
fn huge_ids_run_fast_in_little_memory_and_come_back() {
    // Issue 13 item 2: ids 0, 1 and 2^63 + 5. Memory grew with the largest id (an id
    // of 4e9 aborted allocating 32 GB); now the graph has 3 vertices.
    let dir = TempDir::new("clihuge");
    let big = (1u64 << 63) + 5;
    let el = dir.file("huge.el", format!("0 1\n1 {big}\n{big} 0\n0 {big}\n").as_bytes());
    let out = dir.path("r.txt");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pagerank"));
    cmd.args(["--input", el.to_str().unwrap(), "-p", "2", "--output", out.to_str().unwrap(), "-q"]);
    // Under 1 s of CPU (wall time depends on the machine's load; before the fix an id
    // of 1e8 took 45 s and 9 GB) and 100 MB.
    let m = run_measured(&mut cmd, std::time::Duration::from_secs(30));
    let (so, se) = (&m.stdout, &m.stderr);
    assert_eq!(m.code, 0, "{se}");
    assert!(m.cpu_seconds < 1.0, "took {} s of CPU", m.cpu_seconds);
    assert!(m.max_rss_kb < 100 * 1024, "peak resident set {} KB", m.max_rss_kb);
    let (ids, ranks) = read_ranks(&out);
    assert_eq!(ids, vec![0, 1, big]);
    let g = Graph::new("dense", 3, &[(0, 1), (1, 2), (2, 0), (0, 2)]);
    assert_close(&ranks, &g.reference(&PageRankConfig::default()).0, "huge ids");
    assert!(so.contains("n=3 nnz=4"), "{so}");
    // --convert-to keeps the ids: the binary file carries a label table.
    let bin = dir.path("huge.bin");
    let o = pagerank_bin(&["--input", el.to_str().unwrap(), "-p", "2", "--convert-to", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = pagerank_bin(&["--input", bin.to_str().unwrap(), "-p", "3", "-q", "--output", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_ranks(&out).0, vec![0, 1, big]);
}

#[test]
fn one_based_and_weighted_edge_lists_and_usage_errors() {
    // Issue 13 item 4. A 1-based edge list gained a vertex 0 that changed every rank;
    // now vertices are the ids the edges name.
    let dir = TempDir::new("clione");
    let el = dir.file("one.el", b"# 1-based, with weights\n1 2 0.5\n2 3 1\n3 1 2e0\n3 2\n");
    let g = Graph::new("one-based", 4, &[(1, 2), (2, 3), (3, 1), (3, 2)]);
    let want = g.reference(&PageRankConfig::default());
    let out = dir.path("r.txt");
    for extra in [&[][..], &["--one-based"][..]] {
        let mut args = vec!["--input", el.to_str().unwrap(), "-p", "2", "-q", "--output", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = pagerank_bin(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let (ids, ranks) = read_ranks(&out);
        assert_eq!(ids, vec![1, 2, 3], "{extra:?}");
        assert_close(&ranks, &want.0, "1-based, weighted");
    }
    // --one-based refuses an id 0, naming the line.
    let zero = dir.file("zero.el", b"1 2\n2 0\n");
    let o = pagerank_bin(&["--input", zero.to_str().unwrap(), "--one-based", "-p", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&format!("{}:2:", zero.display())) && stderr(&o).contains("1-based"), "{}", stderr(&o));
    // A bad weight or a fourth field is an error naming the line.
    for (name, text) in [("w.el", &b"0 1 x\n"[..]), ("f.el", &b"0 1\n0 1 2 3\n"[..])] {
        let f = dir.file(name, text);
        let o = pagerank_bin(&["--input", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stderr(&o).contains(&format!("{}:", f.display())), "{}", stderr(&o));
    }
    // A graph without vertices is an error, not n = 0.
    let empty = dir.file("empty.el", b"# no edges\n");
    let o = pagerank_bin(&["--input", empty.to_str().unwrap(), "-p", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the graph has no vertices"), "{}", stderr(&o));
    // Nonsense parameters are usage errors (exit 2) with a message naming them.
    let elp = el.to_str().unwrap();
    for (args, what) in [
        (vec!["--tol", "-1"], "--tol"),
        (vec!["--tol", "nan"], "--tol"),
        (vec!["--tol", "inf"], "--tol"),
        (vec!["--max-iters", "0"], "--max-iters"),
        (vec!["--alpha", "1.5"], "--alpha"),
        (vec!["--alpha", "nan"], "--alpha"),
        (vec!["-p", "0"], "-p"),
        (vec!["--max-iters", "-3"], "--max-iters"),
    ] {
        let mut all = vec!["--input", elp];
        all.extend(args.iter().copied());
        let o = pagerank_bin(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(what), "{args:?}: {}", stderr(&o));
    }
    // The message is the one parameter check's (graphblas::algorithms::pagerank::check_parameters),
    // which the Spark bridge gives Scala and Python too.
    for (args, alpha, tol, max_iters) in [
        (["--alpha", "1.5"], 1.5, 1e-7, 1000),
        (["--tol", "inf"], 0.85, f64::INFINITY, 1000),
        (["--max-iters", "0"], 0.85, 1e-7, 0),
    ] {
        let want = graphblas::algorithms::pagerank::check_parameters(alpha, tol, max_iters).unwrap_err();
        let o = pagerank_bin(&[&["--input", elp][..], &args[..]].concat());
        assert!(stderr(&o).contains(&want), "{args:?}: want {want:?} in {}", stderr(&o));
    }
    let mtx = dir.file("g.mtx", g.mtx_pattern().as_bytes());
    assert_eq!(pagerank_bin(&["--input", mtx.to_str().unwrap(), "--one-based"]).status.code(), Some(2));
    // --tol 0 is allowed: exactly --max-iters iterations.
    let o = pagerank_bin(&["--input", elp, "--tol", "0", "--max-iters", "3", "-q"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("iterations=3"), "{}", stderr(&o));
}

#[test]
fn network_engines_under_lpfrun_exit_0_with_one_summary() {
    // Issue 13 item 3: every OS process but pid 0's said "process 0 produced no result"
    // and exited 1, although the output was written.
    let dir = TempDir::new("clitcp");
    let g = random_graph(8, 40, 160);
    let want = g.reference(&PageRankConfig::default());
    let el = dir.file("g.el", g.edge_list().as_bytes());
    // -p: the job's size by default, or given.
    for (engine, extra, p) in [("tcp", vec![], Some("2")), ("tcp", vec![], None), ("hybrid", vec!["--threads", "2"], None), ("hybrid", vec!["--threads", "2"], Some("4"))] {
        let out = dir.path(&format!("{engine}.txt"));
        let mut cmd = Command::new(lpfrun());
        cmd.args(["-n", "2", "--engine", engine]).args(&extra).arg("--").arg(env!("CARGO_BIN_EXE_pagerank"));
        cmd.args(["--input", el.to_str().unwrap(), "-q", "--output", out.to_str().unwrap()]);
        if let Some(p) = p {
            cmd.args(["-p", p]);
        }
        let o = run_limited(&mut cmd, std::time::Duration::from_secs(60));
        let (so, se) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert!(o.status.success(), "{engine}: {se}");
        assert!(!se.contains("error"), "{engine}: {se}");
        let nprocs = if engine == "tcp" { 2 } else { 4 };
        assert_eq!(so.matches("summary ").count(), 1, "{engine}: one summary, from pid 0: {so}");
        assert!(so.contains(&format!(" p={nprocs} ")), "{engine}: all processes of the job by default: {so}");
        let (ids, ranks) = read_ranks(&out);
        assert_eq!(ids, g.named());
        assert_close(&ranks, &want.0, engine);
    }
    // A bad input fails on every process with the same message, exit 1.
    let bad = dir.file("bad.el", b"0 1\n1 x\n");
    let mut cmd = Command::new(lpfrun());
    cmd.args(["-n", "2", "--engine", "tcp", "--", env!("CARGO_BIN_EXE_pagerank"), "--input", bad.to_str().unwrap()]);
    let o = run_limited(&mut cmd, std::time::Duration::from_secs(60));
    assert!(!o.status.success());
    assert!(stderr(&o).contains(&format!("{}:2:", bad.display())), "{}", stderr(&o));
}

#[test]
fn out_of_memory_under_ulimit_is_a_clear_error_not_an_abort() {
    // Issue 13: under `ulimit -v 4000000` (4 GB) resource failures end in an error
    // message and exit 1 within 30 s (no abort, no OOM kill, no hang). Before,
    // `--rmat 30` aborted allocating the 4 GB permutation, and a binary file of 10^9
    // records aborted allocating its read buffer; an id of 4e9 aborted allocating
    // 32 GB and now needs no memory at all.
    let dir = TempDir::new("clioom");
    // 10^9 records (0, 0) of a 10 x 10 matrix: a sparse 8 GB file (no disk used).
    let bin = dir.path("huge.bin");
    {
        let mut h = Vec::new();
        h.extend_from_slice(b"GBPRCOO\0");
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        for x in [10u64, 10, 1_000_000_000] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        std::fs::write(&bin, &h).unwrap();
        std::fs::OpenOptions::new().write(true).open(&bin).unwrap().set_len(40 + 8 * 1_000_000_000).unwrap();
    }
    let big = dir.file("big.el", b"0 1\n1 4000000000\n4000000000 0\n");
    let exe = env!("CARGO_BIN_EXE_pagerank");
    let limited = |args: &str| {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("ulimit -v 4000000 && exec {exe} {args}"));
        let t0 = std::time::Instant::now();
        let o = run_limited(&mut cmd, std::time::Duration::from_secs(30));
        (o, t0.elapsed().as_secs_f64())
    };
    for args in [format!("--input {} -p 2 -q", bin.display()), format!("--input {} -q", bin.display()), "--rmat 30 -q".to_string()] {
        let (o, secs) = limited(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args}: {err}");
        assert!(err.contains("out of memory: ") && err.contains(" bytes"), "{args}: {err}");
        assert!(!err.contains("panicked") && !err.contains("memory allocation of"), "{args}: {err}");
        assert!(secs < 30.0, "{args}: {secs} s");
    }
    let (o, _) = limited(&format!("--input {} -q", big.display()));
    assert!(o.status.success(), "id 4e9: {}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("n=3 nnz=3"));
}
