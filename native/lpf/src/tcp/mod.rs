//! The TCP engine: LPF processes in separate OS processes (on one or many machines)
//! that meet over TCP, with no launcher needed.
//!
//! ```no_run
//! use lpf::tcp::{TcpConfig, TcpInit};
//! use lpf::{Args, Context};
//! use std::time::Duration;
//!
//! // In each of 4 processes, with its own pid; pid 0 runs on host "10.0.0.1".
//! let pid = 0;
//! let cfg = TcpConfig::new("10.0.0.1", 7177, pid, 4).timeout(Duration::from_secs(60)).secret(b"a secret of 16+ bytes");
//! let init = TcpInit::new(cfg).unwrap();
//! init.hook(&|ctx: &mut Context, _args: Args| { /* SPMD code */ }, Args::none()).unwrap();
//! drop(init); // finalize
//! ```
//!
//! With port 0 the OS chooses pid 0's port: call [`TcpInit::prepare`] on pid 0, publish
//! [`Prepared::bound_port`] to the others (Spark: `BarrierTaskContext.allGather`), then
//! [`Prepared::join`]. A process may bring several LPF processes (threads,
//! [`TcpConfig::threads`]); then the job runs on the hybrid engine (shared memory among
//! a process's threads, TCP between processes) and global pid = the process's offset +
//! thread index. See docs/tcp.md for the protocol and the fault model.

mod boot;
pub(crate) mod exchange;
pub(crate) mod mesh;
pub(crate) use crate::wire;

pub use crate::phases::MetaAlgo;

pub use crate::config::{parse_port_range, Secret};
use crate::config::{Config, EngineKind};
use crate::context::Spmd;
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::driver::SyncId;
use crate::phases::Layout;
use crate::lock::relock;
use crate::types::{Args, Pid};
use crate::wait::{Cancel, Host};
use mesh::{Link, Mesh};
use std::net::{IpAddr, TcpListener};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wire::Kind;

/// Engine name for `LPF_ENGINE` and probe tables.
pub(crate) const ENGINE_NAME: &str = crate::config::EngineKind::Tcp.name();

/// How one process joins a TCP job.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Host (name or IP) where pid 0 runs and listens.
    pub master: String,
    /// Pid 0's port; 0 lets the OS choose (pid 0 only; see [`TcpInit::prepare`]).
    pub port: u16,
    /// This process's index among the OS processes of the job, `0..nprocs`.
    pub pid: Pid,
    /// Number of OS processes in the job.
    pub nprocs: Pid,
    /// How long to wait for the job to assemble (pid 0 for everyone, the others for
    /// pid 0) before init fails.
    pub timeout: Duration,
    /// Shared secret: every connection proves knowledge of it (HMAC-SHA256
    /// challenge-response); peers without it are refused.
    pub secret: Option<Secret>,
    /// Local address to listen on (default: pid 0 the master address, the others the
    /// address of the interface that reaches pid 0).
    pub bind: Option<IpAddr>,
    /// LPF processes this OS process brings (threads); more than 1 anywhere selects
    /// the hybrid engine for the whole job.
    pub threads: Pid,
    /// Force the hybrid engine even with one thread per process.
    pub hybrid: bool,
    /// Job identity: processes of different jobs refuse each other.
    pub job: String,
    /// Meta-data exchange (pid 0's choice applies to all): `None` takes `LPF_TCP_META`
    /// (`direct` or `bruck`), else chooses by the number of processes.
    pub meta: Option<MetaAlgo>,
    /// Ports (inclusive) the processes other than pid 0 listen on for the mesh links
    /// (for firewalls between hosts); `None` takes `LPF_TCP_PORT_RANGE` (`LO-HI`), and
    /// without it the OS chooses an ephemeral port.
    pub listen_ports: Option<(u16, u16)>,
    /// How long a waiting process spins before it blocks, fixed; `None` takes
    /// `LPF_SPIN_US`, and without it the wait policy chooses ([`crate::wait`]).
    pub spin: Option<Duration>,
    /// Stops the bootstrap and every wait of the sections when set ([`Cancel`]).
    pub cancel: Cancel,
}

