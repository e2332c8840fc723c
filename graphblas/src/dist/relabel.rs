//! Dense relabelling of vertex ids: every input path (edge lists, MatrixMarket,
//! binary files, in-memory edges) names vertices by labels — any `u64` — and the
//! vertices of the graph are exactly the labels some edge names. They are numbered
//! `0..n` in ascending label order, the same on every process whatever the
//! partition of the edges, so memory and output are proportional to the vertices and
//! edges that exist, not to the largest label.
//!
//! Two ways to agree on the numbering, chosen collectively from the global smallest and
//! largest labels `m` and `M` (an edge-list file takes `m` = 0: its reader knows only
//! the largest) and the global number of labels named `E`; both give the same numbering:
//!
//! * **bitmap** (labels dense enough: `⌈(M − m + 1)/64⌉ ≤ E` words, so the bitmap is no
//!   larger than the edge list itself): every process marks its labels in a bitmap
//!   over `m..=M`, the bitmaps are OR-ed over the processes (reduce-scatter +
//!   allgather, 2(p − 1)/p · (M − m + 1)/8 bytes), and a label's number is the count of
//!   set bits below it (a per-word prefix count plus one popcount). O(1) per endpoint.
//!   Starting at `m` matters for sign-flipped `i64` ids, where 0 lies at 2^63.
//! * **sparse** (anything else, e.g. hashes as labels): each process deduplicates its
//!   labels in a hash table, sends them to hash owners (alltoallv), the owners sort
//!   and deduplicate, every process gathers the sorted lists (allgatherv, n words) and
//!   sorts them; its table then maps each local label to its position.
//!
//! `GBPR_RELABEL=sparse` forces the sparse way (tests, experiments; `crate::settings`).

use super::comm::{oom, try_filled, try_zeroed, Comm};
use super::{DistError, DistResult};
use crate::prng::mix64;

/// Largest vertex count the u32 internal ids allow.
pub(crate) const MAX_N: u64 = u32::MAX as u64;

pub(crate) fn too_many(n: u64) -> DistError {
    DistError::Invalid(format!("the graph has {n} vertices; at most {MAX_N} are supported (32-bit vertex ids)"))
}

/// A label as read: u32 (MatrixMarket, binary) or u64 (edge lists, Spark).
pub(crate) trait Label: Copy + Send + Sync {
    fn get(self) -> u64;
}
impl Label for u32 {
    #[inline]
    fn get(self) -> u64 {
        self as u64
    }
}
impl Label for u64 {
    #[inline]
    fn get(self) -> u64 {
        self
    }
}

/// The edges in dense numbers and the label of every number.
pub(crate) struct Relabelled {
    pub n: usize,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// `labels[k]`: the label of vertex `k`; ascending.
    pub labels: Vec<u64>,
    /// The numbers of the `extra` labels, in order (the vertex ids' numbers, which the
    /// vertex marks and the check of distinct ids need).
    pub extra: Vec<u32>,
}

/// Relabels this process's edges `(src[k], dst[k])`. Collective; every process gets
/// the same `n` and `labels`.
pub(crate) fn relabel<L: Label>(comm: &mut Comm<'_>, src: &[L], dst: &[L]) -> DistResult<Relabelled> {
    relabel_with_extra(comm, src, dst, &[])
}

/// [`relabel`] with `extra` labels that are vertices too, with or without edges (the
/// vertex ids a caller lists besides its edges): numbered among the others, in label
/// order. Collective.
pub(crate) fn relabel_with_extra<L: Label>(comm: &mut Comm<'_>, src: &[L], dst: &[L], extra: &[L]) -> DistResult<Relabelled> {
    let range = |r: Option<(u64, u64)>, x: &L| {
        let x = x.get();
        Some(r.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))))
    };
    let local_range = extra.iter().fold(src.iter().chain(dst).fold(None, range), range);
    let forced_sparse = crate::settings::Settings::from_env()?.relabel_sparse;
    relabel_all(comm, src, dst, extra, local_range, forced_sparse)
}

