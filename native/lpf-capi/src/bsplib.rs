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

use super::{context, lpf_pid_t, lpf_t, ERR_OUT_OF_MEMORY, SUCCESS};
use lpf::{Error, Memslot, SYNC_DEFAULT};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
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

    /// Drops what the program asked for in this superstep (after a mismatch, which
    /// every process detects alike, so the instance stays consistent).
    fn abandon(&mut self) {
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

    /// Step 1 of a sync: every process's row (counts, fields and registration
    /// entries) in every table, the table grown first when some row's entries do not
    /// fit; then the checks every process makes alike on the same table.
    fn exchange_counts(&mut self) -> R<()> {
        let (p, me) = (self.p as usize, self.pid as usize);
        let entries: Vec<u64> = self.pushes.iter().map(|&(_, size)| size as u64).chain(self.pops.iter().copied()).collect();
        loop {
            let mut row = vec![0u64; self.row_len()];
            for x in &self.puts {
                row[x.pid as usize] += 1;
            }
            for x in &self.gets {
                row[p + x.pid as usize] += 1;
            }
            for x in &self.sends {
                row[2 * p + x.pid as usize] += self.encoded(x.payload) as u64;
            }
            for d in 0..p {
                if row[2 * p + d] > 0 {
                    row[d] += 1;
                }
            }
            row[self.field(F_PUSHES)] = self.pushes.len() as u64;
            row[self.field(F_POPS)] = self.pops.len() as u64;
            row[self.field(F_TAGSIZE)] = self.next_tagsize as u64;
            if entries.len() <= self.entries_cap {
                let at = self.field(FIELDS);
                row[at..at + entries.len()].copy_from_slice(&entries);
            }
            self.exchange_row(&row)?;
            let exited = self.exited_peers();
            if !exited.is_empty() {
                self.ended = true;
                return err(BSPLIB_ERR_FATAL, format!("bsp_sync: process(es) {exited:?} called bsplib_destroy instead (the processes called bsp_sync different numbers of times)"));
            }
            let most = (0..p).map(|q| (self.cell(q, self.field(F_PUSHES)) + self.cell(q, self.field(F_POPS))) as usize).max().unwrap_or(0);
            if most <= self.entries_cap {
                break;
            }
            self.grow_table(most)?;
        }
        let by_pid = |f: usize| -> Vec<u64> { (0..p).map(|q| self.cell(q, self.field(f))).collect() };
        let (pushes, pops, tagsizes) = (by_pid(F_PUSHES), by_pid(F_POPS), by_pid(F_TAGSIZE));
        if pushes[me] != self.pushes.len() as u64 || pops[me] != self.pops.len() as u64 {
            return err(BSPLIB_ERR_FATAL, "bsp_sync: the count table is inconsistent");
        }
        let mismatch = if pushes.iter().any(|&n| n != pushes[0]) {
            Some((BSPLIB_ERR_PUSHREG_MISMATCH, format!("the processes registered different numbers of areas in this superstep (bsp_push_reg counts by pid: {pushes:?})")))
        } else if pops.iter().any(|&n| n != pops[0]) {
            Some((BSPLIB_ERR_POPREG_MISMATCH, format!("the processes deregistered different numbers of areas in this superstep (bsp_pop_reg counts by pid: {pops:?})")))
        } else if tagsizes.iter().any(|&n| n != tagsizes[0]) {
            Some((BSPLIB_ERR_TAGSIZE_MISMATCH, format!("the processes set different tag sizes for the next superstep (by pid: {tagsizes:?})")))
        } else {
            let first = self.pushes.len();
            (0..self.pops.len()).find(|&k| (0..p).any(|q| self.entry(q, first + k) != self.entry(0, first + k))).map(|k| {
                let seqs: Vec<u64> = (0..p).map(|q| self.entry(q, first + k)).collect();
                (BSPLIB_ERR_POPREG_MISMATCH, format!("bsp_pop_reg number {k} of this superstep names different registrations on different processes (registration numbers by pid: {seqs:?}; a process pops the most recent registration of the address it names)"))
            })
        };
        if let Some((code, msg)) = mismatch {
            self.abandon();
            return err(code, format!("bsp_sync: {msg}; this superstep's requests are dropped"));
        }
        Ok(())
    }

    fn sync(&mut self) -> R<()> {
        if self.ended {
            return err(BSPLIB_ERR_FATAL, "bsp_sync: another process has called bsplib_destroy (the processes called bsp_sync different numbers of times)");
        }
        // 1. counts and registration entries
        self.exchange_counts()?;
        let c = self.ctx()?;
        let (p, me, rl) = (self.p as usize, self.pid as usize, self.row_len());
        let t = |q: usize, i: usize| self.table[q * rl + i] as usize;
        // The size every process gives each new registration.
        let push_sizes: Vec<Vec<usize>> = (0..self.pushes.len()).map(|k| (0..p).map(|q| self.entry(q, k) as usize).collect()).collect();
        // 2. resize
        let mut need_msgs = 0;
        let mut any_two_phase = false;
        for q in 0..p {
            let out: usize = (0..p).map(|d| t(q, d) + t(q, p + d)).sum();
            let inn: usize = (0..p).map(|s| t(s, q) + t(s, p + q)).sum();
            need_msgs = need_msgs.max(out + inn);
            any_two_phase |= (0..p).any(|d| t(q, p + d) > 0 || t(q, 2 * p + d) > 0);
        }
        let max_push = self.pushes.len();
        let need_msgs = need_msgs + 2 * p;
        let need_regs = self.regs.len() + max_push + OWN_SLOTS;
        if need_msgs > self.msg_cap || need_regs > self.mem_cap {
            self.msg_cap = self.msg_cap.max(need_msgs).max(2 * self.msg_cap.min(need_msgs));
            self.mem_cap = self.mem_cap.max(need_regs).max(2 * self.mem_cap.min(need_regs));
            c.resize_message_queue(self.msg_cap)?;
            c.resize_memory_register(self.mem_cap)?;
            c.sync(SYNC_DEFAULT)?;
        }
        // 3. gets and the inbox
        let incoming: usize = (0..p).map(|s| t(s, 2 * p + me)).sum();
        let mut inbox = vec![0u8; incoming.max(1)];
        let mut inbox_slot = Memslot::INVALID;
        if any_two_phase {
            inbox_slot = unsafe { c.register_global_raw(inbox.as_mut_ptr(), incoming)? };
            let total: usize = self.gets.iter().map(|g| g.size).sum();
            let mut gstage = vec![0u8; total.max(1)];
            let gslot = unsafe { c.register_local_raw(gstage.as_mut_ptr(), total)? };
            let mut at = 0;
            for g in &self.gets {
                c.get(g.pid, g.slot, g.offset, gslot, at, g.size, 0)?;
                at += g.size;
            }
            c.sync(SYNC_DEFAULT)?;
            c.deregister(gslot)?;
            let mut at = 0;
            for g in &self.gets {
                // SAFETY: the program passed `size` writable bytes at `dst`.
                unsafe { std::ptr::copy_nonoverlapping(gstage.as_ptr().add(at), g.dst, g.size) };
                at += g.size;
            }
        }
        // 4. puts and messages
        for x in &mut self.puts {
            if let PutSrc::Pointer(ptr) = x.src {
                let at = self.stage.len();
                self.stage.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, x.size) });
                x.src = PutSrc::Copied(at);
            }
        }
        // The messages, grouped by destination, after the put data.
        let mut by_dest: Vec<Vec<usize>> = vec![Vec::new(); p];
        for (i, s) in self.sends.iter().enumerate() {
            by_dest[s.pid as usize].push(i);
        }
        let mut msg_ranges = Vec::new();
        for (d, list) in by_dest.iter().enumerate() {
            let start = self.stage.len();
            for &i in list {
                let s = &self.sends[i];
                match s.hp {
                    None => {
                        let n = self.encoded(s.payload);
                        self.stage.extend_from_slice(&self.outbox[s.at..s.at + n]);
                    }
                    Some(payload) => {
                        let n = self.encoded(0);
                        self.stage.extend_from_slice(&self.outbox[s.at..s.at + n]);
                        if s.payload > 0 {
                            // SAFETY: bsp_hpsend's payload stays readable until the sync.
                            self.stage.extend_from_slice(unsafe { std::slice::from_raw_parts(payload, s.payload) });
                        }
                    }
                }
            }
            if self.stage.len() > start {
                let offset: usize = (0..me).map(|s| t(s, 2 * p + d)).sum();
                msg_ranges.push((d, start, self.stage.len() - start, offset));
            }
        }
        let stage_len = self.stage.len();
        if self.stage.is_empty() {
            self.stage.push(0);
        }
        let sslot = unsafe { c.register_local_raw(self.stage.as_mut_ptr(), stage_len)? };
        for x in &self.puts {
            if let PutSrc::Copied(at) = x.src {
                c.put(sslot, at, x.pid, x.slot, x.offset, x.size, 0)?;
            }
        }
        for &(d, start, len, offset) in &msg_ranges {
            c.put(sslot, start, d as lpf_pid_t, inbox_slot, offset, len, 0)?;
        }
        let mut new_regs = Vec::new();
        for (&(ident, size), sizes) in self.pushes.iter().zip(push_sizes) {
            let ptr = if ident == 0 { std::ptr::null_mut() } else { ident as *mut u8 };
            let slot = unsafe { c.register_global_raw(ptr, size)? };
            new_regs.push(Reg { ident, slot, seq: self.next_seq, sizes });
            self.next_seq += 1;
        }
        c.sync(SYNC_DEFAULT)?;
        c.deregister(sslot)?;
        if inbox_slot != Memslot::INVALID {
            c.deregister(inbox_slot)?;
        }
        // Pops name registrations made before this superstep (by number, the same on
        // every process: checked in step 1).
        for seq in std::mem::take(&mut self.pops) {
            if let Some(i) = self.regs.iter().position(|r| r.seq == seq) {
                c.deregister(self.regs[i].slot)?;
                self.regs.remove(i);
            }
        }
        self.regs.extend(new_regs);
        self.pushes.clear();
        self.puts.clear();
        self.gets.clear();
        self.sends.clear();
        self.stage.clear();
        self.outbox.clear();
        // Parse the messages with the tag size they were sent with.
        inbox.truncate(incoming);
        self.queue.clear();
        let mut at = 0;
        while at + LEN <= inbox.len() {
            let n = u64::from_le_bytes(inbox[at..at + LEN].try_into().unwrap()) as usize;
            self.queue.push_back(at);
            at += LEN + self.tagsize + n;
        }
        self.inbox = inbox;
        self.received_tagsize = self.tagsize;
        self.tagsize = self.next_tagsize;
        Ok(())
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
        let tag = unsafe { self.inbox.as_ptr().add(at + LEN) };
        Some((self.msg_len(at), tag, unsafe { tag.add(self.received_tagsize) }))
    }
}

