//! Control messages over MPI: the [`Channel`] the shared sync phases run on.
//!
//! Every control message is one MPI message on the init's own communicator (a
//! duplicate of the user's) with tag [`MpiTag::CONTROL`]: the 32-byte frame header of the TCP
//! protocol (kind, round, section, step, body length) and the body. Arrived messages
//! wait in a per-source inbox until a phase asks for them, as on the TCP mesh; those of
//! a section that ended here are dropped, `Leave` messages are remembered per section.
//!
//! Receiving: one receive per peer is always posted in advance, into a buffer of
//! [`EAGER`] bytes, so an arriving message lands in place and a poll is one
//! `MPI_Testsome` (no probe, no search of MPI's unexpected queue), or one `MPI_Test`
//! of the receive of the one peer awaited (see [`Polling`]). A message longer
//! than that travels as its header alone (whose body length says more is coming),
//! followed by the body under [`MpiTag::BODY`]; the receiver then posts that body's
//! receive and re-posts the header receive only once the body is in, so messages of
//! one source are taken in the order they were sent. Sends are non-blocking
//! (`MPI_Isend`, buffer kept until the request completes; completed buffers are
//! reused), and all waiting is by polling, so a process that left is noticed instead
//! of blocking in MPI. A wait first looks at what has arrived, then polls, pausing
//! between polls as the library's wait policy says ([`crate::wait`]): it spins briefly
//! (reading the clock every 16 polls; not at all when the node runs more LPF processes
//! than it has cores), then yields the core (unless MPI's idle poll yields already),
//! then sleeps between polls. A cancelled rank's waits fail, except those that must
//! see data into or out of user memory complete ([`MpiChannel::wait_for_data`],
//! [`MpiChannel::expect_during_data`]).

use super::ffi::{self, Comm, MpiTag};
use crate::error::{Error, Result};
use crate::phases::driver::Pools;
use crate::phases::{final_barrier, Channel, Found, Inbox, Layout, MetaAlgo, Sections};
use crate::types::Pid;
use crate::wait::{Cancel, Host, LookCost, Patience, Pause};
use crate::wire::{Frame, Header, Kind, SyncId, Tag, HEADER_LEN};
use std::os::raw::c_int;
use std::time::{Duration, Instant};

/// Control messages up to this many bytes (header and body) arrive whole in the
/// receive posted in advance for their source.
const EAGER: usize = 16 << 10;
/// Sends in flight before their buffers are taken back into the pool (one
/// `MPI_Testall` for the lot).
const RECLAIM_BATCH: usize = 8;

/// How long a rank that waits past its yield phase sleeps between polls.
const SLEEP: Duration = Duration::from_micros(200);

/// What a wait polls, and when it asks again whether it is done. A wait whose `done`
/// only control messages arriving can make true asks only after a poll that brought
/// some (a shorter idle poll notices an arrival sooner).
#[derive(Clone, Copy)]
enum Polling {
    /// Every receive; ask after every poll.
    Always,
    /// Every receive; ask after a poll that brought a message.
    OnArrival,
    /// The receive of this peer only; ask after a message of it came.
    Peer(usize),
}

/// What the receive posted for one peer is waiting for.
enum Posted {
    /// A whole message of up to [`EAGER`] bytes, or the header of a longer one.
    Message,
    /// The body of a long message whose header came: MPI writes into the vector, one
    /// chunk of at most `body_chunk` bytes at a time; `at` bytes are in so far.
    Body { h: Header, body: Vec<u8>, at: usize },
}

