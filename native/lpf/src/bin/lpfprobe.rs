//! `lpfprobe`: measures an engine's BSP parameters g and l by total exchanges (as the
//! LPF paper does; see `lpf::probe_bench`), prints them in the layout of the paper's
//! Table 3, and optionally stores them as the cost table `probe` answers from.
//!
//! ```text
//! lpfprobe [--engine shm|env|ENGINE] [-p P] [--quick] [--samples N] [--total-mib M] [--output FILE] [--save]
//! ```
//!
//! With an engine other than `shm` (`--engine env` takes it from `LPF_ENGINE`) the
//! measurement runs through `Root::exec`, so the program must be started by that
//! engine's launcher (`mpirun -n P` for mpimsg/mpirma, `lpfrun -n P` for tcp/hybrid);
//! pid 0 prints. On an MPI engine, OpenMPI's own `MPI_Alltoall` is timed in the same
//! run (1 B, 64 KiB and 1 MiB per peer) and compared with l and g.

use lpf::machine::{table_path, CostTable};
use lpf::probe_bench::{self, BenchConfig, Report};
use lpf::{Args, Context, Pid};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

const USAGE: &str = "usage: lpfprobe [--engine shm|env|ENGINE] [-p P] [--quick] [--samples N] [--total-mib M] [--output FILE] [--save]

