//! Sparse matrices in compressed form, built from coordinate triples.
//!
//! A [`Matrix`] keeps *both* CSR and CSC. That doubles memory but lets every
//! product be computed in "pull" (gather) form without atomics or a
//! scatter-merge step: `mxv` walks rows of the CSR, `vxm` (= `Aᵀu`) walks rows
//! of the CSC. PageRank's hot loop is exactly such a gather over the CSC.
//! Indices are `u32` (a 4-byte index is a third of the per-edge memory
//! traffic in the floor model), so dimensions are limited to `u32::MAX`.

use crate::algebra::Scalar;
use crate::error::{GrbError, GrbResult};

/// What to do when the same `(row, col)` occurs more than once in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DupPolicy {
    /// Combine duplicates with [`Scalar::plus`] (summing weights).
    Sum,
    /// Keep the value of the first occurrence (in input order).
    KeepFirst,
    /// Keep the smallest value (shortest-path weights: of parallel edges the
    /// lightest counts).
    Min,
    /// Reject the input with [`GrbError::DuplicateEntry`].
    Error,
    /// Only the structure matters: duplicates collapse to one entry and every
    /// stored value is [`Scalar::one`]. This is how graphs are built.
    PatternDedup,
}

/// Coordinate-format entries (the exchange format between readers,
/// generators and matrix construction). `vals == None` means a pattern-only
/// input (every entry is implicitly "one").
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    /// Number of rows of the matrix these entries belong to.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// 0-based row indices.
    pub rows: Vec<u32>,
    /// 0-based column indices.
    pub cols: Vec<u32>,
    /// Values, parallel to `rows`/`cols`, or `None` for a pattern.
    pub(crate) vals: Option<Vec<T>>,
}

impl<T: Scalar> Coo<T> {
    /// An empty pattern (no values) of the given shape.
    pub fn new_pattern(nrows: usize, ncols: usize) -> Self {
        Coo { nrows, ncols, rows: Vec::new(), cols: Vec::new(), vals: None }
    }

    /// An empty valued set of entries of the given shape.
    pub(crate) fn new_valued(nrows: usize, ncols: usize) -> Self {
        Coo { nrows, ncols, rows: Vec::new(), cols: Vec::new(), vals: Some(Vec::new()) }
    }

    /// Number of entries (counting duplicates).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if there are no entries.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Removes diagonal entries (self-loops of a graph), keeping order.
    pub(crate) fn remove_self_loops(&mut self) {
        let mut w = 0;
        for k in 0..self.rows.len() {
            if self.rows[k] != self.cols[k] {
                self.rows[w] = self.rows[k];
                self.cols[w] = self.cols[k];
                if let Some(v) = self.vals.as_mut() {
                    v[w] = v[k];
                }
                w += 1;
            }
        }
        self.rows.truncate(w);
        self.cols.truncate(w);
        if let Some(v) = self.vals.as_mut() {
            v.truncate(w);
        }
    }

    /// Appends the entries of `other` (e.g. chunks read by different
    /// threads). The shape becomes the maximum of both; if exactly one side
    /// has values, the other side's entries get [`Scalar::one`].
    pub fn append(&mut self, other: Coo<T>) {
        self.nrows = self.nrows.max(other.nrows);
        self.ncols = self.ncols.max(other.ncols);
        let (old_len, add_len) = (self.rows.len(), other.rows.len());
        match (self.vals.as_mut(), other.vals) {
            (None, None) => {}
            (Some(v), Some(ov)) => v.extend(ov),
            (Some(v), None) => v.extend(std::iter::repeat_n(T::one(), add_len)),
            (None, Some(ov)) => {
                let mut v = vec![T::one(); old_len];
                v.extend(ov);
                self.vals = Some(v);
            }
        }
        self.rows.extend(other.rows);
        self.cols.extend(other.cols);
    }
}

/// The lines of one compressed orientation without their values (the pattern a graph
/// kernel walks): line k lists the minor indices `idx[ptr[k]..ptr[k + 1]]`.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a> {
    ptr: &'a [usize],
    idx: &'a [u32],
}

