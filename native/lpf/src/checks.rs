//! The debug layer's checks over the core (#17 item 5): misuse the specification leaves
//! undefined, which the default mode accepts, becomes a fatal error naming the call.
//!
//! Switched on for the whole OS process by the environment (`LPF_DEBUG` set to anything
//! but `""` or `"0"`) or by [`enable`] (what the C debug header's wrappers call); it must
//! be on in every process of a section or in none, since the sync checks are collective.
//! A context reads the switch when it is created. What is checked:
//! - message and sync attributes other than the default ones (when called);
//! - a full memory register or message queue at `register_*`, `put` or `get` (the
//!   default mode's `OutOfMemory`, which the call survives, is misuse here);
//! - deregistering a global slot that a put or get queued in this superstep names as
//!   its remote side (the default mode refuses only the local side);
//! - more messages at a process than its queue holds, counted as the specification
//!   counts them: every request at its origin and at its remote side (at the sync, from
//!   the allgather below);
//! - global deregistrations whose count or order differs between processes (at the sync
//!   that ends the superstep, by an allgather of each process's count and sequence hash);
//! - read-write conflicts within a superstep: a byte that one request reads (a put's
//!   source, a get's source) and another writes (a put's destination, a get's
//!   destination) in the same superstep (at the sync, by an allgather of every request's
//!   remote side; each process checks its own memory). Two writes to the same bytes are
//!   not a conflict: the specification defines them as some serialisation.
//!
//! Misuse the core refuses in every mode (unknown, stale or deregistered slots, bounds,
//! bad pids) needs no check here. The engines are not involved: the collectives used are
//! [`Engine::allgather`]'s, run before the engine's sync.

use crate::engine::Engine;
use crate::error::{Error, ErrorKind, Result};
use crate::queue::{MessageQueue, Request};
use crate::register::Register;
use crate::types::{Memslot, MsgAttr, Pid, SyncAttr, MSG_DEFAULT, SYNC_DEFAULT};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Switches the debug checks on for contexts created from now on in this OS process.
pub fn enable() {
    ENABLED.store(true, Relaxed);
}

/// Whether contexts created now run the debug checks.
pub fn enabled() -> bool {
    static FROM_ENV: OnceLock<bool> = OnceLock::new();
    ENABLED.load(Relaxed)
        || *FROM_ENV.get_or_init(|| crate::config::Config::from_env().is_ok_and(|c| c.debug))
}

/// One context's debug state: what the sync checks need of the superstep.
#[derive(Default)]
pub(crate) struct Checks {
    /// Global slots deregistered in this superstep, in order.
    deregistered: Vec<Memslot>,
}

/// Words per request in the conflict allgather: peer, slot, offset, size, kind.
const WORDS: usize = 5;
const KIND_PUT: u64 = 0;
const KIND_GET: u64 = 1;

impl Checks {
    pub(crate) fn msg_attr(&self, call: &'static str, what: &str, attr: MsgAttr) -> Result<()> {
        if attr != MSG_DEFAULT {
            return Err(Error::misuse(call, format!("{what}: unknown message attribute {attr} (only LPF_MSG_DEFAULT = {MSG_DEFAULT} exists)")));
        }
        Ok(())
    }

    pub(crate) fn sync_attr(&self, attr: SyncAttr) -> Result<()> {
        if attr != SYNC_DEFAULT {
            return Err(Error::misuse("lpf_sync", format!("sync: unknown sync attribute {attr} (only LPF_SYNC_DEFAULT = {SYNC_DEFAULT} exists)")));
        }
        Ok(())
    }

    /// A full register or queue (`e` is `OutOfMemory`) as misuse of `call`: the
    /// reference's debug layer ends the program there (its tests `*_too_many_requests`,
    /// `*_register_null_memreg`); any other error unchanged.
    pub(crate) fn overflow(&self, call: &'static str, e: Error) -> Error {
        if e.kind() == ErrorKind::OutOfMemory {
            return Error::misuse(call, e.message().to_string());
        }
        e
    }

    /// Before `deregister`: `slot` must not be the remote side of a request queued in
    /// this superstep (the sync would look it up at the remote process, where the same
    /// collective deregistration removed it).
    pub(crate) fn deregistering(&self, slot: Memslot, queue: &MessageQueue) -> Result<()> {
        let named = queue.requests().iter().position(|r| match *r {
            Request::Put { dst_slot, .. } => dst_slot == slot,
            Request::Get { src_slot, .. } => src_slot == slot,
        });
        match named {
            Some(k) => Err(Error::misuse("lpf_deregister", format!(
                "deregister: {slot} is the remote side of this process's request {k} queued in this superstep; deregister it after the next sync"
            ))),
            None => Ok(()),
        }
    }

    /// After a successful `deregister`.
    pub(crate) fn deregistered(&mut self, slot: Memslot) {
        if slot.is_global() {
            self.deregistered.push(slot);
        }
    }

