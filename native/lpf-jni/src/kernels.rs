//! The bundled algorithm `graph-kernel`: the graphblas crate's distributed BFS, WCC,
//! CDLP, SSSP and LCC (`dist::{bfs_spmd, wcc_spmd, cdlp_spmd, sssp_spmd, lcc_spmd}`) on the group's LPF
//! context, over edges whose vertices the caller numbered `0..n`.
//!
//! Every process passes a *request* and gets a *reply*; both are little-endian byte
//! strings. The Scala side (`org.lpf.spark.LpfKernels`) writes and reads them; its
//! `describe` reads a request back field by field: KernelTests' request-layout case checks
//! the Scala encoder against it, so the two definitions cannot drift apart unnoticed.
//!
//! Request (48-byte header, then the edges):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFGKQ01` |
//! | 8 | u32 | kernel: 1 BFS, 2 WCC, 3 CDLP, 4 SSSP, 5 LCC |
//! | 12 | u32 | threads per process (0 = 1) |
//! | 16 | u64 | n: the vertices are numbered `0..n` (the same on every process) |
//! | 24 | u64 | source vertex number (BFS, SSSP; else 0) |
//! | 32 | i64 | iterations (CDLP; else 0) |
//! | 40 | u64 | m, this process's edges |
//! | 48 | | m pairs (u64 source, u64 target), numbers in `0..n` |
//! | 48 + 16m | | SSSP only: m f64 weights, `weights[k]` of edge k, each >= 0 |
//!
//! Everything but the edges (and weights) must be the same on every process; the first
//! superstep checks that, so a bad request fails on every process with one message.
//!
//! Reply (56-byte header, then the values):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFGKR01` |
//! | 8 | u64 | n, vertices of the whole graph |
//! | 16 | u64 | edges of the whole graph (duplicates counted once) |
//! | 24 | u64 | rounds (BFS levels, WCC rounds, CDLP iterations, SSSP rounds; LCC 0) |
//! | 32 | f64 | load seconds (this process) |
//! | 40 | f64 | compute seconds (this process) |
//! | 48 | u64 | k, vertices this process owns |
//! | 56 | | k u64 vertex numbers, then k values of 8 bytes: BFS i64 depth (9223372036854775807 unreachable), WCC u64 the smallest number of the component, CDLP u64 a label (a number), SSSP f64 distance (infinity unreachable), LCC f64 local clustering coefficient |

use crate::algorithms::agree_on_request;
use crate::pagerank::{fnv, Reader};
use crate::progress::ProgressSink;
use graphblas::dist::{
    bfs_spmd_observed, cdlp_spmd_observed, lcc_spmd_observed, sssp_spmd_observed, wcc_spmd_observed, Input, RoundProgress,
    VertexValues,
};
use lpf::Context;

pub const REQUEST_MAGIC: &[u8; 8] = b"LPFGKQ01";
pub const REPLY_MAGIC: &[u8; 8] = b"LPFGKR01";
pub const REQUEST_HEADER: usize = 48;
pub const REPLY_HEADER: usize = 56;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Bfs,
    Wcc,
    Cdlp { iterations: usize },
    Sssp,
    Lcc,
}

pub struct Request {
    pub kernel: Kernel,
    pub threads: usize,
    pub n: u64,
    pub source: u64,
    pub edges: Vec<(u64, u64)>,
    pub weights: Option<Vec<f64>>,
    /// Hash of the header without m (what must agree between processes).
    pub digest: u64,
}

pub fn parse(b: &[u8]) -> Result<Request, String> {
    let mut r = Reader::new(b);
    if r.take(8, "the magic")? != REQUEST_MAGIC {
        return Err("the request does not start with LPFGKQ01 (see native/lpf-jni/src/kernels.rs)".into());
    }
    let code = r.u32("the kernel")?;
    let threads = r.u32("threads")?.max(1) as usize;
    let n = r.u64("the vertex count")?;
    let source = r.u64("the source")?;
    let iterations = r.u64("the iterations")? as i64;
    let kernel = match code {
        1 => Kernel::Bfs,
        2 => Kernel::Wcc,
        3 => Kernel::Cdlp { iterations: check_iterations(iterations)? },
        4 => Kernel::Sssp,
        5 => Kernel::Lcc,
        x => return Err(format!("kernel code {x} is not 1 (BFS), 2 (WCC), 3 (CDLP), 4 (SSSP) or 5 (LCC)")),
    };
    let agreed_end = r.at();
    let edges = crate::pagerank::edge_pairs(&mut r)?;
    let weights = if kernel == Kernel::Sssp {
        let raw = r.take(8 * edges.len(), "the weights")?;
        Some(raw.chunks_exact(8).map(|w| f64::from_le_bytes(w.try_into().unwrap())).collect())
    } else {
        None
    };
    if r.at() != b.len() {
        return Err(format!("the request has {} bytes after its end (byte {})", b.len() - r.at(), r.at()));
    }
    Ok(Request { kernel, threads, n, source, edges, weights, digest: fnv(&b[..agreed_end]) & (u64::MAX >> 1) })
}

