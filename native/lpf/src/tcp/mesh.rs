//! The full mesh of connections of one TCP init, and its progress engine.
//!
//! One thread drives every connection of its process with non-blocking sockets and
//! `poll`: a wait loop writes whatever the kernel accepts on every link, reads whatever
//! has arrived on every link, and re-checks the caller's condition, so one slow peer
//! never stalls the exchange with the others. Incoming bytes are parsed into frames
//! (header + body) kept in a per-link inbox until the sync asks for them; the raw
//! bytes that follow a frame (large payloads) are read straight into user memory
//! following a *plan* the sync installs once it knows where they go. Until then that
//! link is paused (only hang-ups are watched), which is what keeps large payloads from
//! being buffered.
//!
//! Frames of a section that has already ended here are dropped on arrival (their raw
//! bytes discarded), so a failed or unbalanced section never poisons the next one.

use crate::phases::driver::Pools;
use crate::phases::{Channel, Inbox, Layout, MetaAlgo, Sections};
use crate::wire::{Frame, Header, Kind, SyncId, Tag, HEADER_LEN};
use crate::error::{Error, Result};
use crate::types::Pid;
use crate::wait::{Cancel, Host, LookCost, Patience, Pause};
use std::collections::VecDeque;
use std::io::{IoSlice, IoSliceMut, Read};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Instant;

/// `send(2)` with `MSG_NOSIGNAL`: a peer that died makes it fail with `EPIPE` instead
/// of raising `SIGPIPE`, whose default action kills the host program (a C program has
/// it; the library never changes signal dispositions). Every byte the TCP engine sends
/// goes through this or [`send_vectored`].
pub(crate) fn send_bytes(s: &TcpStream, data: &[u8]) -> std::io::Result<usize> {
    send_vectored(s, &[IoSlice::new(data)])
}