Measures g and l of an LPF engine at P processes by total exchanges of 8 B, 64 B,
1 KiB and 1 MiB words (n_max: 128 MiB per superstep over all processes, --quick: 1 MiB),
and memcpy speed in the same run; prints a table in the layout of the LPF paper's Table 3.

  --engine E     engine to measure: shm (threads, default), or env / any engine name:
                 then through Root::exec under that engine's launcher (mpirun, lpfrun)
  -p P           processes (default: the machine's hardware threads)
  --quick        a fast, rough run (for tests)
  --samples N    samples per point (default 20, --quick 3)
  --total-mib M  bytes exchanged per superstep at n_max, over all processes (default 128)
  --output FILE  write the cost table to FILE (rows of other process counts kept)
  --save         write it where probe() reads it: $LPF_PROBE_DIR/<engine>.txt, else
                 $XDG_CACHE_HOME/lpf/, else ~/.cache/lpf/";

struct Options {
    engine: String,
    p: Pid,
    quick: bool,
    samples: Option<usize>,
    total_mib: Option<usize>,
    output: Option<PathBuf>,
    save: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        engine: "shm".into(),
        p: std::thread::available_parallelism().map(|n| n.get() as Pid).unwrap_or(1),
        quick: false,
        samples: None,
        total_mib: None,
        output: None,
        save: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--engine" => o.engine = value("--engine")?,
            "-p" | "--procs" => {
                o.p = value("-p")?.parse().map_err(|_| "-p needs a positive integer".to_string())?;
                if o.p == 0 {
                    return Err("-p needs a positive integer".into());
                }
            }
            "--quick" => o.quick = true,
            "--samples" => {
                let n: usize = value("--samples")?.parse().map_err(|_| "--samples needs an integer".to_string())?;
                if n < 2 {
                    return Err("--samples needs at least 2".into());
                }
                o.samples = Some(n);
            }
            "--total-mib" => {
                let n: usize = value("--total-mib")?.parse().map_err(|_| "--total-mib needs an integer".to_string())?;
                if n == 0 {
                    return Err("--total-mib needs a positive integer".into());
                }
                o.total_mib = Some(n);
            }
            "--output" | "-o" => o.output = Some(PathBuf::from(value("--output")?)),
            "--save" => o.save = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

/// Writes `report`'s rows into the table file at `path`, keeping the rows of other
/// process counts that are already there.
fn write_table(path: &PathBuf, report: &Report) -> Result<(), String> {
    let mut points: Vec<_> = match std::fs::read_to_string(path) {
        Ok(text) => CostTable::parse(&text)
            .map_err(|e| format!("{}: existing table does not parse ({e}); not overwriting it", path.display()))?
            .points()
            .to_vec(),
        Err(_) => Vec::new(),
    };
    points.retain(|c| c.nprocs != report.nprocs);
    points.extend(report.cost_points());
    let text = CostTable::new(points).to_text(report.engine);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // Write then rename, so that a reader never sees half a table.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("lpfprobe: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let engine = if o.engine == "env" { std::env::var("LPF_ENGINE").unwrap_or_else(|_| "shm".into()) } else { o.engine.clone() };
    let threads = engine == lpf::shm::ENGINE_NAME || engine.is_empty();
    if !threads {
        // Root::exec picks the engine from the environment.
        std::env::set_var("LPF_ENGINE", &engine);
    }
    let mut cfg = if o.quick { BenchConfig::quick() } else { BenchConfig::full() };
    if let Some(n) = o.samples {
        cfg.samples = n;
    }
    if let Some(m) = o.total_mib {
        cfg.total_bytes = m << 20;
    }

    // memcpy speed of 1 MiB blocks, in cache and streamed through n_max bytes.
    let mib = 1 << 20;
    let r = probe_bench::memcpy_speed(mib, mib, cfg.samples, cfg.sample_time);
    let r_stream = probe_bench::memcpy_speed(mib, cfg.total_bytes.max(4 * mib), cfg.samples, cfg.sample_time.max(0.02));

    let result: Mutex<Option<Result<Report, lpf::Error>>> = Mutex::new(None);
    let spmd = |ctx: &mut Context, _args: Args<'_>| {
        let r = probe_bench::measure(ctx, &cfg);
        if ctx.pid() == 0 {
            *result.lock().unwrap() = Some(r);
        }
    };
    let exec = if threads {
        lpf::shm::exec_threads(o.p, o.p, &spmd, Args::none())
    } else {
        lpf::Root::new().exec(lpf::MAX_P, &spmd, Args::none())
    };
    let reference = mpi_reference(&engine, &cfg);
    let result = result.into_inner().unwrap();
    if exec.is_ok() && result.is_none() && !threads {
        // A process other than pid 0 of a multi-process engine: pid 0 reports.
        return ExitCode::SUCCESS;
    }
    let report = match (exec, result) {
        (Ok(()), Some(Ok(report))) => report,
        (_, Some(Err(e))) | (Err(e), _) => {
            eprintln!("lpfprobe: the measurement failed: {e}");
            return ExitCode::FAILURE;
        }
        (Ok(()), None) => {
            eprintln!("lpfprobe: no result");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.table(r, Some(r_stream)));
    println!("{:>8} | {:>10} | {:>34}", "w [B]", "n_max [w]", "T(0) / T(p) / T(2p) / T(n_max) [s]");
    for w in &report.words {
        println!(
            "{:>8} | {:>10} | {:.3e} / {:.3e} / {:.3e} / {:.3e}   (supersteps per sample: {:?})",
            w.word, w.n_max, w.t[0].mean, w.t[1].mean, w.t[2].mean, w.t[3].mean, w.reps
        );
    }

    if let Some(text) = reference {
        print!("{}", text(&report));
    }

    let mut targets = Vec::new();
    if let Some(path) = o.output {
        targets.push(path);
    }
    if o.save {
        match table_path(report.engine) {
            Some(path) => targets.push(path),
            None => {
                eprintln!("lpfprobe: --save: no table location (set LPF_PROBE_DIR or HOME)");
                return ExitCode::FAILURE;
            }
        }
    }
    for path in targets {
        if let Err(e) = write_table(&path, &report) {
            eprintln!("lpfprobe: {e}");
            return ExitCode::FAILURE;
        }
        println!("cost table written to {}", path.display());
    }
    ExitCode::SUCCESS
}

/// What the reference comparison prints, given the report.
type Reference = Box<dyn Fn(&Report) -> String>;

/// On an MPI engine: OpenMPI's `MPI_Alltoall` timed now, in the same processes, at 1 B,
/// 64 KiB and 1 MiB per peer (collective: every rank calls this), with the probe's own
/// samples (count and duration) and statistic (the mean over samples), so that l and g
/// are compared like with like; the best sample is shown as well.
#[cfg(feature = "mpi")]
fn mpi_reference(engine: &str, cfg: &BenchConfig) -> Option<Reference> {
    let kind = lpf::mpi::MpiEngineKind::parse(engine)?;
    let init = lpf::mpi::world_init(kind).ok()?;
    let p = init.nprocs() as usize;
    let samples = cfg.samples.max(2);
    let sample_ms = cfg.sample_time * 1e3;
    let (small, mid, big) = (1usize, 64 << 10, 1 << 20);
    // Also a block as large as the probe's n_max exchange (its data streams through
    // memory rather than staying in cache): the like-for-like reference for g.
    let stream = (cfg.total_bytes / (p * (p - 1).max(1))).max(big);
    let nan = lpf::mpi::AlltoallTime { mean: f64::NAN, best: f64::NAN };
    let t: Vec<lpf::mpi::AlltoallTime> =
        [small, mid, big, stream].iter().map(|&b| init.time_alltoall(b, samples, cfg.sample_time).unwrap_or(nan)).collect();
    Some(Box::new(move |report: &Report| {
        let mut s = String::new();
        s += &format!(
            "OpenMPI MPI_Alltoall in the same run, p = {p} ({samples} samples of {:.0} ms like the probe's, slowest rank; mean [best sample]): \
             1 B {:.2} [{:.2}] us | 64 KiB {:.1} [{:.1}] us | 1 MiB {:.1} [{:.1}] us per peer\n",
            sample_ms,
            t[0].mean * 1e6, t[0].best * 1e6, t[1].mean * 1e6, t[1].best * 1e6, t[2].mean * 1e6, t[2].best * 1e6
        );
        if p < 2 {
            return s;
        }
        // Alltoall as a BSP superstep: h = block·(p-1) bytes; l_ref = T(1 B), g_ref
        // from the two large blocks.
        let l_of = |x: &lpf::mpi::AlltoallTime, best: bool| if best { x.best } else { x.mean };
        let g_of = |a: f64, b: f64, bytes: usize| (b - a) / ((bytes - mid) as f64 * (p - 1) as f64);
        let (l_ref, l_best) = (l_of(&t[0], false), l_of(&t[0], true));
        let g_ref = g_of(t[1].mean, t[2].mean, big);
        let g_best = g_of(t[1].best, t[2].best, big);
        s += &format!(
            "reference: l_mpi = {:.2} us [best sample {:.2} us], g_mpi = {:.3e} s/byte ({:.2} GB/s per process)\n",
            l_ref * 1e6,
            l_best * 1e6,
            g_ref,
            1e-9 / g_ref
        );
        let g_stream = g_of(t[1].mean, t[3].mean, stream);
        s += &format!(
            "streaming reference (MPI_Alltoall of {} KiB per peer, the probe's n_max volume): {:.1} us, g_mpi_stream = {:.3e} s/byte\n",
            stream >> 10,
            t[3].mean * 1e6,
            g_stream
        );
        let l8 = report.words.iter().find(|w| w.word == 8).map(|w| w.l.mean);
        let l_min = report.words.iter().map(|w| w.l.mean).filter(|l| *l > 0.0).fold(f64::INFINITY, f64::min);
        let g1m = report.words.iter().find(|w| w.word == 1 << 20).map(|w| w.g.mean);
        if let Some(l) = l8 {
            s += &format!(
                "l (8 B words) / l_mpi = {:.2}   (smallest l of any word size: {:.2} x; against the best MPI sample: {:.2} x)  target <= 2\n",
                l / l_ref,
                l_min / l_ref,
                l / l_best
            );
        }
        if let Some(g) = g1m {
            s += &format!(
                "g (1 MiB words) / g_mpi = {:.2}   target <= 1.5   (/ g_mpi_stream = {:.2}; against the best MPI samples: {:.2})\n",
                g / g_ref,
                g / g_stream,
                g / g_best
            );
        }
        s
    }))
}

#[cfg(not(feature = "mpi"))]
fn mpi_reference(_engine: &str, _cfg: &BenchConfig) -> Option<Reference> {
    None
}