/// Every field of a request as this side reads it, one line (see `pagerank::describe`).
pub fn describe(b: &[u8]) -> Result<String, String> {
    let r = parse(b)?;
    Ok(format!(
        "graph-kernel {:?} threads={} n={} source={} edges {:?} weights {:?}",
        r.kernel, r.threads, r.n, r.source, r.edges, r.weights
    ))
}

/// CDLP's iteration count, the one check of it (the CLI's `--iterations` is unsigned).
pub fn check_iterations(iterations: i64) -> Result<usize, String> {
    usize::try_from(iterations).map_err(|_| format!("iterations must be >= 0, got {iterations}"))
}

fn reply<T>(r: VertexValues<T>, bits: impl Fn(&T) -> u64) -> Vec<u8> {
    let k = r.ids.len();
    let mut out = Vec::with_capacity(REPLY_HEADER + 16 * k);
    out.extend_from_slice(REPLY_MAGIC);
    out.extend_from_slice(&r.n.to_le_bytes());
    out.extend_from_slice(&r.nnz.to_le_bytes());
    out.extend_from_slice(&(r.rounds as u64).to_le_bytes());
    out.extend_from_slice(&r.load_seconds.to_le_bytes());
    out.extend_from_slice(&r.compute_seconds.to_le_bytes());
    out.extend_from_slice(&(k as u64).to_le_bytes());
    for id in &r.ids {
        out.extend_from_slice(&id.to_le_bytes());
    }
    for v in &r.values {
        out.extend_from_slice(&bits(v).to_le_bytes());
    }
    out
}

