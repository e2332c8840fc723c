//! The bundled algorithm `pagerank`: the graphblas crate's distributed PageRank
//! (`dist::pagerank_spmd_with`) on the group's LPF context.
//!
//! Every process passes a *request* and gets a *reply*; both are little-endian byte
//! strings (the Scala side, `org.lpf.spark.LpfPageRank`, writes and reads them; the
//! headers' fields and codes are defined once, in [`crate::layout`]).
//!
//! Request (48-byte header, then the source):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFPRQ01` |
//! | 8 | f64 | alpha (damping) |
//! | 16 | f64 | tol (stop when the L1 change of an iteration is below it) |
//! | 24 | u64 | max_iters |
//! | 32 | u32 | threads per process for the iteration (0 = 1) |
//! | 36 | u32 | source: 1 = file, 2 = R-MAT (edges from Spark go through `graph-call`) |
//! | 40 | u32 | flags: bit 0 progress lines on process 0's stderr; bits 1-2 exchange (0 auto, 1 allgather, 2 plan) |
//! | 44 | u32 | reserved, 0 |
//! | 48 | | source 1: u32 format (0 by extension, 1 MatrixMarket, 2 edge list, 3 binary), u32 length L, L bytes of UTF-8 path (every process reads its byte range of the same file) |
//! | 48 | | source 2: u32 scale, u32 edge factor, f64 a, f64 b, f64 c, u64 seed (Graph500 R-MAT, generated in parallel) |
//!
//! Everything but the edges must be the same on every process; the first superstep
//! checks that (and that every request parses), so a bad request fails on every
//! process with the same message instead of leaving some of them in a sync.
//!
//! Reply (72-byte header, then the pairs):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFPRR01` |
//! | 8 | u64 | n, vertices of the whole graph |
//! | 16 | u64 | edges of the whole graph (duplicates counted once) |
//! | 24 | u64 | iterations run |
//! | 32 | f64 | residual: L1 change of the last iteration |
//! | 40 | f64 | load seconds (read/receive, route, renumber, build; this process) |
//! | 48 | f64 | iteration seconds (this process) |
//! | 56 | u32 | converged (1 if residual < tol) |
//! | 60 | u32 | exchange that ran: 1 allgather, 2 plan |
//! | 64 | u64 | k, vertices this process owns |
//! | 72 | | k pairs (u64 id, f64 rank): ids as in the input (MatrixMarket 1-based, edge lists / binary / R-MAT 0-based, edges as given, numbered edges their numbers) |
//!
//! Over all processes every vertex appears once and the ranks sum to 1.

use crate::request::RequestBytes;
use crate::verdict::agree_on_request;
use crate::progress::ProgressSink;
use graphblas::algorithms::pagerank::ParameterNames;
use graphblas::dist::{pagerank_spmd_observed, DistOptions, Format, Input, IterationProgress, RoundProgress};
use graphblas::kron::KronParams;
use graphblas::PageRankConfig;
use lpf::Context;

// The layouts' magics, fields and codes: crate::layout, their one definition.
use crate::layout::pr_reply::{self, MAGIC as REPLY_MAGIC};
use crate::layout::pr_request::{self as q, MAGIC as REQUEST_MAGIC};
use crate::layout::{exchange, Field};

const REPLY_HEADER: usize = pr_reply::COUNT.end();

/// A parsed request.
pub(crate) struct Request {
    pub(crate) cfg: PageRankConfig,
    pub(crate) opts: DistOptions,
    pub(crate) input: Input,
    /// Hash of everything that must agree between processes (all but the edges).
    pub(crate) digest: u64,
}

pub(crate) struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }
    /// Bytes of the whole request.
    pub(crate) fn len(&self) -> usize {
        self.b.len()
    }
    /// Bytes read so far.
    pub(crate) fn at(&self) -> usize {
        self.at
    }
    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.b.len().saturating_sub(self.at) < n {
            return Err(format!(
                "the request ends at byte {} but {what} needs {n} bytes from byte {}",
                self.b.len(),
                self.at
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    pub(crate) fn f64(&mut self, what: &str) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    /// A header's field, read at its offset (see [`crate::layout`]); reading goes on after it.
    pub(crate) fn field(&mut self, f: Field) -> Result<&'a [u8], String> {
        self.at = f.at;
        self.take(f.ty.size(), f.what)
    }
    /// The magic at the start of every header.
    pub(crate) fn magic(&mut self) -> Result<&'a [u8], String> {
        self.at = 0;
        self.take(8, "the magic")
    }
    pub(crate) fn u32_at(&mut self, f: Field) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.field(f)?.try_into().unwrap()))
    }
    pub(crate) fn u64_at(&mut self, f: Field) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.field(f)?.try_into().unwrap()))
    }
    pub(crate) fn f64_at(&mut self, f: Field) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.field(f)?.try_into().unwrap()))
    }
}