impl TcpConfig {
    pub fn new(master: impl Into<String>, port: u16, pid: Pid, nprocs: Pid) -> TcpConfig {
        TcpConfig {
            master: master.into(),
            port,
            pid,
            nprocs,
            timeout: Duration::from_secs(60),
            secret: None,
            bind: None,
            threads: 1,
            hybrid: false,
            job: String::new(),
            meta: None,
            listen_ports: None,
            spin: None,
            cancel: Cancel::NEVER,
        }
    }
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    pub fn secret(mut self, s: impl AsRef<[u8]>) -> Self {
        self.secret = Some(Secret::new(s.as_ref()));
        self
    }
    pub fn bind(mut self, ip: IpAddr) -> Self {
        self.bind = Some(ip);
        self
    }
    pub fn threads(mut self, k: Pid) -> Self {
        self.threads = k;
        self
    }
    pub fn hybrid(mut self, yes: bool) -> Self {
        self.hybrid = yes;
        self
    }
    pub fn job(mut self, job: impl Into<String>) -> Self {
        self.job = job.into();
        self
    }
    pub fn meta(mut self, m: MetaAlgo) -> Self {
        self.meta = Some(m);
        self
    }
    /// The token that cancels this process: its join fails at once when it is set
    /// (the others see it leave), and so does every wait and sync of its sections
    /// ([`crate::Reason::Cancelled`]).
    pub fn cancel(mut self, cancel: &Cancel) -> Self {
        self.cancel = cancel.clone();
        self
    }
    /// The ports (inclusive) processes other than pid 0 listen on (see
    /// [`TcpConfig::listen_ports`]).
    pub fn listen_ports(mut self, lo: u16, hi: u16) -> Self {
        self.listen_ports = Some((lo, hi));
        self
    }

    /// The configuration `lpfrun` passes in the environment: `LPF_TCP_MASTER`,
    /// `LPF_TCP_PORT`, `LPF_PID`, `LPF_NPROCS` (default 1), `LPF_TCP_TIMEOUT_MS`,
    /// `LPF_TCP_SECRET`, `LPF_TCP_BIND`, `LPF_THREADS`, `LPF_TCP_JOB`, `LPF_TCP_META`,
    /// `LPF_TCP_PORT_RANGE`, `LPF_SPIN_US`, `LPF_ENGINE` (hybrid); parsed by [`Config`].
    pub fn from_env() -> Result<TcpConfig> {
        Self::from_config(&Config::from_env()?)
    }

    /// The TCP part of `c` (see [`TcpConfig::from_env`]).
    pub fn from_config(c: &Config) -> Result<TcpConfig> {
        if c.nprocs > 1 && c.tcp_master.is_none() {
            return Err(Error::config("LPF_NPROCS > 1 but LPF_TCP_MASTER is not set (start the program with lpfrun)"));
        }
        let master = c.tcp_master.clone().unwrap_or_else(|| "127.0.0.1".into());
        let mut cfg = TcpConfig::new(master, c.tcp_port, c.pid.unwrap_or(0), c.nprocs)
            .timeout(c.tcp_timeout)
            .threads(c.threads.unwrap_or(1))
            .job(c.tcp_job.clone());
        cfg.secret = c.tcp_secret.clone();
        cfg.bind = c.tcp_bind;
        cfg.hybrid = c.engine == EngineKind::Hybrid;
        cfg.fill_unset(c);
        Ok(cfg)
    }

    /// The settings left unset taken from `c` (every entry point: Rust, C, JNI).
    fn fill_unset(&mut self, c: &Config) {
        self.meta = self.meta.or(c.tcp_meta);
        self.listen_ports = self.listen_ports.or(c.tcp_port_range);
        self.spin = self.spin.or(c.spin);
    }

