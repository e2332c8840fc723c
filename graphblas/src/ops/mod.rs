//! GraphBLAS operations: `mxv`, `vxm`, `ewise_add`, `ewise_mult`, `apply`,
//! `reduce_*`, with optional masks, accumulators and a [`Descriptor`].
//!
//! Every vector-producing operation follows the GraphBLAS write-back rule:
//! first the result `t` is computed, then `z = accum(w, t)` (union: where only
//! one side is present it is copied), then `w(i) = z(i)` where the mask
//! allows `i`, and elsewhere `w(i)` is kept (or deleted if `replace`). Masked
//! out rows are not computed at all, which is what makes masks pay (e.g. BFS
//! with the complemented visited set).
//!
//! This module holds the descriptor and the write-back every operation ends with;
//! the operations are in one file per family: `product` (`mxv`, `vxm`, the mode
//! product of CDLP), `elementwise` (`ewise_*`, `apply`, select), `triangles` (the
//! masked product and the triangle sums of LCC), `assign` (assign, extract) and
//! `reduce`.

use crate::algebra::Scalar;
use crate::error::{GrbError, GrbResult};
use crate::matrix::Matrix;
use crate::parallel::run_blocks;
use crate::vector::{Bitmap, Mask, Vector};

mod assign;
mod elementwise;
mod product;
mod reduce;
mod triangles;

pub use assign::*;
pub use elementwise::*;
pub use product::*;
pub use reduce::*;
pub use triangles::*;

/// Accumulator: combines the old output value (left) with the new result.
pub(crate) type Accum<'a, T> = &'a (dyn Fn(T, T) -> T + Sync);

/// How `mxv`/`vxm` traverse the matrix (SuiteSparse's `GxB_AxB_METHOD` for vectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    /// Push when the input vector is sparse and the lines its entries select hold
    /// fewer than 1/[`PUSH_RATIO`] of the entries a pull would read; pull otherwise.
    #[default]
    Auto,
    /// Scatter: walk the matrix lines of the input's entries (the orientation that
    /// holds them: CSR for `vxm`, CSC for `mxv`) and combine products into the output.
    /// Work follows the input's entries; the mask only filters.
    Push,
    /// Gather: every output entry the mask allows reduces its own line against the
    /// input (stopping at a terminal value, e.g. the first hit of `any`). Work follows
    /// the unmasked outputs.
    Pull,
}

/// `Direction::Auto` pushes when a push reads fewer than 1/`PUSH_RATIO` of the entries
/// a full pull would (a push writes scattered outputs, a pull streams its lines).
pub const PUSH_RATIO: usize = 4;

/// Per-call options (GrB_Descriptor plus the thread budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Delete output entries outside the mask (GrB_REPLACE).
    pub replace: bool,
    /// Use the transpose of the matrix operand (GrB_TRAN on input 0/1).
    pub(crate) transpose_a: bool,
    /// Threads this call may use (>= 1).
    pub threads: usize,
    /// Push or pull in `mxv`/`vxm`.
    pub direction: Direction,
}

impl Default for Descriptor {
    fn default() -> Self {
        Descriptor { replace: false, transpose_a: false, threads: 1, direction: Direction::Auto }
    }
}

impl Descriptor {
    /// Default descriptor with the given thread count.
    pub(crate) fn with_threads(threads: usize) -> Self {
        Descriptor { threads: threads.max(1), ..Default::default() }
    }
    /// Sets `replace`.
    pub fn replace(mut self) -> Self {
        self.replace = true;
        self
    }
    /// Sets `transpose_a`.
    pub fn transpose(mut self) -> Self {
        self.transpose_a = true;
        self
    }
    /// Sets the direction of `mxv`/`vxm`.
    pub fn direction(mut self, d: Direction) -> Self {
        self.direction = d;
        self
    }
}

