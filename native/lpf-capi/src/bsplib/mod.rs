//! `lpf/bsplib.h` (BSPlib over an LPF context, `bsplib_*`) and `bsp/bsp.h` (classic
//! BSPlib with one implicit instance per process, `bsp_*` = `bsplibstd_*`/`mcbsp_*`).
//!
//! # How a `bsplib_sync` maps onto LPF
//!
//! BSPlib needs no capacity reservations and lets a process receive any number of
//! messages of unknown size; LPF needs both reserved in advance, collectively. So one
//! BSPlib superstep is up to four LPF supersteps:
//!
//! 1. **counts**: every process writes its row (puts, gets and bsmp bytes per peer, its
//!    numbers of pushes and pops, its next tag size, and the size of each push and the
//!    number of each registration it pops) into a global P x R table at every process.
//!    All processes then know the whole table and take the same decisions: mismatches
//!    are errors everywhere, and puts and gets are later checked against the sizes
//!    every process registered. A row marked "exit" comes from `bsplib_destroy`, which
//!    is a superstep of this kind too.
//! 2. **resize** (only when the table asks for more than was reserved): message queue
//!    and memory register grow (at least doubling), then a sync.
//! 3. **gets and inbox** (only when some process gets or sends bsmp messages): the
//!    bsmp inbox (exactly the bytes addressed to this process) is registered globally;
//!    the gets run into a local staging buffer, which is copied to their destinations
//!    after the sync. So gets read the values from before this superstep's puts, as
//!    BSPlib prescribes.
//! 4. **puts and messages**: buffered puts (`bsp_put`, copied at the call) and
//!    unbuffered ones (`bsp_hpput`, read at the sync) go from a local staging buffer;
//!    every process's messages for q go as one put into q's inbox at the offset the
//!    table gives. New registrations (`push_reg`) are made in this superstep and so are
//!    usable after it; `pop_reg`s take effect after it.
//!
//! A message in the inbox is `[payload length: u64][tag: tagsize bytes][payload]`.


pub mod capi;
pub mod classic;
mod sync;

use super::{context, lpf_pid_t, lpf_t, ERR_OUT_OF_MEMORY, SUCCESS};
use lpf::{Error, Memslot, SYNC_DEFAULT};
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::time::Instant;

pub type bsplib_err_t = c_int;
pub const BSPLIB_SUCCESS: bsplib_err_t = 0;
pub const BSPLIB_ERR_OUT_OF_MEMORY: bsplib_err_t = 1;
pub const BSPLIB_ERR_MEMORY_NOT_REGISTERED: bsplib_err_t = 2;
pub const BSPLIB_ERR_PUSHREG_MISMATCH: bsplib_err_t = 3;
pub const BSPLIB_ERR_POPREG_MISMATCH: bsplib_err_t = 4;
pub const BSPLIB_ERR_TAGSIZE_MISMATCH: bsplib_err_t = 5;
pub const BSPLIB_ERR_NULL_POINTER: bsplib_err_t = 6;
pub const BSPLIB_ERR_PID_OUT_OF_RANGE: bsplib_err_t = 7;
pub const BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE: bsplib_err_t = 8;
pub const BSPLIB_ERR_EMPTY_MESSAGE_QUEUE: bsplib_err_t = 9;
pub const BSPLIB_ERR_FATAL: bsplib_err_t = 10;

/// An error of a BSPlib call: its code and a message naming the problem.
struct BspErr(bsplib_err_t, String);

type R<T> = Result<T, BspErr>;

impl From<Error> for BspErr {
    fn from(e: Error) -> BspErr {
        let code = match e.kind().code() {
            c if c == ERR_OUT_OF_MEMORY => BSPLIB_ERR_OUT_OF_MEMORY,
            c if c == SUCCESS => BSPLIB_SUCCESS,
            _ => BSPLIB_ERR_FATAL,
        };
        BspErr(code, e.message().to_string())
    }
}

