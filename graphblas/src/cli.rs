//! What the command-line programs (`pagerank`, `graph`) share: the input options, the
//! engine choice, and running one SPMD section per job with a single report.

use crate::dist::{DistError, Format, Input};
use crate::kron::KronParams;
use lpf::config::Launcher;
use lpf::{Args, Config, Context, EngineKind, Root};
use std::path::PathBuf;
use std::sync::Mutex;

/// The usage error of a program: prints the message and the usage, exits 2.
pub type Usage = fn(&str) -> !;

/// Writes `text` and a newline to stderr in one `write` call. Under a launcher every
/// OS process of the job reports the same error at the same moment into the shared
/// stderr: `eprintln!` writes a line in pieces (one per formatted argument), and the
/// pieces of two processes interleaved into garbage; a single write of less than
/// PIPE_BUF bytes to a pipe is atomic.
pub fn print_stderr_line(text: &str) {
    use std::io::Write;
    let line = format!("{text}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// `--input FILE [--format F] [--one-based] | --rmat SCALE [--seed S]`.
pub struct InputArgs {
    pub input: Option<PathBuf>,
    pub format: Format,
    pub(crate) one_based: bool,
    pub rmat: Option<u32>,
    pub seed: u64,
}

impl Default for InputArgs {
    fn default() -> Self {
        InputArgs { input: None, format: Format::Auto, one_based: false, rmat: None, seed: 1 }
    }
}

/// The value of option `name`, parsed, or a usage error.
pub fn value<T: std::str::FromStr>(usage: Usage, name: &str, v: Option<&String>) -> T {
    let v = v.unwrap_or_else(|| usage(&format!("{name} needs a value")));
    v.parse().unwrap_or_else(|_| usage(&format!("bad value {v:?} for {name}")))
}

impl InputArgs {
    /// Takes argument `a` (value `v`) if it is an input option: returns how many
    /// arguments it used (1 or 2), or `None` if `a` is not one of these options.
    pub fn take(&mut self, usage: Usage, a: &str, v: Option<&String>) -> Option<usize> {
        match a {
            "--input" | "-i" => self.input = Some(PathBuf::from(v.unwrap_or_else(|| usage("--input needs a file")))),
            "--format" => {
                let s: String = value(usage, a, v);
                self.format = Format::parse(&s).unwrap_or_else(|| usage(&format!("unknown format {s:?}")));
            }
            "--rmat" => self.rmat = Some(value(usage, a, v)),
            "--seed" => self.seed = value(usage, a, v),
            "--one-based" => {
                self.one_based = true;
                return Some(1);
            }
            _ => return None,
        }
        Some(2)
    }

    /// The input the options name; usage errors for a missing or doubled input and a
    /// `--one-based` that is not about an edge list.
    pub fn input(&self, usage: Usage) -> Input {
        if self.input.is_some() == self.rmat.is_some() {
            usage("give exactly one of --input FILE and --rmat SCALE");
        }
        if self.one_based && (self.rmat.is_some() || matches!(self.format, Format::Mtx | Format::Bin | Format::Csr)) {
            usage("--one-based applies to edge lists only (MatrixMarket is 1-based by definition, binary files, converted graphs and R-MAT 0-based)");
        }
        match (&self.input, self.rmat) {
            (Some(path), _) if self.one_based => {
                let fmt = match self.format {
                    Format::Auto => Format::from_extension(path),
                    f => Some(f),
                };
                if !matches!(fmt, Some(Format::Edges | Format::EdgesOneBased)) {
                    usage(&format!("--one-based applies to edge lists only ({} is not one; give --format edges)", path.display()));
                }
                Input::File { path: path.clone(), format: Format::EdgesOneBased }
            }
            (Some(path), _) => Input::File { path: path.clone(), format: self.format },
            (None, Some(scale)) => Input::Rmat(KronParams::graph500(scale, self.seed)),
            (None, None) => unreachable!("checked above"),
        }
    }
}

/// `--engine NAME`: an engine of LPF's registry (a name or alias `LPF_ENGINE` takes, in
/// this build), set as `LPF_ENGINE` before the section starts; anything else is a usage
/// error listing the engines.
pub fn set_engine(usage: Usage, engine: Option<&str>) {
    if let Some(e) = engine {
        match EngineKind::parse(e).and_then(EngineKind::require_built) {
            Ok(kind) => std::env::set_var("LPF_ENGINE", kind.name()),
            Err(why) => usage(&format!("--engine: {}", why.message())),
        }
    }
}

/// Runs `spmd` on `p` LPF processes (default: 1 on shm, the whole job under a
/// launcher) and reports once: the OS process hosting pid 0 prints its summary, the
/// others stay quiet; an error (the dist functions agree on it) is printed as
/// `prog: error: ...` with exit 1. An error of a process that failed by itself (bad
/// input, out of memory) wins over the communication errors its peers then see.
pub fn run_job(prog: &str, p: Option<u32>, spmd: &(dyn Fn(&mut Context) -> Result<String, DistError> + Sync)) {
    // The configuration as LPF reads it (one parser: `LPF_ENGINE=" shm"` is shm there and
    // here), and graphblas's own variables, both checked before anything starts.
    let config = Config::from_env().and_then(|c| c.engine_built().map(|_| c));
    let config = config.unwrap_or_else(|e| {
        print_stderr_line(&format!("{prog}: error: {}", e.message()));
        std::process::exit(1)
    });
    if let Err(e) = crate::settings::Settings::from_env() {
        print_stderr_line(&format!("{prog}: error: {e}"));
        std::process::exit(1)
    }
    // The outcome of the lowest LPF pid this OS process hosts. With the shm engine all
    // processes are threads of this one; under lpfrun (tcp, hybrid) or mpirun every OS
    // process hosts some of them.
    let report: Mutex<Option<(u32, Result<String, DistError>)>> = Mutex::new(None);
    let body = |ctx: &mut Context, _args: Args| {
        let me = ctx.pid();
        let out = spmd(ctx);
        let mut rep = report.lock().unwrap();
        let rank = |(pid, r): &(u32, Result<String, DistError>)| (!matches!(r, Err(e) if !matches!(e, DistError::Lpf(_))), *pid);
        let new = (me, out);
        if rep.as_ref().is_none_or(|old| rank(&new) < rank(old)) {
            *rep = Some(new);
        }
    };
    // On shm, -p threads (default 1). On an engine whose processes a launcher starts
    // (lpfrun -n, mpirun -np) the job's size is fixed by it: by default run on all of them.
    let launched = config.launcher() != Launcher::None;
    let p = p.unwrap_or(if launched { lpf::MAX_P } else { 1 });
    let ran = Root::with_max_procs(p).exec(p, &body, Args::none());
    let report = report.into_inner().unwrap();
    // Every process returns the same result or error, so a process that does not host
    // pid 0 reports only an error and otherwise stays quiet.
    match (ran, report) {
        (_, Some((_, Err(msg)))) => {
            print_stderr_line(&format!("{prog}: error: {msg}"));
            std::process::exit(1)
        }
        (Err(e), _) => {
            print_stderr_line(&format!("{prog}: error: {e}"));
            std::process::exit(1)
        }
        (Ok(()), Some((0, Ok(summary)))) => println!("{summary}"),
        (Ok(()), Some((_, Ok(_)))) => {}
        (Ok(()), None) => {
            print_stderr_line(&format!("{prog}: error: LPF ran no process in this OS process"));
            std::process::exit(1)
        }
    }
}
