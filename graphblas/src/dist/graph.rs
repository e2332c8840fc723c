//! A loaded graph: the input numbered, routed and built once, any kernel run on it.
//!
//! [`Graph::load`] takes each process's part of a graph whose vertices are named by
//! *keys*, integers (`i64`) or byte strings, and numbers them inside the LPF job:
//! integral ids map to `u64` by flipping the sign bit (so `u64` order is `i64` order)
//! and go through the dense relabelling ([`super::relabel`]); byte strings go through
//! the ordered dictionary ([`super::keys`]). Either way the numbers `0..n` follow the
//! ids' order, so "the smallest vertex of a component" is the smallest id. The graph
//! keeps what the kernels need — this process's in- and out-adjacency ([`Adjacency`]),
//! the weighted out-edges when the input had weights, and the ids (the ascending labels,
//! or this process's part of the dictionary) — and none of the raw keys.
//!
//! The kernels ([`Graph::bfs`], [`Graph::wcc`], [`Graph::cdlp`], [`Graph::sssp`],
//! [`Graph::lcc`], [`Graph::pagerank`], [`Graph::bfs_paths`] on vertex marks from
//! [`Graph::load_with`] or [`Graph::marks`]) run on a `&Graph`, collectively; each process
//! answers for its block of vertices (even blocks of the numbers, so ascending ids, the
//! blocks in pid order), with ids, and WCC's and CDLP's values are ids too. The entry
//! points over an [`Input`] (`bfs_spmd`, ...) load a graph of the same kind (labelled by
//! the input's `u64` ids) and run the same kernel code on it.
//!
//! A graph is plain memory, not tied to the LPF context that loaded it: a later call on
//! a context of the same processes (same p, same pid of each part) may run kernels on it
//! (what a resident graph needs: [`Graph::native_bytes`] says what it holds).

use super::adjacency::{build, Adjacency, VertexValues};
use super::build::{even_owner, even_start, Routed};
use super::comm::{try_filled, try_zeroed, Comm};
use super::iterate::ExchangeStats;
use super::graphx_pagerank::GraphxPageRankConfig;
use super::keys::{forward_numbers_of, keys_of, number_byte_keys, numbers_of, ByteKeys, KeyDictionary, Numbered};
use super::load::{check_before_loading, keyed_weight_error, load_with, read_csr_block, CsrBlock, RawEdges, Weights};
use super::marks::{gather, send_to_owners, VertexMarks};
use super::progress::Observer;
use super::relabel::relabel_with_extra;
use super::sssp::weighted_out_edges;
use crate::algorithms::sssp::{edges_in_u32, Edge};
use super::{finish, require_vertices, vertex_of, DistError, DistOptions, DistResult, Input, IterationProgress};
use crate::algorithms::pagerank::PageRankConfig;
use crate::matrix::Matrix;
use lpf::Context;
use std::fmt;
use std::time::Instant;

/// Flipping the top bit maps `i64` order onto `u64` order.
const SIGN: u64 = 1 << 63;

/// Vertex ids of one kind, in one buffer: integers, or byte strings (Spark's strings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VertexIds {
    Integral(Vec<i64>),
    Bytes(ByteKeys),
}

impl VertexIds {
    pub fn len(&self) -> usize {
        match self {
            VertexIds::Integral(v) => v.len(),
            VertexIds::Bytes(k) => k.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn kind(&self) -> u64 {
        match self {
            VertexIds::Integral(_) => 1,
            VertexIds::Bytes(_) => 2,
        }
    }

    /// Id `i`, for messages.
    fn show(&self, i: usize) -> String {
        match self {
            VertexIds::Integral(v) => v[i].to_string(),
            VertexIds::Bytes(k) => quoted(k.get(i)),
        }
    }

    /// The ids `i` with `keep(i)`, in their order.
    fn select(&self, keep: impl Fn(usize) -> bool) -> VertexIds {
        match self {
            VertexIds::Integral(v) => VertexIds::Integral(v.iter().enumerate().filter(|&(i, _)| keep(i)).map(|(_, &x)| x).collect()),
            VertexIds::Bytes(k) => {
                let mut out = ByteKeys::new();
                (0..k.len()).filter(|&i| keep(i)).for_each(|i| out.push(k.get(i)));
                VertexIds::Bytes(out)
            }
        }
    }
}

/// One vertex id (a kernel's source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VertexId {
    Integral(i64),
    Bytes(Vec<u8>),
}

/// Integers as written; byte strings as lossy UTF-8 in single quotes.
impl fmt::Display for VertexId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VertexId::Integral(i) => write!(f, "{i}"),
            VertexId::Bytes(b) => write!(f, "{}", quoted(b)),
        }
    }
}

pub(crate) fn quoted(b: &[u8]) -> String {
    format!("'{}'", String::from_utf8_lossy(b))
}

/// This process's part of a keyed graph: its edges and the vertex ids it names besides
/// them (vertices with or without edges). Every process passes the same kind of ids and
/// either all or none pass weights.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedEdges {
    /// The edges' endpoints: the source of edge k at `2k`, its target at `2k + 1`.
    pub ends: VertexIds,
    /// Vertex ids that are vertices whether or not an edge names them.
    pub vertices: VertexIds,
    /// The weight of edge k (SSSP): numbers >= 0; a negative or NaN one is an error
    /// naming the edge.
    pub weights: Option<Vec<f64>>,
}

/// What a load does with the vertex ids of [`KeyedEdges::vertices`] besides making them
/// vertices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VertexSection {
    /// One mark per vertex id ([`super::FROM`], [`super::TO`]; other bits are ignored):
    /// the marks of the call the load serves ([`Graph::bfs_paths`]), not kept with the
    /// graph. An id listed twice has the OR of its marks.
    pub marks: Option<Vec<u8>>,
    /// The vertex ids must be distinct over all processes: an id listed twice (by one
    /// process or by two) fails the load with `vertex id X appears more than once`,
    /// naming the smallest such id.
    pub unique: bool,
}

