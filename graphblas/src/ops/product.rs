//! Products of a matrix and a vector: `mxv` and `vxm` (pull gathers or push
//! scatters, as the descriptor asks) and the mode product of CDLP.

use crate::algebra::{Cast, Scalar, Semiring};
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Compressed, Matrix};
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};
use super::*;

/// Input vector of a gather, specialised so the all-present case has no
/// presence test in the inner loop.
enum Input<'a, T> {
    Dense(&'a [T]),
    Bitmap(&'a Bitmap<T>),
}

/// Row-wise gather `t(i) = ⊕_k mul(A(i,k), x(k))` (or `mul(x(k), A(i,k))`
/// when `VEC_LEFT`) over the major lines of `c`, in parallel over row blocks
/// balanced by nonzeros.
fn gather<T: Scalar, A: Cast<T>, S: Semiring<T>, const VEC_LEFT: bool>(
    c: &Compressed<A>,
    x: &Vector<T>,
    s: S,
    mask: Option<&Mask>,
    threads: usize,
) -> GrbResult<Bitmap<T>> {
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
                        let (xj, aij) = (xv[j as usize], aij.cast());
                        let prod = if VEC_LEFT { s.mul(xj, aij) } else { s.mul(aij, xj) };
                        // The first product starts the sum: `any` has no identity.
                        acc = if any { s.add(acc, prod) } else { prod };
                        any = true;
                        if s.is_terminal(acc) {
                            break;
                        }
                    }
                }
                Input::Bitmap(b) => {
                    for (&j, &aij) in idx.iter().zip(a) {
                        let j = j as usize;
                        if b.present[j] {
                            let aij = aij.cast();
                            let prod = if VEC_LEFT { s.mul(b.val[j], aij) } else { s.mul(aij, b.val[j]) };
                            acc = if any { s.add(acc, prod) } else { prod };
                            any = true;
                            if s.is_terminal(acc) {
                                break;
                            }
                        }
                    }
                }
            }
            if any {
                *o = acc;
                *p = true;
            }
        }
    })?;
    Ok(Bitmap { val, present })
}

/// Scatter `t(j) = ⊕ mul(x(k), A(k,j))` (or `mul(A(k,j), x(k))` unless `VEC_LEFT`)
/// over the lines `k` of `c` that the input's entries select: the push form of a
/// product. Threads take even blocks of the input's entries and collect their products;
/// the products are combined in block order, so a result depends only on the thread
/// count (and not at all for idempotent monoids such as min, any, or).
fn scatter<T: Scalar, A: Cast<T>, S: Semiring<T>, const VEC_LEFT: bool>(
    c: &Compressed<A>,
    nout: usize,
    x: &Vector<T>,
    s: S,
    mask: Option<&Mask>,
    threads: usize,
) -> GrbResult<Computed<T>> {
    let entries: Vec<(usize, T)> = x.entries();
    let bounds = even_blocks(entries.len(), threads);
    let work: Vec<&[(usize, T)]> = bounds.windows(2).map(|w| &entries[w[0]..w[1]]).collect();
    let parts = run_blocks(work, |_, part| {
        let mut out: Vec<(u32, T)> = Vec::new();
        for &(k, xk) in part {
            let (idx, a) = c.line(k);
            for (&j, &akj) in idx.iter().zip(a) {
                if mask.is_some_and(|m| !m.allows(j as usize)) {
                    continue;
                }
                let akj = akj.cast();
                out.push((j, if VEC_LEFT { s.mul(xk, akj) } else { s.mul(akj, xk) }));
            }
        }
        out
    })?;
    let products: usize = parts.iter().map(Vec::len).sum();
    if products.saturating_mul(SPARSE_RESULT) <= nout {
        // Few products: sorted by output (stably, so each output's products keep
        // the block order) and summed, without touching n positions.
        let mut all: Vec<(u32, T)> = parts.into_iter().flatten().collect();
        all.sort_by_key(|&(j, _)| j);
        let (mut idx, mut val): (Vec<u32>, Vec<T>) = (Vec::with_capacity(all.len()), Vec::with_capacity(all.len()));
        for (j, prod) in all {
            match (idx.last(), val.last_mut()) {
                (Some(&last), Some(acc)) if last == j => *acc = s.add(*acc, prod),
                _ => {
                    idx.push(j);
                    val.push(prod);
                }
            }
        }
        return Ok(Computed::Sparse(Vector::Sparse { n: nout, idx, val }));
    }
    let mut t = Bitmap { val: vec![s.zero(); nout], present: vec![false; nout] };
    for (j, prod) in parts.into_iter().flatten() {
        let j = j as usize;
        t.val[j] = if t.present[j] { s.add(t.val[j], prod) } else { prod };
        t.present[j] = true;
    }
    Ok(Computed::Bitmap(t))
}