impl<'a> Rows<'a> {
    pub(crate) fn of<T>(c: &'a Compressed<T>) -> Rows<'a> {
        Rows { ptr: &c.ptr, idx: &c.idx }
    }

    #[inline]
    pub(crate) fn line(&self, k: usize) -> &'a [u32] {
        &self.idx[self.ptr[k]..self.ptr[k + 1]]
    }

    #[inline]
    pub(crate) fn len(&self, k: usize) -> u64 {
        (self.ptr[k + 1] - self.ptr[k]) as u64
    }

    /// The number of lines.
    pub(crate) fn count(&self) -> usize {
        self.ptr.len() - 1
    }
}

/// One compressed orientation: CSR (rows are "major") or CSC seen as the
/// CSR of the transpose.
#[derive(Clone, Debug, PartialEq)]
pub struct Compressed<T> {
    /// `ptr[i]..ptr[i+1]` is the range of major line `i` in `idx`/`val`.
    pub ptr: Vec<usize>,
    /// Minor indices, strictly increasing within each major line.
    pub(crate) idx: Vec<u32>,
    /// Values parallel to `idx`.
    pub(crate) val: Vec<T>,
}

impl<T: Scalar> Compressed<T> {
    /// Number of major lines.
    pub(crate) fn nmajor(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Indices and values of major line `i`.
    #[inline]
    pub fn line(&self, i: usize) -> (&[u32], &[T]) {
        let (a, b) = (self.ptr[i], self.ptr[i + 1]);
        (&self.idx[a..b], &self.val[a..b])
    }

    /// Transposes (CSR → CSC) by counting sort. Scanning the source in major
    /// order makes the minor indices of the result come out sorted, so no
    /// per-line sort is needed.
    pub(crate) fn transpose(&self, nminor: usize) -> Compressed<T> {
        let nnz = self.idx.len();
        let mut ptr = vec![0usize; nminor + 1];
        for &j in &self.idx {
            ptr[j as usize + 1] += 1;
        }
        for j in 0..nminor {
            ptr[j + 1] += ptr[j];
        }
        let mut next = ptr[..nminor].to_vec();
        let mut idx = vec![0u32; nnz];
        let mut val = vec![T::zero(); nnz];
        for i in 0..self.nmajor() {
            for k in self.ptr[i]..self.ptr[i + 1] {
                let j = self.idx[k] as usize;
                let dst = next[j];
                next[j] += 1;
                idx[dst] = i as u32;
                val[dst] = self.val[k];
            }
        }
        Compressed { ptr, idx, val }
    }
}

/// A sparse `nrows × ncols` matrix stored as CSR and CSC. The CSC is built from
/// the CSR on first use when the matrix was made by [`Matrix::from_csr_parts`]: a
/// distributed block of rows (local rows × all n columns) that is only ever walked by
/// rows must not pay an O(n) column pointer array and a second copy of its edges.
#[derive(Clone, Debug)]
pub struct Matrix<T> {
    nrows: usize,
    ncols: usize,
    csr: Compressed<T>,
    csc: std::sync::OnceLock<Compressed<T>>,
}

/// Equality of the stored entries (the CSC follows from the CSR, built or not).
impl<T: Scalar> PartialEq for Matrix<T> {
    fn eq(&self, other: &Self) -> bool {
        self.nrows == other.nrows && self.ncols == other.ncols && self.csr == other.csr
    }
}

fn check_dim(d: usize) -> GrbResult<()> {
    if d as u64 > u32::MAX as u64 {
        return Err(GrbError::InvalidValue(format!("dimension {d} exceeds u32 index range")));
    }
    Ok(())
}

impl<T: Scalar> Matrix<T> {
    /// Builds a matrix from coordinate entries, resolving duplicates with
    /// `dup`. Runs in O(nnz + nrows + ncols): two stable counting sorts
    /// (by column, then by row) give row-major order with ascending columns
    /// and duplicates adjacent *in input order*, which is what makes
    /// `KeepFirst` well defined.
    pub fn from_coo(coo: &Coo<T>, dup: DupPolicy) -> GrbResult<Matrix<T>> {
        let (nrows, ncols) = (coo.nrows, coo.ncols);
        check_dim(nrows)?;
        check_dim(ncols)?;
        let nnz = coo.rows.len();
        if coo.cols.len() != nnz || coo.vals.as_ref().is_some_and(|v| v.len() != nnz) {
            return Err(GrbError::InvalidValue("coordinate arrays differ in length".into()));
        }
        for k in 0..nnz {
            let (r, c) = (coo.rows[k] as usize, coo.cols[k] as usize);
            if r >= nrows || c >= ncols {
                return Err(GrbError::IndexOutOfBounds {
                    row: r as u64,
                    col: c as u64,
                    nrows: nrows as u64,
                    ncols: ncols as u64,
                });
            }
        }
        // Pass 1: stable counting sort of entry ids by column.
        let by_col = counting_order(&coo.cols, ncols, None);
        // Pass 2: stable counting sort of that order by row.
        let mut row_ptr = vec![0usize; nrows + 1];
        for &r in &coo.rows {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..nrows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let order = counting_order(&coo.rows, nrows, Some((&by_col, &row_ptr)));
        drop(by_col);

        let value = |k: usize| -> T {
            match (&coo.vals, dup) {
                (_, DupPolicy::PatternDedup) | (None, _) => T::one(),
                (Some(v), _) => v[k],
            }
        };
        let mut ptr = Vec::with_capacity(nrows + 1);
        ptr.push(0usize);
        let mut idx: Vec<u32> = Vec::with_capacity(nnz);
        let mut val: Vec<T> = Vec::with_capacity(nnz);
        for i in 0..nrows {
            let line_start = idx.len();
            for &k in &order[row_ptr[i]..row_ptr[i + 1]] {
                let k = k as usize;
                let c = coo.cols[k];
                if idx.len() > line_start && *idx.last().unwrap() == c {
                    match dup {
                        DupPolicy::Sum => {
                            let last = val.last_mut().unwrap();
                            *last = T::plus(*last, value(k));
                        }
                        DupPolicy::Min => {
                            let last = val.last_mut().unwrap();
                            *last = T::smaller(*last, value(k));
                        }
                        DupPolicy::KeepFirst | DupPolicy::PatternDedup => {}
                        DupPolicy::Error => {
                            return Err(GrbError::DuplicateEntry { row: i as u64, col: c as u64 });
                        }
                    }
                } else {
                    idx.push(c);
                    val.push(value(k));
                }
            }
            ptr.push(idx.len());
        }
        idx.shrink_to_fit();
        val.shrink_to_fit();
        let csr = Compressed { ptr, idx, val };
        let csc = csr.transpose(ncols).into();
        Ok(Matrix { nrows, ncols, csr, csc })
    }

    /// A matrix from its CSR arrays (`ptr` of `nrows + 1` offsets, column indices
    /// strictly increasing within each row and below `ncols`, values parallel to
    /// them), checked; the CSC is built on first use. O(nnz) to check.
    pub(crate) fn from_csr_parts(nrows: usize, ncols: usize, ptr: Vec<usize>, idx: Vec<u32>, val: Vec<T>) -> GrbResult<Self> {
        check_dim(nrows)?;
        check_dim(ncols)?;
        let bad = |what: String| Err(GrbError::InvalidValue(format!("CSR arrays of a {nrows} x {ncols} matrix: {what}")));
        if ptr.len() != nrows + 1 || ptr[0] != 0 || ptr[nrows] != idx.len() || val.len() != idx.len() {
            return bad(format!("{} row offsets ending at {:?} for {} indices and {} values", ptr.len(), ptr.last(), idx.len(), val.len()));
        }
        for i in 0..nrows {
            if ptr[i] > ptr[i + 1] {
                return bad(format!("row {i} ends before it starts"));
            }
            let line = &idx[ptr[i]..ptr[i + 1]];
            if line.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!("the columns of row {i} are not strictly increasing"));
            }
            if line.last().is_some_and(|&j| j as usize >= ncols) {
                return bad(format!("row {i} has column {} >= {ncols}", line.last().unwrap()));
            }
        }
        Ok(Matrix { nrows, ncols, csr: Compressed { ptr, idx, val }, csc: std::sync::OnceLock::new() })
    }

