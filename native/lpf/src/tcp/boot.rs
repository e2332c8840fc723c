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

use super::wire::{Get, Put, MAGIC, VERSION};
use super::TcpConfig;
use crate::error::{Error, Result};
use crate::network::{random, random_u64};
use crate::types::Pid;
use crate::wait::{Cancel, BLOCK_SLICE};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use socket2::{Domain, SockRef, Socket, TcpKeepalive, Type};
use std::io::{ErrorKind as IoKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const GREETING_LEN: usize = 8 + 2 + 2 + 32;
const MAX_MSG: usize = 64 * 1024;
/// One handshake may take at most this long (the overall timeout still applies).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a connecting process asks for: the first byte of its [`Hello`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HelloKind {
    /// A process joining the job at pid 0.
    Join = 1,
    /// A process connecting to a peer's listener to form the mesh.
    Link = 2,
    /// Sent by a pid 0 that found its port taken, to the pid 0 holding it (see
    /// [`claim`]): "a second job wants this port".
    Claim = 3,
}

impl HelloKind {
    fn from_u8(b: u8) -> Result<HelloKind> {
        let all = [HelloKind::Join, HelloKind::Link, HelloKind::Claim];
        all.into_iter().find(|&k| k as u8 == b).ok_or_else(|| Error::protocol(format!("unknown hello kind {b}")))
    }
}

pub(crate) fn log(msg: impl AsRef<str>) {
    eprintln!("lpf: {}", msg.as_ref());
}

/// Why a handshake (or an attempt to join) failed.
enum HandshakeError {
    /// The exchange broke (refused connection, reset, timeout): another attempt may work.
    Broken(String),
    /// The other side answered but refused this process, saying why.
    Refused(String),
    /// The other side could not prove that it holds this job's secret.
    Unauthenticated(String),
    /// This process's own failure (it cannot listen for its links): no retry helps.
    Local(Error),
}

impl HandshakeError {
    /// The same failure with `context` put in front of what it says.
    fn context(self, context: &str) -> Self {
        match self {
            HandshakeError::Broken(why) => HandshakeError::Broken(format!("{context}: {why}")),
            HandshakeError::Refused(why) => HandshakeError::Refused(format!("{context}: {why}")),
            HandshakeError::Unauthenticated(why) => HandshakeError::Unauthenticated(format!("{context}: {why}")),
            HandshakeError::Local(e) => HandshakeError::Local(e.context(context)),
        }
    }

    /// Why another attempt may work (`Ok`: the exchange broke), else the error that
    /// ends the attempts, with `refused` saying who refused and why.
    fn retryable(self, refused: impl FnOnce(String) -> String) -> Result<String> {
        match self {
            HandshakeError::Broken(why) => Ok(why),
            HandshakeError::Refused(why) => Err(Error::config(refused(why))),
            HandshakeError::Unauthenticated(why) => Err(Error::authentication(refused(why))),
            HandshakeError::Local(e) => Err(e),
        }
    }
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::Broken(why) | HandshakeError::Refused(why) | HandshakeError::Unauthenticated(why) => f.write_str(why),
            HandshakeError::Local(e) => f.write_str(e.message()),
        }
    }
}

fn greeting(secret: bool, nonce: &[u8; 32]) -> Vec<u8> {
    let mut g = Vec::with_capacity(GREETING_LEN);
    g.bytes(&MAGIC);
    g.extend_from_slice(&VERSION.to_le_bytes());
    g.extend_from_slice(&(secret as u16).to_le_bytes());
    g.bytes(nonce);
    g
}

