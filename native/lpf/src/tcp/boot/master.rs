//! Pid 0's side of the bootstrap: it listens at the job's port, accepts every other
//! process's join, and sends them the roster.

use super::accept::accept_peers;
use super::handshake::{connect_handshake, framed, write_all_by, HandshakeError, Hello, HelloKind, MAX_ADDR};
use super::{hello_of, log, loopback_note, resolve, Joined, Roster};
use crate::error::{Error, Result};
use crate::network::random_u64;
use crate::tcp::TcpConfig;
use crate::types::Pid;
use socket2::{Domain, Socket, Type};
use std::cell::RefCell;
use std::io::ErrorKind as IoKind;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// What pid 0 of a job without a shared secret says on stderr.
pub(crate) fn unauthenticated_notice(cfg: &TcpConfig, port: u16) -> String {
    format!(
        "TCP job `{}` ({} processes) on {}:{port} runs without a shared secret: any process that reaches the port \
         can join it (set LPF_TCP_SECRET, or TcpConfig::secret, to require one)",
        cfg.job, cfg.nprocs, cfg.master
    )
}

/// Pid 0: waits for everyone, sends the roster, keeps the rendezvous connections as
/// its links.
pub(crate) fn master(cfg: &TcpConfig, listener: TcpListener, port: u16, deadline: Instant, meta: u8) -> Result<Joined> {
    if cfg.secret.is_none() && cfg.nprocs > 1 {
        // Asked for by leaving the secret out (config.rs refuses an empty one): said
        // once per job, by the process everyone joins.
        log(unauthenticated_notice(cfg, port));
    }
    let joined = accept_joins(cfg, &listener, port, deadline)?;
    drop(listener);
    let token = random_u64()?;
    let (roster, mut links) = roster_of(cfg, port, token, meta, joined);
    let msg = framed(&roster.encode());
    for (i, s) in links.iter_mut().enumerate() {
        if let Some(s) = s {
            write_all_by(s, &msg, deadline, &cfg.cancel)
                .map_err(|e| Error::io(format!("sending the roster to pid {i} ({}) failed: {e}", roster.addrs[i])))?;
        }
    }
    Ok(roster.joined(links))
}

/// Waits at `listener` until every other process has joined, and fails on the deadline,
/// a cancel, or a claim of the port by a job whose processes cannot be told from ours.
fn accept_joins(cfg: &TcpConfig, listener: &TcpListener, port: u16, deadline: Instant) -> Result<Vec<(Hello, TcpStream)>> {
    let n = cfg.nprocs as usize;
    // Where each pid joined from (the ones still missing are named on a timeout).
    let seen = RefCell::new(vec![None::<SocketAddr>; n]);
    let contested = RefCell::new(None::<Error>);
    let verify = |h: &Hello, addr: SocketAddr| -> std::result::Result<(), String> {
        if h.kind == HelloKind::Claim {
            if h.job == cfg.job && h.nprocs == cfg.nprocs {
                *contested.borrow_mut() = Some(contested_error(cfg, port, h, addr));
                return Err(CONTESTED.into());
            }
            return Err(format!(
                "that job (`{}`, {} processes) is not this job (`{}`, {} processes): their processes refuse each other",
                h.job, h.nprocs, cfg.job, cfg.nprocs
            ));
        }
        check_join(cfg, h, &seen.borrow())?;
        seen.borrow_mut()[h.pid as usize] = Some(addr);
        Ok(())
    };
    let on_timeout = || {
        let w: Vec<Pid> = (1..cfg.nprocs).filter(|&p| seen.borrow()[p as usize].is_none()).collect();
        format!(
            "pid 0 timed out after {:.1} s waiting at {}:{port} for {} of {} processes to join (missing pids {:?}){}",
            cfg.timeout.as_secs_f64(),
            cfg.master,
            w.len(),
            n - 1,
            &w[..w.len().min(16)],
            loopback_note(&cfg.master, port)
        )
    };
    let abort = || contested.borrow().clone().or_else(|| cfg.cancel.check().err());
    accept_peers(listener, cfg.secret.as_deref(), n - 1, deadline, verify, on_timeout, &abort)
}

