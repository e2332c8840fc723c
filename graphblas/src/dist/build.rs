//! Steps 2-4: route edges to the owners of their targets, deduplicate, sum degrees,
//! renumber globally by out-degree, and build each process's block of rows of Aᵀ.

use super::comm::{oom, try_zeroed, Comm};
use super::load::RawEdges;
use super::DistResult;
use lpf::Pod;
use crate::algorithms::pagerank::PullGraph;
use crate::parallel::balanced_row_blocks_weighted;

/// The deduplicated edges after routing by target in the input numbering: the in-CSR
/// of rows `lo..hi` (input ids), sources ascending and unique.
pub(crate) struct Routed {
    pub n: usize,
    pub lo: usize,
    pub ptr: Vec<usize>,
    pub src: Vec<u32>,
}

impl Routed {
    pub fn rows(&self) -> usize {
        self.ptr.len() - 1
    }
}

/// This process's share of the renumbered graph.
pub(crate) struct LocalGraph {
    /// Vertices in the whole graph.
    pub n: usize,
    /// Edges in the whole graph.
    pub nnz: u64,
    /// Row blocks in the new numbering: process q owns `bounds[q]..bounds[q + 1]`.
    pub bounds: Vec<usize>,
    /// New ids below this have out-degree > 0; the rest are dangling.
    pub(crate) nondangling: usize,
    /// Rows of this block (local row k = new id `bounds[me] + k`); sources are new ids.
    pub graph: PullGraph,
    /// Input index of each local row.
    pub(crate) orig: Vec<u32>,
    /// Dangling mass of the start vector 1/n, summed as the local version sums it.
    pub(crate) dangling0: f64,
}

/// Owner of `v` under the even block distribution of `0..n` over `p` (block q starts
/// at ⌊q·n/p⌋). In 64 bits, as it runs once or twice per edge while loading (a 128-bit
/// division is a library call): v < n ≤ 2^32 − 1 (32-bit vertex ids) and p < 2^32, so
/// (v + 1)·p < 2^64.
pub(crate) fn even_owner(v: usize, n: usize, p: usize) -> usize {
    (((v as u64 + 1) * p as u64 - 1) / n as u64) as usize
}

pub(crate) fn even_start(q: usize, n: usize, p: usize) -> usize {
    ((q as u128 * n as u128) / p as u128) as usize
}

/// Owner of `v` under arbitrary (sorted) block bounds.
#[inline]
fn bounds_owner(bounds: &[usize], v: usize) -> usize {
    bounds.partition_point(|&b| b <= v) - 1
}

/// Orders items (edges, `[src, dst]` pairs or weighted edges) by destination
/// process: `each` calls its argument on every item (the same sequence both times it
/// is called). Returns the send buffer and counts.
pub(super) fn bucket<E: Pod>(
    me: usize,
    p: usize,
    len: usize,
    each: impl Fn(&mut dyn FnMut(E)),
    owner: impl Fn(&E) -> usize,
) -> DistResult<(Vec<E>, Vec<usize>)> {
    let mut counts = vec![0usize; p];
    each(&mut |e| counts[owner(&e)] += 1);
    bucket_counted(me, len, counts, each, owner)
}

/// [`bucket`] with the items per process already counted (`counts[q]` of the `len`
/// items go to q), for callers that know them without producing every item: `each`
/// then runs once.
pub(super) fn bucket_counted<E: Pod>(
    me: usize,
    len: usize,
    counts: Vec<usize>,
    each: impl Fn(&mut dyn FnMut(E)),
    owner: impl Fn(&E) -> usize,
) -> DistResult<(Vec<E>, Vec<usize>)> {
    let p = counts.len();
    let mut at: Vec<usize> = Vec::with_capacity(p);
    let mut s = 0;
    for &c in &counts {
        at.push(s);
        s += c;
    }
    debug_assert_eq!(s, len);
    let mut send = try_zeroed::<E>(len, me, "the edges to send to their owners")?;
    each(&mut |e| {
        let q = owner(&e);
        send[at[q]] = e;
        at[q] += 1;
    });
    Ok((send, counts))
}