/// The product `t = A ⊕.⊗ u` in the direction `desc` asks for: pull gathers over
/// `pull()`'s lines (one per output), push scatters `push()`'s lines of the input's
/// entries. `Auto` pushes when `u` is sparse and the lines of its entries hold fewer
/// than 1/[`PUSH_RATIO`] of a pull's reads (`pull()`'s entries plus one per output).
/// Only the orientation a product walks is asked for: the other may not be built
/// (a row block's CSC is made on first use, O(nnz + n)).
#[allow(clippy::too_many_arguments)] // the GraphBLAS operation's own operands
fn product<'m, T: Scalar, A: Cast<T>, S: Semiring<T>, const VEC_LEFT: bool>(
    pull: impl Fn() -> &'m Compressed<A>,
    push: impl Fn() -> &'m Compressed<A>,
    nout: usize,
    u: &Vector<T>,
    s: S,
    mask: Option<&Mask>,
    desc: &Descriptor,
) -> GrbResult<Computed<T>> {
    let pushes = match (desc.direction, u) {
        (Direction::Push, _) => true,
        (Direction::Pull, _) | (Direction::Auto, Vector::Dense(_)) => false,
        (Direction::Auto, Vector::Sparse { idx, .. }) => {
            let (c_push, c_pull) = (push(), pull());
            let work: usize = idx.iter().map(|&k| c_push.ptr[k as usize + 1] - c_push.ptr[k as usize]).sum();
            PUSH_RATIO * (work + idx.len()) < c_pull.idx.len() + c_pull.nmajor()
        }
    };
    let threads = desc.threads.max(1);
    if pushes {
        scatter::<T, A, S, VEC_LEFT>(push(), nout, u, s, mask, threads)
    } else {
        gather::<T, A, S, VEC_LEFT>(pull(), u, s, mask, threads).map(Into::into)
    }
}

/// `w<mask> = accum(w, A ⊕.⊗ u)` (GrB_mxv). With `desc.transpose_a`,
/// computes `Aᵀ u`. The matrix entry is the *left* multiplicand, cast to the
/// semiring's domain `T` ([`Cast`]: a `bool` pattern matrix serves any domain).
/// `desc.direction` chooses pull (gather over the rows of the CSR) or push (scatter
/// over the columns of the input's entries, the CSC); the result is the same.
pub fn mxv<T: Scalar, A: Cast<T>, S: Semiring<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    semiring: S,
    a: &Matrix<A>,
    u: &Vector<T>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let (nout, inner) = if desc.transpose_a { (a.ncols(), a.nrows()) } else { (a.nrows(), a.ncols()) };
    dims("mxv", "input vector length", inner, u.len())?;
    dims("mxv", "output length", nout, w.len())?;
    if let Some(m) = mask {
        dims("mxv", "mask length", nout, m.len())?;
    }
    let t = if desc.transpose_a {
        product::<T, A, S, false>(|| a.csc(), || a.csr(), nout, u, semiring, mask, desc)?
    } else {
        product::<T, A, S, false>(|| a.csr(), || a.csc(), nout, u, semiring, mask, desc)?
    };
    write_back("mxv", w, t, mask, accum, desc.replace)
}

