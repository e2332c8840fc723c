//! Streaming memory-bandwidth probe, measured in the same run as the
//! benchmark so that PageRank times can be compared with a *floor model*:
//! an iteration must move at least `12 · nnz + 32 · n` bytes (per edge a
//! 4-byte index and an 8-byte gathered contribution; per vertex the row
//! pointer, old/new rank and 1/outdeg), so `bytes / bandwidth` bounds the
//! time from below (for gathers that miss cache).

use crate::error::GrbResult;
use crate::parallel::{even_blocks, run_blocks};
use std::hint::black_box;
use std::time::Instant;

/// Measured bandwidths in GB/s (1e9 bytes/s), best of `reps` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bandwidth {
    /// Read-only streaming (sum of a large array).
    pub read_gbs: f64,
    /// Copy-like streaming `a[i] = b[i] + s·c[i]` (counts 24 bytes/element,
    /// not the write-allocate read).
    pub triad_gbs: f64,
}

/// Measures streaming bandwidth over arrays of `bytes` bytes each (choose
/// well above the last-level cache) with `threads` threads (an error when they cannot
/// be had).
pub fn measure(bytes: usize, threads: usize, reps: usize) -> GrbResult<Bandwidth> {
    let n = bytes / 8;
    let b: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let c: Vec<f64> = (0..n).map(|i| (i % 5) as f64).collect();
    let mut a = vec![0.0f64; n];
    let bounds = even_blocks(n, threads);
    let mut best_read = f64::INFINITY;
    let mut best_triad = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let parts: Vec<&[f64]> = bounds.windows(2).map(|w| &b[w[0]..w[1]]).collect();
        let sums = run_blocks(parts, |_, p| {
            // Eight lanes so the sum is not latency-bound.
            let mut acc = [0.0f64; 8];
            for ch in p.chunks_exact(8) {
                for k in 0..8 {
                    acc[k] += ch[k];
                }
            }
            acc.iter().sum::<f64>()
        })?;
        black_box(sums);
        best_read = best_read.min(t.elapsed().as_secs_f64());

        let t = Instant::now();
        let mut rest: &mut [f64] = &mut a;
        let mut parts = Vec::new();
        for w in bounds.windows(2) {
            let (h, tl) = rest.split_at_mut(w[1] - w[0]);
            parts.push((h, w[0]));
            rest = tl;
        }
        let (b, c) = (&b, &c);
        run_blocks(parts, |_, (out, lo)| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = b[lo + k] + 3.0 * c[lo + k];
            }
        })?;
        black_box(&a);
        best_triad = best_triad.min(t.elapsed().as_secs_f64());
    }
    Ok(Bandwidth { read_gbs: (n * 8) as f64 / best_read / 1e9, triad_gbs: (n * 24) as f64 / best_triad / 1e9 })
}

/// Floor-model bytes of one PageRank iteration.
pub fn pagerank_floor_bytes(n: usize, nnz: usize) -> f64 {
    12.0 * nnz as f64 + 32.0 * n as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn measures_something_positive() {
        let bw = super::measure(1 << 20, 2, 2).unwrap();
        assert!(bw.read_gbs > 0.01 && bw.read_gbs.is_finite());
        assert!(bw.triad_gbs > 0.01 && bw.triad_gbs.is_finite());
        assert_eq!(super::pagerank_floor_bytes(10, 100), 1520.0);
    }
}
