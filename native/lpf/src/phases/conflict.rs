//! Phase 2 of a sync, at the destination: the remote checks, the incoming message
//! count, and write-conflict resolution. Every write into this node's memory (incoming
//! puts, puts among its own LPF processes, its own gets) is put in one order, and each
//! keeps only the bytes no later write covers (interval painting, O(m log m)). The
//! surviving pieces are disjoint, so any transport may fill them in any order and
//! interleaving, and the result is that serialisation.

use super::requests::{Incoming, Outgoing};
use super::{note, Found};
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::queue::Request;
use crate::types::{Memslot, Pid};
use std::collections::BTreeMap;

/// Where the bytes of one write come from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// Copy from this address (inline payload, or memory of this node).
    Copy(*const u8),
    /// From another node, by the transport (put payload, or data of one of our gets).
    Remote,
}

/// One write into this node's memory.
pub(crate) struct Write {
    pub addr: usize,
    pub len: usize,
    pub src: Source,
    /// Surviving pieces `pieces[lo..hi]` (absolute address ranges, ascending).
    pub lo: usize,
    pub hi: usize,
}

impl Write {
    pub fn new(addr: usize, len: usize, src: Source) -> Write {
        Write { addr, len, src, lo: 0, hi: 0 }
    }
}

/// [`resolve_into`] returning the pieces (for tests).
#[cfg(test)]
pub(crate) fn resolve(writes: &mut [Write]) -> Vec<(usize, usize)> {
    let mut pieces = Vec::with_capacity(writes.len());
    resolve_into(writes, &mut pieces);
    pieces
}

/// Keeps, for every write, the bytes no later write covers (painting from the last
/// write backwards), in `pieces` (emptied first; its buffer is reused). The pieces of
/// all writes are disjoint.
fn resolve_into(writes: &mut [Write], pieces: &mut Vec<(usize, usize)>) {
    pieces.clear();
    if disjoint(writes) {
        // The common case: nothing overlaps, every write survives whole.
        for w in writes.iter_mut() {
            w.lo = pieces.len();
            if w.len > 0 {
                pieces.push((w.addr, w.addr + w.len));
            }
            w.hi = pieces.len();
        }
        return;
    }
    let mut covered: BTreeMap<usize, usize> = BTreeMap::new();
    for w in writes.iter_mut().rev() {
        let (a, b) = (w.addr, w.addr + w.len);
        let first = pieces.len();
        if w.len > 0 {
            let hits: Vec<(usize, usize)> =
                covered.range(..b).rev().take_while(|(_, &e)| e > a).map(|(&s, &e)| (s, e)).collect();
            // Its pieces are the gaps between them; they merge with it into one range.
            let (mut at, mut lo, mut hi) = (a, a, b);
            for &(s, e) in hits.iter().rev() {
                if s > at {
                    pieces.push((at, s));
                }
                at = at.max(e);
                covered.remove(&s);
                lo = lo.min(s);
                hi = hi.max(e);
            }
            if at < b {
                pieces.push((at, b));
            }
            covered.insert(lo, hi);
        }
        w.lo = first;
        w.hi = pieces.len();
    }
}

/// Whether no two non-empty writes share a byte: pairwise for a few writes (no
/// allocation), else by sorting their start addresses.
fn disjoint(writes: &[Write]) -> bool {
    let overlap = |a: &Write, b: &Write| a.len > 0 && b.len > 0 && a.addr < b.addr + b.len && b.addr < a.addr + a.len;
    if writes.len() <= 8 {
        return writes.iter().enumerate().all(|(i, a)| writes[i + 1..].iter().all(|b| !overlap(a, b)));
    }
    let mut spans: Vec<(usize, usize)> = writes.iter().filter(|w| w.len > 0).map(|w| (w.addr, w.addr + w.len)).collect();
    spans.sort_unstable();
    spans.windows(2).all(|p| p[0].1 <= p[1].0)
}

