//! GraphBLAS operations: `mxv`, `vxm`, `ewise_add`, `ewise_mult`, `apply`,
//! `reduce_*`, with optional masks, accumulators and a [`Descriptor`].
//!
//! Every vector-producing operation follows the GraphBLAS write-back rule:
//! first the result `t` is computed, then `z = accum(w, t)` (union: where only
//! one side is present it is copied), then `w(i) = z(i)` where the mask
//! allows `i`, and elsewhere `w(i)` is kept (or deleted if `replace`). Masked
//! out rows are not computed at all, which is what makes masks pay (e.g. BFS
//! with the complemented visited set).

use crate::algebra::{BinaryOp, Monoid, Scalar, Semiring};
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Compressed, Matrix};
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};

/// Accumulator: combines the old output value (left) with the new result.
pub type Accum<'a, T> = &'a (dyn Fn(T, T) -> T + Sync);

/// Per-call options (GrB_Descriptor plus the thread budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Delete output entries outside the mask (GrB_REPLACE).
    pub replace: bool,
    /// Use the transpose of the matrix operand (GrB_TRAN on input 0/1).
    pub transpose_a: bool,
    /// Threads this call may use (>= 1).
    pub threads: usize,
}

impl Default for Descriptor {
    fn default() -> Self {
        Descriptor { replace: false, transpose_a: false, threads: 1 }
    }
}

