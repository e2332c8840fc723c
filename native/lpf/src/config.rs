//! The engine registry and the one configuration of the library.
//!
//! [`EngineKind`] is the registry: every engine's name (as `LPF_ENGINE` spells it and
//! cost tables are keyed), the launcher it runs under and whether this build has it.
//! `Root::exec`, the C ABI, `lpfrun`, `lpfprobe` and the JNI layer all go through it;
//! adding an engine is its implementation plus one entry in [`ENGINES`].
//!
//! [`Config`] is every `LPF_*` environment variable the library reads, parsed here and
//! nowhere else ([`VARIABLES`] lists them; docs/configuration.md documents them and a
//! test checks the two agree). An invalid value is an error naming the variable and the
//! values it allows. Switches that exist only for tests are kept apart in
//! [`TestSwitches`].

use crate::error::{Error, Result};
use crate::phases::MetaAlgo;
use crate::types::Pid;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// An engine of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Threads of one process, shared memory.
    Shm,
    /// OS processes over TCP (started by `lpfrun`).
    Tcp,
    /// Threads in OS processes: shared memory inside, TCP or MPI between.
    Hybrid,
    /// MPI ranks, data by message passing.
    MpiMsg,
    /// MPI ranks, data by MPI one-sided communication.
    MpiRma,
    /// MPI ranks, data by RDMA (InfiniBand verbs).
    Ibverbs,
}

/// What starts the processes of a job on an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// The program itself (threads).
    None,
    /// `lpfrun -n P prog`.
    Lpfrun,
    /// `mpirun -n P prog`.
    Mpirun,
}

impl Launcher {
    pub const fn name(self) -> &'static str {
        match self {
            Launcher::None => "none",
            Launcher::Lpfrun => "lpfrun",
            Launcher::Mpirun => "mpirun",
        }
    }
}

/// One entry of the registry.
pub struct EngineEntry {
    pub kind: EngineKind,
    /// The name `LPF_ENGINE` takes, also the name of its cost table.
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// What starts its processes (the hybrid engine: over its default network, TCP).
    pub launcher: Launcher,
    /// The cargo feature it needs, if any.
    pub feature: Option<&'static str>,
    /// Whether this build has it.
    pub built: bool,
}

const fn engine(
    kind: EngineKind,
    name: &'static str,
    aliases: &'static [&'static str],
    launcher: Launcher,
    feature: Option<&'static str>,
    built: bool,
) -> EngineEntry {
    EngineEntry { kind, name, aliases, launcher, feature, built }
}

/// The registry, in the order of [`EngineKind`].
pub const ENGINES: [EngineEntry; 6] = [
    engine(EngineKind::Shm, "shm", &["pthread", "threads"], Launcher::None, None, true),
    engine(EngineKind::Tcp, "tcp", &[], Launcher::Lpfrun, None, true),
    engine(EngineKind::Hybrid, "hybrid", &[], Launcher::Lpfrun, None, true),
    engine(EngineKind::MpiMsg, "mpimsg", &[], Launcher::Mpirun, Some("mpi"), cfg!(feature = "mpi")),
    engine(EngineKind::MpiRma, "mpirma", &[], Launcher::Mpirun, Some("mpi"), cfg!(feature = "mpi")),
    engine(EngineKind::Ibverbs, "ibverbs", &[], Launcher::Mpirun, Some("ibverbs"), cfg!(feature = "ibverbs")),
];

impl EngineKind {
    /// Every engine, in registry order.
    pub const ALL: [EngineKind; 6] = [
        EngineKind::Shm,
        EngineKind::Tcp,
        EngineKind::Hybrid,
        EngineKind::MpiMsg,
        EngineKind::MpiRma,
        EngineKind::Ibverbs,
    ];