    fn check(&self) -> Result<()> {
        if self.nprocs == 0 || self.pid >= self.nprocs {
            return Err(Error::config(format!("TCP init: pid {} of nprocs {} is out of range", self.pid, self.nprocs)));
        }
        // Every process is an LPF process at least (a global pid), and per-process
        // tables are sized by nprocs: refuse what no job can have before allocating.
        if self.nprocs > crate::types::MAX_PROCS {
            return Err(Error::config(format!(
                "TCP init: nprocs {} is more than the {} LPF processes a job can have",
                self.nprocs,
                crate::types::MAX_PROCS
            )));
        }
        if let Some(s) = &self.secret {
            if s.len() < Secret::MIN_LEN {
                return Err(Error::config(format!(
                    "TCP init: the shared secret is {} bytes long; at least {} are required (a short \
                     secret is guessed offline from one recorded handshake); pass none at all to run without \
                     authentication",
                    s.len(),
                    Secret::MIN_LEN
                )));
            }
        }
        if self.threads == 0 || self.threads > crate::types::MAX_PROCS {
            return Err(Error::config(format!("TCP init: {} threads per process is out of range", self.threads)));
        }
        if self.pid != 0 && self.port == 0 {
            return Err(Error::config("TCP init: only pid 0 may ask for port 0; the others need the port it got"));
        }
        Ok(())
    }
}

/// A TCP init between its two steps: pid 0 has bound its port (and can publish it);
/// nobody has joined yet.
pub struct Prepared {
    cfg: TcpConfig,
    listener: Option<TcpListener>,
    deadline: Instant,
    port: u16,
}

impl Prepared {
    /// The port pid 0 listens on (the one the OS chose for port 0); on other pids the
    /// configured port.
    pub fn bound_port(&self) -> u16 {
        self.port
    }

    /// Waits for the job to assemble and builds the full mesh.
    pub fn join(self) -> Result<TcpInit> {
        let cfg = self.cfg;
        let meta = MetaAlgo::to_byte(cfg.meta);
        let joined = if cfg.nprocs == 1 {
            boot::Joined {
                links: vec![None],
                addrs: vec![String::new()],
                threads: vec![cfg.threads],
                token: crate::network::random_u64()?,
                hybrid: cfg.hybrid || cfg.threads > 1,
                meta,
            }
        } else {
            let joined = if cfg.pid == 0 {
                boot::master(&cfg, self.listener.expect("pid 0 has a listener"), self.port, self.deadline, meta)
            } else {
                boot::peer(&cfg, self.deadline)
            };
            // Whatever a cancelled join failed on (a wait cut short), it failed because
            // it was cancelled.
            joined.map_err(|e| match cfg.cancel.check() {
                Err(c) => c.context(format_args!("TCP init of pid {}", cfg.pid)),
                Ok(()) => e,
            })?
        };
        let n = cfg.nprocs as usize;
        let offsets = Layout::offsets_of(joined.threads.iter().copied(), "TCP init")?;
        let links = joined.links.into_iter().enumerate().map(|(i, s)| {
            let Some(s) = s else { return Ok(None) };
            boot::tune(&s);
            s.set_nonblocking(true).map_err(|e| Error::io(format!("socket: {e}")))?;
            let _ = s.set_read_timeout(None);
            let _ = s.set_write_timeout(None);
            Ok(Some(Link::new(s, boot::name(i as Pid, &joined.threads, &joined.addrs[i]))))
        });
        let links = links.collect::<Result<Vec<_>>>()?;
        let algo = MetaAlgo::from_byte(joined.meta).unwrap_or_else(|| MetaAlgo::for_nodes(n));
        let host = Host::here(cfg.spin, mesh::procs_on_this_host(cfg.pid as usize, &joined.threads, &links));
        let mesh = Mesh::new(cfg.pid as usize, offsets, links, joined.token, algo, host, cfg.cancel.clone());
        Ok(TcpInit { mesh: Arc::new(Mutex::new(mesh)), port: self.port, pid: cfg.pid, hybrid: joined.hybrid })
    }
}