/// The LPF processes of this node at the fence: global pids `base..base + steps.len()`
/// on node `me`.
pub(crate) struct Locals<'a, 's> {
    pub steps: &'a [&'a Superstep<'s>],
    pub base: Pid,
    pub me: usize,
}

impl Locals<'_, '_> {
    /// The checked address of `size` bytes at `off` of global `slot` of local process
    /// `pid` for a request of `call`; `what` names the request in an error (formatted
    /// only then).
    #[inline]
    pub fn area_of(&self, pid: Pid, slot: Memslot, off: usize, size: usize, call: &'static str, what: &dyn Fn() -> String) -> Result<*mut u8> {
        let local = pid.checked_sub(self.base).map(|t| t as usize).filter(|&t| t < self.steps.len());
        match local.and_then(|t| self.steps[t].register.active_range(slot, off, size)) {
            Some(p) => Ok(p),
            None => self.area_error(pid, slot, off, size, call, what),
        }
    }

    /// Why [`Locals::area_of`] refused (always an error).
    #[cold]
    fn area_error(&self, pid: Pid, slot: Memslot, off: usize, size: usize, call: &'static str, what: &dyn Fn() -> String) -> Result<*mut u8> {
        let Some(t) = pid.checked_sub(self.base).map(|t| t as usize).filter(|&t| t < self.steps.len()) else {
            return Err(Error::protocol(format!("{}: process {pid} does not live here (protocol error)", what())));
        };
        let what_lazy = std::fmt::from_fn(|f| f.write_str(&what()));
        self.steps[t]
            .register
            .area(slot, call)
            .map_err(|e| e.context(what()))
            .and_then(|a| a.range(slot, off, size, call, what_lazy))
    }
}

/// The buffers of a plan's writes and pieces, kept for the next sync's plan
/// ([`Plan::into_buffers`], [`plan_reusing`]).
pub(crate) type PlanBuffers = (Vec<Write>, Vec<(usize, usize)>);

/// The outcome of phase 2.
pub(crate) struct Plan {
    pub writes: Vec<Write>,
    pub pieces: Vec<(usize, usize)>,
    /// `put_writes[s][k]`: the write of the k-th put from node s whose payload is not
    /// inline, or `None` if it was rejected (it writes nothing). Empty if no put's
    /// payload travels apart from its header.
    pub put_writes: Vec<Vec<Option<usize>>>,
    /// `get_writes[d] + k`: the write of our k-th get from node d (empty if this node
    /// gets from nobody).
    pub get_writes: Vec<usize>,
    /// The first error found here.
    pub found: Found,
    /// Set when this node must write nothing at all (message capacity exceeded).
    pub discard: bool,
}

impl Plan {
    /// Whether write `i` is to be done and survives whole (a transport may then fill it
    /// in place, or in one operation).
    #[cfg(feature = "mpi")]
    pub fn whole(&self, i: usize) -> bool {
        let w = &self.writes[i];
        let p = self.pieces_of(i);
        !self.discard && p.len() == 1 && p[0] == (w.addr, w.addr + w.len)
    }

    /// The surviving pieces of write `i`.
    pub fn pieces_of(&self, i: usize) -> &[(usize, usize)] {
        let w = &self.writes[i];
        &self.pieces[w.lo..w.hi]
    }

    /// The buffers of its writes and pieces, for [`plan_reusing`]. (The writes hold
    /// addresses of this sync's memory: nothing reads them before they are overwritten.)
    pub fn into_buffers(self) -> PlanBuffers {
        (self.writes, self.pieces)
    }

    /// Copies the bytes of write `i` that arrived in a buffer, `data` (all of them, its
    /// first byte first), into its surviving pieces, unless this node discards.
    #[cfg(any(test, feature = "mpi"))]
    pub fn fill(&self, i: usize, data: &[u8]) {
        if self.discard {
            return;
        }
        let w = &self.writes[i];
        debug_assert_eq!(data.len(), w.len, "the bytes of a write of {} bytes", w.len);
        for &(a, b) in self.pieces_of(i) {
            // SAFETY: the pieces lie inside the write's destination, checked against its
            // registration when planned, and are disjoint from every other write's.
            unsafe { std::ptr::copy_nonoverlapping(data[a - w.addr..].as_ptr(), a as *mut u8, b - a) };
        }
    }