    /// [`Matrix::from_csr_parts`] for arrays whose rows the caller has checked (a
    /// converted graph's rows, checked by the threads that read them: offsets
    /// ascending, columns strictly increasing and below `ncols`): only the shape is
    /// checked here, in O(1).
    pub(crate) fn from_checked_csr_parts(nrows: usize, ncols: usize, ptr: Vec<usize>, idx: Vec<u32>, val: Vec<T>) -> GrbResult<Self> {
        check_dim(nrows)?;
        check_dim(ncols)?;
        if ptr.len() != nrows + 1 || ptr[0] != 0 || ptr[nrows] != idx.len() || val.len() != idx.len() {
            return Err(GrbError::InvalidValue(format!(
                "CSR arrays of a {nrows} x {ncols} matrix: {} row offsets ending at {:?} for {} indices and {} values",
                ptr.len(),
                ptr.last(),
                idx.len(),
                val.len()
            )));
        }
        Ok(Matrix { nrows, ncols, csr: Compressed { ptr, idx, val }, csc: std::sync::OnceLock::new() })
    }

    /// Convenience constructor from `(row, col, value)` triples.
    pub fn from_triples(nrows: usize, ncols: usize, triples: &[(usize, usize, T)], dup: DupPolicy) -> GrbResult<Self> {
        let mut coo = Coo::new_valued(nrows, ncols);
        for &(r, c, v) in triples {
            if r >= nrows || c >= ncols || r > u32::MAX as usize || c > u32::MAX as usize {
                return Err(GrbError::IndexOutOfBounds { row: r as u64, col: c as u64, nrows: nrows as u64, ncols: ncols as u64 });
            }
            coo.rows.push(r as u32);
            coo.cols.push(c as u32);
            coo.vals.as_mut().unwrap().push(v);
        }
        Self::from_coo(&coo, dup)
    }

