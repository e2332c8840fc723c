//! One sync over the mesh, in the paper's four phases, for the group of LPF processes
//! living in this OS process (one for the TCP engine, k threads for the hybrid one):
//!
//! 1. **Meta-data exchange.** Direct: one `Meta` frame to every other process,
//!    carrying the request headers for it (puts with payloads up to
//!    [`INLINE_MAX`] coalesced, get requests) and whether this process communicates at
//!    all; large payloads follow raw. Bruck: ceil(log2 n) rounds of count blocks tell
//!    each process whom to expect, then the request headers go in `Hdrs` frames to the
//!    processes actually addressed. Either way every process has heard from
//!    every other (directly or transitively) before anything is written, so a process
//!    that left fails the sync with nothing written; and if nobody communicates the
//!    sync ends here.
//! 2. **Write-conflict resolution** at the destination: every write into this
//!    process's memory (incoming puts, puts among its own threads, its own gets) is
//!    put in one order, and each keeps only the bytes no later write covers. The
//!    surviving pieces are disjoint, so they can be filled in any order - straight from
//!    the socket into user memory - and the result is that serialisation. Remote bounds
//!    and the incoming message count are checked here; a bad request writes nothing.
//! 3. **Data exchange**: raw payloads into their pieces, gets served from memory with
//!    vectored writes, replies into their pieces.
//! 4. **Final barrier** (dissemination, ceil(log2 n) rounds) carrying the first error,
//!    so an error anywhere fails the sync everywhere with the same message.

use super::mesh::{Mesh, Seg};
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::conflict::{all_inline, apply_inline, plan, Locals, Plan, Write};
use crate::phases::requests::{build, Outgoing};
use crate::phases::{final_barrier, meta_exchange, note};
use crate::types::Pid;
use crate::wire::{Kind, INLINE_MAX};

/// The raw segments for a write of `w` whose bytes arrive in order.
fn segments(w: &Write, pieces: &[(usize, usize)], discard: bool, out: &mut Vec<Seg>) {
    if discard {
        out.push(Seg::Skip(w.len));
        return;
    }
    let mut at = w.addr;
    for &(s, e) in &pieces[w.lo..w.hi] {
        if s > at {
            out.push(Seg::Skip(s - at));
        }
        out.push(Seg::To(s as *mut u8, e - s));
        at = e;
    }
    if at < w.addr + w.len {
        out.push(Seg::Skip(w.addr + w.len - at));
    }
}

/// One sync of the processes `steps` (global pids `offsets[me]..`) of this mesh. The
/// shared phases live in [`crate::phases`]; what is TCP's own here is how payloads
/// travel: raw after the frame that announces them, read straight into their pieces.
pub(crate) fn sync(mesh: &mut Mesh, section: u32, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
    let r = run(mesh, section, step, steps);
    mesh.detach();
    r
}