    /// Performs the writes whose bytes are here already (inline payloads, copies among
    /// this node's processes), unless this node discards.
    pub fn copy_local(&self) {
        if self.discard {
            return;
        }
        for w in &self.writes {
            if let Source::Copy(src) = w.src {
                for &(s, e) in &self.pieces[w.lo..w.hi] {
                    // SAFETY: the destination was checked against its registration in
                    // `plan` (or at the origin for our own gets) and the source against
                    // its own (at queueing, or inside the received body, which outlives
                    // the plan); pieces of different writes are disjoint. `copy`, not
                    // `copy_nonoverlapping`: a put to oneself may overlap its source.
                    unsafe { std::ptr::copy(src.add(s - w.addr), s as *mut u8, e - s) };
                }
            }
        }
    }
}

/// Checks every request that touches this node's memory, counts the incoming messages
/// against each local process's queue capacity, and resolves the write conflicts.
/// `incoming[s]`: the requests from node s (None for none and for this node); `out[d]`
/// the requests this node sends (its gets' destinations are writes here too). The
/// buffers of an earlier plan ([`Plan::into_buffers`]) are reused.
pub(crate) fn plan_reusing(
    loc: &Locals<'_, '_>,
    incoming: &[Option<Incoming>],
    local: &[(Pid, Request)],
    out: &[Outgoing],
    mut writes: Vec<Write>,
    mut pieces: Vec<(usize, usize)>,
) -> Plan {
    writes.clear();
    let n = incoming.len();
    let me = loc.me;
    let (mut found, discard) = count_targets(loc, incoming, local);
    // The writes into this node's memory, in one order: nodes 0..n (their puts to us;
    // ours among ourselves), then our own gets.
    // Allocated only if some put's payload travels apart from its header.
    let mut put_writes: Vec<Vec<Option<usize>>> = Vec::new();
    for_each_put(loc, incoming, local, &mut found, |s, dst, size, src| {
        let at = dst.map(|dst| {
            writes.push(Write::new(dst as usize, size, src));
            writes.len() - 1
        });
        if matches!(src, Source::Remote) {
            put_writes.resize_with(n, Vec::new);
            put_writes[s].push(at);
        }
    });
    for &(requester, r) in local {
        if let Request::Get { src_pid, src_slot, src_offset, dst, size } = r {
            let what = || format!("get by process {requester} from process {src_pid}");
            match loc.area_of(src_pid, src_slot, src_offset, size, "lpf_get", &what) {
                Ok(src) => writes.push(Write::new(dst as usize, size, Source::Copy(src))),
                Err(e) => note(&mut found, me, e),
            }
        }
    }
    // Allocated only if this node gets from others.
    let mut get_writes: Vec<usize> = Vec::new();
    for (d, o) in out.iter().enumerate().filter(|(_, o)| !o.my_gets.is_empty()) {
        get_writes.resize(n, 0);
        get_writes[d] = writes.len();
        writes.extend(o.my_gets.iter().map(|g| Write::new(g.dst as usize, g.size, Source::Remote)));
    }
    resolve_into(&mut writes, &mut pieces);
    Plan { writes, pieces, put_writes, get_writes, found, discard }
}

/// Whether every write of this sync into this node's memory has its bytes here once
/// the meta-data is in (inline put payloads, puts among this node's own processes) and
/// this node asks nothing of the others (no gets, no put payloads travelling apart):
/// then [`apply_inline`] does phase 2 and the sync ends there.
pub(crate) fn all_inline(incoming: &[Option<Incoming>], local: &[(Pid, Request)], out: &[Outgoing]) -> bool {
    incoming.iter().flatten().all(|inc| inc.gets.is_empty() && inc.puts.iter().all(|p| p.inline.is_some()))
        && local.iter().all(|(_, r)| matches!(r, Request::Put { .. }))
        && out.iter().all(|o| o.my_gets.is_empty() && o.raw.is_empty())
}

