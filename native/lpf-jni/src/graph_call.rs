//! The bundled algorithm `graph-call`: one LpfGraph call inside one LPF job. Each
//! process passes its part of the graph with the callers' own vertex ids — integers
//! (`i64`) or byte strings (Spark's strings) — the processes number them, load the graph
//! (graphblas's `dist::Graph`), run the kernel on it and answer with the ids: no Spark job
//! numbers anything (docs/spark.md, "One call").
//!
//! Every process passes a *request* and gets a *reply*; both are little-endian byte
//! strings. The headers' fields, magics, flags and codes are defined once, in
//! [`crate::layout`], from which the Scala side's constants (`LpfLayout`) are generated;
//! `describe` reads a request back field by field (`LpfNative.describeRequest`), against
//! which the JVM's tests check its encoder.
//!
//! Request (100-byte header, then the parts; in native memory the JVM appends them in
//! four sections, see [`crate::request`]: the head up to the source, the edges, the
//! weights, the vertex ids; the contiguous form is the four one after the other):
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFGCQ01` |
//! | 8 | u32 | kernel: 0 load only (needs flag bit 3), 1 BFS, 2 WCC, 3 CDLP, 4 SSSP, 5 LCC, 6 PageRank, 7 GraphX PageRank, 8 SCC, 9 shortest paths to landmarks, 10 triangle count, 11 k-core, 12 maximal independent set, 13 BFS paths (GraphFrames' bfs; needs flag bit 11) |
//! | 12 | u32 | threads per process (0 = 1) |
//! | 16 | u32 | id kind: 1 integral (i64), 2 byte strings |
//! | 20 | u32 | flags: bit 0 a source follows; bits 1-2 PageRank exchange (0 auto, 1 allgather, 2 plan); bit 3 keep: the loaded graph stays in this OS process under the graph id ([`crate::resident`]); bit 4 use: run on the graph kept under the graph id (no edges, no vertex ids); bit 5 the edges carry weights; bit 6 a source list follows (instead of bit 0's source); bit 7 numbers: WCC, CDLP and SCC answer labels as vertex numbers (value kind 1: the label's position in the ascending order of all ids, 0..n); bit 8 unique: the vertex ids must be distinct over all processes (else every process refuses with `vertex id X appears more than once`, the smallest such id); bit 9 vector: kernel 7 answers one rank per source (value kind 5); bit 10 undirected: kernel 9 takes the edges both ways; bit 11 marks: v marks follow the vertex ids (kernel 13 only) |
//! | 24 | i64 | iterations (CDLP: rounds, >= 0; PageRank, GraphX PageRank: max iterations, >= 1; MIS: the seed, any i64; BFS paths: maxPathLength, >= 0; else 0) |
//! | 32 | f64 | alpha (PageRank; GraphX PageRank: the reset probability, in [0, 1]; else 0) |
//! | 40 | f64 | tol (PageRank; GraphX PageRank: >= 0, 0 runs exactly the max iterations; else 0) |
//! | 48 | u64 | m, this process's edges |
//! | 56 | u64 | v, this process's vertex ids (vertices that need no edge) |
//! | 64 | 16 bytes | graph id (flags 3 and 4; else zeros) |
//! | 80 | u64 | flag 3: the native bytes kept graphs may hold in this OS process (its executor's `spark.executor.memoryOverhead`; 0: no limit) |
//! | 88 | u64 | flag 3: the bytes other kept graphs hold there now |
//! | 96 | u32 | L: length of this process's refusal text (0: none) |
//! | 100 | L bytes | refusal, UTF-8: when L > 0 this process's input is refused; every process answers with the first refusing process's text, nothing else is read |
//! | .. | | source (flag bit 0): integral an i64; byte strings u32 length + bytes |
//! | .. | | source list (flag bit 6): u32 w, then w ids, each encoded as the source |
//! | .. | | m edges: integral (i64 src, i64 dst) each; byte strings (u32 len, src bytes, u32 len, dst bytes) each |
//! | .. | | flag bit 5: m f64 weights, in edge order |
//! | .. | | v vertex ids: i64 each, or (u32 len, bytes) each |
//! | .. | | flag bit 11: v u8 marks, one per vertex id in order: bit 0 "from", bit 1 "to" (no other bits); an id listed twice has the OR of its marks |
//!
//! Bytes 8..48, the graph id and the source or source list must be the same on every
//! process; the first supersteps check that (after the refusals), so a bad, refused or
//! disagreeing request fails on every process with one message. BFS and SSSP need the
//! source flag, the others forbid it. GraphX PageRank (7) and shortest paths (9) take a
//! source list (flag 6; the others forbid it), whose ids must be distinct vertices (an id
//! twice, or one that is no vertex, is refused naming it): 7 plain PageRank without
//! sources (w = 0 or no flag 6), personalized with w >= 1 (w > 1 needs flag 9, flag 9
//! needs w >= 1); 9 needs w >= 1 landmarks. SSSP needs weights (flag bit 5, or a kept graph loaded with
//! them); a weight must be a number >= 0 (the caller refuses others, naming the ids;
//! checked here too). Flag bit 7 (numbers) is for WCC, CDLP and SCC only.
//!
//! The kernels' graph: the edges deduplicated, every id of an edge or of the vertex section
//! a vertex. SCC follows the directed edges (label: the smallest id of the SCC). Triangle
//! count, k-core and MIS see the undirected simple graph (directions ignored, self-loops
//! dropped, each pair once): the triangles at a vertex; its coreness (isolated: 0); the
//! greedy independent set in the order of priorities hashed from (seed, vertex number),
//! which depends only on the seed and the graph, not on the number of processes or threads.
//! A graph to keep must fit the limit at 80 beside the bytes at 88:
//! checked before loading with a lower bound of its part (10 bytes per edge of the
//! request: both directions' column index and pattern value, 8 per vertex id), and after
//! loading with its exact size; either refusal names the bytes and the limit, and then
//! nothing is kept.
//!
//! BFS paths (kernel 13, GraphFrames' bfs): a search from every vertex marked "from",
//! following edges forward level by level, stops after the first level L that reaches a
//! vertex marked "to", or after level maxPathLength. Its reply is sparse: only the
//! vertices on a shortest path from a "from" vertex to a "to" one, with their depths
//! (none when no path was found). With flag 4 (a kept graph) the
//! vertex section lists only marked ids (v of them, then their marks), each looked up in
//! the kept graph: an id that is no vertex of it is refused, naming it. The marks belong
//! to the call; a kept graph keeps none.
//!
//! Three replies. `LPFGCE01`, u32 length, UTF-8 text: every process refuses the input
//! with that message (a refusal, a source that is no vertex, a graph without vertices, a
//! weight below 0: what the caller reports as a bad argument, not as a failed job).
//! `LPFGCM01` alone: a call with flag bit 4 found the kept graph missing in some process
//! (every process says so; the caller loads the graph again). Else the result, an 88-byte
//! header, then the ids and values:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic `LPFGCR01` |
//! | 8 | u64 | n, vertices of the whole graph |
//! | 16 | u64 | edges of the whole graph (duplicates once) |
//! | 24 | u64 | rounds (BFS levels, WCC rounds, CDLP/PageRank iterations, SSSP rounds; LCC and triangle count 1; SCC, k-core, MIS their update rounds; shortest paths: the most levels of a landmark's search; BFS paths: L when found, else the deepest level searched) |
//! | 32 | f64 | load seconds (this process: parse, numbering, routing, build) |
//! | 40 | f64 | compute seconds (this process) |
//! | 48 | f64 | residual (PageRank's last L1 change; GraphX PageRank's last largest per-vertex change, before the final scaling; else 0) |
//! | 56 | u32 | flags: bit 0 converged (PageRank; GraphX PageRank: tol > 0 and the change fell below it); bits 1-2 exchange that ran (PageRank: 1 allgather, 2 plan); bit 3 found (BFS paths: some "to" vertex has depth <= maxPathLength) |
//! | 60 | u32 | value kind: 1 i64, 2 f64, 3 an id (same encoding as the ids), 4 w i64 per vertex, 5 w f64 per vertex (w: the source list's length; a vertex's w values together) |
//! | 64 | f64 | id seconds (this process: numbering the ids + translating results back to ids) |
//! | 72 | u64 | k, vertices in this reply (0 for a load only) |
//! | 80 | u64 | native bytes of the graph this process keeps (flags 3 and 4; else 0) |
//! | 88 | | k ids: i64 each, or (u32 len, bytes) each; ascending |
//! | .. | | k values: 8 bytes each (BFS i64 depth, i64::MAX unreachable; SSSP f64 distance, inf unreachable; LCC f64; PageRank f64 rank; GraphX PageRank f64 rank, summing to n, or personalized to 1; triangle count, k-core i64; MIS i64 1 in the set, 0 not; BFS paths i64 depth 0..L (only the vertices on a shortest path are listed); WCC/CDLP/SCC with flag 7 an i64 vertex number), or for WCC/CDLP/SCC ids in the ids' encoding; kind 4/5: k·w values (shortest paths: the hops to each landmark, i64::MAX unreachable; GraphX PageRank with flag 9: each source's rank) |
//!
//! Over all processes every vertex comes once; process q's block precedes q+1's.

use crate::verdict::{agree_on_request, exchange_words};
use crate::pagerank::{check_parameters, fnv, Reader};
use crate::progress::ProgressSink;
use crate::request::{RequestBytes, EDGES, HEAD, SECTIONS, VERTICES};
use crate::resident::{self, GraphId};
use graphblas::algorithms::pagerank::{check_parameters_named, ParameterNames};
use graphblas::dist::{
    ByteKeys, DistError, DistOptions, Exchange, Graph, GraphxPageRankConfig, IterationProgress, KeyedEdges, KeyedValues, RoundProgress,
    VertexId, VertexIds, VertexSection, FROM, TO,
};
use graphblas::PageRankConfig;
use lpf::{Context, MSG_DEFAULT, SYNC_DEFAULT};
use std::sync::Arc;
use std::time::Instant;

// The layouts' magics, fields, flags and codes: crate::layout, their one definition.
use crate::layout::gc_refused::{self, MISSING_MAGIC, MAGIC as REFUSED_MAGIC};
use crate::layout::gc_reply::{self, FOUND, MAGIC as REPLY_MAGIC};
use crate::layout::gc_request::{self as q, MAGIC as REQUEST_MAGIC};
use crate::layout::gc_request::{EXCHANGE, HAS_SOURCE, KEEP, MARKS, NUMBERS, SOURCES, UNDIRECTED, UNIQUE, USE, VECTOR, WEIGHTS};
use crate::layout::exchange;

const REQUEST_HEADER: usize = q::REFUSAL_LENGTH.end();
const REPLY_HEADER: usize = gc_reply::KEPT_BYTES.end();

/// The kernel codes, as errors list them.
const KERNEL_CODES: &str =
    "0 (load), 1 (BFS), 2 (WCC), 3 (CDLP), 4 (SSSP), 5 (LCC), 6 (PageRank), 7 (GraphX PageRank), 8 (SCC), 9 (shortest paths), 10 (triangle count), 11 (k-core), 12 (MIS) or 13 (BFS paths)";

/// Every flag a request may set.
const KNOWN_FLAGS: u32 = HAS_SOURCE | EXCHANGE | KEEP | USE | WEIGHTS | SOURCES | NUMBERS | UNIQUE | VECTOR | UNDIRECTED | MARKS;

/// GraphX PageRank's parameters as GraphFrames names them (the Spark bridge's API).
const GRAPHX_NAMES: ParameterNames = ParameterNames { alpha: "resetProbability", tol: "tol", max_iters: "maxIter" };

/// The request's fixed fields, as read.
#[derive(Clone, Debug, PartialEq)]
struct Header {
    kernel: u32,
    threads: u32,
    kind: u32,
    flags: u32,
    iterations: i64,
    alpha: f64,
    tol: f64,
    m: u64,
    v: u64,
    graph: GraphId,
    /// Flag 3: the bytes kept graphs may hold in this OS process (0: no limit), and what
    /// the others hold now.
    limit: u64,
    kept: u64,
}

/// What to run, from a header that passed [`Header::check`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kernel {
    /// Load the graph and keep it; no result.
    Load,
    Bfs,
    Wcc,
    Cdlp { iterations: usize },
    Sssp,
    Lcc,
    PageRank { alpha: f64, tol: f64, max_iters: usize, exchange: Exchange },
    /// GraphX PageRank; `vector`: kind 5, one rank per source.
    GraphxPageRank { reset_probability: f64, tol: f64, max_iters: usize, vector: bool },
    Scc,
    /// Hops to the landmarks (the source list).
    ShortestPaths { undirected: bool },
    Triangles,
    KCore,
    Mis { seed: i64 },
    BfsPaths { max_length: usize },
}

impl Header {
    /// The kernel with its parameters, or what is wrong with them. Reads only bytes
    /// 8..48, which every process agrees on, so every process gives the same verdict.
    fn check(&self) -> Result<Kernel, String> {
        if ![q::INTEGRAL_IDS, q::STRING_IDS].contains(&self.kind) {
            return Err(format!("id kind {} is not 1 (integral) or 2 (byte strings)", self.kind));
        }
        if self.flags & !KNOWN_FLAGS != 0 {
            return Err(format!(
                "flags {:#x} set bits other than 0 (source), 1-2 (exchange), 3 (keep), 4 (use), 5 (weights), 6 (source list), 7 (numbers), 8 (unique), 9 (vector), 10 (undirected), 11 (marks)",
                self.flags
            ));
        }
        if self.flags & HAS_SOURCE != 0 && self.flags & SOURCES != 0 {
            return Err("flags 0 (source) and 6 (source list) exclude each other".into());
        }
        if self.flags & KEEP != 0 && self.flags & USE != 0 {
            return Err("flags 3 (keep) and 4 (use) exclude each other".into());
        }
        if self.flags & USE != 0 && self.flags & WEIGHTS != 0 {
            return Err("flag 4 (use) sends no edges, so no weights (flag 5)".into());
        }
        let kernel = match self.kernel {
            q::LOAD if self.flags & KEEP != 0 => Kernel::Load,
            q::LOAD => return Err("kernel 0 (load only) needs flag 3 (keep)".into()),
            q::BFS => Kernel::Bfs,
            q::WCC => Kernel::Wcc,
            q::CDLP => Kernel::Cdlp { iterations: check_iterations(self.iterations)? },
            q::SSSP => Kernel::Sssp,
            q::LCC => Kernel::Lcc,
            q::PAGERANK => {
                check_parameters(self.alpha, self.tol, self.iterations)?;
                let exchange = exchange::from_flags(self.flags)?;
                Kernel::PageRank { alpha: self.alpha, tol: self.tol, max_iters: self.iterations as usize, exchange }
            }
            q::GRAPHX_PAGERANK => {
                check_parameters_named(self.alpha, self.tol, self.iterations, GRAPHX_NAMES)?;
                let vector = self.flags & VECTOR != 0;
                Kernel::GraphxPageRank { reset_probability: self.alpha, tol: self.tol, max_iters: self.iterations as usize, vector }
            }
            q::SCC => Kernel::Scc,
            q::SHORTEST_PATHS => Kernel::ShortestPaths { undirected: self.flags & UNDIRECTED != 0 },
            q::TRIANGLES => Kernel::Triangles,
            q::KCORE => Kernel::KCore,
            q::MIS => Kernel::Mis { seed: self.iterations },
            q::BFS_PATHS => Kernel::BfsPaths {
                max_length: usize::try_from(self.iterations).map_err(|_| format!("maxPathLength must be >= 0, got {}", self.iterations))?,
            },
            x => return Err(format!("kernel code {x} is not {KERNEL_CODES}")),
        };
        match (matches!(kernel, Kernel::BfsPaths { .. }), self.flags & MARKS != 0) {
            (true, false) => return Err("BFS paths needs vertex marks (flag bit 11)".into()),
            (false, true) => return Err(format!("{} takes no vertex marks (flag bit 11 is set)", name(&kernel))),
            _ => {}
        }
        if self.flags & NUMBERS != 0 && !matches!(kernel, Kernel::Wcc | Kernel::Cdlp { .. } | Kernel::Scc) {
            return Err(format!("{} answers no labels, so no vertex numbers (flag bit 7 is for WCC, CDLP and SCC)", name(&kernel)));
        }
        let is_graphx = matches!(kernel, Kernel::GraphxPageRank { .. });
        let is_paths = matches!(kernel, Kernel::ShortestPaths { .. });
        if self.flags & SOURCES != 0 && !is_graphx && !is_paths {
            return Err(format!("{} takes no source list (flag bit 6 is set)", name(&kernel)));
        }
        if is_paths && self.flags & SOURCES == 0 {
            return Err("shortest paths needs landmarks: a source list (flag bit 6)".into());
        }
        if self.flags & VECTOR != 0 && !is_graphx {
            return Err(format!("flag 9 (vector) is GraphX PageRank's (kernel 7), not {}'s", name(&kernel)));
        }
        if self.flags & UNDIRECTED != 0 && !is_paths {
            return Err(format!("flag 10 (undirected) is shortest paths' (kernel 9), not {}'s", name(&kernel)));
        }
        if kernel == Kernel::Sssp && self.flags & (WEIGHTS | USE) == 0 {
            return Err("SSSP needs edge weights (flag bit 5)".into());
        }
        let wants_source = matches!(kernel, Kernel::Bfs | Kernel::Sssp);
        match (wants_source, self.flags & HAS_SOURCE != 0) {
            (true, false) => Err(format!("{} needs a source vertex (flag bit 0)", name(&kernel))),
            (false, true) => Err(format!("{} takes no source vertex (flag bit 0 is set)", name(&kernel))),
            _ => Ok(kernel),
        }
    }
}

/// CDLP's iteration count, the one check of it (the CLI's `--iterations` is unsigned).
pub(crate) fn check_iterations(iterations: i64) -> Result<usize, String> {
    usize::try_from(iterations).map_err(|_| format!("iterations must be >= 0, got {iterations}"))
}

fn name(k: &Kernel) -> &'static str {
    match k {
        Kernel::Load => "load",
        Kernel::Bfs => "BFS",
        Kernel::Wcc => "WCC",
        Kernel::Cdlp { .. } => "CDLP",
        Kernel::Sssp => "SSSP",
        Kernel::Lcc => "LCC",
        Kernel::PageRank { .. } => "PageRank",
        Kernel::Scc => "SCC",
        Kernel::Triangles => "triangle count",
        Kernel::KCore => "k-core",
        Kernel::Mis { .. } => "MIS",
        Kernel::BfsPaths { .. } => "BFS paths",
        Kernel::GraphxPageRank { .. } => "GraphX PageRank",
        Kernel::ShortestPaths { .. } => "shortest paths",
    }
}

/// The verdict on a kernel's source list of `w` ids, which the header cannot see: GraphX
/// PageRank answers one rank per vertex but with flag 9 (vector), which needs a source.
fn check_width(kernel: Kernel, w: usize) -> Result<Kernel, String> {
    match kernel {
        Kernel::GraphxPageRank { vector: false, .. } if w > 1 => {
            Err(format!("GraphX PageRank with {w} sources answers {w} ranks per vertex: it needs flag 9 (vector)"))
        }
        Kernel::GraphxPageRank { vector: true, .. } if w == 0 => {
            Err("flag 9 (vector) needs a source list (flag 6) of at least one source".into())
        }
        k => Ok(k),
    }
}

/// A parsed request: the header's verdict, and the parts when it passed.
pub(crate) struct Request {
    header: Header,
    /// The kernel, or the parameter error every process reports alike.
    pub(crate) kernel: Result<Kernel, String>,
    pub(crate) threads: usize,
    pub(crate) source: Option<VertexId>,
    /// Flag 6's ids (empty without it).
    pub(crate) sources: Vec<VertexId>,
    pub(crate) edges: KeyedEdges,
    /// Flag 11: the mark of every vertex id, in order.
    pub(crate) marks: Option<Vec<u8>>,
    /// Hash of bytes 8..48, the graph id and the source or source list (what must agree
    /// between processes).
    pub(crate) digest: u64,
}

impl Request {
    /// Whether the loaded graph stays (flag 3) / the call runs on a kept one (flag 4).
    fn keep(&self) -> bool {
        self.header.flags & KEEP != 0
    }

    fn uses_kept(&self) -> bool {
        self.header.flags & USE != 0
    }

    /// Whether the vertex ids must be distinct (flag 8).
    fn unique(&self) -> bool {
        self.header.flags & UNIQUE != 0
    }

    /// Whether labels are answered as vertex numbers (flag 7).
    fn numbers(&self) -> bool {
        self.header.flags & NUMBERS != 0
    }
}

/// The header and the refusal text (empty: none).
fn header(b: &[u8]) -> Result<(Header, &[u8]), String> {
    let mut r = Reader::new(b);
    if r.magic()? != REQUEST_MAGIC {
        return Err("the request does not start with LPFGCQ01 (see native/lpf-jni/src/graph_call.rs)".into());
    }
    let h = Header {
        kernel: r.u32_at(q::KERNEL)?,
        threads: r.u32_at(q::THREADS)?,
        kind: r.u32_at(q::ID_KIND)?,
        flags: r.u32_at(q::FLAGS)?,
        iterations: r.u64_at(q::ITERATIONS)? as i64,
        alpha: r.f64_at(q::ALPHA)?,
        tol: r.f64_at(q::TOL)?,
        m: r.u64_at(q::EDGE_COUNT)?,
        v: r.u64_at(q::VERTEX_COUNT)?,
        graph: r.field(q::GRAPH_ID)?.try_into().expect("16 bytes"),
        limit: r.u64_at(q::MEMORY_LIMIT)?,
        kept: r.u64_at(q::KEPT_BYTES)?,
    };
    let len = r.u32_at(q::REFUSAL_LENGTH)? as usize;
    let refusal = r.take(len, "the refusal text")?;
    Ok((h, refusal))
}

/// Reads ids of one kind from a request.
struct Ids<'r, 'a> {
    r: &'r mut Reader<'a>,
    bytes: bool,
}

impl Ids<'_, '_> {
    fn one(&mut self, what: &str) -> Result<VertexId, String> {
        Ok(if self.bytes {
            let len = self.r.u32(what)? as usize;
            VertexId::Bytes(self.r.take(len, what)?.to_vec())
        } else {
            VertexId::Integral(self.r.u64(what)? as i64)
        })
    }

    /// `count` ids into one buffer; the count is checked against the bytes left first.
    fn many(&mut self, count: u64, what: &str) -> Result<VertexIds, String> {
        let left = (self.r.len() - self.r.at()) as u64;
        let least = if self.bytes { 4 } else { 8 };
        if count.checked_mul(least).is_none_or(|need| need > left) {
            return Err(format!("the request declares {count} {what} but has {left} bytes left for them"));
        }
        if self.bytes {
            let mut keys = ByteKeys::new();
            for _ in 0..count {
                let len = self.r.u32(what)? as usize;
                keys.push(self.r.take(len, what)?);
            }
            Ok(VertexIds::Bytes(keys))
        } else {
            let raw = self.r.take(8 * count as usize, what)?;
            Ok(VertexIds::Integral(raw.chunks_exact(8).map(|x| i64::from_le_bytes(x.try_into().unwrap())).collect()))
        }
    }
}

/// The sections of a contiguous request (see [`crate::request`]): the head (header,
/// refusal, source), the edges' ids, their weights, the vertex ids. Lenient: a section the
/// bytes cannot hold is cut at their end, and [`parse_sections`] names what is missing.
fn split(b: &[u8]) -> [&[u8]; SECTIONS] {
    let whole = [b, &[][..], &[][..], &[][..]];
    let Ok((h, refusal)) = header(b) else { return whole };
    if !refusal.is_empty() {
        return whole;
    }
    let strings = h.kind == q::STRING_IDS;
    // The end of the id frame at `at` (u32 length, bytes), at most the end of `b`.
    let frame = |at: usize| match b.get(at..at.saturating_add(4)) {
        Some(l) => (at + 4).saturating_add(u32::from_le_bytes(l.try_into().unwrap()) as usize).min(b.len()),
        None => b.len(),
    };
    let fixed = |at: usize, bytes: u64| at.saturating_add(usize::try_from(bytes).unwrap_or(usize::MAX)).min(b.len());
    let mut head = REQUEST_HEADER;
    if h.flags & HAS_SOURCE != 0 {
        head = if strings { frame(head) } else { fixed(head, 8) };
    } else if h.flags & SOURCES != 0 {
        let w = b.get(head..head + 4).map_or(0, |l| u32::from_le_bytes(l.try_into().unwrap()));
        head = fixed(head, 4);
        if strings {
            for _ in 0..w {
                if head >= b.len() {
                    break;
                }
                head = frame(head);
            }
        } else {
            head = fixed(head, 8 * w as u64);
        }
    }
    let ends = if strings {
        let (mut at, mut k) = (head, 0u64);
        while k < h.m.saturating_mul(2) && at < b.len() {
            at = frame(at);
            k += 1;
        }
        at
    } else {
        fixed(head, h.m.saturating_mul(16))
    };
    let weights = if h.flags & WEIGHTS != 0 { fixed(ends, h.m.saturating_mul(8)) } else { ends };
    [&b[..head], &b[head..ends], &b[ends..weights], &b[weights..]]
}

/// A contiguous request parsed (see [`parse_sections`]).
pub(crate) fn parse(b: &[u8]) -> Result<Request, String> {
    parse_sections(split(b))
}

/// No bytes left after `what` in its section.
fn ended(r: &Reader<'_>, what: &str) -> Result<(), String> {
    if r.at() != r.len() {
        return Err(format!("the request has {} bytes after {what} (byte {} of its section)", r.len() - r.at(), r.at()));
    }
    Ok(())
}

/// The whole request from its sections (a refused one is not parsed). The parts are read
/// only when the header's parameters pass: otherwise the request carries their error.
pub(crate) fn parse_sections(s: [&[u8]; SECTIONS]) -> Result<Request, String> {
    let (h, refusal) = header(s[HEAD])?;
    if !refusal.is_empty() {
        return Err(format!("the request is refused: {}", String::from_utf8_lossy(refusal)));
    }
    let kernel = h.check();
    let threads = h.threads.max(1) as usize;
    let mut agreed = s[HEAD][q::AGREED].to_vec();
    agreed.extend_from_slice(&h.graph);
    let empty = || VertexIds::Integral(Vec::new());
    let Ok(_) = &kernel else {
        let edges = KeyedEdges { ends: empty(), vertices: empty(), weights: None };
        return Ok(Request { header: h, kernel, threads, source: None, sources: Vec::new(), edges, marks: None, digest: fnv(&agreed) & (u64::MAX >> 1) });
    };
    if h.flags & USE != 0 && (h.m != 0 || (h.v != 0 && h.flags & MARKS == 0)) {
        return Err(format!(
            "a call on a kept graph (flag 4) sends no edges, and vertex ids only with their marks (flag 11); this one declares {} and {}",
            h.m, h.v
        ));
    }
    let strings = h.kind == q::STRING_IDS;
    let mut r = Reader::new(s[HEAD]);
    r.take(REQUEST_HEADER + refusal.len(), "the header")?;
    let source_at = r.at();
    let source = if h.flags & HAS_SOURCE != 0 { Some(Ids { r: &mut r, bytes: strings }.one("the source")?) } else { None };
    let mut sources = Vec::new();
    if h.flags & SOURCES != 0 {
        let w = r.u32("the source count")?;
        let mut ids = Ids { r: &mut r, bytes: strings };
        for _ in 0..w {
            sources.push(ids.one("the source list")?);
        }
    }
    let kernel = kernel.and_then(|k| check_width(k, sources.len()));
    let source_bytes = &s[HEAD][source_at..r.at()];
    ended(&r, "the source or source list")?;
    let mut r = Reader::new(s[EDGES]);
    let ends = Ids { r: &mut r, bytes: strings }.many(h.m.checked_mul(2).ok_or("the edge count overflows")?, "edge ends")?;
    ended(&r, "the edges")?;
    let mut r = Reader::new(s[crate::request::WEIGHTS]);
    let weights = if h.flags & WEIGHTS != 0 {
        let left = r.len() as u64;
        let bytes = h.m.checked_mul(8).filter(|&x| x <= left).ok_or_else(|| format!("the request declares {} weights but has {left} bytes left", h.m))?;
        let raw = r.take(bytes as usize, "the weights")?;
        Some(raw.chunks_exact(8).map(|w| f64::from_le_bytes(w.try_into().unwrap())).collect())
    } else {
        None
    };
    ended(&r, "the weights")?;
    let mut r = Reader::new(s[VERTICES]);
    let vertices = Ids { r: &mut r, bytes: strings }.many(h.v, "vertex ids")?;
    let marks = if h.flags & MARKS != 0 {
        let left = (r.len() - r.at()) as u64;
        if h.v > left {
            return Err(format!("the request declares {} vertex marks but has {left} bytes left for them", h.v));
        }
        let marks = r.take(h.v as usize, "the vertex marks")?;
        if let Some(k) = marks.iter().position(|&m| m & !(FROM | TO) != 0) {
            return Err(format!("vertex mark {k} is {:#x}: a mark sets bits 0 (from) and 1 (to) only", marks[k]));
        }
        Some(marks.to_vec())
    } else {
        None
    };
    ended(&r, if marks.is_some() { "the vertex marks" } else { "the vertex ids" })?;
    agreed.extend_from_slice(source_bytes);
    let digest = fnv(&agreed) & (u64::MAX >> 1);
    Ok(Request { header: h, kernel, threads, source, sources, edges: KeyedEdges { ends, vertices, weights }, marks, digest })
}

fn show_ids(ids: &VertexIds) -> String {
    match ids {
        VertexIds::Integral(v) => format!("{v:?}"),
        VertexIds::Bytes(k) => {
            let all: Vec<String> = k.iter().map(|b| VertexId::Bytes(b.to_vec()).to_string()).collect();
            format!("[{}]", all.join(", "))
        }
    }
}

/// Every field of a request as this side reads it, one line, or the parse or parameter
/// error (the parameters' one check).
pub(crate) fn describe(b: &[u8]) -> Result<String, String> {
    let (_, refusal) = header(b)?;
    if !refusal.is_empty() {
        return Ok(format!("graph-call refused: {}", String::from_utf8_lossy(refusal)));
    }
    let r = parse(b)?;
    let kernel = r.kernel?;
    let h = &r.header;
    Ok(format!(
        "graph-call {kernel:?} threads={} kind={} flags={} iterations={} alpha={} tol={} source={}{} edges {} weights {:?} vertices {}{}",
        r.threads,
        h.kind,
        h.flags,
        h.iterations,
        h.alpha,
        h.tol,
        r.source.as_ref().map_or("none".to_string(), |s| s.to_string()),
        if h.flags & SOURCES != 0 {
            format!(" sources=[{}]", r.sources.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
        } else {
            String::new()
        },
        show_ids(&r.edges.ends),
        r.edges.weights,
        show_ids(&r.edges.vertices),
        r.marks.as_ref().map_or(String::new(), |m| format!(" marks {m:?}"))
    ))
}

/// Why a call gives no result: the input, which every process refuses alike with one
/// message (the caller's bad argument: the `LPFGCE01` reply), or a failure of the job.
#[derive(Debug)]
enum Failure {
    Refused(String),
    Failed(String),
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Failed(m)
    }
}

/// graphblas's errors: bad input (ids, weights, sources, an empty graph) is the caller's
/// argument; communication, resources and output are the job's failure.
impl From<DistError> for Failure {
    fn from(e: DistError) -> Failure {
        match e {
            DistError::Invalid(_) | DistError::Input(_) => Failure::Refused(e.to_string()),
            _ => Failure::Failed(e.to_string()),
        }
    }
}

/// The refusals' verdict: every process learns every refusal's length and, if any
/// process refused, the first refusing process's text. Collective.
fn agree_on_refusals(ctx: &mut Context, refusal: &[u8]) -> Result<Option<String>, String> {
    let p = ctx.nprocs() as usize;
    let lengths = exchange_words(ctx, refusal.len() as u64, 2, p)?;
    let Some(q) = lengths.iter().position(|&l| l > 0) else { return Ok(None) };
    let len = lengths[q] as usize;
    // Process q puts its text into everyone's buffer (one superstep, h = (p - 1) len).
    let mut text = vec![0u8; len];
    let mut mine = refusal.to_vec();
    mine.resize(len.max(refusal.len()), 0);
    let got = ctx.register_global(&mut text).map_err(|e| e.to_string())?;
    let src = ctx.register_local(&mut mine).map_err(|e| e.to_string())?;
    ctx.sync(SYNC_DEFAULT).map_err(|e| e.to_string())?;
    if ctx.pid() as usize == q {
        for to in 0..p {
            ctx.put(src.slot(), 0, to as u32, got.slot(), 0, len, MSG_DEFAULT).map_err(|e| e.to_string())?;
        }
    }
    ctx.sync(SYNC_DEFAULT).map_err(|e| e.to_string())?;
    let said = String::from_utf8_lossy(ctx.slice(&got)).into_owned();
    ctx.deregister(src.slot()).map_err(|e| e.to_string())?;
    ctx.deregister(got.slot()).map_err(|e| e.to_string())?;
    Ok(Some(said))
}

/// The reply's ids in their encoding.
fn put_ids(out: &mut Vec<u8>, ids: &VertexIds) {
    match ids {
        VertexIds::Integral(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        VertexIds::Bytes(k) => {
            for key in k.iter() {
                out.extend_from_slice(&(key.len() as u32).to_le_bytes());
                out.extend_from_slice(key);
            }
        }
    }
}

fn ids_bytes(ids: &VertexIds) -> usize {
    match ids {
        VertexIds::Integral(v) => 8 * v.len(),
        VertexIds::Bytes(k) => 4 * k.len() + k.byte_len(),
    }
}

/// What the reply's header says besides the result's own fields.
struct Times {
    load_seconds: f64,
    graph_id_seconds: f64,
    residual: f64,
    flags: u32,
    /// The native bytes of the graph this process keeps (0: none).
    kept_bytes: u64,
}

/// The values of a result, as the reply carries them.
trait Values {
    const KIND: u32;
    fn bytes(&self) -> usize;
    fn put(&self, out: &mut Vec<u8>);
}

impl Values for Vec<i64> {
    const KIND: u32 = gc_reply::I64S;
    fn bytes(&self) -> usize {
        8 * self.len()
    }
    fn put(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    }
}

impl Values for Vec<f64> {
    const KIND: u32 = gc_reply::F64S;
    fn bytes(&self) -> usize {
        8 * self.len()
    }
    fn put(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    }
}

impl Values for VertexIds {
    const KIND: u32 = gc_reply::IDS;
    fn bytes(&self) -> usize {
        ids_bytes(self)
    }
    fn put(&self, out: &mut Vec<u8>) {
        put_ids(out, self);
    }
}

/// w values per vertex, a vertex's together (kinds 4 and 5: one per source of the list).
struct PerSource<T>(Vec<T>);

impl Values for PerSource<i64> {
    const KIND: u32 = gc_reply::I64S_PER_SOURCE;
    fn bytes(&self) -> usize {
        self.0.bytes()
    }
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out)
    }
}

impl Values for PerSource<f64> {
    const KIND: u32 = gc_reply::F64S_PER_SOURCE;
    fn bytes(&self) -> usize {
        self.0.bytes()
    }
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out)
    }
}

/// A result whose values are w per vertex.
fn per_source<T>(r: KeyedValues<Vec<T>>) -> KeyedValues<PerSource<T>> {
    let KeyedValues { n, nnz, ids, values, rounds, compute_seconds, id_seconds } = r;
    KeyedValues { n, nnz, ids, values: PerSource(values), rounds, compute_seconds, id_seconds }
}

fn reply<V: Values>(r: &KeyedValues<V>, t: &Times) -> Result<Vec<u8>, String> {
    let size = REPLY_HEADER + ids_bytes(&r.ids) + r.values.bytes();
    let mut out = Vec::new();
    out.try_reserve_exact(size).map_err(|_| format!("out of memory: the reply needs {size} bytes"))?;
    out.resize(REPLY_HEADER, 0);
    out[..8].copy_from_slice(REPLY_MAGIC);
    gc_reply::VERTICES.put(&mut out, &r.n.to_le_bytes());
    gc_reply::EDGES.put(&mut out, &r.nnz.to_le_bytes());
    gc_reply::ROUNDS.put(&mut out, &(r.rounds as u64).to_le_bytes());
    gc_reply::LOAD_SECONDS.put(&mut out, &t.load_seconds.to_le_bytes());
    gc_reply::COMPUTE_SECONDS.put(&mut out, &r.compute_seconds.to_le_bytes());
    gc_reply::RESIDUAL.put(&mut out, &t.residual.to_le_bytes());
    gc_reply::FLAGS.put(&mut out, &t.flags.to_le_bytes());
    gc_reply::VALUE_KIND.put(&mut out, &V::KIND.to_le_bytes());
    gc_reply::ID_SECONDS.put(&mut out, &(t.graph_id_seconds + r.id_seconds).to_le_bytes());
    gc_reply::COUNT.put(&mut out, &(r.ids.len() as u64).to_le_bytes());
    gc_reply::KEPT_BYTES.put(&mut out, &t.kept_bytes.to_le_bytes());
    put_ids(&mut out, &r.ids);
    r.values.put(&mut out);
    Ok(out)
}

/// What a part to keep needs beside what this OS process keeps already.
struct Room {
    /// 0: no limit.
    limit: u64,
    kept: u64,
    need: u64,
    when: String,
}

/// The verdict of every process on its part's room: the first refusing process's message
/// on every process (nothing is kept then). Collective.
fn fits(ctx: &mut Context, r: Room) -> Result<(), Failure> {
    let over = r.limit > 0 && r.kept.saturating_add(r.need) > r.limit;
    let text = if over {
        format!(
            "the resident graph's part of LPF process {} needs {} bytes of native memory {}, but its executor has {} of \
             its {} bytes left (spark.executor.memoryOverhead, or LpfSettings.residentBytes; other resident graphs \
             hold {}): raise spark.executor.memoryOverhead, unpersist other graphs, or use more processes",
            ctx.pid(),
            r.need,
            r.when,
            r.limit.saturating_sub(r.kept),
            r.limit,
            r.kept
        )
    } else {
        String::new()
    };
    match agree_on_refusals(ctx, text.as_bytes())? {
        Some(t) => Err(Failure::Refused(t)),
        None => Ok(()),
    }
}

/// The reply of an input every process refuses: `LPFGCE01`, u32 length, the text.
fn refused(text: &str) -> Vec<u8> {
    let head = gc_refused::LENGTH.end();
    let mut out = vec![0u8; head];
    out[..8].copy_from_slice(REFUSED_MAGIC);
    gc_refused::LENGTH.put(&mut out, &(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// The SPMD body: the refusals' and the requests' verdicts, the graph loaded (or found
/// kept), the kernel run on it, the reply. LPF process 0 reports each round to
/// `progress`, if given.
pub(crate) fn run(ctx: &mut Context, input: RequestBytes<'_>, progress: Option<&ProgressSink>) -> Result<Vec<u8>, String> {
    match answer(ctx, input, progress) {
        Ok(reply) => Ok(reply),
        Err(Failure::Refused(text)) => Ok(refused(&text)),
        Err(Failure::Failed(text)) => Err(text),
    }
}

fn answer(ctx: &mut Context, input: RequestBytes<'_>, progress: Option<&ProgressSink>) -> Result<Vec<u8>, Failure> {
    let t0 = Instant::now();
    let sections = match &input {
        RequestBytes::Contiguous(b) => split(b),
        RequestBytes::Sections(r) => r.sections(),
    };
    let refused = {
        let head = header(sections[HEAD]);
        agree_on_refusals(ctx, head.as_ref().map_or(&[][..], |(_, refusal)| refusal))?
    };
    if let Some(text) = refused {
        return Err(Failure::Refused(text));
    }
    let fields = "kernel, threads, id kind, flags, iterations, alpha, tol, graph id, source or source list";
    let req = agree_on_request(ctx, parse_sections(sections), |r| r.digest, fields)?;
    // The parsed request holds what the load needs: the request's bytes go now (if this
    // was the last process of the task to hold them), not after the graph is built.
    drop(input);
    let kernel = req.kernel.clone().map_err(Failure::Refused)?;
    let threads = req.threads;
    let (pid, p) = (ctx.pid(), ctx.nprocs());
    let id = req.header.graph;
    let (keep, uses_kept, unique, numbers) = (req.keep(), req.uses_kept(), req.unique(), req.numbers());
    let (graph, kept_bytes, marks) = if uses_kept {
        // Every process must hold its part: one word each says so.
        let found = resident::find(&id, pid, p);
        let all = exchange_words(ctx, found.is_some() as u64, 2, 2 * p as usize)?;
        let (graph, kept_bytes) = match found {
            Some(part) if all.iter().all(|&w| w == 1) => part,
            _ => return Ok(MISSING_MAGIC.to_vec()),
        };
        // The marked ids looked up in the kept graph.
        let marks = match &req.marks {
            Some(m) => Some(graph.marks(ctx, &req.edges.vertices, m, unique)?),
            None => None,
        };
        (graph, kept_bytes, marks)
    } else {
        let room = |need: u64, when: &str| Room { limit: req.header.limit, kept: req.header.kept, need, when: when.to_string() };
        if keep {
            let least = 10 * 2 * req.header.m + 8 * req.header.v;
            fits(ctx, room(least, "at least (before loading)"))?;
        }
        let (limit, kept) = (req.header.limit, req.header.kept);
        let section = VertexSection { marks: req.marks, unique };
        let (graph, marks) = Graph::load_with(ctx, req.edges, section, threads)?;
        let (graph, kept_bytes) = if keep {
            let need = graph.native_bytes() as u64;
            fits(ctx, Room { limit, kept, need, when: "once loaded".into() })?;
            resident::keep(id, pid, p, graph)
        } else {
            (Arc::new(graph), 0)
        };
        (graph, kept_bytes, marks)
    };
    let load_seconds = if uses_kept { 0.0 } else { t0.elapsed().as_secs_f64() };
    let graph_id_seconds = if uses_kept { 0.0 } else { graph.id_seconds() };
    let mut t = Times { load_seconds, graph_id_seconds, residual: 0.0, flags: 0, kept_bytes };
    // LPF process 0 only: a task with several LPF threads (hybrid) shares one sink.
    let sink = progress.filter(|_| ctx.pid() == 0);
    let observe = &mut |p: &RoundProgress| {
        if let Some(sink) = sink {
            sink.report(p);
        }
    };
    let source = req.source.as_ref();
    let source = || source.expect("checked: BFS and SSSP have a source");
    Ok(match kernel {
        Kernel::Load => {
            let none = KeyedValues { n: graph.n(), nnz: graph.nnz(), ids: VertexIds::Integral(Vec::new()), values: Vec::<i64>::new(), rounds: 0, compute_seconds: 0.0, id_seconds: 0.0 };
            reply(&none, &t)?
        }
        Kernel::Bfs => reply(&graph.bfs(ctx, source(), threads, observe)?, &t)?,
        Kernel::Wcc if numbers => reply(&graph.wcc_numbers(ctx, threads, observe)?, &t)?,
        Kernel::Wcc => reply(&graph.wcc(ctx, threads, observe)?, &t)?,
        Kernel::Cdlp { iterations } if numbers => reply(&graph.cdlp_numbers(ctx, iterations, threads, observe)?, &t)?,
        Kernel::Cdlp { iterations } => reply(&graph.cdlp(ctx, iterations, threads, observe)?, &t)?,
        Kernel::Scc if numbers => reply(&graph.scc_numbers(ctx, threads, observe)?, &t)?,
        Kernel::Scc => reply(&graph.scc(ctx, threads, observe)?, &t)?,
        Kernel::Triangles => reply(&graph.triangles(ctx, threads, observe)?, &t)?,
        Kernel::KCore => reply(&graph.kcore(ctx, threads, observe)?, &t)?,
        Kernel::Mis { seed } => reply(&graph.mis(ctx, seed, threads, observe)?, &t)?,
        Kernel::Sssp => reply(&graph.sssp(ctx, source(), threads, observe)?, &t)?,
        Kernel::Lcc => reply(&graph.lcc(ctx, threads, observe)?, &t)?,
        Kernel::PageRank { alpha, tol, max_iters, exchange } => {
            let cfg = PageRankConfig { alpha, tol, max_iters, threads };
            let opts = DistOptions { exchange, progress: false, ..DistOptions::default() };
            let mut each = |p: &IterationProgress| observe(&RoundProgress::from(p));
            let r = graph.pagerank(ctx, &cfg, &opts, &mut each)?;
            t.residual = r.residual;
            t.flags = (r.converged as u32 * gc_reply::CONVERGED) | (exchange::code(r.exchange.kind) << exchange::SHIFT);
            reply(&r.ranks, &t)?
        }
        Kernel::BfsPaths { max_length } => {
            let marks = marks.as_ref().expect("checked: BFS paths has marks");
            let r = graph.bfs_paths(ctx, marks, max_length, threads, observe)?;
            t.flags = if r.found { FOUND } else { 0 };
            // Only the vertices a shortest path runs through: the caller joins those.
            reply(&r.depths.retain(|&d| d != graphblas::algorithms::UNREACHABLE), &t)?
        }
        Kernel::GraphxPageRank { reset_probability, tol, max_iters, vector } => {
            let cfg = GraphxPageRankConfig { reset_probability, tol, max_iters };
            let r = graph.graphx_pagerank(ctx, &req.sources, &cfg, threads, observe)?;
            t.residual = r.residual;
            t.flags = r.converged as u32 * gc_reply::CONVERGED;
            if vector {
                reply(&per_source(r.ranks), &t)?
            } else {
                reply(&r.ranks, &t)?
            }
        }
        Kernel::ShortestPaths { undirected } => {
            reply(&per_source(graph.landmark_distances(ctx, &req.sources, undirected, threads, observe)?), &t)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id of either kind, for building requests.
    type Id = VertexId;

    fn id_bytes(out: &mut Vec<u8>, id: &Id) {
        match id {
            VertexId::Integral(i) => out.extend_from_slice(&i.to_le_bytes()),
            VertexId::Bytes(b) => {
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }

    /// The parameters of a request (all but the parts).
    #[derive(Clone)]
    struct Params {
        kernel: u32,
        flags: u32,
        iterations: i64,
        alpha: f64,
        tol: f64,
        source: Option<Id>,
        /// Flag 6's list (set the flag to send it).
        sources: Vec<Id>,
        graph: GraphId,
        limit: u64,
        threads: u32,
    }

    fn params(kernel: u32, source: Option<Id>) -> Params {
        let (iterations, alpha, tol) = match kernel {
            3 => (3, 0.0, 0.0),
            6 => (200, 0.85, 1e-12),
            12 => (MIS_SEED, 0.0, 0.0),
            _ => (0, 0.0, 0.0),
        };
        let weights = if kernel == 4 { WEIGHTS } else { 0 };
        Params { kernel, flags: source.is_some() as u32 | weights, iterations, alpha, tol, source, sources: Vec::new(), graph: [0; 16], limit: 0, threads: 1 }
    }

    /// GraphX PageRank (7: reset probability 0.15, 10 iterations) or shortest paths (9)
    /// with a source list (flag 6) and `flags` besides.
    fn listed(kernel: u32, sources: &[Id], flags: u32) -> Params {
        let mut par = params(kernel, None);
        if kernel == 7 {
            (par.iterations, par.alpha, par.tol) = (10, 0.15, 0.0);
        }
        (par.flags, par.sources) = (SOURCES | flags, sources.to_vec());
        par
    }

    /// A request's four sections (see [`crate::request`]), each built on its own.
    fn request_sections(p: &Params, bytes: bool, edges: &[(Id, Id)], weights: &[f64], vertices: &[Id], refusal: &str) -> [Vec<u8>; SECTIONS] {
        marked_request_sections(p, bytes, edges, weights, vertices, &[], refusal)
    }

    /// [`request_sections`] with `marks` after the vertex ids (flag 11 sets whether the
    /// request says they are there).
    fn marked_request_sections(
        p: &Params,
        bytes: bool,
        edges: &[(Id, Id)],
        weights: &[f64],
        vertices: &[Id],
        marks: &[u8],
        refusal: &str,
    ) -> [Vec<u8>; SECTIONS] {
        let mut b = Vec::new();
        b.extend_from_slice(REQUEST_MAGIC);
        for w in [p.kernel, p.threads, if bytes { 2 } else { 1 }, p.flags] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&p.iterations.to_le_bytes());
        b.extend_from_slice(&p.alpha.to_le_bytes());
        b.extend_from_slice(&p.tol.to_le_bytes());
        b.extend_from_slice(&(edges.len() as u64).to_le_bytes());
        b.extend_from_slice(&(vertices.len() as u64).to_le_bytes());
        b.extend_from_slice(&p.graph);
        b.extend_from_slice(&p.limit.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&(refusal.len() as u32).to_le_bytes());
        b.extend_from_slice(refusal.as_bytes());
        assert_eq!(b.len(), REQUEST_HEADER + refusal.len());
        if !refusal.is_empty() {
            return [b, vec![], vec![], vec![]];
        }
        if let Some(s) = &p.source {
            id_bytes(&mut b, s);
        }
        if p.flags & SOURCES != 0 {
            b.extend_from_slice(&(p.sources.len() as u32).to_le_bytes());
            p.sources.iter().for_each(|s| id_bytes(&mut b, s));
        }
        let mut e = Vec::new();
        for (s, t) in edges {
            id_bytes(&mut e, s);
            id_bytes(&mut e, t);
        }
        let w: Vec<u8> = weights.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut v = Vec::new();
        for x in vertices {
            id_bytes(&mut v, x);
        }
        v.extend_from_slice(marks);
        [b, e, w, v]
    }

    /// A request in its contiguous form.
    fn request(p: &Params, bytes: bool, edges: &[(Id, Id)], weights: &[f64], vertices: &[Id], refusal: &str) -> Vec<u8> {
        request_sections(p, bytes, edges, weights, vertices, refusal).concat()
    }

    /// A value of a reply.
    #[derive(Clone, Debug, PartialEq)]
    enum Value {
        Int(i64),
        Float(u64),
        Id(Id),
        /// Kinds 4 and 5: a vertex's w values (f64 as bits).
        Ints(Vec<i64>),
        Floats(Vec<u64>),
    }

    /// A reply read back: (n, nnz, rounds, residual, flags, value kind), the (id, value)
    /// pairs, checking the layout (the header's fields, sizes, ascending ids).
    #[allow(clippy::type_complexity)]
    fn read_reply(b: &[u8], bytes: bool) -> ((u64, u64, u64, f64, u32, u32), Vec<(Id, Value)>) {
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(&b[..8], REPLY_MAGIC);
        for at in [32, 40, 64] {
            let s = f64::from_bits(word(at));
            assert!(s.is_finite() && s >= 0.0, "seconds at {at}: {s}");
        }
        let (kind, k) = (half(60), word(72) as usize);
        let mut at = REPLY_HEADER;
        let id = |at: &mut usize| -> Id {
            if bytes {
                let len = u32::from_le_bytes(b[*at..*at + 4].try_into().unwrap()) as usize;
                let v = VertexId::Bytes(b[*at + 4..*at + 4 + len].to_vec());
                *at += 4 + len;
                v
            } else {
                *at += 8;
                VertexId::Integral(word(*at - 8) as i64)
            }
        };
        let ids: Vec<Id> = (0..k).map(|_| id(&mut at)).collect();
        // Kinds 4 and 5: w values a vertex, w from the bytes left.
        let w = if k == 0 { 0 } else { (b.len() - at) / (8 * k) };
        let values: Vec<Value> = (0..k)
            .map(|_| match kind {
                1 => {
                    at += 8;
                    Value::Int(word(at - 8) as i64)
                }
                2 => {
                    at += 8;
                    Value::Float(word(at - 8))
                }
                3 => Value::Id(id(&mut at)),
                4 | 5 => {
                    let words: Vec<u64> = (0..w).map(|j| word(at + 8 * j)).collect();
                    at += 8 * w;
                    if kind == 4 {
                        Value::Ints(words.into_iter().map(|x| x as i64).collect())
                    } else {
                        Value::Floats(words)
                    }
                }
                x => panic!("value kind {x}"),
            })
            .collect();
        assert_eq!(at, b.len(), "the reply ends after its values");
        let order = |x: &Id| match x {
            VertexId::Integral(i) => (*i as i128, Vec::new()),
            VertexId::Bytes(v) => (0, v.clone()),
        };
        assert!(ids.windows(2).all(|w| order(&w[0]) < order(&w[1])), "ascending ids: {ids:?}");
        ((word(8), word(16), word(24), f64::from_bits(word(48)), half(56), kind), ids.into_iter().zip(values).collect())
    }

    /// All replies' pairs in pid order, every process agreeing on the header's counts.
    fn pairs(out: &[Result<Vec<u8>, String>], bytes: bool) -> Vec<(Id, Value)> {
        let mut all = Vec::new();
        let mut head = None;
        for r in out {
            let (h, p) = read_reply(r.as_ref().unwrap_or_else(|e| panic!("{e}")), bytes);
            assert_eq!(*head.get_or_insert((h.0, h.1, h.2, h.5)), (h.0, h.1, h.2, h.5));
            all.extend(p);
        }
        all
    }

    fn on_threads(inputs: Vec<Vec<u8>>) -> Vec<Result<Vec<u8>, String>> {
        crate::on_shm_threads(inputs, |c, input| run(c, RequestBytes::Contiguous(input), None))
    }

    /// The seed of the MIS requests (negative: any i64 is a seed).
    const MIS_SEED: i64 = -5;

    /// The kernels that answer for every vertex.
    const KERNELS: [u32; 10] = [1, 2, 3, 4, 5, 6, 8, 10, 11, 12];

    /// The test graph: 11 vertices numbered by hand, 0..=8 with edges (duplicates, a
    /// self-loop, two components), 9 and 10 isolated.
    const N: usize = 11;
    const EDGES: [(usize, usize); 14] =
        [(0, 1), (1, 2), (2, 0), (0, 3), (3, 4), (4, 3), (1, 2), (5, 6), (6, 7), (7, 5), (8, 8), (2, 4), (4, 1), (6, 5)];

    /// Ids in ascending order for the numbers 0..N.
    fn ids(bytes: bool) -> Vec<Id> {
        if bytes {
            let mut v: Vec<Vec<u8>> = vec![b"".to_vec(), b"\x00".to_vec(), b"a".to_vec(), b"ab".to_vec(), "é".as_bytes().to_vec()];
            v.extend([vec![b'z'; 5000], b"\xff".to_vec(), b"\xff\x00".to_vec(), b"\xff\xfe\xfd".to_vec(), b"\xff\xff".to_vec(), b"\xff\xff\xff".to_vec()]);
            v.sort();
            v.into_iter().map(VertexId::Bytes).collect()
        } else {
            [i64::MIN, -1_000_000_000_000, -7, -1, 0, 3, 10, 1 << 40, 1 << 62, i64::MAX - 1, i64::MAX].into_iter().map(VertexId::Integral).collect()
        }
    }

    /// The graph's requests for `p` processes: edges dealt round-robin with weights
    /// 1 + k % 3, the isolated vertices (and one with edges) as vertex ids of the last.
    fn requests_in_sections(par: &Params, bytes: bool, p: usize) -> Vec<[Vec<u8>; SECTIONS]> {
        let id = ids(bytes);
        (0..p)
            .map(|q| {
                let ks: Vec<usize> = (0..EDGES.len()).filter(|k| k % p == q).collect();
                let edges: Vec<(Id, Id)> = ks.iter().map(|&k| (id[EDGES[k].0].clone(), id[EDGES[k].1].clone())).collect();
                let weights: Vec<f64> = if par.flags & WEIGHTS != 0 { ks.iter().map(|&k| 1.0 + (k % 3) as f64).collect() } else { vec![] };
                let vertices = if q == p - 1 { vec![id[9].clone(), id[10].clone(), id[0].clone()] } else { vec![] };
                request_sections(par, bytes, &edges, &weights, &vertices, "")
            })
            .collect()
    }

    fn requests(par: &Params, bytes: bool, p: usize) -> Vec<Vec<u8>> {
        requests_in_sections(par, bytes, p).into_iter().map(|s| s.concat()).collect()
    }

    /// The same graph numbered by hand through graphblas's numbered input
    /// (`Input::NumberedEdges`, SSSP's weighted one), as (number, value bits) in number order.
    fn numbered(kernel: u32, source: usize, p: usize) -> Vec<(u64, u64)> {
        use graphblas::dist::{bfs_spmd, cdlp_spmd, kcore_spmd, lcc_spmd, mis_spmd, pagerank_spmd, scc_spmd, sssp_spmd, triangles_spmd, wcc_spmd, Input};
        let inputs: Vec<Vec<u8>> = (0..p).map(|q| vec![q as u8]).collect();
        let out = crate::on_shm_threads(inputs, |c, input| {
            let q = input[0] as usize;
            let ks: Vec<usize> = (0..EDGES.len()).filter(|k| k % p == q).collect();
            let edges: Vec<(u64, u64)> = ks.iter().map(|&k| (EDGES[k].0 as u64, EDGES[k].1 as u64)).collect();
            let n = N as u64;
            let e = |e: DistError| e.to_string();
            let zip = |ids: Vec<u64>, bits: Vec<u64>| ids.into_iter().zip(bits).collect::<Vec<_>>();
            let pairs = match kernel {
                1 => {
                    let r = bfs_spmd(c, Input::NumberedEdges { n, edges }, source as u64, 1).map_err(e)?;
                    zip(r.ids, r.values.iter().map(|&d| d as u64).collect())
                }
                2 => {
                    let r = wcc_spmd(c, Input::NumberedEdges { n, edges }, 1).map_err(e)?;
                    zip(r.ids, r.values)
                }
                3 => {
                    let r = cdlp_spmd(c, Input::NumberedEdges { n, edges }, 3, 1).map_err(e)?;
                    zip(r.ids, r.values)
                }
                4 => {
                    let weights = ks.iter().map(|&k| 1.0 + (k % 3) as f64).collect();
                    let r = sssp_spmd(c, Input::WeightedNumberedEdges { n, edges, weights }, source as u64, 1).map_err(e)?;
                    zip(r.ids, r.values.iter().map(|d| d.to_bits()).collect())
                }
                5 => {
                    let r = lcc_spmd(c, Input::NumberedEdges { n, edges }, 1).map_err(e)?;
                    zip(r.ids, r.values.iter().map(|d| d.to_bits()).collect())
                }
                8 => {
                    let r = scc_spmd(c, Input::NumberedEdges { n, edges }, 1).map_err(e)?;
                    zip(r.ids, r.values)
                }
                10..=12 => {
                    let input = Input::NumberedEdges { n, edges };
                    let r = match kernel {
                        10 => triangles_spmd(c, input, 1),
                        11 => kcore_spmd(c, input, 1),
                        _ => mis_spmd(c, input, MIS_SEED, 1),
                    };
                    let r = r.map_err(e)?;
                    zip(r.ids, r.values.iter().map(|&x| x as u64).collect())
                }
                _ => {
                    let cfg = PageRankConfig { alpha: 0.85, tol: 1e-12, max_iters: 200, threads: 1 };
                    let r = pagerank_spmd(c, Input::NumberedEdges { n, edges }, &cfg).map_err(e)?;
                    zip(r.ids, r.ranks.iter().map(|x| x.to_bits()).collect())
                }
            };
            Ok(pairs.iter().flat_map(|(v, b)| [v.to_le_bytes(), b.to_le_bytes()]).flatten().collect())
        });
        let mut all: Vec<(u64, u64)> = out
            .into_iter()
            .flat_map(|r| {
                let b = r.unwrap();
                b.chunks_exact(16).map(|x| (u64::from_le_bytes(x[..8].try_into().unwrap()), u64::from_le_bytes(x[8..].try_into().unwrap()))).collect::<Vec<_>>()
            })
            .collect();
        all.sort();
        all
    }

    /// Issue 25: every kernel on ids the processes number themselves gives the results of
    /// the graph numbered by hand, with the ids (integers incl. i64::MIN/MAX and
    /// negatives; byte strings incl. the empty one, non-UTF-8 and 5000 bytes), isolated
    /// vertices given as vertex ids, 1-3 processes. Issue 26: SCC, triangle count, k-core
    /// and MIS too, and WCC, CDLP and SCC with flag 7 (numbers) answer the labels' numbers.
    #[test]
    fn every_kernel_by_id_equals_the_numbered_kernel() {
        for bytes in [false, true] {
            let id = ids(bytes);
            for p in 1..=3 {
                for kernel in KERNELS {
                    let source = (kernel == 1 || kernel == 4).then(|| id[1].clone());
                    let want = numbered(kernel, 1, p);
                    let got = pairs(&on_threads(requests(&params(kernel, source.clone()), bytes, p)), bytes);
                    let with_ids: Vec<(Id, Value)> = want
                        .iter()
                        .map(|&(v, bits)| {
                            let value = match kernel {
                                1 | 10 | 11 | 12 => Value::Int(bits as i64),
                                2 | 3 | 8 => Value::Id(id[bits as usize].clone()),
                                _ => Value::Float(bits),
                            };
                            (id[v as usize].clone(), value)
                        })
                        .collect();
                    assert_eq!(got, with_ids, "kernel {kernel}, {p} processes, byte ids {bytes}");
                    if matches!(kernel, 2 | 3 | 8) {
                        let mut par = params(kernel, source);
                        par.flags |= NUMBERS;
                        let got = pairs(&on_threads(requests(&par, bytes, p)), bytes);
                        let numbers: Vec<(Id, Value)> = want.iter().map(|&(v, bits)| (id[v as usize].clone(), Value::Int(bits as i64))).collect();
                        assert_eq!(got, numbers, "kernel {kernel} with vertex numbers, {p} processes, byte ids {bytes}");
                    }
                }
            }
        }
    }

    /// Issue 29: processes holding unequal numbers of edges and of vertex ids (some none)
    /// answer as one process holding them all. The counts are each process's own, so the
    /// agreement on the requests leaves them out: a digest covering them would fail every
    /// call whose Spark partitions differ in size ("of process q differ").
    #[test]
    fn unequal_parts_per_process_answer_as_one_process() {
        // (edges, vertex ids) per process: the test graph's edges in order, then the
        // vertex ids 9, 10, 0, 5 in order.
        let splits: [(&[usize], &[usize]); 2] = [(&[12, 2, 0], &[0, 3, 1]), (&[1, 13], &[4, 0])];
        for bytes in [false, true] {
            let id = ids(bytes);
            let listed = [9, 10, 0, 5].map(|k| id[k].clone());
            for (edge_counts, vertex_counts) in splits {
                let (mut e, mut v) = (0, 0);
                // Each process's edges and vertex ids.
                type Part = (Vec<(Id, Id)>, Vec<Id>);
                let parts: Vec<Part> = edge_counts
                    .iter()
                    .zip(vertex_counts)
                    .map(|(&m, &k)| {
                        let edges = EDGES[e..e + m].iter().map(|&(s, t)| (id[s].clone(), id[t].clone())).collect();
                        let vertices = listed[v..v + k].to_vec();
                        (e, v) = (e + m, v + k);
                        (edges, vertices)
                    })
                    .collect();
                assert_eq!((e, v), (EDGES.len(), listed.len()));
                for kernel in [1, 2, 10] {
                    let par = params(kernel, (kernel == 1).then(|| id[1].clone()));
                    let want = pairs(&on_threads(requests(&par, bytes, 1)), bytes);
                    let inputs = parts.iter().map(|(edges, vertices)| request(&par, bytes, edges, &[], vertices, "")).collect();
                    let got = pairs(&on_threads(inputs), bytes);
                    assert_eq!(got, want, "kernel {kernel}, edges {edge_counts:?}, vertex ids {vertex_counts:?}, byte ids {bytes}");
                }
            }
        }
    }

    /// Issue 26's kernels on the test graph, by hand: the SCCs {0..=4}, {5, 6, 7} and the
    /// singletons; the triangles {0, 1, 2}, {1, 2, 4}, {5, 6, 7}; the cores; an MIS that
    /// is independent and maximal, the same for the same seed on 1 and 3 processes.
    #[test]
    fn the_new_kernels_on_the_test_graph() {
        let id = ids(false);
        let ints = |kernel: u32, p: usize, par: Option<Params>| -> Vec<i64> {
            let got = pairs(&on_threads(requests(&par.unwrap_or_else(|| params(kernel, None)), false, p)), false);
            got.into_iter().map(|(_, v)| if let Value::Int(x) = v { x } else { panic!("{v:?}") }).collect()
        };
        let scc = pairs(&on_threads(requests(&params(8, None), false, 2)), false);
        let labels: Vec<Value> = [0, 0, 0, 0, 0, 5, 5, 5, 8, 9, 10].iter().map(|&k| Value::Id(id[k].clone())).collect();
        assert_eq!(scc.into_iter().map(|(_, v)| v).collect::<Vec<_>>(), labels);
        assert_eq!(ints(10, 2, None), [1, 2, 2, 0, 1, 1, 1, 1, 0, 0, 0]);
        // 0, 1, 2, 4 each have 3 neighbours among themselves (0-1, 0-2, 1-2, 1-4, 2-4; 0-3, 3-4).
        assert_eq!(ints(11, 3, None), [2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0]);
        let neighbours: [&[usize]; 11] = [&[1, 2, 3], &[0, 2, 4], &[0, 1, 4], &[0, 4], &[1, 2, 3], &[6, 7], &[5, 7], &[5, 6], &[], &[], &[]];
        for seed in [i64::MIN, -1, 0, i64::MAX] {
            let mut par = params(12, None);
            par.iterations = seed;
            let set = ints(12, 1, Some(par.clone()));
            assert_eq!(ints(12, 3, Some(par)), set, "seed {seed}: the same set on 3 processes");
            for v in 0..N {
                let members = neighbours[v].iter().filter(|&&u| set[u] == 1).count();
                assert!(if set[v] == 1 { members == 0 } else { members > 0 }, "seed {seed}: vertex {v} in {set:?}");
            }
        }
    }

    /// A request of each kernel on the test graph: BFS and SSSP from id 1, GraphX
    /// PageRank from ids 1 and 3 (flag 9), shortest paths to 3 and the isolated 9
    /// (undirected).
    fn sample(kernel: u32, bytes: bool) -> Params {
        let id = ids(bytes);
        match kernel {
            7 => listed(7, &[id[1].clone(), id[3].clone()], VECTOR),
            9 => listed(9, &[id[3].clone(), id[9].clone()], UNDIRECTED),
            k => params(k, (k == 1 || k == 4).then(|| id[1].clone())),
        }
    }

    /// What GraphX PageRank (7) or shortest paths (9) gives through dist::Graph on the
    /// test graph with ids = numbers, dealt as [`requests`] deals it, with the sources
    /// `sources` (numbers): every vertex's values (f64 as bits) in number order, the
    /// rounds, the residual's bits, converged.
    fn numbered_graphx(par: &Params, sources: &[usize], p: usize) -> (Vec<Vec<u64>>, u64, u64, bool) {
        let inputs: Vec<Vec<u8>> = (0..p).map(|q| vec![q as u8]).collect();
        let out = crate::on_shm_threads(inputs, |c, input| {
            let q = input[0] as usize;
            let ends = (0..EDGES.len()).filter(|k| k % p == q).flat_map(|k| [EDGES[k].0 as i64, EDGES[k].1 as i64]).collect();
            let vertices = if q == p - 1 { vec![9, 10, 0] } else { vec![] };
            let edges = KeyedEdges { ends: VertexIds::Integral(ends), vertices: VertexIds::Integral(vertices), weights: None };
            let e = |e: DistError| e.to_string();
            let g = Graph::load(c, edges, 1).map_err(e)?;
            let ids: Vec<VertexId> = sources.iter().map(|&s| VertexId::Integral(s as i64)).collect();
            let (values, rounds, residual, converged): (Vec<u64>, _, _, _) = if par.kernel == 7 {
                let cfg = GraphxPageRankConfig { reset_probability: par.alpha, tol: par.tol, max_iters: par.iterations as usize };
                let r = g.graphx_pagerank(c, &ids, &cfg, 1, &mut |_| {}).map_err(e)?;
                (r.ranks.values.iter().map(|x| x.to_bits()).collect(), r.ranks.rounds, r.residual.to_bits(), r.converged)
            } else {
                let r = g.landmark_distances(c, &ids, par.flags & UNDIRECTED != 0, 1, &mut |_| {}).map_err(e)?;
                (r.values.iter().map(|&x| x as u64).collect(), r.rounds, 0, false)
            };
            let head = [rounds as u64, residual, converged as u64];
            Ok(head.iter().chain(&values).flat_map(|x| x.to_le_bytes()).collect())
        });
        let words: Vec<Vec<u64>> =
            out.into_iter().map(|r| r.unwrap().chunks_exact(8).map(|x| u64::from_le_bytes(x.try_into().unwrap())).collect()).collect();
        let w = sources.len().max(1);
        let values: Vec<Vec<u64>> = words.iter().flat_map(|x| x[3..].to_vec()).collect::<Vec<_>>().chunks(w).map(<[u64]>::to_vec).collect();
        assert_eq!(values.len(), N);
        (values, words[0][0], words[0][1], words[0][2] == 1)
    }

    /// Issue 26: GraphX PageRank (plain, also without flag 6; with a tolerance;
    /// personalized by one source as kind 2 and with flag 9 as kind 5; three sources) and
    /// the hops to landmarks (kind 4, directed and undirected, an unreachable landmark) by
    /// id give what dist::Graph gives on the graph with its numbers as ids, bit for bit,
    /// with the ids; rounds, residual and converged alike; 1-3 processes.
    #[test]
    fn graphx_kernels_by_id_equal_the_kernels_on_numbers() {
        for bytes in [false, true] {
            let id = ids(bytes);
            let mut plain = listed(7, &[], 0);
            plain.flags = 0;
            let mut tol = listed(7, &[], 0);
            (tol.iterations, tol.tol) = (100, 1e-9);
            let cases: Vec<(Params, Vec<usize>, u32)> = vec![
                (plain, vec![], 2),
                (tol, vec![], 2),
                (listed(7, &[id[4].clone()], 0), vec![4], 2),
                (listed(7, &[id[4].clone()], VECTOR), vec![4], 5),
                (listed(7, &[id[8].clone(), id[0].clone(), id[5].clone()], VECTOR), vec![8, 0, 5], 5),
                (listed(9, &[id[3].clone(), id[9].clone()], 0), vec![3, 9], 4),
                (listed(9, &[id[3].clone(), id[9].clone(), id[5].clone()], UNDIRECTED), vec![3, 9, 5], 4),
            ];
            for (par, sources, kind) in &cases {
                for p in 1..=3 {
                    let what = format!("kernel {} flags {} sources {sources:?}, {p} processes, byte ids {bytes}", par.kernel, par.flags);
                    let out = on_threads(requests(par, bytes, p));
                    let got = pairs(&out, bytes);
                    let (values, rounds, residual, converged) = numbered_graphx(par, sources, p);
                    let want: Vec<(Id, Value)> = values
                        .into_iter()
                        .enumerate()
                        .map(|(v, x)| {
                            let value = match kind {
                                2 => Value::Float(x[0]),
                                4 => Value::Ints(x.into_iter().map(|d| d as i64).collect()),
                                _ => Value::Floats(x),
                            };
                            (id[v].clone(), value)
                        })
                        .collect();
                    assert_eq!(got, want, "{what}");
                    for r in &out {
                        let ((n, _, r_rounds, r_residual, flags, r_kind), _) = read_reply(r.as_ref().unwrap(), bytes);
                        assert_eq!((n, r_rounds, r_residual.to_bits(), flags, r_kind), (N as u64, rounds, residual, converged as u32, *kind), "{what}");
                    }
                    if par.tol > 0.0 {
                        assert!(converged && rounds < 100, "{what}: converged in {rounds}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_request_in_sections_is_split_from_its_contiguous_form_and_answers_alike() {
        for bytes in [false, true] {
            for kernel in [1u32, 4, 6, 7, 9] {
                let par = sample(kernel, bytes);
                let sectioned = requests_in_sections(&par, bytes, 2);
                for s in &sectioned {
                    assert!(!s[VERTICES].is_empty() || !s[crate::request::EDGES].is_empty());
                    assert_eq!(split(&s.concat()), s.each_ref().map(|x| x.as_slice()), "kernel {kernel}, byte ids {bytes}");
                }
                let got = on_threads_in(true, sectioned.clone());
                assert!(got.iter().all(|r| r.as_ref().is_ok_and(|b| b.starts_with(REPLY_MAGIC))), "{got:?}");
                let want = on_threads(requests(&par, bytes, 2));
                assert_eq!(pairs(&got, bytes), pairs(&want, bytes), "kernel {kernel}, byte ids {bytes}");
            }
        }
    }

    /// The text every process refused the input with (the `LPFGCE01` reply), checked to
    /// be the same everywhere.
    fn one_refusal(out: Vec<Result<Vec<u8>, String>>) -> String {
        let texts: Vec<String> = out
            .into_iter()
            .map(|r| {
                let b = r.unwrap_or_else(|e| panic!("a failure, not a refusal: {e}"));
                assert_eq!(&b[..8], REFUSED_MAGIC, "{}", String::from_utf8_lossy(&b));
                let len = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
                assert_eq!(b.len(), 12 + len);
                String::from_utf8(b[12..].to_vec()).unwrap()
            })
            .collect();
        assert!(texts.iter().all(|t| *t == texts[0]), "{texts:?}");
        texts[0].clone()
    }

    /// Every process's error, checked to be the same, returned.
    fn one_error(out: Vec<Result<Vec<u8>, String>>) -> String {
        let first = out[0].clone().unwrap_err();
        for (q, r) in out.into_iter().enumerate() {
            assert_eq!(r.as_ref().err(), Some(&first), "process {q}");
        }
        first
    }

    /// The reply's fixed fields at their offsets: a path -7 -> 0 -> 3 and the isolated
    /// vertex 10 (a vertex id), BFS from -7 on one process; PageRank's residual and flags.
    #[test]
    fn the_reply_layout() {
        let id = |i: i64| VertexId::Integral(i);
        let edges = [(id(-7), id(0)), (id(0), id(3)), (id(0), id(3))];
        let out = on_threads(vec![request(&params(1, Some(id(-7))), false, &edges, &[], &[id(10)], "")]);
        let b = out[0].as_ref().unwrap();
        let ((n, nnz, rounds, residual, flags, kind), got) = read_reply(b, false);
        assert_eq!((n, nnz, rounds, residual, flags, kind), (4, 2, 3, 0.0, 0, 1));
        assert_eq!(b.len(), REPLY_HEADER + 4 * 16);
        assert_eq!(u64::from_le_bytes(b[72..80].try_into().unwrap()), 4);
        assert_eq!(u64::from_le_bytes(b[80..88].try_into().unwrap()), 0, "nothing kept");
        let want = [(id(-7), Value::Int(0)), (id(0), Value::Int(1)), (id(3), Value::Int(2)), (id(10), Value::Int(i64::MAX))];
        assert_eq!(got, want);
        // PageRank with the plan exchange forced (bits 1-2 = 2) over two processes.
        let mut par = params(6, None);
        par.flags = 2 << 1;
        let out = on_threads(vec![
            request(&par, false, &edges[..1], &[], &[], ""),
            request(&par, false, &edges[1..], &[], &[id(10)], ""),
        ]);
        for r in &out {
            let ((n, _, rounds, residual, flags, kind), _) = read_reply(r.as_ref().unwrap(), false);
            assert_eq!((n, kind, flags), (4, 2, 1 | 2 << 1), "converged, the plan ran");
            assert!(residual < 1e-12 && rounds >= 1, "{residual} {rounds}");
        }
        // WCC over byte ids: the values are ids in the ids' encoding.
        let s = |x: &[u8]| VertexId::Bytes(x.to_vec());
        let out = on_threads(vec![request(&params(2, None), true, &[(s(b"b"), s(b"")), (s(b"c"), s(b"d"))], &[], &[s(b"a")], "")]);
        let (head, got) = read_reply(out[0].as_ref().unwrap(), true);
        assert_eq!(head.5, 3);
        let want: Vec<(Id, Value)> =
            [(b"" as &[u8], b"" as &[u8]), (b"a", b"a"), (b"b", b""), (b"c", b"c"), (b"d", b"c")].iter().map(|(v, l)| (s(v), Value::Id(s(l)))).collect();
        assert_eq!(got, want);
    }

    /// A source that is no vertex: the error naming it on every process, integers as
    /// written, byte strings in quotes.
    #[test]
    fn a_source_that_is_no_vertex_is_named_everywhere() {
        let e = one_refusal(on_threads(requests(&params(1, Some(VertexId::Integral(7))), false, 2)));
        assert_eq!(e, "the BFS source 7 is not a vertex of the graph");
        let e = one_refusal(on_threads(requests(&params(4, Some(VertexId::Bytes(b"abc".to_vec()))), true, 3)));
        assert_eq!(e, "the SSSP source 'abc' is not a vertex of the graph");
    }

    /// A refusal on one process: every process answers with the first refusing process's
    /// text, before anything else is read (its request holds nothing after the text).
    #[test]
    fn a_refusal_fails_every_process_with_its_text() {
        let par = params(2, None);
        let mut inputs = requests(&par, false, 3);
        inputs[1] = request(&par, false, &[], &[], &[], "the weight of edge (3, 4) is -1.0");
        inputs[2] = request(&par, false, &[], &[], &[], "a later refusal");
        assert_eq!(one_refusal(on_threads(inputs)), "the weight of edge (3, 4) is -1.0");
    }

    /// Requests whose agreed parts differ, or whose parameters are bad, fail on every
    /// process with one message.
    #[test]
    fn disagreeing_requests_and_bad_parameters_fail_everywhere() {
        let mut inputs = requests(&params(3, None), false, 2);
        inputs[1] = requests(&params(2, None), false, 2).remove(1);
        assert!(one_error(on_threads(inputs)).contains(
            "the parameters (kernel, threads, id kind, flags, iterations, alpha, tol, graph id, source or source list) of process 1 differ"
        ));
        let id = ids(false);
        let mut inputs = requests(&params(1, Some(id[0].clone())), false, 2);
        inputs[1] = requests(&params(1, Some(id[1].clone())), false, 2).remove(1);
        assert!(one_error(on_threads(inputs)).contains("of process 1 differ"));
        let bad = |f: &dyn Fn(&mut Params)| {
            let mut par = params(6, None);
            f(&mut par);
            one_refusal(on_threads(requests(&par, false, 2)))
        };
        assert_eq!(bad(&|p| p.iterations = 0), "maxIter must be at least 1, got 0");
        assert_eq!(bad(&|p| p.alpha = f64::NAN), "alpha must be in [0, 1], got NaN");
        assert_eq!(bad(&|p| (p.kernel, p.iterations) = (3, -1)), "iterations must be >= 0, got -1");
        assert_eq!(bad(&|p| p.kernel = 1), "BFS needs a source vertex (flag bit 0)");
        assert_eq!(bad(&|p| (p.kernel, p.flags, p.source) = (2, 1, Some(VertexId::Integral(0)))), "WCC takes no source vertex (flag bit 0 is set)");
        assert_eq!(bad(&|p| p.kernel = 99), format!("kernel code 99 is not {KERNEL_CODES}"));
        for (kernel, name) in [(8, "SCC"), (10, "triangle count"), (11, "k-core"), (12, "MIS")] {
            let said = bad(&|p| (p.kernel, p.flags, p.source) = (kernel, 1, Some(VertexId::Integral(0))));
            assert_eq!(said, format!("{name} takes no source vertex (flag bit 0 is set)"));
        }
        for (kernel, name) in [(1, "BFS"), (5, "LCC"), (6, "PageRank"), (10, "triangle count"), (11, "k-core"), (12, "MIS")] {
            let said = bad(&|p| (p.kernel, p.flags, p.source) = (kernel, NUMBERS | (kernel == 1) as u32, (kernel == 1).then_some(VertexId::Integral(0))));
            assert_eq!(said, format!("{name} answers no labels, so no vertex numbers (flag bit 7 is for WCC, CDLP and SCC)"));
        }
        assert!(bad(&|p| p.flags = 1 << 12).starts_with("flags 0x1000 set bits other than"));
        assert_eq!(bad(&|p| p.kernel = 0), "kernel 0 (load only) needs flag 3 (keep)");
        assert_eq!(bad(&|p| p.flags = KEEP | USE), "flags 3 (keep) and 4 (use) exclude each other");
        assert_eq!(bad(&|p| (p.kernel, p.flags, p.source) = (4, 1, Some(VertexId::Integral(0)))), "SSSP needs edge weights (flag bit 5)");
        assert_eq!(bad(&|p| p.flags = 3 << 1), "exchange code 3 in the flags is not 0 (auto), 1 (allgather) or 2 (plan)");
        // A truncated request: its process names what is missing, the others point at it.
        let mut inputs = requests(&params(2, None), false, 2);
        let len = inputs[0].len();
        inputs[0].truncate(len - 3);
        let out = on_threads(inputs);
        assert!(out[0].as_ref().unwrap_err().starts_with("bad request: the request declares 14 edge ends but has 109 bytes left"), "{out:?}");
        assert_eq!(out[1].as_ref().unwrap_err(), "the request of process 0 does not parse (its own error says why)");
    }

    /// Issue 26: source lists and their flags. An id twice or one that is no vertex (each
    /// kind of id), no landmark, a list on a kernel without one, flags 0 and 6 together,
    /// flag 9 without sources or several sources without it, flags 9 and 10 on other
    /// kernels, a bad reset probability: refused on every process with one text; lists
    /// that differ between processes: the error of disagreeing requests.
    #[test]
    fn bad_source_lists_and_their_flags_are_refused_everywhere() {
        for bytes in [false, true] {
            let id = ids(bytes);
            let refuse = |par: &Params| one_refusal(on_threads(requests(par, bytes, 2)));
            let (a, b) = (id[1].clone(), id[2].clone());
            let twice = listed(7, &[a.clone(), b.clone(), a.clone()], VECTOR);
            assert_eq!(refuse(&twice), format!("the PageRank source list names {a} twice"));
            let stranger = if bytes { VertexId::Bytes(b"zz".to_vec()) } else { VertexId::Integral(5) };
            let missing = listed(9, &[b.clone(), stranger.clone(), b.clone()], 0);
            assert_eq!(refuse(&missing), format!("the shortest paths landmark {stranger} is not a vertex of the graph"));
            assert_eq!(refuse(&listed(9, &[], UNDIRECTED)), "shortest paths needs at least one landmark, got none");
            let mut other = requests(&twice, bytes, 2);
            other[1] = requests(&listed(7, &[a.clone(), b.clone()], VECTOR), bytes, 2).remove(1);
            assert!(one_error(on_threads(other)).contains("of process 1 differ"));
        }
        let id = ids(false);
        let refuse = |par: Params| one_refusal(on_threads(requests(&par, false, 2)));
        let with = |mut par: Params, f: &dyn Fn(&mut Params)| {
            f(&mut par);
            par
        };
        assert_eq!(refuse(listed(1, &[id[0].clone()], 0)), "BFS takes no source list (flag bit 6 is set)");
        assert_eq!(refuse(listed(6, &[], 0)), "PageRank takes no source list (flag bit 6 is set)");
        assert_eq!(refuse(with(params(9, None), &|_| {})), "shortest paths needs landmarks: a source list (flag bit 6)");
        let both = with(listed(7, &[id[0].clone()], 0), &|p| (p.flags, p.source) = (p.flags | HAS_SOURCE, Some(id[0].clone())));
        assert_eq!(refuse(both), "flags 0 (source) and 6 (source list) exclude each other");
        assert_eq!(refuse(listed(7, &[], VECTOR)), "flag 9 (vector) needs a source list (flag 6) of at least one source");
        assert_eq!(refuse(listed(7, &[id[0].clone(), id[1].clone()], 0)), "GraphX PageRank with 2 sources answers 2 ranks per vertex: it needs flag 9 (vector)");
        assert_eq!(refuse(with(params(6, None), &|p| p.flags = VECTOR)), "flag 9 (vector) is GraphX PageRank's (kernel 7), not PageRank's");
        assert_eq!(refuse(listed(7, &[], UNDIRECTED)), "flag 10 (undirected) is shortest paths' (kernel 9), not GraphX PageRank's");
        assert_eq!(refuse(with(listed(7, &[], 0), &|p| p.alpha = 1.5)), "resetProbability must be in [0, 1], got 1.5");
        assert_eq!(refuse(with(listed(7, &[], 0), &|p| p.alpha = -0.0 - 1e-300)), format!("resetProbability must be in [0, 1], got {}", -1e-300));
        assert_eq!(refuse(with(listed(7, &[], 0), &|p| p.iterations = 0)), "maxIter must be at least 1, got 0");
        assert_eq!(refuse(with(listed(7, &[], 0), &|p| p.tol = -1.0)), "tol must be a finite number >= 0, got -1 (0 runs exactly maxIter iterations)");
    }

    /// The native check of the weights (the caller refuses them first): a NaN weight is
    /// the error naming the edge by its ids, on every process.
    #[test]
    fn a_nan_weight_is_named_by_its_ids() {
        let s = |x: &[u8]| VertexId::Bytes(x.to_vec());
        let par = params(4, Some(s(b"a")));
        let out = on_threads(vec![
            request(&par, true, &[(s(b"a"), s(b"b"))], &[1.0], &[], ""),
            request(&par, true, &[(s(b"b"), s(b"c")), (s(b"c\xff"), s(b"a"))], &[0.0, f64::NAN], &[], ""),
        ]);
        assert_eq!(one_refusal(out), "edge 1 of process 1, ('c\u{fffd}', 'a'), has weight NaN: weights must be numbers >= 0");
    }

    /// `describe` reads every field back, and gives the parameter check's error.
    #[test]
    fn describe_reads_every_field() {
        let s = |x: &[u8]| VertexId::Bytes(x.to_vec());
        let b = request(&params(4, Some(s(b"x"))), true, &[(s(b"x"), s(b"\xff"))], &[2.5], &[s(b"")], "");
        assert_eq!(
            describe(&b).unwrap(),
            "graph-call Sssp threads=1 kind=2 flags=33 iterations=0 alpha=0 tol=0 source='x' edges ['x', '\u{fffd}'] weights Some([2.5]) vertices ['']"
        );
        let mis = request(&params(12, None), false, &[], &[], &[VertexId::Integral(4)], "");
        assert_eq!(describe(&mis).unwrap(), "graph-call Mis { seed: -5 } threads=1 kind=1 flags=0 iterations=-5 alpha=0 tol=0 source=none edges [] weights None vertices [4]");
        let mut numbers = params(8, None);
        numbers.flags = NUMBERS;
        assert!(describe(&request(&numbers, false, &[], &[], &[], "")).unwrap().starts_with("graph-call Scc threads=1 kind=1 flags=128 "));
        let b = request(&listed(7, &[s(b"x"), s(b"")], VECTOR), true, &[(s(b"x"), s(b""))], &[], &[], "");
        assert_eq!(
            describe(&b).unwrap(),
            "graph-call GraphxPageRank { reset_probability: 0.15, tol: 0.0, max_iters: 10, vector: true } threads=1 kind=2 flags=576 \
             iterations=10 alpha=0.15 tol=0 source=none sources=['x', ''] edges ['x', ''] weights None vertices []"
        );
        let mut par = params(3, None);
        par.iterations = -2;
        assert_eq!(describe(&request(&par, false, &[], &[], &[], "")).unwrap_err(), "iterations must be >= 0, got -2");
        assert_eq!(describe(&request(&par, false, &[], &[], &[], "no")).unwrap(), "graph-call refused: no");
    }

    /// A graph without vertices (no edges, no vertex ids anywhere) is the kernels' error
    /// on every process, not a panic.
    #[test]
    fn an_empty_graph_is_an_error_everywhere() {
        let par = params(5, None);
        let e = one_refusal(on_threads(vec![request(&par, true, &[], &[], &[], ""), request(&par, true, &[], &[], &[], "")]));
        assert!(e.contains("the graph has no vertices") && e.contains("LCC"), "{e}");
    }

    /// LPF process 0 reports the kernel's rounds to the sink: BFS's levels from a byte
    /// id, PageRank's iterations.
    #[test]
    fn process_0_reports_the_rounds() {
        use std::io::{BufRead, BufReader};
        let lines_of = |par: &Params| -> Vec<String> {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let sink = ProgressSink::connect("127.0.0.1", l.local_addr().unwrap().port(), "token 0").unwrap();
            let out = crate::on_shm_threads(requests(par, true, 2), |c, input| run(c, RequestBytes::Contiguous(input), Some(&sink)));
            assert!(out.iter().all(|r| r.is_ok()), "{out:?}");
            drop(sink);
            let lines: Vec<String> = BufReader::new(l.accept().unwrap().0).lines().map(|x| x.unwrap()).collect();
            assert_eq!(lines[0], "token 0");
            lines[1..].to_vec()
        };
        let id = ids(true);
        // From id 1 (number 1): 1 -> 2 -> {0, 4} -> {3}: four levels.
        let bfs = lines_of(&params(1, Some(id[1].clone())));
        let levels: Vec<&str> = bfs.iter().map(|x| x.split(' ').nth(1).unwrap()).collect();
        assert_eq!(levels, ["0", "1", "2", "3"], "{bfs:?}");
        assert!(bfs.iter().all(|x| x.starts_with("level ")), "{bfs:?}");
        let pr = lines_of(&params(6, None));
        assert!(!pr.is_empty() && pr.iter().all(|x| x.starts_with("iteration ")), "{pr:?}");
    }

    /// Issue 25 (resident graphs): a load-only call with flag 3 keeps each process's part
    /// (its bytes in the reply); calls with flag 4 on it give what calls on the rows give,
    /// every kernel, reading no edges; a call on a graph some process lacks (another id,
    /// another p, dropped) answers "missing" on every process.
    #[test]
    fn a_kept_graph_serves_every_kernel_and_a_missing_part_is_agreed() {
        for bytes in [false, true] {
            let id = ids(bytes);
            let graph: GraphId = if bytes { [0x5a; 16] } else { [0xa5; 16] };
            let mut load = params(0, None);
            (load.flags, load.graph) = (KEEP | WEIGHTS, graph);
            let out = on_threads(requests(&load, bytes, 3));
            for r in &out {
                let b = r.as_ref().unwrap();
                assert_eq!((&b[..8], b.len()), (&REPLY_MAGIC[..], REPLY_HEADER), "a load answers with the header alone");
                assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), N as u64);
                assert!(u64::from_le_bytes(b[80..88].try_into().unwrap()) > 0, "kept bytes");
            }
            for kernel in KERNELS.into_iter().chain([7, 9]) {
                let want = pairs(&on_threads(requests(&sample(kernel, bytes), bytes, 3)), bytes);
                let mut on_kept = sample(kernel, bytes);
                (on_kept.flags, on_kept.graph) = ((on_kept.flags & !WEIGHTS) | USE, graph);
                let inputs = (0..3).map(|_| request(&on_kept, bytes, &[], &[], &[], "")).collect();
                assert_eq!(pairs(&on_threads(inputs), bytes), want, "kernel {kernel} on the kept graph (byte ids: {bytes})");
            }
            let mut bfs = params(1, Some(id[1].clone()));
            (bfs.flags, bfs.graph) = (bfs.flags | USE, graph);
            let missing = |out: Vec<Result<Vec<u8>, String>>| out.iter().all(|r| r.as_deref() == Ok(&MISSING_MAGIC[..]));
            assert!(missing(on_threads((0..2).map(|_| request(&bfs, bytes, &[], &[], &[], "")).collect())), "another p");
            let mut other = bfs.clone();
            other.graph[0] ^= 1;
            assert!(missing(on_threads((0..3).map(|_| request(&other, bytes, &[], &[], &[], "")).collect())), "another id");
            // One part gone (an executor replaced): every process says "missing".
            crate::resident::find(&graph, 1, 3).expect("kept");
            let (g0, g2) = (crate::resident::find(&graph, 0, 3).unwrap().0, crate::resident::find(&graph, 2, 3).unwrap().0);
            assert!(crate::resident::drop_graph(&graph) > 0);
            let keep_back = |pid: u32, g: Arc<Graph>| crate::resident::keep(graph, pid, 3, Arc::try_unwrap(g).ok().unwrap());
            keep_back(0, g0);
            keep_back(2, g2);
            assert!(missing(on_threads((0..3).map(|_| request(&bfs, bytes, &[], &[], &[], "")).collect())), "part 1 dropped");
            crate::resident::drop_graph(&graph);
        }
    }

    /// Issue 25: a part that does not fit the limit is refused on every process, before
    /// loading (a lower bound from the request) or once loaded (its exact size), naming the
    /// bytes and spark.executor.memoryOverhead; nothing is kept then.
    #[test]
    fn a_part_beyond_the_memory_limit_is_refused_and_not_kept() {
        let graph: GraphId = [0x3c; 16];
        let mut load = params(0, None);
        (load.flags, load.graph) = (KEEP, graph);
        // The exact sizes first, without a limit.
        let sizes: Vec<u64> = on_threads(requests(&load, false, 2))
            .iter()
            .map(|r| u64::from_le_bytes(r.as_ref().unwrap()[80..88].try_into().unwrap()))
            .collect();
        crate::resident::drop_graph(&graph);
        load.limit = 100; // below the lower bound of every part
        let e = one_refusal(on_threads(requests(&load, false, 2)));
        assert!(e.contains("needs") && e.contains("at least (before loading)") && e.contains("spark.executor.memoryOverhead"), "{e}");
        assert!(crate::resident::find(&graph, 0, 2).is_none() && crate::resident::find(&graph, 1, 2).is_none());
        // Above the lower bounds, below the exact size of the larger part.
        load.limit = sizes.iter().max().unwrap() - 1;
        let e = one_refusal(on_threads(requests(&load, false, 2)));
        assert!(e.contains("once loaded") && e.contains(&format!("its {} bytes left", load.limit)), "{e}");
        assert!(crate::resident::find(&graph, 0, 2).is_none() && crate::resident::find(&graph, 1, 2).is_none());
        load.limit = *sizes.iter().max().unwrap();
        assert!(on_threads(requests(&load, false, 2)).iter().all(|r| r.as_ref().unwrap()[..8] == REPLY_MAGIC[..]));
        crate::resident::drop_graph(&graph);
    }

    /// `n` ids of the kind asked for, ascending: integers spread over the i64 range
    /// (negatives, i64::MIN and i64::MAX), byte strings (the empty one, non-UTF-8 bytes).
    fn many_ids(n: usize, bytes: bool) -> Vec<Id> {
        if bytes {
            let mut v: Vec<Vec<u8>> = (0..n - 2).map(|k| format!("v{:03}", k * 7 % 1000).into_bytes()).collect();
            v.extend([b"".to_vec(), b"\xff\x00".to_vec()]);
            v.sort();
            v.dedup();
            assert_eq!(v.len(), n);
            v.into_iter().map(VertexId::Bytes).collect()
        } else {
            let mut v: Vec<i64> = (1..n as i64 - 1).map(|k| (k - n as i64 / 2) * 1_000_000_007).collect();
            v.extend([i64::MIN, i64::MAX]);
            v.sort_unstable();
            v.into_iter().map(VertexId::Integral).collect()
        }
    }

    /// A random graph for BFS paths: `m` edges over `n` vertices and its marks (`f`
    /// vertices "from", `t` "to", `both` both ways), from `seed`.
    fn marked_graph(seed: u64, n: usize, m: usize, f: usize, t: usize, both: usize) -> (Vec<(usize, usize)>, Vec<u8>) {
        let mut rng = graphblas::prng::Xoshiro256::new(seed);
        let edges = (0..m).map(|_| (rng.below(n as u64) as usize, rng.below(n as u64) as usize)).collect();
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
        (edges, marks)
    }

    /// Process q's vertex section for BFS paths: the vertices `listed` picks with their
    /// marks; a vertex marked both ways is listed twice (on q and the next process), once
    /// as "from", once as "to", so that the OR of its marks counts.
    fn marked_section(marks: &[u8], id: &[Id], q: usize, p: usize, listed: impl Fn(usize) -> bool) -> (Vec<Id>, Vec<u8>) {
        let (mut vertices, mut given) = (Vec::new(), Vec::new());
        for (v, &m) in marks.iter().enumerate().filter(|(v, _)| listed(*v)) {
            if v % p == q {
                vertices.push(id[v].clone());
                given.push(if m == FROM | TO { FROM } else { m });
            }
            if m == FROM | TO && (v + 1) % p == q {
                vertices.push(id[v].clone());
                given.push(TO);
            }
        }
        (vertices, given)
    }

    /// Runs the requests (contiguous, or in sections handed over as the JVM does).
    fn on_threads_in(sections: bool, inputs: Vec<[Vec<u8>; SECTIONS]>) -> Vec<Result<Vec<u8>, String>> {
        if !sections {
            return on_threads(inputs.into_iter().map(|s| s.concat()).collect());
        }
        let natives: Vec<Arc<crate::request::NativeRequest>> = inputs
            .iter()
            .map(|s| {
                let mut r = crate::request::NativeRequest::new();
                for (k, section) in s.iter().enumerate() {
                    r.append_with(k, section.len(), |to| {
                        to.copy_from_slice(section);
                        Ok::<_, String>(())
                    })
                    .unwrap();
                }
                Arc::new(r)
            })
            .collect();
        crate::on_shm_threads(vec![vec![]; natives.len()], |c, _| run(c, RequestBytes::Sections(natives[c.pid() as usize].clone()), None))
    }

    /// The replies of a BFS paths call checked against the model: every process's FOUND
    /// flag, the rounds, the depths by id.
    fn check_paths(out: &[Result<Vec<u8>, String>], bytes: bool, id: &[Id], want: &graphblas::reference::ReferencePaths, what: &str) {
        for r in out {
            let ((n, _, rounds, _, flags, kind), _) = read_reply(r.as_ref().unwrap_or_else(|e| panic!("{what}: {e}")), bytes);
            assert_eq!((n, rounds, flags, kind), (id.len() as u64, want.rounds as u64, if want.found { FOUND } else { 0 }, 1), "{what}");
        }
        let got = pairs(out, bytes);
        // Sparse: the vertices on a path only.
        let expected: Vec<(Id, Value)> =
            id.iter().cloned().zip(want.depths.iter().copied()).filter(|&(_, d)| d != i64::MAX).map(|(v, d)| (v, Value::Int(d))).collect();
        assert_eq!(got, expected, "{what}");
    }

    /// Issue 26, kernel 13 (GraphFrames' bfs): random graphs with marked vertices, 1-4
    /// processes, threads 1 and 2, integral and byte-string ids, contiguous requests and
    /// requests in sections, maxPathLength from 0 to beyond every path: the replies are
    /// the sequential model's (depths, rounds, FOUND), including L = 0 (a vertex both
    /// ways), a path cut by maxPathLength and no path at all.
    #[test]
    fn bfs_paths_by_id_equal_the_sequential_model() {
        use graphblas::reference::reference_bfs_paths;
        let cases = [(30usize, 60usize, 2usize, 2usize, 0usize), (80, 300, 3, 1, 0), (40, 60, 3, 3, 1), (40, 25, 1, 1, 0), (100, 160, 1, 1, 0)];
        let mut seen = Vec::new();
        for (k, &(n, m, f, t, both)) in cases.iter().enumerate() {
            let (edges, marks) = marked_graph(700 + k as u64, n, m, f, t, both);
            let from: Vec<bool> = marks.iter().map(|m| m & FROM != 0).collect();
            let to: Vec<bool> = marks.iter().map(|m| m & TO != 0).collect();
            for bytes in [false, true] {
                let id = many_ids(n, bytes);
                for p in 1..=4usize {
                    for max_length in [0usize, 1, 3, 5, n] {
                        let want = reference_bfs_paths(n, &edges, &from, &to, max_length);
                        seen.push((want.found, want.rounds));
                        let mut par = params(13, None);
                        (par.flags, par.iterations, par.threads) = (MARKS, max_length as i64, 1 + (p + max_length) as u32 % 2);
                        let sections = (k + p + max_length) % 2 == 1;
                        let inputs = (0..p)
                            .map(|q| {
                                let mine: Vec<(Id, Id)> =
                                    edges.iter().enumerate().filter(|(e, _)| e % p == q).map(|(_, &(u, v))| (id[u].clone(), id[v].clone())).collect();
                                let (vertices, given) = marked_section(&marks, &id, q, p, |_| true);
                                marked_request_sections(&par, bytes, &mine, &[], &vertices, &given, "")
                            })
                            .collect();
                        let what = format!("case {k}, byte ids {bytes}, {p} processes, threads {}, sections {sections}, maxPathLength {max_length}", par.threads);
                        check_paths(&on_threads_in(sections, inputs), bytes, &id, &want, &what);
                    }
                }
            }
        }
        for case in [(true, 0), (true, 1), (true, 3), (true, 7), (false, 5), (false, 0)] {
            assert!(seen.contains(&case), "no case {case:?} among {seen:?}");
        }
    }

    /// Issue 26: BFS paths on a kept graph (flag 4 with marks): the vertex section lists
    /// the marked ids only, looked up in the kept graph, and the replies equal the model's;
    /// a graph kept by a BFS paths call (flag 3 with marks) serves the next one; a marked id
    /// that is no vertex of the kept graph is refused, naming it; with flag 8, a marked id
    /// listed twice is refused.
    #[test]
    fn bfs_paths_on_a_kept_graph() {
        use graphblas::reference::reference_bfs_paths;
        let (n, m) = (60, 120);
        let (edges, marks) = marked_graph(77, n, m, 2, 3, 1);
        let from: Vec<bool> = marks.iter().map(|m| m & FROM != 0).collect();
        let to: Vec<bool> = marks.iter().map(|m| m & TO != 0).collect();
        for bytes in [false, true] {
            let id = many_ids(n, bytes);
            for p in [1usize, 3] {
                let graph: GraphId = [0x13 + bytes as u8 + 2 * p as u8; 16];
                let parts = |par: &Params, marked: bool| -> Vec<[Vec<u8>; SECTIONS]> {
                    (0..p)
                        .map(|q| {
                            let mine: Vec<(Id, Id)> =
                                edges.iter().enumerate().filter(|(e, _)| e % p == q).map(|(_, &(u, v))| (id[u].clone(), id[v].clone())).collect();
                            let (vertices, given) = marked_section(&marks, &id, q, p, |_| true);
                            marked_request_sections(par, bytes, &mine, &[], &vertices, if marked { &given } else { &[] }, "")
                        })
                        .collect()
                };
                let on_kept = |max_length: usize, section: &dyn Fn(usize) -> (Vec<Id>, Vec<u8>), unique: bool| {
                    let mut par = params(13, None);
                    (par.flags, par.iterations, par.graph) = (MARKS | USE | if unique { UNIQUE } else { 0 }, max_length as i64, graph);
                    on_threads((0..p).map(|q| {
                        let (vertices, given) = section(q);
                        marked_request_sections(&par, bytes, &[], &[], &vertices, &given, "").concat()
                    }).collect())
                };
                let marked_only = |q: usize| marked_section(&marks, &id, q, p, |v| marks[v] != 0);
                // Kept by a load (kernel 0), then by a BFS paths call that keeps it.
                for keeper in [0u32, 13] {
                    let mut load = params(keeper, None);
                    (load.flags, load.graph, load.iterations) = (KEEP | if keeper == 13 { MARKS } else { 0 }, graph, 2);
                    let out = on_threads_in(false, parts(&load, keeper == 13));
                    assert!(out.iter().all(|r| r.as_ref().is_ok_and(|b| b.starts_with(REPLY_MAGIC))), "{out:?}");
                    if keeper == 13 {
                        check_paths(&out, bytes, &id, &reference_bfs_paths(n, &edges, &from, &to, 2), "BFS paths that keeps the graph");
                    }
                    for max_length in [0usize, 1, 2, 4, n] {
                        let what = format!("kept by kernel {keeper}, byte ids {bytes}, {p} processes, maxPathLength {max_length}");
                        check_paths(&on_kept(max_length, &marked_only, false), bytes, &id, &reference_bfs_paths(n, &edges, &from, &to, max_length), &what);
                    }
                }
                // Marks that name a vertex the kept graph lacks, or one twice with flag 8.
                let absent = if bytes { VertexId::Bytes(b"no such vertex".to_vec()) } else { VertexId::Integral(5) };
                let with_absent = |q: usize| {
                    let (mut vertices, mut given) = marked_only(q);
                    if q == p - 1 {
                        vertices.push(absent.clone());
                        given.push(TO);
                    }
                    (vertices, given)
                };
                assert_eq!(one_refusal(on_kept(3, &with_absent, false)), format!("the marked vertex {absent} is not a vertex of the graph"));
                // Each marked id once (with all its marks), the last vertex twice more.
                let once = |q: usize| -> (Vec<Id>, Vec<u8>) {
                    (0..n).filter(|&v| marks[v] != 0 && v % p == q).map(|v| (id[v].clone(), marks[v])).unzip()
                };
                let with_flag = on_kept(4, &once, true);
                check_paths(&with_flag, bytes, &id, &reference_bfs_paths(n, &edges, &from, &to, 4), "each marked id once, flag 8");
                let twice = |q: usize| {
                    let (mut vertices, mut given) = once(q);
                    if q == 0 {
                        vertices.push(id[n - 1].clone());
                        given.push(FROM);
                        vertices.push(id[n - 1].clone());
                        given.push(TO);
                    }
                    (vertices, given)
                };
                assert_eq!(one_refusal(on_kept(3, &twice, true)), format!("vertex id {} appears more than once", id[n - 1]));
                assert!(on_kept(3, &twice, false).iter().all(|r| r.as_ref().is_ok_and(|b| b.starts_with(REPLY_MAGIC))));
                crate::resident::drop_graph(&graph);
            }
        }
    }

    /// Issue 26, flag 8: a vertex id listed twice (by one process, or by two) is refused on
    /// every process with the smallest such id; without the flag the same requests run;
    /// edges' ids are not concerned (every id of the test graph is an edge's).
    #[test]
    fn unique_vertex_ids_refuse_an_id_listed_twice() {
        for bytes in [false, true] {
            let id = ids(bytes);
            let cases: [(&[&[usize]], Option<usize>); 4] =
                [(&[&[9, 10, 0], &[1, 2]], None), (&[&[9, 10, 9]], Some(9)), (&[&[10, 3], &[4, 3], &[10]], Some(3)), (&[&[2, 7], &[10, 7, 2]], Some(2))];
            for (lists, twice) in cases {
                let p = lists.len();
                for (kernel, marks) in [(2u32, false), (13, true)] {
                    let run_with = |unique: bool| {
                        let mut par = params(kernel, None);
                        par.flags = if unique { UNIQUE } else { 0 } | if marks { MARKS } else { 0 };
                        let inputs = (0..p)
                            .map(|q| {
                                let ks: Vec<usize> = (0..EDGES.len()).filter(|k| k % p == q).collect();
                                let edges: Vec<(Id, Id)> = ks.iter().map(|&k| (id[EDGES[k].0].clone(), id[EDGES[k].1].clone())).collect();
                                let vertices: Vec<Id> = lists[q].iter().map(|&v| id[v].clone()).collect();
                                let given = if marks { vec![FROM; vertices.len()] } else { vec![] };
                                marked_request_sections(&par, bytes, &edges, &[], &vertices, &given, "").concat()
                            })
                            .collect();
                        on_threads(inputs)
                    };
                    let ok = |out: &[Result<Vec<u8>, String>]| out.iter().all(|r| r.as_ref().is_ok_and(|b| b.starts_with(REPLY_MAGIC)));
                    let plain = run_with(false);
                    assert!(ok(&plain), "kernel {kernel}: {plain:?}");
                    match twice {
                        None => assert_eq!(pairs(&run_with(true), bytes), pairs(&plain, bytes)),
                        Some(v) => assert_eq!(one_refusal(run_with(true)), format!("vertex id {} appears more than once", id[v]), "kernel {kernel}"),
                    }
                }
            }
        }
    }

    /// Issue 26: kernel 13 needs marks and the others refuse them; maxPathLength below 0
    /// is refused; a mark with other bits than 0-1 does not parse; `describe` shows the
    /// marks.
    #[test]
    fn marks_are_for_bfs_paths_only() {
        let bad = |kernel: u32, flags: u32, iterations: i64| {
            let mut par = params(kernel, None);
            (par.flags, par.iterations) = (flags, iterations);
            one_refusal(on_threads(requests(&par, false, 2)))
        };
        assert_eq!(bad(2, MARKS, 0), "WCC takes no vertex marks (flag bit 11 is set)");
        assert_eq!(bad(0, MARKS | KEEP, 0), "load takes no vertex marks (flag bit 11 is set)");
        assert_eq!(bad(6, MARKS, 10), "PageRank takes no vertex marks (flag bit 11 is set)");
        assert_eq!(bad(13, 0, 3), "BFS paths needs vertex marks (flag bit 11)");
        assert_eq!(bad(13, MARKS, -1), "maxPathLength must be >= 0, got -1");
        assert_eq!(bad(13, MARKS | 1 << 12, 1), "flags 0x1800 set bits other than 0 (source), 1-2 (exchange), 3 (keep), 4 (use), 5 (weights), 6 (source list), 7 (numbers), 8 (unique), 9 (vector), 10 (undirected), 11 (marks)");
        let mut par = params(13, None);
        par.flags = MARKS;
        let id = ids(false);
        let b = marked_request_sections(&par, false, &[(id[0].clone(), id[1].clone())], &[], &[id[2].clone(), id[0].clone()], &[TO, 4 | FROM], "").concat();
        assert_eq!(parse(&b).err().unwrap(), "vertex mark 1 is 0x5: a mark sets bits 0 (from) and 1 (to) only");
        let b = marked_request_sections(&par, false, &[(id[0].clone(), id[1].clone())], &[], &[id[2].clone(), id[0].clone()], &[TO], "").concat();
        assert!(parse(&b).err().unwrap().contains("declares 2 vertex marks but has 1 bytes left"));
        let b = marked_request_sections(&par, false, &[(id[0].clone(), id[1].clone())], &[], &[id[2].clone()], &[TO | FROM], "").concat();
        assert_eq!(
            describe(&b).unwrap(),
            format!("graph-call BfsPaths {{ max_length: 0 }} threads=1 kind=1 flags=2048 iterations=0 alpha=0 tol=0 source=none edges [{}, {}] weights None vertices [{}] marks [3]", id[0], id[1], id[2])
        );
        // A call on a kept graph sends vertex ids only with their marks.
        par.flags = USE;
        par.kernel = 2;
        let b = marked_request_sections(&par, false, &[], &[], &[id[2].clone()], &[], "").concat();
        assert!(parse(&b).err().unwrap().contains("vertex ids only with their marks (flag 11); this one declares 0 and 1"));
    }
}
