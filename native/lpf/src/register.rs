//! The memory register: which areas a process has registered, under which slot ids.
//!
//! Global and local slots live in two tables so that global ids come out identical on
//! every process (registration and deregistration of global slots are collective and in
//! the same order, and each table reuses indices last-in-first-out). Every lookup is O(1)
//! and checks the generation, so a stale or deregistered id is an error, never a write.

use crate::error::{Error, Result};
use crate::types::{Memslot, Pid};
use std::collections::TryReserveError;

/// The error of a sync in which process `a` registered `n` global slots and process `b`
/// registered `m`, another number.
pub(crate) fn unequal_global_registrations(a: Pid, n: usize, b: Pid, m: usize) -> Error {
    Error::out_of_step(format!(
        "register_global is collective, but process {a} registered {n} global slots in this superstep and process {b} \
         registered {m}"
    ))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    /// A global slot registered in the current superstep: usable after the next sync.
    Pending,
    Active,
    /// Its owner's borrow ended without `deregister`: it keeps its id (a global id must
    /// stay consistent across processes) but no communication may touch it.
    Dead,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    ptr: *mut u8,
    size: usize,
    generation: u32,
    state: State,
    /// `Register::superstep + 1` when a queued put or get has this slot as its local
    /// side in the current superstep (its pointer is read or written at the sync).
    queued_in: u64,
}

/// A registered area as communication sees it.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub ptr: *mut u8,
    pub size: usize,
}

impl Area {
    /// The pointer to `offset..offset + len` of the area, or a misuse of `call` naming
    /// `what` (formatted only on error: pass `format_args!` on hot paths).
    pub fn range(&self, slot: Memslot, offset: usize, len: usize, call: &'static str, what: impl std::fmt::Display) -> Result<*mut u8> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(self.ptr.wrapping_add(offset)),
            _ => Err(Error::misuse(call, format!(
                "{what}: offset {offset} + size {len} exceeds the {} bytes registered under {slot}",
                self.size
            ))),
        }
    }
}

/// The generation of an index's first slot. Not 0, so that every slot id is at least
/// 2^32: a small number (e.g. `LPF_INVALID_MEMSLOT + 2`, which wraps to 1, as the
/// reference's debug test `func_lpf_debug_put_unknown_dest_slot` makes one) is never
/// an id handed out, and is refused as unknown.
const FIRST_GENERATION: u32 = 1;

/// The generation after `g`, from [`FIRST_GENERATION`] up to `u32::MAX - 1` and round:
/// never 0 (see there) nor `u32::MAX`, so that no id equals `LPF_INVALID_MEMSLOT`.
fn next_generation(g: u32) -> u32 {
    if g >= u32::MAX - 1 {
        FIRST_GENERATION
    } else {
        g + 1
    }
}

#[derive(Default)]
struct SlotTable {
    entries: Vec<Entry>,
    free: Vec<u32>,
}

/// Room in `v` for `total` elements in all (what a resize reserves now).
pub(crate) fn reserve_total<T>(v: &mut Vec<T>, total: usize) -> std::result::Result<(), TryReserveError> {
    v.try_reserve(total.saturating_sub(v.len()))
}

impl SlotTable {
    fn reserve(&mut self, total: usize) -> std::result::Result<(), TryReserveError> {
        reserve_total(&mut self.entries, total)?;
        reserve_total(&mut self.free, total)
    }

    fn insert(&mut self, ptr: *mut u8, size: usize, state: State) -> (u32, u32) {
        if let Some(index) = self.free.pop() {
            let e = &mut self.entries[index as usize];
            *e = Entry { ptr, size, generation: e.generation, state, queued_in: 0 };
            (index, e.generation)
        } else {
            let index = self.entries.len() as u32;
            self.entries.push(Entry { ptr, size, generation: FIRST_GENERATION, state, queued_in: 0 });
            (index, FIRST_GENERATION)
        }
    }

    fn entry(&self, slot: Memslot) -> Option<&Entry> {
        self.entries
            .get(slot.index())
            .filter(|e| e.generation == slot.generation() && e.state != State::Free)
    }

    fn entry_mut(&mut self, slot: Memslot) -> Option<&mut Entry> {
        self.entries
            .get_mut(slot.index())
            .filter(|e| e.generation == slot.generation() && e.state != State::Free)
    }
}

