//! Distributed PageRank over LPF: 1D block distribution of the rows of Aᵀ,
//! parallel input, and the SPMD entry points the CLI and the Spark bridge call.
//!
//! Every function here is *collective*: all processes of the LPF context call it with
//! the same arguments (except [`Input::Edges`], whose edges are each process's own
//! part), in the same order. Nothing is global: all state lives in the call (per
//! context), so several LPF processes may share one OS process.
//!
//! Pipeline (see `docs/pagerank.md` for the reasons):
//!
//! 1. **Load** ([`Input`]): each process reads its byte range of the file (or generates
//!    its chunk of the R-MAT edge list, or takes the edges it was handed); every
//!    failure is agreed on with one collective flag exchange, so every process returns
//!    the same error naming the file and line and nobody waits for a dead peer. Inputs
//!    that declare their vertices (MatrixMarket, binary, R-MAT) keep them; the ids of an
//!    edge list or of given edges (any `u64`) are relabelled densely, `0..n` in
//!    ascending id order, the same on every process (`relabel`): their vertices are the
//!    ids some edge names.
//! 2. **Route and deduplicate**: edges go to the owner of their target in the dense
//!    numbering (even blocks), where duplicates collapse.
//! 3. **Global renumbering**: out- and in-degrees are summed over the processes
//!    (reduce-scatter, then allgather), and every process computes the same stable
//!    order by decreasing out-degree, ties by input id — the order of the local
//!    [`PullGraph`](crate::PullGraph), so each row's sum is the local one, bit for bit.
//!    Dangling vertices end up last. Rows are cut into p blocks balanced by
//!    in-degree + 12 per non-empty row + 2 per empty row (fitted to the kernel's
//!    measured per-chunk times; see `docs/pagerank.md`).
//! 4. **Re-route** edges to the owners of their (new) target rows and build the local
//!    CSR of the block.
//! 5. **Iterate**: each process updates its rows with [`step_block`](crate::algorithms::pagerank::step_block)
//!    on `threads` threads, then one superstep carries both the contribution exchange
//!    ([`Exchange`]) and the allreduce of (residual, dangling mass).
//! 6. **Results** map back to the input ids; [`write_ranks_spmd`] writes them to one file
//!    in parallel (temp file in the same directory, renamed at the end).

mod adjacency;
mod bfs;
mod build;
mod cdlp;
mod comm;
mod graph;
mod graphx_pagerank;
mod iterate;
mod kcore;
mod keys;
mod lcc;
mod load;
mod marks;
mod output;
mod progress;
mod mis;
mod relabel;
mod scc;
mod settle;
mod sssp;
mod triangles;
mod wcc;

pub use adjacency::VertexValues;
pub use graph::{Graph, GraphxRanks, KeyedEdges, KeyedPaths, KeyedRanks, KeyedValues, VertexId, VertexIds, VertexSection};
pub use graphx_pagerank::GraphxPageRankConfig;
pub use marks::{VertexMarks, FROM, TO};
pub use keys::ByteKeys;
pub use bfs::{bfs_spmd, bfs_spmd_observed, bfs_spmd_with};
pub use iterate::ExchangeStats;
pub use cdlp::cdlp_spmd;
pub use kcore::{kcore_spmd, kcore_spmd_observed};
pub use lcc::lcc_spmd;
pub use mis::mis_spmd;
pub use scc::scc_spmd;
pub use sssp::{sssp_spmd, sssp_spmd_with};
pub use triangles::triangles_spmd;
pub use output::{convert_to_binary_spmd, convert_to_csr_spmd, write_ranks_spmd, write_values_spmd};
pub use progress::{Measure, RoundProgress};
pub use wcc::wcc_spmd;