/// Phase 2 of a sync that [`all_inline`] allows, without a plan: the checks and the
/// message count of [`plan_reusing`], then every write whole, in the plan's order
/// (so a later write overwrites an earlier one). That is a serialisation of the puts,
/// and the one painting gives: no area written in a superstep may be read in it. A
/// rejected put writes nothing; an exceeded message capacity, nothing at all.
/// Returns the first error found.
pub(crate) fn apply_inline(loc: &Locals<'_, '_>, incoming: &[Option<Incoming>], local: &[(Pid, Request)]) -> Found {
    let (mut found, discard) = count_targets(loc, incoming, local);
    if discard {
        return found;
    }
    for_each_put(loc, incoming, local, &mut found, |_, dst, size, src| {
        let Source::Copy(src) = src else { unreachable!("apply_inline runs only where all_inline holds") };
        let Some(dst) = dst else { return };
        // SAFETY: the destination was checked against its registration by
        // `for_each_put`; the source is inside a received body or was checked at
        // queueing. `copy`: a put to oneself may overlap its source.
        unsafe { std::ptr::copy(src, dst, size) };
    });
    found
}

/// Visits the puts into this node's memory in the plan's order (the puts from nodes
/// 0..n, those among this node's own processes at its own place), checking each
/// destination: `f(node, destination or None if rejected, size, source)`. A rejected
/// put is noted in `found`.
fn for_each_put(
    loc: &Locals<'_, '_>,
    incoming: &[Option<Incoming>],
    local: &[(Pid, Request)],
    found: &mut Found,
    mut f: impl FnMut(usize, Option<*mut u8>, usize, Source),
) {
    let me = loc.me;
    let checked = |r: Result<*mut u8>, found: &mut Found| r.map_err(|e| note(found, me, e)).ok();
    for (s, inc) in incoming.iter().enumerate() {
        if s == me {
            for &(origin, r) in local {
                if let Request::Put { src, dst_pid, dst_slot, dst_offset, size } = r {
                    let what = || format!("put from process {origin} into process {dst_pid}");
                    let dst = checked(loc.area_of(dst_pid, dst_slot, dst_offset, size, "lpf_put", &what), found);
                    f(s, dst, size, Source::Copy(src));
                }
            }
            continue;
        }
        let Some(inc) = inc else { continue };
        for p in &inc.puts {
            let what = || format!("put from process {} into process {}", p.origin, p.dst);
            let dst = checked(loc.area_of(p.dst, p.slot, p.off, p.size, "lpf_put", &what), found);
            let src = match p.inline {
                Some(o) => Source::Copy(inc.body[o..].as_ptr()),
                None => Source::Remote,
            };
            f(s, dst, p.size, src);
        }
    }
}

/// Counts the messages each of this node's processes is the target of against its
/// queue capacity: the first error, and whether this node must write nothing.
#[inline]
fn count_targets(loc: &Locals<'_, '_>, incoming: &[Option<Incoming>], local: &[(Pid, Request)]) -> (Found, bool) {
    // Fewer messages in all than any process has room for: nobody is over.
    let total = incoming.iter().flatten().map(|inc| inc.puts.len() + inc.gets.len()).sum::<usize>() + local.len();
    if loc.steps.iter().all(|s| total <= s.queue.capacity()) {
        return (None, false);
    }
    count_targets_per_process(loc, incoming, local)
}