/// GraphFrames' BFS paths ([`Graph::bfs_paths`]): the depths and whether a path was found.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedPaths {
    /// Found: the depth of every vertex on a shortest path from a `FROM` vertex to a `TO`
    /// vertex (`rounds` = L, their length), the others `i64::MAX`; not found: `i64::MAX`
    /// everywhere, `rounds` the deepest level
    /// searched.
    pub depths: KeyedValues<Vec<i64>>,
    pub found: bool,
}

/// How the vertex numbers map back to ids.
enum Names {
    /// `labels[k]`: the label of vertex k, ascending; `signed`: `i64` ids with the sign
    /// bit flipped (a keyed graph), else the input's `u64` ids.
    Labels { labels: Vec<u64>, signed: bool },
    /// Byte-string ids: this process's part of the dictionary.
    Bytes(KeyDictionary),
}

/// A graph loaded on the processes of an LPF job: this process's part (see the module
/// doc). Kernels on it are collective over the same processes.
pub struct Graph {
    /// What errors call the graph ("the given edges", a file's path).
    what: String,
    n: usize,
    nnz: u64,
    /// This process's block of vertex numbers.
    lo: usize,
    hi: usize,
    /// Absent for an empty graph (and for the input path of SSSP, which needs none).
    adj: Option<Adjacency>,
    /// Rows `lo..hi` of the weighted adjacency, parallel edges at their smallest weight.
    weighted: Option<Matrix<f64>>,
    /// `weighted`'s out-edges with their weights as `u32`, target and weight side by
    /// side, if every weight is an integer below 2^32, and the largest weight
    /// ([`edges_in_u32`]), made as the graph is loaded: SSSP runs on `u32` distances
    /// and weights from them, and a graph in GAP's form holds its integer weights as
    /// such (converting them in the kernel cost SSSP 15-20% of its time on kron18 and
    /// kron20). `None` if the graph was built without them.
    edges_u32: Option<(Option<Vec<Edge<u32>>>, f64)>,
    names: Names,
    load_seconds: f64,
    id_seconds: f64,
}

// A resident graph is kept between calls, possibly handed between threads.
const _: fn() = || {
    fn resident<T: Send + Sync>() {}
    resident::<Graph>();
};

/// One process's share of a kernel's result on a keyed graph.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedValues<V> {
    /// Vertices and edges (duplicates once) of the whole graph.
    pub n: u64,
    pub nnz: u64,
    /// The ids of this process's block of vertices, ascending; the blocks of the
    /// processes follow each other in pid order, and together hold every vertex once.
    pub ids: VertexIds,
    /// The value of `ids[k]`: BFS depth (`i64::MAX` unreachable), SSSP distance
    /// (infinity unreachable), LCC coefficient, PageRank rank; WCC the smallest id of
    /// the component, CDLP the label's id.
    pub values: V,
    /// BFS levels, WCC rounds, CDLP or PageRank iterations, SSSP delta-stepping
    /// supersteps; LCC 1.
    pub rounds: usize,
    /// The kernel, seconds (this process).
    pub compute_seconds: f64,
    /// Translating the results back to ids, seconds (this process).
    pub id_seconds: f64,
}

impl<T> KeyedValues<Vec<T>> {
    /// Only the vertices whose value `keep`s (e.g. a sparse reply: the vertices a BFS
    /// path runs through).
    pub fn retain(self, keep: impl Fn(&T) -> bool) -> KeyedValues<Vec<T>> {
        let kept: Vec<bool> = self.values.iter().map(keep).collect();
        KeyedValues {
            ids: self.ids.select(|i| kept[i]),
            values: self.values.into_iter().zip(&kept).filter(|&(_, &k)| k).map(|(v, _)| v).collect(),
            ..self
        }
    }
}

/// PageRank on a keyed graph: the ranks and how the iteration ended.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedRanks {
    /// The rank of every vertex of the block; over all processes they sum to 1.
    pub ranks: KeyedValues<Vec<f64>>,
    /// L1 change of the last iteration.
    pub residual: f64,
    pub converged: bool,
    pub exchange: ExchangeStats,
}

/// GraphX PageRank on a keyed graph ([`Graph::graphx_pagerank`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GraphxRanks {
    /// `width` ranks per vertex of the block, vertex by vertex (source k's at k).
    pub ranks: KeyedValues<Vec<f64>>,
    /// The number of sources, or 1 without sources.
    pub width: usize,
    /// The largest per-vertex change of the last iteration (before the final scaling).
    pub residual: f64,
    /// The tolerance was > 0 and the change fell below it.
    pub converged: bool,
}

/// A kernel's values over this process's block, in vertex numbers.
pub(crate) struct Computed<T> {
    pub values: Vec<T>,
    pub rounds: usize,
    pub seconds: f64,
}

impl Graph {
    /// Numbers the ids of every process's `edges` (ends and extra vertices), routes and
    /// builds the graph. Collective; the same error on every process. `threads` is
    /// checked as every kernel checks it.
    pub fn load(ctx: &mut Context, edges: KeyedEdges, threads: usize) -> DistResult<Graph> {
        Ok(Graph::load_with(ctx, edges, VertexSection::default(), threads)?.0)
    }

    /// [`Graph::load`], and what `section` asks of the vertex ids: their marks (this
    /// process's block of them; `Some` when `section.marks` is), their distinctness.
    /// Collective; the same error on every process.
    pub fn load_with(ctx: &mut Context, edges: KeyedEdges, section: VertexSection, threads: usize) -> DistResult<(Graph, Option<VertexMarks>)> {
        let mut comm = Comm::new(ctx)?;
        let r = Graph::load_keyed(&mut comm, edges, section, threads);
        finish(comm, r)
    }

