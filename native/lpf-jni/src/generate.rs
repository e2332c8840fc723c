//! `LpfNative.rmatEdges`: parts of a Graph500 Kronecker (R-MAT) graph for the JVM, from
//! the one generator of the project (`graphblas::kron`), so that a Spark job can write
//! the same graph the native `graph`/`pagerank` CLIs generate (e.g. as Parquet for the
//! scale benchmark) without a second generator in another language.
//!
//! Part `part` of `parts` is the edges of `KronParams::chunk(part, parts)`, relabelled,
//! self-loops dropped (as the distributed loader's R-MAT input does; duplicates stay, as
//! there), each as a little-endian triple (i64 source, i64 target, f64 weight): 24 bytes.
//! The weight of the edge of global index `i` is an integer in 1..=63 drawn from the
//! generator's counter-based hash at slot 31 of `i`'s counters (the levels use slots
//! 0..=15), so neither the graph nor its weights depend on `parts`.

use crate::session::{Failure, Phase};
use crate::{entry, local_host_name, Who};
use graphblas::kron::KronParams;
use graphblas::prng::hash2;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use std::sync::{Arc, Mutex};

/// Bytes of one edge in the output: source, target, weight.
pub(crate) const TRIPLE_BYTES: usize = 24;

/// The hash counter slot of an edge's weight (the levels of `KronParams::raw_edge` use
/// slots 0..=15 of the edge's 32).
const WEIGHT_SLOT: u64 = 31;

/// The weight of the edge of global index `i`: an integer in 1..=63.
pub(crate) fn weight(seed: u64, i: u64) -> f64 {
    (1 + hash2(seed, (i << 5) | WEIGHT_SLOT) % 63) as f64
}

/// The last permutation made, by (scale, seed): a Spark task asks for many parts of one
/// graph in a row, and at scale 24 the permutation is 64 MiB and a shuffle of 2^24.
static LAST_PERMUTATION: Mutex<Option<KeptPermutation>> = Mutex::new(None);

/// A permutation and the (scale, seed) it belongs to.
type KeptPermutation = (u32, u64, Arc<Vec<u32>>);

fn permutation(params: &KronParams) -> Result<Arc<Vec<u32>>, String> {
    let mut last = LAST_PERMUTATION.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((scale, seed, perm)) = last.as_ref() {
        if (*scale, *seed) == (params.scale, params.seed) {
            return Ok(perm.clone());
        }
    }
    // The old one goes before the new one is made: one at a time in memory.
    *last = None;
    let perm = Arc::new(params.try_permutation().map_err(|e| e.to_string())?);
    *last = Some((params.scale, params.seed, perm.clone()));
    Ok(perm)
}

/// Part `part` of `parts` of the graph (scale, edge factor, seed) as triples (see the
/// module's comment); an error naming the parameter for bad arguments, or the bytes when
/// the part does not fit a Java array or the memory.
pub(crate) fn rmat_triples(scale: i32, edge_factor: i32, seed: i64, part: i32, parts: i32) -> Result<Vec<u8>, String> {
    if !(1..=31).contains(&scale) {
        return Err(format!("scale {scale} is outside 1..31"));
    }
    if edge_factor < 1 {
        return Err(format!("edgeFactor {edge_factor} must be at least 1"));
    }
    if parts < 1 || part < 0 || part >= parts {
        return Err(format!("part {part} of parts {parts}: need parts >= 1 and 0 <= part < parts"));
    }
    let params = KronParams { edge_factor: edge_factor as u32, ..KronParams::graph500(scale as u32, seed as u64) };
    let range = params.chunk(part as usize, parts as usize);
    let most = (range.end - range.start).saturating_mul(TRIPLE_BYTES as u64);
    if most > i32::MAX as u64 - 8 {
        return Err(format!(
            "part {part} of {parts} holds {} edges, up to {most} bytes: more than a Java array holds; ask for more parts",
            range.end - range.start
        ));
    }
    let perm = permutation(&params)?;
    let coo = params.generate(range.clone(), &perm, 1).map_err(|e| e.to_string())?;
    let mut out: Vec<u8> = Vec::new();
    let kept = coo.rows.iter().zip(&coo.cols).filter(|(u, v)| u != v).count();
    out.try_reserve_exact(kept * TRIPLE_BYTES)
        .map_err(|_| format!("out of memory: cannot allocate {} bytes for {kept} edges", kept * TRIPLE_BYTES))?;
    for (k, (&u, &v)) in coo.rows.iter().zip(&coo.cols).enumerate() {
        if u != v {
            out.extend_from_slice(&(u as i64).to_le_bytes());
            out.extend_from_slice(&(v as i64).to_le_bytes());
            out.extend_from_slice(&weight(params.seed, range.start + k as u64).to_le_bytes());
        }
    }
    Ok(out)
}

