//! Monoid reductions of a vector or a matrix to a scalar, and of a matrix's rows to
//! a vector.

use crate::algebra::{Monoid, Scalar};
use crate::error::GrbResult;
use crate::matrix::Matrix;
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};
use super::*;

/// Monoid reduction of all present entries of `u` to a scalar
/// (GrB_Vector_reduce); the identity if none are present.
pub fn reduce_vector<T: Scalar, M: Monoid<T>>(monoid: M, u: &Vector<T>, threads: usize) -> GrbResult<T> {
    let vals: &[T] = match u {
        Vector::Dense(v) => v,
        Vector::Sparse { val, .. } => val,
    };
    let bounds = even_blocks(vals.len(), threads);
    let work: Vec<&[T]> = bounds.windows(2).map(|w| &vals[w[0]..w[1]]).collect();
    let parts = run_blocks(work, |_, part| part.iter().fold(monoid.identity(), |acc, &x| monoid.apply(acc, x)))?;
    Ok(parts.into_iter().fold(monoid.identity(), |acc, x| monoid.apply(acc, x)))
}

/// `w<mask> = accum(w, ⊕_j A(i, j))`: reduces each row (each column with
/// `desc.transpose_a`) to one entry; empty rows give no entry
/// (GrB_Matrix_reduce_Monoid). Row reduction of an adjacency matrix with
/// `Plus` over ones is the out-degree vector.
pub fn reduce_to_vector<T: Scalar, M: Monoid<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    monoid: M,
    a: &Matrix<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let c = if desc.transpose_a { a.csc() } else { a.csr() };
    dims("reduce_to_vector", "output length", c.nmajor(), w.len())?;
    let n = c.nmajor();
    let mut t = Bitmap { val: vec![T::zero(); n], present: vec![false; n] };
    let bounds = balanced_row_blocks(&c.ptr, desc.threads.max(1));
    let work: Vec<_> = split_by_bounds(&mut t.val, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut t.present, &bounds))
        .zip(bounds.iter().copied())
        .collect();
    run_blocks(work, |_, ((vals, pres), lo)| {
        for (r, (o, p)) in vals.iter_mut().zip(pres.iter_mut()).enumerate() {
            let (_, v) = c.line(lo + r);
            if !v.is_empty() {
                *o = v.iter().fold(monoid.identity(), |acc, &x| monoid.apply(acc, x));
                *p = true;
            }
        }
    })?;
    write_back("reduce_to_vector", w, t, mask, accum, desc.replace)
}

/// Monoid reduction of all stored entries of `a` to a scalar.
pub fn reduce_matrix<T: Scalar, M: Monoid<T>>(monoid: M, a: &Matrix<T>, threads: usize) -> GrbResult<T> {
    reduce_vector(monoid, &Vector::Dense(a.csr().val.clone()), threads)
}
