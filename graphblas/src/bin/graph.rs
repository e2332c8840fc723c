//! `graph`: the graph kernels over LPF from the command line.
//!
//! ```text
//! graph bfs --source ID INPUT [RUN] [--direction auto|push|pull] [--output FILE]
//! graph wcc INPUT [RUN] [--output FILE]
//! graph sssp --source ID INPUT [RUN] [--delta X] [--output FILE]
//! graph cdlp INPUT [RUN] [--iterations N] [--output FILE]
//! graph lcc INPUT [RUN] [--output FILE]
//! graph scc INPUT [RUN] [--output FILE]
//! graph triangles INPUT [RUN] [--output FILE]
//! graph kcore INPUT [RUN] [--output FILE]
//! graph mis INPUT [RUN] [--mis-seed S] [--output FILE]
//! graph pr INPUT [RUN] [--iterations N | --tol X [--max-iters M]] [--damping D] [--output FILE]
//! graph convert INPUT [RUN] --to FILE.gcsr [--weighted]
//!   INPUT: --input FILE [--format mtx|edges|bin|csr] [--one-based] | --rmat SCALE [--seed S]
//!   RUN:   [--engine shm|tcp|hybrid] [-p P] [--threads T]
//! ```
//!
//! Inputs as for `pagerank` (MatrixMarket, binary and R-MAT inputs declare their
//! vertices, isolated ones included; an edge list's vertices are the ids some edge
//! names). `--output` writes one `id value` line per vertex in ascending id order, ids
//! as in the input: BFS the depth from the source (9223372036854775807 where it does
//! not lead), WCC the smallest id of the vertex's weakly connected component, SSSP the
//! weighted distance from the source (`infinity` where it does not lead; the input
//! must carry non-negative weights: a MatrixMarket real or integer file or an edge
//! list with a weight column; `--delta X`, X > 0 or `inf`, the width of the
//! delta-stepping buckets, by default the largest weight over the mean out-degree), CDLP the vertex's label (an id) after N iterations of
//! label propagation (default 10, Graphalytics'), LCC the local clustering
//! coefficient, SCC the smallest id of the vertex's strongly connected component,
//! triangles the number of triangles at the vertex and kcore its coreness (both in the
//! undirected simple graph), MIS 1 for the vertices of the maximal independent set of
//! priority seed `--mis-seed` (default 12345), else 0, PR the rank: with `--iterations N` Graphalytics' PageRank (exactly N
//! iterations), else until the L1 change is below `--tol` (default 1e-7, at most
//! `--max-iters`, default 1000); damping 0.85 unless `--damping`. `convert` writes the
//! kernels' graph of the input once, as CSR (`--weighted`: with the input's weights, for
//! SSSP), to a file every kernel then loads (`--input FILE.gcsr`) without routing,
//! sorting or deduplicating. The
//! summary goes to stdout (from the OS process hosting LPF pid 0). Exit 1 with the
//! message on bad input (file:line, a source that is no vertex), 2 on bad usage.

use graphblas::cli::{print_stderr_line, run_job, set_engine, value, InputArgs};
use graphblas::algorithms::cdlp::DEFAULT_ITERATIONS;
use graphblas::algorithms::sssp::check_delta;
use graphblas::dist::{
    bfs_spmd_with, cdlp_spmd, convert_to_csr_spmd, kcore_spmd, lcc_spmd, mis_spmd, scc_spmd, triangles_spmd, pagerank_spmd, sssp_spmd_with, wcc_spmd, write_ranks_spmd, write_values_spmd, DistError, VertexValues,
};
use graphblas::{Direction, PageRankConfig};
use lpf::Context;
use std::path::PathBuf;
use std::time::Instant;