    fn load_keyed(comm: &mut Comm<'_>, edges: KeyedEdges, section: VertexSection, threads: usize) -> DistResult<(Graph, Option<VertexMarks>)> {
        crate::parallel::check_thread_count(threads)?;
        crate::settings::Settings::from_env()?;
        let t0 = Instant::now();
        let what = "the given edges".to_string();
        let me = comm.me;
        let KeyedEdges { ends, vertices, weights } = edges;
        // Every process the same kind of ids, weights everywhere or nowhere, and the same
        // asked of the vertex ids.
        let word = ends.kind() | (weights.is_some() as u64) << 2;
        let asked = (section.marks.is_some() as u64) | (section.unique as u64) << 1;
        let words = comm.allgather_u64(word | asked << 3)?;
        if let Some(q) = words.iter().position(|&w| w >> 3 != words[0] >> 3) {
            let say = |w: u64| format!("marks {}, distinct ids {}", w >> 3 & 1 != 0, w >> 4 & 1 != 0);
            return Err(DistError::Invalid(format!(
                "process {q} asks for {}, process 0 for {}: every process must ask the same of the vertex ids",
                say(words[q]),
                say(words[0])
            )));
        }
        if let Some(q) = words.iter().position(|&w| w != words[0]) {
            let say = |w: u64| {
                let kind = if w & 3 == 1 { "integer ids" } else { "byte-string ids" };
                format!("{kind} {} weights", if w & 4 != 0 { "with" } else { "without" })
            };
            return Err(DistError::Invalid(format!(
                "process {q} gives {}, process 0 gives {}: every process must give the same kind of ids, with weights on all or none",
                say(words[q]),
                say(words[0])
            )));
        }
        let check = (|| {
            if ends.len() % 2 != 0 {
                return Err(DistError::Invalid(format!("process {me} gives {} edge ends: two per edge", ends.len())));
            }
            if ends.kind() != vertices.kind() {
                return Err(DistError::Invalid(format!("process {me} gives edges and vertices with ids of different kinds")));
            }
            if let Some(marks) = section.marks.as_ref().filter(|m| m.len() != vertices.len()) {
                return Err(DistError::Invalid(format!("process {me} gives {} vertex ids but {} marks: one mark per vertex id", vertices.len(), marks.len())));
            }
            match &weights {
                Some(w) => keyed_weight_error(me, ends.len() / 2, w, |k| format!("({}, {})", ends.show(2 * k), ends.show(2 * k + 1)))
                    .map_or(Ok(()), Err),
                None => Ok(()),
            }
        })();
        comm.agree(check)?;
        let m = ends.len() / 2;
        let (names, n, src, dst, listed) = match (ends, vertices) {
            (VertexIds::Integral(ends), VertexIds::Integral(extra)) => {
                let flip = |x: &i64| *x as u64 ^ SIGN;
                let flipped = comm.agree((|| {
                    let mut src = try_zeroed::<u64>(m, me, "the edges' source ids")?;
                    let mut dst = try_zeroed::<u64>(m, me, "the edges' target ids")?;
                    for (k, e) in ends.chunks_exact(2).enumerate() {
                        src[k] = flip(&e[0]);
                        dst[k] = flip(&e[1]);
                    }
                    let mut vertices = try_zeroed::<u64>(extra.len(), me, "the vertex ids")?;
                    for (v, x) in vertices.iter_mut().zip(&extra) {
                        *v = flip(x);
                    }
                    Ok((src, dst, vertices))
                })())?;
                drop((ends, extra));
                let (src, dst, extra) = flipped;
                let r = relabel_with_extra(comm, &src, &dst, &extra)?;
                (Names::Labels { labels: r.labels, signed: true }, r.n, r.src, r.dst, r.extra)
            }
            (VertexIds::Bytes(ends), VertexIds::Bytes(extra)) => {
                let Numbered { dict, ends: numbers, extra: listed } = number_byte_keys(comm, &ends, &extra)?;
                drop((ends, extra));
                let split = comm.agree((|| {
                    let mut src = try_zeroed::<u32>(m, me, "the edges' sources in dense numbers")?;
                    let mut dst = try_zeroed::<u32>(m, me, "the edges' targets in dense numbers")?;
                    for (k, e) in numbers.chunks_exact(2).enumerate() {
                        src[k] = e[0];
                        dst[k] = e[1];
                    }
                    Ok((src, dst))
                })())?;
                let n = dict.n as usize;
                (Names::Bytes(dict), n, split.0, split.1, listed)
            }
            _ => unreachable!("the kinds were checked to agree"),
        };
        let marks = if section.marks.is_some() || section.unique {
            let received = send_to_owners(comm, n, &listed, section.marks.as_deref(), section.unique)?;
            drop(listed);
            let (marks, twice) = gather(comm, n, &received)?;
            if section.unique {
                refuse_twice(comm, &names, twice)?;
            }
            section.marks.is_some().then_some(marks)
        } else {
            None
        };
        let id_seconds = t0.elapsed().as_secs_f64();
        let raw = RawEdges { n, src, dst, labels: None, weights };
        Ok((Graph::build(comm, raw, what, names, true, t0, id_seconds)?, marks))
    }

    /// The graph of an [`Input`] (labelled by its ids), with the adjacency when
    /// `adjacency` and the weighted out-edges when `weights` asks for them; an empty
    /// graph is `kernel`'s error. Collective.
    pub(crate) fn from_input(
        comm: &mut Comm<'_>,
        input: Input,
        threads: usize,
        weights: Weights,
        kernel: &str,
    ) -> DistResult<Graph> {
        Graph::from_input_with(comm, input, threads, weights, weights == Weights::Ignored, kernel)
    }