/// Why pid 0 gives up when another job's pid 0 (at `addr`) with this job's identity
/// (and secret, if any) claims this port: its processes (some may have joined here
/// already) cannot be told from ours. Failing beats running with a foreign member.
fn contested_error(cfg: &TcpConfig, port: u16, h: &Hello, addr: SocketAddr) -> Error {
    Error::config(format!(
        "pid 0 gives up: another LPF job's pid 0 (at {addr}, nprocs {}) tried to listen on this port \
         {}:{port}; the two jobs' processes cannot be told apart (the same job identity `{}`{}), so \
         processes of that job may have joined this one - give each job its own port, job identity \
         (TcpConfig::job, LPF_TCP_JOB) or secret",
        h.nprocs,
        cfg.master,
        cfg.job,
        if cfg.secret.is_some() { " and the same secret" } else { ", no secret" }
    ))
}

/// Why pid 0 refuses the HELLO `h` of a process asking to join, given where each pid
/// joined from so far (`seen`).
fn check_join(cfg: &TcpConfig, h: &Hello, seen: &[Option<SocketAddr>]) -> std::result::Result<(), String> {
    if h.kind != HelloKind::Join {
        return Err("a mesh link attempt at the rendezvous port".into());
    }
    if h.job != cfg.job {
        return Err(format!("job `{}` is not this job (`{}`)", h.job, cfg.job));
    }
    if h.nprocs != cfg.nprocs {
        return Err(format!(
            "the peer says the job has {} processes but it has {} (wrong nprocs)",
            h.nprocs, cfg.nprocs
        ));
    }
    if h.pid == 0 {
        return Err("pid 0 is this master: two processes were given pid 0".into());
    }
    if h.pid >= cfg.nprocs {
        return Err(format!("pid {} is not below nprocs {}", h.pid, cfg.nprocs));
    }
    if h.threads == 0 || h.threads > crate::types::MAX_PROCS {
        return Err(format!("a process with {} threads (1..={} allowed)", h.threads, crate::types::MAX_PROCS));
    }
    if h.listen.len() > MAX_ADDR {
        return Err(format!("a listening address of {} bytes", h.listen.len()));
    }
    if let Some(a) = seen[h.pid as usize] {
        return Err(format!("duplicate pid {}: already taken by the process at {a}", h.pid));
    }
    Ok(())
}

/// The job's roster from the processes that `joined` (pid 0 at `port`), and their
/// rendezvous connections as pid 0's links.
fn roster_of(cfg: &TcpConfig, port: u16, token: u64, meta: u8, joined: Vec<(Hello, TcpStream)>) -> (Roster, Vec<Option<TcpStream>>) {
    let n = cfg.nprocs as usize;
    let mut threads = vec![cfg.threads; n];
    let mut hybrid = cfg.hybrid || cfg.threads > 1;
    let mut addrs = vec![String::new(); n];
    let mut links: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    for (h, s) in joined {
        threads[h.pid as usize] = h.threads;
        hybrid |= h.hybrid || h.threads > 1;
        // The last process listens nowhere: it is named by the address its join came
        // from, so every loss message names a host and port.
        addrs[h.pid as usize] = match (&h.listen[..], s.peer_addr()) {
            ("", Ok(a)) => a.to_string(),
            ("", Err(_)) => "address unknown".to_string(),
            (l, _) => l.to_string(),
        };
        links[h.pid as usize] = Some(s);
    }
    addrs[0] = format!("{}:{port}", cfg.master);
    (Roster { token, hybrid, meta, threads, addrs }, links)
}

