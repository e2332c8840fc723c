//! Element-wise operations on vectors and matrices: `ewise_add`, `ewise_mult`,
//! `apply`, select and the pattern of a matrix in another domain.

use crate::algebra::{BinaryOp, Scalar};
use crate::error::GrbResult;
use crate::matrix::{Compressed, Matrix};
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};
use super::*;

/// Element-wise combination of two bitmaps in parallel blocks; `f` sees
/// `(u(i), v(i))` as options and returns the result entry. `only_where_u`: `f(None, _)`
/// is `None` (an intersection, a select or an apply of `u`), so a sparse `u` of few
/// entries is all the work.
fn elementwise<T: Scalar>(
    u: &Vector<T>,
    v: &Vector<T>,
    mask: Option<&Mask>,
    threads: usize,
    f: impl Fn(Option<T>, Option<T>) -> Option<T> + Sync,
    only_where_u: bool,
) -> GrbResult<Computed<T>> {
    if let (true, Vector::Sparse { n, idx: ui, val: uv }) = (only_where_u, u) {
        if ui.len().saturating_mul(SPARSE_RESULT) <= *n {
            // `f(None, _)` is `None`: the result needs u's few entries and v's at them
            // (read directly when v is dense, searched ahead when it is sparse).
            let (mut idx, mut val) = (Vec::new(), Vec::new());
            let mut from = 0;
            for (&i, &x) in ui.iter().zip(uv) {
                if mask.is_some_and(|m| !m.allows(i as usize)) {
                    continue;
                }
                let b = match v {
                    Vector::Dense(vv) => Some(vv[i as usize]),
                    Vector::Sparse { idx: vi, val: vv, .. } => match vi[from..].binary_search(&i) {
                        Ok(p) => {
                            from += p + 1;
                            Some(vv[from - 1])
                        }
                        Err(p) => {
                            from += p;
                            None
                        }
                    },
                };
                if let Some(z) = f(Some(x), b) {
                    idx.push(i);
                    val.push(z);
                }
            }
            return Ok(Computed::Sparse(Vector::Sparse { n: *n, idx, val }));
        }
    }
    if let (Vector::Sparse { n, idx: ui, val: uv }, Vector::Sparse { idx: vi, val: vv, .. }) = (u, v) {
        if (ui.len() + vi.len()).saturating_mul(SPARSE_RESULT) <= *n {
            // Few entries: merged, without touching n positions.
            let allowed = |i: u32| mask.is_none_or(|m| m.allows(i as usize));
            let (idx, val) = merge_sorted(ui, uv, vi, vv, &f);
            let (idx, val) = idx.into_iter().zip(val).filter(|&(i, _)| allowed(i)).unzip();
            return Ok(Computed::Sparse(Vector::Sparse { n: *n, idx, val }));
        }
    }
    let (ub, vb) = (u.to_bitmap(), v.to_bitmap());
    let n = ub.val.len();
    let mut out = Bitmap { val: vec![T::zero(); n], present: vec![false; n] };
    let bounds = even_blocks(n, threads);
    let work: Vec<_> = split_by_bounds(&mut out.val, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut out.present, &bounds))
        .zip(bounds.iter().copied())
        .collect();
    let (ub, vb, f) = (&ub, &vb, &f);
    run_blocks(work, |_, ((vals, pres), lo)| {
        for (r, (o, p)) in vals.iter_mut().zip(pres.iter_mut()).enumerate() {
            let i = lo + r;
            if mask.is_some_and(|m| !m.allows(i)) {
                continue;
            }
            let a = ub.present[i].then(|| ub.val[i]);
            let b = vb.present[i].then(|| vb.val[i]);
            if let Some(z) = f(a, b) {
                *o = z;
                *p = true;
            }
        }
    })?;
    Ok(out.into())
}

/// `w<mask> = accum(w, u ⊕ v)` over the *union* of the patterns
/// (GrB_eWiseAdd): where only one operand is present its value is copied.
pub fn ewise_add<T: Scalar, B: BinaryOp<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    op: B,
    u: &Vector<T>,
    v: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    dims("ewise_add", "second operand length", u.len(), v.len())?;
    let t = elementwise(u, v, mask, desc.threads.max(1), |a, b| match (a, b) {
        (Some(x), Some(y)) => Some(op.apply(x, y)),
        (x, None) => x,
        (None, y) => y,
    }, false)?;
    write_back("ewise_add", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, u ⊗ v)` over the *intersection* of the patterns
/// (GrB_eWiseMult).
pub fn ewise_mult<T: Scalar, B: BinaryOp<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    op: B,
    u: &Vector<T>,
    v: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    dims("ewise_mult", "second operand length", u.len(), v.len())?;
    let t = elementwise(u, v, mask, desc.threads.max(1), |a, b| match (a, b) {
        (Some(x), Some(y)) => Some(op.apply(x, y)),
        _ => None,
    }, true)?;
    write_back("ewise_mult", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, f(u))` on the pattern of `u` (GrB_apply with a unary
/// operator; bind a binary operator with a closure).
pub(crate) fn apply<T: Scalar, F: Fn(T) -> T + Sync>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    f: F,
    u: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let t = elementwise(u, u, mask, desc.threads.max(1), |a, _| a.map(&f), true)?;
    write_back("apply", w, t, mask, accum, desc.replace)
}