use crate::io::{InputError, InputErrorKind};
use crate::kron::KronParams;
use crate::algorithms::pagerank::PageRankConfig;
use comm::Comm;
use graph::Computed;
use load::Weights;
use lpf::Context;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Input file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// From the extension: `.mtx` MatrixMarket, `.edges`/`.txt`/`.el` edge list,
    /// `.bin` the crate's binary format, `.gcsr` a converted graph; a file with another
    /// extension that starts with the converted graph's magic is one.
    Auto,
    /// MatrixMarket coordinate (pattern/real/integer, general/symmetric); 1-based ids
    /// below the declared size.
    Mtx,
    /// Whitespace edge list `src dst [weight]` per line (the weight is ignored),
    /// `#`/`%` comments; ids are labels, any `u64` (0-based, 1-based or sparse).
    Edges,
    /// As `Edges`, declared 1-based: an id 0 is an error naming its line.
    EdgesOneBased,
    /// The binary format of [`crate::io::write_binary`]; ids are the record's u32s.
    Bin,
    /// The kernels' graph as written by [`convert_to_csr_spmd`] (`graph convert`): the
    /// in- and out-adjacency as CSR, the ids, the weights if converted with them; read
    /// without routing or sorting (see [`crate::io::CsrHeader`]).
    Csr,
}

impl Format {
    /// The format a path's extension names, if any.
    pub(crate) fn from_extension(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "mtx" => Some(Format::Mtx),
            "edges" | "txt" | "el" => Some(Format::Edges),
            "bin" => Some(Format::Bin),
            "gcsr" => Some(Format::Csr),
            _ => None,
        }
    }

    /// The format `Auto` means for `path`: the extension's, else a converted graph's
    /// when the file starts with its magic.
    pub(crate) fn of_file(path: &Path) -> Option<Format> {
        Format::from_extension(path).or_else(|| crate::io::is_csr_file(path).then_some(Format::Csr))
    }

    /// This format, or for `Auto` the one [`Format::of_file`] finds.
    pub fn resolve(self, path: &Path) -> Option<Format> {
        match self {
            Format::Auto => Format::of_file(path),
            f => Some(f),
        }
    }

    /// Parses `mtx`, `edges` (also `txt`, `el`), `bin`, `csr` (also `gcsr`).
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "mtx" => Some(Format::Mtx),
            "edges" | "txt" | "el" => Some(Format::Edges),
            "bin" => Some(Format::Bin),
            "csr" | "gcsr" => Some(Format::Csr),
            "auto" => Some(Format::Auto),
            _ => None,
        }
    }
}

/// What the graph is and where it comes from.
#[derive(Clone, Debug)]
pub enum Input {
    /// A file every process can read; each reads its own byte range.
    /// Self-loops are edges; duplicate entries count once; values are ignored. A
    /// MatrixMarket or binary file declares its vertices (isolated ones included); an
    /// edge list's vertices are the ids some entry names (relabelled densely, so memory
    /// follows the vertices that exist, not the largest id); results carry the ids of
    /// the file.
    File { path: PathBuf, format: Format },
    /// A Graph500 R-MAT graph; each process generates its chunk of the edge list.
    /// Self-loops and duplicates are removed (as in [`crate::kron::kron_matrix`]).
    Rmat(KronParams),
    /// This process's part of the edge list, `(source, target)` with arbitrary `u64`
    /// vertex ids (a vertex exists if it occurs in some edge). Self-loops are edges;
    /// duplicates count once.
    Edges(Vec<(u64, u64)>),
    /// This process's part of the edge list of a graph whose vertices the caller numbered
    /// `0..n` itself (every process passes the same `n`): every number is a vertex, with or
    /// without edges (an isolated vertex still holds rank), and results carry the numbers.
    /// An id `>= n` is an error. Self-loops are edges; duplicates count once.
    NumberedEdges { n: u64, edges: Vec<(u64, u64)> },
    /// As [`Input::NumberedEdges`], each edge with a weight (`weights[k]` of `edges[k]`):
    /// the weighted input of SSSP from memory (the Spark bridge). A negative or NaN
    /// weight is an error naming the edge; the kernels that ignore weights ignore them.
    WeightedNumberedEdges { n: u64, edges: Vec<(u64, u64)>, weights: Vec<f64> },
}

impl Input {
    /// A file whose format follows from its extension.
    pub fn file(path: impl Into<PathBuf>) -> Input {
        Input::File { path: path.into(), format: Format::Auto }
    }

    /// The path of a converted graph ([`Format::Csr`], given or found by
    /// [`Format::of_file`]), which loads without the routing of the other inputs.
    pub(crate) fn csr_path(&self) -> Option<&Path> {
        match self {
            Input::File { path, format } if format.resolve(path) == Some(Format::Csr) => Some(path),
            _ => None,
        }
    }

