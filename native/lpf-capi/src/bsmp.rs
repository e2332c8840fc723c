//! `lpf/bsmp.h`: bulk synchronous message passing (the BSMP library of the LPF
//! higher-level libraries), over the core primitives of this library.
//!
//! Every process's inbox has one region per sender, each large enough for all a sender
//! may send in a superstep (`buffer_size` payload bytes and `max_messages` headers and
//! tags), so a sender knows where its messages go without asking: its own count of
//! bytes already sent to that destination. A message is three puts into the region
//! (payload size, tag, payload: the published "three messages per message"); the sync
//! that switches WRITE to READ first puts each sender's byte count into the receiver's
//! fill array (at most one put per destination), then runs one `lpf_sync`. `lpf_move`
//! walks the regions in sender order. The four slots are the inbox and fill array
//! (global) and the sender's headers and byte counts (local: the sources of puts,
//! read when the sync runs).

use super::{context, guarded, lpf_err_t, lpf_memslot_t, lpf_pid_t, lpf_sync_attr_t, lpf_t};
use lpf::{Context, Error, Memslot, MSG_DEFAULT};
use std::ffi::c_void;

/// The published error codes of BSMP (values of their own, beside the core's).
const BSMP_FULL: lpf_err_t = 777;
const BSMP_INVAL: lpf_err_t = 778;

#[no_mangle]
pub static LPF_ERR_BSMP_FULL: lpf_err_t = BSMP_FULL;
#[no_mangle]
pub static LPF_ERR_BSMP_INVAL: lpf_err_t = BSMP_INVAL;
#[no_mangle]
pub static LPF_INVALID_SIZE: usize = usize::MAX;
#[no_mangle]
pub static LPF_INVALID_BSMP: super::ConstPtr = super::ConstPtr(std::ptr::null_mut());

/// Bytes of a message's header in the inbox: its payload size.
const HEADER: usize = std::mem::size_of::<u64>();

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Read,
    Write,
}

/// The object behind an `lpf_bsmp_t`.
pub struct Bsmp {
    ctx: lpf_t,
    s: lpf_pid_t,
    p: lpf_pid_t,
    tag_size: usize,
    buffer_size: usize,
    max_messages: usize,
    /// Bytes of one sender's region of the inbox.
    region: usize,
    /// `p` regions; peers put into region `sender`. Global slot `inbox_slot`.
    inbox: Vec<u8>,
    inbox_slot: Memslot,
    /// Bytes sender k put into this inbox in the last WRITE superstep. Global slot.
    fill: Vec<u64>,
    fill_slot: Memslot,
    /// Bytes this process queued for each destination in this superstep. Local slot.
    sent: Vec<u64>,
    sent_slot: Memslot,
    /// Payload sizes of the messages queued in this superstep. Local slot.
    headers: Vec<u64>,
    headers_slot: Memslot,
    queued: usize,
    payload_queued: usize,
    mode: Mode,
    /// lpf_move's position: the sender's region and the offset in it.
    cursor: (usize, usize),
}

/// A zeroed vector of `n` elements, `LPF_ERR_OUT_OF_MEMORY` if it cannot be had (at
/// least one element, so that its registration has a real address).
fn zeroed<T: Clone + Default>(n: usize) -> lpf::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n.max(1)).map_err(|_| Error::out_of_memory(format!("cannot allocate {n} elements")))?;
    v.resize(n.max(1), T::default());
    Ok(v)
}

fn too_large(what: &str) -> Error {
    Error::out_of_memory(format!("the sizes overflow ({what})"))
}

