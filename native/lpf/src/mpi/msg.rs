//! The `mpimsg` sync: the shared phases over MPI control messages, and the data of
//! large puts and gets as MPI messages (`MPI_Isend` / `MPI_Irecv`, all completed
//! together).
//!
//! Tags: data travels on the section's own communicator (a duplicate made when the
//! section starts, so nothing of a failed section can ever match a later receive).
//! Between one pair of processes, in one direction, the k-th data message of a sync
//! has tag `(step mod 1024) << 20 | k mod 2^20`: unique within the sync and across
//! neighbouring syncs (and MPI keeps messages of one tag in order anyway). Both sides
//! count the same messages in the same order: the sender's large puts to the receiver
//! in header order, then the large replies to the receiver's gets, every payload cut
//! into chunks of at most 2^30 bytes.
//!
//! Large put payloads are sent together with the meta-data (the receiver posts its
//! receive once the conflicts are resolved); a piece that survives whole is received in
//! place, a trimmed or rejected one into a buffer from which the surviving pieces are
//! copied. Gets: the source answers with the statuses and the small data inline in one
//! control message, the large data as messages.

use super::channel::MpiChannel;
use super::ffi::{self, Comm, Request, CHUNK};
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::conflict::{all_inline, apply_inline, plan_reusing, Locals};
use crate::phases::requests::{Built, Outgoing};
use crate::phases::{meta_exchange, note, Channel};
use crate::types::Pid;
use crate::wire::{Kind, INLINE_MAX};

fn tag(step: u64, k: u32, ub: i32) -> i32 {
    if ub >= (1 << 30) - 1 {
        (((step & 0x3ff) << 20) as i32) | (k & 0xf_ffff) as i32
    } else {
        (k % (ub as u32 + 1)) as i32
    }
}

/// The message counter of peer `q` in `v` (sized to `n` peers on first use).
fn counter(v: &mut Vec<u32>, n: usize, q: usize) -> &mut u32 {
    if v.is_empty() {
        v.resize(n, 0);
    }
    &mut v[q]
}

fn chunks(len: usize) -> usize {
    len.div_ceil(CHUNK).max(1)
}

/// Data messages of one sync.
struct Data {
    comm: Comm,
    step: u64,
    ub: i32,
    reqs: Vec<Request>,
    /// Receives into private buffers: (buffer, write index or None to discard).
    bounce: Vec<(Vec<u8>, Option<usize>)>,
}

impl Data {
    /// # Safety
    /// `ptr..ptr + len` stays valid and unchanged until the sync returns (the sync
    /// waits for all its requests on success; see `MpiEngine` for failure).
    unsafe fn send(&mut self, ptr: *const u8, len: usize, to: usize, k: &mut u32) -> Result<()> {
        let mut off = 0;
        for _ in 0..chunks(len) {
            let n = (len - off).min(CHUNK);
            self.reqs.push(ffi::isend(ptr.add(off), n, to, tag(self.step, *k, self.ub), self.comm)?);
            *k += 1;
            off += n;
        }
        Ok(())
    }

    /// Receives `len` bytes from `from` into `dst`, or into a private buffer when
    /// `dst` is None (remembering `write` for the copy).
    ///
    /// # Safety
    /// `dst..dst + len`, if given, stays valid and untouched until the sync returns.
    unsafe fn recv(&mut self, dst: Option<*mut u8>, write: Option<usize>, len: usize, from: usize, k: &mut u32) -> Result<()> {
        let base = match dst {
            Some(p) => p,
            None => {
                self.bounce.push((vec![0u8; len], write));
                self.bounce.last_mut().unwrap().0.as_mut_ptr()
            }
        };
        let mut off = 0;
        for _ in 0..chunks(len) {
            let n = (len - off).min(CHUNK);
            self.reqs.push(ffi::irecv(base.add(off), n, from, tag(self.step, *k, self.ub), self.comm)?);
            *k += 1;
            off += n;
        }
        Ok(())
    }
}

