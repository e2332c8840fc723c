//! Control messages over MPI: the [`Channel`] the shared sync phases run on.
//!
//! Every control message is one MPI message on the init's own communicator (a
//! duplicate of the user's) with tag [`CTRL_TAG`]: the 32-byte frame header of the TCP
//! protocol (kind, round, section, step, body length) and the body. Arrived messages
//! wait in a per-source inbox until a phase asks for them, as on the TCP mesh; those of
//! a section that ended here are dropped, `Leave` messages are remembered per section.
//! Sends are non-blocking (`MPI_Isend`, buffer kept until the request completes) and all
//! waiting is by polling (`MPI_Improbe` + `MPI_Mrecv`, `MPI_Test*`), so a process that
//! left is noticed instead of blocking in MPI. Progress spins briefly (reading the clock
//! every 16 polls only), then yields the core (the processes of a job may outnumber the
//! cores). No allocation per message once warm: send buffers return to a pool when their
//! request completes, and messages are received into one reused buffer (only a
//! non-empty body is copied out).

use super::ffi::{self, Comm};
use crate::error::{Error, Result};
use crate::phases::{Channel, MetaAlgo};
use crate::types::Pid;
use crate::wire::{Frame, Header, Kind, HEADER_LEN};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The tag of control messages on the init's communicator.
pub(crate) const CTRL_TAG: i32 = 1;

pub(crate) struct MpiChannel {
    pub comm: Comm,
    pub me: usize,
    pub n: usize,
    offsets: Vec<Pid>,
    perm: Vec<usize>,
    inv: Vec<usize>,
    meta: MetaAlgo,
    inbox: Vec<VecDeque<Frame>>,
    /// `left[q]`: sections process q has left, with its reason.
    left: Vec<Vec<(u32, String)>>,
    /// Sends in flight and the buffers they read.
    sending: Vec<(ffi::Request, Vec<u8>)>,
    /// Buffers of completed sends, reused for the next ones (no allocation per
    /// control message once the pool is warm).
    spare: Vec<Vec<u8>>,
    /// The receive buffer of control messages, reused.
    rbuf: Vec<u8>,
    next_section: u32,
    open: Vec<u32>,
    spin: Duration,
}

// SAFETY: the MPI handles are used only by the thread holding the channel (it sits
// behind a Mutex); MPI is initialised with at least MPI_THREAD_SERIALIZED.
unsafe impl Send for MpiChannel {}

impl MpiChannel {
    pub fn new(comm: Comm, me: usize, n: usize, token: u64, meta: MetaAlgo) -> MpiChannel {
        let (perm, inv) = crate::phases::permutation(n, token);
        let spin = std::env::var("LPF_MPI_SPIN_US").ok().and_then(|v| v.parse().ok()).unwrap_or(50u64);
        MpiChannel {
            comm,
            me,
            n,
            offsets: (0..=n as Pid).collect(),
            perm,
            inv,
            meta,
            inbox: (0..n).map(|_| VecDeque::new()).collect(),
            left: vec![Vec::new(); n],
            sending: Vec::new(),
            spare: Vec::new(),
            rbuf: Vec::new(),
            next_section: 1,
            open: Vec::new(),
            spin: Duration::from_micros(spin),
        }
    }

    /// Which global pids each rank holds (`offsets[i]..offsets[i + 1]`; `0..=n`, one per
    /// rank, unless the init learnt the ranks' thread counts for the hybrid engine).
    pub fn set_offsets(&mut self, offsets: Vec<Pid>) {
        assert_eq!(offsets.len(), self.n + 1, "one offset per rank and the total");
        self.offsets = offsets;
    }

    /// Starts a section (hook or rehook); sections start in the same order everywhere.
    pub fn open_section(&mut self) -> u32 {
        let s = self.next_section;
        self.next_section += 1;
        self.open.push(s);
        s
    }

    fn is_stale(&self, section: u32) -> bool {
        section < self.next_section && !self.open.contains(&section)
    }

    /// This process leaves `section`: the others are told why, and what of it arrives
    /// later is dropped.
    pub fn leave(&mut self, section: u32, reason: &str) {
        self.open.retain(|&s| s != section);
        let (next, open) = (self.next_section, &self.open);
        for inbox in &mut self.inbox {
            inbox.retain(|f| !(f.h.section < next && !open.contains(&f.h.section)));
        }
        let me = self.me;
        for q in (0..self.n).filter(|&q| q != me) {
            self.post(q, Kind::Leave, 0, section, 0, reason.as_bytes(), 0);
        }
        let _ = self.progress();
    }

