//! Engines whose data moves by one-sided writes and reads (`mpirma`: MPI windows;
//! `ibverbs`: RDMA), everything but the transport's own calls shared here, behind one
//! trait, [`OneSided`]:
//!
//! - **slot table**: which generation of each global slot index is exposed; exposures
//!   of deregistered slots are withdrawn at the next activation point, where every
//!   process is known to be present (withdrawal may be collective);
//! - **key exchange**: at the activation point (the first sync after global slots were
//!   registered) each process exposes the new slots and their keys travel in the same
//!   allgather as their sizes;
//! - **conflict resolution** at the destination, as for every engine
//!   ([`crate::phases::conflict`]); the destination then answers each origin with the
//!   surviving pieces of its large puts (whole, trimmed, or rejected) and the status of
//!   the gets asked of it (`GetReply` message), so a write never touches bytes a later
//!   write covers and a rejected request writes nothing;
//! - **work-request batching**: the writes of the surviving pieces and the reads of the
//!   origin's own surviving get pieces, grouped by peer, go to the transport in one
//!   batch;
//! - **completion accounting**: the transport completes exactly the number of
//!   operations posted, then each origin tells the targets it touched (a completion
//!   notice, not a barrier), which make the data visible ([`OneSided::arrived`]).
//!
//! Puts of at most [`crate::wire::INLINE_MAX`] bytes travel inside the meta-data (no round trip).

use super::channel::MpiChannel;
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::conflict::{plan, Locals};
use crate::phases::requests::{Built, Outgoing};
use crate::phases::{allgather, meta_exchange, note, Channel};
use crate::register::Register;
use crate::types::{Memslot, Pid};
use crate::wire::{Get, Kind, Put};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Local bytes into the remote slot.
    Write,
    /// Remote slot bytes into local memory.
    Read,
}

/// One one-sided operation: `len` bytes between local memory at `local` and offset
/// `off` of global slot `index` at process `pid`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    pub kind: OpKind,
    pub pid: usize,
    pub index: usize,
    pub off: usize,
    pub local: *mut u8,
    pub len: usize,
}

/// What a one-sided transport provides; the rest of the engine is shared.
pub(crate) trait OneSided: Send {
    /// Words of key each process contributes per global slot at activation.
    fn key_words(&self) -> usize;
    /// Prepares global slot `index` (memory `ptr..ptr + size`) for remote access and
    /// returns this process's key words. Local; may run before the old exposure of the
    /// same index is withdrawn.
    fn expose(&mut self, index: usize, ptr: *mut u8, size: usize) -> Result<Vec<u64>>;
    /// Makes the prepared exposure of `index` usable, given every process's key words
    /// (`keys[q * key_words..]`). Every process is here, in the same order.
    fn publish(&mut self, index: usize, keys: &[u64]) -> Result<()>;
    /// Withdraws the exposure of `index`. Every process is here, in the same order.
    fn withdraw(&mut self, index: usize) -> Result<()>;
    /// Starts a batch of operations (grouped by peer).
    fn post(&mut self, ops: &[Op]) -> Result<()>;
    /// Waits until the `posted` operations of this sync are complete: writes at their
    /// targets, reads here.
    fn complete(&mut self, posted: usize) -> Result<()>;
    /// Called at a target after the final barrier for every slot written into, so the
    /// writes become visible to its loads.
    fn arrived(&mut self, index: usize) -> Result<()>;
    /// Releases everything (at the end of the section, on every process in the same
    /// order).
    fn close(&mut self);
}

/// The slot table of a one-sided engine.
pub(crate) struct OneSidedState {
    pub t: Box<dyn OneSided>,
    /// `exposed[index]`: the generation of the slot whose memory is exposed there.
    exposed: Vec<Option<Memslot>>,
}

impl OneSidedState {
    pub fn new(t: Box<dyn OneSided>) -> OneSidedState {
        OneSidedState { t, exposed: Vec::new() }
    }

    pub fn close(&mut self) {
        self.t.close();
        self.exposed.clear();
    }
}