impl Bsmp {
    fn new(ctx: lpf_t, c: &mut Context, s: lpf_pid_t, p: lpf_pid_t, buffer_size: usize, tag_size: usize, max_messages: usize) -> lpf::Result<Box<Bsmp>> {
        if p != c.nprocs() || s != c.pid() {
            return Err(Error::fatal(format!("process {s} of {p} is not this context's {} of {}", c.pid(), c.nprocs())));
        }
        let per_message = HEADER.checked_add(tag_size).ok_or_else(|| too_large("tag size"))?;
        let region = max_messages
            .checked_mul(per_message)
            .and_then(|m| m.checked_add(buffer_size))
            .ok_or_else(|| too_large("messages and buffer"))?;
        let inbox_bytes = region.checked_mul(p as usize).ok_or_else(|| too_large("inbox"))?;
        let mut b = Box::new(Bsmp {
            ctx,
            s,
            p,
            tag_size,
            buffer_size,
            max_messages,
            region,
            inbox: zeroed(inbox_bytes)?,
            inbox_slot: Memslot::INVALID,
            fill: zeroed(p as usize)?,
            fill_slot: Memslot::INVALID,
            sent: zeroed(p as usize)?,
            sent_slot: Memslot::INVALID,
            headers: zeroed(max_messages)?,
            headers_slot: Memslot::INVALID,
            queued: 0,
            payload_queued: 0,
            mode: Mode::Write,
            cursor: (0, 0),
        });
        // The four vectors live in the box, are never resized, and are deregistered
        // before they are freed (destroy, or the failure below).
        let made = (|| -> lpf::Result<()> {
            // SAFETY: the inbox, of inbox_bytes bytes, stays put while registered (above).
            b.inbox_slot = unsafe { c.register_global_raw(b.inbox.as_mut_ptr(), inbox_bytes)? };
            // SAFETY: the fill counts, p headers, stay put while registered (above).
            b.fill_slot = unsafe { c.register_global_raw(b.fill.as_mut_ptr().cast(), p as usize * HEADER)? };
            // SAFETY: the sent counts, p headers, stay put while registered (above).
            b.sent_slot = unsafe { c.register_local_raw(b.sent.as_mut_ptr().cast(), p as usize * HEADER)? };
            // SAFETY: the headers, max_messages of them, stay put while registered (above).
            b.headers_slot = unsafe { c.register_local_raw(b.headers.as_mut_ptr().cast(), max_messages * HEADER)? };
            Ok(())
        })();
        if let Err(e) = made {
            b.deregister(c);
            return Err(e);
        }
        c.sync(lpf::SYNC_DEFAULT)?;
        Ok(b)
    }

    fn deregister(&mut self, c: &mut Context) {
        for slot in [&mut self.inbox_slot, &mut self.fill_slot, &mut self.sent_slot, &mut self.headers_slot] {
            if *slot != Memslot::INVALID {
                // Deregistering a slot this object registered cannot fail but on a
                // context in a failed state, which is going away anyway.
                let _ = c.deregister(*slot);
                *slot = Memslot::INVALID;
            }
        }
    }

    /// Queues one message (three puts), or says why not.
    #[allow(clippy::too_many_arguments)]
    fn send(&mut self, c: &mut Context, pid: lpf_pid_t, tag: Memslot, tag_offset: usize, payload: Memslot, payload_offset: usize, size: usize) -> lpf::Result<Option<lpf_err_t>> {
        if self.mode != Mode::Write {
            return Ok(Some(BSMP_INVAL));
        }
        if pid >= self.p {
            return Err(Error::fatal(format!("destination {pid} is not below the number of processes {}", self.p)));
        }
        if self.queued == self.max_messages || size > self.buffer_size - self.payload_queued {
            return Ok(Some(BSMP_FULL));
        }
        // The sender's limits keep this within its region of the destination's inbox.
        let at = self.s as usize * self.region + self.sent[pid as usize] as usize;
        self.headers[self.queued] = size as u64;
        c.put(self.headers_slot, self.queued * HEADER, pid, self.inbox_slot, at, HEADER, MSG_DEFAULT)?;
        if self.tag_size > 0 {
            c.put(tag, tag_offset, pid, self.inbox_slot, at + HEADER, self.tag_size, MSG_DEFAULT)?;
        }
        if size > 0 {
            c.put(payload, payload_offset, pid, self.inbox_slot, at + HEADER + self.tag_size, size, MSG_DEFAULT)?;
        }
        self.sent[pid as usize] += (HEADER + self.tag_size + size) as u64;
        self.queued += 1;
        self.payload_queued += size;
        Ok(None)
    }

    /// Before the sync: in WRITE mode, each destination's byte count goes out and this
    /// inbox's counts are cleared for those coming in.
    fn before_sync(&mut self, c: &mut Context) -> lpf::Result<()> {
        if self.mode == Mode::Write {
            self.fill.iter_mut().for_each(|f| *f = 0);
            for d in 0..self.p {
                if self.sent[d as usize] > 0 {
                    c.put(self.sent_slot, d as usize * HEADER, d, self.fill_slot, self.s as usize * HEADER, HEADER, MSG_DEFAULT)?;
                }
            }
        }
        Ok(())
    }

    /// After the sync: the other mode.
    fn after_sync(&mut self) {
        match self.mode {
            Mode::Write => {
                self.sent.iter_mut().for_each(|n| *n = 0);
                self.queued = 0;
                self.payload_queued = 0;
                self.cursor = (0, 0);
                self.mode = Mode::Read;
            }
            Mode::Read => self.mode = Mode::Write,
        }
    }

    /// The next received message: (tag, payload, payload size).
    fn next(&mut self) -> Option<(*mut u8, *mut u8, usize)> {
        let (mut k, mut off) = self.cursor;
        while k < self.p as usize && off >= self.fill[k] as usize {
            k += 1;
            off = 0;
        }
        if k == self.p as usize {
            self.cursor = (k, 0);
            return None;
        }
        let at = k * self.region + off;
        let size = u64::from_ne_bytes(self.inbox[at..at + HEADER].try_into().expect("8 bytes")) as usize;
        let tag = self.inbox[at + HEADER..].as_mut_ptr();
        let payload = self.inbox[at + HEADER + self.tag_size..].as_mut_ptr();
        self.cursor = (k, off + HEADER + self.tag_size + size);
        Some((tag, payload, size))
    }
}

