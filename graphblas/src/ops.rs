//! GraphBLAS operations: `mxv`, `vxm`, `ewise_add`, `ewise_mult`, `apply`,
//! `reduce_*`, with optional masks, accumulators and a [`Descriptor`].
//!
//! Every vector-producing operation follows the GraphBLAS write-back rule:
//! first the result `t` is computed, then `z = accum(w, t)` (union: where only
//! one side is present it is copied), then `w(i) = z(i)` where the mask
//! allows `i`, and elsewhere `w(i)` is kept (or deleted if `replace`). Masked
//! out rows are not computed at all, which is what makes masks pay (e.g. BFS
//! with the complemented visited set).

use crate::algebra::{BinaryOp, Cast, Monoid, Scalar, Semiring};
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Compressed, Matrix};
use crate::parallel::{balanced_row_blocks, even_blocks, run_blocks, split_by_bounds};
use crate::vector::{Bitmap, Mask, Vector};

/// Accumulator: combines the old output value (left) with the new result.
pub type Accum<'a, T> = &'a (dyn Fn(T, T) -> T + Sync);

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
    pub transpose_a: bool,
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

/// `w(i) = mode { u(j) : (i, j) an entry of any of `lines` }`: the most frequent value
/// among the entries' columns, counted with multiplicity across the operands (an entry
/// in two of them counts twice), ties to the smallest value; `w(i)` absent where row `i`
/// has no entry with `u(j)` present. The "mode.second" product LAGraph's CDLP computes
/// as `A · diag(u)` followed by a per-row sort and count; mode is not a monoid, so it
/// is not a semiring's addition. Every operand holds the output's rows as its major
/// lines (a CSR, or a CSC for the transpose).
pub fn mode_mxv<T: Scalar + Ord, A: Scalar>(lines: &[&Compressed<A>], u: &Vector<T>, threads: usize) -> GrbResult<Vector<T>> {
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

/// `C = A ⊕ B` on the union of the patterns (GrB_Matrix_eWiseAdd): where both hold
/// an entry, `op(a, b)`; where one does, its value. The neighbour pattern of a
/// directed graph is `A ∪ Aᵀ`.
pub fn ewise_add_matrix<T: Scalar, B: BinaryOp<T>>(a: &Matrix<T>, b: &Matrix<T>, op: B, threads: usize) -> GrbResult<Matrix<T>> {
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
pub fn select_matrix<T: Scalar, F: Fn(usize, usize, T) -> bool + Sync>(a: &Matrix<T>, keep: F, threads: usize) -> GrbResult<Matrix<T>> {
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

/// `C⟨M⟩ = A ⊕.⊗ B` with a structural mask (GrB_mxm with GrB_STRUCTURE): only the
/// positions stored in `mask` are computed, each from the products `A(i, k) ⊗ B(k, j)`
/// that exist; a position without any product stays absent. Row by row: row i marks
/// its mask positions in a workspace of `ncols` per thread, then, for each k of A's
/// row i, meets the mask row with B's row k from whichever side is cheaper (chosen
/// per (i, k) by cost, as SuiteSparse chooses between saxpy and dot): scanning
/// `B(k, :)` and keeping the products on marked positions costs |B(k, :)|; walking
/// the mask row and searching each position in the sorted `B(k, :)` costs about
/// |M(i, :)| log |B(k, :)|. The work is Σ_i Σ_{k ∈ A(i, :)} min of the two, so a hub k
/// (a long B row) costs the low-degree rows that name it only their own length: on a
/// graph's neighbour pattern every wedge is counted from its lower-degree end, which
/// LAGraph gets by sorting the vertices by degree.
/// With `plus.pair` and patterns this counts, for every masked (i, j), the k with
/// `A(i, k)` and `B(k, j)`: the masked triangle count of LAGraph's LCC and
/// TriangleCount. The values of `mask` are not looked at.
pub fn mxm_masked<T: Scalar, M: Scalar, A: Cast<T>, B: Cast<T>, S: Semiring<T>>(
    mask: &Matrix<M>,
    semiring: S,
    a: &Matrix<A>,
    b: &Matrix<B>,
    threads: usize,
) -> GrbResult<Matrix<T>> {
    dims("mxm_masked", "rows of B (columns of A)", a.ncols(), b.nrows())?;
    dims("mxm_masked", "rows of the mask", a.nrows(), mask.nrows())?;
    dims("mxm_masked", "columns of the mask", b.ncols(), mask.ncols())?;
    let (cm, ca, cb) = (mask.csr(), a.csr(), b.csr());
    let ncols = b.ncols();
    let bounds = balanced_row_blocks(&ca.ptr, threads.max(1));
    matrix_by_row_blocks(a.nrows(), ncols, &bounds, |lo, hi, out| {
        // One bit per column for "row i's mask holds j" and one for "row i wrote j":
        // ncols / 4 bytes, which stay in cache, so the products that miss the mask
        // (most of them) touch no other memory; `acc` is only read and written on a hit.
        let mut allowed = vec![0u64; ncols.div_ceil(64)];
        let mut written = vec![0u64; ncols.div_ceil(64)];
        let bit = |j: usize| (j / 64, 1u64 << (j % 64));
        let mut acc = vec![semiring.zero(); ncols];
        for i in lo..hi {
            let (mi, _) = cm.line(i);
            for &j in mi {
                let (w, b) = bit(j as usize);
                allowed[w] |= b;
            }
            let (ai, av) = ca.line(i);
            let mut add = |j: usize, prod: T| {
                let (w, b) = bit(j);
                if allowed[w] & b == 0 {
                } else if written[w] & b != 0 {
                    acc[j] = semiring.add(acc[j], prod);
                } else {
                    acc[j] = prod;
                    written[w] |= b;
                }
            };
            for (&k, &x) in ai.iter().zip(av) {
                let x: T = x.cast();
                let (bk, bv) = cb.line(k as usize);
                if search_is_cheaper(mi.len(), bk.len()) {
                    search_each(mi, bk, |j, p| add(j as usize, semiring.mul(x, bv[p].cast())));
                } else {
                    for (&j, &y) in bk.iter().zip(bv) {
                        add(j as usize, semiring.mul(x, y.cast()));
                    }
                }
            }
            for &j in mi {
                let (w, b) = bit(j as usize);
                if written[w] & b != 0 {
                    out.idx.push(j);
                    out.val.push(acc[j as usize]);
                }
            }
            // Whole words, once every position of the row was read.
            for &j in mi {
                let (w, _) = bit(j as usize);
                (allowed[w], written[w]) = (0, 0);
            }
            out.end_row();
        }
    })
}

/// Whether [`mxm_masked`] should meet a mask row of `mask_len` positions with a B row
/// of `row_len` entries by searching each mask position in the B row (about
/// `mask_len · log2 row_len` steps) rather than by scanning the B row (`row_len`).
fn search_is_cheaper(mask_len: usize, row_len: usize) -> bool {
    search_steps(mask_len, row_len) < row_len
}

/// About `wanted_len · log2 row_len`: the steps of [`search_each`].
fn search_steps(wanted_len: usize, row_len: usize) -> usize {
    wanted_len.saturating_mul((usize::BITS - row_len.leading_zeros()) as usize)
}

/// Calls `hit(j, p)` for every `j` of the ascending `wanted` that the ascending `row`
/// holds (at position `p`), by one binary search per wanted position; each search
/// starts after the previous hit or gap.
fn search_each(wanted: &[u32], row: &[u32], mut hit: impl FnMut(u32, usize)) {
    let mut from = 0;
    for &j in wanted {
        match row[from..].binary_search(&j) {
            Ok(p) => {
                hit(j, from + p);
                from += p + 1;
            }
            Err(p) => from += p,
        }
        if from == row.len() {
            break;
        }
    }
}

/// Per vertex v, the sum over the triangles {v, x, y} of the weight of the edge
/// {x, y} opposite v; with weights 1, the number of triangles at v. `u` orients every
/// edge of a simple undirected graph once, acyclically (`u(x, y)` with x before y in
/// some total order of the vertices: LAGraph's `U` after its sort by degree), with the
/// edge's weight as value. A triangle has one corner a before the other two, b before
/// c: `u(a, b)`, `u(a, c)` and `u(b, c)` are its edges, and it is found once, from a,
/// as c ∈ U(a) ∩ U(b) for b ∈ U(a); all three corners are credited then (a: w(b, c),
/// b: w(a, c), c: w(a, b)), where the masked products `C⟨S⟩ = S ⊕.⊗ U` of
/// [`mxm_masked`] would find it again from b and from c. Only the triangles whose
/// first corner a is one of the ascending rows `corners` are counted (a distributed
/// graph's process counts those of its own vertices, so the rows of `u` needed are
/// those of `corners` and of their later neighbours; other rows may be absent). The
/// result has one sum per vertex (length n, all zero outside the triangles counted).
///
/// Work: Σ_a Σ_{b ∈ U(a)} min(|U(b)|, |U(a)| log |U(b)|): row a's U(a) is marked in a
/// bitmap of n bits per thread (with the credits of its c's beside, and its weights
/// unless every weight is 1, in per-thread arrays touched only at U(a)), then each U(b)
/// is scanned against it, or, when [`SEARCH_STEP_COST`] times shorter by steps, U(a) is
/// searched in U(b). With every weight 1 (the triangle count) no weight is read. Threads
/// take row blocks of equal estimated work.
pub fn triangle_sums<W: Cast<u64>>(u: &Matrix<W>, corners: &[u32], threads: usize) -> GrbResult<Vec<u64>> {
    let n = u.nrows();
    dims("triangle_sums", "columns (a square matrix)", n, u.ncols())?;
    if corners.windows(2).any(|w| w[0] >= w[1]) || corners.last().is_some_and(|&a| a as usize >= n) {
        return Err(GrbError::InvalidValue(format!("triangle_sums: the corners are not ascending rows of the {n} x {n} matrix")));
    }
    let c = u.csr();
    // Estimated work of each corner row, as prefix sums (a row pointer array's shape).
    let mut work = Vec::with_capacity(corners.len() + 1);
    work.push(0usize);
    for &a in corners {
        let (ua, _) = c.line(a as usize);
        let meet: usize = ua.iter().map(|&b| meet_cost(ua.len(), c.line(b as usize).0.len())).sum();
        work.push(work[work.len() - 1] + ua.len() + meet);
    }
    let bounds = balanced_row_blocks(&work, threads.max(1));
    let ranges: Vec<&[u32]> = bounds.windows(2).map(|w| &corners[w[0]..w[1]]).collect();
    // With every weight 1 (the triangle count) the weights are never read: the scans
    // of the U(b) read only their positions, and a later vertex keeps only its credit.
    let unit = c.val.iter().all(|&w| Cast::<u64>::cast(w) == 1);
    let parts = if unit {
        run_blocks(ranges, |_, rows| corner_rows::<W, true>(c, rows))?
    } else {
        run_blocks(ranges, |_, rows| corner_rows::<W, false>(c, rows))?
    };
    let mut parts = parts.into_iter();
    let mut total = parts.next().unwrap_or_else(|| vec![0; n]);
    for part in parts {
        for (t, x) in total.iter_mut().zip(part) {
            *t += x;
        }
    }
    Ok(total)
}

/// The triangle sums of [`triangle_sums`] whose first corner is one of `rows`, one
/// per vertex; `UNIT`: every weight of `c` is 1 (then no weight is read).
fn corner_rows<W: Cast<u64>, const UNIT: bool>(c: &Compressed<W>, rows: &[u32]) -> Vec<u64> {
    let n = c.ptr.len() - 1;
    let weight = |w: &[W], p: usize| if UNIT { 1 } else { w[p].cast() };
    let mut sums = vec![0u64; n];
    let mut marked = vec![0u64; n.div_ceil(64)];
    // Per vertex x of the current row a: Σ w(a, b) over the b of row a with x ∈ U(b)
    // (x's credit from a's triangles), and w(a, x) (unless `UNIT`).
    let mut credit = vec![0u64; n];
    let mut weight_from_a = vec![0u64; if UNIT { 0 } else { n }];
    let is_marked = |marked: &[u64], x: usize| marked[x / 64] & (1u64 << (x % 64)) != 0;
    for &a in rows {
        let a = a as usize;
        let (ua, wa) = c.line(a);
        if ua.len() < 2 {
            continue;
        }
        for (p, &x) in ua.iter().enumerate() {
            marked[x as usize / 64] |= 1u64 << (x % 64);
            if !UNIT {
                weight_from_a[x as usize] = weight(wa, p);
            }
        }
        let mut sum_a = 0u64;
        for (q, &b) in ua.iter().enumerate() {
            let w_ab = weight(wa, q);
            let (ub, wb) = c.line(b as usize);
            let mut sum_b = 0u64;
            let mut triangle = |x: u32, w_bx: u64| {
                sum_a += w_bx;
                sum_b += if UNIT { 1 } else { weight_from_a[x as usize] };
                credit[x as usize] += w_ab;
            };
            if meet_by_search(ua.len(), ub.len()) {
                search_each(ua, ub, |x, p| triangle(x, weight(wb, p)));
            } else {
                for (p, &x) in ub.iter().enumerate() {
                    if is_marked(&marked, x as usize) {
                        triangle(x, weight(wb, p));
                    }
                }
            }
            sums[b as usize] += sum_b;
        }
        sums[a] += sum_a;
        for &x in ua {
            sums[x as usize] += std::mem::take(&mut credit[x as usize]);
            marked[x as usize / 64] = 0;
        }
    }
    sums
}

/// What one step of [`search_each`] costs in steps of [`triangle_sums`]'s bitmap scan:
/// a search step is a dependent load and a branch that goes either way, a scan step a
/// predictable load and bit test (on Kronecker graphs, searching only when 4 times
/// cheaper by steps took about 10% less time than at 1).
const SEARCH_STEP_COST: usize = 4;

/// Whether [`triangle_sums`] meets a marked row of `marked_len` positions with a row
/// of `row_len` entries by searching the marked positions in the row.
fn meet_by_search(marked_len: usize, row_len: usize) -> bool {
    search_steps(marked_len, row_len).saturating_mul(SEARCH_STEP_COST) < row_len
}

/// The cost in scan steps of [`triangle_sums`] meeting a marked row of `marked_len`
/// positions with a row of `row_len` entries, by the side [`meet_by_search`] picks.
fn meet_cost(marked_len: usize, row_len: usize) -> usize {
    search_steps(marked_len, row_len).saturating_mul(SEARCH_STEP_COST).min(row_len)
}

/// `x` at every stored position of `a` (GrB_Matrix_apply with GxB_ONE's kind of
/// operator): the pattern of `a` in another domain, e.g. a `bool` adjacency as `u32`
/// edge counts to add.
pub fn pattern_with<T: Scalar, X: Scalar>(a: &Matrix<T>, x: X) -> GrbResult<Matrix<X>> {
    let c = a.csr();
    Matrix::from_csr_parts(a.nrows(), a.ncols(), c.ptr.clone(), c.idx.clone(), vec![x; c.idx.len()])
}

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
        for trial in 0..300 {
            // Every third trial long and very sparse: the sparse results and write-backs.
            let sparse = trial % 3 == 0;
            let scale = if sparse { 12 } else { 1 };
            let nr = 1 + rng.below(30 * scale) as usize;
            let nc = 1 + rng.below(30 * scale) as usize;
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
            let density = if sparse { 0.01 } else { [0.3, 0.7, 1.0][rng.below(3) as usize] };
            let x = random_vector(&mut rng, in_n, density);
            let xd = to_dense(&x);
            let w0 = random_vector(&mut rng, out_n, if sparse { 0.02 } else { 0.5 });
            let mask_src = random_vector(&mut rng, out_n, if sparse { 0.03 } else { 0.6 });
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
            desc.direction = [Direction::Auto, Direction::Push, Direction::Pull][rng.below(3) as usize];

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

    /// Structural semirings over a `bool` pattern matrix cast to the vector's domain,
    /// both directions, against dense arithmetic: any-pair (reachability) and
    /// min-second (the smallest neighbouring label), masked and not.
    #[test]
    fn any_pair_and_min_second_over_a_bool_pattern_push_and_pull() {
        let mut rng = Xoshiro256::new(31);
        for trial in 0..150 {
            let (nr, nc) = (1 + rng.below(25) as usize, 1 + rng.below(25) as usize);
            let mut edges = Vec::new();
            for i in 0..nr {
                for j in 0..nc {
                    if rng.next_f64() < 0.15 {
                        edges.push((i, j));
                    }
                }
            }
            let a = Matrix::<bool>::from_edges(nr, nc, &edges).unwrap();
            let mut x: Vec<(usize, u32)> = Vec::new();
            for i in 0..nr {
                if rng.below(3) == 0 {
                    x.push((i, rng.below(100) as u32));
                }
            }
            let xv = Vector::sparse(nr, &x).unwrap();
            let mask_src = random_vector(&mut rng, nc, 0.5);
            let mask = (rng.below(2) == 0).then(|| Mask::structure(&mask_src).complement());
            let threads = 1 + rng.below(3) as usize;
            // w(j) = min over edges (i, j) with x(i) present of x(i); reach(j) = any such edge.
            let want_min: Vec<Option<u32>> = (0..nc)
                .map(|j| {
                    if mask.as_ref().is_some_and(|m| !m.allows(j)) {
                        return None;
                    }
                    x.iter().filter(|&&(i, _)| edges.contains(&(i, j))).map(|&(_, v)| v).min()
                })
                .collect();
            for d in [Direction::Auto, Direction::Push, Direction::Pull] {
                let desc = Descriptor::with_threads(threads).direction(d).replace();
                // vxm with min-first takes the vector value (left operand).
                let mut w = Vector::empty(nc);
                vxm(&mut w, mask.as_ref(), None, SemiringOf { add: Min, mul: First }, &xv, &a, &desc).unwrap();
                assert_eq!((0..nc).map(|j| w.get(j)).collect::<Vec<_>>(), want_min, "trial {trial} {d:?} vxm min-first");
                // The same through the transpose with mxv and min-second.
                let mut w = Vector::empty(nc);
                mxv(&mut w, mask.as_ref(), None, MIN_SECOND, &a, &xv, &desc.transpose()).unwrap();
                assert_eq!((0..nc).map(|j| w.get(j)).collect::<Vec<_>>(), want_min, "trial {trial} {d:?} mxv min-second");
                let reach: Vector<bool> = Vector::sparse(nr, &x.iter().map(|&(i, _)| (i, true)).collect::<Vec<_>>()).unwrap();
                let mut r = Vector::empty(nc);
                vxm(&mut r, mask.as_ref(), None, ANY_PAIR, &reach, &a, &desc).unwrap();
                let want: Vec<Option<bool>> = want_min.iter().map(|m| m.map(|_| true)).collect();
                assert_eq!((0..nc).map(|j| r.get(j)).collect::<Vec<_>>(), want, "trial {trial} {d:?} any-pair");
            }
        }
    }

    #[test]
    fn assign_scalar_extract_and_assign_indices() {
        let mut w = Vector::sparse(5, &[(1, 7i64)]).unwrap();
        let frontier = Vector::sparse(5, &[(0, true), (3, true)]).unwrap();
        assign_scalar(&mut w, Some(&Mask::structure(&frontier)), None, 2, &Descriptor::default()).unwrap();
        assert_eq!(w.entries(), vec![(0, 2), (1, 7), (3, 2)]);
        // Grandparents: f = [1, 2, 2, 0], f(f) = [2, 2, 2, 1].
        let f = Vector::dense(vec![1u32, 2, 2, 0]);
        let mut gf = Vector::empty(4);
        extract(&mut gf, None, None, &f, &[1, 2, 2, 0], &Descriptor::with_threads(2)).unwrap();
        assert_eq!(gf, Vector::dense(vec![2, 2, 2, 1]));
        let sparse_u = Vector::sparse(4, &[(2, 9u32)]).unwrap();
        extract(&mut gf, None, None, &sparse_u, &[2, 0, 2, 3], &Descriptor::default()).unwrap();
        assert_eq!(gf.entries(), vec![(0, 9), (2, 9)]);
        assert!(extract(&mut gf, None, None, &f, &[0, 1, 2, 4], &Descriptor::default()).is_err());
        // Hooking: w(idx[k]) min= u(k), duplicates all count; absent entries take the value.
        let mut h = Vector::dense(vec![5u32, 5, 5, 5]);
        assign_indices(&mut h, Min, &Vector::dense(vec![3u32, 1, 4]), &[2, 2, 0]).unwrap();
        assert_eq!(h, Vector::dense(vec![4, 5, 1, 5]));
        let mut h = Vector::sparse(3, &[(0, 8u32)]).unwrap();
        assign_indices(&mut h, Min, &Vector::sparse(2, &[(1, 6u32)]).unwrap(), &[0, 2]).unwrap();
        assert_eq!(h.entries(), vec![(0, 8), (2, 6)]);
        assert!(assign_indices(&mut h, Min, &Vector::dense(vec![1u32]), &[3]).is_err());
        // A level's depth: few positions of a long sparse vector (merged, not a bitmap
        // pass), the old entries kept outside the mask, overwritten inside.
        let mut depth = Vector::sparse(1000, &[(3, 0i64), (500, 1), (999, 1)]).unwrap();
        let frontier = Vector::sparse(1000, &[(2, true), (500, true), (700, true)]).unwrap();
        assign_scalar(&mut depth, Some(&Mask::structure(&frontier)), None, 2, &Descriptor::default()).unwrap();
        assert_eq!(depth.entries(), vec![(2, 2), (3, 0), (500, 2), (700, 2), (999, 1)]);
    }

    /// A product walks only the orientation it needs: a forced push by rows (`vxm`)
    /// or a pull by rows (`mxv`) of a row block must not build its CSC (before, every
    /// push built both: 40 ms at kron18's first BFS level, a copy of the edges and an
    /// O(n) pointer array per process).
    #[test]
    fn products_build_only_the_orientation_they_walk() {
        let a = Matrix::from_csr_parts(2, 6, vec![0, 2, 3], vec![1, 4, 0], vec![true; 3]).unwrap();
        let f = Vector::sparse(2, &[(0, true)]).unwrap();
        let mut w = Vector::empty(6);
        vxm(&mut w, None, None, ANY_PAIR, &f, &a, &Descriptor::default().direction(Direction::Push)).unwrap();
        assert_eq!(w.entries(), vec![(1, true), (4, true)]);
        let whole = Vector::sparse(6, &[(4, true)]).unwrap();
        let mut r = Vector::empty(2);
        mxv(&mut r, None, None, ANY_PAIR, &a, &whole, &Descriptor::default().direction(Direction::Pull)).unwrap();
        assert_eq!(r.entries(), vec![(0, true)]);
        assert!(!a.csc_is_built(), "a push by rows or a pull by rows built the CSC");
        // Auto weighs both orientations, so it may build it.
        vxm(&mut w, None, None, ANY_PAIR, &f, &a, &Descriptor::default()).unwrap();
        assert_eq!(w.entries(), vec![(1, true), (4, true)]);
    }

    #[test]
    fn lazy_csc_of_a_row_block() {
        // Two local rows of a 5-column block, as the distributed kernels build them.
        let a = Matrix::from_csr_parts(2, 5, vec![0, 2, 3], vec![1, 4, 0], vec![true; 3]).unwrap();
        assert_eq!(a, Matrix::<bool>::from_edges(2, 5, &[(0, 1), (0, 4), (1, 0)]).unwrap());
        assert_eq!(a.col_counts(), vec![1, 1, 0, 0, 1]);
        assert!(Matrix::from_csr_parts(2, 5, vec![0, 2, 3], vec![4, 1, 0], vec![true; 3]).is_err());
        assert!(Matrix::from_csr_parts(2, 5, vec![0, 2, 3], vec![1, 5, 0], vec![true; 3]).is_err());
        assert!(Matrix::from_csr_parts(2, 5, vec![0, 2], vec![1, 4], vec![true; 2]).is_err());
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
        for trial in 0..150 {
            // Every third trial long and very sparse: the merged results and write-backs.
            let sparse = trial % 3 == 0;
            let n = rng.below(if sparse { 600 } else { 40 }) as usize;
            let thin = |d: f64| if sparse { d / 25.0 } else { d };
            let u = random_vector(&mut rng, n, thin(0.5));
            let vd_density = [0.5, 1.0][rng.below(2) as usize];
            let v = random_vector(&mut rng, n, thin(vd_density));
            let (ud, vd) = (to_dense(&u), to_dense(&v));
            let w0 = random_vector(&mut rng, n, thin(0.4));
            let mask_src = random_vector(&mut rng, n, 0.5);
            let mask = match rng.below(3) {
                0 => None,
                1 => Some(Mask::values(&mask_src).complement()),
                _ => Some(Mask::structure(&mask_src)),
            };
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
            assert_eq!(reduce_vector(Plus, &u, desc.threads), Ok(s));
            let mn = ud.iter().flatten().copied().min().unwrap_or(i64::MAX);
            assert_eq!(reduce_vector(Min, &u, desc.threads), Ok(mn));
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
            assert_eq!(reduce_matrix(Plus, &a, threads), Ok(total));
            let sq = apply_matrix(&a, |x| x * x, threads).unwrap();
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

    #[test]
    fn matrix_union_select_and_masked_product_match_dense_loops() {
        let mut rng = Xoshiro256::new(17);
        let (n, k, m) = (40, 30, 35);
        // A dense mask over sparse B rows (the masked product scans the B rows), then a
        // sparse mask over dense B rows (it searches the mask positions in them).
        for (mask_density, b_density) in [(0.3, 0.15), (0.03, 0.9)] {
            union_select_and_masked_product_match_dense_loops(&mut rng, (n, k, m), mask_density, b_density);
        }
    }

    fn union_select_and_masked_product_match_dense_loops(rng: &mut Xoshiro256, (n, k, m): (usize, usize, usize), mask_density: f64, b_density: f64) {
        let a = random_matrix(rng, n, k, 0.15);
        let b = random_matrix(rng, k, m, b_density);
        let mask = random_matrix(rng, n, m, mask_density);
        let c = random_matrix(rng, n, k, 0.15);
        let (ad, bd, md, cd) = (a.to_dense(), b.to_dense(), mask.to_dense(), c.to_dense());
        for threads in [1, 2, 3] {
            let sum = ewise_add_matrix(&a, &c, Plus, threads).unwrap();
            let off = select_matrix(&a, |i, j, v| i != j && v > 0, threads).unwrap();
            let prod: Matrix<i64> = mxm_masked(&mask, PLUS_TIMES, &a, &b, threads).unwrap();
            let pairs: Matrix<i64> = mxm_masked(&mask, PLUS_PAIR, &a, &b, threads).unwrap();
            for i in 0..n {
                for j in 0..k {
                    let both = match (ad[i][j], cd[i][j]) {
                        (Some(x), Some(y)) => Some(x + y),
                        (x, y) => x.or(y),
                    };
                    assert_eq!(sum.get(i, j), both, "union ({i}, {j})");
                    assert_eq!(off.get(i, j), ad[i][j].filter(|&v| i != j && v > 0), "select ({i}, {j})");
                }
                for j in 0..m {
                    let terms: Vec<i64> = (0..k).filter_map(|x| Some(ad[i][x]? * bd[x][j]?)).collect();
                    let want = |v: i64| if md[i][j].is_some() && !terms.is_empty() { Some(v) } else { None };
                    assert_eq!(prod.get(i, j), want(terms.iter().sum()), "product ({i}, {j})");
                    assert_eq!(pairs.get(i, j), want(terms.len() as i64), "pair count ({i}, {j})");
                }
            }
        }
    }

    /// `triangle_sums` against the definition on random oriented graphs (the upper
    /// triangle, so the orientation is acyclic, with weights 1..3), over every corner
    /// range split and thread count; dense rows (search) and sparse ones (scan) both.
    #[test]
    fn triangle_sums_credit_every_corner_once() {
        let mut rng = Xoshiro256::new(15);
        // Weights 1..3, and all 1 (the triangle count: no weight read); n = 300 has two
        // hubs 150 and 151 before every later vertex, and rows 0..10 hold both, so
        // their few positions are searched in the hubs' long rows.
        for (n, density, unit) in [(40, 0.3, false), (60, 0.08, false), (25, 0.9, false), (40, 0.3, true), (300, 0.01, false), (300, 0.01, true)] {
            let mut edges = std::collections::BTreeSet::new();
            for i in 0..n {
                for j in i + 1..n {
                    if rng.next_f64() < density || (n == 300 && (i == 150 || i == 151 || (i < 10 && j >= 150 && j <= 151))) {
                        edges.insert((i, j));
                    }
                }
            }
            let t: Vec<(usize, usize, u32)> = edges.into_iter().map(|(i, j)| (i, j, if unit { 1 } else { 1 + rng.below(3) as u32 })).collect();
            let u = Matrix::from_triples(n, n, &t, DupPolicy::Error).unwrap();
            let w = |x: usize, y: usize| u.get(x.min(y), x.max(y));
            let mut want = vec![0u64; n];
            for a in 0..n {
                for b in a + 1..n {
                    for c in b + 1..n {
                        if let (Some(ab), Some(ac), Some(bc)) = (w(a, b), w(a, c), w(b, c)) {
                            want[a] += bc as u64;
                            want[b] += ac as u64;
                            want[c] += ab as u64;
                        }
                    }
                }
            }
            assert!(want.iter().any(|&x| x > 0), "a graph with triangles");
            let all: Vec<u32> = (0..n as u32).collect();
            for threads in [1, 2, 3] {
                assert_eq!(triangle_sums(&u, &all, threads).unwrap(), want, "n {n} threads {threads}");
                // Split into two sets of corners (as two processes would: a block, or
                // scattered rows as in the counting order), the sums add up.
                let cut = n as u32 / 3;
                for (xs, ys) in [all.iter().partition::<Vec<u32>, _>(|&&a| a < cut), all.iter().partition(|&&a| a % 3 == 1)] {
                    let (x, y) = (triangle_sums(&u, &xs, threads).unwrap(), triangle_sums(&u, &ys, threads).unwrap());
                    assert_eq!(x.iter().zip(&y).map(|(a, b)| a + b).collect::<Vec<_>>(), want);
                }
            }
        }
        let square = Matrix::<u32>::from_triples(3, 4, &[], DupPolicy::Error).unwrap();
        assert!(triangle_sums(&square, &[0, 1, 2], 1).is_err());
        let u = Matrix::<u32>::from_triples(3, 3, &[], DupPolicy::Error).unwrap();
        assert!(triangle_sums(&u, &[2, 3], 1).is_err());
        assert!(triangle_sums(&u, &[1, 0], 1).is_err());
    }
}
