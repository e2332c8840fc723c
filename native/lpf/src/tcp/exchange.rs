//! How data moves in a sync over the TCP mesh (the phases are the sync driver's,
//! [`crate::phases::driver`]; docs/tcp.md): large put payloads follow the frame that
//! announces them raw, and are read from the socket straight into their surviving
//! pieces (disjoint, so any order of arrival gives the plan's serialisation); gets are
//! served from memory with vectored writes, the replies read into their pieces; the
//! sync ends with the dissemination barrier carrying the first error, so an error
//! anywhere fails the sync everywhere with the same message.

use super::mesh::{Mesh, Seg};
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::conflict::Write;
use crate::phases::driver::{self, Exchange, SyncId, Transport};
use crate::phases::requests::Outgoing;
use crate::phases::{final_barrier, Channel, Found};
use crate::wire::{Kind, INLINE_MAX};

/// The raw segments for a write of `w`, whose surviving pieces are `pieces`, when its
/// bytes arrive in order.
fn segments(w: &Write, pieces: &[(usize, usize)], discard: bool, out: &mut Vec<Seg>) {
    if discard {
        out.push(Seg::Skip(w.len));
        return;
    }
    let mut at = w.addr;
    for &(s, e) in pieces {
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

/// One sync of the processes `steps` (global pids `offsets[me]..`) of this mesh: the
/// driver's phases ([`crate::phases::driver`]) over [`TcpStreams`].
pub(crate) fn sync(mesh: &mut Mesh, id: SyncId, steps: &[&Superstep<'_>]) -> Result<()> {
    let r = driver::sync(mesh, &mut TcpStreams, id, steps);
    mesh.detach();
    r
}

/// How data moves on the TCP mesh: raw bytes on the streams, each after the frame
/// that announces it, read straight into their pieces.
pub(crate) struct TcpStreams;

impl Transport<Mesh> for TcpStreams {
    /// Large put payloads follow their frame raw.
    fn send_payloads(&mut self, mesh: &mut Mesh, d: usize, o: &Outgoing) -> Result<()> {
        for r in &o.raw {
            // SAFETY: `r.src..+size` was checked against its registration when the put
            // was queued; `sync` detaches before returning.
            unsafe { mesh.send_mem(d, r.src, r.size) };
        }
        Ok(())
    }

    fn exchange(&mut self, mesh: &mut Mesh, x: &mut Exchange<'_, '_, '_>) -> Result<()> {
        let reply = x.id.tag(Kind::GetReply);
        // Raw put payloads go straight into their pieces.
        for s in x.peers() {
            let Some(inc) = &x.incoming[s] else { continue };
            let mut segs = Vec::new();
            for (k, p) in inc.raw_puts().enumerate() {
                match x.plan.put_writes[s][k] {
                    Some(i) => segments(&x.plan.writes[i], x.plan.pieces_of(i), x.plan.discard, &mut segs),
                    None => segs.push(Seg::Skip(p.size)),
                }
            }
            if inc.raw > 0 {
                // SAFETY: every `To` segment is a resolved piece of a checked destination.
                unsafe { mesh.install_plan(s, segs)? };
            }
        }

        // Serve the gets asked of us: statuses in a frame, the data raw after it.
        for s in x.askers() {
            let mut status = Vec::new();
            let mut parts: Vec<(*const u8, usize)> = Vec::new();
            let mut raw = 0u64;
            x.serve_gets(s, |g, at| {
                status.push(at.is_some() as u8);
                if let Some(p) = at {
                    parts.push((p, g.size));
                    raw += g.size as u64;
                }
            });
            mesh.post(s, reply, &status, raw);
            let mut small: Vec<u8> = Vec::new();
            for (p, len) in parts.into_iter().filter(|&(_, len)| len > 0) {
                if len <= INLINE_MAX {
                    // SAFETY: checked against the source registration by `serve_gets`.
                    small.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
                } else {
                    mesh.send_owned(s, std::mem::take(&mut small));
                    // SAFETY: as above; the memory stays put until this sync returns.
                    unsafe { mesh.send_mem(s, p, len) };
                }
            }
            mesh.send_owned(s, small);
        }

        // Wait for our replies and every raw byte announced to us.
        let me = x.loc.me;
        let (out, plan) = (x.out, &*x.plan);
        let mut replied: Vec<bool> = out.iter().map(|o| o.my_gets.is_empty()).collect();
        replied[me] = true;
        let watch: Vec<usize> = x.peers().filter(|&s| x.incoming[s].is_some() || !replied[s]).collect();
        mesh.wait(|m| {
            let mut done = true;
            for &s in &watch {
                // The reply comes after the raw put payloads from s (stream order), so
                // its frame, once here, owns whatever raw bytes are pending.
                if !replied[s] {
                    match m.take(s, reply) {
                        None => {
                            m.check_peer(s, reply)?;
                            done = false;
                            continue;
                        }
                        Some(f) => {
                            replied[s] = true;
                            if f.body.len() != out[s].my_gets.len() {
                                return Err(Error::protocol(format!("malformed get reply from {}", m.link(s).name)));
                            }
                            let mut segs = Vec::new();
                            for (k, &ok) in f.body.iter().enumerate() {
                                if ok != 0 {
                                    let i = plan.get_writes[s] + k;
                                    segments(&plan.writes[i], plan.pieces_of(i), plan.discard, &mut segs);
                                }
                            }
                            // SAFETY: every `To` segment is a resolved piece of one of our own
                            // get destinations, checked when the get was queued.
                            unsafe { m.install_plan(s, segs)? };
                        }
                    }
                }
                if m.raw_pending(s) > 0 {
                    m.check_peer(s, reply)?;
                    done = false;
                }
            }
            Ok(done)
        })
    }

    /// The final barrier, agreeing on the first error.
    fn complete(&mut self, mesh: &mut Mesh, id: SyncId, found: Found) -> Result<()> {
        final_barrier(mesh, id, found)
    }
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
        segments(&ws[0], &p[ws[0].lo..ws[0].hi], false, &mut segs);
        let lens: Vec<(bool, usize)> = segs.iter().map(|s| match *s {
            Seg::To(_, n) => (true, n),
            Seg::Skip(n) => (false, n),
        }).collect();
        assert_eq!(lens, vec![(true, 2), (false, 2), (true, 1), (false, 5)]);
    }
}