    /// What errors call the input: the file's path, "the R-MAT graph", "the given edges".
    pub fn describe(&self) -> String {
        match self {
            Input::File { path, .. } => path.display().to_string(),
            Input::Rmat(_) => "the R-MAT graph".into(),
            Input::Edges(_) | Input::NumberedEdges { .. } | Input::WeightedNumberedEdges { .. } => "the given edges".into(),
        }
    }
}

/// The error for a graph without vertices, which no kernel runs on.
/// The number of the vertex with id `id` in the ascending `labels` (every process holds
/// all of them, so all agree without a word); `role` names it in the error ("the BFS
/// source").
pub(crate) fn vertex_of(labels: &[u64], id: u64, what: &str, role: &str) -> DistResult<usize> {
    labels.binary_search(&id).map_err(|_| {
        DistError::Invalid(format!(
            "{what}: the {role} {id} is not a vertex of the graph ({} vertices, ids {}..={})",
            labels.len(),
            labels[0],
            labels[labels.len() - 1]
        ))
    })
}

pub(crate) fn require_vertices(n: usize, what: &str, kernel: &str) -> DistResult<()> {
    if n == 0 {
        return Err(DistError::Invalid(format!(
            "{what}: the graph has no vertices (an edge list without edges, or a declared size of 0); {kernel} needs at least one vertex"
        )));
    }
    Ok(())
}

/// How the contribution vector is exchanged each iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// Pick per graph from the volumes the two would move (see `docs/pagerank.md`).
    Auto,
    /// Every process fetches the non-dangling part of every other block (gets from the
    /// owners' registered contribution vectors): an allgather that skips the entries
    /// known to be zero.
    Allgather,
    /// A communication plan built once: each owner packs exactly the entries each
    /// other process references and puts them into that process's ghost area.
    Plan,
}

impl Exchange {
    pub fn parse(s: &str) -> Option<Exchange> {
        match s {
            "auto" => Some(Exchange::Auto),
            "allgather" => Some(Exchange::Allgather),
            "plan" => Some(Exchange::Plan),
            _ => None,
        }
    }
}

/// Options of the distributed run beyond [`PageRankConfig`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistOptions {
    pub exchange: Exchange,
    /// Process 0 prints `iteration, residual, seconds` per iteration on stderr
    /// ([`pagerank_spmd_with`]; [`pagerank_spmd_observed`] hands them to the caller).
    pub progress: bool,
    /// `Auto` picks `Plan` when its total volume is below this fraction of the
    /// allgather's (default [`AUTO_PLAN_RATIO`]).
    pub auto_plan_ratio: f64,
}

/// Default of [`DistOptions::auto_plan_ratio`] (measured; see `docs/pagerank.md`).
pub(crate) const AUTO_PLAN_RATIO: f64 = 0.8;

impl Default for DistOptions {
    fn default() -> Self {
        DistOptions { exchange: Exchange::Auto, progress: false, auto_plan_ratio: AUTO_PLAN_RATIO }
    }
}

/// One process's share of a distributed PageRank result.
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedResult {
    /// Vertices in the whole graph.
    pub n: u64,
    /// Edges in the whole graph (after removing duplicates, and for R-MAT self-loops).
    pub nnz: u64,
    /// User-visible ids of the vertices this process owns: as in the input (the ids of
    /// the file or the given `u64` for [`Input::Edges`]; R-MAT: `0..2^scale`).
    pub ids: Vec<u64>,
    /// Rank of `ids[k]`. Over all processes the ranks sum to 1.
    pub ranks: Vec<f64>,
    /// Position of `ids[k]` in the ascending order of all ids (0..n): the order in which
    /// [`write_ranks_spmd`] lists the vertices.
    pub index: Vec<u64>,
    pub iterations: usize,
    /// L1 change of the last iteration.
    pub residual: f64,
    pub converged: bool,
    /// Read/generate, route, renumber and build, seconds (this process).
    pub load_seconds: f64,
    /// The iterations, seconds.
    pub iteration_seconds: f64,
    /// The exchange that ran and what it moves.
    pub exchange: ExchangeStats,
}

