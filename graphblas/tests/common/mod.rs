//! Shared test helpers: an engine-generic launcher, graph fixtures, reference runs.
//!
//! Every distributed test takes a [`Launcher`]: "run this SPMD body on p processes".
//! [`launchers`] lists the engines the generic tests run on (shared memory); [`tcp`]
//! and [`hybrid`] run the body over TCP in this process for the tests that name them
//! (the MPI engines' runs are tests/mpi/run.sh's, with mpi_world).
#![allow(dead_code)]

use graphblas::dist::{DistError, DistributedResult, VertexValues};
use graphblas::io::write_binary;
use graphblas::{pagerank, Coo, DupPolicy, Matrix, PageRankConfig};
use lpf::{Args, Context, Root};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

/// An SPMD body.
pub type Body<'a> = &'a (dyn Fn(&mut Context) + Sync);
/// Runs `body` on `p` processes of some engine; returns when all have finished.
pub type Launcher = fn(u32, Body<'_>) -> lpf::Result<()>;

pub fn shm(p: u32, body: Body<'_>) -> lpf::Result<()> {
    Root::with_max_procs(p).exec(p, &|ctx: &mut Context, _args: Args| body(ctx), Args::none())
}

/// p LPF processes over TCP inside this test process: every node is a thread making its
/// own TCP init over loopback (`nodes[i]` LPF processes each; more than one anywhere
/// with `hybrid`: shared memory among a node's threads, TCP between nodes). Node 0
/// binds port 0 and hands the port to the others.
fn over_tcp(nodes: &[lpf::Pid], hybrid: bool, body: Body<'_>) -> lpf::Result<()> {
    use lpf::tcp::{TcpConfig, TcpInit};
    let k = nodes.len() as lpf::Pid;
    let cfg = |pid: lpf::Pid, port: u16| {
        TcpConfig::new("127.0.0.1", port, pid, k)
            .timeout(Duration::from_secs(30))
            .threads(nodes[pid as usize])
            .hybrid(hybrid)
            .job("graph-tests")
            .secret(b"graph tests' secret")
    };
    let spmd = |ctx: &mut Context, _args: Args| body(ctx);
    let (tx, rx) = std::sync::mpsc::channel::<u16>();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        let peers: Vec<_> = (1..k)
            .map(|pid| {
                let (rx, spmd, cfg) = (&rx, &spmd, &cfg);
                s.spawn(move || {
                    let port = rx.lock().unwrap().recv().expect("node 0 failed before binding");
                    TcpInit::new(cfg(pid, port))?.hook(spmd, Args::none())
                })
            })
            .collect();
        let mine = TcpInit::prepare(cfg(0, 0)).and_then(|prepared| {
            for _ in 1..k {
                let _ = tx.send(prepared.bound_port());
            }
            prepared.join()?.hook(&spmd, Args::none())
        });
        drop(tx);
        let theirs: Vec<lpf::Result<()>> = peers.into_iter().map(|h| h.join().unwrap()).collect();
        std::iter::once(mine).chain(theirs).find(|r| r.is_err()).unwrap_or(Ok(()))
    })
}

/// The TCP engine: p nodes of one LPF process each.
pub fn tcp(p: u32, body: Body<'_>) -> lpf::Result<()> {
    over_tcp(&vec![1; p as usize], false, body)
}

/// The hybrid engine: nodes of two threads (the last of one when p is odd).
pub fn hybrid(p: u32, body: Body<'_>) -> lpf::Result<()> {
    let nodes: Vec<lpf::Pid> = (0..p.div_ceil(2)).map(|i| if 2 * i + 1 == p { 1 } else { 2 }).collect();
    over_tcp(&nodes, true, body)
}

/// The engines the tests run on.
pub fn launchers() -> Vec<(&'static str, Launcher)> {
    vec![("shm", shm as Launcher)]
}