/// One process's memory register with LPF's delayed-resize semantics.
///
/// It also knows, for every usable global slot, the size each process registered under
/// it (learnt when the slot is activated), so that the remote side of a put or get is
/// checked in O(1) when the call is made.
#[derive(Default)]
pub struct Register {
    nprocs: usize,
    /// `remote_sizes[index * nprocs + q]`: size of global slot `index` at process q.
    remote_sizes: Vec<usize>,
    global: SlotTable,
    local: SlotTable,
    used: usize,
    capacity: usize,
    requested: Option<usize>,
    /// Global slots registered this superstep, activated by the next sync.
    pending: Vec<Memslot>,
    /// Number of syncs so far (stamps `Entry::queued_in`).
    superstep: u64,
    /// A slot whose memory was released (its `Registered` dropped) while a queued
    /// request has it as its local side: the next sync must fail rather than touch it.
    released_while_queued: Option<Memslot>,
}

// SAFETY: the raw pointers are handles to user memory whose validity the registering
// caller guarantees; the register itself never dereferences them.
unsafe impl Send for Register {}

/// Largest number of slots a register can hold (31-bit table index).
const MAX_SLOTS: usize = 1 << 31;

impl Register {
    pub fn new(nprocs: usize) -> Register {
        Register { nprocs: nprocs.max(1), ..Default::default() }
    }

    /// `resize_memory_register`: reserves memory now, takes effect at the next sync.
    pub fn request_capacity(&mut self, max_regs: usize) -> Result<()> {
        let oom = || Error::out_of_memory(format!("cannot reserve a memory register of {max_regs} slots"));
        let sizes = max_regs.checked_mul(self.nprocs).filter(|_| max_regs <= MAX_SLOTS).ok_or_else(oom)?;
        self.global
            .reserve(max_regs)
            .and_then(|()| self.local.reserve(max_regs))
            .and_then(|()| reserve_total(&mut self.pending, max_regs))
            .and_then(|()| reserve_total(&mut self.remote_sizes, sizes))
            .map_err(|_| oom())?;
        self.requested = Some(max_regs);
        Ok(())
    }

    /// The global slots registered in this superstep, in registration order (the same
    /// on every process), and the sizes registered here under them.
    pub fn pending_sizes(&self) -> Vec<u64> {
        self.pending.iter().map(|&s| self.global.entry(s).map_or(0, |e| e.size as u64)).collect()
    }

    /// The global slots registered in this superstep, in registration order, with
    /// their memory (for engines that expose global memory to remote access).
    #[cfg(feature = "mpi")]
    pub fn pending_areas(&self) -> Vec<(Memslot, *mut u8, usize)> {
        self.pending.iter().map(|&s| self.global.entry(s).map_or((s, std::ptr::null_mut(), 0), |e| (s, e.ptr, e.size))).collect()
    }

    /// Applies what the superstep that just ended decided. `all_sizes[q * pending + k]`
    /// is the size process q registered for the k-th pending global slot (the layout
    /// `Engine::allgather` produces from each process's `pending_sizes`).
    pub fn on_sync(&mut self, all_sizes: &[u64]) {
        self.superstep += 1;
        if let Some(c) = self.requested.take() {
            self.capacity = c;
        }
        let p = self.nprocs;
        let pending = self.pending.len();
        debug_assert_eq!(all_sizes.len(), pending * p);
        if pending == 0 {
            // The common sync: nothing registered (an empty drain still costs its setup).
            return;
        }
        for (k, slot) in self.pending.drain(..).enumerate() {
            if let Some(e) = self.global.entry_mut(slot) {
                if e.state == State::Pending {
                    e.state = State::Active;
                    let at = slot.index() * p;
                    if self.remote_sizes.len() < at + p {
                        // Within the reserved capacity: global indices stay below it.
                        self.remote_sizes.resize(at + p, 0);
                    }
                    for q in 0..p {
                        self.remote_sizes[at + q] = all_sizes[q * pending + k] as usize;
                    }
                }
            }
        }
    }

