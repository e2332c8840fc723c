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
//! - **put plans**: after conflict resolution (the driver's) the destination answers
//!   each origin with the surviving pieces of its large puts (whole, trimmed, rejected)
//!   and the status of its gets (`GetReply`), so a write never touches bytes a later
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
use crate::phases::driver::{self, Exchange, SyncId, Transport};
use crate::phases::{allgather, note, Channel, Found};
use crate::register::Register;
use crate::types::Memslot;
use crate::wire::{Get, Kind, Put};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Local bytes into the remote slot.
    Write,
    /// Remote slot bytes into local memory.
    Read,
}

/// One one-sided operation: `len` bytes between local memory at `local` and offset
/// `off` of global slot `index` of LPF process `pid` (a global pid: the rank's only
/// process, or one of its threads on the hybrid engine).
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
    /// Prepares local LPF process `t`'s memory `ptr..ptr + size` of global slot `index`
    /// for remote access and returns its key words (`t` is 0 but on the hybrid engine,
    /// where it is the thread). Local; may run before the old exposure of the same index
    /// is withdrawn.
    fn expose(&mut self, index: usize, t: usize, ptr: *mut u8, size: usize) -> Result<Vec<u64>>;
    /// Makes the prepared exposures of `index` usable, given every LPF process's key
    /// words (`keys[q * key_words..]`, q the global pid). Every rank is here, in the same
    /// order.
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

/// `v[index]`, growing `v` with default values to reach it (tables by global slot index).
pub(crate) fn grown<T: Default>(v: &mut Vec<T>, index: usize) -> &mut T {
    if v.len() <= index {
        v.resize_with(index + 1, T::default);
    }
    &mut v[index]
}

/// The slot table of a one-sided engine, and its data moves in a sync.
pub(crate) struct OneSidedState {
    pub t: Box<dyn OneSided>,
    /// `exposed[index]`: the slot (generation included) whose memory is exposed there,
    /// per local LPF process.
    exposed: Vec<Option<Vec<Memslot>>>,
    /// The global slots written into in the current sync (made visible at its end).
    written: Vec<usize>,
}

impl OneSidedState {
    pub fn new(t: Box<dyn OneSided>) -> OneSidedState {
        OneSidedState { t, exposed: Vec::new(), written: Vec::new() }
    }

    pub fn close(&mut self) {
        self.t.close();
        self.exposed.clear();
    }
}

/// The activation point: sizes, slot indices and keys of the new global slots of this
/// rank's LPF processes (`registers`, global pids `offsets[me]..`; `mine` holds `len`
/// sizes per process) in one allgather; then stale exposures are withdrawn and the new
/// ones published. The indices travel along so that every process checks that all
/// registered the same ones (else the collective window calls would not match): all
/// see the same gathered words, so all fail alike.
#[allow(clippy::too_many_arguments)]
pub(crate) fn activate(
    ch: &mut MpiChannel,
    os: &mut OneSidedState,
    section: u32,
    step: u64,
    registers: &[&Register],
    mine: &[u64],
    len: usize,
    all: &mut [u64],
) -> Result<()> {
    let pending: Vec<Vec<(Memslot, *mut u8, usize)>> = registers.iter().map(|r| r.pending_areas()).collect();
    debug_assert_eq!(mine.len(), len * registers.len());
    let kw = os.t.key_words();
    let per = 2 + kw;
    let mut words = Vec::with_capacity(mine.len() * per);
    for (t, areas) in pending.iter().enumerate() {
        if areas.len() != len {
            return Err(Error::out_of_step("register_global is collective, but the processes of this rank registered different numbers of global slots"));
        }
        for (k, &(slot, ptr, size)) in areas.iter().enumerate() {
            words.push(mine[t * len + k]);
            words.push(slot.index() as u64);
            let keys = os.t.expose(slot.index(), t, ptr, size)?;
            debug_assert_eq!(keys.len(), kw);
            words.extend_from_slice(&keys);
        }
    }
    let nprocs = ch.layout.nprocs() as usize;
    let wlen = len * per;
    let mut gathered = vec![0u64; wlen * nprocs];
    allgather(ch, SyncId { section, step }, &words, wlen, &mut gathered)?;
    for q in 0..nprocs {
        for k in 0..len {
            all[q * len + k] = gathered[q * wlen + k * per];
            let (index, first) = (gathered[q * wlen + k * per + 1], gathered[k * per + 1]);
            if index != first {
                return Err(Error::out_of_step(format!(
                    "register_global is collective (same order everywhere), but the global slot process 0 \
                     registered as its {k}-th in this superstep has index {first} and process {q}'s has index {index}"
                )));
            }
        }
    }
    // Everybody is here: withdraw what was deregistered (ascending index, the same
    // everywhere since deregistration is collective and ordered), then publish.
    let indices: Vec<usize> = pending[0].iter().map(|(s, _, _)| s.index()).collect();
    for index in 0..os.exposed.len() {
        if let Some(slots) = &os.exposed[index] {
            let stale = slots.iter().zip(registers).any(|(&s, r)| !r.is_known_global(s));
            if stale || indices.contains(&index) {
                os.t.withdraw(index)?;
                os.exposed[index] = None;
            }
        }
    }
    for (k, &index) in indices.iter().enumerate() {
        let keys: Vec<u64> =
            (0..nprocs).flat_map(|q| gathered[q * wlen + k * per + 2..q * wlen + (k + 1) * per].iter().copied()).collect();
        os.t.publish(index, &keys)?;
        *grown(&mut os.exposed, index) = Some(pending.iter().map(|p| p[k].0).collect());
    }
    Ok(())
}