/// [`relabel`] given this process's largest label (`None`: no edges), when the
/// reader knows it (one pass over the edges fewer; the bitmap then starts at 0).
pub(crate) fn relabel_with_max<L: Label>(comm: &mut Comm<'_>, src: &[L], dst: &[L], local_max: Option<u64>) -> DistResult<Relabelled> {
    let forced_sparse = crate::settings::Settings::from_env()?.relabel_sparse;
    relabel_all(comm, src, dst, &[], local_max.map(|max| (0, max)), forced_sparse)
}

/// The relabelling of the edges' and the `extra` labels, all within `local_range` (the
/// smallest and largest of them here, or a wider range; `None`: no labels here);
/// `forced_sparse` (this process's `GBPR_RELABEL=sparse`, or a test) takes the sparse
/// way if any process asks for it.
fn relabel_all<L: Label>(
    comm: &mut Comm<'_>,
    src: &[L],
    dst: &[L],
    extra: &[L],
    local_range: Option<(u64, u64)>,
    forced_sparse: bool,
) -> DistResult<Relabelled> {
    let me = comm.me;
    // One max-allreduce of (largest label, complement of the smallest label, "has a
    // label" — u64::MAX + 1 does not fit —, "sparse way forced"; the environment may
    // differ between OS processes, the way taken must not), one sum of the labels named.
    let (local_min, local_max) = local_range.unwrap_or((u64::MAX, 0));
    let mut v = [local_max, !local_min, local_range.is_some() as u64, forced_sparse as u64];
    comm.allreduce_u64(&mut v, |a, b| *a = (*a).max(*b))?;
    let [max, not_min, any, forced_sparse] = v;
    let endpoints = comm.sum_u64((2 * src.len() + extra.len()) as u64)?;
    if any == 0 {
        return Ok(Relabelled { n: 0, src: Vec::new(), dst: Vec::new(), labels: Vec::new(), extra: Vec::new() });
    }
    // The bitmap covers base..=max: sign-flipped i64 ids near 0 lie near 2^63.
    let base = !not_min;
    let words = (max - base) / 64 + 1;
    if words <= endpoints && forced_sparse == 0 {
        let words = words as usize;
        let mut bits = try_zeroed::<u64>(words, me, "the vertex-label bitmap")?;
        for x in src.iter().chain(dst) {
            let x = x.get() - base;
            bits[(x >> 6) as usize] |= 1 << (x & 63);
        }
        for x in extra {
            let x = x.get() - base;
            bits[(x >> 6) as usize] |= 1 << (x & 63);
        }
        comm.allreduce_u64_long(&mut bits, |a, b| a | b)?;
        let n: u64 = bits.iter().map(|w| w.count_ones() as u64).sum();
        if n > MAX_N {
            return Err(too_many(n));
        }
        let mut below = try_zeroed::<u32>(words, me, "the prefix counts of the vertex-label bitmap")?;
        let mut labels = try_zeroed::<u64>(n as usize, me, "the vertex labels")?;
        let mut k = 0usize;
        for (w, &word) in bits.iter().enumerate() {
            below[w] = k as u32;
            let mut b = word;
            while b != 0 {
                labels[k] = base + ((w as u64) << 6 | b.trailing_zeros() as u64);
                k += 1;
                b &= b - 1;
            }
        }
        let number = |x: u64| {
            let x = x - base;
            let (w, bit) = ((x >> 6) as usize, x & 63);
            below[w] + (bits[w] & ((1u64 << bit) - 1)).count_ones()
        };
        number_all(me, src, dst, extra, labels, number)
    } else {
        let mut table = IdTable::new(me)?;
        for x in src.iter().chain(dst) {
            table.insert(x.get())?;
        }
        for x in extra {
            table.insert(x.get())?;
        }
        // Send every distinct label to its hash owner, who deduplicates across senders.
        let p = comm.p;
        let owner = |x: u64| (mix64(x) % p as u64) as usize;
        let mut counts = vec![0usize; p];
        for x in table.keys() {
            counts[owner(x)] += 1;
        }
        let mut at: Vec<usize> = counts
            .iter()
            .scan(0, |s, &c| {
                let o = *s;
                *s += c;
                Some(o)
            })
            .collect();
        let mut send = try_zeroed::<u64>(table.len, me, "the distinct vertex labels")?;
        for x in table.keys() {
            let q = owner(x);
            send[at[q]] = x;
            at[q] += 1;
        }
        let (mut mine, _) = comm.alltoallv(&send, &counts)?;
        drop(send);
        mine.sort_unstable();
        mine.dedup();
        let (mut labels, _) = comm.allgatherv(&mine)?;
        drop(mine);
        labels.sort_unstable();
        let n = labels.len() as u64;
        if n > MAX_N {
            return Err(too_many(n));
        }
        for slot in 0..table.keys.len() {
            if table.vals[slot] != EMPTY {
                let k = labels.binary_search(&table.keys[slot]).expect("every label was gathered");
                table.vals[slot] = k as u32;
            }
        }
        number_all(me, src, dst, extra, labels, |x| table.get(x))
    }
}