const USAGE: &str = "usage: graph bfs --source ID INPUT [RUN] [--direction auto|push|pull] [--output FILE]
       graph wcc INPUT [RUN] [--output FILE]
       graph sssp --source ID INPUT [RUN] [--delta X] [--output FILE]   (weighted input: .mtx real/integer, edge list with weights;
                X: bucket width > 0, default largest weight / mean out-degree)
       graph cdlp INPUT [RUN] [--iterations N] [--output FILE]   (N default 10)
       graph lcc INPUT [RUN] [--output FILE]
       graph scc INPUT [RUN] [--output FILE]
       graph triangles INPUT [RUN] [--output FILE]
       graph kcore INPUT [RUN] [--output FILE]
       graph mis INPUT [RUN] [--mis-seed S] [--output FILE]   (S default 12345)
       graph pr INPUT [RUN] [--iterations N | --tol X [--max-iters M]] [--damping D] [--output FILE]
                (--iterations: Graphalytics' fixed count; else tolerance X, default 1e-7)
       graph convert INPUT [RUN] --to FILE.gcsr [--weighted]   (the graph as CSR, loaded fast by every kernel;
                --weighted keeps the input's weights, for sssp)
  INPUT: --input FILE [--format mtx|edges|bin|csr] [--one-based] | --rmat SCALE [--seed S]
  RUN:   [--engine shm|tcp|hybrid] [-p P] [--threads T]";

fn usage(msg: &str) -> ! {
    print_stderr_line(&format!("graph: {msg}\n{USAGE}"));
    std::process::exit(2)
}

#[derive(Clone, Copy, PartialEq)]
enum Kernel {
    Bfs,
    Wcc,
    Sssp,
    Cdlp,
    Lcc,
    Scc,
    Triangles,
    Kcore,
    Mis,
    Pr,
    Convert,
}

struct Opts {
    kernel: Kernel,
    input: InputArgs,
    engine: Option<String>,
    p: Option<u32>,
    threads: usize,
    source: Option<u64>,
    direction: Direction,
    iterations: Option<usize>,
    /// PR's tolerance mode (without `--iterations`).
    tol: Option<f64>,
    max_iters: Option<usize>,
    damping: f64,
    mis_seed: i64,
    /// SSSP's bucket width (None: the kernel's default).
    delta: Option<f64>,
    output: Option<PathBuf>,
    /// `convert`: the file to write and whether with weights.
    to: Option<PathBuf>,
    weighted: bool,
}

fn parse() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kernel = match args.first().map(String::as_str) {
        Some("bfs") => Kernel::Bfs,
        Some("wcc") => Kernel::Wcc,
        Some("sssp") => Kernel::Sssp,
        Some("cdlp") => Kernel::Cdlp,
        Some("lcc") => Kernel::Lcc,
        Some("scc") => Kernel::Scc,
        Some("triangles") => Kernel::Triangles,
        Some("kcore") => Kernel::Kcore,
        Some("mis") => Kernel::Mis,
        Some("pr") => Kernel::Pr,
        Some("convert") => Kernel::Convert,
        Some("--help" | "-h") => {
            println!("{USAGE}");
            std::process::exit(0)
        }
        Some(k) => usage(&format!("unknown kernel {k:?} (bfs, wcc, sssp, cdlp, lcc, scc, triangles, kcore, mis, pr, convert)")),
        None => usage("name a kernel"),
    };
    let mut o = Opts {
        kernel,
        input: InputArgs::default(),
        engine: None,
        p: None,
        threads: 1,
        source: None,
        direction: Direction::Auto,
        iterations: None,
        tol: None,
        max_iters: None,
        damping: 0.85,
        mis_seed: 12345,
        delta: None,
        output: None,
        to: None,
        weighted: false,
    };
    let mut i = 1;
    while i < args.len() {
        let (a, v) = (args[i].as_str(), args.get(i + 1));
        if let Some(used) = o.input.take(usage, a, v) {
            i += used;
            continue;
        }
        match a {
            "--engine" => o.engine = Some(value(usage, a, v)),
            "-p" | "--procs" => o.p = Some(value(usage, a, v)),
            "--threads" | "-t" => o.threads = value(usage, a, v),
            "--source" | "-s" if matches!(kernel, Kernel::Bfs | Kernel::Sssp) => o.source = Some(value(usage, a, v)),
            "--direction" if kernel == Kernel::Bfs => {
                o.direction = match value::<String>(usage, a, v).as_str() {
                    "auto" => Direction::Auto,
                    "push" => Direction::Push,
                    "pull" => Direction::Pull,
                    d => usage(&format!("unknown direction {d:?} (auto, push, pull)")),
                }
            }
            "--iterations" | "-i" if matches!(kernel, Kernel::Cdlp | Kernel::Pr) => o.iterations = Some(value(usage, a, v)),
            "--tol" if kernel == Kernel::Pr => o.tol = Some(value(usage, a, v)),
            "--max-iters" if kernel == Kernel::Pr => o.max_iters = Some(value(usage, a, v)),
            "--damping" if kernel == Kernel::Pr => o.damping = value(usage, a, v),
            "--mis-seed" if kernel == Kernel::Mis => o.mis_seed = value(usage, a, v),
            "--delta" if kernel == Kernel::Sssp => o.delta = Some(value(usage, a, v)),
            "--output" | "-o" if kernel != Kernel::Convert => o.output = Some(PathBuf::from(value::<String>(usage, a, v))),
            "--to" if kernel == Kernel::Convert => o.to = Some(PathBuf::from(value::<String>(usage, a, v))),
            "--weighted" if kernel == Kernel::Convert => {
                o.weighted = true;
                i += 1;
                continue;
            }
            _ => usage(&format!("unknown argument {a:?} for graph {}", args[0])),
        }
        i += 2;
    }
    if o.p == Some(0) || o.threads == 0 {
        usage("-p and --threads must be at least 1");
    }
    if let Some(Err(e)) = o.delta.map(check_delta) {
        usage(&format!("sssp: {e}"));
    }
    if o.iterations.is_some() && (o.tol.is_some() || o.max_iters.is_some()) {
        usage("pr takes either --iterations N (Graphalytics' fixed count) or --tol X [--max-iters M], not both");
    }
    if kernel == Kernel::Pr {
        // PageRank's one parameter check (the pagerank CLI, dist and the Spark bridge use it).
        if let Err(e) = pagerank_config(&o).check() {
            usage(&format!("pr: {e} (alpha is --damping; max_iters --iterations or --max-iters)"));
        }
    }
    if kernel == Kernel::Convert && o.to.is_none() {
        usage("convert needs --to FILE (the converted graph, e.g. graph.gcsr)");
    }
    if matches!(kernel, Kernel::Bfs | Kernel::Sssp) && o.source.is_none() {
        usage(&format!("{} needs --source ID (an id of the input)", args[0]));
    }
    o
}

/// What the summary reports of a run, whichever kernel.
struct Ran {
    n: u64,
    nnz: u64,
    rounds: usize,
    load_seconds: f64,
    compute_seconds: f64,
}

impl<T> From<&VertexValues<T>> for Ran {
    fn from(r: &VertexValues<T>) -> Ran {
        Ran { n: r.n, nnz: r.nnz, rounds: r.rounds, load_seconds: r.load_seconds, compute_seconds: r.compute_seconds }
    }
}

/// The summary of a run: what ran on what, the times, and a `summary key=value` line.
fn summary(o: &Opts, ctx: &Context, name: &str, r: &Ran, total: f64) -> String {
    let what = match o.kernel {
        Kernel::Bfs => format!("levels {}", r.rounds),
        Kernel::Wcc => format!("link passes {}", r.rounds),
        Kernel::Sssp => format!("delta-stepping supersteps {}", r.rounds),
        Kernel::Cdlp | Kernel::Pr => format!("iterations {}", r.rounds),
        Kernel::Lcc | Kernel::Triangles => "one triangle count".to_string(),
        Kernel::Scc | Kernel::Kcore | Kernel::Mis => format!("rounds {}", r.rounds),
        Kernel::Convert => "written".to_string(),
    };
    format!(
        "graph: {} vertices, {} edges; {} processes x {} threads on {}\n{name}: {what}; load {:.3} s, compute {:.3} s, total {:.3} s\n\
         summary kernel={name} n={} nnz={} p={} threads={} rounds={} load_s={:.4} compute_s={:.4} total_s={:.4}",
        r.n,
        r.nnz,
        ctx.nprocs(),
        o.threads,
        ctx.engine_name(),
        r.load_seconds,
        r.compute_seconds,
        total,
        r.n,
        r.nnz,
        ctx.nprocs(),
        o.threads,
        r.rounds,
        r.load_seconds,
        r.compute_seconds,
        total
    )
}

fn finish<T: std::fmt::Display>(o: &Opts, ctx: &mut Context, name: &str, r: VertexValues<T>, t0: Instant) -> Result<String, DistError> {
    if let Some(path) = &o.output {
        write_values_spmd(ctx, &r, path)?;
    }
    Ok(summary(o, ctx, name, &Ran::from(&r), t0.elapsed().as_secs_f64()))
}

/// PR's parameters from the options: Graphalytics' fixed count or the tolerance mode.
fn pagerank_config(o: &Opts) -> PageRankConfig {
    let cfg = match o.iterations {
        Some(n) => PageRankConfig::fixed_iterations(n),
        None => {
            let d = PageRankConfig::default();
            PageRankConfig { tol: o.tol.unwrap_or(d.tol), max_iters: o.max_iters.unwrap_or(d.max_iters), ..d }
        }
    };
    PageRankConfig { alpha: o.damping, threads: o.threads, ..cfg }
}

/// A distance as Graphalytics writes it: `infinity` where the source does not lead,
/// else the shortest decimal that reads back as the same f64.
struct Distance(f64);

impl std::fmt::Display for Distance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == f64::INFINITY {
            return f.write_str("infinity");
        }
        write!(f, "{}", self.0)
    }
}