pub(crate) struct MpiChannel {
    pub comm: Comm,
    /// This rank's index and where the LPF processes live (one per rank, unless the
    /// init learnt the ranks' thread counts for the hybrid engine).
    pub layout: Layout,
    inbox: Vec<Inbox>,
    /// What `expect` waits for (from whom, with which tag), and the frame handed to it
    /// directly when it arrives with nothing before it in its inbox (no trip through
    /// the inbox).
    awaited: Option<(usize, Tag)>,
    handed: Option<Frame>,
    /// The receive posted for each peer (MPI_REQUEST_NULL for this process), what it
    /// waits for, and the buffer of its `Message` receives.
    recv: Vec<ffi::Request>,
    /// The persistent receive of whole messages for each peer (null for this process),
    /// restarted after each message.
    persistent: Vec<ffi::Request>,
    posted: Vec<Posted>,
    rbuf: Vec<Box<[u8]>>,
    /// Scratch of `MPI_Testsome`.
    completed: Vec<(usize, usize)>,
    indices: Vec<c_int>,
    statuses: Vec<::mpi::ffi::MPI_Status>,
    /// Sends in flight, and the buffers they read (`sending_bufs[i]` is read by
    /// `sending[i]`; apart so that one `MPI_Testall` tests them all).
    sending: Vec<ffi::Request>,
    sending_bufs: Vec<Vec<u8>>,
    /// Whether a buffer larger than the pool keeps (the body of a long message) is
    /// among them: then every send tries to take it back, so that it is freed at
    /// the next sync, not some syncs later in the middle of small ones.
    large_in_flight: bool,
    /// Buffers of completed sends, reused for the next ones (no allocation per
    /// control message once the pool is warm).
    spare: Vec<Vec<u8>>,
    /// Hooks and rehooks, in the same order everywhere.
    pub sections: Sections,
    /// The LPF processes of this node (ranks times threads) and the spin setting.
    pub host: Host,
    /// How this rank waits (its spin adapts across waits).
    patience: Patience,
    /// Stops this rank's waits (all but those of data in flight) once set.
    pub cancel: Cancel,
    /// Whether an unsuccessful poll of MPI already yields the core (Open MPI's
    /// `mpi_yield_when_idle`, on by default on an oversubscribed node): then a waiting
    /// rank that would yield does not yield a second time.
    mpi_yields: bool,
    /// Whether communicating syncs end with the barrier that agrees on the first
    /// error (test switch `LPF_MPI_AGREE_ERRORS=1`, pid 0's for every rank); see docs/mpi.md.
    pub agree_errors: bool,
    /// Long bodies travel in chunks of this many bytes: 1 GiB (MPI counts are C ints);
    /// test switch `LPF_MPI_BODY_CHUNK` on pid 0 sets a smaller one for every rank (the
    /// init broadcasts it), for the tests of this path.
    pub body_chunk: usize,
    /// Buffers of a sync kept for the next one (the driver's; small bodies received
    /// are taken from it).
    pools: Pools,
}

// SAFETY: the MPI handles are used only by the thread holding the channel (it sits
// behind a Mutex), one thread at a time; where several threads of a rank may hold it
// (hybrid, k > 1), MPI provides MPI_THREAD_SERIALIZED (checked at init). The receive
// buffers are owned here and released only after their requests completed or were
// cancelled.
unsafe impl Send for MpiChannel {}

impl MpiChannel {
    /// A channel over `comm` (collective: it asks how many ranks share each node) for
    /// rank `me`, rank i holding global pids `offsets[i]..offsets[i + 1]` (`0..=n`, one
    /// per rank, unless the init learnt the ranks' thread counts for the hybrid engine).
    /// `spin_setting` (`LPF_SPIN_US`): how long a waiting rank spins, None to let the
    /// wait policy choose.
    pub fn new(comm: Comm, me: usize, offsets: Vec<Pid>, token: u64, meta: MetaAlgo, spin_setting: Option<Duration>) -> Result<MpiChannel> {
        let n = offsets.len() - 1;
        // The node's cores, not this process's affinity mask: mpirun binds each rank
        // to one core.
        // SAFETY: sysconf has no preconditions.
        let cores = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        // Threads count as much as ranks for crowding the cores (the ranks of a node are
        // taken to bring as many threads as the job's average rank).
        let per_rank = (offsets[n] as usize).div_ceil(n.max(1));
        let host = Host { spin_setting, local_procs: ffi::node_size(comm)? * per_rank, cores };
        let mpi_yields = ffi::progress_yields_when_idle();
        let null = ffi::request_null();
        let mut ch = MpiChannel {
            comm,
            layout: Layout::new(me, offsets, token, meta),
            inbox: (0..n).map(|_| Inbox::default()).collect(),
            awaited: None,
            handed: None,
            recv: vec![null; n],
            persistent: vec![null; n],
            posted: (0..n).map(|_| Posted::Message).collect(),
            rbuf: (0..n).map(|q| vec![0u8; if q == me { 0 } else { EAGER }].into_boxed_slice()).collect(),
            completed: Vec::new(),
            indices: Vec::new(),
            statuses: Vec::new(),
            sending: Vec::new(),
            sending_bufs: Vec::new(),
            large_in_flight: false,
            spare: Vec::new(),
            sections: Sections::default(),
            host,
            patience: host.patience(LookCost::MPI),
            cancel: Cancel::NEVER,
            mpi_yields,
            agree_errors: false,
            body_chunk: ffi::CHUNK,
            pools: Pools::default(),
        };
        for q in (0..n).filter(|&q| q != me) {
            // SAFETY: `rbuf[q]` (EAGER bytes) is owned by the channel, outlives the
            // request (freed in `close`), and is touched only between completion and
            // restart.
            ch.persistent[q] = unsafe { ffi::recv_init(ch.rbuf[q].as_mut_ptr(), EAGER, q, MpiTag::CONTROL, comm)? };
            ch.post_message_receive(q)?;
        }
        Ok(ch)
    }

