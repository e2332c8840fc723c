//! Step 1: every process gets its raw part of the edge list — by reading its byte
//! range of the file, generating its chunk of R-MAT, or taking the edges it was
//! handed — with the global checks (entry count) done collectively, every failure
//! agreed on. Inputs that declare their vertices (MatrixMarket, binary, R-MAT) keep
//! them as declared; edge lists and in-memory edges, which name only the ids their
//! edges use, are relabelled densely ([`super::relabel`]).

use super::comm::{try_zeroed, Comm};
use super::relabel::{relabel, relabel_with_max, too_many, Relabelled, MAX_N};
use super::{DistError, DistResult, Format, Input};
use crate::io::{
    alloc_binary_range, check_mtx_entry_count, file_len, read_binary_header, read_binary_labels, read_binary_range_into,
    read_edge_list_ids_range, read_mtx_header, read_mtx_range_checked, split_byte_ranges, EdgeIds, EdgeListOptions, InputError, MtxField,
    InputErrorKind,
};
use crate::kron::KronParams;
use std::path::Path;

/// This process's raw edges, vertices numbered `0..n`, before routing.
pub(crate) struct RawEdges {
    pub n: usize,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// The user-visible id of every vertex number (ascending); `None` once taken.
    pub labels: Option<Vec<u64>>,
    /// The weight of every edge, parallel to `src`/`dst`: only when loaded with
    /// [`Weights::Required`].
    pub weights: Option<Vec<f64>>,
}

/// Whether the kernel reads edge weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weights {
    /// Values are ignored (an edge is an edge).
    Ignored,
    /// Every edge must carry a non-negative weight (SSSP): a MatrixMarket real or
    /// integer value, an edge list's third column. A negative or NaN weight is an
    /// error naming file:line; an input without weights is an error naming `kernel`.
    Required { kernel: &'static str },
}

impl RawEdges {
    fn relabelled(r: Relabelled, to_user: impl Fn(u64) -> u64) -> RawEdges {
        let labels = r.labels.into_iter().map(to_user).collect();
        RawEdges { n: r.n, src: r.src, dst: r.dst, labels: Some(labels), weights: None }
    }

    /// Edges of an input that declares its vertices `0..n` (a MatrixMarket size line, a
    /// binary header, R-MAT's scale): every declared vertex is one, with or without
    /// edges (an isolated vertex still holds rank), numbered as declared; `to_user`
    /// gives the id a vertex has in the output. The readers checked every index < n.
    fn declared(comm: &Comm<'_>, n: u64, src: Vec<u32>, dst: Vec<u32>, to_user: impl Fn(u64) -> u64) -> DistResult<RawEdges> {
        if n > MAX_N {
            return Err(too_many(n));
        }
        let mut labels = try_zeroed::<u64>(n as usize, comm.me, "the vertex ids")?;
        for (k, l) in labels.iter_mut().enumerate() {
            *l = to_user(k as u64);
        }
        Ok(RawEdges { n: n as usize, src, dst, labels: Some(labels), weights: None })
    }
}

pub(crate) fn load(comm: &mut Comm<'_>, input: Input, threads: usize) -> DistResult<RawEdges> {
    load_with(comm, input, threads, Weights::Ignored)
}

pub(crate) fn load_with(comm: &mut Comm<'_>, input: Input, threads: usize, weights: Weights) -> DistResult<RawEdges> {
    // Every entry point loads first: a thread count nothing can run on and a bad
    // GBPR_* value are refused before anything is sized by them or communicated.
    crate::parallel::check_thread_count(threads)?;
    crate::settings::Settings::from_env()?;
    if let Weights::Required { kernel } = weights {
        let weighted = match &input {
            Input::File { path, format } => matches!(
                (format, Format::from_extension(path)),
                (Format::Mtx | Format::Edges | Format::EdgesOneBased, _) | (Format::Auto, Some(Format::Mtx | Format::Edges))
            ),
            Input::WeightedNumberedEdges { .. } => true,
            _ => false,
        };
        if !weighted {
            return Err(DistError::Invalid(format!(
                "{}: {kernel} needs edge weights: a MatrixMarket real or integer file or an edge list with a weight column",
                input.describe()
            )));
        }
    }
    let need = weights != Weights::Ignored;
    match input {
        Input::File { path, format } => {
            let format = match format {
                Format::Auto => match Format::from_extension(&path) {
                    Some(f) => f,
                    None => {
                        return Err(DistError::Input(InputError {
                            path,
                            line: None,
                            kind: InputErrorKind::Unsupported,
                            message: "unknown file format (extension .mtx, .edges/.txt/.el or .bin, or give the format)".into(),
                        }))
                    }
                },
                f => f,
            };
            match format {
                Format::Mtx => load_mtx(comm, &path, weights),
                Format::Edges | Format::EdgesOneBased => {
                    let opts = EdgeListOptions {
                        one_based: format == Format::EdgesOneBased,
                        weighted: need,
                        nonnegative_weights: need,
                        ..Default::default()
                    };
                    load_edges(comm, &path, &opts)
                }
                Format::Bin | Format::Auto => load_bin(comm, &path),
            }
        }
        Input::Rmat(params) => load_rmat(comm, &params, threads),
        Input::Edges(edges) => load_u64_edges(comm, edges),
        Input::NumberedEdges { n, edges } => load_numbered_edges(comm, n, edges),
        Input::WeightedNumberedEdges { n, edges, weights: w } => {
            comm.agree(weight_error(comm.me, &edges, &w).map_or(Ok(()), Err))?;
            let mut raw = load_numbered_edges(comm, n, edges)?;
            raw.weights = need.then_some(w);
            Ok(raw)
        }
    }
}