/// `sendmsg(2)` of several buffers with `MSG_NOSIGNAL` (see [`send_bytes`]).
pub(crate) fn send_vectored(s: &TcpStream, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
    // SAFETY: `IoSlice` is ABI-compatible with `struct iovec` on Unix; the slices
    // outlive the call; a zeroed msghdr is a valid "no address, no control data".
    let r = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = bufs.len() as _;
        libc::sendmsg(s.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// Where a run of raw incoming bytes goes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg {
    /// Into memory at `ptr` (user memory registered for this sync).
    To(*mut u8, usize),
    /// Read and dropped.
    Skip(usize),
}

impl Seg {
    fn len(&self) -> usize {
        match *self {
            Seg::To(_, n) | Seg::Skip(n) => n,
        }
    }
    fn advance(&mut self, k: usize) {
        match self {
            Seg::To(p, n) => {
                *p = p.wrapping_add(k);
                *n -= k;
            }
            Seg::Skip(n) => *n -= k,
        }
    }
}

enum Out {
    Owned(Vec<u8>, usize),
    /// User memory, valid until the current sync returns (see [`Mesh::detach`]).
    Mem(*const u8, usize),
}

impl Out {
    /// The bytes still to send.
    fn rest(&self) -> &[u8] {
        match *self {
            Out::Owned(ref v, pos) => &v[pos..],
            // SAFETY: a Mem entry points into user memory the current sync holds
            // (registered and not touched by the user until the sync returns);
            // `Mesh::detach` replaces all of them before it returns.
            Out::Mem(p, n) => unsafe { std::slice::from_raw_parts(p, n) },
        }
    }
    fn advance(&mut self, k: usize) {
        match self {
            Out::Owned(_, pos) => *pos += k,
            Out::Mem(p, n) => {
                *p = p.wrapping_add(k);
                *n -= k;
            }
        }
    }
}

pub(crate) struct Link {
    stream: TcpStream,
    /// "process 3 (10.0.0.3:40001)", for error messages.
    pub name: String,
    out: VecDeque<Out>,
    buf: Vec<u8>,
    lo: usize,
    hi: usize,
    raw_left: u64,
    raw_section: u32,
    plan: VecDeque<Seg>,
    inbox: Inbox,
    dead: Option<String>,
}

const RX_CHUNK: usize = 64 * 1024;
/// Why a link died whose peer closed it.
const CLOSED: &str = "closed the connection (it died, was killed, or finalized)";
const MAX_BODY: u64 = 1 << 34;

impl Link {
    pub fn new(stream: TcpStream, name: String) -> Link {
        Link {
            stream,
            name,
            out: VecDeque::new(),
            buf: vec![0; RX_CHUNK],
            lo: 0,
            hi: 0,
            raw_left: 0,
            raw_section: 0,
            plan: VecDeque::new(),
            inbox: Inbox::default(),
            dead: None,
        }
    }

    fn paused(&self) -> bool {
        self.raw_left > 0 && self.plan.is_empty()
    }

    /// Whether bytes already read can be processed without reading more.
    fn has_buffered_work(&self) -> bool {
        if self.dead.is_some() || self.paused() || self.hi == self.lo {
            return false;
        }
        if self.raw_left > 0 {
            return true;
        }
        let avail = self.hi - self.lo;
        avail >= HEADER_LEN
            && match Header::decode(&self.buf[self.lo..self.lo + HEADER_LEN]) {
                Ok(h) => avail as u64 >= HEADER_LEN as u64 + h.body,
                Err(_) => true,
            }
    }

    /// Queues a frame (none on a dead link).
    fn queue(&mut self, tag: Tag, body: &[u8], raw: u64) {
        if self.dead.is_none() {
            let mut v = Vec::with_capacity(HEADER_LEN + body.len());
            tag.header(body.len(), raw).encode(&mut v);
            v.extend_from_slice(body);
            self.out.push_back(Out::Owned(v, 0));
        }
    }

    fn kill(&mut self, why: String) {
        if self.dead.is_none() {
            self.dead = Some(why);
            self.out.clear();
            let _ = self.stream.shutdown(Shutdown::Both);
        }
    }

    /// What a send or receive on the socket gave: the bytes moved (0 when interrupted:
    /// try again), or `None` when nothing more can be done now (the socket would block,
    /// or the link died: `none` if it moved nothing, else `what` failed).
    fn moved(&mut self, r: std::io::Result<usize>, none: &str, what: &str) -> Option<usize> {
        match r {
            Ok(0) => self.kill(none.into()),
            Ok(k) => return Some(k),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Some(0),
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => self.kill(format!("{what} failed: {e}")),
            Err(_) => {}
        }
        None
    }

    /// Writes as much queued output as the socket takes.
    fn pump_tx(&mut self) {
        while !self.out.is_empty() && self.dead.is_none() {
            let slices: Vec<IoSlice<'_>> = self.out.iter().take(64).map(|o| IoSlice::new(o.rest())).collect();
            let r = send_vectored(&self.stream, &slices);
            let Some(mut k) = self.moved(r, "the connection refused more data", "sending") else { return };
            while k > 0 {
                let front = self.out.front_mut().unwrap();
                let step = k.min(front.rest().len());
                front.advance(step);
                k -= step;
                if front.rest().is_empty() {
                    self.out.pop_front();
                }
            }
        }
    }

    /// Reads what has arrived: frames into the inbox (small bodies in buffers from
    /// `pools`), raw bytes along the plan.
    fn pump_rx(&mut self, stale: &dyn Fn(u32) -> bool, scratch: &mut [u8], pools: &mut Pools) {
        let mut budget = 16usize << 20;
        while self.dead.is_none() && budget > 0 {
            if self.raw_left > 0 {
                if self.plan.is_empty() {
                    return;
                }
                if self.hi > self.lo {
                    let seg = self.plan[0];
                    let k = (self.hi - self.lo).min(seg.len()).min(self.raw_left as usize);
                    if let Seg::To(p, _) = seg {
                        // SAFETY: `p..p + k` lies in user memory the sync planned for
                        // these bytes (see `Out::Mem`); `buf` is ours.
                        unsafe { std::ptr::copy_nonoverlapping(self.buf[self.lo..].as_ptr(), p, k) };
                    }
                    self.lo += k;
                    self.consumed_raw(k);
                    continue;
                }
                let mut iov: Vec<IoSliceMut<'_>> = Vec::with_capacity(self.plan.len().min(64));
                let mut scratch_used = false;
                for s in self.plan.iter().take(64) {
                    match *s {
                        // SAFETY: as above: the plan names memory the sync holds.
                        Seg::To(p, n) => iov.push(IoSliceMut::new(unsafe { std::slice::from_raw_parts_mut(p, n) })),
                        Seg::Skip(n) => {
                            // One scratch buffer per call keeps the borrow checker happy;
                            // stop the batch at a second skip.
                            if scratch_used {
                                break;
                            }
                            scratch_used = true;
                            let n = n.min(scratch.len());
                            // SAFETY: `scratch` is exclusively ours for this call.
                            iov.push(IoSliceMut::new(unsafe { std::slice::from_raw_parts_mut(scratch.as_mut_ptr(), n) }));
                        }
                    }
                }
                let r = self.stream.read_vectored(&mut iov);
                let Some(k) = self.moved(r, CLOSED, "receiving") else { return };
                budget = budget.saturating_sub(k);
                self.consumed_raw(k);
                continue;
            }
            // Frame mode.
            let avail = self.hi - self.lo;
            let mut need = HEADER_LEN;
            if avail >= HEADER_LEN {
                let h = match Header::decode(&self.buf[self.lo..self.lo + HEADER_LEN]) {
                    Ok(h) => h,
                    Err(e) => return self.kill(format!("protocol error: {e}")),
                };
                if h.body > MAX_BODY {
                    return self.kill(format!("protocol error: frame body of {} bytes", h.body));
                }
                need = HEADER_LEN + h.body as usize;
                if avail >= need {
                    let mut body = pools.body(need - HEADER_LEN);
                    if body.try_reserve_exact(need - HEADER_LEN).is_err() {
                        return self.kill(format!("out of memory: cannot allocate {} bytes for a frame body", h.body));
                    }
                    body.extend_from_slice(&self.buf[self.lo + HEADER_LEN..self.lo + need]);
                    self.lo += need;
                    self.accept_frame(Frame { h, body }, stale);
                    continue;
                }
            }
            if self.lo == self.hi {
                self.lo = 0;
                self.hi = 0;
            }
            if self.buf.len() - self.lo < need.max(RX_CHUNK / 4) {
                if self.lo > 0 {
                    self.buf.copy_within(self.lo..self.hi, 0);
                }
                self.hi -= self.lo;
                self.lo = 0;
                // The buffer grows with the bytes that actually arrive (doubling), not
                // to the size a header announces: a peer's claim costs no memory
                // before it is backed by data, and what cannot be had is an error.
                if self.buf.len() < need && self.hi == self.buf.len() {
                    let to = need.min(self.buf.len().saturating_mul(2));
                    if self.buf.try_reserve_exact(to - self.buf.len()).is_err() {
                        return self.kill(format!(
                            "out of memory: cannot grow the receive buffer to {to} bytes for a frame body of {} bytes",
                            need - HEADER_LEN
                        ));
                    }
                    self.buf.resize(to, 0);
                }
            }
            let r = self.stream.read(&mut self.buf[self.hi..]);
            let Some(k) = self.moved(r, CLOSED, "receiving") else { return };
            self.hi += k;
            budget = budget.saturating_sub(k);
        }
    }

    /// `k` raw bytes went along the plan (the plan holds no empty segment).
    fn consumed_raw(&mut self, mut k: usize) {
        self.raw_left -= k as u64;
        while k > 0 {
            let seg = self.plan.front_mut().unwrap();
            let step = k.min(seg.len());
            seg.advance(step);
            k -= step;
            if seg.len() == 0 {
                self.plan.pop_front();
            }
        }
        if self.raw_left == 0 {
            self.plan.clear();
        }
    }

    fn accept_frame(&mut self, f: Frame, stale: &dyn Fn(u32) -> bool) {
        self.raw_left = f.h.raw;
        self.raw_section = f.h.section;
        if stale(f.h.section) {
            return self.skip_raw();
        }
        if f.h.kind == Kind::Leave {
            self.skip_raw();
        }
        self.inbox.deliver(f);
    }

    fn skip_raw(&mut self) {
        self.plan.clear();
        // One segment for all of it (a peer may announce up to 2^64 - 1 raw bytes: in
        // pieces of 1 GiB that was billions of segments allocated before any byte came).
        let mut left = self.raw_left;
        while left > 0 {
            let k = left.min(usize::MAX as u64);
            self.plan.push_back(Seg::Skip(k as usize));
            left -= k;
        }
    }
}

/// The LPF processes of the job that run on this host: this process's threads and
/// those of every process whose link's two ends have the same address (or a loopback
/// one). Which processes share the cores decides whether waiting may spin.
pub(crate) fn procs_on_this_host(me: usize, threads: &[Pid], links: &[Option<Link>]) -> usize {
    let local = |l: &Link| match (l.stream.local_addr(), l.stream.peer_addr()) {
        (Ok(a), Ok(b)) => a.ip() == b.ip() || b.ip().is_loopback(),
        _ => false,
    };
    let here = |i: usize| i == me || links.get(i).and_then(Option::as_ref).is_some_and(local);
    threads.iter().enumerate().filter(|&(i, _)| here(i)).map(|(_, &t)| t as usize).sum()
}

/// One process's view of the job: its links and the layout of global pids.
pub(crate) struct Mesh {
    /// This process's index among the OS processes of the job (its TCP pid), and where
    /// the LPF processes live.
    pub layout: Layout,
    links: Vec<Option<Link>>,
    /// Hooks and rehooks, in the same order everywhere.
    pub sections: Sections,
    scratch: Vec<u8>,
    /// The LPF processes on this host and the spin setting: how waits behave here.
    pub host: Host,
    patience: Patience,
    /// Stops every wait of this process when set (and its bootstrap, before).
    pub cancel: Cancel,
    pfds: Vec<libc::pollfd>,
    pools: Pools,
}

// SAFETY: the raw pointers in `Out::Mem` and `Seg::To` are only present while a sync
// runs on the thread holding the mesh (it is behind a Mutex) and are removed by
// `detach` before that sync returns.
unsafe impl Send for Mesh {}

impl Mesh {
    pub fn new(me: usize, offsets: Vec<Pid>, links: Vec<Option<Link>>, token: u64, meta: MetaAlgo, host: Host, cancel: Cancel) -> Mesh {
        Mesh {
            layout: Layout::new(me, offsets, token, meta),
            links,
            sections: Sections::default(),
            scratch: vec![0; RX_CHUNK],
            host,
            patience: host.patience(LookCost::SOCKETS),
            cancel,
            pfds: Vec::new(),
            pools: Pools::default(),
        }
    }

    pub fn nprocs(&self) -> Pid {
        self.layout.nprocs()
    }

    /// This process leaves `section`: peers are told (with `reason`), and whatever of it
    /// is still queued or arrives later is dropped.
    pub fn leave(&mut self, section: u32, reason: &str) {
        self.sections.close(section);
        let sections = &self.sections;
        for link in self.links.iter_mut().flatten() {
            link.inbox.close(section, sections);
            if link.paused() && sections.is_stale(link.raw_section) {
                link.skip_raw();
            }
            link.queue(SyncId { section, step: 0 }.tag(Kind::Leave), reason.as_bytes(), 0);
            link.pump_tx();
        }
        // Whatever could be read without waiting, so stale bytes do not pile up.
        self.pump_all_rx();
    }

    pub fn link(&self, i: usize) -> &Link {
        self.links[i].as_ref().expect("no link to self")
    }

    /// Queues bytes the caller owns, after the last frame (raw data).
    pub fn send_owned(&mut self, to: usize, bytes: Vec<u8>) {
        let link = self.links[to].as_mut().expect("no link to self");
        if link.dead.is_none() && !bytes.is_empty() {
            link.out.push_back(Out::Owned(bytes, 0));
        }
    }

    /// Queues `len` bytes of user memory at `ptr` (raw data), sent without a copy.
    ///
    /// # Safety
    /// `ptr..ptr + len` must stay valid and unchanged until the current sync returns
    /// (it calls [`Mesh::detach`] before that).
    pub unsafe fn send_mem(&mut self, to: usize, ptr: *const u8, len: usize) {
        let link = self.links[to].as_mut().expect("no link to self");
        if link.dead.is_none() && len > 0 {
            link.out.push_back(Out::Mem(ptr, len));
        }
    }

    /// Takes the frame tagged `tag` from `from`'s inbox, if it came.
    pub fn take(&mut self, from: usize, tag: Tag) -> Option<Frame> {
        self.links[from].as_mut()?.inbox.take(tag)
    }

    /// The raw bytes after the last frame from `from` that have not arrived yet.
    pub fn raw_pending(&self, from: usize) -> u64 {
        self.link(from).raw_left
    }

    /// Says where the raw bytes after the last frame from `from` go.
    ///
    /// # Safety
    /// Every `Seg::To` must name memory that stays valid, and is touched by nobody
    /// else, until the current sync returns (it calls [`Mesh::detach`] before that).
    pub unsafe fn install_plan(&mut self, from: usize, segs: Vec<Seg>) -> Result<()> {
        let link = self.links[from].as_mut().expect("no link to self");
        let total: u64 = segs.iter().map(|s| s.len() as u64).sum();
        if total != link.raw_left || !link.plan.is_empty() {
            let why = format!("protocol error: {} raw bytes announced, {total} expected", link.raw_left);
            link.kill(why.clone());
            return Err(Error::protocol(format!("{}: {why}", link.name)));
        }
        link.plan.extend(segs.into_iter().filter(|s| s.len() > 0));
        Ok(())
    }

    /// Fails unless `from` can still send us the frame tagged `tag` that we wait for:
    /// it must neither have left that section, nor lost its connection, nor be in
    /// another collective operation at this step.
    pub fn check_peer(&self, from: usize, tag: Tag) -> Result<()> {
        let link = self.link(from);
        let pid = self.layout.offsets[from];
        link.inbox.check(|| link.name.clone(), pid, tag)?;
        if let Some(why) = &link.dead {
            return Err(Error::peer_left(Some(pid), format!("lost {}: {why}", link.name)));
        }
        Ok(())
    }

    /// Ends the current sync's use of user memory: queued sends of user memory become
    /// private copies, planned receives into user memory become discards. Called by
    /// every sync before it returns, whether it succeeded or not.
    pub fn detach(&mut self) {
        for link in self.links.iter_mut().flatten() {
            for o in link.out.iter_mut() {
                if let Out::Mem(p, n) = *o {
                    // SAFETY: still inside the sync that queued it (see `send_mem`).
                    let copy = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
                    *o = Out::Owned(copy, 0);
                }
            }
            for s in link.plan.iter_mut() {
                if let Seg::To(_, n) = *s {
                    *s = Seg::Skip(n);
                }
            }
        }
    }

    fn pump_all_rx(&mut self) {
        let sections = &self.sections;
        let stale = |s: u32| sections.is_stale(s);
        for link in self.links.iter_mut().flatten() {
            link.pump_rx(&stale, &mut self.scratch, &mut self.pools);
        }
    }

    /// Drives all links until `done` says so (or fails). `done` is called first and
    /// after every batch of progress; it takes frames, installs plans and queues sends.
    /// Between unsuccessful looks it polls the sockets as the wait policy says
    /// ([`crate::wait`]: `poll(0)` while spinning, then blocking), and fails when the
    /// process is cancelled.
    pub fn wait(&mut self, mut done: impl FnMut(&mut Mesh) -> Result<bool>) -> Result<()> {
        let mut wait = self.patience.start();
        loop {
            for link in self.links.iter_mut().flatten() {
                link.pump_tx();
            }
            let sections = &self.sections;
            let stale = |s: u32| sections.is_stale(s);
            for link in self.links.iter_mut().flatten() {
                if link.has_buffered_work() {
                    link.pump_rx(&stale, &mut self.scratch, &mut self.pools);
                }
            }
            if done(self)? {
                self.patience.end(wait);
                return Ok(());
            }
            if self.links.iter().flatten().any(|l| l.has_buffered_work()) {
                continue;
            }
            let timeout_ms = match self.patience.pause(&mut wait, &self.cancel)? {
                Pause::Spin => 0,
                Pause::Yield => {
                    std::thread::yield_now();
                    0
                }
                // Data or a hang-up ends the poll before the slice does.
                Pause::Block(slice) => slice.as_millis().max(1) as i32,
            };
            self.poll_once(timeout_ms)?;
        }
    }

    fn poll_once(&mut self, timeout_ms: i32) -> Result<()> {
        self.pfds.clear();
        let mut which = Vec::with_capacity(self.layout.n);
        for (i, link) in self.links.iter().enumerate() {
            let Some(link) = link else { continue };
            if link.dead.is_some() {
                continue;
            }
            let mut events = libc::POLLRDHUP;
            if !link.paused() {
                events |= libc::POLLIN;
            }
            if !link.out.is_empty() {
                events |= libc::POLLOUT;
            }
            self.pfds.push(libc::pollfd { fd: link.stream.as_raw_fd(), events, revents: 0 });
            which.push(i);
        }
        if self.pfds.is_empty() {
            return Ok(());
        }
        // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structs we own.
        let r = unsafe { libc::poll(self.pfds.as_mut_ptr(), self.pfds.len() as libc::nfds_t, timeout_ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(Error::io(format!("poll failed: {e}")));
        }
        let sections = &self.sections;
        let stale = |s: u32| sections.is_stale(s);
        for (k, &i) in which.iter().enumerate() {
            let re = self.pfds[k].revents;
            if re == 0 {
                continue;
            }
            let link = self.links[i].as_mut().unwrap();
            if re & libc::POLLOUT != 0 {
                link.pump_tx();
            }
            if re & (libc::POLLIN | libc::POLLERR | libc::POLLHUP | libc::POLLRDHUP) != 0 {
                if link.paused() {
                    // Nothing more will come before the raw bytes we wait for: the
                    // peer is gone.
                    link.kill(CLOSED.into());
                } else {
                    link.pump_rx(&stale, &mut self.scratch, &mut self.pools);
                }
            }
        }
        Ok(())
    }

    /// Flushes what is queued (bounded by `deadline`) and closes every link.
    pub fn shutdown(&mut self, deadline: Instant) {
        while Instant::now() < deadline && self.links.iter().flatten().any(|l| l.dead.is_none() && !l.out.is_empty()) {
            for link in self.links.iter_mut().flatten() {
                link.pump_tx();
            }
            let left = deadline.saturating_duration_since(Instant::now()).as_millis().min(100) as i32;
            if self.poll_once(left).is_err() {
                break;
            }
        }
        for link in self.links.iter_mut().flatten() {
            let _ = link.stream.shutdown(Shutdown::Both);
        }
        self.links.clear();
    }
}

impl Channel for Mesh {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn pools(&mut self) -> &mut Pools {
        &mut self.pools
    }
    /// Queues a frame for process `to`.
    fn post(&mut self, to: usize, tag: Tag, body: &[u8], raw: u64) {
        self.links[to].as_mut().expect("no link to self").queue(tag, body, raw);
    }
    fn expect(&mut self, from: usize, tag: Tag) -> Result<Frame> {
        let mut got = None;
        self.wait(|m| match m.take(from, tag) {
            Some(f) => {
                got = Some(f);
                Ok(true)
            }
            None => m.check_peer(from, tag).map(|_| false),
        })?;
        Ok(got.expect("wait returned with the frame"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    /// A linked pair on loopback: our side as a `Link`, and the peer's raw stream.
    fn pair() -> (Link, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mine, _) = l.accept().unwrap();
        mine.set_nonblocking(true).unwrap();
        (Link::new(mine, "process 1 (test)".into()), peer)
    }

    /// Reads (sections `stale` dropped) while `more` says so, the link lives, and
    /// `secs` seconds have not passed.
    fn pump_while(link: &mut Link, stale: &dyn Fn(u32) -> bool, secs: u64, more: impl Fn(&Link) -> bool) {
        let mut scratch = vec![0u8; 1024];
        let t = Instant::now();
        while more(link) && link.dead.is_none() && t.elapsed() < Duration::from_secs(secs) {
            link.pump_rx(stale, &mut scratch, &mut Pools::default());
        }
    }

    #[test]
    fn a_header_announcing_a_huge_body_costs_no_memory_before_the_bytes_come() {
        let (mut link, mut peer) = pair();
        let mut v = Vec::new();
        Header { kind: Kind::Meta, round: 0, section: 1, step: 1, body: 1 << 30, raw: 0 }.encode(&mut v);
        v.extend_from_slice(&[7u8; 100]);
        peer.write_all(&v).unwrap();
        pump_while(&mut link, &|_| false, 1, |l| l.hi - l.lo < v.len());
        assert!(link.dead.is_none(), "{:?}", link.dead);
        assert_eq!(link.hi - link.lo, v.len());
        // Before the fix the buffer was resized (and zeroed) to the announced 1 GiB.
        assert!(link.buf.len() <= 2 * RX_CHUNK, "receive buffer of {} bytes for 132 received", link.buf.len());
    }

    #[test]
    fn raw_bytes_announced_for_a_stale_section_cost_one_segment() {
        let (mut link, mut peer) = pair();
        let mut v = Vec::new();
        Header { kind: Kind::Meta, round: 0, section: 1, step: 1, body: 0, raw: 1 << 50 }.encode(&mut v);
        peer.write_all(&v).unwrap();
        pump_while(&mut link, &|_| true, 1, |l| l.raw_left == 0);
        assert!(link.dead.is_none(), "{:?}", link.dead);
        assert_eq!(link.raw_left, 1 << 50);
        // Before: 2^20 segments of 1 GiB (and 2^34 for 2^64 - 1 announced bytes).
        assert!(link.plan.len() <= 1, "{} segments planned", link.plan.len());
    }

    #[test]
    fn a_large_body_is_received_whole_as_it_arrives() {
        let (mut link, mut peer) = pair();
        let body: Vec<u8> = (0..(3 * RX_CHUNK + 5)).map(|i| i as u8).collect();
        let mut v = Vec::new();
        Header { kind: Kind::Meta, round: 0, section: 1, step: 1, body: body.len() as u64, raw: 0 }.encode(&mut v);
        v.extend_from_slice(&body);
        let writer = std::thread::spawn(move || peer.write_all(&v).map(|_| peer));
        pump_while(&mut link, &|_| false, 5, |l| l.inbox.frames.is_empty());
        let _peer = writer.join().unwrap().unwrap();
        assert!(link.dead.is_none(), "{:?}", link.dead);
        assert_eq!(link.inbox.frames.pop_front().expect("the frame arrived").body, body);
    }
}
