//! Algorithms bundled in the native library, selected by name from the JVM.
//!
//! Each is an SPMD function over plain bytes: every process of a hook passes its own
//! input and output buffers. A misuse that one process can see (input lengths that
//! differ between processes, an output buffer too small) is found *collectively*: the
//! first superstep exchanges each process's sizes, so every process returns the same
//! error instead of some of them waiting in a sync.
//!
//! | name | input (per process) | output (per process) |
//! |---|---|---|
//! | `allreduce-sum-i64` | n little-endian i64 | the n element-wise (wrapping) sums over all processes |
//! | `ring-shift` | n bytes | the n bytes of process (pid - 1) mod p |
//! | `graph-call` | a request (see [`crate::graph_call`]): a kernel (BFS, WCC, CDLP, SSSP, LCC, PageRank, GraphX PageRank, shortest paths to landmarks) and this partition's edges and vertices with their own ids (i64 or byte strings) | this process's block of `(id, value)`, rounds, timings (produced) |
//! | `pagerank` | a request (see [`crate::pagerank`]): parameters and a file to read in parallel, or the R-MAT graph to generate | this process's `(id, rank)` pairs, iterations, residual, timings (produced: its size is known only after the run) |

use crate::progress::ProgressSink;
use crate::verdict::{exchange_words, lpf};
use lpf::{Args, Context, MSG_DEFAULT, SYNC_DEFAULT};

/// The result of a bundled algorithm on one process: `Err` carries a message.
pub(crate) type Outcome = Result<(), String>;