    pub const fn entry(self) -> &'static EngineEntry {
        &ENGINES[self as usize]
    }
    /// Its name, as `LPF_ENGINE` spells it.
    pub const fn name(self) -> &'static str {
        self.entry().name
    }
    /// The name its cost table is stored and looked up under.
    pub const fn cost_table(self) -> &'static str {
        self.entry().name
    }
    pub const fn launcher(self) -> Launcher {
        self.entry().launcher
    }
    /// Whether this build has it (its cargo feature was on).
    pub(crate) const fn is_built(self) -> bool {
        self.entry().built
    }
    /// Its position in the registry.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The engine named `name` (or one of its aliases).
    pub fn from_name(name: &str) -> Option<EngineKind> {
        ENGINES.iter().find(|e| e.name == name || e.aliases.contains(&name)).map(|e| e.kind)
    }

    /// The engine `name` names; the error lists the known engines.
    pub fn parse(name: &str) -> Result<EngineKind> {
        Self::from_name(name)
            .ok_or_else(|| Error::config(format!("{name:?} names no engine of this library (known: {})", known_engines())))
    }

    /// Ok when this build has it, else an error naming the feature to build with.
    pub fn require_built(self) -> Result<EngineKind> {
        match (self.is_built(), self.entry().feature) {
            (false, Some(f)) => Err(Error::config(format!(
                "engine {}: this library was built without the `{f}` feature (cargo build --features {f})",
                self.name()
            ))),
            _ => Ok(self),
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The registry's names (with aliases in parentheses), for error messages and usage text.
pub(crate) fn known_engines() -> String {
    ENGINES
        .iter()
        .map(|e| if e.aliases.is_empty() { e.name.to_string() } else { format!("{} ({})", e.name, e.aliases.join(", ")) })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One environment variable the library reads. `default` and `meaning` are read only by
/// the test that checks docs/configuration.md's tables against this list.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Variable {
    pub name: &'static str,
    /// The values it takes.
    pub allowed: &'static str,
    /// Its value when unset or empty.
    pub default: &'static str,
    /// What it does.
    pub meaning: &'static str,
    /// A value the parser must refuse (None: every string is valid).
    pub invalid_example: Option<&'static str>,
    /// Whether it exists only for tests ([`TestSwitches`]).
    pub testing: bool,
}

const fn var(
    name: &'static str,
    allowed: &'static str,
    default: &'static str,
    meaning: &'static str,
    invalid_example: Option<&'static str>,
) -> Variable {
    Variable { name, allowed, default, meaning, invalid_example, testing: false }
}

const fn test_var(name: &'static str, allowed: &'static str, meaning: &'static str, invalid: &'static str) -> Variable {
    Variable { name, allowed, default: "off", meaning, invalid_example: Some(invalid), testing: true }
}

/// Every `LPF_*` variable [`Config::from_env`] reads.
pub(crate) const VARIABLES: &[Variable] = &[
    var("LPF_ENGINE", "shm (pthread, threads), tcp, hybrid, mpimsg, mpirma, ibverbs", "shm", "the engine of a root exec", Some("nosuch")),
    var("LPF_HYBRID_NET", "tcp, mpimsg or mpirma", "tcp", "the network between the processes of the hybrid engine", Some("shm")),
    var("LPF_THREADS", "1..=65535", "1", "LPF processes (threads) this OS process or rank brings (hybrid)", Some("0")),
    var("LPF_SPIN_US", "a non-negative integer (us)", "at most 50, adapted to the waits; 0 when the host's LPF processes outnumber its cores", "how long a waiting process spins before it yields and blocks (every engine)", Some("-5")),
    var("LPF_MAX_PROCS", "a positive integer", "hardware threads", "processors a shm root exec may use", Some("zero")),
    var("LPF_PTHREAD_TIMEOUT_MS", "a positive integer (ms)", "60000", "how long lpf_pthread_initialize waits for the group", Some("0")),
    var("LPF_PID", "0..=65535", "0", "this OS process's index in an lpfrun job", Some("-1")),
    var("LPF_NPROCS", "1..=65535", "1", "OS processes of an lpfrun job", Some("0")),
    var("LPF_TCP_MASTER", "a host name or IP address", "127.0.0.1", "where pid 0 of a TCP job listens (needed when LPF_NPROCS > 1)", None),
    var("LPF_TCP_PORT", "0..=65535", "7177", "pid 0's port", Some("70000")),
    var("LPF_TCP_TIMEOUT_MS", "a non-negative integer (ms)", "60000", "how long a TCP job waits to assemble", Some("soon")),
    var("LPF_TCP_SECRET", "a string of at least 16 bytes", "unset: none (no authentication); set but empty is an error", "shared secret every connection proves", Some("")),
    var("LPF_TCP_BIND", "an IP address", "pid 0: the master address; others: the interface reaching it", "local address to listen on", Some("localhost:1")),
    var("LPF_TCP_JOB", "a string", "empty", "job identity: processes of different jobs refuse each other", None),
    var("LPF_LAUNCHER_PID", "a positive integer", "unset", "set by lpfrun for its processes: the OS pid told when one ends the job (lpf_abort)", Some("0")),
    var("LPF_TCP_META", "direct or bruck", "by the number of processes", "meta-data exchange of the TCP engines (pid 0's applies)", Some("ring")),
    var("LPF_TCP_PORT_RANGE", "LO-HI, ports 1-65535, LO <= HI", "an ephemeral port", "ports the processes other than pid 0 listen on", Some("9-3")),
    var("LPF_MPI_META", "direct or bruck", "by the number of ranks", "meta-data exchange of the MPI engines (pid 0's applies)", Some("ring")),
    var("LPF_MPI_THREAD_LEVEL", "single or serialized", "serialized when a rank runs several threads, else single", "the MPI thread level LPF asks for when it initialises MPI", Some("multiple")),
    var("LPF_MPI_PROF", "0 or 1", "0", "print per-phase timings of MPI syncs on stderr", Some("yes")),
    var("LPF_IBV_DEVICE", "an RDMA device name", "the first device", "the RDMA device of the ibverbs engine", None),
    var("LPF_PROBE_DIR", "a directory", "$XDG_CACHE_HOME/lpf, else $HOME/.cache/lpf", "where cost tables (<engine>.txt) are stored", None),
    var("LPF_DEBUG", "any string; empty or 0 is off", "off", "the debug checks of every primitive (#17 item 5)", None),
    var("LPF_LOG", "quiet or stderr", "stderr", "whether the C ABI prints its error messages on stderr", Some("loud")),
    test_var("LPF_MPI_AGREE_ERRORS", "0 or 1", "syncs agree on errors at the cost of a message round (pid 0's applies)", "2"),
    test_var("LPF_MPI_BODY_CHUNK", "a positive integer (bytes)", "a smaller chunk for long control messages (pid 0's applies)", "0"),
];

/// Variables earlier versions read, with what replaced them: setting one is an error
/// (rather than a setting silently ignored).
const RETIRED: &[(&str, &str)] = &[
    ("LPF_TCP_SPIN_US", "LPF_SPIN_US sets the spin of every engine"),
    ("LPF_MPI_SPIN_US", "LPF_SPIN_US sets the spin of every engine"),
];

/// Switches that exist for tests only: they change how an engine does its work, not
/// what it computes, so that tests reach code paths a normal run takes rarely.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TestSwitches {
    /// `LPF_MPI_AGREE_ERRORS=1`: MPI syncs agree on errors (docs/mpi.md, "Errors").
    pub mpi_agree_errors: bool,
    /// `LPF_MPI_BODY_CHUNK`: the chunk size of long MPI control messages.
    pub mpi_body_chunk: Option<usize>,
}

/// A shared secret (`LPF_TCP_SECRET`, [`crate::tcp::TcpConfig::secret`]): its bytes
/// through `Deref`, never through `Debug`, so a configuration printed with `{:?}` (a
/// log line, an error) does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// The shortest shared secret accepted (bytes): shorter ones, the empty one
    /// included, are refused at init.
    pub const MIN_LEN: usize = 16;

    pub fn new(bytes: impl Into<Vec<u8>>) -> Secret {
        Secret(bytes.into())
    }
}