/// What can go wrong; every process of a collective call returns the same error.
/// Non-exhaustive: a caller matches with a `_` arm.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DistError {
    /// Bad input: names the file and (for text files) the line.
    Input(InputError),
    /// The graph or the parameters cannot be handled (e.g. too many vertices).
    Invalid(String),
    /// Writing an output file failed.
    Output { path: PathBuf, message: String },
    /// An LPF call failed (for example because another process failed): LPF's error
    /// whole, so that a caller can tell failures apart by its
    /// [`reason`](lpf::Error::reason) (e.g. [`lpf::Reason::PeerLeft`]) and
    /// [`kind`](lpf::Error::kind), on every process, the agreed error included.
    Lpf(lpf::Error),
    /// A resource this process needs cannot be had: the threads of `threads` per process
    /// ([`GrbError::ThreadsUnavailable`](crate::error::GrbError::ThreadsUnavailable)). The
    /// message names the count and the limit in the way.
    Resource(String),
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::Input(e) => write!(f, "{e}"),
            DistError::Invalid(m) => write!(f, "{m}"),
            DistError::Output { path, message } => write!(f, "{}: {message}", path.display()),
            DistError::Lpf(e) => write!(f, "communication failed: {e}"),
            DistError::Resource(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for DistError {}

impl From<InputError> for DistError {
    fn from(e: InputError) -> Self {
        DistError::Input(e)
    }
}

impl From<lpf::Error> for DistError {
    fn from(e: lpf::Error) -> Self {
        DistError::Lpf(e)
    }
}

impl From<crate::settings::InvalidSetting> for DistError {
    fn from(e: crate::settings::InvalidSetting) -> Self {
        DistError::Invalid(e.0)
    }
}

impl From<crate::error::GrbError> for DistError {
    fn from(e: crate::error::GrbError) -> Self {
        match e {
            crate::error::GrbError::ThreadsUnavailable { .. } => DistError::Resource(e.to_string()),
            e => DistError::Invalid(e.to_string()),
        }
    }
}

pub type DistResult<T> = Result<T, DistError>;

fn kind_code(k: InputErrorKind) -> u8 {
    use InputErrorKind::*;
    match k {
        Io => 0,
        Header => 1,
        Malformed => 2,
        NotNumeric => 3,
        IndexOutOfRange => 4,
        EntryCount => 5,
        Truncated => 6,
        Unsupported => 7,
    }
}

fn kind_of(c: u8) -> InputErrorKind {
    use InputErrorKind::*;
    [Io, Header, Malformed, NotNumeric, IndexOutOfRange, EntryCount, Truncated, Unsupported][(c as usize).min(7)]
}

impl DistError {
    /// Bytes for the error agreement (sent from the failing process to all).
    pub(crate) fn encode(&self) -> Vec<u8> {
        fn text(out: &mut Vec<u8>, s: &str) {
            let s = &s.as_bytes()[..s.len().min(16 * 1024)];
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
        let mut out = Vec::new();
        match self {
            DistError::Input(e) => {
                out.push(0);
                out.push(kind_code(e.kind));
                out.extend_from_slice(&e.line.unwrap_or(u64::MAX).to_le_bytes());
                text(&mut out, &e.path.to_string_lossy());
                text(&mut out, &e.message);
            }
            DistError::Invalid(m) => {
                out.push(1);
                text(&mut out, m);
            }
            DistError::Output { path, message } => {
                out.push(2);
                text(&mut out, &path.to_string_lossy());
                text(&mut out, message);
            }
            DistError::Lpf(e) => {
                out.push(3);
                out.extend_from_slice(&e.to_wire());
            }
            DistError::Resource(m) => {
                out.push(4);
                text(&mut out, m);
            }
        }
        out
    }

    pub(crate) fn decode(b: &[u8]) -> DistError {
        let malformed = || lpf::Error::fatal("the failing process's error arrived malformed");
        let mut pos = 0usize;
        let mut byte = || {
            let x = b.get(pos).copied().unwrap_or(0);
            pos += 1;
            x
        };
        let tag = byte();
        let mut rest = &b[pos.min(b.len())..];
        let text = |rest: &mut &[u8]| -> String {
            if rest.len() < 4 {
                return String::new();
            }
            let len = (u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize).min(rest.len() - 4);
            let s = String::from_utf8_lossy(&rest[4..4 + len]).into_owned();
            *rest = &rest[4 + len..];
            s
        };
        match tag {
            0 if rest.len() >= 9 => {
                let kind = kind_of(rest[0]);
                let line = u64::from_le_bytes(rest[1..9].try_into().unwrap());
                rest = &rest[9..];
                let path = PathBuf::from(text(&mut rest));
                let message = text(&mut rest);
                DistError::Input(InputError { path, line: (line != u64::MAX).then_some(line), kind, message })
            }
            1 => DistError::Invalid(text(&mut rest)),
            2 => {
                let path = PathBuf::from(text(&mut rest));
                DistError::Output { path, message: text(&mut rest) }
            }
            3 => DistError::Lpf(lpf::Error::from_wire(rest).unwrap_or_else(malformed)),
            4 => DistError::Resource(text(&mut rest)),
            _ => DistError::Lpf(malformed()),
        }
    }
}

/// Distributed PageRank with default [`DistOptions`]. Collective.
pub fn pagerank_spmd(ctx: &mut Context, input: Input, cfg: &PageRankConfig) -> DistResult<DistributedResult> {
    pagerank_spmd_with(ctx, input, cfg, &DistOptions::default())
}

/// Distributed PageRank: loads `input`, runs the iterations, returns this process's
/// vertices with their ranks. Collective; errors are the same on every process.
///
/// Resources: the call resizes the context's memory register and message queue for
/// its own needs (8 slots + 2 for its collectives; 4p + 4 + 2(p - 1) messages) and
/// deregisters everything it registered before returning.
pub fn pagerank_spmd_with(ctx: &mut Context, input: Input, cfg: &PageRankConfig, opts: &DistOptions) -> DistResult<DistributedResult> {
    let on_process_0 = opts.progress && ctx.pid() == 0;
    pagerank_spmd_observed(ctx, input, cfg, opts, &mut |p: &IterationProgress| {
        if on_process_0 {
            eprintln!("{p}");
        }
    })
}

/// What every process knows after an iteration (the same on all of them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IterationProgress {
    /// 1 for the first iteration.
    pub iteration: usize,
    /// L1 change of this iteration (the stopping test's value).
    pub residual: f64,
    /// This iteration's time, and the time since the first one started (this process).
    pub seconds: f64,
    pub elapsed: f64,
}

/// The CLI's progress line: `iteration k: residual r, s s`.
impl std::fmt::Display for IterationProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "iteration {}: residual {:.6e}, {:.4} s", self.iteration, self.residual, self.seconds)
    }
}