/// `w<mask> = accum(w, u ⊕.⊗ A)` (GrB_vxm), i.e. `w(j) = ⊕_i u(i) ⊗ A(i,j)`. The
/// vector entry is the *left* multiplicand; the matrix entry is cast as in [`mxv`].
/// With `desc.transpose_a`, uses `Aᵀ`. Pull gathers over the CSC; push scatters the
/// rows of the input's entries (CSR): a BFS step from a small frontier.
pub fn vxm<T: Scalar, A: Cast<T>, S: Semiring<T>>(
    w: &mut Vector<T>,
    mask: Option<&Mask>,
    accum: Option<Accum<T>>,
    semiring: S,
    u: &Vector<T>,
    a: &Matrix<A>,
    desc: &Descriptor,
) -> GrbResult<()> {
    let (nout, inner) = if desc.transpose_a { (a.nrows(), a.ncols()) } else { (a.ncols(), a.nrows()) };
    dims("vxm", "input vector length", inner, u.len())?;
    dims("vxm", "output length", nout, w.len())?;
    if let Some(m) = mask {
        dims("vxm", "mask length", nout, m.len())?;
    }
    let t = if desc.transpose_a {
        product::<T, A, S, true>(|| a.csr(), || a.csc(), nout, u, semiring, mask, desc)?
    } else {
        product::<T, A, S, true>(|| a.csc(), || a.csr(), nout, u, semiring, mask, desc)?
    };
    write_back("vxm", w, t, mask, accum, desc.replace)
}

/// `w(i) = mode { u(j) : (i, j) an entry of any of `lines` }`: the most frequent value
/// among the entries' columns, counted with multiplicity across the operands (an entry
/// in two of them counts twice), ties to the smallest value; `w(i)` absent where row `i`
/// has no entry with `u(j)` present. The "mode.second" product LAGraph's CDLP computes
/// as `A · diag(u)` followed by a per-row sort and count; mode is not a monoid, so it
/// is not a semiring's addition. Every operand holds the output's rows as its major
/// lines (a CSR, or a CSC for the transpose).
pub(crate) fn mode_mxv<T: Scalar + Ord, A: Scalar>(lines: &[&Compressed<A>], u: &Vector<T>, threads: usize) -> GrbResult<Vector<T>> {
    let nout = lines.first().map_or(0, |c| c.nmajor());
    for c in lines {
        dims("mode_mxv", "rows of every operand", nout, c.nmajor())?;
        if let Some(&j) = c.idx.iter().max() {
            if j as usize >= u.len() {
                return Err(GrbError::InvalidValue(format!("mode_mxv: column {j} outside the input vector (length {})", u.len())));
            }
        }
    }
    let ub = u.to_bitmap();
    let mut out = Bitmap { val: vec![T::zero(); nout], present: vec![false; nout] };
    let bounds = even_blocks(nout, threads.max(1));
    let work: Vec<_> = split_by_bounds(&mut out.val, &bounds)
        .into_iter()
        .zip(split_by_bounds(&mut out.present, &bounds))
        .zip(bounds.iter().copied())
        .collect();
    let ub = &ub;
    run_blocks(work, |_, ((vals, pres), lo)| {
        let mut seen: Vec<T> = Vec::new();
        for (r, (o, p)) in vals.iter_mut().zip(pres.iter_mut()).enumerate() {
            seen.clear();
            for c in lines {
                let (idx, _) = c.line(lo + r);
                seen.extend(idx.iter().filter(|&&j| ub.present[j as usize]).map(|&j| ub.val[j as usize]));
            }
            seen.sort_unstable();
            // Runs of equal values in ascending order: a strictly longer run wins, so
            // among the most frequent the smallest stays.
            let (mut best, mut best_len, mut k) = (None, 0, 0);
            while k < seen.len() {
                let run = seen[k..].iter().take_while(|&&x| x == seen[k]).count();
                if run > best_len {
                    (best, best_len) = (Some(seen[k]), run);
                }
                k += run;
            }
            if let Some(b) = best {
                *o = b;
                *p = true;
            }
        }
    })?;
    Ok(out.into_vector())
}