impl std::ops::Deref for Secret {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Secret {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(<redacted, {} bytes>)", self.0.len())
    }
}

/// The MPI thread level LPF asks for when it initialises MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiThreadLevel {
    Single,
    Serialized,
}

/// Every setting the library takes from the environment, typed. [`Config::from_env`]
/// reads them; the fields set them programmatically.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub engine: EngineKind,
    /// `LPF_HYBRID_NET`: the network between the processes of the hybrid engine (tcp,
    /// mpimsg or mpirma); None when unset (TCP under lpfrun, mpimsg under an MPI init).
    pub hybrid_net: Option<EngineKind>,
    /// `LPF_THREADS`; None when unset.
    pub threads: Option<Pid>,
    /// `LPF_MAX_PROCS` (capped at the most processes a job can have); None when unset.
    pub max_procs: Option<Pid>,
    pub pthread_timeout: Duration,
    /// `LPF_PID`; None when unset (pid 0 of a TCP job).
    pub pid: Option<Pid>,
    pub nprocs: Pid,
    pub tcp_master: Option<String>,
    pub tcp_port: u16,
    pub tcp_timeout: Duration,
    pub tcp_secret: Option<Secret>,
    pub tcp_bind: Option<IpAddr>,
    pub tcp_job: String,
    /// `LPF_LAUNCHER_PID`: the lpfrun that started this process ([`crate::abort_job`]).
    pub launcher_pid: Option<u32>,
    pub tcp_meta: Option<MetaAlgo>,
    pub tcp_port_range: Option<(u16, u16)>,
    pub mpi_meta: Option<MetaAlgo>,
    /// `LPF_SPIN_US`: how long a waiting process spins, fixed; None: the wait policy's
    /// choice ([`crate::wait`]: by crowding, adapted to the waits).
    pub spin: Option<Duration>,
    /// `LPF_MPI_THREAD_LEVEL`; None: chosen by the threads per rank.
    pub mpi_thread_level: Option<MpiThreadLevel>,
    pub mpi_prof: bool,
    pub ibv_device: Option<String>,
    pub probe_dir: Option<PathBuf>,
    pub debug: bool,
    /// `LPF_LOG=quiet`: the C ABI does not print its error messages.
    pub log_quiet: bool,
    pub(crate) testing: TestSwitches,
}

