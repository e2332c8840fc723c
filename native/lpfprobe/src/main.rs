//! `lpfprobe`: measures an engine's BSP parameters g and l by total exchanges (as the
//! LPF paper does; see `bench.rs`), prints them in the layout of the paper's
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
mod bench;

use bench::{BenchConfig, Report};
use lpf::{Args, Context, EngineKind, Pid};
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
    let engine = if o.engine == "env" { lpf::Config::from_env().map(|c| c.engine) } else { EngineKind::parse(&o.engine) };
    let engine = match engine.and_then(EngineKind::require_built) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("lpfprobe: --engine {}: {}", o.engine, e.message());
            return ExitCode::from(2);
        }
    };
    let threads = engine == EngineKind::Shm;
    if !threads {
        // Root::exec picks the engine from the environment.
        std::env::set_var("LPF_ENGINE", engine.name());
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
    let r = bench::memcpy_speed(mib, mib, cfg.samples, cfg.sample_time);
    let r_stream = bench::memcpy_speed(mib, cfg.total_bytes.max(4 * mib), cfg.samples, cfg.sample_time.max(0.02));

    let result: Mutex<Option<Result<Report, lpf::Error>>> = Mutex::new(None);
    let reference: Mutex<Option<Result<Reference, lpf::Error>>> = Mutex::new(None);
    let spmd = |ctx: &mut Context, _args: Args<'_>| {
        // On an MPI engine, OpenMPI's alltoall is sampled between the probe's samples.
        let mut timers = mpi_timers(engine, &cfg);
        let r = match timers.as_mut() {
            Some(timers) => bench::measure_alongside(ctx, &cfg, &mut || timers.sample()),
            None => bench::measure(ctx, &cfg),
        };
        let times = timers.map(|t| t.result());
        if ctx.pid() == 0 {
            *result.lock().unwrap() = Some(r);
            *reference.lock().unwrap() = times;
        }
    };
    let exec = if threads {
        lpf::shm::exec_threads(o.p, o.p, &spmd, Args::none())
    } else {
        lpf::Root::new().exec(lpf::MAX_P, &spmd, Args::none())
    };
    let reference = reference.into_inner().unwrap();
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

    match reference {
        Some(Ok(times)) => print!("{}", reference_text(&times, &cfg, &report)),
        Some(Err(e)) => eprintln!("lpfprobe: the MPI_Alltoall reference failed: {e}"),
        None => {}
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

/// OpenMPI's `MPI_Alltoall` at 1 B, 64 KiB and 1 MiB per peer, and at the probe's n_max
/// volume (whose data streams through memory: the like-for-like reference for g), each
/// sampled as the probe samples LPF (same count and duration, mean over samples) and
/// between the probe's own samples, so that both see the same machine.
#[cfg(feature = "mpi")]
struct Timers {
    p: usize,
    blocks: [usize; 4],
    timers: Vec<lpf::mpi::AlltoallTimer>,
}

#[cfg(feature = "mpi")]
impl Timers {
    fn sample(&mut self) -> Result<(), lpf::Error> {
        self.timers.iter_mut().try_for_each(|t| t.sample())
    }
    fn result(&self) -> Result<Reference, lpf::Error> {
        let t = self.timers.iter().map(|t| t.result()).collect::<Result<Vec<_>, _>>()?;
        Ok(Reference { p: self.p, blocks: self.blocks, mean: t.iter().map(|x| x.mean).collect(), best: t.iter().map(|x| x.best).collect() })
    }
}

/// The reference's seconds per call, per block size (mean over samples, best sample).
struct Reference {
    p: usize,
    blocks: [usize; 4],
    mean: Vec<f64>,
    best: Vec<f64>,
}

/// On an MPI engine, the timers of the reference (collective: every rank calls this).
#[cfg(feature = "mpi")]
fn mpi_timers(engine: EngineKind, cfg: &BenchConfig) -> Option<Timers> {
    let kind = lpf::mpi::MpiEngineKind::of(engine)?;
    let init = lpf::mpi::world_init(kind).ok()?;
    let p = init.nprocs() as usize;
    let stream = (cfg.total_bytes / (p * (p - 1).max(1))).max(1 << 20);
    let blocks = [1, 64 << 10, 1 << 20, stream];
    let timers = blocks.iter().map(|&b| init.alltoall_timer(b, cfg.sample_time)).collect::<Result<Vec<_>, _>>().ok()?;
    Some(Timers { p, blocks, timers })
}

#[cfg(not(feature = "mpi"))]
struct Timers;

#[cfg(not(feature = "mpi"))]
impl Timers {
    fn sample(&mut self) -> Result<(), lpf::Error> {
        Ok(())
    }
    fn result(&self) -> Result<Reference, lpf::Error> {
        Err(lpf::Error::fatal("no MPI"))
    }
}

#[cfg(not(feature = "mpi"))]
fn mpi_timers(_engine: EngineKind, _cfg: &BenchConfig) -> Option<Timers> {
    None
}

/// The comparison of l and g with the reference.
fn reference_text(r: &Reference, cfg: &BenchConfig, report: &Report) -> String {
    let (p, [_, mid, big, stream]) = (r.p, r.blocks);
    let mut s = format!(
        "OpenMPI MPI_Alltoall, p = {p}, sampled between the probe's samples ({} samples of {:.0} ms, slowest rank; mean [best sample]): \
         1 B {:.2} [{:.2}] us | 64 KiB {:.1} [{:.1}] us | 1 MiB {:.1} [{:.1}] us per peer\n",
        cfg.samples.max(2) * cfg.word_sizes.len(),
        cfg.sample_time * 1e3,
        r.mean[0] * 1e6,
        r.best[0] * 1e6,
        r.mean[1] * 1e6,
        r.best[1] * 1e6,
        r.mean[2] * 1e6,
        r.best[2] * 1e6
    );
    if p < 2 {
        return s;
    }
    // Alltoall as a BSP superstep: h = block·(p-1) bytes; l_ref = T(1 B), g_ref from
    // two large blocks.
    let g_of = |t: &[f64], k: usize, bytes: usize| (t[k] - t[1]) / ((bytes - mid) as f64 * (p - 1) as f64);
    let (l_ref, l_best) = (r.mean[0], r.best[0]);
    let (g_ref, g_best, g_stream) = (g_of(&r.mean, 2, big), g_of(&r.best, 2, big), g_of(&r.mean, 3, stream));
    s += &format!(
        "reference: l_mpi = {:.2} us [best sample {:.2} us], g_mpi = {:.3e} s/byte ({:.2} GB/s per process)\n",
        l_ref * 1e6,
        l_best * 1e6,
        g_ref,
        1e-9 / g_ref
    );
    s += &format!(
        "streaming reference (MPI_Alltoall of {} KiB per peer, the probe's n_max volume): {:.1} us, g_mpi_stream = {:.3e} s/byte\n",
        stream >> 10,
        r.mean[3] * 1e6,
        g_stream
    );
    let l8 = report.words.iter().find(|w| w.word == 8).map(|w| w.l.mean);
    let l_min = report.words.iter().map(|w| w.l.mean).filter(|l| *l > 0.0).fold(f64::INFINITY, f64::min);
    let g1m = report.words.iter().find(|w| w.word == 1 << 20).map(|w| w.g.mean);
    if let Some(l) = l8 {
        let (r, min, best) = (l / l_ref, l_min / l_ref, l / l_best);
        s += &format!("l (8 B words) / l_mpi = {r:.2}   (smallest l of any word size: {min:.2} x; against the best MPI sample: {best:.2} x)  target <= 2\n");
    }
    if let Some(g) = g1m {
        let (r, stream, best) = (g / g_ref, g / g_stream, g / g_best);
        s += &format!("g (1 MiB words) / g_mpi = {r:.2}   target <= 1.5   (/ g_mpi_stream = {stream:.2}; against the best MPI samples: {best:.2})\n");
    }
    s
}