    /// [`Graph::from_input`] with the adjacency built or not as `adjacency` says.
    pub(crate) fn from_input_with(
        comm: &mut Comm<'_>,
        input: Input,
        threads: usize,
        weights: Weights,
        adjacency: bool,
        kernel: &str,
    ) -> DistResult<Graph> {
        let t0 = Instant::now();
        let what = input.describe();
        let g = if let Some(path) = input.csr_path() {
            Graph::from_csr(comm, path, threads, weights, adjacency, kernel, what, t0)?
        } else {
            let mut raw = load_with(comm, input, threads, weights)?;
            require_vertices(raw.n, &what, kernel)?;
            let labels = raw.labels.take().expect("the loader names every vertex");
            Graph::build(comm, raw, what, Names::Labels { labels, signed: false }, adjacency, t0, 0.0)?
        };
        g.with_edges_in_u32(comm, threads, t0)
    }

    /// The graph with [`Graph::edges_u32`] made if it has weights (part of the load
    /// seconds, counted from `t0`). Collective.
    fn with_edges_in_u32(mut self, comm: &mut Comm<'_>, threads: usize, t0: Instant) -> DistResult<Graph> {
        let made = self.weighted.as_ref().map(|w| edges_in_u32(w, threads)).transpose();
        self.edges_u32 = comm.agree(made.map_err(DistError::from))?;
        self.load_seconds = t0.elapsed().as_secs_f64();
        Ok(self)
    }

    /// A converted graph ([`super::Format::Csr`]): this block's rows read as they are
    /// stored, nothing routed, sorted or deduplicated.
    #[allow(clippy::too_many_arguments)]
    fn from_csr(
        comm: &mut Comm<'_>,
        path: &std::path::Path,
        threads: usize,
        weights: Weights,
        adjacency: bool,
        kernel: &str,
        what: String,
        t0: Instant,
    ) -> DistResult<Graph> {
        check_before_loading(threads)?;
        let CsrBlock { n, m, lo, hi, labels, out, inn, weights: w } = read_csr_block(comm, path, threads, adjacency, adjacency, weights)?;
        require_vertices(n, &what, kernel)?;
        let (rows, me) = (hi - lo, comm.me);
        let made = (|| -> DistResult<(Option<Adjacency>, Option<Matrix<f64>>)> {
            let mut out = out;
            let weighted = match w {
                Some(w) => {
                    let (ptr, idx) = match (&out, adjacency) {
                        (Some((ptr, idx)), true) => (ptr.clone(), idx.clone()),
                        _ => out.take().expect("the out-edges are read with the weights"),
                    };
                    Some(Matrix::from_checked_csr_parts(rows, n, ptr, idx, w)?)
                }
                None => None,
            };
            let adj = match (out, inn) {
                (Some((out_ptr, out_idx)), Some((in_ptr, in_idx))) if adjacency => {
                    let in_vals = try_filled(in_idx.len(), true, me, "the in-edge pattern")?;
                    let out_vals = try_filled(out_idx.len(), true, me, "the out-edge pattern")?;
                    // The rows were checked as they were read.
                    let inn = Matrix::from_checked_csr_parts(rows, n, in_ptr, in_idx, in_vals)?;
                    let out = Matrix::from_checked_csr_parts(rows, n, out_ptr, out_idx, out_vals)?;
                    Some(Adjacency { n, nnz: m, lo, inn, out })
                }
                _ => None,
            };
            Ok((adj, weighted))
        })();
        let (adj, weighted) = comm.agree(made)?;
        let names = Names::Labels { labels, signed: false };
        Ok(Graph { what, n, nnz: m, lo, hi, adj, weighted, edges_u32: None, names, load_seconds: t0.elapsed().as_secs_f64(), id_seconds: 0.0 })
    }

    fn build(
        comm: &mut Comm<'_>,
        mut raw: RawEdges,
        what: String,
        names: Names,
        adjacency: bool,
        t0: Instant,
        id_seconds: f64,
    ) -> DistResult<Graph> {
        let (p, me, n) = (comm.p, comm.me, raw.n);
        let (lo, hi) = (even_start(me, n, p), even_start(me + 1, n, p));
        let (mut adj, mut weighted, mut nnz) = (None, None, 0);
        if n > 0 {
            if let Some(w) = raw.weights.take() {
                let out = weighted_out_edges(comm, n, &raw.src, &raw.dst, w, lo, hi)?;
                nnz = comm.sum_u64(out.nvals() as u64)?;
                weighted = Some(out);
            }
            if adjacency {
                let a = build(comm, raw)?;
                nnz = a.nnz;
                adj = Some(a);
            }
        }
        Ok(Graph { what, n, nnz, lo, hi, adj, weighted, edges_u32: None, names, load_seconds: t0.elapsed().as_secs_f64(), id_seconds })
    }

    /// Vertices of the whole graph.
    pub fn n(&self) -> u64 {
        self.n as u64
    }

    /// Edges of the whole graph (duplicates once).
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Whether the graph has edge weights (SSSP runs on it).
    pub fn has_weights(&self) -> bool {
        self.weighted.is_some()
    }

    /// Loading (numbering, routing, building), seconds (this process).
    pub fn load_seconds(&self) -> f64 {
        self.load_seconds
    }

    /// The numbering of the ids, seconds (this process; part of the load seconds).
    pub fn id_seconds(&self) -> f64 {
        self.id_seconds
    }

    /// The bytes this process's part holds (the capacities of its vectors).
    pub fn native_bytes(&self) -> usize {
        let adj = self.adj.as_ref().map_or(0, |a| a.inn.capacity_bytes() + a.out.capacity_bytes());
        let weighted = self.weighted.as_ref().map_or(0, Matrix::capacity_bytes);
        let weighted = weighted + self.edges_u32.as_ref().and_then(|w| w.0.as_ref()).map_or(0, |w| w.capacity() * std::mem::size_of::<Edge<u32>>());
        let names = match &self.names {
            Names::Labels { labels, .. } => labels.capacity() * 8,
            Names::Bytes(dict) => dict.capacity_bytes(),
        };
        std::mem::size_of::<Graph>() + self.what.capacity() + adj + weighted + names
    }

