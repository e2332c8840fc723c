//! The masked matrix product and the triangle sums of LCC and triangle counting:
//! each pair of rows met by a scan or by binary search, whichever costs less.

use crate::algebra::{Cast, Scalar, Semiring};
use crate::error::{GrbError, GrbResult};
use crate::matrix::{Compressed, Matrix};
use crate::parallel::{balanced_row_blocks, run_blocks};
use super::*;

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
pub(crate) fn triangle_sums<W: Cast<u64>>(u: &Matrix<W>, corners: &[u32], threads: usize) -> GrbResult<Vec<u64>> {
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