fn main() {
    let o = parse();
    set_engine(usage, o.engine.as_deref());
    let input = o.input.input(usage);
    let t0 = Instant::now();
    let spmd = |ctx: &mut Context| -> Result<String, DistError> {
        match o.kernel {
            Kernel::Bfs => {
                let r = bfs_spmd_with(ctx, input.clone(), o.source.expect("checked"), o.threads, o.direction)?;
                finish(&o, ctx, "bfs", r, t0)
            }
            Kernel::Wcc => {
                let r = wcc_spmd(ctx, input.clone(), o.threads)?;
                finish(&o, ctx, "wcc", r, t0)
            }
            Kernel::Sssp => {
                let r = sssp_spmd_with(ctx, input.clone(), o.source.expect("checked"), o.threads, o.delta, &mut |_| {})?;
                let values = r.values.iter().map(|&d| Distance(d)).collect();
                let r = VertexValues { n: r.n, nnz: r.nnz, ids: r.ids, values, first_index: r.first_index, rounds: r.rounds, load_seconds: r.load_seconds, compute_seconds: r.compute_seconds };
                finish(&o, ctx, "sssp", r, t0)
            }
            Kernel::Cdlp => {
                let r = cdlp_spmd(ctx, input.clone(), o.iterations.unwrap_or(DEFAULT_ITERATIONS), o.threads)?;
                finish(&o, ctx, "cdlp", r, t0)
            }
            Kernel::Lcc => {
                let r = lcc_spmd(ctx, input.clone(), o.threads)?;
                finish(&o, ctx, "lcc", r, t0)
            }
            Kernel::Scc => {
                let r = scc_spmd(ctx, input.clone(), o.threads)?;
                finish(&o, ctx, "scc", r, t0)
            }
            Kernel::Triangles => {
                let r = triangles_spmd(ctx, input.clone(), o.threads)?;
                finish(&o, ctx, "triangles", r, t0)
            }
            Kernel::Kcore => {
                let r = kcore_spmd(ctx, input.clone(), o.threads)?;
                finish(&o, ctx, "kcore", r, t0)
            }
            Kernel::Mis => {
                let r = mis_spmd(ctx, input.clone(), o.mis_seed, o.threads)?;
                finish(&o, ctx, "mis", r, t0)
            }
            Kernel::Convert => {
                let to = o.to.as_ref().expect("checked");
                let (n, nnz) = convert_to_csr_spmd(ctx, input.clone(), to, o.threads, o.weighted)?;
                let seconds = t0.elapsed().as_secs_f64();
                let ran = Ran { n, nnz, rounds: 0, load_seconds: seconds, compute_seconds: 0.0 };
                Ok(format!("{}\nconverted to {}", summary(&o, ctx, "convert", &ran, seconds), to.display()))
            }
            Kernel::Pr => {
                let r = pagerank_spmd(ctx, input.clone(), &pagerank_config(&o))?;
                if let Some(path) = &o.output {
                    write_ranks_spmd(ctx, &r, path)?;
                }
                let ran = Ran { n: r.n, nnz: r.nnz, rounds: r.iterations, load_seconds: r.load_seconds, compute_seconds: r.iteration_seconds };
                Ok(summary(&o, ctx, "pr", &ran, t0.elapsed().as_secs_f64()))
            }
        }
    };
    run_job("graph", o.p, &spmd);
}
