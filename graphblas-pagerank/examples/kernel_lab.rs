//! Scratch lab: compares pull-kernel variants on one loaded graph, interleaved.
//! `kernel_lab FILE.bin THREADS ROUNDS VARIANTS(comma list)`
use graphblas_pagerank::io::read_binary;
use graphblas_pagerank::kron::matrix_from_edges_no_loops;
use graphblas_pagerank::pagerank::{StepPartials, CHUNKS, ROW_COST};
use graphblas_pagerank::parallel::{balanced_row_blocks_weighted, run_dynamic, split_by_bounds};
use graphblas_pagerank::PullGraph;
use std::time::Instant;

type K = fn(&[usize], &[u32], &[f64], usize, &[f64], f64, f64, &mut [f64], &mut [f64]) -> StepPartials;

#[allow(clippy::too_many_arguments)]
fn v0(ptr: &[usize], src: &[u32], inv: &[f64], lo: usize, contrib: &[f64], alpha: f64, base: f64, ranks: &mut [f64], out: &mut [f64]) -> StepPartials {
    let hi = lo + ranks.len();
    let ptr = &ptr[lo..=hi];
    let inv = &inv[lo..hi];
    let (mut residual, mut dangling) = (0.0, 0.0);
    for (k, (r, c)) in ranks.iter_mut().zip(out.iter_mut()).enumerate() {
        let sources = &src[ptr[k]..ptr[k + 1]];
        let (mut s0, mut s1) = (0.0, 0.0);
        let mut pairs = sources.chunks_exact(2);
        for p in &mut pairs {
            s0 += contrib[p[0] as usize];
            s1 += contrib[p[1] as usize];
        }
        if let [j] = pairs.remainder() {
            s0 += contrib[*j as usize];
        }
        let new = alpha * (s0 + s1) + base;
        residual += (new - *r).abs();
        *r = new;
        let d = inv[k];
        *c = new * d;
        dangling += if d == 0.0 { new } else { 0.0 };
    }
    StepPartials { residual, dangling }
}

#[inline(always)]
fn pf1(contrib: &[f64], j: u32) {
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        _mm_prefetch::<_MM_HINT_T1>(contrib.as_ptr().wrapping_add(j as usize) as *const i8);
    }
}

/// Prefetch with hint T1 (L2), distance D; rows longer than M run the plain loop.
fn vpx<const D: usize, const T1: bool, const M: usize>(ptr: &[usize], src: &[u32], inv: &[f64], lo: usize, contrib: &[f64], alpha: f64, base: f64, ranks: &mut [f64], out: &mut [f64]) -> StepPartials {
    let hi = lo + ranks.len();
    let ptr = &ptr[lo..=hi];
    let inv = &inv[lo..hi];
    let last = src.len().saturating_sub(1);
    let (mut residual, mut dangling) = (0.0, 0.0);
    for (k, (r, c)) in ranks.iter_mut().zip(out.iter_mut()).enumerate() {
        let (a, b) = (ptr[k], ptr[k + 1]);
        let (mut s0, mut s1) = (0.0, 0.0);
        let mut e = a;
        if b - a > M {
            let mut pairs = src[a..b].chunks_exact(2);
            for p in &mut pairs {
                s0 += contrib[p[0] as usize];
                s1 += contrib[p[1] as usize];
            }
            if let [j] = pairs.remainder() {
                s0 += contrib[*j as usize];
            }
        } else {
            while e + 2 <= b {
                if T1 {
                    pf1(contrib, src[(e + D).min(last)]);
                    pf1(contrib, src[(e + D + 1).min(last)]);
                } else {
                    pf(contrib, src[(e + D).min(last)]);
                    pf(contrib, src[(e + D + 1).min(last)]);
                }
                s0 += contrib[src[e] as usize];
                s1 += contrib[src[e + 1] as usize];
                e += 2;
            }
            if e < b {
                if T1 {
                    pf1(contrib, src[(e + D).min(last)]);
                } else {
                    pf(contrib, src[(e + D).min(last)]);
                }
                s0 += contrib[src[e] as usize];
            }
        }
        let new = alpha * (s0 + s1) + base;
        residual += (new - *r).abs();
        *r = new;
        let d = inv[k];
        *c = new * d;
        dangling += if d == 0.0 { new } else { 0.0 };
    }
    StepPartials { residual, dangling }
}