/// The edges and the extra labels in dense numbers, `number` mapping a label to its
/// number.
fn number_all<L: Label>(me: usize, src: &[L], dst: &[L], extra: &[L], labels: Vec<u64>, number: impl Fn(u64) -> u32) -> DistResult<Relabelled> {
    let mut s = try_zeroed::<u32>(src.len(), me, "the sources in dense numbers")?;
    let mut d = try_zeroed::<u32>(dst.len(), me, "the targets in dense numbers")?;
    let mut e = try_zeroed::<u32>(extra.len(), me, "the vertex ids in dense numbers")?;
    for (o, x) in s.iter_mut().zip(src) {
        *o = number(x.get());
    }
    for (o, x) in d.iter_mut().zip(dst) {
        *o = number(x.get());
    }
    for (o, x) in e.iter_mut().zip(extra) {
        *o = number(x.get());
    }
    Ok(Relabelled { n: labels.len(), src: s, dst: d, labels, extra: e })
}

const EMPTY: u32 = u32::MAX;

/// Open-addressing set of labels with a `u32` value per label (`EMPTY` = free slot;
/// values are < 2^32 - 1 because n ≤ [`MAX_N`]). Grows fallibly.
struct IdTable {
    keys: Vec<u64>,
    vals: Vec<u32>,
    len: usize,
    me: usize,
}

impl IdTable {
    fn new(me: usize) -> DistResult<IdTable> {
        Ok(IdTable {
            keys: try_zeroed(1024, me, "the table of distinct vertex labels")?,
            vals: try_filled(1024, EMPTY, me, "the table of distinct vertex labels")?,
            len: 0,
            me,
        })
    }

    #[inline]
    fn slot(&self, x: u64) -> usize {
        let mask = self.keys.len() - 1;
        let mut i = mix64(x) as usize & mask;
        while self.vals[i] != EMPTY && self.keys[i] != x {
            i = (i + 1) & mask;
        }
        i
    }

    fn insert(&mut self, x: u64) -> DistResult<()> {
        let i = self.slot(x);
        if self.vals[i] == EMPTY {
            self.keys[i] = x;
            self.vals[i] = 0;
            self.len += 1;
            if 2 * self.len > self.keys.len() {
                self.grow()?;
            }
        }
        Ok(())
    }