/// The first given weight SSSP cannot take (negative, NaN) or a count that does not
/// match the edges', as the error naming the edge.
fn weight_error(me: usize, edges: &[(u64, u64)], weights: &[f64]) -> Option<DistError> {
    keyed_weight_error(me, edges.len(), weights, |k| format!("({}, {})", edges[k].0, edges[k].1))
}

/// [`weight_error`] for `m` edges that `edge(k)` names as the caller's ids.
pub(crate) fn keyed_weight_error(me: usize, m: usize, weights: &[f64], edge: impl Fn(usize) -> String) -> Option<DistError> {
    if m != weights.len() {
        return Some(DistError::Invalid(format!(
            "process {me} gives {m} edges but {} weights: one weight per edge",
            weights.len()
        )));
    }
    let k = weights.iter().position(|w| w.is_nan() || *w < 0.0)?;
    Some(DistError::Invalid(format!(
        "edge {k} of process {me}, {}, has weight {}: weights must be numbers >= 0",
        edge(k),
        weights[k]
    )))
}

fn my_range(comm: &Comm<'_>, path: &Path) -> Result<(u64, u64), InputError> {
    let len = file_len(path)?;
    Ok(split_byte_ranges(len, comm.p)[comm.me])
}

fn load_mtx(comm: &mut Comm<'_>, path: &Path, weights: Weights) -> DistResult<RawEdges> {
    let read = (|| {
        let h = read_mtx_header(path)?;
        if let (Weights::Required { kernel }, MtxField::Pattern) = (weights, h.field) {
            let message = format!("{kernel} needs edge weights, but the header declares a pattern matrix (no values)");
            return Err(InputError { path: path.to_path_buf(), line: Some(1), kind: InputErrorKind::Header, message });
        }
        if h.nrows != h.ncols {
            return Err(InputError {
                path: path.to_path_buf(),
                line: Some(h.size_line),
                kind: InputErrorKind::Header,
                message: format!("PageRank needs a square adjacency matrix, the size line declares {} x {}", h.nrows, h.ncols),
            });
        }
        let (s, e) = my_range(comm, path)?;
        let chunk = read_mtx_range_checked(path, &h, s, e, weights != Weights::Ignored)?;
        Ok((h, chunk))
    })();
    let (h, chunk) = comm.agree(read.map_err(DistError::from))?;
    // The entry count is only known to all ranges together.
    let total = comm.sum_u64(chunk.entries)?;
    let last_line = comm.max_u64(chunk.end_line)?;
    check_mtx_entry_count(path, &h, total, last_line)?;
    // The reader's indices are 0-based; MatrixMarket's ids are 1-based.
    let mut raw = RawEdges::declared(comm, h.nrows, chunk.coo.rows, chunk.coo.cols, |x| x + 1)?;
    if weights != Weights::Ignored {
        raw.weights = chunk.coo.vals;
    }
    Ok(raw)
}

fn load_edges(comm: &mut Comm<'_>, path: &Path, opts: &EdgeListOptions) -> DistResult<RawEdges> {
    let read = (|| {
        let (s, e) = my_range(comm, path)?;
        read_edge_list_ids_range(path, opts, s, e)
    })();
    let mut chunk = comm.agree(read.map_err(DistError::from))?;
    let r = match &chunk.ids {
        EdgeIds::Narrow { src, dst } => relabel_with_max(comm, src, dst, chunk.max_id)?,
        EdgeIds::Wide { src, dst } => relabel_with_max(comm, src, dst, chunk.max_id)?,
    };
    // The relabelling keeps the edges in order, so the weights stay parallel.
    let weights = chunk.weights.take();
    drop(chunk);
    Ok(RawEdges { weights, ..RawEdges::relabelled(r, |x| x) })
}