/// FNV-1a over the bytes.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// PageRank's parameters as the Spark bridge's Scala and Python APIs both name them
/// (`LpfPageRank.run`, `LpfGraph.pageRank`): the messages of the parameter check.
pub(crate) const SPARK_NAMES: ParameterNames = ParameterNames { alpha: "alpha", tol: "tol", max_iters: "maxIter" };

/// The parameter check of the Spark bridge's PageRank (the driver's and every process's):
/// graphblas's one check, with the API's names.
pub(crate) fn check_parameters(alpha: f64, tol: f64, max_iters: i64) -> Result<(), String> {
    graphblas::algorithms::pagerank::check_parameters_named(alpha, tol, max_iters, SPARK_NAMES)
}

pub(crate) fn parse(b: &[u8]) -> Result<Request, String> {
    let mut r = Reader { b, at: 0 };
    if r.magic()? != REQUEST_MAGIC {
        return Err("the request does not start with LPFPRQ01 (see native/lpf-jni/src/pagerank.rs)".into());
    }
    let alpha = r.f64_at(q::ALPHA)?;
    let tol = r.f64_at(q::TOL)?;
    let max_iters = r.u64_at(q::MAX_ITERS)?;
    let threads = r.u32_at(q::THREADS)?;
    let source = r.u32_at(q::SOURCE)?;
    let flags = r.u32_at(q::FLAGS)?;
    let _reserved = r.u32_at(q::RESERVED)?;
    // Signed: a negative count from the JVM is named as given.
    check_parameters(alpha, tol, max_iters as i64)?;
    let exchange = exchange::from_flags(flags)?;
    let cfg = PageRankConfig {
        alpha,
        tol,
        max_iters: usize::try_from(max_iters).unwrap_or(usize::MAX),
        threads: threads.max(1) as usize,
    };
    let opts = DistOptions { exchange, progress: flags & q::PROGRESS != 0, ..DistOptions::default() };
    let (input, agreed_end) = match source {
        q::FILE => {
            let format = match r.u32("the file format")? {
                q::FORMAT_AUTO => Format::Auto,
                q::FORMAT_MTX => Format::Mtx,
                q::FORMAT_EDGES => Format::Edges,
                q::FORMAT_BIN => Format::Bin,
                x => return Err(format!("file format code {x} is not 0 (by extension), 1 (mtx), 2 (edges) or 3 (bin)")),
            };
            let len = r.u32("the path length")? as usize;
            let path = std::str::from_utf8(r.take(len, "the path")?).map_err(|_| "the path is not UTF-8".to_string())?;
            if path.is_empty() {
                return Err("the path is empty".into());
            }
            (Input::File { path: path.into(), format }, r.at)
        }
        q::RMAT => {
            let scale = r.u32("the R-MAT scale")?;
            let edge_factor = r.u32("the edge factor")?;
            let (a, bq, c) = (r.f64("a")?, r.f64("b")?, r.f64("c")?);
            let seed = r.u64("the seed")?;
            (Input::Rmat(KronParams { scale, edge_factor, a, b: bq, c, seed }), r.at)
        }
        x => return Err(format!("source code {x} is not 1 (file) or 2 (R-MAT)")),
    };
    if r.at != b.len() {
        return Err(format!("the request has {} bytes after its end (byte {})", b.len() - r.at, r.at));
    }
    Ok(Request { cfg, opts, input, digest: fnv(&b[..agreed_end]) & (u64::MAX >> 1) })
}

/// Every field of a request as this side reads it, one line: what the JVM's encoder is
/// checked against (`LpfNative.describeRequest`; KernelTests' request-layout case).
pub(crate) fn describe(b: &[u8]) -> Result<String, String> {
    let r = parse(b)?;
    let input = match &r.input {
        Input::Edges(e) => format!("edges {:?}", e),
        Input::NumberedEdges { n, edges } => format!("numbered n={n} edges {:?}", edges),
        Input::WeightedNumberedEdges { n, edges, weights } => format!("weighted n={n} edges {:?} weights {:?}", edges, weights),
        Input::File { path, format } => format!("file {} format={format:?}", path.display()),
        Input::Rmat(k) => format!("rmat scale={} edge_factor={} a={} b={} c={} seed={}", k.scale, k.edge_factor, k.a, k.b, k.c, k.seed),
    };
    Ok(format!(
        "pagerank alpha={} tol={} max_iters={} threads={} exchange={:?} progress={} {input}",
        r.cfg.alpha, r.cfg.tol, r.cfg.max_iters, r.cfg.threads, r.opts.exchange, r.opts.progress
    ))
}