/// The master's listening socket, bound before anybody joins (so that port 0 can be
/// resolved and published first).
pub(crate) fn bind_master(cfg: &TcpConfig) -> Result<TcpListener> {
    let addr = match cfg.bind {
        Some(ip) => SocketAddr::new(ip, cfg.port),
        None => {
            let v = resolve(&cfg.master, cfg.port)
                .map_err(|e| Error::io(format!("cannot resolve the master host `{}`: {e}", cfg.master)))?;
            *v.first().ok_or_else(|| Error::io(format!("the master host `{}` has no address", cfg.master)))?
        }
    };
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(|e| Error::io(format!("socket: {e}")))?;
    let _ = sock.set_reuse_address(true);
    if let Err(e) = sock.bind(&addr.into()) {
        return Err(Error::io(match e.kind() {
            IoKind::AddrInUse => format!(
                "pid 0 cannot listen on {}:{}: port {} is already in use ({}); choose another port, or 0 to let \
                 the OS choose one",
                cfg.master,
                cfg.port,
                cfg.port,
                claim(cfg, addr)
            ),
            IoKind::AddrNotAvailable => format!(
                "pid 0 cannot listen on {addr}: it is not an address of this machine - the process with pid 0 \
                 must run on the master host `{}` (or name a local bind address)",
                cfg.master
            ),
            _ => format!("pid 0 cannot listen on {addr} (master {}:{}): {e}", cfg.master, cfg.port),
        }));
    }
    sock.listen(256).map_err(|e| Error::io(format!("listen on {addr}: {e}")))?;
    let listener: TcpListener = sock.into();
    let bound = listener.local_addr().map_err(|e| Error::io(e.to_string()))?;
    if bound.ip().is_loopback() && cfg.nprocs > 1 && cfg.master.parse::<IpAddr>().is_err() && cfg.master != "localhost" {
        log(format!(
            "warning: the master host `{}` resolves to {}, a loopback address: pid 0 listens only there, so \
             processes on other machines cannot join (Debian-style /etc/hosts maps the hostname to 127.0.1.1); \
             pass the master's IP address if the job spans machines",
            cfg.master,
            bound.ip()
        ));
    }
    Ok(listener)
}

/// The answer of a pid 0 that failed its job because another job claimed its port.
const CONTESTED: &str = "this port belongs to a job whose processes cannot be told from yours (the same job \
                         identity and secret): it fails now, and so must this one";

/// Pid 0 found its port taken: tells the holder, if it is a pid 0 of an LPF job that
/// is assembling, that a second job wants the port. If the holder cannot tell the two
/// jobs apart (same job identity, same or no secret), processes of this job may be
/// joining it: it fails its job (see `master`) rather than run with them. Returns
/// what the holder is, for the error message.
fn claim(cfg: &TcpConfig, addr: SocketAddr) -> String {
    let to = if addr.ip().is_unspecified() { SocketAddr::new(IpAddr::from([127, 0, 0, 1]), addr.port()) } else { addr };
    let deadline = Instant::now() + Duration::from_secs(2);
    let Ok(mut s) = TcpStream::connect_timeout(&to, Duration::from_secs(1)) else {
        return "something that does not accept connections holds it".into();
    };
    match connect_handshake(&mut s, cfg.secret.as_deref(), &hello_of(cfg, HelloKind::Claim, String::new(), 0), deadline, &cfg.cancel) {
        Err(HandshakeError::Refused(why)) if why == CONTESTED => format!(
            "by the pid 0 of another LPF job that cannot be told from this one (the same job identity `{}`{}): it was \
             told and fails its job too, as processes of this job may have joined it",
            cfg.job,
            if cfg.secret.is_some() { " and secret" } else { ", no secret" }
        ),
        Err(HandshakeError::Refused(why) | HandshakeError::Unauthenticated(why)) => {
            format!("by another LPF job, which refused this one: {why}")
        }
        Err(HandshakeError::Broken(_) | HandshakeError::Local(_)) | Ok(()) => {
            "by another LPF job that is running, or something else".into()
        }
    }
}
