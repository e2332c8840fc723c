//! Bootstrap: the rendezvous at the master, the handshake, and the full mesh.
//!
//! Every connection starts with both sides sending a 44-byte greeting (magic, protocol
//! version, whether a secret is used, a random nonce). The connecting side then sends a
//! HELLO (job, nprocs, pid, threads, its listening address; with a secret, an
//! HMAC-SHA256 over both nonces and the HELLO), and the accepting side answers ACCEPT
//! or REFUSE with a reason (with a secret, its own HMAC over the nonces and the answer,
//! so both sides prove they know the secret without sending it). Anything that does not
//! complete this correctly is refused and logged on stderr, prefixed `lpf:`, and the
//! acceptor goes on waiting for the right peer. Once every process has joined, the
//! master sends everyone the roster (job token, engine, every process's thread count
//! and address); each process then connects to the lower-numbered ones (pid 0's link is
//! the rendezvous connection itself) and accepts the higher-numbered ones, with the
//! same handshake proving the job token.
//!
//! The handshake (both sides, and the HMACs) is in `handshake`, the poll loop that
//! accepts connections in `accept`, pid 0's side in `master` and everyone else's in
//! `peer`.

mod accept;
mod handshake;
mod master;
mod peer;

pub(crate) use master::{bind_master, master};
pub(crate) use peer::peer;

use crate::error::{Error, Result};
use crate::tcp::TcpConfig;
use crate::types::Pid;
use crate::wire::{Get, Put};
use handshake::{Hello, HelloKind};
use socket2::{SockRef, TcpKeepalive};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

pub(crate) fn log(msg: impl AsRef<str>) {
    eprintln!("lpf: {}", msg.as_ref());
}

/// Sockets of the mesh: no Nagle, and dead hosts detected by the kernel within
/// seconds (keepalive probes, and a bound on unacknowledged data) even when no data
/// flows. Slow but live peers are never timed out: BSP allows long computations.
pub(crate) fn tune(s: &TcpStream) {
    let _ = s.set_nodelay(true);
    let sock = SockRef::from(s);
    let ka = TcpKeepalive::new().with_time(Duration::from_secs(2)).with_interval(Duration::from_secs(1)).with_retries(3);
    let _ = sock.set_tcp_keepalive(&ka);
    let _ = sock.set_tcp_user_timeout(Some(Duration::from_secs(6)));
}

/// The result of the bootstrap.
pub(crate) struct Joined {
    /// Stream to each process (None for self).
    pub links: Vec<Option<TcpStream>>,
    /// Each process's listening address (or where its join came from), for [`name`].
    pub addrs: Vec<String>,
    pub threads: Vec<Pid>,
    pub token: u64,
    pub hybrid: bool,
    pub meta: u8,
}

/// What pid 0 sends everyone once all have joined: the job token, whether the job runs
/// on the hybrid engine, pid 0's meta-data exchange, and every process's thread count
/// and address.
struct Roster {
    token: u64,
    hybrid: bool,
    meta: u8,
    threads: Vec<Pid>,
    addrs: Vec<String>,
}

impl Roster {
    fn encode(&self) -> Vec<u8> {
        let mut roster = Vec::new();
        roster.u64(self.token);
        roster.u8(self.hybrid as u8);
        roster.u8(self.meta);
        roster.u32(self.threads.len() as Pid);
        for (threads, addr) in self.threads.iter().zip(&self.addrs) {
            roster.u32(*threads);
            roster.str(addr.as_bytes());
        }
        roster
    }

    /// The roster in `b`, which must name `n` processes.
    fn decode(b: &[u8], n: usize) -> Result<Roster> {
        let mut g = Get::new(b);
        let token = g.u64()?;
        let hybrid = g.u8()? != 0;
        let meta = g.u8()?;
        if g.u32()? as usize != n {
            return Err(Error::protocol("the master's roster has a different nprocs"));
        }
        let mut threads = Vec::with_capacity(n);
        let mut addrs = Vec::with_capacity(n);
        for _ in 0..n {
            let t = g.u32()?;
            if t == 0 {
                return Err(Error::protocol("the master's roster names a process with 0 threads"));
            }
            threads.push(t);
            addrs.push(String::from_utf8_lossy(g.str()?).into_owned());
        }
        Ok(Roster { token, hybrid, meta, threads, addrs })
    }

    /// The result of the bootstrap: this roster and the links built from it.
    fn joined(self, links: Vec<Option<TcpStream>>) -> Joined {
        let Roster { token, hybrid, meta, threads, addrs } = self;
        Joined { links, addrs, threads, token, hybrid, meta }
    }
}

fn resolve(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let mut v: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    // IPv4 first: what hosts files and clusters mostly mean.
    v.sort_by_key(|a| !a.is_ipv4());
    Ok(v)
}

fn loopback_note(host: &str, port: u16) -> String {
    match resolve(host, port) {
        Ok(v) if !v.is_empty() && v.iter().all(|a| a.ip().is_loopback()) && host.parse::<IpAddr>().is_err() => format!(
            "; note: `{host}` resolves to {} here, a loopback address (Debian-style /etc/hosts maps the own \
             hostname to 127.0.1.1): processes on other machines cannot reach it that way - use the master's \
             IP address",
            v[0].ip()
        ),
        _ => String::new(),
    }
}

fn hello_of(cfg: &TcpConfig, kind: HelloKind, listen: String, token: u64) -> Hello {
    Hello {
        kind,
        job: cfg.job.clone(),
        nprocs: cfg.nprocs,
        pid: cfg.pid,
        threads: cfg.threads,
        hybrid: cfg.hybrid,
        listen,
        token,
    }
}

pub(crate) fn name(pid: Pid, threads: &[Pid], addr: &str) -> String {
    let first: Pid = threads[..pid as usize].iter().sum();
    let k = threads[pid as usize];
    if threads.iter().all(|&t| t == 1) {
        format!("process {pid} ({addr})")
    } else {
        format!("processes {first}..{} (node {pid}, {addr})", first + k - 1)
    }
}