/// One sync of the LPF processes `steps` of this rank (global pids `offsets[me]..`, one
/// per rank on `mpimsg`, the rank's threads on the hybrid engine).
pub(crate) fn sync(ch: &mut MpiChannel, comm: Comm, ub: i32, section: u32, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
    ch.with_requests(steps, |ch, built| run(ch, comm, ub, section, step, steps, built))
}

#[allow(clippy::too_many_arguments)]
fn run(ch: &mut MpiChannel, comm: Comm, ub: i32, section: u32, step: u64, steps: &[&Superstep<'_>], built: &Built) -> Result<()> {
    let mut st = super::prof::Stamps::start();
    let (me, n) = (ch.layout.me, ch.layout.n);
    let base: Pid = ch.layout.offsets[me];
    let out = &built.out;
    st.mark(0);
    let mut data = Data { comm, step, ub, reqs: Vec::new(), bounce: Vec::new() };
    // Per peer: data messages sent to it / received from it so far in this sync
    // (allocated only when large data moves).
    let mut k_out: Vec<u32> = Vec::new();
    let mut k_in: Vec<u32> = Vec::new();

    // ---- Phase 1: meta-data; large payloads leave at once. ----
    let mut failed: Option<Error> = None;
    let mut send = |ch: &mut MpiChannel, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let mut counts = [0u8; 8];
        ch.post_parts(d, kind, 0, section, step, &o.parts(prefix, &mut counts), o.raw_len);
        for r in &o.raw {
            // SAFETY: checked against its registration when queued; unchanged until
            // the sync returns.
            if let Err(e) = unsafe { data.send(r.src, r.size, d, counter(&mut k_out, n, d)) } {
                failed.get_or_insert(e);
            }
        }
    };
    let r = meta_exchange(ch, section, step, out, built.any, &mut send);
    if let Some(e) = failed {
        return Err(e);
    }
    let (incoming, global_any) = r?;
    st.mark(1);
    if !global_any {
        st.done(0);
        ch.recycle_table(incoming);
        return Ok(());
    }

    // ---- Phase 2: checks and conflict resolution (shared). ----
    let loc = Locals { steps, base, me };
    if all_inline(&incoming, &built.local, out) {
        // Every byte to write is here: no plan, no data messages.
        let found = apply_inline(&loc, &incoming, &built.local);
        st.done(0);
        return ch.finish_sync_found(incoming, found, section, step);
    }
    let (writes, pieces) = ch.plan_buffers.take().unwrap_or_default();
    let mut plan = plan_reusing(&loc, &incoming, &built.local, out, writes, pieces);
    plan.copy_local();
    let whole = |plan: &crate::phases::conflict::Plan, i: usize| {
        let w = &plan.writes[i];
        let p = plan.pieces_of(i);
        !plan.discard && p.len() == 1 && p[0] == (w.addr, w.addr + w.len)
    };
    for src in (0..n).filter(|&q| q != me) {
        let Some(inc) = &incoming[src] else { continue };
        for (k, p) in inc.raw_puts().enumerate() {
            let i = plan.put_writes[src][k];
            let dst = i.filter(|&i| whole(&plan, i)).map(|i| plan.writes[i].addr as *mut u8);
            // SAFETY: `dst` is a checked, resolved piece of this process's memory.
            unsafe { data.recv(dst, i.filter(|_| !plan.discard), p.size, src, counter(&mut k_in, n, src))? };
        }
    }

    st.mark(2);
    // ---- Phase 3: serve the gets asked of us; ask for ours. ----
    for q in (0..n).filter(|&q| q != me) {
        let Some(inc) = &incoming[q] else { continue };
        if inc.gets.is_empty() {
            continue;
        }
        let mut body = Vec::with_capacity(inc.gets.len());
        let mut large = Vec::new();
        let mut small = Vec::new();
        for g in &inc.gets {
            let what = || format!("get by process {} from process {}", g.requester, g.src);
            match loc.area_of(g.src, g.slot, g.off, g.size, &what) {
                Ok(p) => {
                    body.push(1u8);
                    if g.size <= INLINE_MAX {
                        // SAFETY: checked against the source registration just above.
                        small.extend_from_slice(unsafe { std::slice::from_raw_parts(p, g.size) });
                    } else {
                        large.push((p as *const u8, g.size));
                    }
                }
                Err(e) => {
                    body.push(0u8);
                    note(&mut plan.found, me, e);
                }
            }
        }
        body.extend_from_slice(&small);
        ch.post(q, Kind::GetReply, 0, section, step, &body, 0);
        for (p, len) in large {
            // SAFETY: checked above; unchanged until the sync returns.
            unsafe { data.send(p, len, q, counter(&mut k_out, n, q))? };
        }
    }
    let asked = out.iter().any(|o| !o.my_gets.is_empty());
    if !asked && data.reqs.is_empty() {
        // Nothing to wait for: no gets of ours, no large data.
        st.mark(3);
        st.mark(4);
        st.mark(5);
        st.done(0);
        return ch.finish_sync(incoming, plan, section, step);
    }
    let mut replied: Vec<bool> = out.iter().map(|o| o.my_gets.is_empty()).collect();
    replied[me] = true;
    let mut error: Option<Error> = None;
    ch.wait(|ch| {
        for q in 0..n {
            if replied[q] {
                continue;
            }
            let Some(pos) = ch_take(ch, q, section, step) else {
                ch.check_peer(q, section, step, Kind::GetReply)?;
                continue;
            };
            replied[q] = true;
            let gets = &out[q].my_gets;
            if pos.len() < gets.len() {
                return Err(Error::fatal(format!("malformed get reply from process {q}")));
            }
            let mut at = gets.len();
            for (k, g) in gets.iter().enumerate() {
                if pos[k] == 0 {
                    continue;
                }
                let i = plan.get_writes[q] + k;
                if g.size <= INLINE_MAX {
                    if at + g.size > pos.len() {
                        return Err(Error::fatal(format!("malformed get reply from process {q}")));
                    }
                    if !plan.discard {
                        let w = &plan.writes[i];
                        for &(a, b) in plan.pieces_of(i) {
                            let from = &pos[at + (a - w.addr)..at + (b - w.addr)];
                            // SAFETY: a resolved piece of one of our get destinations.
                            unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), a as *mut u8, b - a) };
                        }
                    }
                    at += g.size;
                } else {
                    let dst = Some(i).filter(|&i| whole(&plan, i)).map(|i| plan.writes[i].addr as *mut u8);
                    let keep = Some(i).filter(|_| !plan.discard);
                    // SAFETY: a resolved piece of one of our get destinations.
                    if let Err(e) = unsafe { data.recv(dst, keep, g.size, q, counter(&mut k_in, n, q)) } {
                        error.get_or_insert(e);
                    }
                }
            }
        }
        if error.is_some() {
            return Ok(true);
        }
        Ok(replied.iter().all(|&r| r) && ffi::test_all(&mut data.reqs)?)
    })?;
    if let Some(e) = error {
        return Err(e);
    }
    st.mark(3);
    for (buf, write) in &data.bounce {
        let Some(i) = *write else { continue };
        let w = &plan.writes[i];
        for &(a, b) in plan.pieces_of(i) {
            // SAFETY: a resolved piece of a checked destination; `buf` holds the
            // whole write.
            unsafe { std::ptr::copy_nonoverlapping(buf[a - w.addr..].as_ptr(), a as *mut u8, b - a) };
        }
    }

    st.mark(4);
    // ---- No final barrier. Every write into this process's memory is done (its
    // receives completed), and every read of it by a get (the replies were sent);
    // the peers' likewise when their syncs return. An error found here fails this
    // process only: it leaves the section saying why, and the others fail at their
    // next sync or at the end of the section (`MpiChannel::finish`; docs/mpi.md,
    // "Errors"). This saves the round that agreeing in every sync would cost. ----
    let large = !data.reqs.is_empty() || !data.bounce.is_empty() || out.iter().any(|o| !o.raw.is_empty());
    st.mark(5);
    st.done(large as usize);
    ch.finish_sync(incoming, plan, section, step)
}

/// The get reply from `q`, if it came.
fn ch_take(ch: &mut MpiChannel, q: usize, section: u32, step: u64) -> Option<Vec<u8>> {
    ch.take_frame(q, section, Kind::GetReply, step, 0).map(|f| f.body)
}