/// How long `lpf_pthread_initialize` waits for the rest of its group, unless
/// `LPF_PTHREAD_TIMEOUT_MS` says otherwise.
pub(crate) const PTHREAD_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);

impl Default for Config {
    /// Every variable unset.
    fn default() -> Config {
        Config::from_lookup(|_| None).expect("the defaults are valid")
    }
}

/// The error for variable `name` set to `value`, which is not one of `allowed`.
fn invalid(name: &str, value: &str) -> Error {
    let allowed = VARIABLES.iter().find(|v| v.name == name).map_or("?", |v| v.allowed);
    Error::config(format!("{name}={value:?}: expected {allowed}"))
}

/// Reads variables through a lookup, refusing names the registry does not list.
struct Reader<F: Fn(&str) -> Option<String>>(F);

impl<F: Fn(&str) -> Option<String>> Reader<F> {
    /// The value of `name`, None when unset or empty.
    fn get(&self, name: &str) -> Option<String> {
        debug_assert!(VARIABLES.iter().any(|v| v.name == name), "{name} is missing from config::VARIABLES");
        (self.0)(name).filter(|v| !v.is_empty())
    }

    /// The value of `name` as set, empty included; None when unset.
    fn raw(&self, name: &str) -> Option<String> {
        debug_assert!(VARIABLES.iter().any(|v| v.name == name), "{name} is missing from config::VARIABLES");
        (self.0)(name)
    }

