//! Assignment and extraction: a scalar at every masked position, a vector's entries
//! at given indices, and `extract`.

use crate::algebra::{Monoid, Scalar};
use crate::error::{GrbError, GrbResult};
use crate::parallel::{even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};
use super::*;

/// `w<mask> = accum(w, x)` at every position (GrB_Vector_assign_Scalar with
/// GrB_ALL): with a structural mask of a frontier, "the vertices of this level get
/// depth d".
pub fn assign_scalar<T: Scalar>(w: &mut Vector<T>, mask: Option<&Mask>, accum: Option<Accum<T>>, x: T, desc: &Descriptor) -> GrbResult<()> {
    let n = w.len();
    if let (Some(m), None, false) = (mask, accum, desc.replace) {
        dims("assign_scalar", "mask length", n, m.len())?;
        if let Vector::Sparse { idx, val, .. } = &*w {
            if m.count().saturating_mul(SPARSE_RESULT) <= n {
                // A few positions (a BFS level's frontier) merged into the entries.
                let at = m.positions();
                let xs = vec![x; at.len()];
                let (idx, val) = merge_sorted(idx, val, &at, &xs, |old, new| new.or(old));
                *w = Vector::Sparse { n, idx, val };
                return Ok(());
            }
        }
        // The old entries stay outside the mask and `x` lands inside it: one pass over
        // `w`'s own bitmap instead of a full-length `t` and a merge.
        let mut b = w.to_bitmap();
        for i in 0..n {
            if m.allows(i) {
                b.val[i] = x;
                b.present[i] = true;
            }
        }
        *w = b.into_vector();
        return Ok(());
    }
    let t = Bitmap { val: vec![x; n], present: vec![true; n] };
    write_back("assign_scalar", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, u(indices))` (GrB_Vector_extract): `t(k) = u(indices[k])`
/// where present. With `indices` = the values of a parent vector `f`, `extract(f, f)`
/// is the grandparent vector of FastSV and of pointer jumping.
pub fn extract<T: Scalar>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    u: &Vector<T>,
    indices: &[u32],
    desc: &Descriptor,
) -> GrbResult<()> {
    dims("extract", "output length (the number of indices)", indices.len(), w.len())?;
    if let Some(&i) = indices.iter().find(|&&i| i as usize >= u.len()) {
        return Err(GrbError::IndexOutOfBounds { row: i as u64, col: 0, nrows: u.len() as u64, ncols: 1 });
    }
    let n = indices.len();
    let mut t = Bitmap { val: vec![T::zero(); n], present: vec![false; n] };
    let bm;
    let (vals, present): (&[T], Option<&[bool]>) = match u {
        Vector::Dense(v) => (v, None),
        Vector::Sparse { .. } => {
            bm = u.to_bitmap();
            (&bm.val, Some(&bm.present))
        }
    };
    let bounds = even_blocks(n, desc.threads.max(1));
    let work: Vec<_> = split_by_bounds(&mut t.val, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut t.present, &bounds))
        .zip(bounds.iter().copied())
        .collect();
    run_blocks(work, |_, ((val, pres), lo)| {
        for (r, (o, p)) in val.iter_mut().zip(pres.iter_mut()).enumerate() {
            let i = indices[lo + r] as usize;
            if present.is_none_or(|pr| pr[i]) {
                *o = vals[i];
                *p = true;
            }
        }
    })?;
    write_back("extract", w, t, mask, accum, desc.replace)
}

/// `w(indices[k]) ⊕= u(k)` for every present `u(k)` (GrB_Vector_assign with an index
/// list and the monoid as accumulator; an absent `w(i)` takes the value): indices named
/// several times accumulate every value, as SuiteSparse's `GxB_subassign` with an
/// accumulator does. With `indices` = the parent of each vertex this is FastSV's
/// stochastic hooking, `f(f(i)) = min(f(f(i)), m(i))`.
pub fn assign_indices<T: Scalar, M: Monoid<T>>(w: &mut Vector<T>, accum: M, u: &Vector<T>, indices: &[u32]) -> GrbResult<()> {
    dims("assign_indices", "number of indices (the input length)", u.len(), indices.len())?;
    if let Some(&i) = indices.iter().find(|&&i| i as usize >= w.len()) {
        return Err(GrbError::IndexOutOfBounds { row: i as u64, col: 0, nrows: w.len() as u64, ncols: 1 });
    }
    match w {
        Vector::Dense(wv) => {
            for (k, x) in u.entries() {
                let i = indices[k] as usize;
                wv[i] = accum.apply(wv[i], x);
            }
        }
        Vector::Sparse { .. } => {
            let mut b = w.to_bitmap();
            for (k, x) in u.entries() {
                let i = indices[k] as usize;
                b.val[i] = if b.present[i] { accum.apply(b.val[i], x) } else { x };
                b.present[i] = true;
            }
            *w = b.into_vector();
        }
    }
    Ok(())
}