    /// Sends `v` to `to`, keeping it until the send completes.
    fn isend(&mut self, v: Vec<u8>, to: usize, tag: MpiTag) {
        // SAFETY: `v` is kept in `sending` until the request completes (or leaked).
        match unsafe { ffi::isend(v.as_ptr(), v.len(), to, tag, self.comm) } {
            Ok(r) => {
                self.large_in_flight |= v.capacity() > EAGER;
                self.sending.push(r);
                self.sending_bufs.push(v);
            }
            // MPI's own error handler normally aborts the job first; if it returns, the
            // peer will not hear from us and fails by the same rules as for a left one.
            Err(e) => eprintln!("lpf: {e}"),
        }
    }

    fn post_message_receive(&mut self, q: usize) -> Result<()> {
        ffi::start(&mut self.persistent[q])?;
        self.recv[q] = self.persistent[q];
        self.posted[q] = Posted::Message;
        Ok(())
    }

    /// Takes back the buffers of completed sends (into the pool).
    fn reclaim(&mut self) -> Result<()> {
        // Small sends have usually all completed: one call for the lot (MPI_Testall
        // changes no request unless all completed).
        if ffi::test_all(&mut self.sending)? {
            self.sending.clear();
            while let Some(buf) = self.sending_bufs.pop() {
                self.keep_spare(buf);
            }
            self.large_in_flight = false;
            return Ok(());
        }
        let mut i = 0;
        while i < self.sending.len() {
            if ffi::test(&mut self.sending[i])? {
                self.sending.swap_remove(i);
                let buf = self.sending_bufs.swap_remove(i);
                self.keep_spare(buf);
            } else {
                i += 1;
            }
        }
        self.large_in_flight = self.sending_bufs.iter().any(|b| b.capacity() > EAGER);
        Ok(())
    }

    /// Keeps the buffer of a completed send for the next ones (small ones, a bounded
    /// number).
    fn keep_spare(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < 64 && buf.capacity() <= EAGER {
            buf.clear();
            self.spare.push(buf);
        }
    }

    /// How messages name rank q: by its LPF process(es).
    fn name_of_rank(&self, q: usize) -> String {
        let (a, b) = (self.layout.offsets[q], self.layout.offsets[q + 1]);
        if b == a + 1 {
            format!("process {a}")
        } else {
            format!("the processes {a}..{} (MPI rank {q})", b - 1)
        }
    }


    /// Tells the others that this process leaves `section`, and why (empty: it
    /// finished).
    fn announce_leave(&mut self, section: u32, reason: &str) {
        let me = self.layout.me;
        for q in (0..self.layout.n).filter(|&q| q != me) {
            self.post(q, SyncId { section, step: 0 }.tag(Kind::Leave), reason.as_bytes(), 0);
        }
    }

    /// Ends `section` here: what of it arrives later is dropped.
    fn close_section(&mut self, section: u32) {
        self.sections.close(section);
        let sections = &self.sections;
        for inbox in &mut self.inbox {
            inbox.close(section, sections);
        }
    }