    pub(crate) fn adjacency(&self) -> &Adjacency {
        self.adj.as_ref().expect("kernels that read the adjacency run on a non-empty graph loaded with it")
    }

    /// The input path: the id of every vertex number, ascending.
    pub(crate) fn labels(&self) -> &[u64] {
        let Names::Labels { labels, .. } = &self.names else { unreachable!("input graphs are labelled") };
        labels
    }

    /// The weighted out-edges of the block, if loaded with them.
    pub(crate) fn weighted_edges(&self) -> Option<&Matrix<f64>> {
        self.weighted.as_ref()
    }

    pub(crate) fn block(&self) -> (usize, usize) {
        (self.lo, self.hi)
    }

    /// The out-edges of [`Graph::weighted`] with `u32` weights if all are integers
    /// below 2^32, and the largest weight, if made at load ([`edges_in_u32`]).
    pub(crate) fn edges_u32(&self) -> Option<&(Option<Vec<Edge<u32>>>, f64)> {
        self.edges_u32.as_ref()
    }

    /// The weighted out-edges of the block, or the error naming `kernel`.
    pub(crate) fn weighted(&self, kernel: &str) -> DistResult<&Matrix<f64>> {
        self.weighted.as_ref().ok_or_else(|| {
            DistError::Invalid(format!("{}: {kernel} needs edge weights, and the graph was loaded without them", self.what))
        })
    }

    /// The empty graph's error, naming `kernel`.
    pub(crate) fn require_vertices(&self, kernel: &str) -> DistResult<()> {
        require_vertices(self.n, &self.what, kernel)
    }

    /// The input path: the number of the vertex with label `id`; `role` names it.
    pub(crate) fn label_number(&self, id: u64, role: &str) -> DistResult<usize> {
        match &self.names {
            Names::Labels { labels, .. } => vertex_of(labels, id, &self.what, role),
            Names::Bytes(_) => unreachable!("input graphs are labelled"),
        }
    }

    /// The input path: this block's values with the input's ids.
    pub(crate) fn vertex_values<T>(&self, c: Computed<T>, load_seconds: f64) -> VertexValues<T> {
        let Names::Labels { labels, .. } = &self.names else { unreachable!("input graphs are labelled") };
        VertexValues {
            n: self.n as u64,
            nnz: self.nnz,
            ids: labels[self.lo..self.hi].to_vec(),
            values: c.values,
            first_index: self.lo as u64,
            rounds: c.rounds,
            load_seconds,
            compute_seconds: c.seconds,
        }
    }

    /// The input path: a result whose values are vertex numbers, with their labels
    /// (ids) instead.
    pub(crate) fn labelled(&self, c: Computed<u32>) -> Computed<u64> {
        let Names::Labels { labels, .. } = &self.names else { unreachable!("input graphs are labelled") };
        Computed { values: c.values.iter().map(|&k| labels[k as usize]).collect(), rounds: c.rounds, seconds: c.seconds }
    }

    /// The number of the vertex `id` (every process passes the same), or the error
    /// naming it as `kernel`'s source, on every process. Collective.
    fn source(&self, comm: &mut Comm<'_>, id: &VertexId, kernel: &str) -> DistResult<usize> {
        Ok(self.sources(comm, std::slice::from_ref(id), kernel, "source")?[0])
    }

    /// The numbers of the vertices `ids` (every process passes the same list), or the
    /// error naming the first id that is no vertex (`the {kernel} {role} X is not a
    /// vertex of the graph`), or else the first given twice (`the {kernel} {role} list
    /// names X twice`), on every process. Collective.
    fn sources(&self, comm: &mut Comm<'_>, ids: &[VertexId], kernel: &str, role: &str) -> DistResult<Vec<usize>> {
        self.require_vertices(kernel)?;
        let not_a_vertex = |id: &VertexId| DistError::Invalid(format!("the {kernel} {role} {id} is not a vertex of the graph"));
        let wrong_kind = |id: &VertexId, kinds: &str| DistError::Invalid(format!("the {kernel} {role} {id} is {kinds}"));
        let found: Vec<Option<usize>> = match &self.names {
            Names::Labels { labels, signed } => ids
                .iter()
                .map(|id| match id {
                    VertexId::Integral(i) => {
                        let label = if *signed { *i as u64 ^ SIGN } else { *i as u64 };
                        Ok(labels.binary_search(&label).ok())
                    }
                    VertexId::Bytes(_) => Err(wrong_kind(id, "a byte string, but the graph's vertex ids are integers")),
                })
                .collect::<DistResult<_>>()?,
            Names::Bytes(dict) => {
                let keys = ids
                    .iter()
                    .map(|id| match id {
                        VertexId::Bytes(b) => Ok(b.as_slice()),
                        VertexId::Integral(_) => Err(wrong_kind(id, "an integer, but the graph's vertex ids are byte strings")),
                    })
                    .collect::<DistResult<Vec<&[u8]>>>()?;
                numbers_of(comm, dict, &keys)?.into_iter().map(|k| k.map(|k| k as usize)).collect()
            }
        };
        let numbers = found.iter().zip(ids).map(|(k, id)| k.ok_or_else(|| not_a_vertex(id))).collect::<DistResult<Vec<usize>>>()?;
        let mut seen = std::collections::HashSet::with_capacity(numbers.len());
        if let Some(twice) = numbers.iter().position(|k| !seen.insert(*k)) {
            return Err(DistError::Invalid(format!("the {kernel} {role} list names {} twice", ids[twice])));
        }
        Ok(numbers)
    }

