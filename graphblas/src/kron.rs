//! R-MAT / Graph500 Kronecker graph generator.
//!
//! Each of the `edge_factor · 2^scale` edges is produced by descending
//! `scale` levels of the 2×2 initiator `[[A, B], [C, D]]` (Graph500: A=0.57,
//! B=C=0.19, D=0.05), choosing one quadrant per level. Edge `i` draws its
//! randomness from a counter-based hash of `(seed, i, level)` only, so any
//! contiguous chunk of edge indices can be generated independently: P
//! processes (or threads) each generate their own chunk, and the union is
//! bit-identical for every P. Vertex ids are then relabelled with a seeded
//! permutation to destroy the locality R-MAT puts in low ids (as Graph500
//! does). Self-loops and duplicates are kept in the edge list and removed
//! when building the matrix ([`kron_matrix`]).
//!
//! (The Graph500 reference also perturbs the probabilities per level; that
//! noise is omitted here — it changes the degree distribution only
//! slightly and is not needed for the benchmark's purpose.)

use crate::error::{GrbError, GrbResult};
use crate::matrix::{Coo, DupPolicy, Matrix};
use crate::parallel::{even_blocks, run_blocks};
use crate::prng::{hash2, permutation, shuffle};
use std::ops::Range;

/// Generator parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KronParams {
    /// log2 of the number of vertices (1..=31).
    pub scale: u32,
    /// Edges per vertex.
    pub edge_factor: u32,
    /// Probability of the top-left quadrant.
    pub a: f64,
    /// Probability of the top-right quadrant.
    pub b: f64,
    /// Probability of the bottom-left quadrant (D = 1 - A - B - C).
    pub c: f64,
    /// Seed of both the edge hash and the relabelling permutation.
    pub seed: u64,
}

impl KronParams {
    /// Graph500 parameters: A=0.57, B=C=0.19, D=0.05, edge factor 16.
    pub fn graph500(scale: u32, seed: u64) -> Self {
        KronParams { scale, edge_factor: 16, a: 0.57, b: 0.19, c: 0.19, seed }
    }

    fn validate(&self) -> GrbResult<()> {
        if !(1..=31).contains(&self.scale) {
            return Err(GrbError::InvalidValue(format!("scale {} outside 1..=31", self.scale)));
        }
        let d = 1.0 - self.a - self.b - self.c;
        if [self.a, self.b, self.c].iter().any(|p| !(0.0..=1.0).contains(p)) || d < -1e-12 {
            return Err(GrbError::InvalidValue("R-MAT probabilities must be in [0,1] and sum to <= 1".into()));
        }
        Ok(())
    }

    /// Number of vertices, `2^scale`.
    pub fn num_vertices(&self) -> u64 {
        1u64 << self.scale
    }

    /// Number of generated edges (before removing loops/duplicates).
    pub fn num_edges(&self) -> u64 {
        (self.edge_factor as u64) << self.scale
    }

    /// Edge indices of chunk `part` out of `nparts` (contiguous, balanced).
    pub fn chunk(&self, part: usize, nparts: usize) -> Range<u64> {
        let m = self.num_edges() as u128;
        let (p, np) = (part as u128, nparts.max(1) as u128);
        ((m * p / np) as u64)..((m * (p + 1) / np) as u64)
    }

    /// The seeded vertex relabelling (every process computes the same one).
    pub fn permutation(&self) -> Vec<u32> {
        permutation(self.num_vertices() as usize, hash2(self.seed, u64::MAX))
    }

    /// [`KronParams::permutation`], its memory claimed fallibly: an error naming the
    /// bytes when the machine cannot give them.
    pub fn try_permutation(&self) -> GrbResult<Vec<u32>> {
        self.validate()?;
        let n = self.num_vertices() as usize;
        let mut v: Vec<u32> = Vec::new();
        v.try_reserve_exact(n).map_err(|_| {
            GrbError::InvalidValue(format!(
                "out of memory: cannot allocate {} bytes for the vertex permutation of R-MAT scale {}",
                n.saturating_mul(4),
                self.scale
            ))
        })?;
        v.extend((0..n as u64).map(|i| i as u32));
        shuffle(&mut v, hash2(self.seed, u64::MAX));
        Ok(v)
    }

