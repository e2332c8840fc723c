//! Vectors (dense and sparse storage) and masks.
//!
//! A GraphBLAS vector is a *partial* function from indices to values: an
//! absent entry is not the same as a stored zero (it is the semiring's
//! implicit zero, and masks/accumulators treat it differently). `Dense`
//! storage means "every entry present"; `Sparse` stores sorted indices.
//! Operations work internally on a bitmap (values + presence flags),
//! which is O(n) per operation but keeps every kernel a simple, parallel,
//! branch-light loop; PageRank-style algorithms are dense anyway.

use crate::algebra::Scalar;
use crate::error::{GrbError, GrbResult};

/// A vector of length `len()` with some entries present.
#[derive(Clone, Debug, PartialEq)]
pub enum Vector<T> {
    /// All `vals.len()` entries present.
    Dense(Vec<T>),
    /// Only the entries at `idx` (strictly increasing) are present.
    Sparse {
        /// Length of the vector.
        n: usize,
        /// Indices of present entries, strictly increasing.
        idx: Vec<u32>,
        /// Values parallel to `idx`.
        val: Vec<T>,
    },
}

impl<T: Scalar> Vector<T> {
    /// Dense vector from values.
    pub fn dense(vals: Vec<T>) -> Self {
        Vector::Dense(vals)
    }

    /// Dense vector with every entry equal to `x`.
    pub fn filled(n: usize, x: T) -> Self {
        Vector::Dense(vec![x; n])
    }

    /// Empty (no entries present) vector of length `n`.
    pub fn empty(n: usize) -> Self {
        Vector::Sparse { n, idx: Vec::new(), val: Vec::new() }
    }

    /// Sparse vector from `(index, value)` pairs in any order; duplicate
    /// indices are an error.
    pub fn sparse(n: usize, entries: &[(usize, T)]) -> GrbResult<Self> {
        let mut e: Vec<(usize, T)> = entries.to_vec();
        e.sort_by_key(|p| p.0);
        for w in e.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(GrbError::DuplicateEntry { row: w[0].0 as u64, col: 0 });
            }
        }
        if let Some(&(i, _)) = e.last() {
            if i >= n || n > u32::MAX as usize + 1 {
                return Err(GrbError::IndexOutOfBounds { row: i as u64, col: 0, nrows: n as u64, ncols: 1 });
            }
        }
        Ok(Vector::Sparse { n, idx: e.iter().map(|p| p.0 as u32).collect(), val: e.iter().map(|p| p.1).collect() })
    }

    /// Length (dimension), not the number of stored entries.
    pub fn len(&self) -> usize {
        match self {
            Vector::Dense(v) => v.len(),
            Vector::Sparse { n, .. } => *n,
        }
    }

    /// True if the dimension is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of present entries.
    pub(crate) fn nvals(&self) -> usize {
        match self {
            Vector::Dense(v) => v.len(),
            Vector::Sparse { idx, .. } => idx.len(),
        }
    }

    /// Value at `i`, if present.
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Vector::Dense(v) => v.get(i).copied(),
            Vector::Sparse { idx, val, .. } => {
                if i > u32::MAX as usize {
                    return None;
                }
                idx.binary_search(&(i as u32)).ok().map(|k| val[k])
            }
        }
    }

    /// Present entries as `(index, value)` in increasing index order.
    pub fn entries(&self) -> Vec<(usize, T)> {
        match self {
            Vector::Dense(v) => v.iter().copied().enumerate().collect(),
            Vector::Sparse { idx, val, .. } => idx.iter().map(|&i| i as usize).zip(val.iter().copied()).collect(),
        }
    }

    /// Dense values with `fill` at absent positions.
    pub(crate) fn to_dense_with(&self, fill: T) -> Vec<T> {
        match self {
            Vector::Dense(v) => v.clone(),
            Vector::Sparse { n, idx, val } => {
                let mut d = vec![fill; *n];
                for (&i, &x) in idx.iter().zip(val) {
                    d[i as usize] = x;
                }
                d
            }
        }
    }

    /// How many positions of `self` and `other` (of the same length) differ: in value,
    /// or present in one of them only.
    pub(crate) fn differences(&self, other: &Vector<T>) -> usize {
        match (self, other) {
            (Vector::Dense(a), Vector::Dense(b)) => a.iter().zip(b).filter(|(x, y)| x != y).count(),
            _ => {
                let (a, b) = (self.to_bitmap(), other.to_bitmap());
                (0..a.val.len()).filter(|&i| a.present[i] != b.present[i] || (a.present[i] && a.val[i] != b.val[i])).count()
            }
        }
    }

    /// Converts to the internal bitmap form.
    pub(crate) fn to_bitmap(&self) -> Bitmap<T> {
        match self {
            Vector::Dense(v) => Bitmap { val: v.clone(), present: vec![true; v.len()] },
            Vector::Sparse { n, idx, val } => {
                let mut b = Bitmap { val: vec![T::zero(); *n], present: vec![false; *n] };
                for (&i, &x) in idx.iter().zip(val) {
                    b.val[i as usize] = x;
                    b.present[i as usize] = true;
                }
                b
            }
        }
    }
}