/// As [`pagerank_spmd_with`], calling `observe` on every process after each iteration
/// (once the residual is known everywhere, before the stopping test); `opts.progress`
/// is not looked at. The call is on the iteration's path: keep it short.
pub fn pagerank_spmd_observed(
    ctx: &mut Context,
    input: Input,
    cfg: &PageRankConfig,
    opts: &DistOptions,
    observe: &mut dyn FnMut(&IterationProgress),
) -> DistResult<DistributedResult> {
    let mut comm = Comm::new(ctx)?;
    let r = run(&mut comm, input, cfg, opts, observe);
    finish(comm, r)
}

/// The entry point of a kernel on an unweighted graph: `input` loaded (an empty graph
/// is `kernel`'s error), `compute(comm, graph, threads)` run on it (threads at least 1),
/// every vertex of this process answered with its id and value, the collectives released
/// whatever happened. Collective; the same error on every process.
pub(crate) fn unweighted_kernel<T>(
    ctx: &mut Context,
    input: Input,
    threads: usize,
    kernel: &str,
    compute: impl FnOnce(&mut Comm<'_>, &Graph, usize) -> DistResult<Computed<T>>,
) -> DistResult<VertexValues<T>> {
    let mut comm = Comm::new(ctx)?;
    let r = (|| {
        let threads = threads.max(1);
        let g = Graph::from_input(&mut comm, input, threads, Weights::Ignored, kernel)?;
        let load_seconds = g.load_seconds();
        let c = compute(&mut comm, &g, threads)?;
        Ok(g.vertex_values(c, load_seconds))
    })();
    finish(comm, r)
}

/// Releases the collectives; an earlier error wins.
pub(crate) fn finish<T>(comm: Comm<'_>, r: DistResult<T>) -> DistResult<T> {
    let rel = comm.release();
    let v = r?;
    rel?;
    Ok(v)
}

fn run(
    comm: &mut Comm<'_>,
    input: Input,
    cfg: &PageRankConfig,
    opts: &DistOptions,
    observe: &mut dyn FnMut(&IterationProgress),
) -> DistResult<DistributedResult> {
    cfg.check().map_err(DistError::Invalid)?;
    let t0 = Instant::now();
    let what = input.describe();
    let (routed, user_ids) = match input.csr_path() {
        // A converted graph's in-side is the routed, deduplicated in-edges already.
        Some(path) => {
            load::check_before_loading(cfg.threads.max(1))?;
            let b = load::read_csr_block(comm, path, cfg.threads.max(1), false, true, Weights::Ignored)?;
            require_vertices(b.n, &what, "PageRank")?;
            let (ptr, src) = b.inn.expect("the in-edges were asked for");
            (build::Routed { n: b.n, lo: b.lo, ptr, src }, Some(b.labels))
        }
        None => {
            let mut raw = load::load(comm, input, cfg.threads.max(1))?;
            require_vertices(raw.n, &what, "PageRank")?;
            let user_ids = raw.labels.take();
            // PageRank needs only the in-edges: not the kernels' whole adjacency.
            (build::route_and_dedup(comm, raw)?, user_ids)
        }
    };
    let Ranked { graph: g, out, stats, load_seconds } = rank(comm, routed, cfg, opts, observe, t0)?;
    let index: Vec<u64> = g.orig.iter().map(|&v| v as u64).collect();
    let ids = match &user_ids {
        Some(u) => g.orig.iter().map(|&v| u[v as usize]).collect(),
        None => g.orig.iter().map(|&v| v as u64).collect(),
    };
    Ok(DistributedResult {
        n: g.n as u64,
        nnz: g.nnz,
        ids,
        ranks: out.ranks,
        index,
        iterations: out.iterations,
        residual: out.residual,
        converged: out.residual < cfg.tol,
        load_seconds,
        iteration_seconds: out.seconds,
        exchange: stats,
    })
}

/// PageRank's run on routed, deduplicated in-edges.
pub(crate) struct Ranked {
    /// The renumbered graph: `orig[k]` is the vertex number of local row k.
    pub graph: build::LocalGraph,
    pub out: iterate::IterOut,
    pub(crate) stats: ExchangeStats,
    /// From `t0` to the end of the set-up (renumbering, distribution, exchange plan).
    pub load_seconds: f64,
}

/// Renumbers `routed` by out-degree, sets up the exchange and iterates: PageRank's
/// steps 3-5, the same for an input and for a loaded graph. Collective.
pub(crate) fn rank(
    comm: &mut Comm<'_>,
    routed: build::Routed,
    cfg: &PageRankConfig,
    opts: &DistOptions,
    observe: &mut dyn FnMut(&IterationProgress),
    t0: Instant,
) -> DistResult<Ranked> {
    let mut g = build::renumber_and_distribute(comm, routed)?;
    let mut it = iterate::Iteration::setup(comm, &mut g, opts, cfg.threads)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let out = it.run(comm, &g, cfg, observe);
    let stats = it.stats;
    it.release(comm)?;
    Ok(Ranked { graph: g, out: out?, stats, load_seconds })
}

/// Runs `body` on `p` LPF processes (threads over shared memory), each with its own
/// communicator; every process's outcome, in pid order.
#[cfg(test)]
pub(crate) fn on_processes<T: Send>(p: usize, body: impl Fn(&mut Comm<'_>) -> DistResult<T> + Sync) -> Vec<DistResult<T>> {
    use lpf::{Args, Root};
    let out: std::sync::Mutex<Vec<Option<DistResult<T>>>> = std::sync::Mutex::new((0..p).map(|_| None).collect());
    let spmd = |ctx: &mut Context, _args: Args| {
        let me = ctx.pid() as usize;
        let r = Comm::new(ctx).and_then(|mut comm| {
            let r = body(&mut comm);
            finish(comm, r)
        });
        out.lock().unwrap()[me] = Some(r);
    };
    Root::with_max_procs(p as u32).exec(p as u32, &spmd, Args::none()).expect("the LPF run");
    out.into_inner().unwrap().into_iter().map(|r| r.expect("every process reports")).collect()
}