/// [`count_targets`] one process at a time.
#[inline(never)]
fn count_targets_per_process(loc: &Locals<'_, '_>, incoming: &[Option<Incoming>], local: &[(Pid, Request)]) -> (Found, bool) {
    let (me, base) = (loc.me, loc.base);
    let mut found: Found = None;
    // Messages each of this node's processes is the target of (no allocation for a
    // few processes).
    let mut few = [0usize; 16];
    let mut many = Vec::new();
    let count: &mut [usize] = if loc.steps.len() <= few.len() {
        &mut few[..loc.steps.len()]
    } else {
        many.resize(loc.steps.len(), 0);
        &mut many
    };
    let mut bump = |pid: Pid| {
        if pid >= base && ((pid - base) as usize) < count.len() {
            count[(pid - base) as usize] += 1;
        }
    };
    for inc in incoming.iter().flatten() {
        inc.puts.iter().for_each(|p| bump(p.dst));
        inc.gets.iter().for_each(|g| bump(g.src));
    }
    for (_, r) in local {
        bump(r.peer());
    }
    let mut discard = false;
    for (t, &c) in count.iter().enumerate() {
        let cap = loc.steps[t].queue.capacity();
        if c > cap {
            discard = true;
            note(&mut found, me, Error::exhausted(format!(
                "process {} is the target of {c} messages in this superstep but reserved room for {cap} \
                 (resize_message_queue)",
                base + t as Pid
            )));
        }
    }

    (found, discard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phases::requests::{encode_request, parse_requests};
    use crate::phases::tests::{process, Rng};
    use crate::wire::Put;

    /// The meta-data message node 1 sends node 0: inline puts (slot, offset, bytes).
    fn from_node1(puts: &[(Memslot, usize, Vec<u8>)]) -> Incoming {
        let mut body = Vec::new();
        body.u8(1);
        body.u32(puts.len() as u32);
        body.u32(0);
        for (slot, off, bytes) in puts {
            encode_request(&mut body, (1, 0, *slot, *off, bytes.len()));
            body.bytes(bytes);
        }
        let mut inc = Incoming::default();
        parse_requests(&mut inc, body, 0, 1).unwrap();
        inc
    }

    /// Random overlapping inline puts: applying them whole in order leaves the same
    /// bytes as painting then copying the surviving pieces.
    #[test]
    fn apply_inline_matches_the_plan() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for round in 0..200 {
            let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
            // Pid 0 (node 0 of 2) with a 64-byte global slot, room for 64 messages.
            let (reg_a, queue_a, slot) = process(2, a.as_mut_ptr(), a.len(), 64);
            let (reg_b, queue_b, _) = process(2, b.as_mut_ptr(), b.len(), 64);
            let puts: Vec<_> = (0..1 + rng.below(12))
                .map(|k| {
                    let off = rng.below(64);
                    let len = rng.below(64 - off + 1);
                    (slot, off, vec![(round * 16 + k + 1) as u8; len])
                })
                .collect();
            let incoming = vec![None, Some(from_node1(&puts))];
            let step_a = Superstep { register: &reg_a, queue: &queue_a };
            let step_b = Superstep { register: &reg_b, queue: &queue_b };
            let loc_a = Locals { steps: &[&step_a], base: 0, me: 0 };
            let loc_b = Locals { steps: &[&step_b], base: 0, me: 0 };
            assert!(all_inline(&incoming, &[], &[]));
            assert!(apply_inline(&loc_a, &incoming, &[]).is_none());
            let plan = plan_reusing(&loc_b, &incoming, &[], &[], Vec::new(), Vec::new());
            assert!(plan.found.is_none());
            plan.copy_local();
            assert_eq!(a, b, "round {round}: {:?}", puts.iter().map(|p| (p.1, p.2.len())).collect::<Vec<_>>());
        }
    }

    /// A put outside its slot is rejected alone; too many messages write nothing.
    #[test]
    fn apply_inline_rejects_as_the_plan_does() {
        let mut mem = vec![0u8; 64];
        let (reg, queue, slot) = process(2, mem.as_mut_ptr(), mem.len(), 2);
        let step = Superstep { register: &reg, queue: &queue };
        let loc = Locals { steps: &[&step], base: 0, me: 0 };
        let incoming = vec![None, Some(from_node1(&[(slot, 60, vec![7; 8]), (slot, 0, vec![9; 4])]))];
        let found = apply_inline(&loc, &incoming, &[]).expect("out of bounds");
        assert_eq!(found.1, plan_reusing(&loc, &incoming, &[], &[], Vec::new(), Vec::new()).found.unwrap().1);
        assert_eq!(&mem[..4], &[9; 4]);
        assert_eq!(&mem[60..], &[0; 4]);

        mem.iter_mut().for_each(|b| *b = 0);
        let three = vec![None, Some(from_node1(&[(slot, 0, vec![1; 4]), (slot, 8, vec![2; 4]), (slot, 16, vec![3; 4])]))];
        let found = apply_inline(&loc, &three, &[]).expect("capacity");
        assert!(found.1.message().contains("target of 3 messages"), "{}", found.1);
        assert!(mem.iter().all(|&b| b == 0));
    }

    #[test]
    fn later_writes_win_and_pieces_are_disjoint() {
        let w = |a, l| Write::new(a, l, Source::Remote);
        let mut ws = vec![w(0, 10), w(5, 10), w(2, 2), w(20, 5), w(0, 0)];
        let p = resolve(&mut ws);
        let of = |i: usize| p[ws[i].lo..ws[i].hi].to_vec();
        assert_eq!(of(0), vec![(0, 2), (4, 5)]);
        assert_eq!(of(1), vec![(5, 15)]);
        assert_eq!(of(2), vec![(2, 4)]);
        assert_eq!(of(3), vec![(20, 25)]);
        assert!(of(4).is_empty());
    }

    /// Property: for random sets of up to 64 writes into 512 bytes (overlapping or not,
    /// empty ones among them, fewer and more than the pairwise check's 8), the pieces
    /// are disjoint, lie inside their write, and painting them gives what writing every
    /// write in order gives (the last write of a byte wins); `disjoint` agrees with a
    /// byte count. A wrong "no overlap" answer for many writes fails here.
    #[test]
    fn resolution_matches_a_byte_array_model() {
        const BYTES: usize = 512;
        let mut rng = Rng(0x5eed);
        for case in 0..3000 {
            let n = 1 + rng.below(64);
            // Some cases are laid out disjoint on purpose, to reach the fast path.
            let spread = case % 3 == 0;
            let mut ws: Vec<Write> = (0..n)
                .map(|i| {
                    if spread && n <= 32 {
                        let slot = BYTES / 32;
                        Write::new(i * slot + rng.below(4), rng.below(slot - 4), Source::Remote)
                    } else {
                        let len = if rng.below(8) == 0 { 0 } else { 1 + rng.below(48) };
                        Write::new(rng.below(BYTES - len), len, Source::Remote)
                    }
                })
                .collect();
            let mut model = [usize::MAX; BYTES];
            let mut times_written = [0u32; BYTES];
            for (i, w) in ws.iter().enumerate() {
                for b in w.addr..w.addr + w.len {
                    model[b] = i;
                    times_written[b] += 1;
                }
            }
            let overlaps = times_written.iter().any(|&t| t > 1);
            assert_eq!(disjoint(&ws), !overlaps, "case {case}: disjoint() of {n} writes");
            let pieces = resolve(&mut ws);
            let mut painted = [usize::MAX; BYTES];
            for (i, w) in ws.iter().enumerate() {
                for &(a, b) in &pieces[w.lo..w.hi] {
                    assert!(w.addr <= a && a < b && b <= w.addr + w.len, "case {case}: piece {a}..{b} outside write {i}");
                    for slot in &mut painted[a..b] {
                        assert_eq!(*slot, usize::MAX, "case {case}: pieces overlap at write {i}");
                        *slot = i;
                    }
                }
            }
            assert_eq!(painted[..], model[..], "case {case}: {n} writes resolved unlike the model");
        }
    }
}