    /// The area of global `slot` at process `pid` as seen from here: its size is what
    /// `pid` registered; the pointer is meaningful only for `pid` = this process.
    pub fn remote_area(&self, slot: Memslot, pid: u32, call: &'static str) -> Result<Area> {
        let local = self.area(slot, call)?;
        let size = self.remote_sizes.get(slot.index() * self.nprocs + pid as usize).copied().unwrap_or(0);
        Ok(Area { ptr: local.ptr, size })
    }

    pub fn add(&mut self, global: bool, ptr: *mut u8, size: usize) -> Result<Memslot> {
        if self.used >= self.capacity {
            return Err(Error::out_of_memory(format!(
                "memory register full: {} of {} slots in use (call resize_memory_register, then sync)",
                self.used, self.capacity
            )));
        }
        self.used += 1;
        if global {
            let (i, g) = self.global.insert(ptr, size, State::Pending);
            let slot = Memslot::new(true, i, g);
            self.pending.push(slot);
            Ok(slot)
        } else {
            let (i, g) = self.local.insert(ptr, size, State::Active);
            Ok(Memslot::new(false, i, g))
        }
    }

    fn table(&self, slot: Memslot) -> &SlotTable {
        if slot.is_global() {
            &self.global
        } else {
            &self.local
        }
    }

    fn table_mut(&mut self, slot: Memslot) -> &mut SlotTable {
        if slot.is_global() {
            &mut self.global
        } else {
            &mut self.local
        }
    }

    pub fn remove(&mut self, slot: Memslot) -> Result<()> {
        let superstep = self.superstep;
        let table = self.table_mut(slot);
        let Some(e) = table.entry_mut(slot) else {
            return Err(Error::misuse("lpf_deregister", format!("deregister: {slot} is not registered")));
        };
        if e.queued_in == superstep + 1 {
            // Its pointer sits in the queue; the caller may free the memory once this
            // returns, so refuse rather than let the sync touch freed memory.
            return Err(Error::misuse("lpf_deregister", format!(
                "deregister: {slot} is the local side of a put or get queued in this superstep; deregister it after the next sync"
            )));
        }
        e.state = State::Free;
        e.generation = next_generation(e.generation);
        table.free.push(slot.index() as u32);
        self.used -= 1;
        Ok(())
    }

    /// Marks a slot whose memory is no longer lent to LPF: communication touching it
    /// fails from now on; its id stays taken until `deregister`.
    pub fn kill(&mut self, slot: Memslot) {
        let superstep = self.superstep;
        let Some(e) = self.table_mut(slot).entry_mut(slot) else { return };
        let queued = e.queued_in == superstep + 1;
        e.state = State::Dead;
        e.ptr = std::ptr::null_mut();
        e.size = 0;
        if queued {
            self.released_while_queued.get_or_insert(slot);
        }
    }

    /// Records that a request queued in this superstep has `slot` as its local side.
    pub fn note_queued(&mut self, slot: Memslot) {
        let superstep = self.superstep;
        if let Some(e) = self.table_mut(slot).entry_mut(slot) {
            e.queued_in = superstep + 1;
        }
    }

    /// The slot released while a queued request had it as its local side, if any (the
    /// sync must then fail before any data moves).
    pub fn released_while_queued(&self) -> Option<Memslot> {
        self.released_while_queued
    }

    /// The area under `slot` if it may take part in communication now.
    /// The pointer to `offset..offset + len` of active `slot`, or None where
    /// [`Register::area`] and [`Area::range`] would fail (the hot path of the checks:
    /// no error is built; ask those for the reason).
    #[inline]
    pub fn active_range(&self, slot: Memslot, offset: usize, len: usize) -> Option<*mut u8> {
        let e = self.table(slot).entry(slot)?;
        let end = offset.checked_add(len)?;
        (e.state == State::Active && end <= e.size).then(|| e.ptr.wrapping_add(offset))
    }

    /// The area under `slot`, or why a request of `call` may not use it.
    pub fn area(&self, slot: Memslot, call: &'static str) -> Result<Area> {
        let misuse = |msg: String| Err(Error::misuse(call, msg));
        match self.table(slot).entry(slot) {
            Some(Entry { state: State::Active, ptr, size, .. }) => Ok(Area { ptr: *ptr, size: *size }),
            Some(Entry { state: State::Pending, .. }) => {
                misuse(format!("{slot} was registered in this superstep and is usable only after the next sync"))
            }
            Some(Entry { state: State::Dead, .. }) => {
                misuse(format!("{slot} refers to memory that was released without deregister"))
            }
            _ if slot == Memslot::INVALID => misuse("LPF_INVALID_MEMSLOT used for communication".into()),
            _ => misuse(format!("{slot} is not registered (unknown or deregistered)")),
        }
    }