/// The activation point: sizes and keys of the new global slots in one allgather; then
/// stale exposures are withdrawn and the new ones published.
pub(crate) fn activate(
    ch: &mut MpiChannel,
    os: &mut OneSidedState,
    section: u32,
    step: u64,
    register: &Register,
    mine: &[u64],
    all: &mut [u64],
) -> Result<()> {
    let pending = register.pending_areas();
    debug_assert_eq!(pending.len(), mine.len());
    let kw = os.t.key_words();
    let per = 1 + kw;
    let mut words = Vec::with_capacity(pending.len() * per);
    for (k, &(slot, ptr, size)) in pending.iter().enumerate() {
        words.push(mine[k]);
        let keys = os.t.expose(slot.index(), ptr, size)?;
        debug_assert_eq!(keys.len(), kw);
        words.extend_from_slice(&keys);
    }
    let n = ch.n;
    let len = words.len();
    let mut gathered = vec![0u64; len * n];
    allgather(ch, section, step, &words, len, &mut gathered)?;
    for q in 0..n {
        for k in 0..pending.len() {
            all[q * pending.len() + k] = gathered[q * len + k * per];
        }
    }
    // Everybody is here: withdraw what was deregistered (ascending index, the same
    // everywhere since deregistration is collective and ordered), then publish.
    for index in 0..os.exposed.len() {
        if let Some(slot) = os.exposed[index] {
            if !register.is_known_global(slot) || pending.iter().any(|(s, _, _)| s.index() == index) {
                os.t.withdraw(index)?;
                os.exposed[index] = None;
            }
        }
    }
    for (k, &(slot, _, _)) in pending.iter().enumerate() {
        let keys: Vec<u64> = (0..n).flat_map(|q| gathered[q * len + k * per + 1..q * len + (k + 1) * per].to_vec()).collect();
        os.t.publish(slot.index(), &keys)?;
        if os.exposed.len() <= slot.index() {
            os.exposed.resize(slot.index() + 1, None);
        }
        os.exposed[slot.index()] = Some(slot);
    }
    Ok(())
}

/// Plan status of one large put, as the destination tells its origin.
const REJECTED: u8 = 0;
const WHOLE: u8 = 1;
const TRIMMED: u8 = 2;

pub(crate) fn sync(ch: &mut MpiChannel, os: &mut OneSidedState, section: u32, step: u64, s: &Superstep<'_>) -> Result<()> {
    let (me, n) = (ch.me, ch.n);
    let steps = [s];
    // The request buffers of the last sync, reused.
    let mut built = std::mem::take(&mut ch.built);
    built.rebuild(&steps, me as Pid, n as Pid, me, n, |q| q as usize);
    let r = run(ch, os, section, step, &steps, &built);
    ch.built = built;
    r
}