/// One process's membership of a TCP job (`lpf_init_t` of
/// `lpf_mpi_initialize_over_tcp`): usable for any number of [`TcpInit::hook`] calls;
/// dropping it (finalize) closes every connection.
pub struct TcpInit {
    mesh: Arc<Mutex<Mesh>>,
    port: u16,
    pid: Pid,
    hybrid: bool,
}

impl TcpInit {
    /// Binds (pid 0) or prepares to connect (others); see [`Prepared`].
    pub fn prepare(mut cfg: TcpConfig) -> Result<Prepared> {
        cfg.check()?;
        cfg.fill_unset(&Config::from_env()?);
        if let Some((lo, hi)) = cfg.listen_ports {
            if lo == 0 || lo > hi {
                return Err(Error::config(format!("TCP init: listen port range {lo}-{hi} is empty or includes port 0")));
            }
        }
        let deadline = Instant::now() + cfg.timeout;
        let (listener, port) = if cfg.pid == 0 && cfg.nprocs > 1 {
            let l = boot::bind_master(&cfg)?;
            let port = l.local_addr().map(|a| a.port()).unwrap_or(cfg.port);
            (Some(l), port)
        } else {
            (None, cfg.port)
        };
        Ok(Prepared { cfg, listener, deadline, port })
    }

    /// `prepare` then `join`: the whole init in one call.
    pub fn new(cfg: TcpConfig) -> Result<TcpInit> {
        Self::prepare(cfg)?.join()
    }

    /// The port pid 0 listened on.
    pub fn bound_port(&self) -> u16 {
        self.port
    }

    /// This OS process's index in the job.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Number of OS processes in the job.
    pub fn nprocs(&self) -> Pid {
        relock(&self.mesh).layout.n as Pid
    }

    /// Number of LPF processes (all threads of all OS processes).
    pub fn total_procs(&self) -> Pid {
        relock(&self.mesh).nprocs()
    }

    /// The LPF processes this OS process runs: global pids `first..first + count`.
    pub fn local_procs(&self) -> (Pid, Pid) {
        let m = relock(&self.mesh);
        (m.layout.offsets[m.layout.me], m.layout.offsets[m.layout.me + 1] - m.layout.offsets[m.layout.me])
    }

    /// The engine sections run on: `tcp`, or `hybrid` when any process brings more
    /// than one thread.
    pub fn engine_name(&self) -> &'static str {
        crate::hook::engine_name(self.hybrid, ENGINE_NAME)
    }

    /// `lpf_hook`: runs `spmd` as this process's LPF process(es), together with the
    /// other processes of the job, which must hook too. With k threads, this thread is
    /// the first (it gets `args`) and k - 1 more are started (they get no input or
    /// output). Returns a fatal error if this process's part failed - in particular
    /// when a peer died or left while a sync needed it.
    pub fn hook(&self, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        crate::hook::on_network(Box::new(TcpSection::open(&self.mesh)), self.hybrid, ENGINE_NAME, None, spmd, args)
    }

    /// [`TcpInit::hook`] where this init holds the first LPF processes of a launched job
    /// of `job_p`, for a root `lpf_exec` asking for fewer: the section's `lpf_probe`
    /// gives the job's p, and its processes share the job's out as their free_p.
    pub fn hook_part(&self, job_p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        crate::hook::on_network(Box::new(TcpSection::open(&self.mesh)), self.hybrid, ENGINE_NAME, Some(job_p), spmd, args)
    }
}

impl Drop for TcpInit {
    fn drop(&mut self) {
        // Anything still queued (a LEAVE frame) gets a moment to go out.
        relock(&self.mesh).shutdown(Instant::now() + Duration::from_secs(2));
    }
}