/// `static native byte[] rmatEdges(int scale, int edgeFactor, long seed, int part, int
/// parts)`: [`rmat_triples`].
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_rmatEdges<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    scale: jint,
    edge_factor: jint,
    seed: jlong,
    part: jint,
    parts: jint,
) -> JByteArray<'l> {
    entry(&mut env, Phase::Argument, || Who { pid: -1, host: local_host_name() }, |env| {
        let out = rmat_triples(scale, edge_factor, seed, part, parts).map_err(|m| Failure::permanent(Phase::Argument, m))?;
        env.byte_array_from_slice(&out).map_err(|e| Failure::new(Phase::Argument, format!("returning the edges: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triples(b: &[u8]) -> Vec<(i64, i64, f64)> {
        b.chunks_exact(TRIPLE_BYTES)
            .map(|t| {
                let f = |i: usize| <[u8; 8]>::try_from(&t[i..i + 8]).unwrap();
                (i64::from_le_bytes(f(0)), i64::from_le_bytes(f(8)), f64::from_le_bytes(f(16)))
            })
            .collect()
    }

    #[test]
    fn parts_are_the_generators_edges_without_self_loops_and_weights_do_not_depend_on_the_split() {
        let (scale, seed) = (9, 77u64);
        let params = KronParams::graph500(scale, seed);
        let coo = params.generate(0..params.num_edges(), &params.permutation(), 2).unwrap();
        let want: Vec<(i64, i64)> =
            coo.rows.iter().zip(&coo.cols).filter(|(u, v)| u != v).map(|(&u, &v)| (u as i64, v as i64)).collect();
        assert!(want.len() < coo.len(), "the graph should have self-loops to drop");
        let mut by_split = Vec::new();
        for parts in [1, 3] {
            let mut got = Vec::new();
            for part in 0..parts {
                let b = rmat_triples(scale as i32, 16, seed as i64, part, parts).unwrap();
                assert_eq!(b.len() % TRIPLE_BYTES, 0);
                got.extend(triples(&b));
            }
            assert_eq!(got.iter().map(|&(u, v, _)| (u, v)).collect::<Vec<_>>(), want, "{parts} parts");
            assert!(got.iter().all(|&(_, _, w)| w.fract() == 0.0 && (1.0..=63.0).contains(&w)), "{parts} parts");
            by_split.push(got);
        }
        assert_eq!(by_split[0], by_split[1], "weights differ between 1 and 3 parts");
        let distinct: std::collections::BTreeSet<u64> = by_split[0].iter().map(|t| t.2 as u64).collect();
        assert_eq!(distinct.len(), 63, "weights should take every value 1..63 on {} edges", want.len());
    }

    #[test]
    fn the_edge_factor_sets_the_edges_generated() {
        let b = rmat_triples(6, 4, 1, 0, 1).unwrap();
        let coo = KronParams { edge_factor: 4, ..KronParams::graph500(6, 1) }
            .generate(0..4 * 64, &KronParams::graph500(6, 1).permutation(), 1)
            .unwrap();
        assert_eq!(b.len() / TRIPLE_BYTES, coo.rows.iter().zip(&coo.cols).filter(|(u, v)| u != v).count());
    }

    #[test]
    fn bad_arguments_name_the_parameter() {
        for (args, word) in [
            ((0, 16, 1, 0, 1), "scale 0"),
            ((32, 16, 1, 0, 1), "scale 32"),
            ((8, 0, 1, 0, 1), "edgeFactor 0"),
            ((8, 16, 1, 2, 2), "part 2 of parts 2"),
            ((8, 16, 1, 0, 0), "parts 0"),
            ((8, 16, 1, -1, 2), "part -1"),
        ] {
            let (s, e, seed, part, parts) = args;
            let m = rmat_triples(s, e, seed, part, parts).unwrap_err();
            assert!(m.contains(word), "{args:?}: {m}");
        }
        let m = rmat_triples(31, 16, 1, 0, 1).unwrap_err();
        assert!(m.contains("Java array") && m.contains("more parts"), "{m}");
    }
}