fn run(ch: &mut MpiChannel, os: &mut OneSidedState, section: u32, step: u64, steps: &[&Superstep<'_>], built: &Built) -> Result<()> {
    let (me, n) = (ch.me, ch.n);
    let out = &built.out;

    // ---- Phase 1: meta-data (headers only; small payloads inline). ----
    let mut send = |ch: &mut MpiChannel, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let mut counts = [0u8; 8];
        ch.post_parts(d, kind, 0, section, step, &o.parts(prefix, &mut counts), o.raw_len);
    };
    let (incoming, global_any) = meta_exchange(ch, section, step, out, built.any, &mut send)?;
    if !global_any {
        return Ok(());
    }

    // ---- Phase 2: conflict resolution at the destination; tell the origins. ----
    let offsets = ch.shared_offsets();
    let loc = Locals { steps, base: me as Pid, offsets: &offsets, me };
    let mut plan = plan(&loc, &incoming, &built.local, out);
    plan.copy_local();
    let mut written: Vec<usize> = Vec::new();
    for q in (0..n).filter(|&q| q != me) {
        let Some(inc) = &incoming[q] else { continue };
        let nraw = inc.raw_puts().count();
        if nraw == 0 && inc.gets.is_empty() {
            continue;
        }
        let mut body = Vec::new();
        for (k, p) in inc.raw_puts().enumerate() {
            match plan.put_writes[q][k].filter(|_| !plan.discard) {
                None => body.u8(REJECTED),
                Some(i) => {
                    let w = &plan.writes[i];
                    let pieces = plan.pieces_of(i);
                    written.push(p.slot.index());
                    if pieces.len() == 1 && pieces[0] == (w.addr, w.addr + w.len) {
                        body.u8(WHOLE);
                    } else {
                        body.u8(TRIMMED);
                        body.u32(pieces.len() as u32);
                        for &(a, b) in pieces {
                            body.u64((a - w.addr) as u64);
                            body.u64((b - a) as u64);
                        }
                    }
                }
            }
        }
        for g in &inc.gets {
            let what = || format!("get by process {} from process {}", g.requester, g.src);
            match loc.area_of(g.src, g.slot, g.off, g.size, &what) {
                Ok(_) => body.u8(1),
                Err(e) => {
                    body.u8(0);
                    note(&mut plan.found, me, e);
                }
            }
        }
        ch.post(q, Kind::GetReply, 0, section, step, &body, 0);
    }

    // ---- Phase 3: the origin writes what survives and reads its gets. ----
    let mut ops: Vec<Op> = Vec::new();
    for d in (0..n).filter(|&d| d != me && (!out[d].raw.is_empty() || !out[d].my_gets.is_empty())) {
        let f = ch.expect(d, section, Kind::GetReply, step, 0)?;
        let mut g = Get::new(&f.body);
        for r in &out[d].raw {
            let index = r.dst_slot.index();
            let mut write = |delta: usize, len: usize| {
                if delta.checked_add(len).is_none_or(|e| e > r.size) {
                    return Err(Error::fatal(format!("malformed put plan from process {d}")));
                }
                // The source stays valid and unchanged until the sync returns.
                ops.push(Op { kind: OpKind::Write, pid: d, index, off: r.dst_offset + delta, local: r.src.wrapping_add(delta) as *mut u8, len });
                Ok(())
            };
            match g.u8()? {
                REJECTED => {}
                WHOLE => write(0, r.size)?,
                TRIMMED => {
                    for _ in 0..g.u32()? {
                        let (delta, len) = (g.usize()?, g.usize()?);
                        write(delta, len)?;
                    }
                }
                other => return Err(Error::fatal(format!("malformed put plan from process {d} (status {other})"))),
            }
        }
        for (k, mg) in out[d].my_gets.iter().enumerate() {
            let ok = g.u8()? != 0;
            if !ok || plan.discard {
                continue;
            }
            let i = plan.get_writes[d] + k;
            let w = &plan.writes[i];
            for &(a, b) in plan.pieces_of(i) {
                ops.push(Op {
                    kind: OpKind::Read,
                    pid: d,
                    index: mg.src_slot.index(),
                    off: mg.src_offset + (a - w.addr),
                    local: a as *mut u8,
                    len: b - a,
                });
            }
        }
        if !g.is_done() {
            return Err(Error::fatal(format!("malformed put plan from process {d} (trailing bytes)")));
        }
    }
    ops.sort_by_key(|o| o.pid);
    let posted = os.t.post(&ops).map(|_| ops.len());
    // Whatever was posted must complete before the sync may return.
    let completed = os.t.complete(*posted.as_ref().unwrap_or(&0));
    posted?;
    if let Err(e) = completed {
        note(&mut plan.found, me, e);
    }

    // ---- Phase 4: completion notices instead of a barrier: each origin tells the
    // destinations it wrote to or read from that its operations are complete; each
    // destination waits for those it answered with a plan, then makes the arrivals
    // visible. Errors are not agreed here (as for mpimsg): an error found here fails
    // this process, which leaves saying why. ----
    for d in (0..n).filter(|&d| d != me && (!out[d].raw.is_empty() || !out[d].my_gets.is_empty())) {
        ch.post(d, Kind::Barrier, 0, section, step, &[], 0);
    }
    for q in (0..n).filter(|&q| q != me) {
        if incoming[q].as_ref().is_some_and(|inc| inc.raw_puts().next().is_some() || !inc.gets.is_empty()) {
            ch.expect(q, section, Kind::Barrier, step, 0)?;
        }
    }
    if let Some((_, msg)) = plan.found {
        return Err(Error::fatal(msg));
    }
    written.sort_unstable();
    written.dedup();
    for index in written {
        os.t.arrived(index)?;
    }
    Ok(())
}