fn code_name(code: bsplib_err_t) -> &'static str {
    const NAMES: [&str; 11] = [
        "BSPLIB_SUCCESS",
        "BSPLIB_ERR_OUT_OF_MEMORY",
        "BSPLIB_ERR_MEMORY_NOT_REGISTERED",
        "BSPLIB_ERR_PUSHREG_MISMATCH",
        "BSPLIB_ERR_POPREG_MISMATCH",
        "BSPLIB_ERR_TAGSIZE_MISMATCH",
        "BSPLIB_ERR_NULL_POINTER",
        "BSPLIB_ERR_PID_OUT_OF_RANGE",
        "BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE",
        "BSPLIB_ERR_EMPTY_MESSAGE_QUEUE",
        "BSPLIB_ERR_FATAL",
    ];
    NAMES.get(code as usize).copied().unwrap_or("BSPLIB_ERR_FATAL")
}

fn err<T>(code: bsplib_err_t, msg: impl Into<String>) -> R<T> {
    Err(BspErr(code, msg.into()))
}

/// One registration: the ident the program names it by, its LPF slot, its number
/// (registrations are numbered in the order they are made, the same on every process,
/// so `seq` names one registration everywhere whatever address each process gave it)
/// and the size every process registered (indexed by pid; puts and gets are checked
/// against the size at the process they access).
struct Reg {
    ident: usize,
    slot: Memslot,
    seq: u64,
    sizes: Vec<usize>,
}

enum PutSrc {
    /// bsp_put: the bytes were copied into `stage` at this offset.
    Copied(usize),
    /// bsp_hpput: read from the program's memory at the sync.
    Pointer(*const u8),
}

struct Put {
    pid: lpf_pid_t,
    slot: Memslot,
    offset: usize,
    size: usize,
    src: PutSrc,
}

struct Get {
    pid: lpf_pid_t,
    slot: Memslot,
    offset: usize,
    dst: *mut u8,
    size: usize,
}

struct Send {
    pid: lpf_pid_t,
    /// Offset of the encoded message in `outbox`: its length and tag, copied at the
    /// call, then (buffered) its payload ...
    at: usize,
    /// ... or (unbuffered, `bsp_hpsend`) the program's payload, read at the sync.
    hp: Option<*const u8>,
    payload: usize,
}

/// The state of one BSPlib instance (a `bsplib_t`).
pub struct BSPlib {
    ctx: lpf_t,
    pid: lpf_pid_t,
    p: lpf_pid_t,
    start: Instant,
    regs: Vec<Reg>,
    /// The number the next registration gets (`Reg::seq`).
    next_seq: u64,
    pushes: Vec<(usize, usize)>,
    /// The registrations popped in this superstep, by number, in call order.
    pops: Vec<u64>,
    mem_cap: usize,
    msg_cap: usize,
    /// The count table: a row per process (`row_len` words).
    table: Vec<u64>,
    table_slot: Memslot,
    /// Room for registration entries (push sizes, popped numbers) in a row.
    entries_cap: usize,
    /// Some process has called `bsplib_destroy` (or this one did and failed): the
    /// instance takes part in no further superstep.
    ended: bool,
    stage: Vec<u8>,
    puts: Vec<Put>,
    gets: Vec<Get>,
    outbox: Vec<u8>,
    sends: Vec<Send>,
    tagsize: usize,
    next_tagsize: usize,
    /// Messages received in the last sync and the queue of their (start) offsets.
    inbox: Vec<u8>,
    queue: VecDeque<usize>,
    /// The tag size of the messages in `queue` (that of the superstep they were sent in).
    received_tagsize: usize,
}

/// A BSPlib instance as the C functions see it.
pub type bsplib_t = *mut BSPlib;

/// Internal slots: the count table, the inbox, the put and the get staging areas (and,
/// while the table grows, its successor, in place of the inbox and staging areas).
const OWN_SLOTS: usize = 4;
const LEN: usize = 8;

/// A row of the count table: the puts, gets and message bytes to/from each peer (3·P
/// words), then these fields, then the row's registration entries: the size of each
/// `push_reg` of the superstep, then the number of each registration it pops.
const F_PUSHES: usize = 0;
const F_POPS: usize = 1;
const F_TAGSIZE: usize = 2;
/// Nonzero in the row a process sends from `bsplib_destroy`.
const F_EXIT: usize = 3;
const FIELDS: usize = 4;
/// Registration entries a row holds at first (it grows on demand).
const ENTRIES_AT_FIRST: usize = 16;

impl BSPlib {
    fn row_len(&self) -> usize {
        3 * self.p as usize + FIELDS + self.entries_cap
    }

    /// The index of field `f` in a row.
    fn field(&self, f: usize) -> usize {
        3 * self.p as usize + f
    }