    /// The collective checks of the superstep that `queue` ends, run by every process
    /// at the start of its sync, before any data moves.
    pub(crate) fn at_sync(&mut self, engine: &mut dyn Engine, register: &Register, queue: &MessageQueue) -> Result<()> {
        let (me, p) = (engine.pid(), engine.nprocs() as usize);
        let requests = queue.requests();
        let hash = self.deregistered.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, s| {
            (h ^ s.to_raw() as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mine = [requests.len() as u64, self.deregistered.len() as u64, hash];
        let mut all = vec![0u64; mine.len() * p];
        engine.allgather(&mine, &mut all)?;
        self.deregistered.clear();
        for q in 1..p {
            let (count, their_hash) = (all[q * 3 + 1], all[q * 3 + 2]);
            if count != all[1] {
                return Err(Error::out_of_step(format!(
                    "sync: process {q} deregistered {count} global slots in this superstep, process 0 deregistered {} (global deregistration is collective)",
                    all[1]
                )));
            }
            if their_hash != all[2] {
                return Err(Error::out_of_step(format!(
                    "sync: processes 0 and {q} deregistered their {count} global slots of this superstep in different orders (global deregistration is collective and ordered)"
                )));
            }
        }
        let longest = (0..p).map(|q| all[q * 3] as usize).max().unwrap_or(0);
        if longest == 0 {
            return Ok(());
        }
        let mut mine = vec![u64::MAX; longest * WORDS];
        for (r, words) in requests.iter().zip(mine.chunks_mut(WORDS)) {
            words.copy_from_slice(&match *r {
                Request::Put { dst_pid, dst_slot, dst_offset, size, .. } => {
                    [dst_pid as u64, dst_slot.to_raw() as u64, dst_offset as u64, size as u64, KIND_PUT]
                }
                Request::Get { src_pid, src_slot, src_offset, size, .. } => {
                    [src_pid as u64, src_slot.to_raw() as u64, src_offset as u64, size as u64, KIND_GET]
                }
            });
        }
        let mut all = vec![0u64; mine.len() * p];
        engine.allgather(&mine, &mut all)?;
        messages_fit(me, queue.capacity(), requests.len(), &all)?;
        conflicts_at(me, register, requests, &all, longest)
    }
}

/// Whether this process's queue of `capacity` held the superstep's messages as the
/// specification counts them: its own `own` requests, and every request (its own
/// included: a put to itself counts twice) whose remote side it is, from the gathered
/// request words `all`.
fn messages_fit(me: Pid, capacity: usize, own: usize, all: &[u64]) -> Result<()> {
    let incoming = all.chunks(WORDS).filter(|w| w[0] == me as u64).count();
    if own + incoming > capacity {
        return Err(Error::misuse("lpf_sync", format!(
            "sync: too many messages at process {me} in this superstep: its message queue holds {capacity}, but it issued {own} \
             requests and is the remote side of {incoming} (a message counts at its origin and at its remote side; \
             call lpf_resize_message_queue, then lpf_sync)"
        )));
    }
    Ok(())
}

/// Who touches a range of this process's memory.
#[derive(Clone, Copy)]
enum Toucher {
    /// This process's `k`-th request of the superstep (its local side).
    Own(usize),
    /// Request `k` of process `q`, whose remote side is `slot` + `offset` here.
    Remote { q: Pid, k: usize, put: bool, slot: Memslot, offset: usize },
}

/// The conflicts in this process's memory: every range read in the superstep against
/// every range written, O(n log n).
fn conflicts_at(me: Pid, register: &Register, own: &[Request], all: &[u64], longest: usize) -> Result<()> {
    let mut reads: Vec<(usize, usize, Toucher)> = Vec::new();
    let mut writes: Vec<(usize, usize, Toucher)> = Vec::new();
    for (k, r) in own.iter().enumerate() {
        match *r {
            Request::Put { src, size, .. } => reads.push((src as usize, src as usize + size, Toucher::Own(k))),
            Request::Get { dst, size, .. } => writes.push((dst as usize, dst as usize + size, Toucher::Own(k))),
        }
    }
    for (i, w) in all.chunks(WORDS).enumerate() {
        let (q, k) = ((i / longest) as Pid, i % longest);
        if w[0] != me as u64 {
            continue;
        }
        let (slot, offset, size) = (Memslot::from_raw(w[1] as usize), w[2] as usize, w[3] as usize);
        // A slot the sync will refuse anyway (unknown here, out of bounds) is left to it.
        let Some(at) = register.active_range(slot, offset, size) else { continue };
        let range = (at as usize, at as usize + size, Toucher::Remote { q, k, put: w[4] == KIND_PUT, slot, offset });
        if w[4] == KIND_PUT {
            writes.push(range);
        } else {
            reads.push(range);
        }
    }
    writes.sort_unstable_by_key(|w| w.0);
    // The longest end among writes[..=i], to find any write overlapping a read.
    let mut reach = Vec::with_capacity(writes.len());
    let mut furthest = (0usize, 0usize);
    for (i, w) in writes.iter().enumerate() {
        if w.1 > furthest.0 {
            furthest = (w.1, i);
        }
        reach.push(furthest);
    }
    for read in &reads {
        // Writes starting before the read's end; the one reaching furthest overlaps it
        // if any does.
        let n = writes.partition_point(|w| w.0 < read.1);
        if n > 0 && reach[n - 1].0 > read.0 {
            let write = &writes[reach[n - 1].1];
            return Err(Error::misuse("lpf_sync", format!(
                "sync: read-write conflict in the memory of process {me}: {} reads bytes that {} writes in the same superstep",
                describe(me, own, read.2),
                describe(me, own, write.2)
            )));
        }
    }
    Ok(())
}

fn describe(me: Pid, own: &[Request], t: Toucher) -> String {
    match t {
        Toucher::Own(k) => match own[k] {
            Request::Put { dst_pid, size, .. } => format!("the put of {size} bytes from process {me} to process {dst_pid} (its request {k}; source)"),
            Request::Get { src_pid, size, .. } => format!("the get of {size} bytes by process {me} from process {src_pid} (its request {k}; destination)"),
        },
        Toucher::Remote { q, k, put, slot, offset } => {
            let what = if put { "put to" } else { "get from" };
            format!("the {what} process {me} by process {q} (its request {k}; {slot} at offset {offset})")
        }
    }
}
