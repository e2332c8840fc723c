//! The handshake every connection of the bootstrap starts with, both sides of it: the
//! greetings, the HELLO and the answer, and the HMACs that prove the shared secret
//! (see the module doc of `boot` for the exchange). Also the framed, deadline-bound
//! blocking I/O the connecting side uses.

use super::log;
use crate::error::{Error, Result};
use crate::network::random;
use crate::tcp::mesh::send_bytes;
use crate::types::Pid;
use crate::wait::{Cancel, BLOCK_SLICE};
use crate::wire::{Get, Put, MAGIC, VERSION};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{ErrorKind as IoKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub(super) const GREETING_LEN: usize = 8 + 2 + 2 + 32;
pub(super) const MAX_MSG: usize = 64 * 1024;
/// One handshake may take at most this long (the overall timeout still applies).
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a connecting process asks for: the first byte of its [`Hello`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HelloKind {
    /// A process joining the job at pid 0.
    Join = 1,
    /// A process connecting to a peer's listener to form the mesh.
    Link = 2,
    /// Sent by a pid 0 that found its port taken, to the pid 0 holding it (see
    /// `master::claim`): "a second job wants this port".
    Claim = 3,
}

impl HelloKind {
    fn from_u8(b: u8) -> Result<HelloKind> {
        let all = [HelloKind::Join, HelloKind::Link, HelloKind::Claim];
        all.into_iter().find(|&k| k as u8 == b).ok_or_else(|| Error::protocol(format!("unknown hello kind {b}")))
    }
}


/// Why a handshake (or an attempt to join) failed.
pub(super) enum HandshakeError {
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
    pub(super) fn context(self, context: &str) -> Self {
        match self {
            HandshakeError::Broken(why) => HandshakeError::Broken(format!("{context}: {why}")),
            HandshakeError::Refused(why) => HandshakeError::Refused(format!("{context}: {why}")),
            HandshakeError::Unauthenticated(why) => HandshakeError::Unauthenticated(format!("{context}: {why}")),
            HandshakeError::Local(e) => HandshakeError::Local(e.context(context)),
        }
    }

    /// Why another attempt may work (`Ok`: the exchange broke), else the error that
    /// ends the attempts, with `refused` saying who refused and why.
    pub(super) fn retryable(self, refused: impl FnOnce(String) -> String) -> Result<String> {
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
pub(super) struct Hello {
    pub kind: HelloKind,
    pub job: String,
    pub nprocs: Pid,
    pub pid: Pid,
    pub threads: Pid,
    pub hybrid: bool,
    pub listen: String,
    pub token: u64,
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

/// Blocking I/O with a deadline on a connected stream, stopped by `cancel`.
/// (Sends with `MSG_NOSIGNAL`: a dead peer is an error, never a `SIGPIPE`.)
pub(super) fn write_all_by(s: &mut TcpStream, data: &[u8], deadline: Instant, cancel: &Cancel) -> std::io::Result<()> {
    by_deadline(data.len(), deadline, cancel, (IoKind::WriteZero, "the connection refused more data"), |at, slice| {
        s.set_write_timeout(Some(slice))?;
        send_bytes(s, &data[at..])
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
pub(super) const MAX_ADDR: usize = 96;

pub(super) fn read_msg_by(s: &mut TcpStream, deadline: Instant, max: usize, cancel: &Cancel) -> std::io::Result<Vec<u8>> {
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

pub(super) fn framed(body: &[u8]) -> Vec<u8> {
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
pub(super) fn connect_handshake(
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
pub(super) struct Pending {
    pub stream: TcpStream,
    pub addr: SocketAddr,
    buf: Vec<u8>,
    need: usize,
    stage: u8,
    pub deadline: Instant,
    mine: [u8; 32],
    theirs: [u8; 32],
}

impl Pending {
    /// Starts accepting `stream` (from `addr`) by sending this side's greeting; `None`
    /// (logged) if it cannot be sent. The handshake must end by `deadline`.
    pub(super) fn start(stream: TcpStream, addr: SocketAddr, secret: Option<&[u8]>, deadline: Instant) -> Result<Option<Pending>> {
        let mine: [u8; 32] = random()?;
        let _ = stream.set_nodelay(true);
        let g = greeting(secret.is_some(), &mine);
        // (A fresh socket's buffer takes the 44 bytes at once.)
        if stream.set_nonblocking(true).is_err() || send_bytes(&stream, &g).ok() != Some(g.len()) {
            log(format!("refused connection from {addr}: could not send the greeting"));
            return Ok(None);
        }
        Ok(Some(Pending { stream, addr, buf: Vec::new(), need: GREETING_LEN, stage: 0, deadline, mine, theirs: [0; 32] }))
    }

    /// Advances one handshake with what can be read now: `Ok(Some)` when accepted.
    pub(super) fn step(
        &mut self,
        secret: Option<&[u8]>,
        verify: &mut impl FnMut(&Hello, SocketAddr) -> std::result::Result<(), String>,
    ) -> std::result::Result<Option<Hello>, String> {
        loop {
            let mut chunk = [0u8; 4096];
            let want = (self.need - self.buf.len()).min(chunk.len());
            if want > 0 {
                match self.stream.read(&mut chunk[..want]) {
                    Ok(0) => {
                        return Err(if self.stage == 0 && self.buf.is_empty() {
                            "closed before the handshake (a port scan or health check?)".into()
                        } else {
                            "closed during the handshake".into()
                        })
                    }
                    Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                    Err(e) if e.kind() == IoKind::WouldBlock => return Ok(None),
                    Err(e) if e.kind() == IoKind::Interrupted => continue,
                    Err(e) => return Err(format!("receiving failed: {e}")),
                }
                if self.buf.len() < self.need {
                    continue;
                }
            }
            match self.stage {
                0 => {
                    self.theirs = check_greeting(&self.buf, secret.is_some()).map_err(|e| e.to_string())?;
                    self.stage = 1;
                    self.need = 4;
                    self.buf.clear();
                }
                1 => {
                    let len = u32::from_le_bytes(self.buf[..4].try_into().unwrap()) as usize;
                    if len > MAX_MSG {
                        return Err(format!("a HELLO of {len} bytes (garbage?)"));
                    }
                    self.stage = 2;
                    self.need = len;
                    self.buf.clear();
                    if len == 0 {
                        return Err("an empty HELLO".into());
                    }
                }
                _ => {
                    let (body, tag) = split_tag(secret, &self.buf).ok_or("a HELLO too short to carry its authentication")?;
                    let refuse = |p: &mut Pending, why: String| {
                        let _ = p.stream.set_nonblocking(false);
                        let _ = write_all_by(&mut p.stream, &answer(secret, false, &why, &p.mine, &p.theirs), Instant::now() + Duration::from_millis(200), &Cancel::NEVER);
                        Err(why)
                    };
                    if !tag_ok(secret, b"lpf-hello", &self.mine, &self.theirs, body, tag) {
                        return refuse(self, "authentication failed (wrong shared secret)".into());
                    }
                    let hello = match Hello::decode(body) {
                        Ok(h) => h,
                        Err(_) => return refuse(self, "malformed HELLO".into()),
                    };
                    if let Err(why) = verify(&hello, self.addr) {
                        return refuse(self, why);
                    }
                    let _ = self.stream.set_nonblocking(false);
                    write_all_by(&mut self.stream, &answer(secret, true, "", &self.mine, &self.theirs), self.deadline, &Cancel::NEVER)
                        .map_err(|e| format!("sending the answer failed: {e}"))?;
                    return Ok(Some(hello));
                }
            }
        }
    }
}