#[inline(always)]
fn pf(contrib: &[f64], j: u32) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(contrib.as_ptr().wrapping_add(j as usize) as *const i8);
    }
}

/// Prefetch contrib[src[e + D]] in the flat edge stream.
fn vpf<const D: usize>(ptr: &[usize], src: &[u32], inv: &[f64], lo: usize, contrib: &[f64], alpha: f64, base: f64, ranks: &mut [f64], out: &mut [f64]) -> StepPartials {
    let hi = lo + ranks.len();
    let ptr = &ptr[lo..=hi];
    let inv = &inv[lo..hi];
    let last = src.len().saturating_sub(1);
    let (mut residual, mut dangling) = (0.0, 0.0);
    for (k, (r, c)) in ranks.iter_mut().zip(out.iter_mut()).enumerate() {
        let (a, b) = (ptr[k], ptr[k + 1]);
        let (mut s0, mut s1) = (0.0, 0.0);
        let mut e = a;
        while e + 2 <= b {
            pf(contrib, src[(e + D).min(last)]);
            pf(contrib, src[(e + D + 1).min(last)]);
            s0 += contrib[src[e] as usize];
            s1 += contrib[src[e + 1] as usize];
            e += 2;
        }
        if e < b {
            pf(contrib, src[(e + D).min(last)]);
            s0 += contrib[src[e] as usize];
        }
        let new = alpha * (s0 + s1) + base;
        residual += (new - *r).abs();
        *r = new;
        let d = inv[k];
        *c = new * d;
        dangling += if d == 0.0 { new } else { 0.0 };
    }
    StepPartials { residual, dangling }
}

#[inline(always)]
fn masked(x: f64, keep: bool) -> f64 {
    f64::from_bits(x.to_bits() & (keep as u64).wrapping_neg())
}

