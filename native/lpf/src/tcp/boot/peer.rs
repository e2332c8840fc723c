//! The side of every process but pid 0: it joins at pid 0, receives the roster, links
//! to the lower pids and accepts the links of the higher ones.

use super::accept::accept_peers;
use super::handshake::{connect_handshake, read_msg_by, HandshakeError, Hello, HelloKind, MAX_ADDR, MAX_MSG};
use super::{hello_of, loopback_note, resolve, Joined, Roster};
use crate::error::{Error, Result};
use crate::network::random_u64;
use crate::tcp::TcpConfig;
use std::io::ErrorKind as IoKind;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Any other pid: joins at the master (retrying until the deadline), receives the
/// roster, and builds its links.
pub(crate) fn peer(cfg: &TcpConfig, deadline: Instant) -> Result<Joined> {
    let n = cfg.nprocs as usize;
    let me = cfg.pid as usize;
    let (mut master, listener) = join_master(cfg, deadline)?;
    let roster = receive_roster(cfg, &mut master, deadline)?;
    let mut links: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    links[0] = Some(master);
    // Connect to the lower pids (other than 0) ...
    for (j, link) in links.iter_mut().enumerate().take(me).skip(1) {
        *link = Some(link_to(cfg, j, &roster, deadline)?);
    }
    // ... and accept the higher ones.
    if let Some(l) = listener {
        for (h, s) in accept_links(cfg, &l, &roster, deadline)? {
            links[h.pid as usize] = Some(s);
        }
    }
    Ok(roster.joined(links))
}

/// Joins at the master, trying again (with a growing pause) until the deadline while
/// the attempts break: the rendezvous connection and the listener for the links (none
/// for the last pid).
fn join_master(cfg: &TcpConfig, deadline: Instant) -> Result<(TcpStream, Option<TcpListener>)> {
    let me = cfg.pid;
    let mut backoff = Duration::from_millis(20);
    let mut last_err = String::from("no attempt");
    loop {
        cfg.cancel.check()?;
        if Instant::now() >= deadline {
            return Err(Error::timeout(format!(
                "pid {me} could not join the job: the master (pid 0) at {}:{} did not answer within {:.1} s \
                 (last error: {last_err}); is pid 0 running on `{}` with this port{}?{}",
                cfg.master,
                cfg.port,
                cfg.timeout.as_secs_f64(),
                cfg.master,
                if cfg.secret.is_some() { " and the same secret" } else { "" },
                loopback_note(&cfg.master, cfg.port)
            )));
        }
        match try_join(cfg, deadline) {
            Ok(x) => return Ok(x),
            Err(e) => {
                last_err = e.retryable(|why| format!("pid {me}: the master at {}:{} refused this process: {why}", cfg.master, cfg.port))?
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(backoff.min(left));
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }
}

/// The roster, read from the rendezvous connection once everyone has joined.
fn receive_roster(cfg: &TcpConfig, master: &mut TcpStream, deadline: Instant) -> Result<Roster> {
    let n = cfg.nprocs as usize;
    // A header, then per process its threads and address (bounded by the master's
    // checks), so its size follows nprocs (up to 65535 processes).
    let roster = read_msg_by(master, deadline, MAX_MSG + n * (8 + MAX_ADDR), &cfg.cancel).map_err(|e| {
        let msg = format!(
            "pid {} joined the master at {}:{} but the job did not complete within {:.1} s: {e}",
            cfg.pid,
            cfg.master,
            cfg.port,
            cfg.timeout.as_secs_f64()
        );
        if e.kind() == IoKind::TimedOut { Error::timeout(msg) } else { Error::io(msg) }
    })?;
    Roster::decode(&roster, n)
}

/// This process's link to the lower pid `j`, tried again after a short pause while the
/// attempts break (at most about 50 times, until the deadline).
fn link_to(cfg: &TcpConfig, j: usize, roster: &Roster, deadline: Instant) -> Result<TcpStream> {
    let me = cfg.pid;
    let addr: SocketAddr = roster.addrs[j].parse().map_err(|_| Error::protocol(format!("bad address `{}` for pid {j}", roster.addrs[j])))?;
    let hello = hello_of(cfg, HelloKind::Link, String::new(), roster.token);
    let mut tries = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let r = TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1)).min(Duration::from_secs(5)))
            .map_err(|e| HandshakeError::Broken(e.to_string()))
            .and_then(|mut s| connect_handshake(&mut s, cfg.secret.as_deref(), &hello, deadline, &cfg.cancel).map(|_| s));
        let e = match r {
            Ok(s) => return Ok(s),
            Err(e) => e.retryable(|why| format!("pid {j} at {addr} refused the link from pid {me}: {why}"))?,
        };
        if Instant::now() >= deadline || tries > 50 {
            return Err(Error::io(format!("pid {me} cannot link to pid {j} at {addr}: {e}")));
        }
        tries += 1;
        cfg.cancel.check()?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The links of the higher pids, accepted at `listener`: each once, proving the job