    /// `LPF_TCP_SECRET`: None only when unset. Set but empty (a script's
    /// `LPF_TCP_SECRET=$UNSET`) or shorter than [`Secret::MIN_LEN`] is an
    /// error that names the variable and never shows the value.
    fn secret(&self) -> Result<Option<Secret>> {
        const NAME: &str = "LPF_TCP_SECRET";
        let allowed = VARIABLES.iter().find(|v| v.name == NAME).map_or("?", |v| v.allowed);
        match self.raw(NAME) {
            None => Ok(None),
            Some(v) if v.is_empty() => Err(Error::config(format!(
                "{NAME} is set but empty: expected {allowed}; unset it (not empty) to run without authentication"
            ))),
            Some(v) if v.len() < Secret::MIN_LEN => Err(Error::config(format!(
                "{NAME} is {} bytes long: expected {allowed} (a short secret is guessed offline from one recorded handshake)",
                v.len()
            ))),
            Some(v) => Ok(Some(Secret::new(v))),
        }
    }

    /// `name` parsed by `parse` (None when the value is invalid), None when unset.
    fn parsed<T>(&self, name: &str, parse: impl FnOnce(&str) -> Option<T>) -> Result<Option<T>> {
        self.get(name).map(|v| parse(v.trim()).ok_or_else(|| invalid(name, &v))).transpose()
    }

    fn number<T: std::str::FromStr>(&self, name: &str, ok: impl FnOnce(&T) -> bool) -> Result<Option<T>> {
        self.parsed(name, |s| s.parse::<T>().ok().filter(ok))
    }

    fn switch(&self, name: &str) -> Result<bool> {
        Ok(self.parsed(name, |s| pick(s, &[("0", false), ("1", true)]))?.unwrap_or(false))
    }
}

/// The value `choices` pairs with `s`, if any.
fn pick<T: Copy>(s: &str, choices: &[(&str, T)]) -> Option<T> {
    choices.iter().find(|(name, _)| *name == s).map(|&(_, value)| value)
}

/// Parses a port range `LO-HI` (as in `LPF_TCP_PORT_RANGE`).
pub fn parse_port_range(text: &str) -> Result<(u16, u16)> {
    let bad = || Error::config(format!("port range {text:?}: expected LO-HI, two ports 1-65535 with LO <= HI"));
    let (lo, hi) = text.trim().split_once('-').ok_or_else(bad)?;
    let lo: u16 = lo.trim().parse().map_err(|_| bad())?;
    let hi: u16 = hi.trim().parse().map_err(|_| bad())?;
    if lo == 0 || lo > hi {
        return Err(bad());
    }
    Ok((lo, hi))
}

fn pid_count(n: &Pid) -> bool {
    (1..=crate::types::MAX_PROCS).contains(n)
}