/// An algorithm that produces its output (see [`Body::Produces`]) from its request,
/// which it may drop as soon as it has read it (see [`crate::request::RequestBytes`]).
pub(crate) type Produce = fn(&mut Context, crate::request::RequestBytes<'_>, Option<&ProgressSink>) -> Result<Vec<u8>, String>;

/// How an algorithm returns its output.
#[derive(Clone, Copy)]
pub(crate) enum Body {
    /// Writes into a caller's buffer whose size follows from the input length.
    Fixed { output_len: fn(usize) -> usize, run: fn(&mut Context, Args<'_>) -> Outcome },
    /// Produces its output, whose size is known only after the run (the JVM gets a
    /// fresh byte array); reports its progress to the sink, if this process has one.
    Produces(Produce),
}

pub(crate) struct Algorithm {
    pub(crate) name: &'static str,
    pub(crate) body: Body,
}

impl Algorithm {
    /// Output bytes for an input of `input_len` bytes; `None` when the algorithm
    /// produces output of a size known only after the run.
    pub(crate) fn output_len(&self, input_len: usize) -> Option<usize> {
        match self.body {
            Body::Fixed { output_len, .. } => Some(output_len(input_len)),
            Body::Produces(_) => None,
        }
    }
}

pub(crate) const ALGORITHMS: &[Algorithm] = &[
    Algorithm { name: "allreduce-sum-i64", body: Body::Fixed { output_len: |n| n, run: allreduce_sum_i64 } },
    Algorithm { name: "ring-shift", body: Body::Fixed { output_len: |n| n, run: ring_shift } },
    Algorithm { name: "pagerank", body: Body::Produces(crate::pagerank::run) },
    Algorithm { name: "graph-call", body: Body::Produces(crate::graph_call::run) },
];

pub(crate) fn by_name(name: &str) -> Result<&'static Algorithm, String> {
    ALGORITHMS.iter().find(|a| a.name == name).ok_or_else(|| {
        let known: Vec<&str> = ALGORITHMS.iter().map(|a| a.name).collect();
        format!("no bundled algorithm is called {name:?} (bundled: {})", known.join(", "))
    })
}

/// Superstep 1 of every algorithm: each process learns every process's input length and
/// whether its output buffer is big enough (`u64::MAX` marks one that is not).
/// Leaves the register with room for `slots` slots and the queue for `msgs` messages.
fn exchange_sizes(ctx: &mut Context, input: usize, output_ok: bool, slots: usize, msgs: usize) -> Result<Vec<u64>, String> {
    exchange_words(ctx, if output_ok { input as u64 } else { u64::MAX }, slots, msgs)
}

/// The same verdict on every process: all inputs `len` bytes, a multiple of `unit`, and
/// every output buffer big enough.
fn check_sizes(sizes: &[u64], unit: usize, what: &str) -> Outcome {
    if let Some(q) = sizes.iter().position(|&s| s == u64::MAX) {
        return Err(format!("{what}: the output buffer of process {q} is smaller than its input"));
    }
    if let Some(q) = sizes.iter().position(|&s| s != sizes[0]) {
        return Err(format!(
            "{what}: every process must pass an input of the same length; process 0 has {} bytes, process {q} has {}",
            sizes[0], sizes[q]
        ));
    }
    if !sizes[0].is_multiple_of(unit as u64) {
        return Err(format!("{what}: the input length {} is not a multiple of {unit} bytes", sizes[0]));
    }
    Ok(())
}

fn allreduce_sum_i64(ctx: &mut Context, args: Args<'_>) -> Outcome {
    const WHAT: &str = "allreduce-sum-i64";
    let (p, pid) = (ctx.nprocs() as usize, ctx.pid() as usize);
    let n = args.input.len();
    let sizes = exchange_sizes(ctx, n, args.output.len() >= n, 2, 2 * p)?;
    check_sizes(&sizes, 8, WHAT)?;
    // Everyone puts its whole vector into slot `pid` of everyone's gather buffer, then
    // sums locally: one superstep with h = (p - 1) n bytes.
    let mut gather = vec![0u8; n * p];
    let gathered = ctx.register_global(&mut gather).map_err(lpf)?;
    // SAFETY: the input is only read (as the source of puts) and outlives the slot,
    // which is deregistered below.
    let src = unsafe { ctx.register_local_raw(args.input.as_ptr() as *mut u8, n) }.map_err(lpf)?;
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    if n > 0 {
        for q in 0..p {
            ctx.put(src, 0, q as u32, gathered.slot(), pid * n, n, MSG_DEFAULT).map_err(lpf)?;
        }
    }
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    ctx.deregister(src).map_err(lpf)?;
    let all = ctx.slice(&gathered);
    for (i, out) in args.output[..n].chunks_exact_mut(8).enumerate() {
        let sum = (0..p)
            .map(|q| i64::from_le_bytes(all[q * n + 8 * i..q * n + 8 * i + 8].try_into().unwrap()))
            .fold(0i64, i64::wrapping_add);
        out.copy_from_slice(&sum.to_le_bytes());
    }
    ctx.deregister(gathered.slot()).map_err(lpf)?;
    Ok(())
}

fn ring_shift(ctx: &mut Context, args: Args<'_>) -> Outcome {
    const WHAT: &str = "ring-shift";
    let (p, pid) = (ctx.nprocs(), ctx.pid());
    let n = args.input.len();
    let sizes = exchange_sizes(ctx, n, args.output.len() >= n, 2, 2)?;
    check_sizes(&sizes, 1, WHAT)?;
    // SAFETY: the output outlives the slot, deregistered below, and is touched by
    // nobody else meanwhile; the input is only read.
    let dst = unsafe { ctx.register_global_raw(args.output.as_mut_ptr(), n) }.map_err(lpf)?;
    // SAFETY: as above; the area is only the source of a put, never written.
    let src = unsafe { ctx.register_local_raw(args.input.as_ptr() as *mut u8, n) }.map_err(lpf)?;
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    if n > 0 {
        ctx.put(src, 0, (pid + 1) % p, dst, 0, n, MSG_DEFAULT).map_err(lpf)?;
    }
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    ctx.deregister(src).map_err(lpf)?;
    ctx.deregister(dst).map_err(lpf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpf::Root;
    use std::sync::Mutex;

    fn fixed(alg: &Algorithm) -> fn(&mut Context, Args<'_>) -> Outcome {
        match alg.body {
            Body::Fixed { run, .. } => run,
            Body::Produces(_) => unreachable!("{} produces its output", alg.name),
        }
    }


    fn run_on_threads(p: u32, name: &str, inputs: Vec<Vec<u8>>, out_len: usize) -> Vec<Result<Vec<u8>, String>> {
        let alg = by_name(name).unwrap();
        let _turn = crate::SHM_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::scope(|s| {
            let handles: Vec<_> = inputs
                .into_iter()
                .enumerate()
                .map(|(pid, input)| {
                    s.spawn(move || {
                        let init = lpf::ShmInit::new(pid as u32, p).unwrap();
                        let mut out = vec![0u8; out_len];
                        let err = Mutex::new(None);
                        let spmd = |c: &mut Context, a: Args<'_>| {
                            if let Err(e) = fixed(alg)(c, a) {
                                *err.lock().unwrap() = Some(e);
                            }
                        };
                        let r = init.hook(&spmd, Args::new(&input, &mut out));
                        match (r, err.into_inner().unwrap()) {
                            (_, Some(e)) => Err(e),
                            (Err(e), None) => Err(e.to_string()),
                            (Ok(()), None) => Ok(out),
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn longs(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn allreduce_sums_over_threads() {
        let p = 3;
        let inputs: Vec<Vec<u8>> = (0..p).map(|q| longs(&[q as i64, 10 * q as i64, -1])).collect();
        for r in run_on_threads(p, "allreduce-sum-i64", inputs, 24) {
            assert_eq!(r.unwrap(), longs(&[3, 30, -3]));
        }
    }

    #[test]
    fn ring_shift_over_threads() {
        let p = 4;
        let inputs: Vec<Vec<u8>> = (0..p).map(|q| vec![q as u8; 5]).collect();
        for (pid, r) in run_on_threads(p, "ring-shift", inputs, 5).into_iter().enumerate() {
            assert_eq!(r.unwrap(), vec![((pid as u32 + p - 1) % p) as u8; 5]);
        }
    }

    #[test]
    fn unequal_inputs_fail_everywhere_with_the_same_message() {
        let inputs = vec![longs(&[1, 2]), longs(&[1])];
        let results = run_on_threads(2, "allreduce-sum-i64", inputs, 16);
        for r in &results {
            let e = r.as_ref().unwrap_err();
            assert!(e.contains("same length") && e.contains("process 1 has 8"), "{e}");
        }
    }

    #[test]
    fn one_process_runs_alone() {
        let r = run_on_threads(1, "allreduce-sum-i64", vec![longs(&[7])], 8);
        assert_eq!(r[0].as_ref().unwrap(), &longs(&[7]));
    }

    #[test]
    fn unknown_names_list_the_bundled_ones() {
        let e = by_name("nope").err().unwrap();
        assert!(e.contains("allreduce-sum-i64") && e.contains("ring-shift") && e.contains("pagerank"), "{e}");
        let _ = Root::new();
    }
}