fn load_bin(comm: &mut Comm<'_>, path: &Path) -> DistResult<RawEdges> {
    let read = (|| {
        let h = read_binary_header(path)?;
        if h.nrows != h.ncols {
            return Err(InputError {
                path: path.to_path_buf(),
                line: None,
                kind: InputErrorKind::Header,
                message: format!("PageRank needs a square adjacency matrix, the header declares {} x {}", h.nrows, h.ncols),
            });
        }
        let (s, e) = my_range(comm, path)?;
        Ok((h, s, e, alloc_binary_range(path, &h, s, e)?))
    })();
    // Agree on the memory before anybody spends time reading.
    let (h, s, e, mut coo) = comm.agree(read.map_err(DistError::from))?;
    let read = (|| -> Result<Option<Vec<u64>>, InputError> {
        read_binary_range_into(path, &h, s, e, &mut coo)?;
        if h.has_labels {
            return Ok(Some(read_binary_labels(path, &h)?));
        }
        Ok(None)
    })();
    let table = comm.agree(read.map_err(DistError::from))?;
    match table {
        Some(t) => RawEdges::declared(comm, h.nrows, coo.rows, coo.cols, |x| t[x as usize]),
        None => RawEdges::declared(comm, h.nrows, coo.rows, coo.cols, |x| x),
    }
}

fn load_rmat(comm: &mut Comm<'_>, params: &KronParams, threads: usize) -> DistResult<RawEdges> {
    if !(1..=31).contains(&params.scale) {
        return Err(DistError::Invalid(format!("R-MAT scale {} outside 1..=31", params.scale)));
    }
    if params.num_vertices() > MAX_N {
        return Err(too_many(params.num_vertices()));
    }
    let coo = params.try_permutation().and_then(|perm| params.generate(params.chunk(comm.me, comm.p), &perm, threads));
    let mut coo = comm.agree(coo.map_err(DistError::from))?;
    // Self-loops are not edges of the Graph500 graph; its 2^scale vertices all are
    // vertices, isolated ones included.
    let mut k = 0;
    for i in 0..coo.rows.len() {
        if coo.rows[i] != coo.cols[i] {
            coo.rows[k] = coo.rows[i];
            coo.cols[k] = coo.cols[i];
            k += 1;
        }
    }
    coo.rows.truncate(k);
    coo.cols.truncate(k);
    RawEdges::declared(comm, params.num_vertices(), coo.rows, coo.cols, |x| x)
}

/// Arbitrary `u64` ids, relabelled in ascending id order, so that the numbering (and
/// with it every result bit) does not depend on how the edges were partitioned.
fn load_u64_edges(comm: &mut Comm<'_>, edges: Vec<(u64, u64)>) -> DistResult<RawEdges> {
    let (src, dst): (Vec<u64>, Vec<u64>) = edges.into_iter().unzip();
    let r = relabel(comm, &src, &dst)?;
    Ok(RawEdges::relabelled(r, |x| x))
}

/// Ids the caller numbered `0..n` (the same `n` on every process, checked): kept as
/// numbered, so vertices without edges are vertices too.
fn load_numbered_edges(comm: &mut Comm<'_>, n: u64, edges: Vec<(u64, u64)>) -> DistResult<RawEdges> {
    let ns = comm.allgather_u64(n)?;
    if let Some(q) = ns.iter().position(|&x| x != n) {
        return Err(DistError::Invalid(format!(
            "process {q} declares {} vertices, process {} declares {n}: every process must pass the same count",
            ns[q], comm.me
        )));
    }
    let split = (|| {
        if n > MAX_N {
            return Err(too_many(n));
        }
        if let Some((i, &(s, t))) = edges.iter().enumerate().find(|(_, &(s, t))| s >= n || t >= n) {
            return Err(DistError::Invalid(format!(
                "edge {i} of process {} is ({s}, {t}), but the vertices are numbered 0..{n}",
                comm.me
            )));
        }
        let mut src = try_zeroed::<u32>(edges.len(), comm.me, "the edges' sources")?;
        let mut dst = try_zeroed::<u32>(edges.len(), comm.me, "the edges' targets")?;
        for (k, &(s, t)) in edges.iter().enumerate() {
            src[k] = s as u32;
            dst[k] = t as u32;
        }
        Ok((src, dst))
    })();
    drop(edges);
    let (src, dst) = comm.agree(split)?;
    RawEdges::declared(comm, n, src, dst, |x| x)
}