/// The SPMD body: check the requests collectively, run, encode the reply. LPF process 0
/// reports its progress to `progress` (the JVM gives one to the task of pid 0 when the
/// driver listens) and, with flag bit 0, to its stderr.
pub(crate) fn run(ctx: &mut Context, input: RequestBytes<'_>, progress: Option<&ProgressSink>) -> Result<Vec<u8>, String> {
    let req = agree_on_request(ctx, input.whole().and_then(parse), |r| r.digest, "alpha, tol, max_iters, threads, flags, source")?;
    // LPF process 0 only: a task with several LPF threads (hybrid) shares one sink.
    let on_stderr = req.opts.progress && ctx.pid() == 0;
    let sink = progress.filter(|_| ctx.pid() == 0);
    let mut observe = |p: &IterationProgress| {
        if let Some(sink) = sink {
            sink.report(&RoundProgress::from(p));
        }
        if on_stderr {
            eprintln!("{p}");
        }
    };
    let res = pagerank_spmd_observed(ctx, req.input, &req.cfg, &req.opts, &mut observe).map_err(|e| e.to_string())?;
    let k = res.ids.len();
    let mut out = Vec::with_capacity(REPLY_HEADER + 16 * k);
    out.resize(REPLY_HEADER, 0);
    out[..8].copy_from_slice(REPLY_MAGIC);
    pr_reply::VERTICES.put(&mut out, &res.n.to_le_bytes());
    pr_reply::EDGES.put(&mut out, &res.nnz.to_le_bytes());
    pr_reply::ITERATIONS.put(&mut out, &(res.iterations as u64).to_le_bytes());
    pr_reply::RESIDUAL.put(&mut out, &res.residual.to_le_bytes());
    pr_reply::LOAD_SECONDS.put(&mut out, &res.load_seconds.to_le_bytes());
    pr_reply::ITERATION_SECONDS.put(&mut out, &res.iteration_seconds.to_le_bytes());
    pr_reply::CONVERGED.put(&mut out, &(res.converged as u32).to_le_bytes());
    pr_reply::EXCHANGE.put(&mut out, &exchange::code(res.exchange.kind).to_le_bytes());
    pr_reply::COUNT.put(&mut out, &(k as u64).to_le_bytes());
    for (id, rank) in res.ids.iter().zip(&res.ranks) {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&rank.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request for the Graph500 R-MAT graph of `scale` (edge factor 8, seed 5).
    fn request_rmat(scale: u32, tol: f64, alpha: f64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(REQUEST_MAGIC);
        b.extend_from_slice(&alpha.to_le_bytes());
        b.extend_from_slice(&tol.to_le_bytes());
        b.extend_from_slice(&1000u64.to_le_bytes());
        for w in [1u32, 2, 0, 0] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&scale.to_le_bytes());
        b.extend_from_slice(&8u32.to_le_bytes());
        for x in [0.57f64, 0.19, 0.19] {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&5u64.to_le_bytes());
        b
    }

    fn on_threads(inputs: Vec<Vec<u8>>) -> Vec<Result<Vec<u8>, String>> {
        on_threads_reporting(inputs, None)
    }

    /// Every process gets `progress`, as the LPF threads of one task would.
    fn on_threads_reporting(inputs: Vec<Vec<u8>>, progress: Option<&ProgressSink>) -> Vec<Result<Vec<u8>, String>> {
        crate::on_shm_threads(inputs, |c, input| run(c, RequestBytes::Contiguous(input), progress))
    }

    fn pairs(reply: &[u8]) -> Vec<(u64, f64)> {
        assert_eq!(&reply[..8], REPLY_MAGIC);
        let k = u64::from_le_bytes(reply[64..72].try_into().unwrap()) as usize;
        assert_eq!(reply.len(), REPLY_HEADER + 16 * k);
        reply[REPLY_HEADER..]
            .chunks_exact(16)
            .map(|c| (u64::from_le_bytes(c[..8].try_into().unwrap()), f64::from_le_bytes(c[8..].try_into().unwrap())))
            .collect()
    }

    #[test]
    fn one_ranking_summing_to_one_whatever_the_processes() {
        let two = on_threads(vec![request_rmat(7, 1e-12, 0.85), request_rmat(7, 1e-12, 0.85)]);
        let mut ranks: Vec<(u64, f64)> = two.iter().flat_map(|r| pairs(r.as_ref().unwrap())).collect();
        ranks.sort_by_key(|x| x.0);
        assert_eq!(ranks.iter().map(|x| x.0).collect::<Vec<_>>(), (0..128).collect::<Vec<_>>());
        let sum: f64 = ranks.iter().map(|x| x.1).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{sum}");
        let one = on_threads(vec![request_rmat(7, 1e-12, 0.85)]);
        let mut alone = pairs(one[0].as_ref().unwrap());
        alone.sort_by_key(|x| x.0);
        for (a, b) in ranks.iter().zip(&alone) {
            assert!((a.1 - b.1).abs() < 1e-15, "{a:?} vs {b:?}");
        }
        let r = two[0].as_ref().unwrap();
        assert_eq!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 128);
    }

    #[test]
    fn only_process_0_reports_progress_one_line_per_iteration() {
        use std::io::{BufRead, BufReader};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let sink = ProgressSink::connect("127.0.0.1", l.local_addr().unwrap().port(), "token 0").unwrap();
        let out = on_threads_reporting(vec![request_rmat(6, 1e-12, 0.85), request_rmat(6, 1e-12, 0.85)], Some(&sink));
        drop(sink);
        let reply = out[0].as_ref().unwrap();
        let iterations = u64::from_le_bytes(reply[24..32].try_into().unwrap()) as usize;
        let residual = f64::from_le_bytes(reply[32..40].try_into().unwrap());
        let lines: Vec<String> = BufReader::new(l.accept().unwrap().0).lines().map(|x| x.unwrap()).collect();
        assert_eq!(lines[0], "token 0");
        let ks: Vec<usize> = lines[1..].iter().map(|x| x.strip_prefix("iteration ").unwrap().split(' ').next().unwrap().parse().unwrap()).collect();
        assert_eq!(ks, (1..=iterations).collect::<Vec<_>>());
        let last: f64 = lines.last().unwrap().split(' ').nth(3).unwrap().parse().unwrap();
        assert_eq!(last, residual);
    }

    #[test]
    fn differing_parameters_fail_on_every_process() {
        let out = on_threads(vec![request_rmat(5, 1e-9, 0.85), request_rmat(5, 1e-9, 0.5)]);
        for r in out {
            let e = r.unwrap_err();
            assert!(e.contains("process 1 differ"), "{e}");
        }
    }

    #[test]
    fn a_bad_request_fails_on_every_process() {
        let mut bad = request_rmat(5, 1e-9, 0.85);
        bad.truncate(60);
        let out = on_threads(vec![request_rmat(5, 1e-9, 0.85), bad]);
        assert!(out[0].as_ref().unwrap_err().contains("process 1 does not parse"));
        assert!(out[1].as_ref().unwrap_err().contains("bad request"), "{:?}", out[1]);
        let mut edges = request_rmat(5, 1e-9, 0.85);
        edges[36..40].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(parse(&edges).err().unwrap(), "source code 0 is not 1 (file) or 2 (R-MAT)");
    }

    #[test]
    fn parameters_get_the_one_check_of_graphblas() {
        let mut b = request_rmat(5, 1e-9, 0.85);
        b[24..32].copy_from_slice(&(-1i64).to_le_bytes());
        let want = check_parameters(0.85, 1e-9, -1).unwrap_err();
        assert_eq!(parse(&b).err().unwrap(), want);
        // The Spark API's name for the parameter, not the crate's.
        assert_eq!(want, "maxIter must be at least 1, got -1");
        let inf = request_rmat(5, f64::INFINITY, 0.85);
        assert!(parse(&inf).err().unwrap().contains("tol must be a finite number >= 0, got inf"));
    }

    #[test]
    fn a_missing_file_names_it_everywhere() {
        let mut b = request_rmat(5, 1e-9, 0.85);
        b.truncate(q::RESERVED.end());
        b[36..40].copy_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        let path = b"/nonexistent/graph.mtx";
        b.extend_from_slice(&(path.len() as u32).to_le_bytes());
        b.extend_from_slice(path);
        for r in on_threads(vec![b.clone(), b]) {
            let e = r.unwrap_err();
            assert!(e.contains("/nonexistent/graph.mtx"), "{e}");
        }
    }
}
