//! `pagerank`: distributed PageRank over LPF from the command line.
//!
//! ```text
//! pagerank (--input FILE [--format mtx|edges|bin] [--one-based] | --rmat SCALE [--seed S])
//!          [--engine shm|tcp|hybrid] [-p P] [--threads T] [--alpha A] [--tol X] [--max-iters N]
//!          [--exchange auto|allgather|plan] [--output FILE] [--convert-to FILE.bin]
//!          [--bandwidth] [--quiet]
//! ```
//!
//! Progress (one line per iteration: iteration, residual, seconds) goes to stderr, the
//! summary to stdout. `--output` writes one `id rank` line per vertex, with the ids of
//! the input (MatrixMarket, binary and R-MAT inputs declare their vertices, isolated ones
//! included; an edge list's vertices are the ids some edge names, any u64). `--convert-to` writes
//! the graph (duplicates removed) in the binary format and exits. `--engine` selects the
//! LPF engine (sets `LPF_ENGINE`); under `lpfrun` (tcp, hybrid) every OS process runs
//! this program, `-p` defaults to the whole job and only the one hosting pid 0 prints
//! the summary. Exit code 1 with the message on bad input, 2 on bad usage.

use graphblas::bandwidth::{measure, pagerank_floor_bytes};
use graphblas::cli::{print_stderr_line, run_job, set_engine, value, InputArgs};
use graphblas::dist::{convert_to_binary_spmd, pagerank_spmd_with, write_ranks_spmd, DistError, DistOptions, Exchange};
use graphblas::PageRankConfig;
use lpf::Context;
use std::path::PathBuf;
use std::time::Instant;

const USAGE: &str = "usage: pagerank (--input FILE [--format mtx|edges|bin] [--one-based] | --rmat SCALE [--seed S]) \
[--engine shm|tcp|hybrid] [-p P] [--threads T] [--alpha A] [--tol X] [--max-iters N] \
[--exchange auto|allgather|plan] [--output FILE] [--convert-to FILE.bin] [--bandwidth] [--quiet]";

struct Opts {
    input: InputArgs,
    engine: Option<String>,
    /// `-p`; default 1 on shm, all processes of the job on the network engines.
    p: Option<u32>,
    cfg: PageRankConfig,
    exchange: Exchange,
    output: Option<PathBuf>,
    convert_to: Option<PathBuf>,
    bandwidth: bool,
    quiet: bool,
}

fn usage(msg: &str) -> ! {
    print_stderr_line(&format!("pagerank: {msg}\n{USAGE}"));
    std::process::exit(2)
}