impl Config {
    /// The configuration the environment gives.
    pub fn from_env() -> Result<Config> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration `lookup` gives for each variable name (the environment in
    /// [`Config::from_env`]; a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
        for (old, new) in RETIRED {
            if let Some(v) = lookup(old).filter(|v| !v.is_empty()) {
                return Err(Error::config(format!("{old}={v:?}: this variable is no longer read; {new}")));
            }
        }
        let r = Reader(lookup);
        let engine = r.parsed("LPF_ENGINE", EngineKind::from_name)?.unwrap_or(EngineKind::Shm);
        let hybrid_net = r.parsed("LPF_HYBRID_NET", |s| {
            EngineKind::from_name(s).filter(|k| matches!(k, EngineKind::Tcp | EngineKind::MpiMsg | EngineKind::MpiRma))
        })?;
        let ms = |n: u64| Duration::from_millis(n);
        let us = |n: u64| Duration::from_micros(n);
        Ok(Config {
            engine,
            hybrid_net,
            threads: r.number("LPF_THREADS", pid_count)?,
            max_procs: r.number("LPF_MAX_PROCS", |&n: &Pid| n >= 1)?.map(|n| n.min(crate::types::MAX_PROCS)),
            pthread_timeout: r.number("LPF_PTHREAD_TIMEOUT_MS", |&n: &u64| n > 0)?.map_or(PTHREAD_TIMEOUT_DEFAULT, ms),
            pid: r.number("LPF_PID", |&n: &Pid| n < crate::types::MAX_PROCS)?,
            nprocs: r.number("LPF_NPROCS", pid_count)?.unwrap_or(1),
            tcp_master: r.get("LPF_TCP_MASTER"),
            tcp_port: r.number("LPF_TCP_PORT", |_: &u16| true)?.unwrap_or(7177),
            tcp_timeout: r.number("LPF_TCP_TIMEOUT_MS", |_: &u64| true)?.map_or(ms(60_000), ms),
            tcp_secret: r.secret()?,
            tcp_bind: r.parsed("LPF_TCP_BIND", |s| s.parse().ok())?,
            tcp_job: r.get("LPF_TCP_JOB").unwrap_or_default(),
            launcher_pid: r.number("LPF_LAUNCHER_PID", |&n: &u32| n > 0 && n <= i32::MAX as u32)?,
            tcp_meta: r.parsed("LPF_TCP_META", MetaAlgo::parse)?,
            tcp_port_range: r.parsed("LPF_TCP_PORT_RANGE", |s| parse_port_range(s).ok())?,
            mpi_meta: r.parsed("LPF_MPI_META", MetaAlgo::parse)?,
            spin: r.number("LPF_SPIN_US", |_: &u64| true)?.map(us),
            mpi_thread_level: r.parsed("LPF_MPI_THREAD_LEVEL", |s| {
                pick(&s.to_ascii_lowercase(), &[("single", MpiThreadLevel::Single), ("serialized", MpiThreadLevel::Serialized)])
            })?,
            mpi_prof: r.switch("LPF_MPI_PROF")?,
            ibv_device: r.get("LPF_IBV_DEVICE"),
            probe_dir: r.get("LPF_PROBE_DIR").map(PathBuf::from),
            debug: r.get("LPF_DEBUG").is_some_and(|v| v != "0"),
            log_quiet: r.parsed("LPF_LOG", |s| pick(s, &[("quiet", true), ("stderr", false)]))?.unwrap_or(false),
            testing: TestSwitches {
                mpi_agree_errors: r.switch("LPF_MPI_AGREE_ERRORS")?,
                mpi_body_chunk: r.number("LPF_MPI_BODY_CHUNK", |&n: &usize| n > 0)?,
            },
        })
    }

    /// The network the hybrid engine runs over under a root `exec` (default TCP).
    pub fn root_hybrid_net(&self) -> EngineKind {
        self.hybrid_net.unwrap_or(EngineKind::Tcp)
    }

    /// The configured engine, if this build has it (and the hybrid engine's network).
    pub fn engine_built(&self) -> Result<EngineKind> {
        self.engine.require_built().map_err(|e| e.context(format_args!("LPF_ENGINE={}", self.engine)))?;
        if self.engine == EngineKind::Hybrid {
            let net = self.root_hybrid_net();
            net.require_built().map_err(|e| e.context(format_args!("LPF_ENGINE=hybrid over LPF_HYBRID_NET={net}")))?;
        }
        Ok(self.engine)
    }