    /// Builds a pattern matrix (all values [`Scalar::one`]) from `(row, col)`
    /// pairs, collapsing duplicates.
    pub fn from_edges(nrows: usize, ncols: usize, edges: &[(usize, usize)]) -> GrbResult<Self> {
        let t: Vec<(usize, usize, T)> = edges.iter().map(|&(r, c)| (r, c, T::one())).collect();
        Self::from_triples(nrows, ncols, &t, DupPolicy::PatternDedup)
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries (after duplicate resolution).
    pub(crate) fn nvals(&self) -> usize {
        self.csr.idx.len()
    }

    /// The bytes its storage holds (the capacities of its vectors, the CSC's if built).
    pub(crate) fn capacity_bytes(&self) -> usize {
        let of = |c: &Compressed<T>| {
            c.ptr.capacity() * std::mem::size_of::<usize>() + c.idx.capacity() * 4 + c.val.capacity() * std::mem::size_of::<T>()
        };
        of(&self.csr) + self.csc.get().map_or(0, of)
    }

    /// Row-major storage.
    pub fn csr(&self) -> &Compressed<T> {
        &self.csr
    }

    /// Whether the CSC exists yet (built at construction, or on the first
    /// [`Matrix::csc`] of a [`Matrix::from_csr_parts`] matrix).
    pub fn csc_is_built(&self) -> bool {
        self.csc.get().is_some()
    }

    /// Column-major storage (equivalently, the CSR of the transpose).
    pub(crate) fn csc(&self) -> &Compressed<T> {
        self.csc.get_or_init(|| self.csr.transpose(self.ncols))
    }

    /// The stored value at `(i, j)`, if any (binary search in row `i`).
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        if i >= self.nrows || j >= self.ncols {
            return None;
        }
        let (idx, val) = self.csr.line(i);
        idx.binary_search(&(j as u32)).ok().map(|k| val[k])
    }