/// In-CSR of rows `lo..lo + rows` from `[src, dst]` pairs (every dst in range):
/// counting sort by row, then each row's sources sorted (and deduplicated if asked).
pub(super) fn csr_by_target(me: usize, lo: usize, rows: usize, pairs: &[[u32; 2]], dedup: bool) -> DistResult<(Vec<usize>, Vec<u32>)> {
    let mut ptr = try_zeroed::<usize>(rows + 1, me, "the row pointers of the local rows")?;
    for e in pairs {
        ptr[e[1] as usize - lo + 1] += 1;
    }
    for i in 0..rows {
        ptr[i + 1] += ptr[i];
    }
    let mut next = try_zeroed::<usize>(rows, me, "the row cursors of the local rows")?;
    next.copy_from_slice(&ptr[..rows]);
    let mut src = try_zeroed::<u32>(pairs.len(), me, "the local edges")?;
    for e in pairs {
        let r = e[1] as usize - lo;
        src[next[r]] = e[0];
        next[r] += 1;
    }
    drop(next);
    if !dedup {
        for i in 0..rows {
            src[ptr[i]..ptr[i + 1]].sort_unstable();
        }
        return Ok((ptr, src));
    }
    let mut w = 0usize;
    let mut start = 0usize;
    for i in 0..rows {
        let end = ptr[i + 1];
        src[start..end].sort_unstable();
        let row_start = w;
        for k in start..end {
            let s = src[k];
            if w == row_start || src[w - 1] != s {
                src[w] = s;
                w += 1;
            }
        }
        start = end;
        ptr[i + 1] = w;
    }
    src.truncate(w);
    src.shrink_to_fit();
    Ok((ptr, src))
}