/// Runs `f` on `p` processes and returns each process's value, by pid. Fails the test
/// if the run takes longer than `limit` (a hang).
pub fn run_all<T: Send + 'static>(
    launch: Launcher,
    p: u32,
    limit: Duration,
    f: impl Fn(&mut Context) -> T + Sync + Send + 'static,
) -> Vec<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..p).map(|_| None).collect());
        let r = launch(p, &|ctx| {
            let v = f(ctx);
            slots.lock().unwrap()[ctx.pid() as usize] = Some(v);
        });
        let _ = tx.send((r, slots.into_inner().unwrap()));
    });
    let (r, slots) = rx.recv_timeout(limit).unwrap_or_else(|_| panic!("the SPMD run on {p} processes hung (> {limit:?})"));
    r.expect("exec failed");
    slots.into_iter().enumerate().map(|(q, v)| v.unwrap_or_else(|| panic!("process {q} returned nothing"))).collect()
}

/// One process's results put together in id order, checking that each id of `ids`
/// comes exactly once, blocks in pid order, and every process agrees on n and rounds.
pub fn gather<T: Copy + std::fmt::Debug>(results: &[Result<VertexValues<T>, DistError>], ids: &[u64]) -> Vec<T> {
    let mut all_ids = Vec::new();
    let mut all = Vec::new();
    let first = results[0].as_ref().unwrap_or_else(|e| panic!("run failed: {e}"));
    for r in results {
        let r = r.as_ref().unwrap_or_else(|e| panic!("run failed: {e}"));
        assert_eq!((r.n, r.rounds), (ids.len() as u64, first.rounds), "processes disagree");
        assert_eq!(r.first_index as usize, all_ids.len(), "blocks out of pid order");
        all_ids.extend_from_slice(&r.ids);
        all.extend_from_slice(&r.values);
    }
    assert_eq!(all_ids, ids, "the vertices are the input's");
    all
}

pub const LIMIT: Duration = Duration::from_secs(60);