    /// Whether `slot` names a global registration of this process (pending or not).
    #[cfg(feature = "mpi")]
    pub fn is_known_global(&self, slot: Memslot) -> bool {
        slot.is_global() && self.global.entry(slot).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reused_lifo_with_new_generation() {
        let mut r = Register::new(1);
        r.request_capacity(4).unwrap();
        r.on_sync(&[]);
        let a = r.add(true, std::ptr::null_mut(), 0).unwrap();
        let b = r.add(true, std::ptr::null_mut(), 0).unwrap();
        r.remove(a).unwrap();
        let c = r.add(true, std::ptr::null_mut(), 0).unwrap();
        assert_eq!(c.index(), a.index());
        assert_ne!(c, a);
        assert!(r.area(a, "lpf_put").is_err());
        assert!(r.remove(a).is_err());
        r.on_sync(&[0, 0, 0]);
        assert!(r.area(b, "lpf_put").is_ok() && r.area(c, "lpf_put").is_ok());
    }

    #[test]
    fn active_range_agrees_with_area_and_range() {
        let mut mem = [0u8; 16];
        let mut r = Register::new(1);
        r.request_capacity(8).unwrap();
        r.on_sync(&[]);
        let local = r.add(false, mem.as_mut_ptr(), 16).unwrap();
        let active = r.add(true, mem.as_mut_ptr(), 16).unwrap();
        let gone = r.add(true, mem.as_mut_ptr(), 16).unwrap();
        let dead = r.add(true, mem.as_mut_ptr(), 16).unwrap();
        r.on_sync(&[16, 16, 16]);
        r.remove(gone).unwrap();
        r.kill(dead);
        let pending = r.add(true, mem.as_mut_ptr(), 16).unwrap();
        for slot in [local, active, gone, dead, pending, Memslot::INVALID] {
            for (off, len) in [(0, 16), (4, 8), (16, 0), (8, 9), (17, 0), (usize::MAX, 2)] {
                let slow = r.area(slot, "lpf_put").and_then(|a| a.range(slot, off, len, "lpf_put", "test")).ok();
                assert_eq!(r.active_range(slot, off, len), slow, "{slot} {off} {len}");
            }
        }
        assert!(r.active_range(active, 4, 8).is_some());
    }

    #[test]
    fn small_numbers_are_never_slot_ids() {
        let mut r = Register::new(1);
        r.request_capacity(4).unwrap();
        r.on_sync(&[]);
        let global = r.add(true, std::ptr::null_mut(), 0).unwrap();
        let local = r.add(false, std::ptr::null_mut(), 0).unwrap();
        r.on_sync(&[0]);
        assert!(global.to_raw() >= 1 << 32 && local.to_raw() >= 1 << 32, "{global} {local}");
        // LPF_INVALID_MEMSLOT + 2 and + 1: global and local index 0 with generation 0.
        for raw in [Memslot::INVALID.to_raw().wrapping_add(2), Memslot::INVALID.to_raw().wrapping_add(1)] {
            assert!(r.area(Memslot::from_raw(raw), "lpf_put").is_err(), "{raw}");
        }
        assert_eq!(next_generation(u32::MAX - 2), u32::MAX - 1);
        assert_eq!(next_generation(u32::MAX - 1), FIRST_GENERATION);
    }

    #[test]
    fn capacity_is_enforced_and_delayed() {
        let mut r = Register::new(1);
        assert!(r.add(false, std::ptr::null_mut(), 0).unwrap_err().kind() == crate::ErrorKind::OutOfMemory);
        r.request_capacity(1).unwrap();
        assert!(r.add(false, std::ptr::null_mut(), 0).is_err());
        r.on_sync(&[]);
        r.add(false, std::ptr::null_mut(), 0).unwrap();
        assert!(r.add(false, std::ptr::null_mut(), 0).is_err());
        assert!(r.request_capacity(usize::MAX).is_err());
        assert!(r.request_capacity(usize::MAX / 10).is_err());
        assert_eq!(r.capacity, 1);
    }
}