fn parse() -> Opts {
    let mut o = Opts {
        input: InputArgs::default(),
        engine: None,
        p: None,
        cfg: PageRankConfig::default(),
        exchange: Exchange::Auto,
        output: None,
        convert_to: None,
        bandwidth: false,
        quiet: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    fn num<T: std::str::FromStr>(name: &str, v: Option<&String>) -> T {
        value(usage, name, v)
    }
    while i < args.len() {
        let a = args[i].as_str();
        let v = args.get(i + 1);
        if let Some(used) = o.input.take(usage, a, v) {
            i += used;
            continue;
        }
        let mut take = true;
        match a {
            "--engine" => o.engine = Some(num(a, v)),
            "-p" | "--procs" => o.p = Some(num(a, v)),
            "--threads" | "-t" => o.cfg.threads = num(a, v),
            "--alpha" => o.cfg.alpha = num(a, v),
            "--tol" => o.cfg.tol = num(a, v),
            "--max-iters" => o.cfg.max_iters = num(a, v),
            "--exchange" => {
                let s: String = num(a, v);
                o.exchange = Exchange::parse(&s).unwrap_or_else(|| usage(&format!("unknown exchange {s:?}")));
            }
            "--output" | "-o" => o.output = Some(PathBuf::from(v.unwrap_or_else(|| usage("--output needs a file")))),
            "--convert-to" => o.convert_to = Some(PathBuf::from(v.unwrap_or_else(|| usage("--convert-to needs a file")))),
            "--bandwidth" => {
                o.bandwidth = true;
                take = false;
            }
            "--quiet" | "-q" => {
                o.quiet = true;
                take = false;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            _ => usage(&format!("unknown argument {a:?}")),
        }
        i += if take { 2 } else { 1 };
    }
    if o.p == Some(0) || o.cfg.threads == 0 {
        usage("-p and --threads must be at least 1");
    }
    if let Err(m) = o.cfg.check() {
        usage(&m);
    }
    o
}

fn main() {
    let o = parse();
    set_engine(usage, o.engine.as_deref());
    let input = o.input.input(usage);
    let t0 = Instant::now();
    let spmd = |ctx: &mut Context| -> Result<String, DistError> {
        if let Some(target) = &o.convert_to {
            convert_to_binary_spmd(ctx, input.clone(), target, o.cfg.threads)
                .map(|(n, m)| format!("wrote {}: {n} vertices, {m} edges, {:.3} s", target.display(), t0.elapsed().as_secs_f64()))

        } else {
            let opts = DistOptions { exchange: o.exchange, progress: !o.quiet, ..Default::default() };
            match pagerank_spmd_with(ctx, input.clone(), &o.cfg, &opts) {
                Err(e) => Err(e),
                Ok(r) => {
                    let written = match &o.output {
                        Some(path) => write_ranks_spmd(ctx, &r, path),
                        None => Ok(()),
                    };
                    written.and_then(|()| {
                        let per = if r.iterations > 0 { r.iteration_seconds / r.iterations as f64 } else { 0.0 };
                        let ex = r.exchange;
                        let mut s = format!(
                            "graph: {} vertices, {} edges; {} processes x {} threads on {}; exchange {:?} \
                             ({} entries received per iteration by process 0; totals: allgather {}, plan {})\n",
                            r.n,
                            r.nnz,
                            ctx.nprocs(),
                            o.cfg.threads,
                            ctx.engine_name(),
                            ex.kind,
                            ex.recv_entries,
                            ex.total_allgather_entries,
                            ex.total_plan_entries
                        );
                        s += &format!(
                            "load {:.3} s, iterations {} (residual {:.3e}, {}), {:.5} s/iteration \
                             (compute {:.5}, exchange {:.5}), iterate {:.3} s, total {:.3} s\n",
                            r.load_seconds,
                            r.iterations,
                            r.residual,
                            if r.converged { "converged" } else { "not converged" },
                            per,
                            ex.compute_seconds / r.iterations.max(1) as f64,
                            ex.exchange_seconds / r.iterations.max(1) as f64,
                            r.iteration_seconds,
                            t0.elapsed().as_secs_f64()
                        );
                        s += &format!(
                            "summary n={} nnz={} p={} threads={} exchange={:?} load_s={:.4} iterations={} residual={:.3e} s_per_iter={:.6} total_s={:.4}",
                            r.n,
                            r.nnz,
                            ctx.nprocs(),
                            o.cfg.threads,
                            ex.kind,
                            r.load_seconds,
                            r.iterations,
                            r.residual,
                            per,
                            t0.elapsed().as_secs_f64()
                        );
                        if o.bandwidth {
                            let t = (ctx.nprocs() as usize) * o.cfg.threads;
                            let bw = measure(512 << 20, t, 3)?;
                            let floor = pagerank_floor_bytes(r.n as usize, r.nnz as usize) / (bw.read_gbs * 1e9);
                            s += &format!(
                                "\nbandwidth threads={t} read_gbs={:.2} triad_gbs={:.2} floor_s_per_iter={:.6} ratio_to_floor={:.2}",
                                bw.read_gbs,
                                bw.triad_gbs,
                                floor,
                                per / floor
                            );
                        }
                        Ok(s)
                    })
                }
            }
        }
    };
    run_job("pagerank", o.p, &spmd);
}