impl Descriptor {
    /// Default descriptor with the given thread count.
    pub fn with_threads(threads: usize) -> Self {
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
}

fn dims(op: &'static str, what: &str, expected: usize, got: usize) -> GrbResult<()> {
    if expected != got {
        return Err(GrbError::DimensionMismatch { op, detail: format!("{what}: expected {expected}, got {got}") });
    }
    Ok(())
}

/// The GraphBLAS write-back step `w<mask> = accum(w, t)`.
fn write_back<T: Scalar>(
    op: &'static str,
    w: &mut Vector<T>,
    t: Bitmap<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    replace: bool,
) -> GrbResult<()> {
    dims(op, "output length", t.val.len(), w.len())?;
    if let Some(m) = mask {
        dims(op, "mask length", w.len(), m.len())?;
    }
    if mask.is_none() && accum.is_none() {
        *w = t.into_vector();
        return Ok(());
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

/// Input vector of a gather, specialised so the all-present case has no
/// presence test in the inner loop.
enum Input<'a, T> {
    Dense(&'a [T]),
    Bitmap(&'a Bitmap<T>),
}

/// Row-wise gather `t(i) = ⊕_k mul(A(i,k), x(k))` (or `mul(x(k), A(i,k))`
/// when `VEC_LEFT`) over the major lines of `c`, in parallel over row blocks
/// balanced by nonzeros.
fn gather<T: Scalar, S: Semiring<T>, const VEC_LEFT: bool>(
    c: &Compressed<T>,
    x: &Vector<T>,
    s: S,
    mask: Option<&Mask>,
    threads: usize,
) -> Bitmap<T> {
    let n = c.nmajor();
    let bm;
    let input = match x {
        Vector::Dense(v) => Input::Dense(v.as_slice()),
        Vector::Sparse { .. } => {
            bm = x.to_bitmap();
            Input::Bitmap(&bm)
        }
    };
    let mut val = vec![T::zero(); n];
    let mut present = vec![false; n];
    let bounds = balanced_row_blocks(&c.ptr, threads);
    let work: Vec<_> = split_by_bounds(&mut val, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut present, &bounds))
        .zip(bounds.iter().copied())
        .collect();
    let input = &input;
    run_blocks(work, |_, ((vals, pres), lo)| {
        for (r, (o, p)) in vals.iter_mut().zip(pres.iter_mut()).enumerate() {
            let i = lo + r;
            if mask.is_some_and(|m| !m.allows(i)) {
                continue;
            }
            let (idx, a) = c.line(i);
            let mut acc = s.zero();
            let mut any = false;
            match input {
                Input::Dense(xv) => {
                    for (&j, &aij) in idx.iter().zip(a) {
                        let xj = xv[j as usize];
                        let prod = if VEC_LEFT { s.mul(xj, aij) } else { s.mul(aij, xj) };
                        acc = s.add(acc, prod);
                    }
                    any = !idx.is_empty();
                }
                Input::Bitmap(b) => {
                    for (&j, &aij) in idx.iter().zip(a) {
                        let j = j as usize;
                        if b.present[j] {
                            let prod = if VEC_LEFT { s.mul(b.val[j], aij) } else { s.mul(aij, b.val[j]) };
                            acc = s.add(acc, prod);
                            any = true;
                        }
                    }
                }
            }
            if any {
                *o = acc;
                *p = true;
            }
        }
    });
    Bitmap { val, present }
}

/// `w<mask> = accum(w, A ⊕.⊗ u)` (GrB_mxv). With `desc.transpose_a`,
/// computes `Aᵀ u`. The matrix entry is the *left* multiplicand.
pub fn mxv<T: Scalar, S: Semiring<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    semiring: S,
    a: &Matrix<T>,
    u: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let (c, inner) = if desc.transpose_a { (a.csc(), a.nrows()) } else { (a.csr(), a.ncols()) };
    dims("mxv", "input vector length", inner, u.len())?;
    dims("mxv", "output length", c.nmajor(), w.len())?;
    let t = gather::<T, S, false>(c, u, semiring, mask, desc.threads.max(1));
    write_back("mxv", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, u ⊕.⊗ A)` (GrB_vxm), i.e. `w(j) = ⊕_i u(i) ⊗ A(i,j)`,
/// computed as a gather over the CSC. The vector entry is the *left*
/// multiplicand. With `desc.transpose_a`, uses `Aᵀ`.
pub fn vxm<T: Scalar, S: Semiring<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    semiring: S,
    u: &Vector<T>,
    a: &Matrix<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let (c, inner) = if desc.transpose_a { (a.csr(), a.ncols()) } else { (a.csc(), a.nrows()) };
    dims("vxm", "input vector length", inner, u.len())?;
    dims("vxm", "output length", c.nmajor(), w.len())?;
    let t = gather::<T, S, true>(c, u, semiring, mask, desc.threads.max(1));
    write_back("vxm", w, t, mask, accum, desc.replace)
}

/// Element-wise combination of two bitmaps in parallel blocks; `f` sees
/// `(u(i), v(i))` as options and returns the result entry.
fn elementwise<T: Scalar>(
    u: &Vector<T>,
    v: &Vector<T>,
    mask: Option<&Mask>,
    threads: usize,
    f: impl Fn(Option<T>, Option<T>) -> Option<T> + Sync,
) -> Bitmap<T> {
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
    });
    out
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
    });
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
    });
    write_back("ewise_mult", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, f(u))` on the pattern of `u` (GrB_apply with a unary
/// operator; bind a binary operator with a closure).
pub fn apply<T: Scalar, F: Fn(T) -> T + Sync>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    f: F,
    u: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let t = elementwise(u, u, mask, desc.threads.max(1), |a, _| a.map(&f));
    write_back("apply", w, t, mask, accum, desc.replace)
}

/// `f` applied to every stored value of `a`, keeping the pattern.
pub fn apply_matrix<T: Scalar, F: Fn(T) -> T + Sync>(a: &Matrix<T>, f: F, threads: usize) -> Matrix<T> {
    let c = a.csr();
    let mut val = vec![T::zero(); c.val.len()];
    let bounds = even_blocks(val.len(), threads);
    let work: Vec<_> = split_by_bounds(&mut val, &bounds).into_iter().zip(bounds.iter().copied()).collect();
    run_blocks(work, |_, (out, lo)| {
        for (r, o) in out.iter_mut().enumerate() {
            *o = f(c.val[lo + r]);
        }
    });
    Matrix::from_csr(a.nrows(), a.ncols(), Compressed { ptr: c.ptr.clone(), idx: c.idx.clone(), val })
}

/// Monoid reduction of all present entries of `u` to a scalar
/// (GrB_Vector_reduce); the identity if none are present.
pub fn reduce_vector<T: Scalar, M: Monoid<T>>(monoid: M, u: &Vector<T>, threads: usize) -> T {
    let vals: &[T] = match u {
        Vector::Dense(v) => v,
        Vector::Sparse { val, .. } => val,
    };
    let bounds = even_blocks(vals.len(), threads);
    let work: Vec<&[T]> = bounds.windows(2).map(|w| &vals[w[0]..w[1]]).collect();
    run_blocks(work, |_, part| part.iter().fold(monoid.identity(), |acc, &x| monoid.apply(acc, x)))
        .into_iter()
        .fold(monoid.identity(), |acc, x| monoid.apply(acc, x))
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
    });
    write_back("reduce_to_vector", w, t, mask, accum, desc.replace)
}

/// Monoid reduction of all stored entries of `a` to a scalar.
pub fn reduce_matrix<T: Scalar, M: Monoid<T>>(monoid: M, a: &Matrix<T>, threads: usize) -> T {
    reduce_vector(monoid, &Vector::Dense(a.csr().val.clone()), threads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::*;
    use crate::matrix::DupPolicy;
    use crate::prng::Xoshiro256;

    type Dense<T> = Vec<Option<T>>;

    fn random_matrix(rng: &mut Xoshiro256, nr: usize, nc: usize, density: f64) -> Matrix<i64> {
        let mut t = Vec::new();
        for i in 0..nr {
            for j in 0..nc {
                if rng.next_f64() < density {
                    t.push((i, j, rng.below(7) as i64 - 3));
                }
            }
        }
        Matrix::from_triples(nr, nc, &t, DupPolicy::Error).unwrap()
    }

    fn random_vector(rng: &mut Xoshiro256, n: usize, density: f64) -> Vector<i64> {
        let mut e: Vec<(usize, i64)> = Vec::new();
        for i in 0..n {
            if rng.next_f64() < density {
                e.push((i, rng.below(9) as i64 - 4));
            }
        }
        if density >= 1.0 {
            Vector::dense(e.iter().map(|p| p.1).collect())
        } else {
            Vector::sparse(n, &e).unwrap()
        }
    }

    fn to_dense(v: &Vector<i64>) -> Dense<i64> {
        (0..v.len()).map(|i| v.get(i)).collect()
    }

    /// Dense statement of the GraphBLAS write-back rule, for comparison.
    fn dense_write_back(
        w: &Dense<i64>,
        t: &Dense<i64>,
        mask: Option<&Mask>,
        accum: bool,
        replace: bool,
    ) -> Dense<i64> {
        (0..w.len())
            .map(|i| {
                let z = match (accum, w[i], t[i]) {
                    (true, Some(a), Some(b)) => Some(a + b),
                    (true, Some(a), None) => Some(a),
                    (_, _, b) => b,
                };
                match mask {
                    None => z,
                    Some(m) if m.allows(i) => z,
                    Some(_) if replace => None,
                    Some(_) => w[i],
                }
            })
            .collect()
    }

    fn plus_acc(a: i64, b: i64) -> i64 {
        a + b
    }

    /// Randomized comparison of mxv/vxm (with and without transpose, mask,
    /// complement, accumulator, replace; 1–3 threads; dense and sparse
    /// inputs) against dense arithmetic.
    #[test]
    fn mxv_vxm_random_against_dense() {
        let mut rng = Xoshiro256::new(2024);
        for trial in 0..200 {
            let nr = 1 + rng.below(30) as usize;
            let nc = 1 + rng.below(30) as usize;
            let density = rng.next_f64() * 0.4;
            let a = random_matrix(&mut rng, nr, nc, density);
            let ad = a.to_dense();
            let transpose = rng.below(2) == 1;
            let use_vxm = rng.below(2) == 1;
            // Effective operator: out(i) = sum_k op(i,k) * x(k).
            let (out_n, in_n) = match (use_vxm, transpose) {
                (false, false) | (true, true) => (nr, nc),
                (false, true) | (true, false) => (nc, nr),
            };
            let direct = use_vxm == transpose;
            let eff = |i: usize, k: usize| if direct { ad[i][k] } else { ad[k][i] };
            let density = [0.3, 0.7, 1.0][rng.below(3) as usize];
            let x = random_vector(&mut rng, in_n, density);
            let xd = to_dense(&x);
            let w0 = random_vector(&mut rng, out_n, 0.5);
            let mask_src = random_vector(&mut rng, out_n, 0.6);
            let mask = match rng.below(4) {
                0 => None,
                1 => Some(Mask::values(&mask_src)),
                2 => Some(Mask::structure(&mask_src)),
                _ => Some(Mask::structure(&mask_src).complement()),
            };
            let accum = rng.below(2) == 1;
            let threads = 1 + rng.below(3) as usize;
            let mut desc = Descriptor::with_threads(threads);
            desc.transpose_a = transpose;
            desc.replace = rng.below(2) == 1;

            for which in 0..2 {
                // which 0: plus-times, 1: min-plus.
                let t: Dense<i64> = (0..out_n)
                    .map(|i| {
                        let mut acc: Option<i64> = None;
                        for (k, xk) in xd.iter().enumerate() {
                            if let (Some(aik), Some(xk)) = (eff(i, k), xk) {
                                let p = if which == 0 { aik * xk } else { aik + xk };
                                acc = Some(match acc {
                                    None => p,
                                    Some(s) if which == 0 => s + p,
                                    Some(s) => s.min(p),
                                });
                            }
                        }
                        acc
                    })
                    .collect();
                let expected = dense_write_back(&to_dense(&w0), &t, mask.as_ref(), accum, desc.replace);
                let mut w = w0.clone();
                let acc_fn: Option<Accum<i64>> = if accum { Some(&plus_acc) } else { None };
                let r = match (which, use_vxm) {
                    (0, false) => mxv(&mut w, mask.as_ref(), acc_fn, PLUS_TIMES, &a, &x, &desc),
                    (0, true) => vxm(&mut w, mask.as_ref(), acc_fn, PLUS_TIMES, &x, &a, &desc),
                    (_, false) => mxv(&mut w, mask.as_ref(), acc_fn, MIN_PLUS, &a, &x, &desc),
                    (_, true) => vxm(&mut w, mask.as_ref(), acc_fn, MIN_PLUS, &x, &a, &desc),
                };
                r.unwrap();
                assert_eq!(to_dense(&w), expected, "trial {trial} semiring {which} vxm {use_vxm} T {transpose}");
            }
        }
    }

    #[test]
    fn mxv_hand_example_and_operand_order() {
        // A = [[1, 2], [0, 3]] stored as i64 with (1,0) absent.
        let a = Matrix::from_triples(2, 2, &[(0, 0, 1i64), (0, 1, 2), (1, 1, 3)], DupPolicy::Error).unwrap();
        let u = Vector::dense(vec![10i64, 100]);
        let mut w = Vector::empty(2);
        mxv(&mut w, None, None, PLUS_TIMES, &a, &u, &Descriptor::default()).unwrap();
        assert_eq!(w, Vector::dense(vec![210, 300]));
        // plus-second in mxv takes the vector value; plus-first the matrix value.
        mxv(&mut w, None, None, PLUS_SECOND, &a, &u, &Descriptor::default()).unwrap();
        assert_eq!(w, Vector::dense(vec![110, 100]));
        mxv(&mut w, None, None, PLUS_FIRST, &a, &u, &Descriptor::default()).unwrap();
        assert_eq!(w, Vector::dense(vec![3, 3]));
        // vxm: w(j) = sum_i u(i) A(i,j); plus-first takes the vector value.
        vxm(&mut w, None, None, PLUS_FIRST, &u, &a, &Descriptor::default()).unwrap();
        assert_eq!(w, Vector::dense(vec![10, 110]));
        // Dimension errors are reported, not panics.
        let bad = Vector::dense(vec![1i64; 3]);
        assert!(matches!(
            mxv(&mut w, None, None, PLUS_TIMES, &a, &bad, &Descriptor::default()),
            Err(GrbError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn bfs_level_with_lor_land_and_complemented_mask() {
        // Path 0 -> 1 -> 2 -> 3 plus 0 -> 2. Frontier {0}, visited {0}.
        let a = Matrix::<bool>::from_edges(4, 4, &[(0, 1), (1, 2), (2, 3), (0, 2)]).unwrap();
        let frontier = Vector::sparse(4, &[(0, true)]).unwrap();
        let visited = Vector::sparse(4, &[(0, true), (2, true)]).unwrap();
        let mut next = Vector::empty(4);
        let m = Mask::structure(&visited).complement();
        vxm(&mut next, Some(&m), None, LOR_LAND, &frontier, &a, &Descriptor::default().replace()).unwrap();
        // 2 is reachable but already visited, so only 1 is new.
        assert_eq!(next.entries(), vec![(1, true)]);
    }

    #[test]
    fn ewise_apply_reduce_random_against_dense() {
        let mut rng = Xoshiro256::new(77);
        for trial in 0..100 {
            let n = rng.below(40) as usize;
            let u = random_vector(&mut rng, n, 0.5);
            let vd_density = [0.5, 1.0][rng.below(2) as usize];
            let v = random_vector(&mut rng, n, vd_density);
            let (ud, vd) = (to_dense(&u), to_dense(&v));
            let w0 = random_vector(&mut rng, n, 0.4);
            let mask_src = random_vector(&mut rng, n, 0.5);
            let mask = if rng.below(2) == 0 { None } else { Some(Mask::values(&mask_src).complement()) };
            let accum = rng.below(2) == 1;
            let mut desc = Descriptor::with_threads(1 + rng.below(3) as usize);
            desc.replace = rng.below(2) == 1;
            let acc_fn: Option<Accum<i64>> = if accum { Some(&plus_acc) } else { None };

            let t_add: Dense<i64> = (0..n)
                .map(|i| match (ud[i], vd[i]) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, None) => a,
                    (None, b) => b,
                })
                .collect();
            let mut w = w0.clone();
            ewise_add(&mut w, mask.as_ref(), acc_fn, Max, &u, &v, &desc).unwrap();
            assert_eq!(to_dense(&w), dense_write_back(&to_dense(&w0), &t_add, mask.as_ref(), accum, desc.replace), "add {trial}");

            let t_mul: Dense<i64> = (0..n).map(|i| ud[i].zip(vd[i]).map(|(a, b)| a * b)).collect();
            let mut w = w0.clone();
            ewise_mult(&mut w, mask.as_ref(), acc_fn, Times, &u, &v, &desc).unwrap();
            assert_eq!(to_dense(&w), dense_write_back(&to_dense(&w0), &t_mul, mask.as_ref(), accum, desc.replace), "mult {trial}");

            let t_app: Dense<i64> = ud.iter().map(|x| x.map(|x| 3 * x - 1)).collect();
            let mut w = w0.clone();
            apply(&mut w, mask.as_ref(), acc_fn, |x| 3 * x - 1, &u, &desc).unwrap();
            assert_eq!(to_dense(&w), dense_write_back(&to_dense(&w0), &t_app, mask.as_ref(), accum, desc.replace), "apply {trial}");

            let s: i64 = ud.iter().flatten().sum();
            assert_eq!(reduce_vector(Plus, &u, desc.threads), s);
            let mn = ud.iter().flatten().copied().min().unwrap_or(i64::MAX);
            assert_eq!(reduce_vector(Min, &u, desc.threads), mn);
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)] // 2-D indexing reads clearer here
    fn reduce_matrix_rows_cols_and_apply_matrix() {
        let mut rng = Xoshiro256::new(5);
        for _ in 0..50 {
            let nr = 1 + rng.below(15) as usize;
            let nc = 1 + rng.below(15) as usize;
            let a = random_matrix(&mut rng, nr, nc, 0.3);
            let ad = a.to_dense();
            let threads = 1 + rng.below(3) as usize;
            let mut rows = Vector::empty(nr);
            reduce_to_vector(&mut rows, None, None, Plus, &a, &Descriptor::with_threads(threads)).unwrap();
            for (i, row) in ad.iter().enumerate() {
                let s: Vec<i64> = row.iter().flatten().copied().collect();
                assert_eq!(rows.get(i), if s.is_empty() { None } else { Some(s.iter().sum()) });
            }
            let mut cols = Vector::empty(nc);
            reduce_to_vector(&mut cols, None, None, Max, &a, &Descriptor::with_threads(threads).transpose()).unwrap();
            for j in 0..nc {
                assert_eq!(cols.get(j), (0..nr).filter_map(|i| ad[i][j]).max());
            }
            let total: i64 = ad.iter().flatten().flatten().sum();
            assert_eq!(reduce_matrix(Plus, &a, threads), total);
            let sq = apply_matrix(&a, |x| x * x, threads);
            for i in 0..nr {
                for j in 0..nc {
                    assert_eq!(sq.get(i, j), ad[i][j].map(|x| x * x));
                    assert_eq!(sq.transpose().get(j, i), ad[i][j].map(|x| x * x));
                }
            }
        }
    }

    #[test]
    fn float_plus_times_matches_dense_within_rounding() {
        let mut rng = Xoshiro256::new(99);
        let (nr, nc) = (300, 200);
        let mut t = Vec::new();
        for _ in 0..3000 {
            t.push((rng.below(nr as u64) as usize, rng.below(nc as u64) as usize, rng.next_f64() - 0.5));
        }
        let a = Matrix::from_triples(nr, nc, &t, DupPolicy::Sum).unwrap();
        let x: Vec<f64> = (0..nc).map(|_| rng.next_f64()).collect();
        let mut dense = vec![0.0; nr];
        for &(i, j, v) in &t {
            dense[i] += v * x[j];
        }
        for threads in [1, 2, 4] {
            let mut w = Vector::empty(nr);
            mxv(&mut w, None, None, PLUS_TIMES, &a, &Vector::dense(x.clone()), &Descriptor::with_threads(threads)).unwrap();
            for (i, d) in dense.iter().enumerate() {
                let got = w.get(i).unwrap_or(0.0);
                assert!((got - d).abs() < 1e-12, "row {i}: {got} vs {d}");
            }
        }
    }
}