    /// The ids of vertex numbers (each below n), in order. Collective.
    fn ids_of(&self, comm: &mut Comm<'_>, numbers: &[u32]) -> DistResult<VertexIds> {
        Ok(match &self.names {
            Names::Labels { labels, signed } => {
                let flip = if *signed { SIGN } else { 0 };
                VertexIds::Integral(numbers.iter().map(|&k| (labels[k as usize] ^ flip) as i64).collect())
            }
            Names::Bytes(dict) => VertexIds::Bytes(keys_of(comm, dict, numbers)?),
        })
    }

    /// A result of this block with ids: `values` as they are. Collective.
    fn keyed<T>(&self, comm: &mut Comm<'_>, c: Computed<T>) -> DistResult<KeyedValues<Vec<T>>> {
        self.with_ids(comm, c.values, c.rounds, c.seconds, Instant::now())
    }

    /// A result of this block whose values are vertex numbers (WCC, CDLP), both
    /// translated to ids: the distinct numbers of the block are looked up once.
    fn keyed_labels(&self, comm: &mut Comm<'_>, c: Computed<u32>) -> DistResult<KeyedValues<VertexIds>> {
        let t = Instant::now();
        let mut distinct = c.values.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let of_distinct = self.ids_of(comm, &distinct)?;
        let at = |k: &u32| distinct.binary_search(k).expect("every value is among the distinct ones");
        let values = match &of_distinct {
            VertexIds::Integral(ids) => VertexIds::Integral(c.values.iter().map(|k| ids[at(k)]).collect()),
            VertexIds::Bytes(keys) => {
                let mut out = ByteKeys::new();
                for k in &c.values {
                    out.push(keys.get(at(k)));
                }
                VertexIds::Bytes(out)
            }
        };
        drop(of_distinct);
        self.with_ids(comm, values, c.rounds, c.seconds, t)
    }

    /// A result of this block whose values are vertex numbers, as `i64` (the positions
    /// of the labels' ids in the ascending order of all ids). Collective.
    fn keyed_numbers(&self, comm: &mut Comm<'_>, c: Computed<u32>) -> DistResult<KeyedValues<Vec<i64>>> {
        let values = c.values.iter().map(|&k| k as i64).collect();
        self.with_ids(comm, values, c.rounds, c.seconds, Instant::now())
    }

    /// This block's ids with `values`; `t`: when the translation to ids started.
    fn with_ids<V>(&self, comm: &mut Comm<'_>, values: V, rounds: usize, seconds: f64, t: Instant) -> DistResult<KeyedValues<V>> {
        let block: Vec<u32> = (self.lo as u32..self.hi as u32).collect();
        let ids = self.ids_of(comm, &block)?;
        Ok(KeyedValues {
            n: self.n as u64,
            nnz: self.nnz,
            ids,
            values,
            rounds,
            compute_seconds: seconds,
            id_seconds: t.elapsed().as_secs_f64(),
        })
    }