/// Step 2: edges to the owner of their target (even blocks of the dense numbering),
/// duplicates removed.
pub(crate) fn route_and_dedup(comm: &mut Comm<'_>, raw: RawEdges) -> DistResult<Routed> {
    let (p, me, n) = (comm.p, comm.me, raw.n);
    let RawEdges { src, dst, .. } = raw;
    let each = |f: &mut dyn FnMut([u32; 2])| {
        for (&u, &v) in src.iter().zip(&dst) {
            f([u, v])
        }
    };
    let (send, counts) = bucket(me, p, src.len(), each, |e| even_owner(e[1] as usize, n, p))?;
    drop(src);
    drop(dst);
    let (recv, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let lo = even_start(me, n, p);
    let hi = even_start(me + 1, n, p);
    let (ptr, src) = csr_by_target(me, lo, hi - lo, &recv, true)?;
    Ok(Routed { n, lo, ptr, src })
}

/// Steps 3-4: global degrees, the global order, row blocks, and this process's rows.
pub(crate) fn renumber_and_distribute(comm: &mut Comm<'_>, routed: Routed) -> DistResult<LocalGraph> {
    let (p, me, n) = (comm.p, comm.me, routed.n);
    // Degrees packed as out << 32 | in, summed over the processes (wrapping adds of
    // packed words are the packed sums: in-degrees stay below 2^32).
    let mut deg = try_zeroed::<u64>(n, me, "the vertex degrees")?;
    for i in 0..routed.rows() {
        deg[routed.lo + i] += (routed.ptr[i + 1] - routed.ptr[i]) as u64;
    }
    for &s in &routed.src {
        deg[s as usize] += 1 << 32;
    }
    comm.allreduce_sum_u64_long(&mut deg)?;
    let outdeg = |v: usize| (deg[v] >> 32) as usize;
    // Stable counting sort by decreasing out-degree: ties keep the input order, as in
    // the local PullGraph.
    let maxd = (0..n).map(outdeg).max().unwrap_or(0);
    let mut start = try_zeroed::<usize>(maxd + 2, me, "the degree buckets")?;
    for v in 0..n {
        start[maxd - outdeg(v) + 1] += 1;
    }
    for d in 0..=maxd {
        start[d + 1] += start[d];
    }
    let mut order = try_zeroed::<u32>(n, me, "the global vertex order")?;
    let mut new_id = try_zeroed::<u32>(n, me, "the global renumbering")?;
    for v in 0..n {
        let b = &mut start[maxd - outdeg(v)];
        order[*b] = v as u32;
        new_id[v] = *b as u32;
        *b += 1;
    }
    drop(start);
    let nondangling = (0..n).filter(|&v| outdeg(v) > 0).count();
    // Prefix sums of the row costs in the new order; blocks of equal cost.
    // The constants (crate::settings::PROC_ROW_COST, fitted) or GBPR_PROC_ROW_COST.
    let (full_cost, empty_cost) = crate::settings::Settings::from_env()?.proc_row_costs;
    let mut cost_ptr = try_zeroed::<usize>(0, me, "")?;
    cost_ptr.try_reserve_exact(n + 1).map_err(|_| oom((n + 1) * 8, me, "the row costs"))?;
    cost_ptr.push(0usize);
    let mut acc = 0usize;
    for &v in &order {
        let indeg = (deg[v as usize] & 0xffff_ffff) as usize;
        acc += indeg + if indeg > 0 { full_cost } else { empty_cost };
        cost_ptr.push(acc);
    }
    let bounds = balanced_row_blocks_weighted(&cost_ptr, p, 0);
    drop(cost_ptr);
    let share = 1.0 / n as f64;
    let mut dangling0 = 0.0;
    for _ in nondangling..n {
        dangling0 += share;
    }

    // Step 4: re-route every edge, in new ids, to the owner of its new target row.
    let local_edges = routed.src.len();
    let each = |f: &mut dyn FnMut([u32; 2])| {
        for i in 0..routed.rows() {
            let t = new_id[routed.lo + i];
            for &s in &routed.src[routed.ptr[i]..routed.ptr[i + 1]] {
                f([new_id[s as usize], t])
            }
        }
    };
    // Counted by row (an edge goes where its target row goes), so that the sources'
    // new ids, a random gather per edge, are looked up once, in the filling pass.
    let mut counts = vec![0usize; p];
    for i in 0..routed.rows() {
        counts[bounds_owner(&bounds, new_id[routed.lo + i] as usize)] += routed.ptr[i + 1] - routed.ptr[i];
    }
    let (send, counts) = bucket_counted(me, local_edges, counts, each, |e| bounds_owner(&bounds, e[1] as usize))?;
    drop(routed);
    drop(new_id);
    let (recv, _) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let (lo, hi) = (bounds[me], bounds[me + 1]);
    let (ptr, src) = csr_by_target(me, lo, hi - lo, &recv, false)?;
    drop(recv);
    let inv_outdeg: Vec<f64> = order[lo..hi]
        .iter()
        .map(|&v| {
            let d = outdeg(v as usize);
            if d > 0 {
                1.0 / d as f64
            } else {
                0.0
            }
        })
        .collect();
    let orig = order[lo..hi].to_vec();
    let nnz = comm.sum_u64(local_edges as u64)?;
    Ok(LocalGraph {
        n,
        nnz,
        bounds,
        nondangling,
        graph: PullGraph::from_parts(hi - lo, ptr, src, inv_outdeg),
        orig,
        dangling0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_owner_matches_even_start() {
        for n in 1..60 {
            for p in 1..9 {
                for v in 0..n {
                    let q = even_owner(v, n, p);
                    assert!(even_start(q, n, p) <= v && v < even_start(q + 1, n, p), "n {n} p {p} v {v}");
                }
            }
        }
    }

    #[test]
    fn even_owner_at_the_largest_ids() {
        let n = u32::MAX as usize;
        for p in [1, 2, 3, 7, 1000, 65_537, u32::MAX as usize - 1] {
            for v in [0, 1, n / 2, n - 2, n - 1] {
                let q = even_owner(v, n, p);
                assert!(q < p && even_start(q, n, p) <= v && v < even_start(q + 1, n, p), "n {n} p {p} v {v}");
            }
        }
    }

    #[test]
    fn bounds_owner_skips_empty_blocks() {
        let b = [0, 0, 3, 3, 5];
        assert_eq!(bounds_owner(&b, 0), 1);
        assert_eq!(bounds_owner(&b, 2), 1);
        assert_eq!(bounds_owner(&b, 3), 3);
        assert_eq!(bounds_owner(&b, 4), 3);
    }

    #[test]
    fn csr_dedups_and_sorts() {
        let pairs = [[5, 11], [2, 10], [5, 11], [1, 11], [2, 10], [0, 12]];
        let (ptr, src) = csr_by_target(0, 10, 3, &pairs, true).unwrap();
        assert_eq!(ptr, vec![0, 1, 3, 4]);
        assert_eq!(src, vec![2, 1, 5, 0]);
    }
}