/// One section of the mesh as the network between OS processes (of the `tcp` engine's
/// [`NetEngine`](crate::network::NetEngine) or of the hybrid engine).
struct TcpSection {
    mesh: Arc<Mutex<Mesh>>,
    /// The mesh's, for the engine's look at it outside the mesh's lock.
    cancel: Cancel,
    host: Host,
    section: u32,
    me: usize,
    offsets: Arc<[Pid]>,
    /// The last collective step the group ran (the end of the section is the next).
    step: u64,
}

impl TcpSection {
    /// Starts a section (hook or rehook, the same order everywhere).
    fn open(mesh: &Arc<Mutex<Mesh>>) -> TcpSection {
        let mut m = relock(mesh);
        TcpSection {
            section: m.sections.open(),
            me: m.layout.me,
            offsets: m.layout.offsets.clone(),
            cancel: m.cancel.clone(),
            host: m.host,
            mesh: mesh.clone(),
            step: 0,
        }
    }
}

impl crate::network::Network for TcpSection {
    fn offsets(&self) -> &[Pid] {
        &self.offsets
    }
    fn me(&self) -> usize {
        self.me
    }
    fn cancel(&self) -> &Cancel {
        &self.cancel
    }
    fn host(&self) -> Host {
        self.host
    }
    fn sync(&mut self, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
        self.step = step;
        exchange::sync(&mut relock(&self.mesh), SyncId { section: self.section, step }, steps)
    }
    fn allgather(&mut self, step: u64, mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
        self.step = step;
        crate::phases::allgather(&mut *relock(&self.mesh), SyncId { section: self.section, step }, mine, len, all)
    }
    fn fresh(&mut self, step: u64) -> Result<Box<dyn crate::network::Network>> {
        self.step = step;
        crate::phases::barrier(&mut *relock(&self.mesh), SyncId { section: self.section, step }.tag(Kind::Fresh), None)?;
        Ok(Box::new(TcpSection::open(&self.mesh)))
    }
    /// The barrier at the end of a section: a process that returned while others still
    /// sync (or rehook) fails too, as they do ("out of step" here or "has left the
    /// section" there). Nobody carries an error into it.
    fn finish(&mut self) -> Result<()> {
        self.step += 1;
        crate::phases::barrier(&mut *relock(&self.mesh), SyncId { section: self.section, step: self.step }.tag(Kind::End), None).map(drop)
    }
    fn leave(&mut self, why: &str) {
        relock(&self.mesh).leave(self.section, why);
    }
}

/// The init of [`exec_from_env`], made on its first call.
static EXEC_INIT: OnceLock<std::result::Result<TcpInit, Error>> = OnceLock::new();

/// The engine and the number of LPF processes of the job [`exec_from_env`] runs on
/// (`lpf_probe` on the root): the init's once made, else what the environment lpfrun
/// gives says (`LPF_NPROCS` processes of `LPF_THREADS` threads each), without
/// connecting to anyone.
pub(crate) fn job_from_env() -> Result<(&'static str, Pid)> {
    if let Some(Ok(init)) = EXEC_INIT.get() {
        return Ok((init.engine_name(), init.total_procs()));
    }
    let cfg = TcpConfig::from_env()?;
    let engine = crate::hook::engine_name(cfg.hybrid || cfg.threads > 1, ENGINE_NAME);
    Ok((engine, cfg.nprocs.saturating_mul(cfg.threads)))
}

/// `exec` from the root with `LPF_ENGINE=tcp` or `hybrid`: every OS process of the job
/// (started by `lpfrun`, configured by [`TcpConfig::from_env`]) calls it; the section
/// runs on all LPF processes of the job. The init is made on the first call and kept
/// for later ones.
pub(crate) fn exec_from_env(p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let init = EXEC_INIT.get_or_init(|| TcpConfig::from_env().and_then(TcpInit::new));
    let init = init.as_ref().map_err(|e| e.clone())?;
    let first = init.local_procs().0 == 0;
    crate::network::exec_whole_job(p, init.total_procs(), first, "TCP", "lpfrun", args, |args| init.hook(spmd, args))
}