/// A temp directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let mut p = std::env::temp_dir();
        p.push(format!("gbpr-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// Names of the files in the directory.
    pub fn listing(&self) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small graph: n vertices, directed edges (duplicates and self-loops allowed).
#[derive(Clone, Debug)]
pub struct Graph {
    pub name: String,
    pub n: usize,
    pub edges: Vec<(usize, usize)>,
}

impl Graph {
    pub fn new(name: &str, n: usize, edges: &[(usize, usize)]) -> Graph {
        Graph { name: name.into(), n, edges: edges.to_vec() }
    }

    pub fn mtx_pattern(&self) -> String {
        let mut s = format!("%%MatrixMarket matrix coordinate pattern general\n% {}\n{} {} {}\n", self.name, self.n, self.n, self.edges.len());
        for &(u, v) in &self.edges {
            s += &format!("{} {}\n", u + 1, v + 1);
        }
        s
    }

    pub fn mtx_real(&self) -> String {
        let mut s = format!("%%MatrixMarket matrix coordinate real general\n{} {} {}\n", self.n, self.n, self.edges.len());
        for (k, &(u, v)) in self.edges.iter().enumerate() {
            s += &format!("{} {} {}\n", u + 1, v + 1, 0.5 + k as f64);
        }
        s
    }

    pub fn mtx_integer(&self) -> String {
        let mut s = format!("%%MatrixMarket matrix coordinate integer general\n{} {} {}\n", self.n, self.n, self.edges.len());
        for (k, &(u, v)) in self.edges.iter().enumerate() {
            s += &format!("{} {} {}\n", u + 1, v + 1, k as i64 - 3);
        }
        s
    }

    /// An edge list: the vertex count is the largest id + 1.
    pub fn edge_list(&self) -> String {
        let mut s = String::from("# test graph\n");
        for &(u, v) in &self.edges {
            s += &format!("{u}\t{v}\n");
        }
        s
    }

    pub fn binary(&self, path: &std::path::Path) {
        let mut c = Coo::<f64>::new_pattern(self.n, self.n);
        for &(u, v) in &self.edges {
            c.rows.push(u as u32);
            c.cols.push(v as u32);
        }
        write_binary(path, &c).unwrap();
    }

    /// The vertices of the graph read as an edge list or given as edges: the ids some
    /// edge names, ascending (the distributed code relabels these inputs densely).
    pub fn named(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.edges.iter().flat_map(|&(u, w)| [u as u64, w as u64]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The vertices of the graph read from an input that declares them (MatrixMarket,
    /// binary, R-MAT): `0..n`, isolated ones included.
    pub fn declared(&self) -> Vec<u64> {
        (0..self.n as u64).collect()
    }

    /// The local reference ranks of the graph on its named vertices, in the order of
    /// [`Graph::named`] (self-loops are edges, duplicates count once).
    pub fn reference(&self, cfg: &PageRankConfig) -> (Vec<f64>, usize) {
        self.reference_on(&self.named(), cfg)
    }

    /// The local reference ranks on the declared vertices `0..n` ([`Graph::declared`]).
    pub fn reference_declared(&self, cfg: &PageRankConfig) -> (Vec<f64>, usize) {
        self.reference_on(&self.declared(), cfg)
    }

    fn reference_on(&self, ids: &[u64], cfg: &PageRankConfig) -> (Vec<f64>, usize) {
        let k = |v: usize| ids.binary_search(&(v as u64)).unwrap();
        let edges: Vec<(usize, usize)> = self.edges.iter().map(|&(u, v)| (k(u), k(v))).collect();
        let a = Matrix::<f64>::from_edges(ids.len(), ids.len(), &edges).unwrap();
        let r = pagerank(&a, cfg).unwrap();
        (r.ranks, r.iterations)
    }
}

/// Special graphs: dangling vertices, self-loops, duplicates, ids no edge names
/// (vertex 5 of "mixed", id 0 of "one-based": isolated vertices where the input
/// declares them, no vertices in an edge list), one vertex, no edges.
pub fn special_graphs() -> Vec<Graph> {
    vec![
        Graph::new("mixed", 7, &[(0, 1), (0, 1), (0, 1), (1, 1), (1, 2), (2, 0), (2, 3), (0, 4), (6, 2)]),
        Graph::new("one vertex self-loop", 1, &[(0, 0)]),
        Graph::new("five declared vertices, no edges", 5, &[]),
        Graph::new("one-based", 4, &[(1, 2), (2, 3), (3, 1), (3, 2)]),
        Graph::new("star into a dangling hub", 30, &(1..30).map(|i| (i, 0)).collect::<Vec<_>>()),
        Graph::new("path", 4, &[(0, 1), (1, 2), (2, 3)]),
    ]
}

/// Graphs without vertices, an error: declared size 0 (an edge list without edges
/// is tested apart).
pub fn empty_graphs() -> Vec<Graph> {
    vec![Graph::new("no declared vertex", 0, &[])]
}

pub fn random_graph(seed: u64, n: usize, m: usize) -> Graph {
    let mut rng = graphblas::prng::Xoshiro256::new(seed);
    let edges = (0..m).map(|_| (rng.below(n as u64) as usize, rng.below(n as u64) as usize)).collect();
    Graph { name: format!("random {seed} n {n} m {m}"), n, edges }
}

/// Gathers every process's (id, rank) into a vector in the order of `ids` (the
/// expected vertex ids, ascending), checking that each vertex is owned exactly once,
/// that no other id is returned, and that all processes agree on the iteration count.
pub fn assemble(results: &[Result<DistributedResult, DistError>], ids: &[u64]) -> (Vec<f64>, usize) {
    let n = ids.len();
    let mut ranks = vec![f64::NAN; n];
    let iterations = results[0].as_ref().unwrap().iterations;
    for r in results {
        let r = r.as_ref().unwrap_or_else(|e| panic!("run failed: {e}"));
        assert_eq!(r.n as usize, n);
        assert_eq!(r.iterations, iterations, "processes disagree on the iteration count");
        for (&id, &x) in r.ids.iter().zip(&r.ranks) {
            let i = ids.binary_search(&id).unwrap_or_else(|_| panic!("id {id} is no vertex of the input"));
            assert!(ranks[i].is_nan(), "vertex {id} owned twice");
            ranks[i] = x;
        }
    }
    assert!(ranks.iter().all(|x| !x.is_nan()), "some vertex is owned by nobody");
    (ranks, iterations)
}

pub fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (x, y)) in got.iter().zip(want).enumerate() {
        assert!((x - y).abs() <= 1e-12, "{what}: vertex {i}: {x} vs {y}");
    }
    if !got.is_empty() {
        let s: f64 = got.iter().sum();
        assert!((s - 1.0).abs() < 1e-12, "{what}: ranks sum to {s}");
    }
}

/// Builds the reference matrix from a Coo with pattern semantics.
pub fn reference_from_coo(coo: &Coo<f64>, cfg: &PageRankConfig) -> (Vec<f64>, usize) {
    let a = Matrix::from_coo(coo, DupPolicy::PatternDedup).unwrap();
    let r = pagerank(&a, cfg).unwrap();
    (r.ranks, r.iterations)
}

/// The Graph500 graph of `params` as a [`Graph`]: the generated edges without
/// self-loops (duplicates are removed by the reference). Its vertices are all
/// 2^scale declared ones ([`Graph::declared`]), as in the distributed R-MAT input.
pub fn kron_graph(params: &graphblas::kron::KronParams) -> Graph {
    let perm = params.permutation();
    let coo = params.generate(0..params.num_edges(), &perm, 1).unwrap();
    let edges = coo.rows.iter().zip(&coo.cols).filter(|(u, v)| u != v).map(|(&u, &v)| (u as usize, v as usize)).collect();
    Graph { name: format!("kron{}", params.scale), n: params.num_vertices() as usize, edges }
}

/// Runs `cmd` with a wall-clock limit: a hang is a failure.
pub fn run_limited(cmd: &mut Command, limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("{cmd:?} hung (> {limit:?}); stderr: {}", String::from_utf8_lossy(&o.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `lpfrun` next to this test's target directory, built if missing.
pub fn lpfrun() -> std::path::PathBuf {
    // lpfrun of the profile this test was built with (target/debug or target/release):
    // test binaries live in <profile>/deps.
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_path_buf();
    let bin = dir.join("lpfrun");
    if !bin.exists() {
        let profile = match dir.file_name().and_then(|d| d.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let o = Command::new(env!("CARGO")).args(["build", "--profile", profile, "-p", "lpf", "--bin", "lpfrun"]).output().unwrap();
        assert!(o.status.success(), "building lpfrun: {}", String::from_utf8_lossy(&o.stderr));
    }
    bin
}


/// Graphalytics' depth of a vertex the BFS source does not reach.
pub const UNREACHABLE: i64 = 9223372036854775807;

/// Depths from `source` over vertices `0..n` by a FIFO queue, edges followed forward.
pub fn reference_bfs(n: usize, edges: &[(usize, usize)], source: usize) -> Vec<i64> {
    let mut adj = vec![Vec::new(); n];
    for &(u, v) in edges {
        adj[u].push(v);
    }
    let mut depth = vec![UNREACHABLE; n];
    depth[source] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u] {
            if depth[v] == UNREACHABLE {
                depth[v] = depth[u] + 1;
                queue.push_back(v);
            }
        }
    }
    depth
}

/// The smallest vertex of each vertex's weakly connected component, by union-find.
pub fn reference_wcc(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut parent: Vec<usize> = (0..n).collect();
    for &(u, v) in edges {
        let (a, b) = (root(&mut parent, u), root(&mut parent, v));
        // The smaller root stays root, so a root is its component's smallest vertex.
        if a < b {
            parent[b] = a;
        } else {
            parent[a] = b;
        }
    }
    (0..n).map(|x| root(&mut parent, x)).collect()
}


/// A small graph with edge weights (integer-valued, so that sums along a path are
/// exact whatever their order): n vertices, directed edges `(u, v, w)`, duplicates
/// and self-loops allowed.
#[derive(Clone, Debug)]
pub struct WeightedGraph {
    pub name: String,
    pub n: usize,
    pub edges: Vec<(usize, usize, f64)>,
}

impl WeightedGraph {
    /// `g`'s edges with weights 0..`max_weight` drawn from `seed` (zeros included).
    pub fn weigh(g: &Graph, seed: u64, max_weight: u64) -> WeightedGraph {
        let mut rng = graphblas::prng::Xoshiro256::new(seed);
        let edges = g.edges.iter().map(|&(u, v)| (u, v, rng.below(max_weight) as f64)).collect();
        WeightedGraph { name: format!("{} weighted", g.name), n: g.n, edges }
    }

    /// MatrixMarket, 1-based ids `1..=n` declared; `field` "integer" or "real" (the
    /// real file writes every weight with a fraction point).
    pub fn mtx(&self, field: &str) -> String {
        let mut s = format!("%%MatrixMarket matrix coordinate {field} general\n{} {} {}\n", self.n, self.n, self.edges.len());
        for &(u, v, w) in &self.edges {
            s += &if field == "real" { format!("{} {} {w:.1}\n", u + 1, v + 1) } else { format!("{} {} {w}\n", u + 1, v + 1) };
        }
        s
    }

    /// An edge list `u v w`: the vertices are the ids some edge names.
    pub fn edge_list(&self) -> String {
        let mut s = String::from("# weighted test graph\n");
        for &(u, v, w) in &self.edges {
            s += &format!("{u} {v} {w}\n");
        }
        s
    }

    /// The ids some edge names, ascending, and the edges renumbered onto them.
    pub fn named(&self) -> (Vec<u64>, Vec<(usize, usize, f64)>) {
        let mut ids: Vec<u64> = self.edges.iter().flat_map(|&(u, v, _)| [u as u64, v as u64]).collect();
        ids.sort_unstable();
        ids.dedup();
        let k = |v: usize| ids.binary_search(&(v as u64)).unwrap();
        let edges = self.edges.iter().map(|&(u, v, w)| (k(u), k(v), w)).collect();
        (ids, edges)
    }
}

/// Shortest distances from `source` over vertices `0..n` by Dijkstra with a binary
/// heap, edges followed forward; `f64::INFINITY` where the source does not lead.
/// Weights must be ≥ 0 (their bit patterns then order as the numbers do).
pub fn reference_sssp(n: usize, edges: &[(usize, usize, f64)], source: usize) -> Vec<f64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut adj = vec![Vec::new(); n];
    for &(u, v, w) in edges {
        adj[u].push((v, w));
    }
    let mut dist = vec![f64::INFINITY; n];
    let mut done = vec![false; n];
    dist[source] = 0.0;
    let mut heap = BinaryHeap::from([Reverse((0f64.to_bits(), source))]);
    while let Some(Reverse((d, u))) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        let d = f64::from_bits(d);
        for &(v, w) in &adj[u] {
            if d + w < dist[v] {
                dist[v] = d + w;
                heap.push(Reverse((dist[v].to_bits(), v)));
            }
        }
    }
    dist
}

/// Labels (vertex numbers) after `iterations` rounds of synchronous label propagation
/// over vertices `0..n`, a plain loop over the edge set (duplicates once): for every
/// edge u → v, v counts u's label and u counts v's (a self-loop counts its vertex's
/// label twice); each vertex takes its most frequent count, ties to the smallest
/// label, and keeps its label without neighbours.
pub fn reference_cdlp(n: usize, edges: &[(usize, usize)], iterations: usize) -> Vec<usize> {
    use std::collections::{BTreeSet, HashMap};
    let set: BTreeSet<(usize, usize)> = edges.iter().copied().collect();
    let mut label: Vec<usize> = (0..n).collect();
    for _ in 0..iterations {
        let mut counts: Vec<HashMap<usize, usize>> = vec![HashMap::new(); n];
        for &(u, v) in &set {
            *counts[v].entry(label[u]).or_default() += 1;
            *counts[u].entry(label[v]).or_default() += 1;
        }
        label = (0..n)
            .map(|x| counts[x].iter().map(|(&l, &c)| (c, std::cmp::Reverse(l))).max().map_or(label[x], |(_, std::cmp::Reverse(l))| l))
            .collect();
    }
    label
}

/// Local clustering coefficients over vertices `0..n` from the definition, with sets:
/// N(v) = {u ≠ v : u → v or v → u}; the number of distinct edges u → w with u ≠ w,
/// both in N(v), over |N(v)| (|N(v)| − 1); 0 below two neighbours.
pub fn reference_lcc(n: usize, edges: &[(usize, usize)]) -> Vec<f64> {
    use std::collections::BTreeSet;
    let set: BTreeSet<(usize, usize)> = edges.iter().copied().filter(|(u, w)| u != w).collect();
    let mut nbrs: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for &(u, w) in &set {
        nbrs[u].insert(w);
        nbrs[w].insert(u);
    }
    (0..n)
        .map(|v| {
            let d = nbrs[v].len();
            if d < 2 {
                return 0.0;
            }
            let among = set.iter().filter(|(u, w)| nbrs[v].contains(u) && nbrs[v].contains(w)).count();
            among as f64 / (d * (d - 1)) as f64
        })
        .collect()
}

/// PageRank by plain power iteration over vertices `0..n`, `iterations` times from
/// `1/n`, as Graphalytics defines it: duplicate edges once, self-loops are edges,
/// `r'(v) = (1 − d)/n + d Σ_{u → v} r(u)/outdeg(u) + d/n Σ_{outdeg(w) = 0} r(w)`.
pub fn reference_pagerank_fixed(n: usize, edges: &[(usize, usize)], damping: f64, iterations: usize) -> Vec<f64> {
    use std::collections::BTreeSet;
    let set: BTreeSet<(usize, usize)> = edges.iter().copied().collect();
    let mut outdeg = vec![0usize; n];
    for &(u, _) in &set {
        outdeg[u] += 1;
    }
    let mut r = vec![1.0 / n as f64; n];
    for _ in 0..iterations {
        let dangling: f64 = (0..n).filter(|&w| outdeg[w] == 0).map(|w| r[w]).sum();
        let mut next = vec![(1.0 - damping) / n as f64 + damping * dangling / n as f64; n];
        for &(u, v) in &set {
            next[v] += damping * r[u] / outdeg[u] as f64;
        }
        r = next;
    }
    r
}

/// The verdicts of a harness-less MPI test binary: each case's `ok LABEL` or
/// `FAIL LABEL: why` printed by rank 0, counted; [`MpiTally::finish`] prints the total
/// and exits 1 on rank 0 if a case failed.
pub struct MpiTally {
    rank: usize,
    passed: usize,
    failed: usize,
}

impl MpiTally {
    pub fn new(rank: usize) -> MpiTally {
        MpiTally { rank, passed: 0, failed: 0 }
    }

    pub fn record(&mut self, label: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                self.passed += 1;
                if self.rank == 0 {
                    println!("ok {label}");
                }
            }
            Err(why) => {
                self.failed += 1;
                if self.rank == 0 {
                    println!("FAIL {label}: {}", why.replace('\n', " "));
                }
            }
        }
    }

    pub fn finish(self) -> ! {
        if self.rank == 0 {
            println!("{} passed, {} failed", self.passed, self.failed);
        }
        std::process::exit(if self.failed > 0 && self.rank == 0 { 1 } else { 0 });
    }
}