// ---------------------------------------------------------------------------------
// lpf/bsplib.h

pub type bsplib_t = *mut BSPlib;

/// Runs a BSPlib call: panics become BSPLIB_ERR_FATAL; errors are printed (unless
/// `LPF_LOG=quiet`) and recorded for `lpf_error_message`.
fn call(what: &str, f: impl FnOnce() -> R<()>) -> bsplib_err_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => BSPLIB_SUCCESS,
        Ok(Err(BspErr(code, msg))) => {
            let msg = if msg.starts_with(what) { msg } else { format!("{what}: {msg}") };
            let e = Error::fatal(format!("{}: {msg}", code_name(code)));
            let _ = super::record(&if code == BSPLIB_ERR_OUT_OF_MEMORY { Error::out_of_memory(e.message()) } else { e });
            code
        }
        Err(_) => {
            let _ = super::record(&Error::fatal(format!("{what}: internal panic")));
            BSPLIB_ERR_FATAL
        }
    }
}

unsafe fn inst<'a>(b: bsplib_t, what: &str) -> R<&'a mut BSPlib> {
    if b.is_null() {
        return err(BSPLIB_ERR_NULL_POINTER, format!("{what}: the bsplib_t is NULL"));
    }
    Ok(&mut *b)
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_create(ctx: lpf_t, pid: lpf_pid_t, nprocs: lpf_pid_t, safemode: c_int, max_hp_regs: usize, bsplib: *mut bsplib_t) -> bsplib_err_t {
    let _ = (safemode, max_hp_regs);
    call("bsplib_create", || {
        if bsplib.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, "the bsplib_t out-pointer is NULL");
        }
        *bsplib = Box::into_raw(BSPlib::create(ctx, pid, nprocs)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_destroy(bsplib: bsplib_t) -> bsplib_err_t {
    call("bsplib_destroy", || {
        inst(bsplib, "bsplib_destroy")?.destroy()?;
        // Freed only once released everywhere; a failed destroy leaks the instance,
        // whose registrations may still be written to by a peer.
        drop(Box::from_raw(bsplib));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_time(bsplib: bsplib_t) -> f64 {
    if bsplib.is_null() {
        return 0.0;
    }
    (*bsplib).start.elapsed().as_secs_f64()
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_nprocs(bsplib: bsplib_t) -> lpf_pid_t {
    if bsplib.is_null() { 0 } else { (*bsplib).p }
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_pid(bsplib: bsplib_t) -> lpf_pid_t {
    if bsplib.is_null() { 0 } else { (*bsplib).pid }
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_sync(bsplib: bsplib_t) -> bsplib_err_t {
    call("bsp_sync", || inst(bsplib, "bsp_sync")?.sync())
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_push_reg(bsplib: bsplib_t, ident: *const c_void, size: usize) -> bsplib_err_t {
    call("bsp_push_reg", || inst(bsplib, "bsp_push_reg")?.push_reg(ident, size))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_pop_reg(bsplib: bsplib_t, ident: *const c_void) -> bsplib_err_t {
    call("bsp_pop_reg", || inst(bsplib, "bsp_pop_reg")?.pop_reg(ident))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_put(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) -> bsplib_err_t {
    call("bsp_put", || inst(b, "bsp_put")?.put(pid, src, dst, offset, n, true, "bsp_put"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpput(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) -> bsplib_err_t {
    call("bsp_hpput", || inst(b, "bsp_hpput")?.put(pid, src, dst, offset, n, false, "bsp_hpput"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_get(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) -> bsplib_err_t {
    call("bsp_get", || inst(b, "bsp_get")?.get(pid, src, offset, dst, n, "bsp_get"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpget(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) -> bsplib_err_t {
    call("bsp_hpget", || inst(b, "bsp_hpget")?.get(pid, src, offset, dst, n, "bsp_hpget"))
}

/// Sets the tag size for messages sent after the next sync; returns the current one.
#[no_mangle]
pub unsafe extern "C" fn bsplib_set_tagsize(b: bsplib_t, tagsize: usize) -> usize {
    if b.is_null() {
        return 0;
    }
    (*b).next_tagsize = tagsize;
    (*b).tagsize
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_send(b: bsplib_t, pid: lpf_pid_t, tag: *const c_void, payload: *const c_void, n: usize) -> bsplib_err_t {
    call("bsp_send", || inst(b, "bsp_send")?.send(pid, tag, payload, n, true, "bsp_send"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpsend(b: bsplib_t, pid: lpf_pid_t, tag: *const c_void, payload: *const c_void, n: usize) -> bsplib_err_t {
    call("bsp_hpsend", || inst(b, "bsp_hpsend")?.send(pid, tag, payload, n, false, "bsp_hpsend"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_qsize(b: bsplib_t, nmessages: *mut usize, accum_bytes: *mut usize) -> bsplib_err_t {
    call("bsp_qsize", || {
        let (n, bytes) = inst(b, "bsp_qsize")?.qsize();
        if !nmessages.is_null() {
            *nmessages = n;
        }
        if !accum_bytes.is_null() {
            *accum_bytes = bytes;
        }
        Ok(())
    })
}

/// `status` = payload size of the first message, or `(size_t)-1` if there is none.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_tag(b: bsplib_t, status: *mut usize, tag: *mut c_void) -> bsplib_err_t {
    call("bsp_get_tag", || {
        let s = inst(b, "bsp_get_tag")?;
        if status.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, "the status out-pointer is NULL");
        }
        match s.first() {
            None => *status = usize::MAX,
            Some((n, t, _)) => {
                *status = n;
                let ts = s.tagsize_received();
                if ts > 0 {
                    if tag.is_null() {
                        return err(BSPLIB_ERR_NULL_POINTER, "the tag out-pointer is NULL");
                    }
                    std::ptr::copy_nonoverlapping(t, tag as *mut u8, ts);
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_move(b: bsplib_t, payload: *mut c_void, reception_bytes: usize) -> bsplib_err_t {
    call("bsp_move", || {
        let s = inst(b, "bsp_move")?;
        let Some((n, _, data)) = s.first() else {
            return err(BSPLIB_ERR_EMPTY_MESSAGE_QUEUE, "bsp_move: the message queue is empty");
        };
        let k = n.min(reception_bytes);
        if k > 0 {
            if payload.is_null() {
                return err(BSPLIB_ERR_NULL_POINTER, "bsp_move: the payload pointer is NULL");
            }
            std::ptr::copy_nonoverlapping(data, payload as *mut u8, k);
        }
        s.queue.pop_front();
        Ok(())
    })
}

/// Dequeues the first message and points at its tag and payload (valid until the next
/// sync); returns the payload size, or `(size_t)-1` if the queue is empty.
#[no_mangle]
pub unsafe extern "C" fn bsplib_hpmove(b: bsplib_t, tag_ptr: *mut *const c_void, payload_ptr: *mut *const c_void) -> usize {
    if b.is_null() {
        return usize::MAX;
    }
    let s = &mut *b;
    match s.first() {
        None => usize::MAX,
        Some((n, t, d)) => {
            if !tag_ptr.is_null() {
                *tag_ptr = t.cast();
            }
            if !payload_ptr.is_null() {
                *payload_ptr = d.cast();
            }
            s.queue.pop_front();
            n
        }
    }
}

impl BSPlib {
    /// The tag size the queued messages were sent with (the one in force before the
    /// last sync switched to the next).
    fn tagsize_received(&self) -> usize {
        self.received_tagsize
    }
}

// ---------------------------------------------------------------------------------
// bsp/bsp.h: one implicit instance per process (thread-local here, as every LPF
// process of the shared-memory engine is a thread).

thread_local! {
    static CURRENT: RefCell<Option<bsplib_t>> = const { RefCell::new(None) };
    static IN_SPAWN: RefCell<bool> = const { RefCell::new(false) };
}

static SPMD: std::sync::Mutex<Option<unsafe extern "C" fn()>> = std::sync::Mutex::new(None);

fn current(what: &str) -> bsplib_t {
    match CURRENT.with(|c| *c.borrow()) {
        Some(b) => b,
        None => die(&format!("{what}: not between bsp_begin and bsp_end")),
    }
}

fn die(msg: &str) -> ! {
    eprintln!("bsp: {msg}");
    std::process::abort()
}

/// Aborts the program when a BSPlib call failed (classic BSPlib has no error codes).
fn check(code: bsplib_err_t, what: &str) {
    if code != BSPLIB_SUCCESS {
        let msg = unsafe { std::ffi::CStr::from_ptr(super::lpf_error_message()) }.to_string_lossy().into_owned();
        die(&format!("{what} failed (BSPlib error {code}): {msg}"));
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_init(spmd: Option<unsafe extern "C" fn()>, argc: c_int, argv: *mut *mut c_char) {
    let _ = (argc, argv);
    let Some(f) = spmd else { die("bsp_init: the SPMD function is NULL") };
    let mut g = SPMD.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_some() {
        die("bsp_init: called more than once");
    }
    *g = Some(f);
}

/// The section of `bsp_begin`: the function of `bsp_init` comes as the exec's one
/// function symbol, not from `SPMD`, which only the process that ran `main` has set (a
/// launched job's other processes never run `main`: docs/compatibility.md).
unsafe extern "C" fn spawned(ctx: lpf_t, pid: lpf_pid_t, nprocs: lpf_pid_t, args: super::lpf_args_t) {
    let Some(f) = (args.f_size == 1).then(|| *args.f_symbols).flatten() else {
        die("bsp_begin: the section did not receive the function of bsp_init")
    };
    let mut b: bsplib_t = std::ptr::null_mut();
    check(bsplib_create(ctx, pid, nprocs, 0, 0, &mut b), "bsp_begin");
    CURRENT.with(|c| *c.borrow_mut() = Some(b));
    IN_SPAWN.with(|c| *c.borrow_mut() = true);
    f();
    IN_SPAWN.with(|c| *c.borrow_mut() = false);
    if let Some(b) = CURRENT.with(|c| c.borrow_mut().take()) {
        check(bsplib_destroy(b), "bsp_end");
    }
}

/// `bsp_begin(maxprocs)`: returns 0 when the caller is to run the parallel part now, 1
/// when it has already run (in the section this call started) and the caller must skip
/// to `bsp_end`.
#[no_mangle]
pub unsafe extern "C" fn bsplibstd_spawn(maxprocs: c_uint) -> c_int {
    if maxprocs < 1 {
        die("bsp_begin: maxprocs is below 1");
    }
    if IN_SPAWN.with(|c| *c.borrow()) {
        // The SPMD function of bsp_init, started by the section below.
        if CURRENT.with(|c| c.borrow().is_none()) {
            die("bsp_begin: called a second time in one section");
        }
        return 0;
    }
    if CURRENT.with(|c| c.borrow().is_some()) {
        die("bsp_begin: called a second time without bsp_end");
    }
    let Some(f) = *SPMD.lock().unwrap_or_else(|e| e.into_inner()) else {
        die("bsp_begin outside the function given to bsp_init: call bsp_init(spmd, argc, argv) first, with spmd the function that contains bsp_begin .. bsp_end (this implementation cannot re-run main() on other threads)");
    };
    let symbols: [super::lpf_func_t; 1] = [Some(f)];
    let args = super::lpf_args_t { f_symbols: symbols.as_ptr(), f_size: 1, ..super::LPF_NO_ARGS };
    let rc = super::lpf_exec(super::LPF_ROOT.0, maxprocs, Some(spawned), args);
    if rc != SUCCESS {
        let msg = std::ffi::CStr::from_ptr(super::lpf_error_message()).to_string_lossy().into_owned();
        die(&format!("bsp_begin({maxprocs}): the section failed: {msg}"));
    }
    1
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_end() {
    if IN_SPAWN.with(|c| *c.borrow()) {
        let b = current("bsp_end");
        check(bsplib_sync(b), "bsp_end");
        CURRENT.with(|c| *c.borrow_mut() = None);
        check(bsplib_destroy(b), "bsp_end");
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_nprocs() -> c_int {
    mcbsp_nprocs() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_nprocs() -> c_uint {
    match CURRENT.with(|c| *c.borrow()) {
        Some(b) => (*b).p,
        None => {
            let mut m = super::LPF_INVALID_MACHINE;
            if super::lpf_probe(super::LPF_ROOT.0, &mut m) != SUCCESS {
                die("bsp_nprocs: lpf_probe failed");
            }
            m.p
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_pid() -> c_int {
    mcbsp_pid() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_pid() -> c_uint {
    (*current("bsp_pid")).pid
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_time() -> f64 {
    bsplib_time(current("bsp_time"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_sync() {
    check(bsplib_sync(current("bsp_sync")), "bsp_sync")
}

fn size(n: c_int, what: &str) -> usize {
    if n < 0 {
        die(&format!("{what}: negative size or offset {n}"));
    }
    n as usize
}

fn pid(n: c_int, what: &str) -> lpf_pid_t {
    if n < 0 {
        die(&format!("{what}: negative pid {n}"));
    }
    n as lpf_pid_t
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_push_reg(ident: *const c_void, n: c_int) {
    mcbsp_push_reg(ident, size(n, "bsp_push_reg"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_push_reg(ident: *const c_void, n: usize) {
    check(bsplib_push_reg(current("bsp_push_reg"), ident, n), "bsp_push_reg")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_pop_reg(ident: *const c_void) {
    check(bsplib_pop_reg(current("bsp_pop_reg"), ident), "bsp_pop_reg")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_put(p: c_int, src: *const c_void, dst: *mut c_void, offset: c_int, n: c_int) {
    mcbsp_put(pid(p, "bsp_put"), src, dst, size(offset, "bsp_put"), size(n, "bsp_put"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_put(p: c_uint, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) {
    check(bsplib_put(current("bsp_put"), p, src, dst, offset, n), "bsp_put")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpput(p: c_int, src: *const c_void, dst: *mut c_void, offset: c_int, n: c_int) {
    mcbsp_hpput(pid(p, "bsp_hpput"), src, dst, size(offset, "bsp_hpput"), size(n, "bsp_hpput"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpput(p: c_uint, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) {
    check(bsplib_hpput(current("bsp_hpput"), p, src, dst, offset, n), "bsp_hpput")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_get(p: c_int, src: *const c_void, offset: c_int, dst: *mut c_void, n: c_int) {
    mcbsp_get(pid(p, "bsp_get"), src, size(offset, "bsp_get"), dst, size(n, "bsp_get"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_get(p: c_uint, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) {
    check(bsplib_get(current("bsp_get"), p, src, offset, dst, n), "bsp_get")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpget(p: c_int, src: *const c_void, offset: c_int, dst: *mut c_void, n: c_int) {
    mcbsp_hpget(pid(p, "bsp_hpget"), src, size(offset, "bsp_hpget"), dst, size(n, "bsp_hpget"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpget(p: c_uint, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) {
    check(bsplib_hpget(current("bsp_hpget"), p, src, offset, dst, n), "bsp_hpget")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_set_tagsize(tag_nbytes: *mut c_int) {
    if tag_nbytes.is_null() {
        die("bsp_set_tagsize: NULL pointer");
    }
    let mut n = size(*tag_nbytes, "bsp_set_tagsize");
    mcbsp_set_tagsize(&mut n);
    *tag_nbytes = n as c_int;
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_set_tagsize(tag_nbytes: *mut usize) {
    if tag_nbytes.is_null() {
        die("bsp_set_tagsize: NULL pointer");
    }
    *tag_nbytes = bsplib_set_tagsize(current("bsp_set_tagsize"), *tag_nbytes);
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_send(p: c_int, tag: *const c_void, payload: *const c_void, n: c_int) {
    mcbsp_send(pid(p, "bsp_send"), tag, payload, size(n, "bsp_send"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_send(p: c_uint, tag: *const c_void, payload: *const c_void, n: usize) {
    check(bsplib_send(current("bsp_send"), p, tag, payload, n), "bsp_send")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpsend(p: c_int, tag: *const c_void, payload: *const c_void, n: c_int) {
    mcbsp_hpsend(pid(p, "bsp_hpsend"), tag, payload, size(n, "bsp_hpsend"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpsend(p: c_uint, tag: *const c_void, payload: *const c_void, n: usize) {
    check(bsplib_hpsend(current("bsp_hpsend"), p, tag, payload, n), "bsp_hpsend")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_qsize(nmessages: *mut c_int, accum_nbytes: *mut c_int) {
    let (mut n, mut b) = (0usize, 0usize);
    mcbsp_qsize_sz(&mut n, &mut b);
    if !nmessages.is_null() {
        *nmessages = n as c_int;
    }
    if !accum_nbytes.is_null() {
        *accum_nbytes = b as c_int;
    }
}

unsafe fn mcbsp_qsize_sz(n: *mut usize, b: *mut usize) {
    check(bsplib_qsize(current("bsp_qsize"), n, b), "bsp_qsize")
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_qsize(nmessages: *mut c_uint, accum_nbytes: *mut usize) {
    let mut n = 0usize;
    mcbsp_qsize_sz(&mut n, accum_nbytes);
    if !nmessages.is_null() {
        *nmessages = n as c_uint;
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_get_tag(status: *mut c_int, tag: *mut c_void) {
    let mut s = 0usize;
    mcbsp_get_tag(&mut s, tag);
    if !status.is_null() {
        *status = if s == usize::MAX { -1 } else { s as c_int };
    }
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_get_tag(status: *mut usize, tag: *mut c_void) {
    check(bsplib_get_tag(current("bsp_get_tag"), status, tag), "bsp_get_tag")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_move(payload: *mut c_void, reception_bytes: c_int) {
    mcbsp_move(payload, size(reception_bytes, "bsp_move"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_move(payload: *mut c_void, reception_bytes: usize) {
    check(bsplib_move(current("bsp_move"), payload, reception_bytes), "bsp_move")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpmove(tag_ptr: *mut *const c_void, payload_ptr: *mut *const c_void) -> c_int {
    let n = bsplib_hpmove(current("bsp_hpmove"), tag_ptr, payload_ptr);
    if n == usize::MAX { -1 } else { n as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpmove(tag_ptr: *mut *mut c_void, payload_ptr: *mut *mut c_void) -> usize {
    bsplib_hpmove(current("bsp_hpmove"), tag_ptr.cast(), payload_ptr.cast())
}

/// `bsp_abort(format, ...)`: prints the message and ends the whole program.
///
/// Stable Rust cannot define a C variadic function, so this one is declared with the
/// registers a variadic call fills on x86-64 (System V): the format, five integer or
/// pointer arguments and eight floating-point ones, and forwards them to `snprintf`.
/// A message with more than five integer/pointer (or eight floating-point) arguments
/// prints garbage for the extra ones; on other architectures only the format is printed.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
#[cfg(target_arch = "x86_64")]
pub unsafe extern "C" fn bsplibstd_abort(fmt: *const c_char, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize, f0: f64, f1: f64, f2: f64, f3: f64, f4: f64, f5: f64, f6: f64, f7: f64) {
    extern "C" {
        fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
    }
    let mut buf = [0 as c_char; 1024];
    if !fmt.is_null() {
        snprintf(buf.as_mut_ptr(), buf.len(), fmt, a1, a2, a3, a4, a5, f0, f1, f2, f3, f4, f5, f6, f7);
    }
    abort_with(&buf)
}

#[no_mangle]
#[cfg(not(target_arch = "x86_64"))]
pub unsafe extern "C" fn bsplibstd_abort(fmt: *const c_char) {
    let mut buf = [0 as c_char; 1024];
    if !fmt.is_null() {
        let s = std::ffi::CStr::from_ptr(fmt).to_bytes();
        for (i, &b) in s.iter().take(buf.len() - 1).enumerate() {
            buf[i] = b as c_char;
        }
    }
    abort_with(&buf)
}

fn abort_with(buf: &[c_char]) -> ! {
    let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    let who = CURRENT.with(|c| *c.borrow()).map(|b| unsafe { (*b).pid });
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "bsp_abort{}: {}", who.map_or(String::new(), |p| format!(" (process {p})")), text);
    if !text.ends_with('\n') {
        let _ = writeln!(e);
    }
    let _ = e.flush();
    std::process::abort()
}