    /// This process leaves `section`: the others are told why, and what of it arrives
    /// later is dropped.
    pub fn leave(&mut self, section: u32, reason: &str) {
        self.announce_leave(section, reason);
        self.close_section(section);
        let _ = self.progress();
    }

    /// This process finished `section` without failing: tells the others and waits
    /// until every one of them has left it too. Fails with the first reason a peer
    /// gave for leaving (a peer that failed after a sync that returned `Ok` here,
    /// e.g. a destination that rejected our puts; see docs/mpi.md, "Errors").
    pub fn finish(&mut self, section: u32) -> Result<()> {
        self.announce_leave(section, "");
        let me = self.layout.me;
        let r = self.wait_until(Polling::OnArrival, true, |ch| Ok((0..ch.layout.n).all(|q| q == me || ch.inbox[q].left(section).is_some())));
        let failed = (0..self.layout.n).find_map(|q| self.inbox[q].left(section).filter(|why| !why.is_empty()).map(|why| (q, why.to_string())));
        self.close_section(section);
        r?;
        match failed {
            None => Ok(()),
            Some((q, why)) => {
                Err(Error::peer_left(Some(self.layout.offsets[q]), format!("{} failed in this section: {why}", self.name_of_rank(q))))
            }
        }
    }

    /// Receives every control message that has arrived; says whether any did.
    pub fn progress(&mut self) -> Result<bool> {
        self.completed.clear();
        ffi::test_some(&mut self.recv, &mut self.completed, &mut self.indices, &mut self.statuses)?;
        for k in 0..self.completed.len() {
            let (q, len) = self.completed[k];
            self.arrived(q, len)?;
        }
        // Sends complete in the background of this progress; their buffers are taken
        // back when the pool runs dry (`post_parts`) or many are in flight.
        if self.sending.len() > 64 {
            self.reclaim()?;
        }
        Ok(!self.completed.is_empty())
    }

    /// Polls the receive posted for `q` alone (the others wait in place for their own
    /// turn); says whether a message of `q` arrived. Cheaper than [`MpiChannel::progress`]
    /// and sees an arrival one poll sooner (see `ffi::test_received`).
    fn poll_peer(&mut self, q: usize) -> Result<bool> {
        if self.recv[q] == ffi::request_null() {
            return self.progress();
        }
        let Some(len) = ffi::test_received(&mut self.recv[q])? else { return Ok(false) };
        self.arrived(q, len)?;
        if self.sending.len() > 64 {
            self.reclaim()?;
        }
        Ok(true)
    }

    /// The receive posted for `q` completed with `len` bytes.
    fn arrived(&mut self, q: usize, len: usize) -> Result<()> {
        // Nothing is active for q until a receive is posted again below (a completed
        // persistent request stays a valid, inactive handle).
        self.recv[q] = ffi::request_null();
        let malformed = || Error::protocol(format!("malformed control message from process {q}"));
        match std::mem::replace(&mut self.posted[q], Posted::Message) {
            Posted::Message => {
                if len < HEADER_LEN {
                    return Err(malformed());
                }
                let h = Header::decode(&self.rbuf[q][..HEADER_LEN])
                    .map_err(|e| Error::protocol(format!("control message from process {q}: {e}")))?;
                let body_len = usize::try_from(h.body).map_err(|_| malformed())?;
                if len == HEADER_LEN + body_len {
                    // Into a recycled buffer (an empty body allocates nothing).
                    let mut body = self.pools.body(body_len);
                    body.extend_from_slice(&self.rbuf[q][HEADER_LEN..len]);
                    self.post_message_receive(q)?;
                    self.deliver(q, h, body);
                } else if len == HEADER_LEN && body_len > EAGER - HEADER_LEN {
                    let body = vec![0u8; body_len];
                    self.receive_body(q, h, body, 0)?;
                } else {
                    return Err(malformed());
                }
            }
            Posted::Body { h, body, at } => {
                let expected = (body.len() - at).min(self.body_chunk);
                if len != expected {
                    return Err(malformed());
                }
                if at + len < body.len() {
                    self.receive_body(q, h, body, at + len)?;
                } else {
                    self.post_message_receive(q)?;
                    self.deliver(q, h, body);
                }
            }
        }
        Ok(())
    }