    /// Edge `i` before relabelling: one 32-bit uniform draw per level, two
    /// levels per 64-bit hash.
    #[inline]
    pub fn raw_edge(&self, i: u64) -> (u32, u32) {
        let scale_f = 4294967296.0; // 2^32
        let ta = (self.a * scale_f) as u64;
        let tab = ((self.a + self.b) * scale_f) as u64;
        let tabc = ((self.a + self.b + self.c) * scale_f) as u64;
        let (mut u, mut v) = (0u32, 0u32);
        let mut h = 0u64;
        for level in 0..self.scale {
            let x = if level % 2 == 0 {
                h = hash2(self.seed, (i << 5) | (level as u64 / 2));
                h & 0xffff_ffff
            } else {
                h >> 32
            };
            let (rb, cb) = if x < ta {
                (0, 0)
            } else if x < tab {
                (0, 1)
            } else if x < tabc {
                (1, 0)
            } else {
                (1, 1)
            };
            u = (u << 1) | rb;
            v = (v << 1) | cb;
        }
        (u, v)
    }

    /// Generates edges `range` (relabelled with `perm`) as a pattern, using
    /// `threads` threads. The output depends only on the parameters and the
    /// range, never on `threads`.
    pub fn generate(&self, range: Range<u64>, perm: &[u32], threads: usize) -> GrbResult<Coo<f64>> {
        self.validate()?;
        if perm.len() as u64 != self.num_vertices() {
            return Err(GrbError::InvalidValue("permutation length differs from 2^scale".into()));
        }
        let len = (range.end - range.start) as usize;
        // The output, claimed fallibly (a graph too large for memory is an error naming
        // the bytes, not an abort) and filled in place by the threads.
        let alloc = || -> GrbResult<Vec<u32>> {
            let mut v = Vec::new();
            v.try_reserve_exact(len).map_err(|_| {
                GrbError::InvalidValue(format!(
                    "out of memory: cannot allocate {} bytes for {len} R-MAT edges (scale {})",
                    len.saturating_mul(8),
                    self.scale
                ))
            })?;
            v.resize(len, 0);
            Ok(v)
        };
        let (mut rows, mut cols) = (alloc()?, alloc()?);
        let bounds = even_blocks(len, threads);
        let mut blocks = Vec::with_capacity(bounds.len());
        let (mut rest_r, mut rest_c) = (&mut rows[..], &mut cols[..]);
        for w in bounds.windows(2) {
            let (r, rr) = std::mem::take(&mut rest_r).split_at_mut(w[1] - w[0]);
            let (c, cr) = std::mem::take(&mut rest_c).split_at_mut(w[1] - w[0]);
            rest_r = rr;
            rest_c = cr;
            blocks.push((range.start + w[0] as u64, r, c));
        }
        run_blocks(blocks, |_, (start, r, c)| {
            for k in 0..r.len() {
                let (u, v) = self.raw_edge(start + k as u64);
                r[k] = perm[u as usize];
                c[k] = perm[v as usize];
            }
        })?;
        let n = self.num_vertices() as usize;
        let mut coo = Coo::new_pattern(n, n);
        coo.rows = rows;
        coo.cols = cols;
        Ok(coo)
    }
}

/// Generates the whole graph and builds its adjacency matrix (row = source,
/// col = target) with self-loops and duplicate edges removed.
pub fn kron_matrix(params: &KronParams, threads: usize) -> GrbResult<Matrix<bool>> {
    let perm = params.permutation();
    let coo = params.generate(0..params.num_edges(), &perm, threads)?;
    matrix_from_edges_no_loops(coo)
}