fn dims(op: &'static str, what: &str, expected: usize, got: usize) -> GrbResult<()> {
    if expected != got {
        return Err(GrbError::DimensionMismatch { op, detail: format!("{what}: expected {expected}, got {got}") });
    }
    Ok(())
}

/// An operation's result `t` before the write-back: a bitmap over all n positions,
/// or, when the operation found few entries, those entries alone (a sparse vector), so
/// that the write-back of a small frontier costs the frontier and not n.
enum Computed<T> {
    Bitmap(Bitmap<T>),
    Sparse(Vector<T>),
}

impl<T> From<Bitmap<T>> for Computed<T> {
    fn from(b: Bitmap<T>) -> Self {
        Computed::Bitmap(b)
    }
}

/// A result with at most 1/`SPARSE_RESULT` of n entries is computed as a sparse
/// vector (a sort of its entries) instead of a bitmap of n positions.
const SPARSE_RESULT: usize = 16;

/// The GraphBLAS write-back step `w<mask> = accum(w, t)`.
fn write_back<T: Scalar>(
    op: &'static str,
    w: &mut Vector<T>,
    t: impl Into<Computed<T>>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    replace: bool,
) -> GrbResult<()> {
    let t = match t.into() {
        Computed::Bitmap(t) => t,
        Computed::Sparse(t) => match write_back_sparse(op, w, t, mask, accum, replace)? {
            None => return Ok(()),
            Some(t) => t.to_bitmap(),
        },
    };
    dims(op, "output length", t.val.len(), w.len())?;
    if let Some(m) = mask {
        dims(op, "mask length", w.len(), m.len())?;
    }
    if mask.is_none() && accum.is_none() {
        *w = t.into_vector();
        return Ok(());
    }
    if let (Some(m), None) = (mask, accum) {
        if replace || w.nvals() == 0 {
            // Nothing of the old `w` survives: `t` where the mask allows, nothing
            // elsewhere (a BFS level's `next⟨¬visited, replace⟩`).
            let mut t = t;
            for (i, p) in t.present.iter_mut().enumerate() {
                *p &= m.allows(i);
            }
            *w = t.into_vector();
            return Ok(());
        }
    }
    let old = w.to_bitmap();
    let n = old.val.len();
    let mut out = Bitmap { val: vec![T::zero(); n], present: vec![false; n] };
    for i in 0..n {
        let z = match (accum, old.present[i], t.present[i]) {
            (Some(f), true, true) => Some(f(old.val[i], t.val[i])),
            (Some(_), true, false) => Some(old.val[i]),
            (_, _, true) => Some(t.val[i]),
            (_, _, false) => None,
        };
        let v = if mask.is_none_or(|m| m.allows(i)) {
            z
        } else if replace {
            None
        } else if old.present[i] {
            Some(old.val[i])
        } else {
            None
        };
        if let Some(x) = v {
            out.val[i] = x;
            out.present[i] = true;
        }
    }
    *w = out.into_vector();
    Ok(())
}

/// The write-back of a sparse `t` in the cases that need only its entries (and `w`'s
/// when `w` is sparse): no accumulator and nothing of `w` surviving (`t` where the
/// mask allows), or an accumulator without a mask (`w` ⊕ `t` on the union, by a merge;
/// in place where `w` is dense). `Some(t)` back for the general write-back otherwise.
fn write_back_sparse<T: Scalar>(
    op: &'static str,
    w: &mut Vector<T>,
    t: Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    replace: bool,
) -> GrbResult<Option<Vector<T>>> {
    dims(op, "output length", t.len(), w.len())?;
    if let Some(m) = mask {
        dims(op, "mask length", w.len(), m.len())?;
    }
    let Vector::Sparse { n, idx, val } = t else { return Ok(Some(t)) };
    match (mask, accum) {
        (None, None) => *w = Vector::Sparse { n, idx, val },
        (Some(m), None) if replace || w.nvals() == 0 => {
            let (idx, val) = idx.iter().zip(&val).filter(|(&i, _)| m.allows(i as usize)).map(|(&i, &x)| (i, x)).unzip();
            *w = Vector::Sparse { n, idx, val };
        }
        (None, Some(f)) => match w {
            Vector::Dense(wv) => {
                for (&i, &x) in idx.iter().zip(&val) {
                    wv[i as usize] = f(wv[i as usize], x);
                }
            }
            Vector::Sparse { idx: wi, val: wv, .. } => {
                let (idx, val) = merge_sorted(wi, wv, &idx, &val, |a, b| match (a, b) {
                    (Some(x), Some(y)) => Some(f(x, y)),
                    (x, y) => x.or(y),
                });
                *w = Vector::Sparse { n, idx, val };
            }
        },
        _ => return Ok(Some(Vector::Sparse { n, idx, val })),
    }
    Ok(None)
}