/// token.
fn accept_links(cfg: &TcpConfig, listener: &TcpListener, roster: &Roster, deadline: Instant) -> Result<Vec<(Hello, TcpStream)>> {
    let n = cfg.nprocs as usize;
    let me = cfg.pid as usize;
    let mut linked = vec![false; n];
    let verify = |h: &Hello, _: SocketAddr| -> std::result::Result<(), String> {
        if h.kind != HelloKind::Link || h.token != roster.token || h.job != cfg.job {
            return Err("not a link of this job (wrong job token)".into());
        }
        if (h.pid as usize) <= me || h.pid as usize >= n {
            return Err(format!("pid {} does not link to pid {me}", h.pid));
        }
        if std::mem::replace(&mut linked[h.pid as usize], true) {
            return Err(format!("duplicate link from pid {}", h.pid));
        }
        Ok(())
    };
    let timeout = || format!("pid {me} timed out waiting for links from pids {}..{} at {}", me + 1, n - 1, roster.addrs[me]);
    accept_peers(listener, cfg.secret.as_deref(), n - 1 - me, deadline, verify, timeout, &|| cfg.cancel.check().err())
}

/// The listener of a process other than pid 0, for its links: on a port of
/// `cfg.listen_ports` (tried from a random one on, so that processes on one host do
/// not all race for the first), else on one the OS chooses.
fn bind_listener(cfg: &TcpConfig, ip: IpAddr) -> Result<TcpListener> {
    let Some((lo, hi)) = cfg.listen_ports else {
        return TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|e| Error::io(format!("cannot listen on {ip}: {e}")));
    };
    let n = (hi - lo) as u64 + 1;
    let start = random_u64()? % n;
    let mut last = None;
    for k in 0..n {
        let port = lo + ((start + k) % n) as u16;
        match TcpListener::bind(SocketAddr::new(ip, port)) {
            Ok(l) => return Ok(l),
            Err(e) if matches!(e.kind(), IoKind::AddrInUse) => last = Some(e),
            Err(e) => {
                return Err(Error::io(format!("pid {} cannot listen on {ip}:{port} (of the port range {lo}-{hi}): {e}", cfg.pid)))
            }
        }
    }
    Err(Error::exhausted(format!(
        "pid {} cannot listen on {ip}: all {n} ports of the port range {lo}-{hi} (LPF_TCP_PORT_RANGE) are in use ({})",
        cfg.pid,
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

/// One attempt to join at the master: connect, bind our own listener on the
/// interface that reaches the master, handshake.
fn try_join(cfg: &TcpConfig, deadline: Instant) -> std::result::Result<(TcpStream, Option<TcpListener>), HandshakeError> {
    use HandshakeError::Broken;
    let addrs = resolve(&cfg.master, cfg.port).map_err(|e| Broken(format!("cannot resolve `{}`: {e}", cfg.master)))?;
    let mut last = Broken(format!("`{}` has no address", cfg.master));
    for a in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut s = match TcpStream::connect_timeout(&a, left.clamp(Duration::from_millis(1), Duration::from_secs(2))) {
            Ok(s) => s,
            Err(e) => {
                last = Broken(format!("{a}: {e}"));
                continue;
            }
        };
        let _ = s.set_nodelay(true);
        let me = cfg.pid as usize;
        let listener = if me + 1 < cfg.nprocs as usize {
            let ip = match cfg.bind {
                Some(ip) => ip,
                None => s.local_addr().map_err(|e| Broken(e.to_string()))?.ip(),
            };
            Some(bind_listener(cfg, ip).map_err(HandshakeError::Local)?)
        } else {
            None
        };
        let listen = match &listener {
            Some(l) => l.local_addr().map_err(|e| Broken(e.to_string()))?.to_string(),
            None => String::new(),
        };
        let hello = hello_of(cfg, HelloKind::Join, listen, 0);
        return connect_handshake(&mut s, cfg.secret.as_deref(), &hello, deadline, &cfg.cancel).map(|()| (s, listener));
    }
    Err(last)
}
