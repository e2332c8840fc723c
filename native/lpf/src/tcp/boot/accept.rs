//! The accepting side of the bootstrap: one thread waits, with `poll`, on a listener
//! and on every handshake in progress, so that a slow or hostile connection never holds
//! up the others.

use super::handshake::{Hello, Pending, HANDSHAKE_TIMEOUT};
use super::log;
use crate::error::{Error, Result};
use crate::wait::BLOCK_SLICE;
use std::io::ErrorKind as IoKind;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Accepts connections on `listener` until `want` of them passed the handshake and
/// `verify`, or `deadline`. Refused connections are answered (when they got as far as
/// a HELLO), logged, and closed; waiting goes on.
pub(super) fn accept_peers(
    listener: &TcpListener,
    secret: Option<&[u8]>,
    want: usize,
    deadline: Instant,
    mut verify: impl FnMut(&Hello, SocketAddr) -> std::result::Result<(), String>,
    on_timeout: impl Fn() -> String,
    abort: &dyn Fn() -> Option<Error>,
) -> Result<Vec<(Hello, TcpStream)>> {
    listener.set_nonblocking(true).map_err(|e| Error::io(format!("listener: {e}")))?;
    let mut acceptor = Acceptor::new(listener, secret, deadline);
    let mut done: Vec<(Hello, TcpStream)> = Vec::new();
    while done.len() < want {
        let now = Instant::now();
        if let Some(e) = abort() {
            return Err(e);
        }
        if now >= deadline {
            return Err(Error::timeout(on_timeout()));
        }
        acceptor.drop_expired(now);
        let Some(fds) = acceptor.poll(now)? else { continue };
        if fds[0].revents != 0 {
            acceptor.accept_new(now)?;
        }
        acceptor.advance(&fds, &mut verify, &mut done);
    }
    Ok(done)
}

/// The state of [`accept_peers`] between two polls.
struct Acceptor<'l> {
    listener: &'l TcpListener,
    secret: Option<&'l [u8]>,
    deadline: Instant,
    /// The handshakes in progress.
    pending: Vec<Pending>,
    /// A failing accept (out of file descriptors, memory) leaves the connection in the
    /// backlog, so the listener stays readable: the listener is left out of the poll
    /// for a growing pause (handshakes in progress go on), and the failure is logged
    /// once per interval with the count, not once per attempt.
    paused_until: Option<Instant>,
    backoff: Duration,
    failures: AcceptFailures,
}

impl<'l> Acceptor<'l> {
    fn new(listener: &'l TcpListener, secret: Option<&'l [u8]>, deadline: Instant) -> Self {
        Acceptor {
            listener,
            secret,
            deadline,
            pending: Vec::new(),
            paused_until: None,
            backoff: ACCEPT_BACKOFF_MIN,
            failures: AcceptFailures::default(),
        }
    }

    /// Refuses (logs and closes) the handshakes that ran out of time.
    fn drop_expired(&mut self, now: Instant) {
        self.pending.retain(|p| {
            if now >= p.deadline {
                log(format!("refused connection from {}: the handshake timed out", p.addr));
                false
            } else {
                true
            }
        });
    }

    /// Waits until the listener (unless paused) or a handshake can go on, at most a
    /// slice: the poll array (the listener first, then `pending` in order), or `None`
    /// when a signal interrupted the wait.
    fn poll(&mut self, now: Instant) -> Result<Option<Vec<libc::pollfd>>> {
        self.paused_until = self.paused_until.filter(|&t| now < t);
        // poll ignores a negative descriptor: a paused listener is not watched.
        let lfd = if self.paused_until.is_some() { -1 } else { self.listener.as_raw_fd() };
        let mut fds = vec![libc::pollfd { fd: lfd, events: libc::POLLIN, revents: 0 }];
        fds.extend(self.pending.iter().map(|p| libc::pollfd { fd: p.stream.as_raw_fd(), events: libc::POLLIN, revents: 0 }));
        let until = self.pending.iter().map(|p| p.deadline).chain([self.deadline]).chain(self.paused_until).min().unwrap();
        // At most a slice, so that `abort` (a cancel) is seen soon.
        let ms = until.saturating_duration_since(now).min(BLOCK_SLICE).as_millis().max(1) as i32;
        // SAFETY: `fds` is a valid, exclusively owned array of pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != IoKind::Interrupted {
                return Err(Error::io(format!("poll: {e}")));
            }
            return Ok(None);
        }
        Ok(Some(fds))
    }

    /// Accepts every connection waiting at the listener and greets it; a failing accept
    /// pauses the listener.
    fn accept_new(&mut self, now: Instant) -> Result<()> {
        loop {
            match self.listener.accept() {
                Ok((stream, addr)) => {
                    self.backoff = ACCEPT_BACKOFF_MIN;
                    let deadline = (now + HANDSHAKE_TIMEOUT).min(self.deadline);
                    if let Some(p) = Pending::start(stream, addr, self.secret, deadline)? {
                        self.pending.push(p);
                    }
                }
                Err(e) if e.kind() == IoKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(e) => {
                    self.failures.note(self.listener, &e, self.pending.len());
                    self.paused_until = Some(Instant::now() + self.backoff);
                    self.backoff = (self.backoff * 2).min(ACCEPT_BACKOFF_MAX);
                    return Ok(());
                }
            }
        }
    }

    /// Steps the handshakes polled in `fds` that can go on (those just accepted come
    /// after them): the accepted ones move to `done`, the refused ones are logged.
    fn advance(
        &mut self,
        fds: &[libc::pollfd],
        verify: &mut impl FnMut(&Hello, SocketAddr) -> std::result::Result<(), String>,
        done: &mut Vec<(Hello, TcpStream)>,
    ) {
        for (i, mut p) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            if fds.get(i + 1).is_none_or(|f| f.revents == 0) {
                self.pending.push(p);
                continue;
            }
            match p.step(self.secret, verify) {
                Ok(None) => self.pending.push(p),
                Ok(Some(hello)) => done.push((hello, p.stream)),
                Err(why) => log(format!("refused connection from {}: {why}", p.addr)),
            }
        }
    }
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
