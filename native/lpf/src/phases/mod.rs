//! The transport-independent parts of a sync, shared by the network engines: the
//! sync driver ([`driver`]: the phases in order, over a transport), control messages
//! ([`Channel`]), the meta-data exchange, direct or randomised Bruck
//! ([`meta_exchange`]), the request headers ([`requests`]), checks and write-conflict
//! resolution ([`conflict`]), the dissemination [`barrier`] carrying the first error,
//! and the [`allgather`] of a sync that registers global slots.

pub(crate) mod conflict;
pub(crate) mod driver;
pub(crate) mod requests;

use crate::error::{Error, ErrorKind, Reason, Result};
use crate::types::Pid;
use std::collections::VecDeque;
use std::sync::Arc;
use crate::wire::{Frame, Get, Kind, Put, SyncId, Tag};
use requests::{Incoming, Outgoing};

/// How the meta-data of a sync is exchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaAlgo {
    /// Every process sends one message to every other (p - 1 messages, one round).
    Direct,
    /// Randomised Bruck: ceil(log2 p) rounds of one message, over a random
    /// permutation of the processes agreed at init.
    Bruck,
}

impl MetaAlgo {
    /// The default: direct for few processes (one round trip beats log p of them),
    /// Bruck from 16 processes on.
    pub fn for_nodes(n: usize) -> MetaAlgo {
        if n < 16 {
            MetaAlgo::Direct
        } else {
            MetaAlgo::Bruck
        }
    }
    /// A choice (None: by the number of nodes) as one byte, for pid 0 to tell the
    /// others; [`MetaAlgo::from_byte`] reads it.
    pub(crate) fn to_byte(choice: Option<MetaAlgo>) -> u8 {
        choice.map_or(0, |m| m as u8 + 1)
    }
    pub(crate) fn from_byte(b: u8) -> Option<MetaAlgo> {
        [MetaAlgo::Direct, MetaAlgo::Bruck].into_iter().find(|&m| m as u8 + 1 == b)
    }
    pub fn parse(s: &str) -> Option<MetaAlgo> {
        match s.trim().to_ascii_lowercase().as_str() {
            "direct" => Some(MetaAlgo::Direct),
            "bruck" => Some(MetaAlgo::Bruck),
            _ => None,
        }
    }
}

/// A random permutation of `0..n` derived from `token` (Fisher-Yates over
/// splitmix64), and its inverse: every node derives the same from the same token.
pub(crate) fn permutation(n: usize, token: u64) -> (Vec<usize>, Vec<usize>) {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut s = token;
    let mut next = || splitmix64(&mut s);
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    let mut inv = vec![0; n];
    for (i, &v) in perm.iter().enumerate() {
        inv[v] = i;
    }
    (perm, inv)
}