    fn grow(&mut self) -> DistResult<()> {
        let cap = self.keys.len() * 2;
        let what = "the table of distinct vertex labels";
        if cap.checked_mul(12).is_none() {
            return Err(oom(usize::MAX, self.me, what));
        }
        let keys = std::mem::replace(&mut self.keys, try_zeroed(cap, self.me, what)?);
        let vals = std::mem::replace(&mut self.vals, try_filled(cap, EMPTY, self.me, what)?);
        for (k, v) in keys.into_iter().zip(vals) {
            if v != EMPTY {
                let i = self.slot(k);
                self.keys[i] = k;
                self.vals[i] = v;
            }
        }
        Ok(())
    }

    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.keys.iter().zip(&self.vals).filter(|(_, &v)| v != EMPTY).map(|(&k, _)| k)
    }

    #[inline]
    fn get(&self, x: u64) -> u32 {
        self.vals[self.slot(x)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::on_processes;

    /// Process q's sources, targets and extra labels.
    type Part = (Vec<u64>, Vec<u64>, Vec<u64>);

    /// Relabels `parts` (one per process) both ways and checks that the vertices are the
    /// union of all endpoints and extra labels, numbered in ascending order, the edges in
    /// those numbers, the same on every process.
    fn check_both_ways(parts: &[Part]) {
        let mut want: Vec<u64> = parts.iter().flat_map(|(s, d, x)| s.iter().chain(d).chain(x).copied()).collect();
        want.sort_unstable();
        want.dedup();
        let number = |x: &u64| want.binary_search(x).unwrap() as u32;
        for sparse in [false, true] {
            let outs = on_processes(parts.len(), |comm| {
                let (src, dst, extra) = &parts[comm.me];
                let all = || src.iter().chain(dst).chain(extra).copied();
                let range = all().min().zip(all().max());
                relabel_all(comm, src, dst, extra, range, sparse)
            });
            for (q, out) in outs.into_iter().enumerate() {
                let r = out.unwrap_or_else(|e| panic!("process {q}: {e}"));
                assert_eq!(r.labels, want, "sparse {sparse} process {q}");
                assert_eq!(r.n, want.len());
                assert_eq!(r.src, parts[q].0.iter().map(number).collect::<Vec<_>>(), "sparse {sparse} process {q}");
                assert_eq!(r.dst, parts[q].1.iter().map(number).collect::<Vec<_>>(), "sparse {sparse} process {q}");
                assert_eq!(r.extra, parts[q].2.iter().map(number).collect::<Vec<_>>(), "sparse {sparse} process {q}");
            }
        }
    }

    /// Issue 25: vertex ids without edges are vertices, numbered among the endpoints.
    /// Dense labels (the bitmap way unless forced sparse): every process lists 5 (no edge
    /// names it), one of its own endpoints and 20 + q; process 1 lists nothing extra.
    #[test]
    fn extra_labels_are_vertices_in_label_order() {
        for p in 1..=3usize {
            let parts: Vec<Part> = (0..p as u64)
                .map(|q| (vec![q, q + 1], vec![10 + q, 2], if q == 1 { vec![] } else { vec![5, q, 20 + q, 5] }))
                .collect();
            check_both_ways(&parts);
        }
    }

    /// Extra labels alone (no edge anywhere), and huge labels (the sparse way however
    /// it is asked), and a process with extra labels only.
    #[test]
    fn extra_labels_without_edges_and_huge_labels() {
        check_both_ways(&[(vec![], vec![], vec![3, 1, 3]), (vec![], vec![], vec![2, 0])]);
        let big = u64::MAX;
        check_both_ways(&[(vec![big, 7], vec![0, big - 1], vec![1 << 63]), (vec![], vec![], vec![big, 12, 1 << 40]), (vec![0], vec![0], vec![])]);
        // Dense around 2^63 (sign-flipped i64 ids near 0): the bitmap starts at the
        // smallest label.
        let zero = 1u64 << 63;
        check_both_ways(&[(vec![zero + 3, zero - 2], vec![zero, zero + 70], vec![zero + 5]), (vec![zero - 2], vec![zero + 200], vec![zero - 64])]);
    }
}