/// Rows of up to W edges without a data-dependent branch: W lanes always loaded,
/// lanes past the row's end masked to 0 (same sums, bit for bit).
fn vbl<const W: usize, const PF: usize>(ptr: &[usize], src: &[u32], inv: &[f64], lo: usize, contrib: &[f64], alpha: f64, base: f64, ranks: &mut [f64], out: &mut [f64]) -> StepPartials {
    let hi = lo + ranks.len();
    let ptr = &ptr[lo..=hi];
    let inv = &inv[lo..hi];
    let last = src.len().saturating_sub(1);
    let safe_end = src.len().saturating_sub(W);
    let (mut residual, mut dangling) = (0.0, 0.0);
    for (k, (r, c)) in ranks.iter_mut().zip(out.iter_mut()).enumerate() {
        let (a, b) = (ptr[k], ptr[k + 1]);
        let len = b - a;
        let (mut s0, mut s1) = (0.0, 0.0);
        let mut e;
        if a <= safe_end {
            let idx: &[u32; W] = src[a..a + W].try_into().unwrap();
            if PF > 0 {
                pf(contrib, src[(a + PF).min(last)]);
                pf(contrib, src[(a + PF + 1).min(last)]);
            }
            let mut j = 0;
            while j < W {
                s0 += masked(contrib[idx[j] as usize], j < len);
                s1 += masked(contrib[idx[j + 1] as usize], j + 1 < len);
                j += 2;
            }
            e = a + W;
        } else {
            e = a;
        }
        while e + 2 <= b {
            if PF > 0 {
                pf(contrib, src[(e + PF).min(last)]);
                pf(contrib, src[(e + PF + 1).min(last)]);
            }
            s0 += contrib[src[e] as usize];
            s1 += contrib[src[e + 1] as usize];
            e += 2;
        }
        if e < b {
            s0 += contrib[src[e] as usize];
        }
        let new = alpha * (s0 + s1) + base;
        residual += (new - *r).abs();
        *r = new;
        let d = inv[k];
        *c = new * d;
        dangling += if d == 0.0 { new } else { 0.0 };
    }
    StepPartials { residual, dangling }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let threads: usize = args[2].parse().unwrap();
    let rounds: usize = args[3].parse().unwrap();
    let names: Vec<String> = args[4].split(',').map(String::from).collect();
    let coo = read_binary(std::path::Path::new(path)).unwrap();
    let a = matrix_from_edges_no_loops(coo).unwrap();
    let g = PullGraph::from_matrix(&a).unwrap();
    drop(a);
    let (ptr, src) = g.csr();
    let inv = g.inv_outdeg();
    let n = g.n();
    let nd = inv.iter().filter(|&&d| d != 0.0).count();
    eprintln!("n {n} nnz {} nondangling {nd}", src.len());
    if std::env::var_os("LAB_STATS").is_some() {
        let mut hist = [0usize; 12];
        for i in 0..n {
            let d = ptr[i + 1] - ptr[i];
            hist[d.min(11)] += 1;
        }
        eprintln!("in-degree histogram 0..10, 11+: {hist:?}");
        for lim in [1usize << 14, 1 << 16, 1 << 17, 1 << 18, 1 << 20, 1 << 21] {
            let c = src.iter().filter(|&&s| (s as usize) < lim).count();
            eprintln!("edges with source < {lim}: {:.3}", c as f64 / src.len() as f64);
        }
    }
    let gref = &g;
    let sb = move |_p: &[usize], _s: &[u32], _i: &[f64], lo: usize, c: &[f64], a: f64, b: f64, r: &mut [f64], co: &mut [f64]| {
        graphblas_pagerank::pagerank::step_block(gref, lo, c, a, b, r, co)
    };
    let kernels: Vec<(String, Box<dyn Fn(&[usize], &[u32], &[f64], usize, &[f64], f64, f64, &mut [f64], &mut [f64]) -> StepPartials + Sync>)> = names
        .iter()
        .map(|nm| {
            if nm == "sb" {
                return (nm.clone(), Box::new(sb) as Box<dyn Fn(&[usize], &[u32], &[f64], usize, &[f64], f64, f64, &mut [f64], &mut [f64]) -> StepPartials + Sync>);
            }
            let k: K = match nm.as_str() {
                "v0" => v0,
                "pf8" => vpf::<8>,
                "pf16" => vpf::<16>,
                "pf32" => vpf::<32>,
                "pf64" => vpf::<64>,
                "pf96" => vpf::<96>,
                "pf128" => vpf::<128>,
                "pf256" => vpf::<256>,
                "pf512" => vpf::<512>,
                "pf192" => vpf::<192>,
                "pf192m1k" => vpx::<192, false, 1024>,
                "pf192m2k" => vpx::<192, false, 2048>,
                "pf256m2k" => vpx::<256, false, 2048>,
                "pf384" => vpf::<384>,
                "pf384m4k" => vpx::<384, false, 4096>,
                "pf1024" => vpf::<1024>,
                "pf256t1" => vpx::<256, true, {usize::MAX}>,
                "pf512t1" => vpx::<512, true, {usize::MAX}>,
                "pf256m4k" => vpx::<256, false, 4096>,
                "pf256m1k" => vpx::<256, false, 1024>,
                "pf512m1k" => vpx::<512, false, 1024>,
                "bl4" => vbl::<4, 0>,
                "bl8" => vbl::<8, 0>,
                "bl4pf16" => vbl::<4, 16>,
                "bl8pf16" => vbl::<8, 16>,
                "bl4pf32" => vbl::<4, 32>,
                "bl8pf32" => vbl::<8, 32>,
                _ => panic!("unknown {nm}"),
            };
            (nm.clone(), Box::new(k) as Box<dyn Fn(&[usize], &[u32], &[f64], usize, &[f64], f64, f64, &mut [f64], &mut [f64]) -> StepPartials + Sync>)
        })
        .collect();
    let bounds = balanced_row_blocks_weighted(ptr, CHUNKS.min(n), ROW_COST);
    let mut contrib: Vec<f64> = inv.iter().map(|&d| d / n as f64).collect();
    // a few baseline iterations so contrib is realistic
    let mut ranks = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let nch = bounds.len() - 1;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
    let mut chunk_min: Vec<Vec<f64>> = vec![vec![f64::INFINITY; nch]; kernels.len()];
    let mut reference: Option<Vec<f64>> = None;
    for round in 0..rounds {
        for (ki, (nm, k)) in kernels.iter().enumerate() {
            let mut r = ranks.clone();
            let t = Instant::now();
            let work: Vec<_> = split_by_bounds(&mut r, &bounds)
                .into_iter()
                .zip(split_by_bounds(&mut next, &bounds))
                .zip(bounds.iter().copied())
                .collect();
            let c = &contrib;
            let parts = run_dynamic(work, threads, |_, ((r, co), lo)| {
                let t = Instant::now();
                let p = k(ptr, src, inv, lo, c, 0.85, 0.15 / n as f64, r, co);
                (p, t.elapsed().as_secs_f64())
            });
            let dt = t.elapsed().as_secs_f64();
            times[ki].push(dt);
            for (ci, (_, ct)) in parts.iter().enumerate() {
                chunk_min[ki][ci] = chunk_min[ki][ci].min(*ct);
            }
            let res: f64 = parts.iter().map(|p| p.0.residual).sum();
            if round == 0 {
                match &reference {
                    None => reference = Some(r.clone()),
                    Some(r0) => assert!(r0.iter().zip(&r).all(|(a, b)| a.to_bits() == b.to_bits()), "{nm} differs"),
                }
                eprintln!("{nm}: residual {res:e} (bitwise ok)");
            }
        }
        if round == 0 {
            std::mem::swap(&mut contrib, &mut next);
            ranks = reference.clone().unwrap();
        }
    }
    let base_med = {
        let mut t = times[0].clone();
        t.sort_by(f64::total_cmp);
        (t[0], t[t.len() / 2])
    };
    let base_sum: f64 = chunk_min[0].iter().sum();
    for (ki, (nm, _)) in kernels.iter().enumerate() {
        let mut t = times[ki].clone();
        t.sort_by(f64::total_cmp);
        let s: f64 = chunk_min[ki].iter().sum();
        println!(
            "{nm:10} best {:.4} median {:.4}  best/ref {:.3} median/ref {:.3}  sum-of-chunk-min {:.4} ({:.3})",
            t[0],
            t[t.len() / 2],
            t[0] / base_med.0,
            t[t.len() / 2] / base_med.1,
            s,
            s / base_sum
        );
    }
    if std::env::var_os("LAB_FIT").is_some() {
        // Least squares t_chunk = a*E + b*R + c*Rzero + d*Ecold over the chunks, variant 0.
        let hot: usize = std::env::var("LAB_HOT").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 18);
        let feats: Vec<[f64; 4]> = (0..nch)
            .map(|ci| {
                let (lo, hi) = (bounds[ci], bounds[ci + 1]);
                let e = (ptr[hi] - ptr[lo]) as f64;
                let r = (hi - lo) as f64;
                let rz = (lo..hi).filter(|&i| ptr[i + 1] == ptr[i]).count() as f64;
                let ec = src[ptr[lo]..ptr[hi]].iter().filter(|&&s| s as usize >= hot).count() as f64;
                [e, r, rz, ec]
            })
            .collect();
        for m in [2usize, 3, 4] {
            let mut ata = vec![vec![0.0; m]; m];
            let mut atb = vec![0.0; m];
            for (ci, f) in feats.iter().enumerate() {
                let y = chunk_min[0][ci];
                for i in 0..m {
                    atb[i] += f[i] * y;
                    for j in 0..m {
                        ata[i][j] += f[i] * f[j];
                    }
                }
            }
            // Gaussian elimination
            for i in 0..m {
                let piv = ata[i][i];
                for j in i + 1..m {
                    let f = ata[j][i] / piv;
                    for k2 in i..m {
                        ata[j][k2] -= f * ata[i][k2];
                    }
                    atb[j] -= f * atb[i];
                }
            }
            let mut x = vec![0.0; m];
            for i in (0..m).rev() {
                let mut s = atb[i];
                for j in i + 1..m {
                    s -= ata[i][j] * x[j];
                }
                x[i] = s / ata[i][i];
            }
            let pred: Vec<f64> = feats.iter().map(|f| (0..m).map(|i| f[i] * x[i]).sum()).collect();
            let err = pred.iter().zip(&chunk_min[0]).map(|(p, y)| ((p - y) / y).abs()).fold(0.0, f64::max);
            println!("fit m={m}: ns per [edge, row, zero-row, cold-edge] = {:?}; row/edge = {:.2}; max rel err {:.3}",
                x.iter().map(|v| v * 1e9).collect::<Vec<_>>(), x[1] / x[0], err);
        }
        for kk in [16usize, 32, 64, 128, 256, 1024, 4096] {
            let f2: Vec<[f64; 3]> = (0..nch)
                .map(|ci| {
                    let (lo, hi) = (bounds[ci], bounds[ci + 1]);
                    let mut a = [0.0; 3];
                    for i in lo..hi {
                        let d = ptr[i + 1] - ptr[i];
                        a[0] += d.min(kk) as f64;
                        a[1] += d.saturating_sub(kk) as f64;
                        a[2] += 1.0;
                    }
                    a
                })
                .collect();
            let m = 3;
            let mut ata = vec![vec![0.0; m]; m];
            let mut atb = vec![0.0; m];
            for (ci, f) in f2.iter().enumerate() {
                let y = chunk_min[0][ci];
                for i in 0..m {
                    atb[i] += f[i] * y;
                    for j in 0..m {
                        ata[i][j] += f[i] * f[j];
                    }
                }
            }
            for i in 0..m {
                let piv = ata[i][i];
                for j in i + 1..m {
                    let f = ata[j][i] / piv;
                    for k2 in i..m {
                        ata[j][k2] -= f * ata[i][k2];
                    }
                    atb[j] -= f * atb[i];
                }
            }
            let mut x = vec![0.0; m];
            for i in (0..m).rev() {
                let mut s = atb[i];
                for j in i + 1..m {
                    s -= ata[i][j] * x[j];
                }
                x[i] = s / ata[i][i];
            }
            let pred: Vec<f64> = f2.iter().map(|f| (0..m).map(|i| f[i] * x[i]).sum()).collect();
            let rel: Vec<f64> = pred.iter().zip(&chunk_min[0]).map(|(p, y)| ((p - y) / y).abs()).collect();
            let err = rel.iter().fold(0.0f64, |a, &b| a.max(b));
            let rms = (rel.iter().map(|r| r * r).sum::<f64>() / rel.len() as f64).sqrt();
            println!("piecewise K={kk}: ns [first-K edges, rest edges, row] = {:?}; max rel err {err:.3} rms {rms:.3}",
                x.iter().map(|v| v * 1e9).collect::<Vec<_>>());
        }
        // Regions: ratio of each variant's chunk-min sums over 8 position ranges.
        for (ki, (nm, _)) in kernels.iter().enumerate() {
            let r: Vec<String> = (0..8)
                .map(|q| {
                    let (a, b) = (q * nch / 8, (q + 1) * nch / 8);
                    let s: f64 = chunk_min[ki][a..b].iter().sum();
                    let s0: f64 = chunk_min[0][a..b].iter().sum();
                    format!("{:.3}", s / s0)
                })
                .collect();
            println!("{nm:10} by region: {}", r.join(" "));
        }
        // Chunk time by position (every 16th)
        for ci in (0..nch).step_by(16) {
            let f = feats[ci];
            println!("chunk {ci}: rows {} edges {} zero-rows {} cold {} time {:.5} ms, model6 {:.0}", f[1], f[0], f[2], f[3], chunk_min[0][ci] * 1e3, f[0] + 6.0 * f[1]);
        }
    }
}