/// Builds a pattern matrix from generated edges, dropping self-loops and
/// duplicates (shared by the whole-graph and chunked paths).
pub fn matrix_from_edges_no_loops(mut coo: Coo<f64>) -> GrbResult<Matrix<bool>> {
    coo.remove_self_loops();
    let pattern = Coo::<bool> { nrows: coo.nrows, ncols: coo.ncols, rows: coo.rows, cols: coo.cols, vals: None };
    Matrix::from_coo(&pattern, DupPolicy::PatternDedup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_chunks_is_independent_of_p() {
        let p = KronParams::graph500(10, 12345);
        let perm = p.permutation();
        let whole = p.generate(0..p.num_edges(), &perm, 1).unwrap();
        assert_eq!(whole.len() as u64, 16 * 1024);
        for nparts in [2, 3, 7] {
            let mut acc = Coo::new_pattern(1024, 1024);
            for part in 0..nparts {
                acc.append(p.generate(p.chunk(part, nparts), &perm, 1 + part % 3).unwrap());
            }
            assert_eq!(acc, whole, "P = {nparts}");
        }
        // Deterministic per seed, different across seeds.
        assert_eq!(p.generate(0..100, &perm, 2).unwrap(), p.generate(0..100, &perm, 1).unwrap());
        let q = KronParams::graph500(10, 12346);
        assert_ne!(q.generate(0..100, &q.permutation(), 1).unwrap(), p.generate(0..100, &perm, 1).unwrap());
    }

    #[test]
    fn quadrant_frequencies_match_initiator() {
        // At the top level, the first bit pair of a raw edge is (0,0) with
        // probability A, (0,1) with B, (1,0) with C, (1,1) with D.
        let p = KronParams::graph500(12, 7);
        let mut counts = [0u64; 4];
        let m = 200_000u64;
        for i in 0..m {
            let (u, v) = p.raw_edge(i);
            let q = ((u >> 11) * 2 + (v >> 11)) as usize;
            counts[q] += 1;
        }
        let expect = [0.57, 0.19, 0.19, 0.05];
        for k in 0..4 {
            let f = counts[k] as f64 / m as f64;
            assert!((f - expect[k]).abs() < 0.005, "quadrant {k}: {f}");
        }
    }

    #[test]
    fn matrix_has_no_loops_or_duplicates_and_skewed_degrees() {
        let p = KronParams::graph500(12, 3);
        let a = kron_matrix(&p, 2).unwrap();
        assert_eq!(a.nrows(), 4096);
        for i in 0..a.nrows() {
            let (idx, _) = a.csr().line(i);
            assert!(idx.windows(2).all(|w| w[0] < w[1]));
            assert!(!idx.contains(&(i as u32)));
        }
        assert!(a.nvals() < 16 * 4096 && a.nvals() > 8 * 4096, "nvals {}", a.nvals());
        let deg = a.row_counts();
        let max = *deg.iter().max().unwrap();
        let zero = deg.iter().filter(|&&d| d == 0).count();
        assert!(max > 200, "R-MAT should produce hubs, max degree {max}");
        assert!(zero > 100, "R-MAT should produce many zero out-degree vertices, got {zero}");
        // Relabelling: the hub is not simply vertex 0.
        assert!(a.nvals() == kron_matrix(&p, 1).unwrap().nvals());
    }

    /// Pins the generated stream: the same (scale, seed) must give the same
    /// graph in every future version, or stored benchmark results and
    /// cross-language comparisons silently stop being comparable.
    #[test]
    fn generated_stream_is_pinned() {
        let p = KronParams::graph500(16, 2024);
        let perm = p.permutation();
        let coo = p.generate(0..4096, &perm, 2).unwrap();
        let mut h = 0u64;
        for k in 0..coo.len() {
            h = crate::prng::mix64(h ^ ((coo.rows[k] as u64) << 32 | coo.cols[k] as u64));
        }
        assert_eq!(h, GOLDEN, "R-MAT stream changed: got {h:#018x}");
    }
    const GOLDEN: u64 = 0x090a_4eb0_8b88_3da4;

    #[test]
    fn rejects_bad_parameters() {
        let mut p = KronParams::graph500(0, 1);
        assert!(p.generate(0..1, &[0], 1).is_err());
        p.scale = 4;
        p.a = 0.9;
        assert!(p.generate(0..1, &p.permutation(), 1).is_err());
    }
}