    /// Word `i` of process `q`'s row.
    fn cell(&self, q: usize, i: usize) -> u64 {
        self.table[q * self.row_len() + i]
    }

    /// Registration entry `k` of process `q`'s row.
    fn entry(&self, q: usize, k: usize) -> u64 {
        self.cell(q, self.field(FIELDS) + k)
    }

    /// One superstep: `row` (`row_len` words) becomes this process's row of every
    /// process's table.
    fn exchange_row(&mut self, row: &[u64]) -> R<()> {
        let c = self.ctx()?;
        let (me, rl) = (self.pid as usize, self.row_len());
        self.table[me * rl..(me + 1) * rl].copy_from_slice(row);
        for q in 0..self.p {
            if q as usize != me {
                c.put(self.table_slot, me * rl * 8, q, self.table_slot, me * rl * 8, rl * 8, 0)?;
            }
        }
        c.sync(SYNC_DEFAULT)?;
        Ok(())
    }

    /// The processes other than this one whose last row was sent by `bsplib_destroy`.
    fn exited_peers(&self) -> Vec<usize> {
        (0..self.p as usize).filter(|&q| q != self.pid as usize && self.cell(q, self.field(F_EXIT)) != 0).collect()
    }

    /// Rows get room for at least `entries` registration entries: a new table is
    /// registered and activated (a superstep every process takes, as all decide it from
    /// the same table), then the old one is released.
    fn grow_table(&mut self, entries: usize) -> R<()> {
        let c = self.ctx()?;
        let cap = entries.max(2 * self.entries_cap);
        let len = self.p as usize * (3 * self.p as usize + FIELDS + cap);
        let mut table = Vec::new();
        table.try_reserve_exact(len).map_err(|_| BspErr(BSPLIB_ERR_OUT_OF_MEMORY, format!("bsp_sync: cannot allocate a count table of {len} words")))?;
        table.resize(len, 0u64);
        // SAFETY: `table` is moved into `self.table` below without reallocating, and
        // stays registered exactly as long as it is the instance's table.
        let slot = unsafe { c.register_global_raw(table.as_mut_ptr() as *mut u8, len * 8)? };
        c.sync(SYNC_DEFAULT)?;
        c.deregister(self.table_slot)?;
        self.table = table;
        self.table_slot = slot;
        self.entries_cap = cap;
        Ok(())
    }

    /// Drops what the program asked for in this superstep: once a sync has carried it
    /// out, or after a mismatch (which every process detects alike, so the instance
    /// stays consistent).
    fn drop_requests(&mut self) {
        self.pushes.clear();
        self.pops.clear();
        self.puts.clear();
        self.gets.clear();
        self.sends.clear();
        self.stage.clear();
        self.outbox.clear();
    }

