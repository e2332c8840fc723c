//! Parallel output: every process formats its part and writes it at its offset of one
//! temp file in the target directory; process 0 renames it into place at the end. Each
//! stage ends with the error agreement, and on any failure process 0 removes the temp
//! file, so a failed run leaves no partial output behind.

use super::build::{even_owner, even_start, route_and_dedup};
use super::comm::Comm;
use super::graph::Graph;
use super::load::Weights;
use super::{finish, load, DistError, DistResult, DistributedResult, Input};
use crate::io::{CsrHeader, CsrSide, BINARY_MAGIC, BINARY_VERSION};
use lpf::Context;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Writes the ranks of a distributed result to `path`, one `id rank` line per vertex
/// in ascending id order (ids as in [`DistributedResult::ids`]; ranks in shortest
/// round-trip `e` notation). Collective; the file appears complete or not at all.
pub fn write_ranks_spmd(ctx: &mut Context, res: &DistributedResult, path: &Path) -> DistResult<()> {
    let mut comm = Comm::new(ctx)?;
    let r = write_ranks(&mut comm, res, path);
    finish(comm, r)
}

fn write_ranks(comm: &mut Comm<'_>, res: &DistributedResult, path: &Path) -> DistResult<()> {
    let (p, me, n) = (comm.p, comm.me, res.n as usize);
    // Route (index, id, rank) to the owner of the index's even block.
    let mut counts = vec![0usize; p];
    for &i in &res.index {
        counts[even_owner(i as usize, n, p)] += 1;
    }
    let mut at: Vec<usize> = counts.iter().scan(0, |s, &c| {
        let o = *s;
        *s += c;
        Some(o)
    }).collect();
    let mut send = vec![[0u64; 3]; res.index.len()];
    for k in 0..res.index.len() {
        let q = even_owner(res.index[k] as usize, n, p);
        send[at[q]] = [res.index[k], res.ids[k], res.ranks[k].to_bits()];
        at[q] += 1;
    }
    let (recv, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let lo = even_start(me, n, p);
    let rows = even_start(me + 1, n, p) - lo;
    let mut line = vec![(0u64, 0.0f64); rows];
    let mut seen = 0usize;
    for e in &recv {
        line[e[0] as usize - lo] = (e[1], f64::from_bits(e[2]));
        seen += 1;
    }
    let complete = if seen == rows { Ok(()) } else { Err(DistError::Invalid(format!("process {me} received {seen} of its {rows} ranks"))) };
    comm.agree(complete)?;
    let mut text = Vec::with_capacity(rows * 24);
    for (id, r) in line {
        writeln!(text, "{id} {r:e}").expect("writing to memory");
    }
    write_parts(comm, path, &text)
}

/// Writes a kernel's result to `path`: one `id value` line per vertex in ascending id
/// order (the processes' blocks are already in that order). Collective; the file
/// appears complete or not at all.
pub fn write_values_spmd<T: std::fmt::Display>(ctx: &mut Context, res: &super::VertexValues<T>, path: &Path) -> DistResult<()> {
    let mut comm = Comm::new(ctx)?;
    let mut text = Vec::with_capacity(res.ids.len() * 16);
    for (id, v) in res.ids.iter().zip(&res.values) {
        writeln!(text, "{id} {v}").expect("writing to memory");
    }
    let r = write_parts(&mut comm, path, &text);
    finish(comm, r)
}

/// Reads `input` in parallel, removes duplicate edges (and R-MAT's self-loops), and
/// writes the edge set to `path` in the binary format (pattern; records hold the
/// vertex numbers `0..n` in ascending id order, followed by the table of the ids when
/// they are not `0..n`, so a reload reports the input's ids). Returns (vertices,
/// edges). Collective.
pub fn convert_to_binary_spmd(ctx: &mut Context, input: Input, path: &Path, threads: usize) -> DistResult<(u64, u64)> {
    let mut comm = Comm::new(ctx)?;
    let r = convert(&mut comm, input, path, threads);
    finish(comm, r)
}

fn convert(comm: &mut Comm<'_>, input: Input, path: &Path, threads: usize) -> DistResult<(u64, u64)> {
    let mut raw = load::load(comm, input, threads.max(1))?;
    // Ids that are not 0..n travel in a label table after the records.
    let labels = raw.labels.take().filter(|l| l.iter().enumerate().any(|(k, &x)| x != k as u64));
    let routed = route_and_dedup(comm, raw)?;
    let n = routed.n as u64;
    let nnz = comm.sum_u64(routed.src.len() as u64)?;
    let mut out = Vec::with_capacity(routed.src.len() * 8 + 40);
    if comm.me == 0 {
        out.extend_from_slice(&BINARY_MAGIC);
        out.extend_from_slice(&BINARY_VERSION.to_le_bytes());
        out.extend_from_slice(&(if labels.is_some() { 2u32 } else { 0 }).to_le_bytes());
        for x in [n, n, nnz] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for i in 0..routed.rows() {
        let t = (routed.lo + i) as u32;
        for &s in &routed.src[routed.ptr[i]..routed.ptr[i + 1]] {
            out.extend_from_slice(&s.to_le_bytes());
            out.extend_from_slice(&t.to_le_bytes());
        }
    }
    drop(routed);
    if let (Some(l), true) = (&labels, comm.me + 1 == comm.p) {
        for x in l {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    write_parts(comm, path, &out)?;
    Ok((n, nnz))
}

/// Reads `input` in parallel and writes the kernels' graph of it to `path` in the CSR
/// format of [`crate::io::CsrHeader`]: the ids (when not `0..n`), the in- and the
/// out-adjacency, and with `weighted` the out-edges' weights (of parallel edges the
/// smallest; an input without weights is then an error). Every process writes its
/// block's rows at their offsets (the offsets of the blocks follow from one allgather
/// of the edge counts), so nothing is gathered; the file appears complete or not at
/// all. Returns (vertices, edges). Collective.
pub fn convert_to_csr_spmd(ctx: &mut Context, input: Input, path: &Path, threads: usize, weighted: bool) -> DistResult<(u64, u64)> {
    let mut comm = Comm::new(ctx)?;
    let r = convert_csr(&mut comm, input, path, threads.max(1), weighted);
    finish(comm, r)
}

fn convert_csr(comm: &mut Comm<'_>, input: Input, path: &Path, threads: usize, weighted: bool) -> DistResult<(u64, u64)> {
    let weights = if weighted { Weights::Required { kernel: "convert --weighted" } } else { Weights::Ignored };
    let g = Graph::from_input_with(comm, input, threads, weights, true, "convert")?;
    let (p, me) = (comm.p, comm.me);
    let adj = g.adjacency();
    let (out, inn) = (adj.out.csr(), adj.inn.csr());
    let w = g.weighted_edges();
    // The weights are parallel to the out-indices: both are the block's distinct edges,
    // row by row, targets ascending.
    let parallel = w.is_none_or(|w| w.csr().ptr == out.ptr && w.csr().idx == out.idx);
    comm.agree(if parallel { Ok(()) } else { Err(DistError::Invalid(format!("process {me}: the weighted edges differ from the adjacency"))) })?;
    let labels = g.labels();
    let has_ids = labels.iter().enumerate().any(|(k, &x)| x != k as u64);
    let hdr = CsrHeader { n: g.n(), m: g.nnz(), has_ids, has_weights: w.is_some() };
    let out_before: u64 = comm.allgather_u64(out.idx.len() as u64)?[..me].iter().sum();
    let in_before: u64 = comm.allgather_u64(inn.idx.len() as u64)?[..me].iter().sum();
    let (lo, hi) = g.block();
    let le = |xs: &mut Vec<u8>, x: &[u8]| xs.extend_from_slice(x);
    let mut head = Vec::new();
    if me == 0 {
        le(&mut head, &hdr.encode());
        if has_ids {
            labels.iter().for_each(|x| le(&mut head, &x.to_le_bytes()));
        }
    }
    // A side's offsets of rows lo..hi (and the closing m on the last process) and its
    // indices, at their places.
    let side = |c: &crate::matrix::Compressed<bool>, before: u64| {
        let mut offsets = Vec::with_capacity((hi - lo + 1) * 8);
        let rows = if me + 1 == p { hi - lo + 1 } else { hi - lo };
        c.ptr[..rows].iter().for_each(|&x| le(&mut offsets, &(before + x as u64).to_le_bytes()));
        let mut indices = Vec::with_capacity(c.idx.len() * 4);
        c.idx.iter().for_each(|x| le(&mut indices, &x.to_le_bytes()));
        (offsets, indices)
    };
    let (out_offsets, out_indices) = side(out, out_before);
    let (in_offsets, in_indices) = side(inn, in_before);
    let mut weights = Vec::new();
    if let Some(w) = w {
        w.csr().val.iter().for_each(|x| le(&mut weights, &x.to_le_bytes()));
    }
    let pieces: [(u64, &[u8]); 6] = [
        (0, &head),
        (hdr.offsets_at(CsrSide::Out) + lo as u64 * 8, &out_offsets),
        (hdr.indices_at(CsrSide::Out) + out_before * 4, &out_indices),
        (hdr.offsets_at(CsrSide::In) + lo as u64 * 8, &in_offsets),
        (hdr.indices_at(CsrSide::In) + in_before * 4, &in_indices),
        (hdr.weights_at() + out_before * 8, &weights),
    ];
    let total = hdr.weights_at() + if hdr.has_weights { hdr.m * 8 } else { 0 };
    write_pieces(comm, path, total, &pieces)?;
    Ok((hdr.n, hdr.m))
}

fn out_err(path: &Path, what: &str, e: std::io::Error) -> DistError {
    DistError::Output { path: path.to_path_buf(), message: format!("{what}: {e}") }
}

/// Writes every process's `mine` at its offset (process order) of `path`, through a
/// temp file in the same directory that process 0 renames at the end.
fn write_parts(comm: &mut Comm<'_>, path: &Path, mine: &[u8]) -> DistResult<()> {
    let me = comm.me;
    let lens = comm.allgather_u64(mine.len() as u64)?;
    let offset: u64 = lens[..me].iter().sum();
    let total: u64 = lens.iter().sum();
    write_pieces(comm, path, total, &[(offset, mine)])
}

/// Writes every process's `pieces` (each bytes at an offset) into a file of `total`
/// bytes at `path`, through a temp file in the same directory that process 0 renames
/// at the end (removed on any failure). The pieces of all processes together must
/// cover the file.
fn write_pieces(comm: &mut Comm<'_>, path: &Path, total: u64, pieces: &[(u64, &[u8])]) -> DistResult<()> {
    let me = comm.me;
    // Process 0 names the temp file; everyone learns the name (processes may be
    // different OS processes).
    let mut name = Vec::new();
    if me == 0 {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!(".{file}.partial-{}-{nanos}", std::process::id()));
        name = tmp.to_string_lossy().into_owned().into_bytes();
    }
    comm.broadcast_bytes(0, &mut name)?;
    let tmp = PathBuf::from(String::from_utf8_lossy(&name).into_owned());
    let created = if me == 0 {
        std::fs::File::create(&tmp).and_then(|f| f.set_len(total)).map_err(|e| out_err(path, "cannot create the output file", e))
    } else {
        Ok(())
    };
    let r = (|| {
        comm.agree(created)?;
        let wrote = std::fs::OpenOptions::new()
            .write(true)
            .open(&tmp)
            .and_then(|f| pieces.iter().try_for_each(|&(offset, bytes)| f.write_all_at(bytes, offset)))
            .map_err(|e| out_err(path, "cannot write the output file", e));
        comm.agree(wrote)?;
        let renamed = if me == 0 {
            std::fs::rename(&tmp, path).map_err(|e| out_err(path, "cannot rename the finished output into place", e))
        } else {
            Ok(())
        };
        comm.agree(renamed)
    })();
    if r.is_err() && me == 0 {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