/// Values plus presence flags: the working representation of operations.
#[derive(Clone, Debug)]
pub(crate) struct Bitmap<T> {
    pub(crate) val: Vec<T>,
    pub(crate) present: Vec<bool>,
}

impl<T: Scalar> Bitmap<T> {
    /// Converts back, choosing `Dense` when everything is present.
    pub(crate) fn into_vector(self) -> Vector<T> {
        if self.present.iter().all(|&p| p) {
            return Vector::Dense(self.val);
        }
        let n = self.val.len();
        let count = self.present.iter().filter(|&&p| p).count();
        let mut idx = Vec::with_capacity(count);
        let mut val = Vec::with_capacity(count);
        for i in 0..n {
            if self.present[i] {
                idx.push(i as u32);
                val.push(self.val[i]);
            }
        }
        Vector::Sparse { n, idx, val }
    }
}

/// A write mask: position `i` of the output may be written iff
/// `allows(i)`. Built from a vector either by *value* (present and truthy)
/// or by *structure* (present), optionally complemented — the GraphBLAS
/// `GrB_STRUCTURE` / `GrB_COMP` descriptor flags. One bit per position: building
/// one from a sparse vector touches its entries and n/64 zeroed words, complementing
/// it n/64 words, so a frontier's mask costs the frontier, not n.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    bits: Vec<u64>,
    len: usize,
}

impl Mask {
    fn none(len: usize) -> Mask {
        Mask { bits: vec![0; len.div_ceil(64)], len }
    }

    fn set(&mut self, i: usize) {
        self.bits[i / 64] |= 1u64 << (i % 64);
    }

    /// Value mask: allows `i` iff `m(i)` is present and non-zero.
    pub fn values<M: Scalar>(m: &Vector<M>) -> Mask {
        let mut mask = Mask::none(m.len());
        for (i, x) in m.entries() {
            if x.is_truthy() {
                mask.set(i);
            }
        }
        mask
    }

    /// Structural mask: allows `i` iff `m(i)` is present.
    pub fn structure<M: Scalar>(m: &Vector<M>) -> Mask {
        match m {
            Vector::Dense(v) => Mask::none(v.len()).complement(),
            Vector::Sparse { n, idx, .. } => {
                let mut mask = Mask::none(*n);
                for &i in idx {
                    mask.set(i as usize);
                }
                mask
            }
        }
    }

    /// The complemented mask.
    pub fn complement(mut self) -> Mask {
        for w in &mut self.bits {
            *w = !*w;
        }
        if !self.len.is_multiple_of(64) {
            if let Some(last) = self.bits.last_mut() {
                *last &= (1u64 << (self.len % 64)) - 1;
            }
        }
        self
    }

    /// Length of the mask.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length mask.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether position `i` may be written.
    #[inline]
    pub(crate) fn allows(&self, i: usize) -> bool {
        self.bits[i / 64] >> (i % 64) & 1 != 0
    }

    /// How many positions may be written.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The positions that may be written, ascending.
    pub(crate) fn positions(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.count());
        for (k, &w) in self.bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push((k * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_basics() {
        let d = Vector::dense(vec![1.0, 0.0, 3.0]);
        assert_eq!((d.len(), d.nvals()), (3, 3));
        assert_eq!(d.get(1), Some(0.0));
        let s = Vector::sparse(5, &[(3, 2.0), (1, 7.0)]).unwrap();
        assert_eq!((s.len(), s.nvals()), (5, 2));
        assert_eq!(s.get(1), Some(7.0));
        assert_eq!(s.get(2), None);
        assert_eq!(s.entries(), vec![(1, 7.0), (3, 2.0)]);
        assert_eq!(s.to_dense_with(-1.0), vec![-1.0, 7.0, -1.0, 2.0, -1.0]);
        assert!(Vector::sparse(2, &[(2, 1.0)]).is_err());
        assert!(Vector::sparse(3, &[(1, 1.0), (1, 2.0)]).is_err());
        assert_eq!(s.to_bitmap().into_vector(), s);
        assert_eq!(d.to_bitmap().into_vector(), d);
        assert_eq!(Vector::<f64>::empty(4).nvals(), 0);
    }

    #[test]
    fn masks() {
        let m = Vector::sparse(4, &[(0, 1i32), (2, 0)]).unwrap();
        let v = Mask::values(&m);
        let s = Mask::structure(&m);
        assert_eq!((0..4).map(|i| v.allows(i)).collect::<Vec<_>>(), vec![true, false, false, false]);
        assert_eq!((0..4).map(|i| s.allows(i)).collect::<Vec<_>>(), vec![true, false, true, false]);
        let c = s.complement();
        assert_eq!((0..4).map(|i| c.allows(i)).collect::<Vec<_>>(), vec![false, true, false, true]);
        assert_eq!((c.count(), c.positions()), (2, vec![1, 3]));
        // Past one word, and the complement leaves no bit beyond the length.
        let m = Mask::structure(&Vector::sparse(130, &[(0, true), (64, true), (129, true)]).unwrap());
        assert_eq!(m.positions(), vec![0, 64, 129]);
        assert_eq!(m.clone().complement().count(), 127);
        assert_eq!(Mask::structure(&Vector::filled(70, 1u32)).count(), 70);
    }
}