/// `f` applied to every stored value of `a`, keeping the pattern.
pub fn apply_matrix<T: Scalar, F: Fn(T) -> T + Sync>(a: &Matrix<T>, f: F, threads: usize) -> GrbResult<Matrix<T>> {
    let c = a.csr();
    let mut val = vec![T::zero(); c.val.len()];
    let bounds = even_blocks(val.len(), threads);
    let work: Vec<_> = split_by_bounds(&mut val, &bounds).into_iter().zip(bounds.iter().copied()).collect();
    run_blocks(work, |_, (out, lo)| {
        for (r, o) in out.iter_mut().enumerate() {
            *o = f(c.val[lo + r]);
        }
    })?;
    Ok(Matrix::from_csr(a.nrows(), a.ncols(), Compressed { ptr: c.ptr.clone(), idx: c.idx.clone(), val }))
}


/// `C = A ⊕ B` on the union of the patterns (GrB_Matrix_eWiseAdd): where both hold
/// an entry, `op(a, b)`; where one does, its value. The neighbour pattern of a
/// directed graph is `A ∪ Aᵀ`.
pub(crate) fn ewise_add_matrix<T: Scalar, B: BinaryOp<T>>(a: &Matrix<T>, b: &Matrix<T>, op: B, threads: usize) -> GrbResult<Matrix<T>> {
    dims("ewise_add_matrix", "rows of the second operand", a.nrows(), b.nrows())?;
    dims("ewise_add_matrix", "columns of the second operand", a.ncols(), b.ncols())?;
    let (ca, cb) = (a.csr(), b.csr());
    let bounds = balanced_row_blocks(&ca.ptr, threads.max(1));
    matrix_by_row_blocks(a.nrows(), a.ncols(), &bounds, |lo, hi, out| {
        for i in lo..hi {
            let ((ia, va), (ib, vb)) = (ca.line(i), cb.line(i));
            let (mut x, mut y) = (0, 0);
            while x < ia.len() || y < ib.len() {
                let (j, v) = match (ia.get(x), ib.get(y)) {
                    (Some(&ja), Some(&jb)) if ja == jb => {
                        (x, y) = (x + 1, y + 1);
                        (ja, op.apply(va[x - 1], vb[y - 1]))
                    }
                    (Some(&ja), jb) if jb.is_none_or(|&jb| ja < jb) => {
                        x += 1;
                        (ja, va[x - 1])
                    }
                    _ => {
                        y += 1;
                        (ib[y - 1], vb[y - 1])
                    }
                };
                out.idx.push(j);
                out.val.push(v);
            }
            out.end_row();
        }
    })
}

/// The entries `(i, j, v)` of `a` with `keep(i, j, v)` (GrB_Matrix_select with an
/// index-aware predicate; e.g. `i != j`, GrB_OFFDIAG, drops self-loops).
pub(crate) fn select_matrix<T: Scalar, F: Fn(usize, usize, T) -> bool + Sync>(a: &Matrix<T>, keep: F, threads: usize) -> GrbResult<Matrix<T>> {
    let c = a.csr();
    let bounds = balanced_row_blocks(&c.ptr, threads.max(1));
    matrix_by_row_blocks(a.nrows(), a.ncols(), &bounds, |lo, hi, out| {
        for i in lo..hi {
            let (idx, val) = c.line(i);
            for (&j, &v) in idx.iter().zip(val) {
                if keep(i, j as usize, v) {
                    out.idx.push(j);
                    out.val.push(v);
                }
            }
            out.end_row();
        }
    })
}

/// `x` at every stored position of `a` (GrB_Matrix_apply with GxB_ONE's kind of
/// operator): the pattern of `a` in another domain, e.g. a `bool` adjacency as `u32`
/// edge counts to add.
pub(crate) fn pattern_with<T: Scalar, X: Scalar>(a: &Matrix<T>, x: X) -> GrbResult<Matrix<X>> {
    let c = a.csr();
    Matrix::from_csr_parts(a.nrows(), a.ncols(), c.ptr.clone(), c.idx.clone(), vec![x; c.idx.len()])
}