/// Checks a peer's greeting; returns its nonce or why it is refused.
fn check_greeting(g: &[u8], secret: bool) -> std::result::Result<[u8; 32], HandshakeError> {
    if g[..8] != MAGIC {
        return Err(HandshakeError::Refused("garbage bytes instead of an LPF greeting (not an LPF process?)".into()));
    }
    let version = u16::from_le_bytes([g[8], g[9]]);
    if version != VERSION {
        return Err(HandshakeError::Refused(format!(
            "protocol version {version}, this process speaks version {VERSION} (mixed LPF builds?)"
        )));
    }
    let theirs = u16::from_le_bytes([g[10], g[11]]) & 1 == 1;
    if theirs != secret {
        return Err(HandshakeError::Unauthenticated(if theirs {
            "the peer uses a shared secret and this process does not".into()
        } else {
            "this process requires a shared secret and the peer has none".into()
        }));
    }
    Ok(g[12..44].try_into().unwrap())
}

/// The HMAC of `label`, the two nonces and `body` under the secret.
fn hmac(secret: &[u8], label: &[u8], a: &[u8; 32], b: &[u8; 32], body: &[u8]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes keys of any length");
    for part in [label, a, b, body] {
        m.update(part);
    }
    m
}

/// Appends that HMAC of `body` to it, if there is a secret.
fn sign(secret: Option<&[u8]>, label: &[u8], a: &[u8; 32], b: &[u8; 32], body: &mut Vec<u8>) {
    if let Some(k) = secret {
        let t = hmac(k, label, a, b, body).finalize().into_bytes();
        body.bytes(&t);
    }
}

/// A message `sign`ed: its body and the HMAC appended (empty without a secret); `None`
/// if it is too short to carry one.
fn split_tag<'m>(secret: Option<&[u8]>, msg: &'m [u8]) -> Option<(&'m [u8], &'m [u8])> {
    match secret {
        Some(_) => (msg.len() >= 32).then(|| msg.split_at(msg.len() - 32)),
        None => Some((msg, &[])),
    }
}

/// Whether `tag` is that HMAC of `body` (compared in constant time); always true
/// without a secret.
fn tag_ok(secret: Option<&[u8]>, label: &[u8], a: &[u8; 32], b: &[u8; 32], body: &[u8], tag: &[u8]) -> bool {
    secret.is_none_or(|k| hmac(k, label, a, b, body).verify_slice(tag).is_ok())
}

/// What a connecting process says about itself.
#[derive(Clone, Debug)]
pub(crate) struct Hello {
    kind: HelloKind,
    job: String,
    nprocs: Pid,
    pub pid: Pid,
    pub threads: Pid,
    pub hybrid: bool,
    pub listen: String,
    token: u64,
}

impl Hello {
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.u8(self.kind as u8);
        b.str(self.job.as_bytes());
        b.u32(self.nprocs);
        b.u32(self.pid);
        b.u32(self.threads);
        b.u8(self.hybrid as u8);
        b.str(self.listen.as_bytes());
        b.u64(self.token);
        b
    }
    fn decode(b: &[u8]) -> Result<Hello> {
        let mut g = Get::new(b);
        let h = Hello {
            kind: HelloKind::from_u8(g.u8()?)?,
            job: String::from_utf8_lossy(g.str()?).into_owned(),
            nprocs: g.u32()?,
            pid: g.u32()?,
            threads: g.u32()?,
            hybrid: g.u8()? != 0,
            listen: String::from_utf8_lossy(g.str()?).into_owned(),
            token: g.u64()?,
        };
        if !g.is_done() {
            return Err(Error::protocol("trailing bytes"));
        }
        Ok(h)
    }
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

/// Blocking I/O with a deadline on a connected stream, stopped by `cancel`.
/// (Sends with `MSG_NOSIGNAL`: a dead peer is an error, never a `SIGPIPE`.)
fn write_all_by(s: &mut TcpStream, data: &[u8], deadline: Instant, cancel: &Cancel) -> std::io::Result<()> {
    by_deadline(data.len(), deadline, cancel, (IoKind::WriteZero, "the connection refused more data"), |at, slice| {
        s.set_write_timeout(Some(slice))?;
        super::mesh::send_bytes(s, &data[at..])
    })
}