    /// Receives every control message that has arrived and completes finished sends.
    pub fn progress(&mut self) -> Result<()> {
        loop {
            let Some((src, len, mut m)) = ffi::improbe(self.comm, CTRL_TAG)? else { break };
            // One reused buffer; only the body is copied out (an empty body
            // allocates nothing).
            self.rbuf.resize(len, 0);
            ffi::mrecv(&mut m, &mut self.rbuf[..len])?;
            if len < HEADER_LEN {
                return Err(Error::fatal(format!("malformed control message from process {src}")));
            }
            let h = Header::decode(&self.rbuf[..HEADER_LEN])
                .map_err(|e| Error::fatal(format!("control message from process {src}: {e}")))?;
            if self.is_stale(h.section) {
                continue;
            }
            let body = self.rbuf[HEADER_LEN..len].to_vec();
            if h.kind == Kind::Leave {
                self.left[src].push((h.section, String::from_utf8_lossy(&body).into_owned()));
            } else {
                self.inbox[src].push_back(Frame { h, body });
            }
        }
        if !self.sending.is_empty() {
            let mut i = 0;
            while i < self.sending.len() {
                if ffi::test(&mut self.sending[i].0)? {
                    let (_, mut buf) = self.sending.swap_remove(i);
                    if self.spare.len() < 64 && buf.capacity() <= 1 << 16 {
                        buf.clear();
                        self.spare.push(buf);
                    }
                } else {
                    i += 1;
                }
            }
        }
        Ok(())
    }

    pub fn take_frame(&mut self, from: usize, section: u32, kind: Kind, step: u64, round: u8) -> Option<Frame> {
        let inbox = &mut self.inbox[from];
        let i = inbox.iter().position(|f| f.h.section == section && f.h.kind == kind && f.h.step == step && f.h.round == round)?;
        inbox.remove(i)
    }

    /// Fails unless `from` can still send what we wait for in `(section, step)`.
    pub fn check_peer(&self, from: usize, section: u32, step: u64, kind: Kind) -> Result<()> {
        if let Some(f) = self.inbox[from].iter().find(|f| f.h.section == section && f.h.step == step && f.h.kind.operation() != kind.operation()) {
            return Err(Error::fatal(format!(
                "process {from} is out of step: it is in {} while this process is in {} (register_global, sync and \
                 rehook are collective: every process calls them in the same order)",
                f.h.kind.operation(),
                kind.operation()
            )));
        }
        if let Some((_, why)) = self.left[from].iter().find(|(s, _)| *s == section) {
            let why = if why.is_empty() { String::new() } else { format!(": {why}") };
            return Err(Error::fatal(format!(
                "process {from} has left the section (returned from its SPMD function, failed, or called sync a \
                 different number of times){why}"
            )));
        }
        Ok(())
    }

    /// Drives progress until `done` says so (or fails): spins for a moment, then
    /// yields the core between polls, then sleeps briefly.
    pub fn wait(&mut self, mut done: impl FnMut(&mut MpiChannel) -> Result<bool>) -> Result<()> {
        let started = Instant::now();
        let mut polls = 0u32;
        let mut spinning = true;
        loop {
            self.progress()?;
            if done(self)? {
                return Ok(());
            }
            if spinning {
                // Reading the clock costs about as much as a poll: while spinning, read
                // it every 16 polls only. Past the spin, every poll yields (a process
                // that waits must not keep the core an awaited one needs).
                polls = polls.wrapping_add(1);
                if !polls.is_multiple_of(16) || started.elapsed() < self.spin {
                    std::hint::spin_loop();
                    continue;
                }
                spinning = false;
            }
            if started.elapsed() < Duration::from_millis(20) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Waits (bounded) for the sends in flight, e.g. a final `Leave`, before the
    /// communicator goes away; what does not complete in time is abandoned.
    pub fn flush(&mut self, deadline: Instant) {
        while !self.sending.is_empty() && Instant::now() < deadline {
            if self.progress().is_err() {
                break;
            }
            std::thread::yield_now();
        }
        for (mut r, buf) in self.sending.drain(..) {
            // The receiver is gone: MPI may still hold the request; the buffer must
            // outlive it, so it is leaked with it.
            ffi::request_free(&mut r);
            std::mem::forget(buf);
        }
    }
}

impl Channel for MpiChannel {
    fn me(&self) -> usize {
        self.me
    }
    fn n(&self) -> usize {
        self.n
    }
    fn offsets(&self) -> &[Pid] {
        &self.offsets
    }
    fn perm(&self) -> &[usize] {
        &self.perm
    }
    fn inv(&self) -> &[usize] {
        &self.inv
    }
    fn meta_algo(&self) -> MetaAlgo {
        self.meta
    }

    fn post(&mut self, to: usize, kind: Kind, round: u8, section: u32, step: u64, body: &[u8], raw: u64) {
        let mut v = self.spare.pop().unwrap_or_default();
        v.reserve(HEADER_LEN + body.len());
        Header { kind, round, section, step, body: body.len() as u64, raw }.encode(&mut v);
        v.extend_from_slice(body);
        // SAFETY: `v` is kept in `sending` until the request completes (or leaked).
        match unsafe { ffi::isend(v.as_ptr(), v.len(), to, CTRL_TAG, self.comm) } {
            Ok(r) => self.sending.push((r, v)),
            // MPI's own error handler normally aborts the job first; if it returns, the
            // peer will not hear from us and fails by the same rules as for a left one.
            Err(e) => eprintln!("lpf: {e}"),
        }
    }

    fn expect(&mut self, from: usize, section: u32, kind: Kind, step: u64, round: u8) -> Result<Frame> {
        let mut got = None;
        self.wait(|ch| match ch.take_frame(from, section, kind, step, round) {
            Some(f) => {
                got = Some(f);
                Ok(true)
            }
            None => ch.check_peer(from, section, step, kind).map(|_| false),
        })?;
        Ok(got.expect("wait returned with the message"))
    }
}