    /// The launcher the configured engine needs (the hybrid engine: its network's).
    pub fn launcher(&self) -> Launcher {
        match self.engine {
            EngineKind::Hybrid => self.root_hybrid_net().launcher(),
            e => e.launcher(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    fn config(pairs: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(move |k| map.get(k).cloned())
    }

    #[test]
    fn the_registry_is_in_the_order_of_the_enum() {
        for (i, kind) in EngineKind::ALL.iter().enumerate() {
            assert_eq!(ENGINES[i].kind, *kind);
            assert_eq!(kind.index(), i);
            assert_eq!(EngineKind::from_name(kind.name()), Some(*kind));
        }
        assert_eq!(EngineKind::from_name("pthread"), Some(EngineKind::Shm));
        assert_eq!(EngineKind::from_name("threads"), Some(EngineKind::Shm));
        let engine_var = VARIABLES.iter().find(|v| v.name == "LPF_ENGINE").unwrap();
        assert_eq!(engine_var.allowed, known_engines());
        let e = EngineKind::parse("nosuch").unwrap_err();
        for kind in EngineKind::ALL {
            assert!(e.message().contains(kind.name()), "{}", e.message());
        }
    }

    #[test]
    fn every_invalid_value_is_an_error_naming_the_variable_and_the_allowed_values() {
        for v in VARIABLES {
            let Some(bad) = v.invalid_example else { continue };
            let e = config(&[(v.name, bad)]).expect_err(&format!("{}={bad:?} accepted", v.name));
            let msg = e.message();
            assert!(msg.contains(v.name) && msg.contains(bad) && msg.contains(v.allowed), "{msg}");
        }
    }

    #[test]
    fn the_parser_reads_every_listed_variable_and_no_other() {
        let asked = std::sync::Mutex::new(BTreeSet::new());
        Config::from_lookup(|k| {
            asked.lock().unwrap().insert(k.to_string());
            None
        })
        .unwrap();
        // The retired names are asked for too, to refuse them.
        let listed: BTreeSet<String> = VARIABLES.iter().map(|v| v.name).chain(RETIRED.iter().map(|r| r.0)).map(str::to_string).collect();
        assert_eq!(*asked.lock().unwrap(), listed);
    }

    #[test]
    fn a_retired_variable_is_an_error_naming_its_successor() {
        let e = config(&[("LPF_TCP_SPIN_US", "0")]).unwrap_err();
        assert!(e.message().contains("LPF_TCP_SPIN_US") && e.message().contains("LPF_SPIN_US sets"), "{e}");
        assert!(config(&[("LPF_MPI_SPIN_US", "")]).is_ok(), "an empty value is unset");
        assert_eq!(config(&[("LPF_SPIN_US", "7")]).unwrap().spin, Some(Duration::from_micros(7)));
    }

    #[test]
    fn values_parse_to_their_types() {
        let c = config(&[
            ("LPF_ENGINE", "pthread"),
            ("LPF_HYBRID_NET", "mpirma"),
            ("LPF_THREADS", "3"),
            ("LPF_MAX_PROCS", "999999"),
            ("LPF_TCP_PORT_RANGE", "9000-9010"),
            ("LPF_MPI_META", "bruck"),
            ("LPF_MPI_THREAD_LEVEL", "Serialized"),
            ("LPF_LOG", "quiet"),
            ("LPF_DEBUG", "0"),
            ("LPF_MPI_BODY_CHUNK", "64"),
            ("LPF_TCP_JOB", ""),
        ])
        .unwrap();
        assert_eq!(c.engine, EngineKind::Shm);
        assert_eq!(c.hybrid_net, Some(EngineKind::MpiRma));
        assert_eq!(c.threads, Some(3));
        assert_eq!(c.max_procs, Some(crate::types::MAX_PROCS));
        assert_eq!(c.tcp_port_range, Some((9000, 9010)));
        assert_eq!(c.mpi_meta, Some(MetaAlgo::Bruck));
        assert_eq!(c.mpi_thread_level, Some(MpiThreadLevel::Serialized));
        assert!(c.log_quiet && !c.debug);
        assert_eq!(c.testing.mpi_body_chunk, Some(64));
    }

    #[test]
    fn a_secret_set_but_empty_or_short_is_an_error_that_never_shows_it() {
        let e = config(&[("LPF_TCP_SECRET", "")]).unwrap_err();
        assert!(e.message().contains("LPF_TCP_SECRET is set but empty") && e.message().contains("unset it"), "{}", e.message());
        let e = config(&[("LPF_TCP_SECRET", "fifteen bytes!!")]).unwrap_err();
        assert!(e.message().contains("LPF_TCP_SECRET is 15 bytes long"), "{}", e.message());
        assert!(!e.message().contains("fifteen"), "{}", e.message());
        assert_eq!(config(&[]).unwrap().tcp_secret, None);
        let c = config(&[("LPF_TCP_SECRET", "sixteen bytes!!!")]).unwrap();
        assert_eq!(c.tcp_secret.as_deref(), Some(&b"sixteen bytes!!!"[..]));
    }

    /// Issue #24 item 7: a configuration printed with `{:?}` shows no secret (before,
    /// the derived `Debug` printed its bytes).
    #[test]
    fn debug_output_shows_no_secret() {
        let secret = "a secret of 16+ bytes";
        let c = config(&[("LPF_TCP_SECRET", secret)]).unwrap();
        let tcp = crate::tcp::TcpConfig::from_config(&c).unwrap();
        let bytes = format!("{:?}", secret.as_bytes());
        for text in [format!("{c:?}"), format!("{tcp:?}"), format!("{:#?}", c.tcp_secret)] {
            assert!(!text.contains(secret) && !text.contains(&bytes[1..bytes.len() - 1]), "{text}");
            assert!(text.contains("redacted"), "{text}");
        }
    }

    /// The row of `v` in docs/configuration.md's tables.
    fn doc_row(v: &Variable) -> String {
        format!("| `{}` | {} | {} | {} |", v.name, v.allowed, v.default, v.meaning)
    }

    /// docs/configuration.md's tables are the registry's variables, row for row, the
    /// testing ones under "Test switches" (on a mismatch the message shows the rows
    /// the code gives).
    #[test]
    fn the_documentation_tables_are_the_variables_read() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md")).unwrap();
        let (main, testing) = doc.split_once("## Test switches").expect("a \"## Test switches\" section");
        let rows = |text: &str| -> Vec<String> { text.lines().filter(|l| l.starts_with("| `LPF_")).map(str::to_string).collect() };
        let from_code = |testing: bool| -> Vec<String> { VARIABLES.iter().filter(|v| v.testing == testing).map(doc_row).collect() };
        assert_eq!(rows(main), from_code(false), "docs/configuration.md's table; the code gives:\n{}", from_code(false).join("\n"));
        assert_eq!(rows(testing), from_code(true), "docs/configuration.md's test switches; the code gives:\n{}", from_code(true).join("\n"));
    }

    /// docs/configuration.md's engine table is the registry, row for row.
    #[test]
    fn the_documentation_engine_table_is_the_registry() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md")).unwrap();
        let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| engine `")).collect();
        let from_code: Vec<String> = ENGINES
            .iter()
            .map(|e| {
                let aliases = if e.aliases.is_empty() { "-".to_string() } else { e.aliases.join(", ") };
                format!("| engine `{}` | {} | {} | {} |", e.name, aliases, e.launcher.name(), e.feature.unwrap_or("-"))
            })
            .collect();
        assert_eq!(rows, from_code, "the code gives:\n{}", from_code.join("\n"));
    }

    /// No library source file (of any crate under native/) but this one reads an `LPF_*`
    /// variable from the environment.
    #[test]
    fn only_this_module_reads_lpf_variables() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let mut offenders = Vec::new();
        let mut dirs = vec![PathBuf::from(root)];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() && !p.ends_with("target") {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("lpf/src/config.rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for (i, line) in text.lines().enumerate() {
                        let reads = line.contains("env::var(\"LPF_") || line.contains("env::var_os(\"LPF_");
                        // The library's sources; examples and tests are programs of their own.
                        if reads && p.to_string_lossy().contains("/src/") {
                            offenders.push(format!("{}:{}", p.display(), i + 1));
                        }
                    }
                }
            }
        }
        assert!(offenders.is_empty(), "LPF_* read outside config.rs: {offenders:?}");
    }
}