fn read_exact_by(s: &mut TcpStream, buf: &mut [u8], deadline: Instant, cancel: &Cancel) -> std::io::Result<()> {
    by_deadline(buf.len(), deadline, cancel, (IoKind::UnexpectedEof, "the peer closed the connection"), |at, slice| {
        s.set_read_timeout(Some(slice))?;
        s.read(&mut buf[at..])
    })
}

/// Moves `len` bytes by `step(bytes moved so far, longest wait)` before `deadline`,
/// looking at `cancel` at least every [`BLOCK_SLICE`]; a step that moves nothing is the
/// error `none` (the peer is gone). A cancelled move is an `Interrupted` error (the
/// join turns it into the cancellation).
fn by_deadline(
    len: usize,
    deadline: Instant,
    cancel: &Cancel,
    none: (IoKind, &str),
    mut step: impl FnMut(usize, Duration) -> std::io::Result<usize>,
) -> std::io::Result<()> {
    let timed_out = || std::io::Error::new(IoKind::TimedOut, "timed out");
    let mut at = 0;
    while at < len {
        if cancel.is_cancelled() {
            return Err(std::io::Error::new(IoKind::Interrupted, "cancelled"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        match step(at, left.min(BLOCK_SLICE)) {
            Ok(0) => return Err(std::io::Error::new(none.0, none.1)),
            Ok(k) => at += k,
            // A slice passed (the deadline is looked at above).
            Err(e) if matches!(e.kind(), IoKind::Interrupted | IoKind::WouldBlock | IoKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A listening address in a HELLO is at most this long ("[v6 address%scope]:port").
const MAX_ADDR: usize = 96;

fn read_msg_by(s: &mut TcpStream, deadline: Instant, max: usize, cancel: &Cancel) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    read_exact_by(s, &mut len, deadline, cancel)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > max {
        return Err(std::io::Error::new(IoKind::InvalidData, format!("a message of {len} bytes")));
    }
    let mut b = vec![0; len];
    read_exact_by(s, &mut b, deadline, cancel)?;
    Ok(b)
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + body.len());
    v.u32(body.len() as u32);
    v.bytes(body);
    v
}

/// The accepting side's answer: `ok u8 | message | [mac]`.
fn answer(secret: Option<&[u8]>, ok: bool, msg: &str, mine: &[u8; 32], theirs: &[u8; 32]) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(ok as u8);
    b.str(msg.as_bytes());
    sign(secret, b"lpf-answer", theirs, mine, &mut b);
    framed(&b)
}

/// The connecting side of a handshake on a fresh stream.
fn connect_handshake(
    s: &mut TcpStream,
    secret: Option<&[u8]>,
    hello: &Hello,
    deadline: Instant,
    cancel: &Cancel,
) -> std::result::Result<(), HandshakeError> {
    use HandshakeError::{Broken, Refused};
    let mine: [u8; 32] = random().map_err(HandshakeError::Local)?;
    let io = |e: std::io::Error| Broken(e.to_string());
    write_all_by(s, &greeting(secret.is_some(), &mine), deadline, cancel).map_err(io)?;
    let mut g = [0u8; GREETING_LEN];
    read_exact_by(s, &mut g, deadline, cancel).map_err(io)?;
    let theirs = check_greeting(&g, secret.is_some()).map_err(|e| e.context("not an LPF peer we can talk to"))?;
    let mut body = hello.encode();
    sign(secret, b"lpf-hello", &theirs, &mine, &mut body);
    write_all_by(s, &framed(&body), deadline, cancel).map_err(io)?;
    let reply = read_msg_by(s, deadline, MAX_MSG, cancel).map_err(io)?;
    let (content, tag) = split_tag(secret, &reply).ok_or_else(|| Refused("malformed answer".into()))?;
    if !tag_ok(secret, b"lpf-answer", &mine, &theirs, content, tag) {
        return Err(HandshakeError::Unauthenticated("the peer failed authentication (a different shared secret?)".into()));
    }
    let mut r = Get::new(content);
    let ok = r.u8().map_err(|_| Refused("malformed answer".to_string()))? != 0;
    let msg = r.str().map(|m| String::from_utf8_lossy(m).into_owned()).unwrap_or_default();
    if ok {
        Ok(())
    } else {
        Err(Refused(msg))
    }
}

/// One connection being accepted (non-blocking handshake state machine).
struct Pending {
    stream: TcpStream,
    addr: SocketAddr,
    buf: Vec<u8>,
    need: usize,
    stage: u8,
    deadline: Instant,
    mine: [u8; 32],
    theirs: [u8; 32],
}

/// Accepts connections on `listener` until `want` of them passed the handshake and
/// `verify`, or `deadline`. Refused connections are answered (when they got as far as
/// a HELLO), logged, and closed; waiting goes on.
fn accept_peers(
    listener: &TcpListener,
    secret: Option<&[u8]>,
    want: usize,
    deadline: Instant,
    mut verify: impl FnMut(&Hello, SocketAddr) -> std::result::Result<(), String>,
    on_timeout: impl Fn() -> String,
    abort: &dyn Fn() -> Option<Error>,
) -> Result<Vec<(Hello, TcpStream)>> {
    listener.set_nonblocking(true).map_err(|e| Error::io(format!("listener: {e}")))?;
    let mut pending: Vec<Pending> = Vec::new();
    let mut done: Vec<(Hello, TcpStream)> = Vec::new();
    // A failing accept (out of file descriptors, memory) leaves the connection in the
    // backlog, so the listener stays readable: the listener is left out of the poll
    // for a growing pause (handshakes in progress go on), and the failure is logged
    // once per interval with the count, not once per attempt.
    let mut paused_until: Option<Instant> = None;
    let mut backoff = ACCEPT_BACKOFF_MIN;
    let mut failures = AcceptFailures::default();
    while done.len() < want {
        let now = Instant::now();
        if let Some(e) = abort() {
            return Err(e);
        }
        if now >= deadline {
            return Err(Error::timeout(on_timeout()));
        }
        // Expired handshakes.
        pending.retain(|p| {
            if now >= p.deadline {
                log(format!("refused connection from {}: the handshake timed out", p.addr));
                false
            } else {
                true
            }
        });
        paused_until = paused_until.filter(|&t| now < t);
        // poll ignores a negative descriptor: a paused listener is not watched.
        let lfd = if paused_until.is_some() { -1 } else { listener.as_raw_fd() };
        let mut fds = vec![libc::pollfd { fd: lfd, events: libc::POLLIN, revents: 0 }];
        fds.extend(pending.iter().map(|p| libc::pollfd { fd: p.stream.as_raw_fd(), events: libc::POLLIN, revents: 0 }));
        let until = pending.iter().map(|p| p.deadline).chain([deadline]).chain(paused_until).min().unwrap();
        // At most a slice, so that `abort` (a cancel) is seen soon.
        let ms = until.saturating_duration_since(now).min(BLOCK_SLICE).as_millis().max(1) as i32;
        // SAFETY: `fds` is a valid, exclusively owned array of pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != IoKind::Interrupted {
                return Err(Error::io(format!("poll: {e}")));
            }
            continue;
        }
        if fds[0].revents != 0 {
            loop {
                match listener.accept() {
                    Ok((stream, addr)) => {
                        backoff = ACCEPT_BACKOFF_MIN;
                        let mine: [u8; 32] = random()?;
                        let _ = stream.set_nodelay(true);
                        let g = greeting(secret.is_some(), &mine);
                        // (A fresh socket's buffer takes the 44 bytes at once.)
                        if stream.set_nonblocking(true).is_err() || super::mesh::send_bytes(&stream, &g).ok() != Some(g.len()) {
                            log(format!("refused connection from {addr}: could not send the greeting"));
                            continue;
                        }
                        pending.push(Pending {
                            stream,
                            addr,
                            buf: Vec::new(),
                            need: GREETING_LEN,
                            stage: 0,
                            deadline: (now + HANDSHAKE_TIMEOUT).min(deadline),
                            mine,
                            theirs: [0; 32],
                        });
                    }
                    Err(e) if e.kind() == IoKind::WouldBlock => break,
                    Err(e) if e.kind() == IoKind::Interrupted => {}
                    Err(e) => {
                        failures.note(listener, &e, pending.len());
                        paused_until = Some(Instant::now() + backoff);
                        backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                        break;
                    }
                }
            }
        }
        // The handshakes polled (those just accepted come after them) that can go on.
        for (i, mut p) in std::mem::take(&mut pending).into_iter().enumerate() {
            if fds.get(i + 1).is_none_or(|f| f.revents == 0) {
                pending.push(p);
                continue;
            }
            match step_pending(&mut p, secret, &mut verify) {
                Ok(None) => pending.push(p),
                Ok(Some(hello)) => done.push((hello, p.stream)),
                Err(why) => log(format!("refused connection from {}: {why}", p.addr)),
            }
        }
    }
    Ok(done)
}

const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_millis(500);
/// A failing accept is logged at most once per this interval.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(5);

/// Rate-limited log of failing accepts.
#[derive(Default)]
struct AcceptFailures {
    last_log: Option<Instant>,
    unlogged: u64,
}

impl AcceptFailures {
    fn note(&mut self, listener: &TcpListener, e: &std::io::Error, handshakes: usize) {
        self.unlogged += 1;
        let now = Instant::now();
        if self.last_log.is_some_and(|t| now.duration_since(t) < ACCEPT_LOG_EVERY) {
            return;
        }
        let at = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
        let fd_note = match e.raw_os_error() {
            Some(libc::EMFILE) | Some(libc::ENFILE) => {
                " (out of file descriptors: raise `ulimit -n`, or something holds many connections to this port)"
            }
            _ => "",
        };
        log(format!(
            "accepting connections at {at} failed {} time(s){}: {e}{fd_note}; {handshakes} handshake(s) in \
             progress; retrying with a pause (logged at most every {} s)",
            self.unlogged,
            if self.last_log.is_some() { " since the last report" } else { "" },
            ACCEPT_LOG_EVERY.as_secs()
        ));
        self.last_log = Some(now);
        self.unlogged = 0;
    }
}

/// Advances one handshake with what can be read now: `Ok(Some)` when accepted.
fn step_pending(
    p: &mut Pending,
    secret: Option<&[u8]>,
    verify: &mut impl FnMut(&Hello, SocketAddr) -> std::result::Result<(), String>,
) -> std::result::Result<Option<Hello>, String> {
    loop {
        let mut chunk = [0u8; 4096];
        let want = (p.need - p.buf.len()).min(chunk.len());
        if want > 0 {
            match p.stream.read(&mut chunk[..want]) {
                Ok(0) => {
                    return Err(if p.stage == 0 && p.buf.is_empty() {
                        "closed before the handshake (a port scan or health check?)".into()
                    } else {
                        "closed during the handshake".into()
                    })
                }
                Ok(k) => p.buf.extend_from_slice(&chunk[..k]),
                Err(e) if e.kind() == IoKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                Err(e) => return Err(format!("receiving failed: {e}")),
            }
            if p.buf.len() < p.need {
                continue;
            }
        }
        match p.stage {
            0 => {
                p.theirs = check_greeting(&p.buf, secret.is_some()).map_err(|e| e.to_string())?;
                p.stage = 1;
                p.need = 4;
                p.buf.clear();
            }
            1 => {
                let len = u32::from_le_bytes(p.buf[..4].try_into().unwrap()) as usize;
                if len > MAX_MSG {
                    return Err(format!("a HELLO of {len} bytes (garbage?)"));
                }
                p.stage = 2;
                p.need = len;
                p.buf.clear();
                if len == 0 {
                    return Err("an empty HELLO".into());
                }
            }
            _ => {
                let (body, tag) = split_tag(secret, &p.buf).ok_or("a HELLO too short to carry its authentication")?;
                let refuse = |p: &mut Pending, why: String| {
                    let _ = p.stream.set_nonblocking(false);
                    let _ = write_all_by(&mut p.stream, &answer(secret, false, &why, &p.mine, &p.theirs), Instant::now() + Duration::from_millis(200), &Cancel::NEVER);
                    Err(why)
                };
                if !tag_ok(secret, b"lpf-hello", &p.mine, &p.theirs, body, tag) {
                    return refuse(p, "authentication failed (wrong shared secret)".into());
                }
                let hello = match Hello::decode(body) {
                    Ok(h) => h,
                    Err(_) => return refuse(p, "malformed HELLO".into()),
                };
                if let Err(why) = verify(&hello, p.addr) {
                    return refuse(p, why);
                }
                let _ = p.stream.set_nonblocking(false);
                write_all_by(&mut p.stream, &answer(secret, true, "", &p.mine, &p.theirs), p.deadline, &Cancel::NEVER)
                    .map_err(|e| format!("sending the answer failed: {e}"))?;
                return Ok(Some(hello));
            }
        }
    }
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
    let n = cfg.nprocs as usize;
    let secret = cfg.secret.as_deref();
    if secret.is_none() && n > 1 {
        // Asked for by leaving the secret out (config.rs refuses an empty one): said
        // once per job, by the process everyone joins.
        log(unauthenticated_notice(cfg, port));
    }
    // Where each pid joined from (the ones still missing are named on a timeout).
    let seen = std::cell::RefCell::new(vec![None::<SocketAddr>; n]);
    let contested = std::cell::RefCell::new(None::<Error>);
    let verify = |h: &Hello, addr: SocketAddr| -> std::result::Result<(), String> {
        if h.kind == HelloKind::Claim && h.job == cfg.job && h.nprocs == cfg.nprocs {
            // Another job's pid 0 with this job's identity (and secret, if any) wants
            // this port: its processes (some may have joined here already) cannot be
            // told from ours. Fail rather than run with a foreign member.
            *contested.borrow_mut() = Some(Error::config(format!(
                "pid 0 gives up: another LPF job's pid 0 (at {addr}, nprocs {}) tried to listen on this port \
                 {}:{port}; the two jobs' processes cannot be told apart (the same job identity `{}`{}), so \
                 processes of that job may have joined this one - give each job its own port, job identity \
                 (TcpConfig::job, LPF_TCP_JOB) or secret",
                h.nprocs,
                cfg.master,
                cfg.job,
                if cfg.secret.is_some() { " and the same secret" } else { ", no secret" }
            )));
            return Err(CONTESTED.into());
        }
        if h.kind == HelloKind::Claim {
            return Err(format!(
                "that job (`{}`, {} processes) is not this job (`{}`, {} processes): their processes refuse each other",
                h.job, h.nprocs, cfg.job, cfg.nprocs
            ));
        }
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
        if h.threads == 0 || h.threads > crate::shm::barrier::MAX_PROCS {
            return Err(format!("a process with {} threads (1..={} allowed)", h.threads, crate::shm::barrier::MAX_PROCS));
        }
        if h.listen.len() > MAX_ADDR {
            return Err(format!("a listening address of {} bytes", h.listen.len()));
        }
        if let Some(a) = seen.borrow()[h.pid as usize] {
            return Err(format!("duplicate pid {}: already taken by the process at {a}", h.pid));
        }
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
    let joined = accept_peers(&listener, secret, n - 1, deadline, verify, on_timeout, &abort)?;
    drop(listener);
    let token = random_u64()?;
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
    let mut roster = Vec::new();
    roster.u64(token);
    roster.u8(hybrid as u8);
    roster.u8(meta);
    roster.u32(cfg.nprocs);
    for i in 0..n {
        roster.u32(threads[i]);
        roster.str(addrs[i].as_bytes());
    }
    let msg = framed(&roster);
    for (i, s) in links.iter_mut().enumerate() {
        if let Some(s) = s {
            write_all_by(s, &msg, deadline, &cfg.cancel)
                .map_err(|e| Error::io(format!("sending the roster to pid {i} ({}) failed: {e}", addrs[i])))?;
        }
    }
    Ok(Joined { links, addrs, threads, token, hybrid, meta })
}

/// Any other pid: joins at the master (retrying until the deadline), receives the
/// roster, and builds its links.
pub(crate) fn peer(cfg: &TcpConfig, deadline: Instant) -> Result<Joined> {
    let n = cfg.nprocs as usize;
    let me = cfg.pid as usize;
    let secret = cfg.secret.as_deref();
    let mut backoff = Duration::from_millis(20);
    let mut last_err = String::from("no attempt");
    let (mut master, listener) = loop {
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
            Ok(x) => break x,
            Err(e) => {
                last_err = e.retryable(|why| format!("pid {me}: the master at {}:{} refused this process: {why}", cfg.master, cfg.port))?
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(backoff.min(left));
        backoff = (backoff * 2).min(Duration::from_millis(500));
    };
    // The roster, once everyone has joined.
    // The roster: a header, then per process its threads and address (bounded by the
    // master's checks), so its size follows nprocs (up to 65535 processes).
    let roster = read_msg_by(&mut master, deadline, MAX_MSG + n * (8 + MAX_ADDR), &cfg.cancel).map_err(|e| {
        let msg = format!(
            "pid {me} joined the master at {}:{} but the job did not complete within {:.1} s: {e}",
            cfg.master,
            cfg.port,
            cfg.timeout.as_secs_f64()
        );
        if e.kind() == IoKind::TimedOut { Error::timeout(msg) } else { Error::io(msg) }
    })?;
    let mut g = Get::new(&roster);
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
    let mut links: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    links[0] = Some(master);
    // Connect to the lower pids (other than 0) ...
    for j in 1..me {
        let addr: SocketAddr = addrs[j].parse().map_err(|_| Error::protocol(format!("bad address `{}` for pid {j}", addrs[j])))?;
        let hello = hello_of(cfg, HelloKind::Link, String::new(), token);
        let mut tries = 0;
        let s = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let r = TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1)).min(Duration::from_secs(5)))
                .map_err(|e| HandshakeError::Broken(e.to_string()))
                .and_then(|mut s| connect_handshake(&mut s, secret, &hello, deadline, &cfg.cancel).map(|_| s));
            let e = match r {
                Ok(s) => break s,
                Err(e) => e.retryable(|why| format!("pid {j} at {addr} refused the link from pid {me}: {why}"))?,
            };
            if Instant::now() >= deadline || tries > 50 {
                return Err(Error::io(format!("pid {me} cannot link to pid {j} at {addr}: {e}")));
            }
            tries += 1;
            cfg.cancel.check()?;
            std::thread::sleep(Duration::from_millis(20));
        };
        links[j] = Some(s);
    }
    // ... and accept the higher ones.
    if let Some(l) = listener {
        let mut linked = vec![false; n];
        let verify = |h: &Hello, _: SocketAddr| -> std::result::Result<(), String> {
            if h.kind != HelloKind::Link || h.token != token || h.job != cfg.job {
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
        let timeout = || format!("pid {me} timed out waiting for links from pids {}..{} at {}", me + 1, n - 1, addrs[me]);
        for (h, s) in accept_peers(&l, secret, n - 1 - me, deadline, verify, timeout, &|| cfg.cancel.check().err())? {
            links[h.pid as usize] = Some(s);
        }
    }
    Ok(Joined { links, addrs, threads, token, hybrid, meta })
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