/// The object behind a handle.
///
/// # Safety
/// `bsmp` is null or was made by `lpf_bsmp_create` and not destroyed.
unsafe fn object<'a>(bsmp: *mut Bsmp) -> lpf::Result<&'a mut Bsmp> {
    bsmp.as_mut().ok_or_else(|| Error::fatal("the BSMP object is LPF_INVALID_BSMP"))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_bsmp_create(
    ctx: lpf_t,
    s: lpf_pid_t,
    p: lpf_pid_t,
    buffer_size: usize,
    tag_size: usize,
    max_messages: usize,
    bsmp: *mut *mut Bsmp,
) -> lpf_err_t {
    let what = "lpf_bsmp_create";
    guarded(what, || {
        if bsmp.is_null() {
            return Err(Error::fatal("the lpf_bsmp_t out-pointer is NULL"));
        }
        *bsmp = std::ptr::null_mut();
        let c = context(ctx, what)?;
        *bsmp = Box::into_raw(Bsmp::new(ctx, c, s, p, buffer_size, tag_size, max_messages)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_bsmp_destroy(bsmp: *mut *mut Bsmp) -> lpf_err_t {
    let what = "lpf_bsmp_destroy";
    guarded(what, || {
        if bsmp.is_null() {
            return Err(Error::fatal("the lpf_bsmp_t pointer is NULL"));
        }
        let mut b = Box::from_raw(object(*bsmp)?);
        *bsmp = std::ptr::null_mut();
        // A context that has ended took its registrations with it.
        if let Ok(c) = context(b.ctx, what) {
            b.deregister(c);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_send(
    bsmp: *mut Bsmp,
    pid: lpf_pid_t,
    tag: lpf_memslot_t,
    tag_offset: usize,
    payload: lpf_memslot_t,
    payload_offset: usize,
    payload_size: usize,
) -> lpf_err_t {
    let what = "lpf_send";
    let mut refused = None;
    let code = guarded(what, || {
        let b = object(bsmp)?;
        let c = context(b.ctx, what)?;
        refused = b.send(c, pid, Memslot::from_raw(tag), tag_offset, Memslot::from_raw(payload), payload_offset, payload_size)?;
        Ok(())
    });
    refused.unwrap_or(code)
}

#[no_mangle]
pub unsafe extern "C" fn lpf_bsmp_sync(bsmp: lpf_bsmp_handle, hint: lpf_sync_attr_t) -> lpf_err_t {
    let mut one = bsmp;
    lpf_bsmp_syncall(&mut one, 1, hint)
}

/// `lpf_bsmp_t` as the C functions take it.
#[allow(non_camel_case_types)]
type lpf_bsmp_handle = *mut Bsmp;

#[no_mangle]
pub unsafe extern "C" fn lpf_bsmp_syncall(bsmp: *mut lpf_bsmp_handle, num_objects: usize, hint: lpf_sync_attr_t) -> lpf_err_t {
    let what = "lpf_bsmp_sync";
    guarded(what, || {
        if num_objects > 0 && bsmp.is_null() {
            return Err(Error::fatal("the array of BSMP objects is NULL"));
        }
        let objects: Vec<&mut Bsmp> =
            (0..num_objects).map(|i| object(*bsmp.add(i))).collect::<lpf::Result<_>>()?;
        let ctx = objects.first().map(|b| b.ctx);
        if objects.iter().any(|b| Some(b.ctx) != ctx) {
            return Err(Error::fatal("the BSMP objects belong to different contexts"));
        }
        let Some(ctx) = ctx else { return Ok(()) };
        let c = context(ctx, what)?;
        let mut objects = objects;
        for b in objects.iter_mut() {
            b.before_sync(c)?;
        }
        c.sync(hint)?;
        for b in objects.iter_mut() {
            b.after_sync();
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_move(bsmp: *mut Bsmp, tag_p: *mut *mut c_void, payload_p: *mut *mut c_void, size: *mut usize) -> lpf_err_t {
    let what = "lpf_move";
    let mut refused = None;
    let code = guarded(what, || {
        let b = object(bsmp)?;
        if tag_p.is_null() || payload_p.is_null() || size.is_null() {
            return Err(Error::fatal("an out-pointer is NULL"));
        }
        if b.mode != Mode::Read {
            refused = Some(BSMP_INVAL);
            return Ok(());
        }
        let (t, p, n) = b.next().unwrap_or((std::ptr::null_mut(), std::ptr::null_mut(), usize::MAX));
        (*tag_p, *payload_p, *size) = (t.cast(), p.cast(), n);
        Ok(())
    });
    refused.unwrap_or(code)
}