    /// The end of a sync that exchanged requests. By default an error found here fails
    /// this process only (see docs/mpi.md, "Errors"); with `agree_errors`, the final
    /// barrier carries the first error found anywhere and the sync fails everywhere.
    pub fn end_sync(&mut self, id: SyncId, found: Found) -> Result<()> {
        if self.agree_errors {
            return final_barrier(self, id, found);
        }
        found.map_or(Ok(()), |(_, e)| Err(e))
    }

    /// Posts the receive of the next chunk of a long body from `q` (bytes `at..`).
    fn receive_body(&mut self, q: usize, h: Header, mut body: Vec<u8>, at: usize) -> Result<()> {
        let n = (body.len() - at).min(self.body_chunk);
        // SAFETY: the vector's heap buffer moves into `posted[q]` with it (moving a Vec
        // does not move its buffer) and is not touched until the request completes or
        // is cancelled.
        self.recv[q] = unsafe { ffi::irecv(body.as_mut_ptr().add(at), n, q, MpiTag::BODY, self.comm)? };
        self.posted[q] = Posted::Body { h, body, at };
        Ok(())
    }

    fn deliver(&mut self, q: usize, h: Header, body: Vec<u8>) {
        if self.sections.is_stale(h.section) {
            return;
        }
        if self.handed.is_none() && self.inbox[q].frames.is_empty() && self.awaited.is_some_and(|(from, tag)| from == q && tag.names(&h)) {
            // The awaited message, and the next one of q in order: straight to `expect`.
            self.handed = Some(Frame { h, body });
        } else {
            self.inbox[q].deliver(Frame { h, body });
        }
    }

    pub fn take_frame(&mut self, from: usize, tag: Tag) -> Option<Frame> {
        self.inbox[from].take(tag)
    }

    /// Fails unless `from` can still send the frame tagged `tag` that we wait for.
    pub fn check_peer(&self, from: usize, tag: Tag) -> Result<()> {
        self.inbox[from].check(|| self.name_of_rank(from), self.layout.offsets[from], tag)
    }

    /// Drives progress until `done` says so (or fails): spins for a moment, then
    /// yields the core between polls, then sleeps briefly. For data of the current
    /// sync that MPI moves into or out of user memory (receives posted into it, sends
    /// from it): not cut short by a cancellation, since the sync must not return while
    /// MPI may still touch that memory. (The peers' data comes: they are inside the same sync; a peer that
    /// leaves instead fails the wait.)
    pub fn wait_for_data(&mut self, done: impl FnMut(&mut MpiChannel) -> Result<bool>) -> Result<()> {
        self.wait_until(Polling::Always, false, done)
    }

    fn wait_until(&mut self, polling: Polling, cancellable: bool, mut done: impl FnMut(&mut MpiChannel) -> Result<bool>) -> Result<()> {
        // What arrived during earlier polls may be all that is awaited (the second
        // and later peers' messages of a sync usually are): look before polling, since
        // a poll that finds nothing new yields the core when MPI yields on idle.
        if done(self)? {
            return Ok(());
        }
        let mut wait = self.patience.start();
        loop {
            let look = match polling {
                Polling::Always => self.progress().map(|_| true)?,
                Polling::OnArrival => self.progress()?,
                Polling::Peer(q) => self.poll_peer(q)?,
            };
            if look && done(self)? {
                self.patience.end(wait);
                return Ok(());
            }
            // No pause instruction while spinning: it costs more than a poll on current
            // cores, and every cycle between an arrival and its detection is latency.
            match self.patience.pause(&mut wait, if cancellable { &self.cancel } else { &Cancel::NEVER })? {
                Pause::Spin => {}
                // Each yield is a context switch; two per poll (MPI's and ours) doubled
                // the time of a sync with 4 ranks on 2 cores (13 -> 10.6 us measured).
                Pause::Yield if self.mpi_yields => {}
                Pause::Yield => std::thread::yield_now(),
                Pause::Block(slice) => std::thread::sleep(SLEEP.min(slice)),
            }
        }
    }