fn run(mesh: &mut Mesh, section: u32, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
    let (me, n) = (mesh.layout.me, mesh.layout.n);
    let base = mesh.layout.offsets[me];
    debug_assert_eq!(steps.len() as Pid, mesh.layout.offsets[me + 1] - base);
    let built = build(steps, &mesh.layout);
    let out = &built.out;

    // ---- Phase 1: meta-data exchange; large put payloads follow their frame raw. ----
    let mut send_requests = |mesh: &mut Mesh, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let body = o.body(prefix);
        mesh.send(d, kind, 0, section, step, &body, o.raw_len);
        for r in &o.raw {
            // SAFETY: `r.src..+size` was checked against its registration when the put
            // was queued; `sync` detaches before returning.
            unsafe { mesh.send_mem(d, r.src, r.size) };
        }
    };
    let (incoming, global_any) = meta_exchange(mesh, section, step, out, built.any, &mut send_requests)?;
    if !global_any {
        return Ok(());
    }

    // ---- Phase 2: checks and write-conflict resolution. ----
    let loc = Locals { steps, base, me };
    if all_inline(&incoming, &built.local, out) {
        // Every byte to write is here: no plan, no raw data; the barrier remains.
        let found = apply_inline(&loc, &incoming, &built.local);
        return final_barrier(mesh, section, step, found);
    }
    let Plan { writes, pieces, put_writes, get_writes, mut found, discard } = {
        let p = plan(&loc, &incoming, &built.local, out);
        p.copy_local();
        p
    };
    // Raw put payloads go straight into their pieces.
    for s in (0..n).filter(|&s| s != me) {
        let Some(inc) = &incoming[s] else { continue };
        let mut segs = Vec::new();
        for (k, p) in inc.raw_puts().enumerate() {
            match put_writes[s][k] {
                Some(i) => segments(&writes[i], &pieces, discard, &mut segs),
                None => segs.push(Seg::Skip(p.size)),
            }
        }
        if inc.raw > 0 {
            // SAFETY: every `To` segment is a resolved piece of a checked destination.
            unsafe { mesh.install_plan(s, segs)? };
        }
    }

    // ---- Phase 3: data exchange. Serve the gets asked of us, then wait. ----
    for s in (0..n).filter(|&s| s != me) {
        let Some(inc) = &incoming[s] else { continue };
        if inc.gets.is_empty() {
            continue;
        }
        let mut status = Vec::with_capacity(inc.gets.len());
        let mut parts: Vec<(*const u8, usize)> = Vec::new();
        let mut raw = 0u64;
        for g in &inc.gets {
            let what = || format!("get by process {} from process {}", g.requester, g.src);
            match loc.area_of(g.src, g.slot, g.off, g.size, &what) {
                Ok(p) => {
                    status.push(1u8);
                    parts.push((p, g.size));
                    raw += g.size as u64;
                }
                Err(e) => {
                    status.push(0u8);
                    note(&mut found, me, e);
                }
            }
        }
        mesh.send(s, Kind::GetReply, 0, section, step, &status, raw);
        let mut small: Vec<u8> = Vec::new();
        for (p, len) in parts {
            if len == 0 {
            } else if len <= INLINE_MAX {
                // SAFETY: checked against the source registration just above.
                small.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
            } else {
                mesh.send_owned(s, std::mem::take(&mut small));
                // SAFETY: as above; the memory stays put until this sync returns.
                unsafe { mesh.send_mem(s, p, len) };
            }
        }
        mesh.send_owned(s, small);
    }
    let mut replied: Vec<bool> = out.iter().map(|o| o.my_gets.is_empty()).collect();
    replied[me] = true;
    let watch: Vec<usize> = (0..n).filter(|&s| s != me && (incoming[s].is_some() || !replied[s])).collect();
    mesh.wait(|m| {
        let mut done = true;
        for &s in &watch {
            // The reply comes after the raw put payloads from s (stream order), so
            // its frame, once here, owns whatever raw bytes are pending.
            if !replied[s] {
                match m.take(s, section, Kind::GetReply, step, 0) {
                    None => {
                        m.check_peer(s, section, step, Kind::GetReply)?;
                        done = false;
                        continue;
                    }
                    Some(f) => {
                        replied[s] = true;
                        let gets = &out[s].my_gets;
                        if f.body.len() != gets.len() {
                            return Err(Error::fatal(format!("malformed get reply from {}", m.link(s).name)));
                        }
                        let mut segs = Vec::new();
                        for (k, &ok) in f.body.iter().enumerate() {
                            if ok != 0 {
                                segments(&writes[get_writes[s] + k], &pieces, discard, &mut segs);
                            }
                        }
                        // SAFETY: every `To` segment is a resolved piece of one of our own
                        // get destinations, checked when the get was queued.
                        unsafe { m.install_plan(s, segs)? };
                    }
                }
            }
            if m.raw_pending(s) > 0 {
                m.check_peer(s, section, step, Kind::GetReply)?;
                done = false;
            }
        }
        Ok(done)
    })?;

    // ---- Phase 4: final barrier, agreeing on the first error. ----
    final_barrier(mesh, section, step, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phases::conflict::{resolve, Source};

    #[test]
    fn segments_skip_what_later_writes_cover() {
        let w = |a, l| Write::new(a, l, Source::Remote);
        let mut ws = vec![w(0, 10), w(5, 10), w(2, 2)];
        let p = resolve(&mut ws);
        let mut segs = Vec::new();
        segments(&ws[0], &p, false, &mut segs);
        let lens: Vec<(bool, usize)> = segs.iter().map(|s| match *s {
            Seg::To(_, n) => (true, n),
            Seg::Skip(n) => (false, n),
        }).collect();
        assert_eq!(lens, vec![(true, 2), (false, 2), (true, 1), (false, 5)]);
    }
}