/// Plan status of one large put, as the destination tells its origin.
#[derive(Clone, Copy)]
enum PutStatus {
    /// Nothing of it is written.
    Rejected = 0,
    /// It is written whole.
    Whole = 1,
    /// Only the pieces that follow (count, then offset and length of each) are written.
    Trimmed = 2,
}

impl PutStatus {
    fn from_u8(b: u8) -> Option<PutStatus> {
        [PutStatus::Rejected, PutStatus::Whole, PutStatus::Trimmed].into_iter().find(|&s| s as u8 == b)
    }
}

/// One sync of the LPF processes `steps` of this rank (global pids `offsets[me]..`):
/// the driver's phases ([`crate::phases::driver`]) over the one-sided transport.
pub(crate) fn sync(ch: &mut MpiChannel, os: &mut OneSidedState, id: SyncId, steps: &[&Superstep<'_>]) -> Result<()> {
    os.written.clear();
    driver::sync(ch, os, id, steps)
}

/// Large puts move after the destination's plan: the meta-data carries headers only
/// (small payloads inline).
impl Transport<MpiChannel> for OneSidedState {
    fn exchange(&mut self, ch: &mut MpiChannel, x: &mut Exchange<'_, '_, '_>) -> Result<()> {
        let (me, incoming) = (x.loc.me, x.incoming);
        // The origins this destination answers: those with large puts or gets to it.
        let answered = |q: usize| incoming[q].as_ref().filter(|inc| inc.raw_puts().next().is_some() || !inc.gets.is_empty());
        // ---- Tell each origin the surviving pieces of its large puts and the status of
        // its gets. ----
        for q in x.peers() {
            let Some(inc) = answered(q) else { continue };
            let plan = &*x.plan;
            let mut body = Vec::new();
            for (k, p) in inc.raw_puts().enumerate() {
                match plan.put_writes[q][k].filter(|_| !plan.discard) {
                    None => body.u8(PutStatus::Rejected as u8),
                    Some(i) => {
                        self.written.push(p.slot.index());
                        if plan.whole(i) {
                            body.u8(PutStatus::Whole as u8);
                        } else {
                            let (w, pieces) = (&plan.writes[i], plan.pieces_of(i));
                            body.u8(PutStatus::Trimmed as u8);
                            body.u32(pieces.len() as u32);
                            for &(a, b) in pieces {
                                body.u64((a - w.addr) as u64);
                                body.u64((b - a) as u64);
                            }
                        }
                    }
                }
            }
            x.serve_gets(q, |_, at| body.u8(at.is_some() as u8));
            ch.post(q, x.id.tag(Kind::GetReply), &body, 0);
        }

        // ---- The origin writes what survives and reads its gets. ----
        let (out, plan) = (x.out, &*x.plan);
        let touches = |d: usize| !out[d].raw.is_empty() || !out[d].my_gets.is_empty();
        let mut ops: Vec<Op> = Vec::new();
        for d in x.peers().filter(|&d| touches(d)) {
            let f = ch.expect_during_data(d, x.id.tag(Kind::GetReply))?;
            let mut g = Get::new(&f.body);
            for r in &out[d].raw {
                let index = r.dst_slot.index();
                let mut write = |delta: usize, len: usize| {
                    if delta.checked_add(len).is_none_or(|e| e > r.size) {
                        return Err(Error::protocol(format!("malformed put plan from process {d}")));
                    }
                    // The source stays valid and unchanged until the sync returns.
                    ops.push(Op { kind: OpKind::Write, pid: r.dst_pid as usize, index, off: r.dst_offset + delta, local: r.src.wrapping_add(delta) as *mut u8, len });
                    Ok(())
                };
                let status = g.u8()?;
                match PutStatus::from_u8(status) {
                    Some(PutStatus::Rejected) => {}
                    Some(PutStatus::Whole) => write(0, r.size)?,
                    Some(PutStatus::Trimmed) => {
                        for _ in 0..g.u32()? {
                            let (delta, len) = (g.usize()?, g.usize()?);
                            write(delta, len)?;
                        }
                    }
                    None => return Err(Error::protocol(format!("malformed put plan from process {d} (status {status})"))),
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
                        pid: mg.src_pid as usize,
                        index: mg.src_slot.index(),
                        off: mg.src_offset + (a - w.addr),
                        local: a as *mut u8,
                        len: b - a,
                    });
                }
            }
            if !g.is_done() {
                return Err(Error::protocol(format!("malformed put plan from process {d} (trailing bytes)")));
            }
        }
        ops.sort_by_key(|o| o.pid);
        let posted = self.t.post(&ops).map(|_| ops.len());
        // Whatever was posted must complete before the sync may return.
        let completed = self.t.complete(*posted.as_ref().unwrap_or(&0));
        posted?;
        if let Err(e) = completed {
            note(&mut x.plan.found, me, e);
        }

        // ---- Completion notices instead of a barrier (unless errors are agreed: then
        // `end_sync`'s barrier does both): each origin tells the destinations it touched;
        // each destination waits for those it answered, then (`complete`) makes the
        // arrivals visible. An error found here fails this process only (as mpimsg). ----
        if !ch.agree_errors {
            for d in x.peers().filter(|&d| touches(d)) {
                ch.post(d, x.id.tag(Kind::Barrier), &[], 0);
            }
            for q in x.peers().filter(|&q| answered(q).is_some()) {
                ch.expect_during_data(q, x.id.tag(Kind::Barrier))?;
            }
        }
        Ok(())
    }

    fn complete(&mut self, ch: &mut MpiChannel, id: SyncId, found: Found) -> Result<()> {
        ch.end_sync(id, found)?;
        self.written.sort_unstable();
        self.written.dedup();
        for &index in &self.written {
            self.t.arrived(index)?;
        }
        Ok(())
    }
}
