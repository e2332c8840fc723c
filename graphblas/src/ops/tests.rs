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