    fn ctx(&self) -> R<&'static mut lpf::Context> {
        // SAFETY: the context outlives the instance (bsplib_destroy comes first).
        Ok(unsafe { context(self.ctx, "bsplib")? })
    }

    fn create(ctx: lpf_t, pid: lpf_pid_t, p: lpf_pid_t) -> R<Box<BSPlib>> {
        // SAFETY: the program passes the context it runs in (the bsplib.h contract),
        // which outlives the instance.
        let c = unsafe { context(ctx, "bsplib_create")? };
        if pid != c.pid() || p != c.nprocs() {
            return err(BSPLIB_ERR_PID_OUT_OF_RANGE, format!("bsplib_create: pid {pid} of {p} is not this context's pid {} of {}", c.pid(), c.nprocs()));
        }
        let mut b = Box::new(BSPlib {
            ctx,
            pid,
            p,
            start: Instant::now(),
            regs: Vec::new(),
            next_seq: 0,
            pushes: Vec::new(),
            pops: Vec::new(),
            mem_cap: OWN_SLOTS + 16,
            msg_cap: 4 * p as usize + 16,
            table: Vec::new(),
            table_slot: Memslot::INVALID,
            entries_cap: ENTRIES_AT_FIRST,
            ended: false,
            stage: Vec::new(),
            puts: Vec::new(),
            gets: Vec::new(),
            outbox: Vec::new(),
            sends: Vec::new(),
            tagsize: 0,
            next_tagsize: 0,
            inbox: Vec::new(),
            queue: VecDeque::new(),
            received_tagsize: 0,
        });
        b.table = vec![0u64; p as usize * b.row_len()];
        c.resize_memory_register(b.mem_cap)?;
        c.resize_message_queue(b.msg_cap)?;
        c.sync(SYNC_DEFAULT)?;
        let t = b.table.as_mut_ptr() as *mut u8;
        // SAFETY: the table is not resized while registered: `grow_table` registers a
        // new one before dropping it, and `destroy` deregisters it.
        b.table_slot = unsafe { c.register_global_raw(t, b.table.len() * 8)? };
        c.sync(SYNC_DEFAULT)?;
        Ok(b)
    }

    /// The instance's last superstep: every process sends a row marked "exit"; when
    /// every other process did too, the registrations are released. A process still in
    /// `bsp_sync` gets this superstep as the first of its sync and fails with
    /// BSPLIB_ERR_FATAL, as does this destroy; neither takes a further superstep, so
    /// unequal numbers of syncs end in errors on every process, with the LPF context
    /// intact. A failed destroy keeps its registrations (a peer may still write to
    /// them): the caller leaks the instance.
    fn destroy(&mut self) -> R<()> {
        if self.ended {
            return err(BSPLIB_ERR_FATAL, "bsplib_destroy: another process called bsplib_destroy while this one was in bsp_sync (the processes called bsp_sync different numbers of times)");
        }
        self.ended = true;
        let mut row = vec![0u64; self.row_len()];
        row[self.field(F_EXIT)] = 1;
        self.exchange_row(&row)?;
        let exited = self.exited_peers();
        let syncing: Vec<usize> = (0..self.p as usize).filter(|&q| q != self.pid as usize && !exited.contains(&q)).collect();
        if !syncing.is_empty() {
            return err(BSPLIB_ERR_FATAL, format!("bsplib_destroy: process(es) {syncing:?} called bsp_sync instead (the processes called bsp_sync different numbers of times)"));
        }
        let c = self.ctx()?;
        for r in self.regs.iter().rev() {
            c.deregister(r.slot)?;
        }
        c.deregister(self.table_slot)?;
        Ok(())
    }

    fn check_pid(&self, pid: lpf_pid_t, what: &str) -> R<()> {
        if pid >= self.p {
            return err(BSPLIB_ERR_PID_OUT_OF_RANGE, format!("{what}: pid {pid} is not below nprocs {}", self.p));
        }
        Ok(())
    }

    /// The slot of `size` bytes at `offset` in the registration named `ident` (its
    /// most recent, popped in this superstep or not) at process `pid`, checked in the
    /// reference's order: registered, pid, within the size `pid` registered.
    fn remote(&self, ident: *const c_void, pid: lpf_pid_t, offset: usize, size: usize, what: &str) -> R<Memslot> {
        let Some(r) = self.regs.iter().rev().find(|r| r.ident == ident as usize) else {
            return err(BSPLIB_ERR_MEMORY_NOT_REGISTERED, format!("{what}: {ident:p} was not registered with bsp_push_reg (or its registration is not active yet: it is after the next bsp_sync)"));
        };
        self.check_pid(pid, what)?;
        let limit = r.sizes[pid as usize];
        if size > limit - offset.min(limit) {
            return err(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, format!("{what}: {size} bytes at offset {offset} exceed the {limit} bytes process {pid} registered for {ident:p}"));
        }
        Ok(r.slot)
    }

    fn push_reg(&mut self, ident: *const c_void, size: usize) -> R<()> {
        if ident.is_null() && size > 0 {
            return err(BSPLIB_ERR_NULL_POINTER, format!("bsp_push_reg: NULL with size {size}"));
        }
        self.pushes.push((ident as usize, size));
        Ok(())
    }

    /// Pops the most recent registration of `ident` not yet popped in this superstep
    /// (it stays usable until the sync). Which registration that is must agree on
    /// every process (checked at the sync).
    fn pop_reg(&mut self, ident: *const c_void) -> R<()> {
        let named = |r: &&Reg| r.ident == ident as usize;
        match self.regs.iter().rev().filter(named).find(|r| !self.pops.contains(&r.seq)) {
            Some(r) => {
                self.pops.push(r.seq);
                Ok(())
            }
            None if self.regs.iter().any(|r| named(&r)) => err(BSPLIB_ERR_MEMORY_NOT_REGISTERED, format!("bsp_pop_reg: every registration of {ident:p} is already popped in this superstep")),
            None => err(BSPLIB_ERR_MEMORY_NOT_REGISTERED, format!("bsp_pop_reg: {ident:p} is not registered")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn put(&mut self, pid: lpf_pid_t, src: *const c_void, dst: *const c_void, offset: usize, size: usize, buffered: bool, what: &str) -> R<()> {
        // As the reference: a zero-byte put does nothing, whatever it names.
        if size == 0 {
            return Ok(());
        }
        if src.is_null() || dst.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, format!("{what}: the source ({src:p}) or the destination ({dst:p}) is NULL"));
        }
        let slot = self.remote(dst, pid, offset, size, what)?;
        let src = if buffered {
            let at = self.stage.len();
            // SAFETY: the program passes `size` readable bytes at `src`.
            self.stage.extend_from_slice(unsafe { std::slice::from_raw_parts(src as *const u8, size) });
            PutSrc::Copied(at)
        } else {
            PutSrc::Pointer(src as *const u8)
        };
        self.puts.push(Put { pid, slot, offset, size, src });
        Ok(())
    }

    fn get(&mut self, pid: lpf_pid_t, src: *const c_void, offset: usize, dst: *mut c_void, size: usize, what: &str) -> R<()> {
        // As the reference: a zero-byte get does nothing, whatever it names.
        if size == 0 {
            return Ok(());
        }
        if src.is_null() || dst.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, format!("{what}: the source ({src:p}) or the destination ({dst:p}) is NULL"));
        }
        let slot = self.remote(src, pid, offset, size, what)?;
        self.gets.push(Get { pid, slot, offset, dst: dst as *mut u8, size });
        Ok(())
    }

    fn send(&mut self, pid: lpf_pid_t, tag: *const c_void, payload: *const c_void, size: usize, buffered: bool, what: &str) -> R<()> {
        self.check_pid(pid, what)?;
        if (tag.is_null() && self.tagsize > 0) || (payload.is_null() && size > 0) {
            return err(BSPLIB_ERR_NULL_POINTER, format!("{what}: NULL tag (tag size {}) or payload ({size} bytes)", self.tagsize));
        }
        // The tag is copied at the call also by bsp_hpsend (BSPlib: only its payload is
        // unbuffered), so the program may reuse the tag's variable at once.
        let at = self.outbox.len();
        self.outbox.extend_from_slice(&(size as u64).to_le_bytes());
        // SAFETY: the program passes tagsize readable bytes at `tag` (checked non-NULL
        // above when tagsize > 0) and, when buffered, `size` at `payload`.
        unsafe {
            if self.tagsize > 0 {
                self.outbox.extend_from_slice(std::slice::from_raw_parts(tag as *const u8, self.tagsize));
            }
            if buffered && size > 0 {
                self.outbox.extend_from_slice(std::slice::from_raw_parts(payload as *const u8, size));
            }
        }
        let hp = if buffered { None } else { Some(payload as *const u8) };
        self.sends.push(Send { pid, at, hp, payload: size });
        Ok(())
    }

    fn encoded(&self, payload: usize) -> usize {
        LEN + self.tagsize + payload
    }

    fn msg_len(&self, at: usize) -> usize {
        u64::from_le_bytes(self.inbox[at..at + LEN].try_into().unwrap()) as usize
    }

    fn qsize(&self) -> (usize, usize) {
        (self.queue.len(), self.queue.iter().map(|&at| self.msg_len(at)).sum())
    }

    /// (payload length, tag pointer, payload pointer) of the first message.
    fn first(&self) -> Option<(usize, *const u8, *const u8)> {
        let at = *self.queue.front()?;
        // SAFETY: `receive` queued `at` only where a whole message (length, tag of
        // `received_tagsize` bytes, payload) lies in `inbox`.
        let tag = unsafe { self.inbox.as_ptr().add(at + LEN) };
        // SAFETY: as above: the tag's bytes lie in `inbox`, so its end does too.
        Some((self.msg_len(at), tag, unsafe { tag.add(self.received_tagsize) }))
    }

    /// The tag size the queued messages were sent with (the one in force before the
    /// last sync switched to the next).
    fn tagsize_received(&self) -> usize {
        self.received_tagsize
    }
}