/// The next value of the splitmix64 generator whose state is `s`.
pub(crate) fn splitmix64(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where the LPF processes of a job live, as one node of it sees it: its index `me`
/// among the `n` nodes (OS processes), the global pids of each node (node i holds
/// `offsets[i]..offsets[i + 1]`), and the random order of the nodes that the Bruck
/// exchange and the barrier use (the same on every node: derived from a token agreed
/// at init). Shared by every transport's channel.
pub(crate) struct Layout {
    pub me: usize,
    pub n: usize,
    pub offsets: Arc<[Pid]>,
    pub perm: Vec<usize>,
    pub inv: Vec<usize>,
    pub meta: MetaAlgo,
}

impl Layout {
    pub fn new(me: usize, offsets: Vec<Pid>, token: u64, meta: MetaAlgo) -> Layout {
        let n = offsets.len() - 1;
        let (perm, inv) = permutation(n, token);
        Layout { me, n, offsets: offsets.into(), perm, inv, meta }
    }
    /// The offsets of nodes that run `threads` LPF processes each (node i: global pids
    /// `offsets[i]..offsets[i + 1]`); fails, naming the `init`, past the LPF processes
    /// a job can have.
    pub fn offsets_of(threads: impl IntoIterator<Item = Pid>, init: &str) -> Result<Vec<Pid>> {
        let mut offsets = vec![0 as Pid];
        for k in threads {
            let total = offsets[offsets.len() - 1].checked_add(k).filter(|&t| t <= crate::types::MAX_PROCS);
            offsets.push(total.ok_or_else(|| Error::config(format!("{init}: too many LPF processes in total")))?);
        }
        Ok(offsets)
    }
    /// The number of LPF processes.
    pub fn nprocs(&self) -> Pid {
        self.offsets[self.n]
    }
    /// The nodes this one sends to and hears from at distance `dist` in the random
    /// order (a round of Bruck and of the dissemination barrier).
    pub fn partners(&self, dist: usize) -> (usize, usize) {
        let (v, n) = (self.perm[self.me], self.n);
        (self.inv[(v + dist) % n], self.inv[(v + n - dist % n) % n])
    }
    /// The node holding global pid `q`.
    #[inline]
    pub fn node_of(&self, q: Pid) -> usize {
        if self.offsets[self.n] as usize == self.n {
            // One process per node (no hybrid threads): pid and node are the same.
            return q as usize;
        }
        self.offsets.partition_point(|&o| o <= q) - 1
    }
}

/// The sections (hooks and rehooks) a node has seen: numbered from 1 in the order they
/// start, the same on every node; the messages of one that ended here are of no use.
#[derive(Clone, Default)]
pub(crate) struct Sections {
    /// The last section started.
    last: u32,
    open: Vec<u32>,
}

impl Sections {
    /// Starts a section.
    pub fn open(&mut self) -> u32 {
        self.last += 1;
        self.open.push(self.last);
        self.last
    }
    /// Ends `section` here.
    pub fn close(&mut self, section: u32) {
        self.open.retain(|&s| s != section);
    }
    /// Whether messages of `section` are of no use any more: it ended here.
    pub fn is_stale(&self, section: u32) -> bool {
        section <= self.last && !self.open.contains(&section)
    }
}

/// What a channel keeps of one peer node: its messages that arrived and were not asked
/// for yet, and the sections it left, with its reason (empty: it returned from its
/// SPMD function).
#[derive(Default)]
pub(crate) struct Inbox {
    pub frames: VecDeque<Frame>,
    left: Vec<(u32, String)>,
}

impl Inbox {
    /// Keeps a message that arrived (a `Leave` as the section the peer left).
    pub fn deliver(&mut self, f: Frame) {
        if f.h.kind == Kind::Leave {
            self.left.push((f.h.section, String::from_utf8_lossy(&f.body).into_owned()));
        } else {
            self.frames.push_back(f);
        }
    }
    /// Takes the message tagged `tag`, if it came.
    pub fn take(&mut self, tag: Tag) -> Option<Frame> {
        let i = self.frames.iter().position(|f| tag.names(&f.h))?;
        self.frames.remove(i)
    }
    /// The reason the peer gave for leaving `section`, if it left it.
    pub fn left(&self, section: u32) -> Option<&str> {
        self.left.iter().find(|(s, _)| *s == section).map(|(_, why)| why.as_str())
    }
    /// Fails if the peer (`name()`, LPF pid `pid`) can no longer send the message
    /// tagged `tag` that is awaited: it is in another operation at this step, or it
    /// left the section.
    pub fn check(&self, name: impl Fn() -> String, pid: Pid, tag: Tag) -> Result<()> {
        if let Some(f) = self.frames.iter().find(|f| tag.other_operation(&f.h)) {
            return Err(out_of_step(&name(), pid, f.h.kind, tag.kind));
        }
        self.left(tag.id.section).map_or(Ok(()), |why| Err(left_section(&name(), pid, why)))
    }
    /// Drops what belongs to the sections that ended here (`section` just did).
    pub fn close(&mut self, section: u32, sections: &Sections) {
        self.frames.retain(|f| !sections.is_stale(f.h.section));
        self.left.retain(|(s, _)| *s != section);
    }
}

/// Control messages between the nodes of a job (a node: an OS process holding one or
/// more LPF processes). Every message is tagged with (section, kind, step, round); a
/// channel keeps what arrived until it is asked for, drops what belongs to sections
/// that ended here, and knows when a peer can no longer send what is awaited.
pub(crate) trait Channel {
    /// Where the job's LPF processes live, as this node sees it.
    fn layout(&self) -> &Layout;
    /// Queues a message for node `to`; `raw` announces payload bytes that the
    /// transport sends besides it (0 for none).
    #[allow(clippy::too_many_arguments)]
    fn post(&mut self, to: usize, tag: Tag, body: &[u8], raw: u64);
    /// As [`Channel::post`], with the body given as parts that are sent as their
    /// concatenation (a channel may gather them without building the body first).
    fn post_parts(&mut self, to: usize, tag: Tag, parts: &[&[u8]], raw: u64) {
        self.post(to, tag, &parts.concat(), raw)
    }
    /// The buffers this channel keeps from one sync for the next (the driver's).
    fn pools(&mut self) -> &mut driver::Pools;
    /// Waits for the message `(section, kind, step, round)` from node `from`; fails at
    /// once if `from` left the section, died, or is in another collective operation.
    fn expect(&mut self, from: usize, tag: Tag) -> Result<Frame>;
}

/// Why a wait for the message of `mine` from peer `name` (LPF pid `pid`) fails when the
/// peer sent one of another operation (`theirs`) at the same step.
fn out_of_step(name: &str, pid: Pid, theirs: Kind, mine: Kind) -> Error {
    const RETURNED: &str = "has left the section (returned from its SPMD function)";
    if theirs == Kind::End || mine == Kind::End {
        let (theirs, mine) = if theirs == Kind::End {
            (RETURNED.to_string(), format!("is in {}", mine.operation()))
        } else {
            (format!("is in {}", theirs.operation()), RETURNED.to_string())
        };
        return Error::peer_left(Some(pid), format!(
            "{name} {theirs} while this process {mine} (sync and rehook are collective: every process calls them \
             the same number of times)"
        ));
    }
    Error::out_of_step(format!(
        "{name} is out of step: it is in {} while this process is in {} (register_global, sync and rehook are \
         collective: every process calls them in the same order)",
        theirs.operation(),
        mine.operation()
    ))
}

/// Why a wait for peer `name` (LPF pid `pid`) fails when it left the section, saying
/// `why` (empty: it returned from its SPMD function).
fn left_section(name: &str, pid: Pid, why: &str) -> Error {
    let why = if why.is_empty() { String::new() } else { format!(": {why}") };
    Error::peer_left(Some(pid), format!(
        "{name} has left the section (returned from its SPMD function, failed, or called sync a different number of \
         times){why}"
    ))
}

/// The first error of a sync, tagged with the node that found it (the lowest wins, so
/// every process reports the same one).
pub(crate) type Found = Option<(u32, Error)>;

pub(crate) fn note(found: &mut Found, node: usize, e: Error) {
    if found.is_none() {
        *found = Some((node as u32, e));
    }
}

/// The rounds of the dissemination pattern over `n` nodes: ceil(log2 n).
pub(crate) fn rounds(n: usize) -> u8 {
    n.next_power_of_two().trailing_zeros() as u8
}

/// How [`meta_exchange`] posts node d's request headers: `send(ch, d, o, kind,
/// prefix)`.
pub(crate) type SendRequests<'a, C> = dyn FnMut(&mut C, usize, &Outgoing, Kind, &[u8]) + 'a;

/// Phase 1: every node learns the requests addressed to it. `send(ch, d, o, kind,
/// prefix)` posts `o`'s headers to node d (with whatever payload the transport sends
/// along). Returns the requests from each node (None: none) and whether anybody
/// communicates at all; if not, the sync is over. Nothing is written before every node
/// is known (directly or transitively) to be in this sync.
pub(crate) fn meta_exchange<C: Channel>(
    ch: &mut C,
    id: SyncId,
    out: &[Outgoing],
    any: bool,
    send: &mut SendRequests<'_, C>,
) -> Result<(Vec<Option<Incoming>>, bool)> {
    let (me, n) = (ch.layout().me, ch.layout().n);
    // Taken after this node's messages left (the pool tidies the table of the last
    // sync then, off the path from arrival to the next send).
    let table = |ch: &mut C| ch.pools().table(n);
    let mut incoming;
    let flags = match ch.layout().meta {
        MetaAlgo::Direct => {
            for d in (0..n).filter(|&d| d != me) {
                send(ch, d, &out[d], Kind::Meta, &[any as u8]);
            }
            incoming = table(ch);
            let mut flags = any;
            for s in (0..n).filter(|&s| s != me) {
                let f = ch.expect(s, id.tag(Kind::Meta))?;
                flags |= f.body.first().copied().unwrap_or(0) != 0;
                incoming[s] = ch.pools().requests(f, 1, n)?;
            }
            flags
        }
        MetaAlgo::Bruck => {
            // The request messages go after the count rounds: on a stream their
            // payloads would otherwise sit in front of round messages needed first.
            let counts: Vec<u32> = out.iter().map(|o| o.nmsg()).collect();
            let (from, flags) = bruck(ch, id, &counts, any)?;
            for d in (0..n).filter(|&d| d != me && out[d].nmsg() > 0) {
                send(ch, d, &out[d], Kind::Hdrs, &[]);
            }
            incoming = table(ch);
            if flags {
                for s in from {
                    let f = ch.expect(s, id.tag(Kind::Hdrs))?;
                    incoming[s] = ch.pools().requests(f, 0, n)?;
                }
            }
            flags
        }
    };
    Ok((incoming, flags))
}

/// Randomised Bruck exchange of the message counts: returns the nodes that send us
/// requests, and whether anybody communicates in this sync at all.
pub(crate) fn bruck<C: Channel>(ch: &mut C, id: SyncId, counts: &[u32], any: bool) -> Result<(Vec<usize>, bool)> {
    let (me, n) = (ch.layout().me, ch.layout().n);
    let v = ch.layout().perm[me];
    let mut blocks: Vec<(u32, u32, u32)> =
        (0..n).filter(|&d| d != me && counts[d] > 0).map(|d| (me as u32, d as u32, counts[d])).collect();
    let mut flag = any;
    for r in 0..rounds(n) {
        let dist = 1usize << r;
        let (to, from) = ch.layout().partners(dist);
        let perm = &ch.layout().perm;
        let (send, keep): (Vec<_>, Vec<_>) =
            blocks.into_iter().partition(|b| ((perm[b.1 as usize] + n - v) % n) & dist != 0);
        let mut body = Vec::with_capacity(5 + 12 * send.len());
        body.u8(flag as u8);
        body.u32(send.len() as u32);
        for b in &send {
            body.u32(b.0);
            body.u32(b.1);
            body.u32(b.2);
        }
        ch.post(to, id.tag(Kind::Meta).round(r), &body, 0);
        blocks = keep;
        let f = ch.expect(from, id.tag(Kind::Meta).round(r))?;
        let mut g = Get::new(&f.body);
        flag |= g.u8()? != 0;
        for _ in 0..g.u32()? {
            let b = (g.u32()?, g.u32()?, g.u32()?);
            if b.0 as usize >= n || b.1 as usize >= n {
                return Err(Error::protocol("malformed meta-data block from a peer"));
            }
            blocks.push(b);
        }
    }
    if blocks.iter().any(|b| b.1 as usize != me) {
        return Err(Error::protocol("meta-data exchange went wrong: a block did not reach its process"));
    }
    Ok((blocks.iter().map(|b| b.0 as usize).collect(), flag))
}

/// Allgather over all nodes: `mine` holds this node's LPF processes' values, `len`
/// each; process q's land at `all[q * len..][..len]`.
pub(crate) fn allgather<C: Channel>(ch: &mut C, id: SyncId, mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
    let (me, n) = (ch.layout().me, ch.layout().n);
    let offsets = ch.layout().offsets.to_vec();
    let base = offsets[me] as usize;
    all[base * len..base * len + mine.len()].copy_from_slice(mine);
    let mut body = Vec::with_capacity(8 + 8 * mine.len());
    body.u64(len as u64);
    for &v in mine {
        body.u64(v);
    }
    for d in (0..n).filter(|&d| d != me) {
        ch.post(d, id.tag(Kind::Gather), &body, 0);
    }
    let mut bad: Option<Error> = None;
    for s in (0..n).filter(|&s| s != me) {
        let f = ch.expect(s, id.tag(Kind::Gather))?;
        let mut g = Get::new(&f.body);
        let theirs = g.usize()?;
        let count = (offsets[s + 1] - offsets[s]) as usize;
        if theirs != len {
            bad.get_or_insert_with(|| crate::register::unequal_global_registrations(base as Pid, len, offsets[s], theirs));
            continue;
        }
        let at = offsets[s] as usize * len;
        for v in &mut all[at..at + count * len] {
            *v = g.u64()?;
        }
    }
    bad.map_or(Ok(()), Err)
}

/// Dissemination barrier over all nodes (its messages tagged `tag` in round r, each
/// round's); carries the error found by the lowest node (its reason and message; a
/// sync's error is fatal) and returns it.
pub(crate) fn barrier<C: Channel>(ch: &mut C, tag: Tag, mut found: Found) -> Result<Found> {
    let n = ch.layout().n;
    for r in 0..rounds(n) {
        let (to, from) = ch.layout().partners(1usize << r);
        let mut body = Vec::new();
        match &found {
            None => body.u8(0),
            Some((node, e)) => {
                let (tag, arg) = e.reason().to_wire();
                body.u8(1);
                body.u32(*node);
                body.u8(tag);
                body.u32(arg);
                body.str(e.message().as_bytes());
            }
        }
        ch.post(to, tag.round(r), &body, 0);
        let f = ch.expect(from, tag.round(r))?;
        let mut g = Get::new(&f.body);
        if g.u8()? != 0 {
            let node = g.u32()?;
            let reason = Reason::from_wire(g.u8()?, g.u32()?);
            let msg = String::from_utf8_lossy(g.str()?).into_owned();
            if found.as_ref().is_none_or(|(k, _)| node < *k) {
                found = Some((node, Error::with_reason(ErrorKind::Fatal, reason, msg)));
            }
        }
    }
    Ok(found)
}

/// The final barrier of a sync: Ok, or the agreed first error.
pub(crate) fn final_barrier<C: Channel>(ch: &mut C, id: SyncId, found: Found) -> Result<()> {
    barrier(ch, id.tag(Kind::Barrier), found)?.map_or(Ok(()), |(_, e)| Err(e))
}

#[cfg(test)]
pub(crate) mod tests {
    //! The meta-data exchange over a fake channel: n nodes as threads, messages in a
    //! shared mailbox, and an `expect` that gives up after a few seconds, so a message
    //! that never comes fails an assertion instead of hanging the suite (the driver's
    //! tests run a whole sync over it).

    use super::*;
    use crate::queue::MessageQueue;
    use crate::register::Register;
    use crate::types::Memslot;
    use std::collections::HashMap;
    use std::sync::{Condvar, Mutex};
    use std::time::{Duration, Instant};

    /// (to, from, kind, round, step) -> body.
    type Mailbox = HashMap<(usize, usize, u8, u8, u64), Vec<u8>>;

    /// How long a fake node waits for a message before it reports a hang.
    pub(crate) const PATIENCE: Duration = Duration::from_secs(5);

    #[derive(Default)]
    pub(crate) struct Net {
        boxes: Mutex<Mailbox>,
        pub arrived: Condvar,
    }

    pub(crate) struct FakeChannel {
        pub net: Arc<Net>,
        layout: Layout,
        pools: driver::Pools,
    }

    impl Channel for FakeChannel {
        fn layout(&self) -> &Layout {
            &self.layout
        }
        fn pools(&mut self) -> &mut driver::Pools {
            &mut self.pools
        }
        fn post(&mut self, to: usize, tag: Tag, body: &[u8], _raw: u64) {
            let key = (to, self.layout.me, tag.kind as u8, tag.round, tag.id.step);
            let old = self.net.boxes.lock().unwrap().insert(key, body.to_vec());
            assert!(old.is_none(), "node {} posted {key:?} twice", self.layout.me);
            self.net.arrived.notify_all();
        }
        fn expect(&mut self, from: usize, tag: Tag) -> Result<Frame> {
            let key = (self.layout.me, from, tag.kind as u8, tag.round, tag.id.step);
            let in_vain = || Error::timeout(format!("node {} waited in vain for {key:?}", self.layout.me));
            let body = self.net.wait_for(&self.net.boxes, |boxes| boxes.remove(&key)).ok_or_else(in_vain)?;
            Ok(Frame { h: tag.header(body.len(), 0), body })
        }
    }

    impl Net {
        /// What `take` finds in `m` (a mailbox of this net), waiting for arrivals until
        /// [`PATIENCE`] is over (then None).
        pub fn wait_for<M, T>(&self, m: &Mutex<M>, mut take: impl FnMut(&mut M) -> Option<T>) -> Option<T> {
            let deadline = Instant::now() + PATIENCE;
            let mut guard = m.lock().unwrap();
            loop {
                if let Some(v) = take(&mut guard) {
                    return Some(v);
                }
                let now = Instant::now();
                if now >= deadline {
                    return None;
                }
                guard = self.arrived.wait_timeout(guard, deadline - now).unwrap().0;
            }
        }
    }

    /// One process of `p` with the `len` bytes at `mem` as its global slot and room for
    /// `cap` messages.
    pub(crate) fn process(p: usize, mem: *mut u8, len: usize, cap: usize) -> (Register, MessageQueue, Memslot) {
        let mut reg = Register::new(p);
        reg.request_capacity(1).unwrap();
        reg.on_sync(&[]);
        let slot = reg.add(true, mem, len).unwrap();
        reg.on_sync(&vec![len as u64; p]);
        let mut queue = MessageQueue::default();
        queue.request_capacity(cap).unwrap();
        queue.on_sync();
        (reg, queue, slot)
    }

    /// A small deterministic generator for the property tests.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub fn below(&mut self, n: usize) -> usize {
            (splitmix64(&mut self.0) % n as u64) as usize
        }
        /// Which of n nodes communicate in trial t: nobody, exactly one, or a random set.
        pub fn talkers(&mut self, n: usize, t: usize) -> Vec<bool> {
            let one = self.below(n);
            match t % 3 {
                0 => vec![false; n],
                1 => (0..n).map(|i| i == one).collect(),
                _ => (0..n).map(|_| self.below(2) == 0).collect(),
            }
        }
    }

    /// Runs `per_node(channel, me)` on n nodes (one LPF process each) at once; returns
    /// each node's result.
    pub(crate) fn on_nodes<T: Send>(n: usize, meta: MetaAlgo, per_node: impl Fn(&mut FakeChannel, usize) -> T + Sync) -> Vec<T> {
        let net = Arc::new(Net::default());
        let offsets: Vec<Pid> = (0..=n as Pid).collect();
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..n)
                .map(|me| {
                    let (net, layout) = (net.clone(), Layout::new(me, offsets.clone(), 0xfeed + n as u64, meta));
                    let per_node = &per_node;
                    s.spawn(move || per_node(&mut FakeChannel { net, layout, pools: Default::default() }, me))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    /// Bruck over 1..=20 nodes with random count matrices: every node learns exactly
    /// the nodes that send it requests, and whether anybody communicates. A node that
    /// ignores its peers' "anybody communicates" flag fails here (it returned "nobody"
    /// while others went on to send headers: a deadlock in a real engine).
    #[test]
    fn bruck_finds_every_sender_and_the_anybody_flag() {
        let mut rng = Rng(7);
        for n in 1..=20usize {
            for trial in 0..12 {
                let talks = rng.talkers(n, trial);
                let counts: Vec<Vec<u32>> = (0..n)
                    .map(|s| (0..n).map(|d| if talks[s] && d != s && rng.below(3) == 0 { 1 + rng.below(5) as u32 } else { 0 }).collect())
                    .collect();
                let anybody = talks.iter().any(|&t| t);
                let got = on_nodes(n, MetaAlgo::Bruck, |ch, me| bruck(ch, SyncId { section: 0, step: 1 }, &counts[me], talks[me]));
                for (me, r) in got.into_iter().enumerate() {
                    let (mut from, flag) = r.unwrap_or_else(|e| panic!("n {n}, trial {trial}, node {me}: {e}"));
                    from.sort_unstable();
                    let want: Vec<usize> = (0..n).filter(|&s| counts[s][me] > 0).collect();
                    assert_eq!(from, want, "n {n}, trial {trial}, node {me}: senders");
                    assert_eq!(flag, anybody, "n {n}, trial {trial}, node {me}: anybody flag");
                }
            }
        }
    }

    /// In every round of the dissemination pattern, the node a node sends to hears from
    /// it (else Bruck and the barrier would wait for a message nobody sends).
    #[test]
    fn partners_are_mutual_in_every_round() {
        for n in 1..=9usize {
            let offsets: Vec<Pid> = (0..=n as Pid).collect();
            let layouts: Vec<Layout> = (0..n).map(|me| Layout::new(me, offsets.clone(), 42 + n as u64, MetaAlgo::Direct)).collect();
            for r in 0..rounds(n) {
                for (me, l) in layouts.iter().enumerate() {
                    let (to, _) = l.partners(1 << r);
                    assert_eq!(layouts[to].partners(1 << r).1, me, "n {n}, round {r}, node {me}");
                }
            }
        }
    }

    /// A section's messages are dropped once it ended here, never before it started.
    #[test]
    fn sections_are_stale_once_closed_only() {
        let mut s = Sections::default();
        let (a, b) = (s.open(), s.open());
        assert!(a != b && !s.is_stale(a) && !s.is_stale(b) && !s.is_stale(b + 1));
        s.close(a);
        assert!(s.is_stale(a) && !s.is_stale(b) && !s.is_stale(b + 1));
    }

    /// A peer's inbox: a message of another operation at the awaited step is out of
    /// step, a `Leave` of the awaited section is a peer that left (with its reason), and
    /// closing the section forgets both (the TCP mesh kept every section's `Leave`).
    #[test]
    fn an_inbox_tells_why_a_peer_cannot_send_and_forgets_closed_sections() {
        let (mut sections, mut inbox) = (Sections::default(), Inbox::default());
        let id = SyncId { section: sections.open(), step: 2 };
        let frame = |tag: Tag, body: &[u8]| Frame { h: tag.header(body.len(), 0), body: body.to_vec() };
        inbox.deliver(frame(id.tag(Kind::Gather), b""));
        let e = inbox.check(|| "process 1".into(), 1, id.tag(Kind::Meta)).unwrap_err();
        assert_eq!(e.reason(), Reason::OutOfStep, "{e}");
        assert!(inbox.take(id.tag(Kind::Gather)).is_some() && inbox.check(String::new, 1, id.tag(Kind::Meta)).is_ok());
        inbox.deliver(frame(SyncId { step: 0, ..id }.tag(Kind::Leave), b"it failed"));
        let e = inbox.check(|| "process 1".into(), 1, id.tag(Kind::Meta)).unwrap_err();
        assert!(e.reason() == Reason::PeerLeft { pid: Some(1) } && e.message().ends_with(": it failed"), "{e}");
        sections.close(id.section);
        inbox.close(id.section, &sections);
        assert!(inbox.frames.is_empty() && inbox.left.is_empty());
    }

    /// The direct exchange through `meta_exchange`: with no requests anywhere, the
    /// anybody flag is still the OR over all nodes.
    #[test]
    fn direct_exchange_agrees_on_the_anybody_flag() {
        for n in 2..=6usize {
            for talker in 0..=n {
                let got = on_nodes(n, MetaAlgo::Direct, |ch, me| {
                    let out: Vec<Outgoing> = (0..n).map(|_| Outgoing::default()).collect();
                    let mut send = |ch: &mut FakeChannel, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
                        ch.post_parts(d, SyncId { section: 0, step: 3 }.tag(kind), &o.parts(prefix, &mut [0; 8]), 0)
                    };
                    meta_exchange(ch, SyncId { section: 0, step: 3 }, &out, me == talker, &mut send).map(|(_, flag)| flag)
                });
                for (me, r) in got.into_iter().enumerate() {
                    assert_eq!(r.unwrap(), talker < n, "n {n}, talker {talker}, node {me}");
                }
            }
        }
    }
}