    /// Breadth-first search from `source`: the depth of every vertex (`i64::MAX` where
    /// the source does not lead). Collective; the same result or error everywhere.
    pub fn bfs(&self, ctx: &mut Context, source: &VertexId, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            let s = g.source(comm, source, "BFS")?;
            let c = super::bfs::compute(comm, g, s, threads.max(1), crate::ops::Direction::Auto, observe)?;
            g.keyed(comm, c)
        })
    }

    /// Weakly connected components: every vertex with the smallest id of its component.
    pub fn wcc(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<VertexIds>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("WCC")?;
            let c = super::wcc::compute(comm, g, threads.max(1), observe)?;
            g.keyed_labels(comm, c)
        })
    }

    /// Label propagation for `iterations` iterations: every vertex with its label's id.
    pub fn cdlp(&self, ctx: &mut Context, iterations: usize, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<VertexIds>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("CDLP")?;
            let c = super::cdlp::compute(comm, g, iterations, threads.max(1), observe)?;
            g.keyed_labels(comm, c)
        })
    }

    /// Weakly connected components as vertex numbers: every vertex with the position of
    /// its component's smallest id in the ascending order of all ids (0..n).
    pub fn wcc_numbers(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("WCC")?;
            let c = super::wcc::compute(comm, g, threads.max(1), observe)?;
            g.keyed_numbers(comm, c)
        })
    }

    /// Label propagation as vertex numbers: every vertex with the position of its
    /// label's id in the ascending order of all ids.
    pub fn cdlp_numbers(&self, ctx: &mut Context, iterations: usize, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("CDLP")?;
            let c = super::cdlp::compute(comm, g, iterations, threads.max(1), observe)?;
            g.keyed_numbers(comm, c)
        })
    }

    /// Strongly connected components over the directed edges: every vertex with the
    /// smallest id of its SCC (see [`super::scc_spmd`]).
    pub fn scc(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<VertexIds>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("SCC")?;
            let c = super::scc::compute(comm, g, threads.max(1), observe)?;
            g.keyed_labels(comm, c)
        })
    }

    /// As [`Graph::scc`], as vertex numbers: the position of the SCC's smallest id in the
    /// ascending order of all ids.
    pub fn scc_numbers(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("SCC")?;
            let c = super::scc::compute(comm, g, threads.max(1), observe)?;
            g.keyed_numbers(comm, c)
        })
    }

    /// The number of triangles at every vertex of the undirected simple graph (see
    /// [`super::triangles_spmd`]).
    pub fn triangles(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("triangle count")?;
            let c = super::triangles::compute(comm, g, threads.max(1), observe)?;
            g.keyed(comm, c)
        })
    }

    /// The coreness of every vertex of the undirected simple graph (see
    /// [`super::kcore_spmd`]).
    pub fn kcore(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("k-core")?;
            let c = super::kcore::compute(comm, g, threads.max(1), observe)?;
            g.keyed(comm, c)
        })
    }

    /// A maximal independent set of the undirected simple graph for `seed`: 1 in the
    /// set, 0 not; the same set for the same seed and graph on any number of processes
    /// and threads (see [`super::mis_spmd`]).
    pub fn mis(&self, ctx: &mut Context, seed: i64, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("MIS")?;
            let c = super::mis::compute(comm, g, seed, threads.max(1), observe)?;
            g.keyed(comm, c)
        })
    }

    /// Shortest paths from `source` over the weights (infinity where it does not lead);
    /// a graph loaded without weights is an error.
    pub fn sssp(&self, ctx: &mut Context, source: &VertexId, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<f64>>> {
        self.collective(ctx, threads, |g, comm| {
            let s = g.source(comm, source, "SSSP")?;
            let c = super::sssp::compute(comm, g, s, threads.max(1), None, observe)?;
            g.keyed(comm, c)
        })
    }

    /// Local clustering coefficients.
    pub fn lcc(&self, ctx: &mut Context, threads: usize, observe: Observer<'_>) -> DistResult<KeyedValues<Vec<f64>>> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("LCC")?;
            let c = super::lcc::compute(comm, g, threads.max(1), observe)?;
            g.keyed(comm, c)
        })
    }

    /// PageRank over the graph's deduplicated edges, as [`super::pagerank_spmd`] on
    /// numbered edges: every vertex (isolated ones too) holds rank, starting at 1/n.
    /// `observe` sees every iteration on every process.
    pub fn pagerank(
        &self,
        ctx: &mut Context,
        cfg: &PageRankConfig,
        opts: &DistOptions,
        observe: &mut dyn FnMut(&IterationProgress),
    ) -> DistResult<KeyedRanks> {
        self.collective(ctx, cfg.threads, |g, comm| {
            cfg.check().map_err(DistError::Invalid)?;
            g.require_vertices("PageRank")?;
            let t0 = Instant::now();
            let inn = g.adjacency().inn.csr();
            let routed = comm.agree((|| {
                let mut ptr = try_zeroed::<usize>(inn.ptr.len(), comm.me, "the in-edges for PageRank")?;
                let mut src = try_zeroed::<u32>(inn.idx.len(), comm.me, "the in-edges for PageRank")?;
                ptr.copy_from_slice(&inn.ptr);
                src.copy_from_slice(&inn.idx);
                Ok(Routed { n: g.n, lo: g.lo, ptr, src })
            })())?;
            let ranked = super::rank(comm, routed, cfg, opts, observe, t0)?;
            // The ranks of the blocks of PageRank's order to the even blocks of numbers.
            let (p, n) = (comm.p, g.n);
            let mut counts = vec![0usize; p];
            for &v in &ranked.graph.orig {
                counts[even_owner(v as usize, n, p)] += 1;
            }
            let each = |f: &mut dyn FnMut([u64; 2])| {
                for (&v, r) in ranked.graph.orig.iter().zip(&ranked.out.ranks) {
                    f([v as u64, r.to_bits()])
                }
            };
            let (send, counts) =
                super::build::bucket_counted(comm.me, ranked.graph.orig.len(), counts, each, |e| even_owner(e[0] as usize, n, p))?;
            let (got, _) = comm.alltoallv(&send, &counts)?;
            drop(send);
            let mut ranks = try_zeroed::<f64>(g.hi - g.lo, comm.me, "the ranks of the block")?;
            for e in &got {
                ranks[e[0] as usize - g.lo] = f64::from_bits(e[1]);
            }
            let converged = ranked.out.residual < cfg.tol;
            let c = Computed { values: ranks, rounds: ranked.out.iterations, seconds: t0.elapsed().as_secs_f64() };
            Ok(KeyedRanks { ranks: g.keyed(comm, c)?, residual: ranked.out.residual, converged, exchange: ranked.stats })
        })
    }

    /// The marks of listed vertex ids (`ids[i]` with `marks[i]`, this process's list) on
    /// this graph, for [`Graph::bfs_paths`]: an id that is no vertex of the graph is the
    /// error naming it; with `unique` (the same on every process), an id listed twice
    /// (over all processes) is the error of [`VertexSection::unique`]. Collective; the
    /// same error everywhere.
    pub fn marks(&self, ctx: &mut Context, ids: &VertexIds, marks: &[u8], unique: bool) -> DistResult<VertexMarks> {
        self.collective(ctx, 1, |g, comm| g.look_up_marks(comm, ids, marks, unique))
    }

    fn look_up_marks(&self, comm: &mut Comm<'_>, ids: &VertexIds, marks: &[u8], unique: bool) -> DistResult<VertexMarks> {
        let (p, me, n) = (comm.p, comm.me, self.n);
        comm.agree(match (&self.names, ids) {
            _ if ids.len() != marks.len() => {
                Err(DistError::Invalid(format!("process {me} gives {} vertex ids but {} marks: one mark per vertex id", ids.len(), marks.len())))
            }
            (Names::Labels { .. }, VertexIds::Bytes(_)) => {
                Err(DistError::Invalid("the marked vertex ids are byte strings, but the graph's vertex ids are integers".into()))
            }
            (Names::Bytes(_), VertexIds::Integral(_)) => {
                Err(DistError::Invalid("the marked vertex ids are integers, but the graph's vertex ids are byte strings".into()))
            }
            _ => Ok(()),
        })?;
        let missing = |id: String| DistError::Invalid(format!("the marked vertex {id} is not a vertex of the graph"));
        let received = match (&self.names, ids) {
            (Names::Labels { labels, signed }, VertexIds::Integral(ids)) => {
                let flip = if *signed { SIGN } else { 0 };
                let numbers = comm.agree((|| {
                    let mut numbers = try_zeroed::<u32>(ids.len(), me, "the numbers of the marked vertices")?;
                    for (k, &id) in numbers.iter_mut().zip(ids) {
                        *k = labels.binary_search(&(id as u64 ^ flip)).map_err(|_| missing(id.to_string()))? as u32;
                    }
                    Ok(numbers)
                })())?;
                send_to_owners(comm, n, &numbers, Some(marks), unique)?
            }
            (Names::Bytes(dict), VertexIds::Bytes(keys)) => {
                forward_numbers_of(comm, dict, keys, marks, |k| even_owner(k as usize, n, p), |key| missing(quoted(key)))?
            }
            _ => unreachable!("the kinds were checked to agree"),
        };
        let (marks, twice) = gather(comm, n, &received)?;
        if unique {
            refuse_twice(comm, &self.names, twice)?;
        }
        Ok(marks)
    }

    /// GraphFrames' BFS paths: a search from every vertex marked [`super::FROM`]
    /// following edges forward, level by level, that stops after the first level L
    /// reaching a vertex marked [`super::TO`] or after level `max_length` (see
    /// [`KeyedPaths`]): the depths of the vertices on its shortest paths, through which
    /// every such path runs at depths 0, 1, .., L. `marks` come from [`Graph::load_with`] or
    /// [`Graph::marks`] on this graph.
    pub fn bfs_paths(&self, ctx: &mut Context, marks: &VertexMarks, max_length: usize, threads: usize, observe: Observer<'_>) -> DistResult<KeyedPaths> {
        self.collective(ctx, threads, |g, comm| {
            g.require_vertices("BFS paths")?;
            let fits = (marks.n, marks.lo, marks.block.len()) == (g.n, g.lo, g.hi - g.lo);
            comm.agree(if fits { Ok(()) } else { Err(DistError::Invalid("the vertex marks were made for another graph".into())) })?;
            let (c, found) = super::bfs::compute_paths(comm, g, &marks.block, max_length, threads.max(1), observe)?;
            Ok(KeyedPaths { depths: g.keyed(comm, c)?, found })
        })
    }

    /// PageRank as GraphX computes it (GraphFrames' `pageRank`, personalized, and
    /// `parallelPersonalizedPageRank`; see [`super::graphx_pagerank`]): without
    /// `sources`, every vertex's rank, the ranks summing to n; with them (distinct
    /// vertices), one personalized rank per source and vertex, each source's summing
    /// to 1. `observe` sees every iteration (`iteration k, change c`: the largest
    /// per-vertex change). Collective; the same result or error everywhere.
    pub fn graphx_pagerank(
        &self,
        ctx: &mut Context,
        sources: &[VertexId],
        cfg: &GraphxPageRankConfig,
        threads: usize,
        observe: Observer<'_>,
    ) -> DistResult<GraphxRanks> {
        self.collective(ctx, threads, |g, comm| {
            cfg.check().map_err(DistError::Invalid)?;
            let numbers = g.sources(comm, sources, "PageRank", "source")?;
            let r = super::graphx_pagerank::compute(comm, g, &numbers, cfg, threads.max(1), observe)?;
            Ok(GraphxRanks { ranks: g.keyed(comm, r.computed)?, width: numbers.len().max(1), residual: r.residual, converged: r.converged })
        })
    }

    /// Hop distances to landmarks (GraphX's ShortestPaths): for every vertex v and
    /// landmark l, the fewest edges on a path v → ... → l (`undirected`: edges taken
    /// either way), 0 at l, `i64::MAX` where v does not reach l; `landmarks.len()` values
    /// per vertex, vertex by vertex. The landmarks must be distinct vertices, at least
    /// one. `observe` sees every level of every landmark's search. Collective; the same
    /// result or error everywhere.
    pub fn landmark_distances(
        &self,
        ctx: &mut Context,
        landmarks: &[VertexId],
        undirected: bool,
        threads: usize,
        observe: Observer<'_>,
    ) -> DistResult<KeyedValues<Vec<i64>>> {
        self.collective(ctx, threads, |g, comm| {
            let kernel = "shortest paths";
            if landmarks.is_empty() {
                return Err(DistError::Invalid(format!("{kernel} needs at least one landmark, got none")));
            }
            let numbers = g.sources(comm, landmarks, kernel, "landmark")?;
            let c = super::bfs::distances_to(comm, g, &numbers, undirected, threads.max(1), observe)?;
            g.keyed(comm, c)
        })
    }

    /// Runs `body` with a communicator on `ctx`, after checking `threads`.
    fn collective<T>(&self, ctx: &mut Context, threads: usize, body: impl FnOnce(&Graph, &mut Comm<'_>) -> DistResult<T>) -> DistResult<T> {
        let mut comm = Comm::new(ctx)?;
        let r = crate::parallel::check_thread_count(threads.max(1)).map_err(DistError::from).and_then(|_| body(self, &mut comm));
        finish(comm, r)
    }
}

/// The error of a vertex id listed more than once (`twice`: this block's smallest such
/// vertex number), naming the smallest over all processes, on every process; `Ok` when
/// there is none. Collective: one allreduce of a word when there is none.
fn refuse_twice(comm: &mut Comm<'_>, names: &Names, twice: Option<u32>) -> DistResult<()> {
    let mut v = [twice.map_or(u64::MAX, u64::from)];
    comm.allreduce_u64(&mut v, |a, b| *a = (*a).min(*b))?;
    if v[0] == u64::MAX {
        return Ok(());
    }
    let refused = |id: String| DistError::Invalid(format!("vertex id {id} appears more than once"));
    let k = v[0] as usize;
    match names {
        Names::Labels { labels, signed } => {
            Err(refused(if *signed { ((labels[k] ^ SIGN) as i64).to_string() } else { labels[k].to_string() }))
        }
        // The id's dictionary owner names it (the fallback is never reached: every
        // number has an owner).
        Names::Bytes(dict) => {
            let mine = if dict.owner_of_number(k as u64) == comm.me { Err(refused(quoted(dict.keys.get(k - dict.first() as usize)))) } else { Ok(()) };
            comm.agree(mine)?;
            Err(refused(format!("number {k}")))
        }
    }
}