    /// Waits (bounded) for the sends in flight, e.g. a final `Leave`, then cancels the
    /// receives posted in advance, before the communicator goes away; sends that do not
    /// complete in time are abandoned.
    pub fn close(&mut self, deadline: Instant) {
        while !self.sending.is_empty() && Instant::now() < deadline {
            if self.progress().and_then(|_| self.reclaim()).is_err() {
                break;
            }
            std::thread::yield_now();
        }
        for (mut r, buf) in self.sending.drain(..).zip(self.sending_bufs.drain(..)) {
            // The receiver is gone: MPI may still hold the request; the buffer must
            // outlive it, so it is leaked with it.
            ffi::request_free(&mut r);
            std::mem::forget(buf);
        }
        for q in 0..self.layout.n {
            // The active receive (the persistent one or a body's), if any; then the
            // persistent request itself, now inactive.
            ffi::cancel(&mut self.recv[q]);
            ffi::request_free(&mut self.persistent[q]);
        }
    }
}

impl Channel for MpiChannel {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn pools(&mut self) -> &mut Pools {
        &mut self.pools
    }

    fn post(&mut self, to: usize, tag: Tag, body: &[u8], raw: u64) {
        self.post_parts(to, tag, &[body], raw);
    }

    fn post_parts(&mut self, to: usize, tag: Tag, parts: &[&[u8]], raw: u64) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let header = tag.header(len, raw);
        let long = HEADER_LEN + len > EAGER;
        let mut v = self.spare.pop().unwrap_or_default();
        v.reserve(HEADER_LEN + if long { 0 } else { len });
        header.encode(&mut v);
        if !long {
            // Empty parts skipped: each copy is a call (most parts of a small sync's
            // message are empty).
            parts.iter().filter(|p| !p.is_empty()).for_each(|p| v.extend_from_slice(p));
        }
        self.isend(v, to, MpiTag::CONTROL);
        if long {
            // In chunks (MPI counts are C ints), received in order: MPI does not let
            // messages of one source and tag overtake each other.
            let body = parts.concat();
            if body.len() <= self.body_chunk {
                self.isend(body, to, MpiTag::BODY);
            } else {
                for chunk in body.chunks(self.body_chunk) {
                    self.isend(chunk.to_vec(), to, MpiTag::BODY);
                }
            }
        }
        if self.large_in_flight || (self.spare.is_empty() && self.sending.len() >= RECLAIM_BATCH) {
            // Refill the pool after sending, not before: the message leaves sooner.
            // Only once a few sends are out: one test covers them all (until then, a
            // send with the pool empty takes a new buffer). A large buffer in flight
            // is freed as soon as its send completes.
            // (A small send has usually completed by now.) An MPI error here is
            // reported where it matters: at the next wait.
            let _ = self.reclaim();
        }
    }

    fn expect(&mut self, from: usize, tag: Tag) -> Result<Frame> {
        self.expect_from(from, tag, true)
    }
}

impl MpiChannel {
    /// [`Channel::expect`] in the data phase of a sync, once this rank has told its
    /// peers where they may write into its memory and read from it (one-sided
    /// operations): not cut short by a cancellation (see [`MpiChannel::wait_for_data`]).
    pub fn expect_during_data(&mut self, from: usize, tag: Tag) -> Result<Frame> {
        self.expect_from(from, tag, false)
    }

    fn expect_from(&mut self, from: usize, tag: Tag, cancellable: bool) -> Result<Frame> {
        let mut got = None;
        self.awaited = Some((from, tag));
        let r = self.wait_until(Polling::Peer(from), cancellable, |ch| {
            got = ch.handed.take();
            // Nothing of `from` here yet (the usual first look: the awaited message is
            // handed over as it arrives): not done, no failure to look for.
            let inbox = &ch.inbox[from];
            if got.is_none() && !(inbox.frames.is_empty() && inbox.left(tag.id.section).is_none()) {
                got = ch.take_frame(from, tag);
                if got.is_none() {
                    ch.check_peer(from, tag)?;
                }
            }
            Ok(got.is_some())
        });
        self.awaited = None;
        if let Some(f) = self.handed.take() {
            // It came, but the wait ended otherwise (an error): back in front of what
            // came after it.
            self.inbox[from].frames.push_front(f);
        }
        r?;
        Ok(got.expect("wait returned with the message"))
    }
}