    /// The transpose; O(1) work beyond the clone, since both orientations
    /// are stored.
    pub(crate) fn transpose(&self) -> Matrix<T> {
        Matrix { nrows: self.ncols, ncols: self.nrows, csr: self.csc().clone(), csc: self.csr.clone().into() }
    }

    /// Number of entries in each row (the out-degree for an adjacency
    /// matrix with rows = sources).
    pub fn row_counts(&self) -> Vec<usize> {
        self.csr.ptr.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Number of entries in each column (in-degree).
    pub fn col_counts(&self) -> Vec<usize> {
        self.csc().ptr.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Dense row-major copy with `None` for absent entries (tests, debugging).
    pub fn to_dense(&self) -> Vec<Vec<Option<T>>> {
        let mut d = vec![vec![None; self.ncols]; self.nrows];
        for (i, row) in d.iter_mut().enumerate() {
            let (idx, val) = self.csr.line(i);
            for (&j, &v) in idx.iter().zip(val) {
                row[j as usize] = Some(v);
            }
        }
        d
    }

    /// Internal constructor used by operations that produce a CSR directly.
    pub(crate) fn from_csr(nrows: usize, ncols: usize, csr: Compressed<T>) -> Self {
        let csc = csr.transpose(ncols).into();
        Matrix { nrows, ncols, csr, csc }
    }
}

/// Stable counting sort of entry ids by `key`. With `prior = Some((order,
/// ptr))` it re-sorts the ids in `order` (stable) using precomputed bucket
/// starts `ptr`; otherwise it sorts `0..key.len()`.
fn counting_order(key: &[u32], nbuckets: usize, prior: Option<(&[u32], &[usize])>) -> Vec<u32> {
    assert!(key.len() <= u32::MAX as usize, "more than u32::MAX entries");
    let mut out = vec![0u32; key.len()];
    match prior {
        None => {
            let mut next = vec![0usize; nbuckets + 1];
            for &c in key {
                next[c as usize + 1] += 1;
            }
            for j in 0..nbuckets {
                next[j + 1] += next[j];
            }
            for (k, &c) in key.iter().enumerate() {
                let slot = &mut next[c as usize];
                out[*slot] = k as u32;
                *slot += 1;
            }
        }
        Some((order, ptr)) => {
            let mut next = ptr[..nbuckets].to_vec();
            for &k in order {
                let slot = &mut next[key[k as usize] as usize];
                out[*slot] = k;
                *slot += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::Xoshiro256;

    #[test]
    fn builds_csr_and_csc_sorted() {
        let m = Matrix::from_triples(3, 4, &[(2, 1, 5.0), (0, 3, 1.0), (0, 0, 2.0), (1, 2, 3.0)], DupPolicy::Error).unwrap();
        assert_eq!(m.nvals(), 4);
        assert_eq!(m.csr().ptr, vec![0, 2, 3, 4]);
        assert_eq!(m.csr().idx, vec![0, 3, 2, 1]);
        assert_eq!(m.csr().val, vec![2.0, 1.0, 3.0, 5.0]);
        assert_eq!(m.csc().ptr, vec![0, 1, 2, 3, 4]);
        assert_eq!(m.csc().idx, vec![0, 2, 1, 0]);
        assert_eq!(m.get(2, 1), Some(5.0));
        assert_eq!(m.get(2, 2), None);
        assert_eq!(m.row_counts(), vec![2, 1, 1]);
        assert_eq!(m.col_counts(), vec![1, 1, 1, 1]);
    }

    #[test]
    fn duplicate_policies() {
        let t = [(1, 1, 2i64), (0, 0, 1), (1, 1, 5), (1, 1, 7)];
        let sum = Matrix::from_triples(2, 2, &t, DupPolicy::Sum).unwrap();
        assert_eq!(sum.get(1, 1), Some(14));
        assert_eq!(sum.nvals(), 2);
        let first = Matrix::from_triples(2, 2, &t, DupPolicy::KeepFirst).unwrap();
        assert_eq!(first.get(1, 1), Some(2));
        let pat = Matrix::from_triples(2, 2, &t, DupPolicy::PatternDedup).unwrap();
        assert_eq!(pat.get(1, 1), Some(1));
        assert_eq!(pat.get(0, 0), Some(1));
        let err = Matrix::from_triples(2, 2, &t, DupPolicy::Error).unwrap_err();
        assert_eq!(err, GrbError::DuplicateEntry { row: 1, col: 1 });
    }

    #[test]
    fn rejects_out_of_bounds() {
        let e = Matrix::from_triples(2, 2, &[(0, 2, 1.0)], DupPolicy::Sum).unwrap_err();
        assert!(matches!(e, GrbError::IndexOutOfBounds { row: 0, col: 2, .. }));
        let mut coo = Coo::<f64>::new_pattern(2, 2);
        coo.rows.push(2);
        coo.cols.push(0);
        assert!(Matrix::from_coo(&coo, DupPolicy::PatternDedup).is_err());
    }

    #[test]
    fn empty_and_transpose() {
        let m = Matrix::<f64>::from_triples(0, 0, &[], DupPolicy::Sum).unwrap();
        assert_eq!(m.nvals(), 0);
        assert_eq!(m.csr().ptr, vec![0]);
        let m = Matrix::from_triples(2, 3, &[(0, 2, 4.0), (1, 0, 1.0)], DupPolicy::Sum).unwrap();
        let t = m.transpose();
        assert_eq!((t.nrows(), t.ncols()), (3, 2));
        assert_eq!(t.get(2, 0), Some(4.0));
        assert_eq!(t.get(0, 1), Some(1.0));
        assert_eq!(t.transpose(), m);
    }

    #[test]
    fn coo_self_loops_and_append() {
        let mut a = Coo::<f64>::new_pattern(3, 3);
        a.rows = vec![0, 1, 2];
        a.cols = vec![0, 2, 2];
        a.remove_self_loops();
        assert_eq!((a.rows.clone(), a.cols.clone()), (vec![1], vec![2]));
        let mut b = Coo::<f64>::new_valued(4, 2);
        b.rows = vec![3];
        b.cols = vec![1];
        b.vals = Some(vec![9.0]);
        a.append(b);
        assert_eq!((a.nrows, a.ncols), (4, 3));
        assert_eq!(a.vals, Some(vec![1.0, 9.0]));
    }

    /// Randomized: construction must agree with a dense accumulation of the
    /// same triples for every policy.
    #[test]
    fn random_build_matches_dense() {
        let mut rng = Xoshiro256::new(11);
        for trial in 0..30 {
            let nr = 1 + rng.below(20) as usize;
            let nc = 1 + rng.below(20) as usize;
            let nnz = rng.below(80) as usize;
            let t: Vec<(usize, usize, i64)> = (0..nnz)
                .map(|_| (rng.below(nr as u64) as usize, rng.below(nc as u64) as usize, rng.below(10) as i64 - 5))
                .collect();
            let mut dsum = vec![vec![None::<i64>; nc]; nr];
            let mut dfirst = vec![vec![None::<i64>; nc]; nr];
            for &(r, c, v) in &t {
                dsum[r][c] = Some(dsum[r][c].unwrap_or(0) + v);
                dfirst[r][c].get_or_insert(v);
            }
            assert_eq!(Matrix::from_triples(nr, nc, &t, DupPolicy::Sum).unwrap().to_dense(), dsum, "trial {trial}");
            let kf = Matrix::from_triples(nr, nc, &t, DupPolicy::KeepFirst).unwrap();
            assert_eq!(kf.to_dense(), dfirst);
            assert_eq!(kf.transpose().transpose(), kf);
        }
    }
}
