//! Step 1: every process gets its raw part of the edge list — by reading its byte
//! range of the file, generating its chunk of R-MAT, or taking the edges it was
//! handed — with the global checks (entry count) done collectively, every failure
//! agreed on. Inputs that declare their vertices (MatrixMarket, binary, R-MAT) keep
//! them as declared; edge lists and in-memory edges, which name only the ids their
//! edges use, are relabelled densely ([`super::relabel`]).

use super::build::even_start;
use super::comm::{try_zeroed, Comm};
use super::relabel::{relabel, relabel_with_max, too_many, Relabelled, MAX_N};
use super::{DistError, DistResult, Format, Input};
use crate::io::{
    alloc_binary_range, check_mtx_entry_count, file_len, read_binary_header, read_binary_labels, read_binary_range_into, read_csr_header,
    read_csr_ids, read_csr_indices, read_csr_offsets, read_csr_weights, read_edge_list_ids_range, read_mtx_header, read_mtx_range_checked,
    split_byte_ranges, CsrHeader, CsrSide, EdgeIds, EdgeIdsChunk, EdgeListOptions, InputError, InputErrorKind, InputResult, MtxField,
};
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
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

/// What every load checks first: a thread count nothing can run on and a bad GBPR_*
/// value are refused before anything is sized by them or communicated.
pub(crate) fn check_before_loading(threads: usize) -> DistResult<()> {
    crate::parallel::check_thread_count(threads)?;
    crate::settings::Settings::from_env()?;
    Ok(())
}