/// The union of two sorted entry lists, `f(a, b)` at each index (`None` for a side
/// without an entry there); entries where `f` gives `None` are left out.
fn merge_sorted<T: Scalar>(
    ai: &[u32],
    av: &[T],
    bi: &[u32],
    bv: &[T],
    f: impl Fn(Option<T>, Option<T>) -> Option<T>,
) -> (Vec<u32>, Vec<T>) {
    let (mut idx, mut val) = (Vec::with_capacity(ai.len() + bi.len()), Vec::with_capacity(ai.len() + bi.len()));
    let (mut x, mut y) = (0, 0);
    while x < ai.len() || y < bi.len() {
        let (i, z) = match (ai.get(x), bi.get(y)) {
            (Some(&i), Some(&j)) if i == j => {
                (x, y) = (x + 1, y + 1);
                (i, f(Some(av[x - 1]), Some(bv[y - 1])))
            }
            (Some(&i), j) if j.is_none_or(|&j| i < j) => {
                x += 1;
                (i, f(Some(av[x - 1]), None))
            }
            _ => {
                y += 1;
                (bi[y - 1], f(None, Some(bv[y - 1])))
            }
        };
        if let Some(z) = z {
            idx.push(i);
            val.push(z);
        }
    }
    (idx, val)
}

/// Rows `lo..hi` of a matrix built by one thread: each row's entries appended to
/// `idx`/`val` (columns strictly increasing), then the row closed by [`RowsOut::end_row`].
struct RowsOut<T> {
    ends: Vec<usize>,
    idx: Vec<u32>,
    val: Vec<T>,
}

impl<T> RowsOut<T> {
    fn end_row(&mut self) {
        self.ends.push(self.idx.len());
    }
}

/// An `nrows × ncols` matrix whose row blocks (`bounds`) are built in parallel, one
/// thread per block, by `block(lo, hi, out)`; the blocks' CSR parts are concatenated.
fn matrix_by_row_blocks<T: Scalar>(
    nrows: usize,
    ncols: usize,
    bounds: &[usize],
    block: impl Fn(usize, usize, &mut RowsOut<T>) + Sync,
) -> GrbResult<Matrix<T>> {
    let ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let parts = run_blocks(ranges, |_, (lo, hi)| {
        let mut out = RowsOut { ends: Vec::with_capacity(hi - lo), idx: Vec::new(), val: Vec::new() };
        block(lo, hi, &mut out);
        debug_assert_eq!(out.ends.len(), hi - lo);
        out
    })?;
    let nnz = parts.iter().map(|b| b.idx.len()).sum();
    let (mut ptr, mut idx, mut val) = (Vec::with_capacity(nrows + 1), Vec::with_capacity(nnz), Vec::with_capacity(nnz));
    ptr.push(0);
    for part in parts {
        let base = idx.len();
        ptr.extend(part.ends.iter().map(|&e| base + e));
        idx.extend_from_slice(&part.idx);
        val.extend_from_slice(&part.val);
    }
    Matrix::from_csr_parts(nrows, ncols, ptr, idx, val)
}

#[cfg(test)]
mod tests;