/// The SPMD body: check the requests collectively, run the kernel, encode the reply.
/// LPF process 0 reports each round (BFS levels, WCC and SSSP rounds, CDLP iterations,
/// LCC phases) to `progress`, if the JVM gave it one.
pub fn run(ctx: &mut Context, input: &[u8], progress: Option<&ProgressSink>) -> Result<Vec<u8>, String> {
    let req = agree_on_request(ctx, parse(input), |r| r.digest, "kernel, threads, n, source, iterations")?;
    let err = |e: graphblas::dist::DistError| e.to_string();
    // LPF process 0 only: a task with several LPF threads (hybrid) shares one sink.
    let sink = progress.filter(|_| ctx.pid() == 0);
    let observe = &mut |p: &RoundProgress| {
        if let Some(sink) = sink {
            sink.report(p);
        }
    };
    let (n, edges, t) = (req.n, req.edges, req.threads);
    Ok(match req.kernel {
        Kernel::Bfs => reply(bfs_spmd_observed(ctx, Input::NumberedEdges { n, edges }, req.source, t, observe).map_err(err)?, |d| *d as u64),
        Kernel::Wcc => reply(wcc_spmd_observed(ctx, Input::NumberedEdges { n, edges }, t, observe).map_err(err)?, |l| *l),
        Kernel::Cdlp { iterations } => {
            reply(cdlp_spmd_observed(ctx, Input::NumberedEdges { n, edges }, iterations, t, observe).map_err(err)?, |l| *l)
        }
        Kernel::Sssp => {
            let weights = req.weights.expect("parsed with the weights");
            let input = Input::WeightedNumberedEdges { n, edges, weights };
            reply(sssp_spmd_observed(ctx, input, req.source, t, observe).map_err(err)?, |d| d.to_bits())
        }
        Kernel::Lcc => reply(lcc_spmd_observed(ctx, Input::NumberedEdges { n, edges }, t, observe).map_err(err)?, |c| c.to_bits()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(code: u32, n: u64, source: u64, iterations: i64, edges: &[(u64, u64)], weights: Option<&[f64]>) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(REQUEST_MAGIC);
        b.extend_from_slice(&code.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(&source.to_le_bytes());
        b.extend_from_slice(&iterations.to_le_bytes());
        b.extend_from_slice(&(edges.len() as u64).to_le_bytes());
        for (s, t) in edges {
            b.extend_from_slice(&s.to_le_bytes());
            b.extend_from_slice(&t.to_le_bytes());
        }
        for w in weights.unwrap_or(&[]) {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b
    }

    fn on_threads(inputs: Vec<Vec<u8>>) -> Vec<Result<Vec<u8>, String>> {
        crate::on_shm_threads(inputs, |c, input| run(c, input, None))
    }

    /// (vertex number, value bits) over all replies, in vertex order.
    fn values(out: &[Result<Vec<u8>, String>]) -> Vec<(u64, u64)> {
        let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        let mut all = Vec::new();
        for r in out {
            let b = r.as_ref().unwrap();
            assert_eq!(&b[..8], REPLY_MAGIC);
            let k = word(b, 48) as usize;
            assert_eq!(b.len(), REPLY_HEADER + 16 * k);
            all.extend((0..k).map(|i| (word(b, REPLY_HEADER + 8 * i), word(b, REPLY_HEADER + 8 * (k + i)))));
        }
        all.sort();
        all
    }

    /// Issue #24 item 16: every kernel reports its rounds to process 0's sink, one line
    /// each, numbered from the start, with the value that says where it stands. A path
    /// 0 -> 1 -> ... -> 9 (weights 1) split over two processes: BFS from 0 has ten levels
    /// of one vertex, SSSP improves one vertex per round and then none.
    #[test]
    fn every_kernel_reports_its_rounds_from_process_0() {
        use crate::progress::ProgressSink;
        use std::io::{BufRead, BufReader};
        let path: Vec<(u64, u64)> = (0..9).map(|v| (v, v + 1)).collect();
        let lines_of = |code: u32, iterations: i64| -> Vec<Vec<String>> {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let sink = ProgressSink::connect("127.0.0.1", l.local_addr().unwrap().port(), "token 0").unwrap();
            let weights = (code == 4).then(|| vec![1.0; 9]);
            let half = |k: usize| -> Vec<u8> {
                let (e, w) = if k == 0 { (&path[..4], weights.as_ref().map(|w| &w[..4])) } else { (&path[4..], weights.as_ref().map(|w| &w[4..])) };
                request(code, 10, 0, iterations, e, w)
            };
            let out = crate::on_shm_threads(vec![half(0), half(1)], |c, input| run(c, input, Some(&sink)));
            assert!(out.iter().all(|r| r.is_ok()), "{out:?}");
            drop(sink);
            let lines: Vec<String> = BufReader::new(l.accept().unwrap().0).lines().map(|x| x.unwrap()).collect();
            assert_eq!(lines[0], "token 0");
            lines[1..].iter().map(|x| x.split(' ').map(str::to_string).collect()).collect()
        };
        let check = |lines: &[Vec<String>], unit: &str, first: usize, measure: &str| {
            for (k, f) in lines.iter().enumerate() {
                assert_eq!(f.len(), 6, "{f:?}");
                assert_eq!((f[0].as_str(), f[1].parse::<usize>().unwrap(), f[2].as_str()), (unit, first + k, measure), "{lines:?}");
                assert!(f[4].parse::<f64>().unwrap() >= 0.0 && f[5].parse::<f64>().unwrap() >= 0.0, "{f:?}");
            }
        };
        let bfs = lines_of(1, 0);
        check(&bfs, "level", 0, "frontier");
        assert_eq!(bfs.iter().map(|f| f[3].as_str()).collect::<Vec<_>>(), vec!["1"; 10]);
        let sssp = lines_of(4, 0);
        check(&sssp, "round", 1, "improved");
        let improved: Vec<&str> = sssp.iter().map(|f| f[3].as_str()).collect();
        assert_eq!(improved, [vec!["1"; 9], vec!["0"]].concat());
        let wcc = lines_of(2, 0);
        check(&wcc, "round", 1, "changed");
        assert!(!wcc.is_empty() && wcc.last().unwrap()[3] == "0" && wcc[..wcc.len() - 1].iter().all(|f| f[3] != "0"), "{wcc:?}");
        let cdlp = lines_of(3, 3);
        check(&cdlp, "iteration", 1, "changed");
        assert_eq!(cdlp.len(), 3);
        let lcc = lines_of(5, 0);
        check(&lcc[..1], "phase", 1, "candidates");
        check(&lcc[1..], "phase", 2, "links");
        // A path: the 8 inner vertices have two neighbours; no neighbours are linked.
        assert_eq!((lcc.len(), lcc[0][3].as_str(), lcc[1][3].as_str()), (2, "8", "0"));
    }

    // 0 -> 1 -> 2, 3 alone, 4 <-> 5; split over 2 processes.
    const EDGES: [(u64, u64); 4] = [(0, 1), (1, 2), (4, 5), (5, 4)];

    #[test]
    fn bfs_wcc_cdlp_over_two_processes() {
        let split = |code, source, it| vec![request(code, 6, source, it, &EDGES[..2], None), request(code, 6, source, it, &EDGES[2..], None)];
        let u = i64::MAX as u64;
        assert_eq!(values(&on_threads(split(1, 1, 0))), vec![(0, u), (1, 0), (2, 1), (3, u), (4, u), (5, u)]);
        assert_eq!(values(&on_threads(split(2, 0, 0))), vec![(0, 0), (1, 0), (2, 0), (3, 3), (4, 4), (5, 4)]);
        // One iteration: 0 takes 1's label; 1 sees 0 and 2 (tie: 0); 2 takes 1; 4 and 5 swap.
        assert_eq!(values(&on_threads(split(3, 0, 1))), vec![(0, 1), (1, 0), (2, 1), (3, 3), (4, 5), (5, 4)]);
    }

    #[test]
    fn sssp_weights_travel_with_their_edges() {
        let w = [2.5, 0.0, 1.0, 7.0];
        let out = on_threads(vec![request(4, 6, 0, 0, &EDGES[..2], Some(&w[..2])), request(4, 6, 0, 0, &EDGES[2..], Some(&w[2..]))]);
        let inf = f64::INFINITY.to_bits();
        assert_eq!(values(&out), vec![(0, 0f64.to_bits()), (1, 2.5f64.to_bits()), (2, 2.5f64.to_bits()), (3, inf), (4, inf), (5, inf)]);
    }

    #[test]
    fn lcc_over_two_processes() {
        // A directed triangle 0 -> 1 -> 2 -> 0 and 0 -> 3: N(0) = {1, 2, 3} holds 1 -> 2 of
        // 6 possible edges; N(1) = {0, 2} holds 2 -> 0, N(2) = {0, 1} holds 0 -> 1, of 2.
        let e = [(0, 1), (1, 2), (2, 0), (0, 3)];
        let out = on_threads(vec![request(5, 4, 0, 0, &e[..2], None), request(5, 4, 0, 0, &e[2..], None)]);
        let got: Vec<(u64, f64)> = values(&out).into_iter().map(|(v, b)| (v, f64::from_bits(b))).collect();
        let want = [(0, 1.0 / 6.0), (1, 0.5), (2, 0.5), (3, 0.0)];
        assert_eq!(got.len(), want.len());
        for ((v, c), (wv, wc)) in got.iter().zip(want) {
            assert_eq!(*v, wv);
            assert!((c - wc).abs() < 1e-15, "vertex {v}: {c} != {wc}");
        }
    }

    #[test]
    fn a_negative_weight_fails_everywhere_naming_the_edge() {
        let out = on_threads(vec![request(4, 6, 0, 0, &EDGES[..2], Some(&[1.0, 1.0])), request(4, 6, 0, 0, &EDGES[2..], Some(&[1.0, -3.0]))]);
        for r in out {
            let e = r.unwrap_err();
            assert!(e.contains("edge 1 of process 1, (5, 4), has weight -3"), "{e}");
        }
    }

    #[test]
    fn bad_parameters_fail_everywhere_with_one_message() {
        let out = on_threads(vec![request(3, 6, 0, -1, &EDGES[..2], None), request(3, 6, 0, -1, &EDGES[2..], None)]);
        for (q, r) in out.into_iter().enumerate() {
            let e = r.unwrap_err();
            let want = if q == 0 { "iterations must be >= 0, got -1" } else { "process 0 does not parse" };
            assert!(e.contains(want), "{e}");
        }
        let out = on_threads(vec![request(1, 6, 9, 0, &EDGES[..2], None), request(1, 6, 9, 0, &EDGES[2..], None)]);
        for r in out {
            let e = r.unwrap_err();
            assert!(e.contains("source 9 is not a vertex"), "{e}");
        }
        let out = on_threads(vec![request(1, 6, 0, 0, &EDGES[..2], None), request(1, 6, 1, 0, &EDGES[2..], None)]);
        for r in out {
            assert!(r.unwrap_err().contains("process 1 differ"));
        }
    }

    /// Issue 24 item 4: a thread count no process can run is graphblas's resource error
    /// on every process (an `LpfException` on the JVM side), not a panic or an abort.
    #[test]
    fn a_thread_count_beyond_the_limit_fails_everywhere_naming_it() {
        let with_threads = |mut b: Vec<u8>| {
            b[12..16].copy_from_slice(&70_000u32.to_le_bytes());
            b
        };
        let out = on_threads(vec![with_threads(request(2, 6, 0, 0, &EDGES[..2], None)), with_threads(request(2, 6, 0, 0, &EDGES[2..], None))]);
        for r in out {
            let e = r.unwrap_err();
            assert!(e.contains("cannot run on 70000 threads: more than the 65535"), "{e}");
        }
    }
}