pub(crate) fn load_with(comm: &mut Comm<'_>, input: Input, threads: usize, weights: Weights) -> DistResult<RawEdges> {
    check_before_loading(threads)?;
    if let Weights::Required { kernel } = weights {
        // A converted graph says in its header whether it has weights ([`load_csr`]).
        let weighted = match &input {
            Input::File { path, format } => {
                matches!(format.resolve(path), Some(Format::Mtx | Format::Edges | Format::EdgesOneBased | Format::Csr))
            }
            Input::WeightedNumberedEdges { .. } => true,
            _ => false,
        };
        if !weighted {
            return Err(DistError::Invalid(format!(
                "{}: {kernel} needs edge weights: a MatrixMarket real or integer file, an edge list with a weight column or a graph converted with them",
                input.describe()
            )));
        }
    }
    let need = weights != Weights::Ignored;
    match input {
        Input::File { path, format } => {
            let format = match format.resolve(&path) {
                Some(f) => f,
                None => {
                    return Err(DistError::Input(InputError {
                        path,
                        line: None,
                        kind: InputErrorKind::Unsupported,
                        message: "unknown file format (extension .mtx, .edges/.txt/.el, .bin or .gcsr, or give the format)".into(),
                    }))
                }
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
                    load_edges(comm, &path, &opts, threads)
                }
                Format::Bin | Format::Auto => load_bin(comm, &path),
                Format::Csr => load_csr(comm, &path, threads, weights),
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

fn load_edges(comm: &mut Comm<'_>, path: &Path, opts: &EdgeListOptions, threads: usize) -> DistResult<RawEdges> {
    let read = (|| {
        let (s, e) = my_range(comm, path)?;
        read_edge_list_ids_range_threads(path, opts, s, e, threads, comm.me)
    })();
    let mut chunk = comm.agree(read)?;
    let r = match &chunk.ids {
        EdgeIds::Narrow { src, dst } => relabel_with_max(comm, src, dst, chunk.max_id)?,
        EdgeIds::Wide { src, dst } => relabel_with_max(comm, src, dst, chunk.max_id)?,
    };
    // The relabelling keeps the edges in order, so the weights stay parallel.
    let weights = chunk.weights.take();
    drop(chunk);
    Ok(RawEdges { weights, ..RawEdges::relabelled(r, |x| x) })
}

/// The edge lines starting in `[start, end)`, parsed by `threads` threads, each the
/// lines starting in its share of the bytes, and joined in file order: the edges, and
/// the error of the first bad line, are the one thread's.
fn read_edge_list_ids_range_threads(path: &Path, opts: &EdgeListOptions, start: u64, end: u64, threads: usize, me: usize) -> DistResult<EdgeIdsChunk> {
    // A thread parses at least 64 KiB (~4000 lines): less would cost about what a
    // thread's start does.
    let parts = threads.min(((end.saturating_sub(start)) >> 16) as usize).max(1);
    let ranges: Vec<(u64, u64)> = split_byte_ranges(end - start, parts).into_iter().map(|(a, b)| (start + a, start + b)).collect();
    let mut chunks = run_blocks(ranges, |_, (a, b)| read_edge_list_ids_range(path, opts, a, b))?.into_iter();
    let mut all = chunks.next().expect("one range at least")?;
    let rest = chunks.collect::<InputResult<Vec<EdgeIdsChunk>>>()?;
    if rest.is_empty() {
        return Ok(all);
    }
    let total: usize = all.ids.len() + rest.iter().map(|c| c.ids.len()).sum::<usize>();
    let wide = matches!(all.ids, EdgeIds::Wide { .. }) || rest.iter().any(|c| matches!(c.ids, EdgeIds::Wide { .. }));
    let widen = |v: &[u32]| v.iter().map(|&x| x as u64).collect::<Vec<u64>>();
    if wide {
        if let EdgeIds::Narrow { src, dst } = &all.ids {
            all.ids = EdgeIds::Wide { src: widen(src), dst: widen(dst) };
        }
    }
    let more = total - all.ids.len();
    let grown = match &mut all.ids {
        EdgeIds::Narrow { src, dst } => src.try_reserve_exact(more).and_then(|_| dst.try_reserve_exact(more)),
        EdgeIds::Wide { src, dst } => src.try_reserve_exact(more).and_then(|_| dst.try_reserve_exact(more)),
    };
    let grown = grown.and_then(|_| all.weights.as_mut().map_or(Ok(()), |w| w.try_reserve_exact(more)));
    grown.map_err(|_| super::comm::oom(total * if wide { 24 } else { 16 }, me, "the edges read"))?;
    for c in rest {
        all.max_id = all.max_id.max(c.max_id);
        match (&mut all.ids, c.ids) {
            (EdgeIds::Narrow { src, dst }, EdgeIds::Narrow { src: s, dst: d }) => {
                src.extend_from_slice(&s);
                dst.extend_from_slice(&d);
            }
            (EdgeIds::Wide { src, dst }, EdgeIds::Narrow { src: s, dst: d }) => {
                src.extend(s.iter().map(|&x| x as u64));
                dst.extend(d.iter().map(|&x| x as u64));
            }
            (EdgeIds::Wide { src, dst }, EdgeIds::Wide { src: s, dst: d }) => {
                src.extend_from_slice(&s);
                dst.extend_from_slice(&d);
            }
            (EdgeIds::Narrow { .. }, EdgeIds::Wide { .. }) => unreachable!("widened above when any part is wide"),
        }
        if let (Some(w), Some(cw)) = (all.weights.as_mut(), c.weights) {
            w.extend_from_slice(&cw);
        }
    }
    Ok(all)
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

/// The rows of this process's block (even blocks of `0..n`, as the kernels'
/// [`Adjacency`](super::adjacency::Adjacency)) of a converted graph, offsets rebased to
/// the block, and the ids of all vertices.
pub(crate) struct CsrBlock {
    pub n: usize,
    /// Edges of the whole graph.
    pub m: u64,
    pub lo: usize,
    pub(crate) hi: usize,
    /// The id of every vertex number, ascending.
    pub labels: Vec<u64>,
    /// Offsets (`hi - lo + 1`, from 0) and indices of the out-neighbours of the block's rows.
    pub out: Option<(Vec<usize>, Vec<u32>)>,
    /// Likewise of the in-neighbours.
    pub(crate) inn: Option<(Vec<usize>, Vec<u32>)>,
    /// The weights of the out-edges, parallel to `out`'s indices.
    pub weights: Option<Vec<f64>>,
}

/// Reads this process's block of the converted graph at `path`: the out-adjacency if
/// `out` (or the weights are asked for), the in-adjacency if `inn`, the weights if
/// `weights` requires them (a graph converted without them is that kernel's error).
/// Each read is at an offset the header gives, on `threads` threads; the header, the
/// ids and every row read are checked, and any failure is agreed on: the same error,
/// naming the file, on every process. Collective.
pub(crate) fn read_csr_block(comm: &mut Comm<'_>, path: &Path, threads: usize, out: bool, inn: bool, weights: Weights) -> DistResult<CsrBlock> {
    let (p, me) = (comm.p, comm.me);
    let hdr = comm.agree(read_csr_header(path).map_err(DistError::from))?;
    if hdr.n > MAX_N {
        return Err(too_many(hdr.n));
    }
    if let (Weights::Required { kernel }, false) = (weights, hdr.has_weights) {
        return Err(DistError::Invalid(format!(
            "{}: {kernel} needs edge weights, and this converted graph has none (convert a weighted input with `graph convert --weighted`)",
            path.display()
        )));
    }
    let n = hdr.n as usize;
    let (lo, hi) = (even_start(me, n, p), even_start(me + 1, n, p));
    let read = (|| -> DistResult<CsrBlock> {
        let mut labels = try_zeroed::<u64>(n, me, "the vertex ids")?;
        read_csr_ids(path, &hdr, &mut labels)?;
        let with_weights = weights != Weights::Ignored;
        let mut out = if out || with_weights { Some(read_csr_side(path, &hdr, CsrSide::Out, lo, hi, threads, me)?) } else { None };
        let mut inn = if inn { Some(read_csr_side(path, &hdr, CsrSide::In, lo, hi, threads, me)?) } else { None };
        let weights = match &out {
            Some((ptr, idx)) if with_weights => {
                let mut w = try_zeroed::<f64>(idx.len(), me, "the edge weights")?;
                let bounds = even_blocks(w.len(), threads);
                let first = ptr[0];
                let parts: Vec<(usize, &mut [f64])> = bounds.iter().copied().zip(split_by_bounds(&mut w, &bounds)).collect();
                let read = run_blocks(parts, |_, (at, dst)| read_csr_weights(path, &hdr, first + at, dst))?;
                read.into_iter().collect::<InputResult<()>>()?;
                Some(w)
            }
            _ => None,
        };
        for (ptr, _) in out.iter_mut().chain(inn.iter_mut()) {
            let base = ptr[0];
            ptr.iter_mut().for_each(|x| *x -= base);
        }
        Ok(CsrBlock { n, m: hdr.m, lo, hi, labels, out, inn, weights })
    })();
    comm.agree(read)
}

/// Offsets (global) and indices of rows `lo..hi` of one side, the indices read and
/// checked by `threads` threads, each the rows of about an equal share of the edges.
fn read_csr_side(path: &Path, hdr: &CsrHeader, side: CsrSide, lo: usize, hi: usize, threads: usize, me: usize) -> DistResult<(Vec<usize>, Vec<u32>)> {
    let what = match side {
        CsrSide::Out => ("the row offsets of the out-edges", "the out-edges"),
        CsrSide::In => ("the row offsets of the in-edges", "the in-edges"),
    };
    let mut ptr = try_zeroed::<usize>(hi - lo + 1, me, what.0)?;
    read_csr_offsets(path, hdr, side, lo, &mut ptr)?;
    let base = ptr[0];
    let mut idx = try_zeroed::<u32>(ptr[hi - lo] - base, me, what.1)?;
    let rows = balanced_row_blocks(&ptr, threads);
    let edges: Vec<usize> = rows.iter().map(|&r| ptr[r] - base).collect();
    let parts: Vec<(usize, &mut [u32])> = rows.iter().copied().zip(split_by_bounds(&mut idx, &edges)).collect();
    let read = run_blocks(parts, |k, (r, dst)| read_csr_indices(path, hdr, side, lo + r, &ptr[r..=rows[k + 1]], dst))?;
    read.into_iter().collect::<InputResult<()>>()?;
    Ok((ptr, idx))
}

/// A converted graph as raw edges (this block's out-edges, in the file's numbering),
/// for the paths that route edges themselves (the binary converter).
fn load_csr(comm: &mut Comm<'_>, path: &Path, threads: usize, weights: Weights) -> DistResult<RawEdges> {
    let b = read_csr_block(comm, path, threads, true, false, weights)?;
    let (ptr, idx) = b.out.expect("the out-edges were asked for");
    let src = comm.agree((|| {
        let mut src = try_zeroed::<u32>(idx.len(), comm.me, "the edges' sources")?;
        for (i, w) in ptr.windows(2).enumerate() {
            src[w[0]..w[1]].fill((b.lo + i) as u32);
        }
        Ok(src)
    })())?;
    Ok(RawEdges { n: b.n, src, dst: idx, labels: Some(b.labels), weights: b.weights })
}
