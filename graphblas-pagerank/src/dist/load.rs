//! Step 1: every process gets its raw part of the edge list — by reading its byte
//! range of the file, generating its chunk of R-MAT, or relabelling the `u64` ids it
//! was handed — with the global checks (entry count, vertex count) done collectively
//! and every failure agreed on.

use super::comm::Comm;
use super::{DistError, DistResult, Format, Input};
use crate::io::{
    check_mtx_entry_count, file_len, read_binary_header, read_binary_range, read_edge_list_range, read_mtx_header,
    read_mtx_range, split_byte_ranges, EdgeListOptions, InputError, InputErrorKind,
};
use crate::kron::KronParams;
use crate::prng::mix64;
use std::path::Path;

/// This process's raw edges, ids in `0..n` (the input numbering), before routing.
pub(crate) struct RawEdges {
    pub n: usize,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// R-MAT: self-loops are not edges.
    pub drop_loops: bool,
    /// Added to a vertex index to give the user-visible id (1 for MatrixMarket).
    pub id_base: u64,
    /// For [`Input::Edges`]: the user id of every vertex index (ascending).
    pub user_ids: Option<Vec<u64>>,
}

/// Largest vertex count the u32 internal ids allow.
const MAX_N: u64 = u32::MAX as u64;

fn too_many(n: u64) -> DistError {
    DistError::Invalid(format!("the graph has {n} vertices; at most {MAX_N} are supported (32-bit vertex ids)"))
}

pub(crate) fn load(comm: &mut Comm<'_>, input: Input, threads: usize) -> DistResult<RawEdges> {
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
                Format::Mtx => load_mtx(comm, &path),
                Format::Edges => load_edges(comm, &path),
                Format::Bin | Format::Auto => load_bin(comm, &path),
            }
        }
        Input::Rmat(params) => load_rmat(comm, &params, threads),
        Input::Edges(edges) => load_u64_edges(comm, edges),
    }
}

fn my_range(comm: &Comm<'_>, path: &Path) -> Result<(u64, u64), InputError> {
    let len = file_len(path)?;
    Ok(split_byte_ranges(len, comm.p)[comm.me])
}

fn load_mtx(comm: &mut Comm<'_>, path: &Path) -> DistResult<RawEdges> {
    let read = (|| {
        let h = read_mtx_header(path)?;
        if h.nrows != h.ncols {
            return Err(InputError {
                path: path.to_path_buf(),
                line: Some(h.size_line),
                kind: InputErrorKind::Header,
                message: format!("PageRank needs a square adjacency matrix, the size line declares {} x {}", h.nrows, h.ncols),
            });
        }
        let (s, e) = my_range(comm, path)?;
        let chunk = read_mtx_range(path, &h, s, e)?;
        Ok((h, chunk))
    })();
    let (h, chunk) = comm.agree(read.map_err(DistError::from))?;
    // The entry count is only known to all ranges together.
    let total = comm.sum_u64(chunk.entries)?;
    let last_line = comm.max_u64(chunk.end_line)?;
    check_mtx_entry_count(path, &h, total, last_line)?;
    if h.nrows > MAX_N {
        return Err(too_many(h.nrows));
    }
    Ok(RawEdges { n: h.nrows as usize, src: chunk.coo.rows, dst: chunk.coo.cols, drop_loops: false, id_base: 1, user_ids: None })
}

fn load_edges(comm: &mut Comm<'_>, path: &Path) -> DistResult<RawEdges> {
    let read = (|| {
        let (s, e) = my_range(comm, path)?;
        read_edge_list_range(path, &EdgeListOptions::default(), s, e)
    })();
    let chunk = comm.agree(read.map_err(DistError::from))?;
    let n = comm.max_u64(chunk.max_id.map_or(0, |m| m + 1))?;
    if n > MAX_N {
        return Err(too_many(n));
    }
    Ok(RawEdges { n: n as usize, src: chunk.coo.rows, dst: chunk.coo.cols, drop_loops: false, id_base: 0, user_ids: None })
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
        Ok((h, read_binary_range(path, &h, s, e)?))
    })();
    let (h, coo) = comm.agree(read.map_err(DistError::from))?;
    if h.nrows > MAX_N {
        return Err(too_many(h.nrows));
    }
    Ok(RawEdges { n: h.nrows as usize, src: coo.rows, dst: coo.cols, drop_loops: false, id_base: 0, user_ids: None })
}

fn load_rmat(comm: &mut Comm<'_>, params: &KronParams, threads: usize) -> DistResult<RawEdges> {
    if !(1..=31).contains(&params.scale) {
        return Err(DistError::Invalid(format!("R-MAT scale {} outside 1..=31", params.scale)));
    }
    let perm = params.permutation();
    let coo = params.generate(params.chunk(comm.me, comm.p), &perm, threads);
    let coo = comm.agree(coo.map_err(DistError::from))?;
    Ok(RawEdges {
        n: params.num_vertices() as usize,
        src: coo.rows,
        dst: coo.cols,
        drop_loops: true,
        id_base: 0,
        user_ids: None,
    })
}

/// Relabels arbitrary `u64` ids to `0..n` in ascending id order, so that the numbering
/// (and with it every result bit) does not depend on how the edges were partitioned.
/// Distinct ids are deduplicated at hash owners, then every process learns the sorted
/// list (allgatherv, O(n) words per process: the same order of memory as the
/// contribution vector each process holds anyway).
fn load_u64_edges(comm: &mut Comm<'_>, edges: Vec<(u64, u64)>) -> DistResult<RawEdges> {
    let p = comm.p;
    let mut ids: Vec<u64> = Vec::with_capacity(2 * edges.len());
    for &(u, v) in &edges {
        ids.push(u);
        ids.push(v);
    }
    ids.sort_unstable();
    ids.dedup();
    let owner = |x: u64| (mix64(x) % p as u64) as usize;
    let mut counts = vec![0usize; p];
    for &x in &ids {
        counts[owner(x)] += 1;
    }
    let mut at: Vec<usize> = counts.iter().scan(0, |s, &c| {
        let o = *s;
        *s += c;
        Some(o)
    }).collect();
    let mut send = vec![0u64; ids.len()];
    for &x in &ids {
        let q = owner(x);
        send[at[q]] = x;
        at[q] += 1;
    }
    drop(ids);
    let (mut mine, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    mine.sort_unstable();
    mine.dedup();
    let (mut all, _) = comm.allgatherv(&mine)?;
    drop(mine);
    all.sort_unstable();
    let n = all.len() as u64;
    if n > MAX_N {
        return Err(too_many(n));
    }
    let index = |x: u64| all.binary_search(&x).expect("every id was gathered") as u32;
    let src = edges.iter().map(|&(u, _)| index(u)).collect();
    let dst = edges.iter().map(|&(_, v)| index(v)).collect();
    Ok(RawEdges { n: n as usize, src, dst, drop_loops: false, id_base: 0, user_ids: Some(all) })
}
