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
use super::ffi::{self, chunks, Comm, MpiTag, Request};
use super::prof::Stamps;
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::phases::conflict::Plan;
use crate::phases::driver::{self, Exchange, SyncId, Transport};
use crate::phases::requests::Outgoing;
use crate::phases::{Channel, Found};
use crate::wire::{Kind, INLINE_MAX};

/// The tag of a data message: the k-th one between a pair of processes, in one
/// direction, in the sync of `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DataTag {
    step: u64,
    k: u32,
}

impl DataTag {
    /// The MPI tag (module doc), given the largest MPI allows (`MPI_TAG_UB`); below
    /// 2^30 - 1 (at least 32767), `k mod (ub + 1)`.
    fn mpi(self, ub: i32) -> MpiTag {
        MpiTag(if ub >= (1 << 30) - 1 {
            (((self.step & 0x3ff) << 20) as i32) | (self.k & 0xf_ffff) as i32
        } else {
            (self.k % (ub as u32 + 1)) as i32
        })
    }
}

/// How data moves on `mpimsg`: MPI messages on the section's data communicator, one
/// sync's worth of them.
pub(crate) struct MpiMessages {
    comm: Comm,
    step: u64,
    ub: i32,
    reqs: Vec<Request>,
    /// Receives into private buffers: (buffer, write index or None to discard).
    bounce: Vec<(Vec<u8>, Option<usize>)>,
    /// Per peer: data messages sent to it / received from it so far in this sync
    /// (allocated only when large data moves).
    k_out: Vec<u32>,
    k_in: Vec<u32>,
    /// Whether large data moved (the profile's class).
    large: bool,
    st: Stamps,
}

/// The next tag of the counter of peer `q` in `v` (sized to `n` peers on first use).
fn next_tag(v: &mut Vec<u32>, n: usize, q: usize, step: u64) -> DataTag {
    if v.is_empty() {
        v.resize(n, 0);
    }
    let k = v[q];
    v[q] += 1;
    DataTag { step, k }
}

impl MpiMessages {
    /// Sends `len` bytes at `ptr` to `to`.
    ///
    /// # Safety
    /// `ptr..ptr + len` stays valid and unchanged until the sync returns (the sync
    /// waits for all its requests on success; a failed sync fails its process).
    unsafe fn send(&mut self, ptr: *const u8, len: usize, to: usize, n: usize) -> Result<()> {
        for (off, c) in chunks(len) {
            let tag = next_tag(&mut self.k_out, n, to, self.step).mpi(self.ub);
            self.reqs.push(ffi::isend(ptr.add(off), c, to, tag, self.comm)?);
        }
        Ok(())
    }

    /// Receives the `len` bytes of write `i` of `plan` (None: rejected) from `from`: in
    /// place if the write survives whole, else into a private buffer (remembering the
    /// write for the copy, unless `plan` discards).
    ///
    /// # Safety
    /// The write's destination, a checked and resolved piece of this process's memory,
    /// stays valid and untouched until the sync returns.
    unsafe fn recv(&mut self, plan: &Plan, i: Option<usize>, len: usize, from: usize, n: usize) -> Result<()> {
        let base = match i.filter(|&i| plan.whole(i)) {
            Some(i) => plan.writes[i].addr as *mut u8,
            None => {
                self.bounce.push((vec![0u8; len], i.filter(|_| !plan.discard)));
                self.bounce.last_mut().unwrap().0.as_mut_ptr()
            }
        };
        for (off, c) in chunks(len) {
            let tag = next_tag(&mut self.k_in, n, from, self.step).mpi(self.ub);
            self.reqs.push(ffi::irecv(base.add(off), c, from, tag, self.comm)?);
        }
        Ok(())
    }
}

/// One sync of the LPF processes `steps` of this rank (global pids `offsets[me]..`, one
/// per rank on `mpimsg`, the rank's threads on the hybrid engine): the driver's phases
/// ([`crate::phases::driver`]) over [`MpiMessages`].
pub(crate) fn sync(ch: &mut MpiChannel, comm: Comm, ub: i32, id: SyncId, steps: &[&Superstep<'_>]) -> Result<()> {
    let mut t = MpiMessages {
        comm,
        step: id.step,
        ub,
        reqs: Vec::new(),
        bounce: Vec::new(),
        k_out: Vec::new(),
        k_in: Vec::new(),
        large: false,
        st: Stamps::start(),
    };
    let r = driver::sync(ch, &mut t, id, steps);
    t.st.done(t.large as usize);
    r
}

impl Transport<MpiChannel> for MpiMessages {
    /// Large payloads leave at once.
    fn send_payloads(&mut self, ch: &mut MpiChannel, d: usize, o: &Outgoing) -> Result<()> {
        for r in &o.raw {
            // SAFETY: checked against its registration when queued; unchanged until
            // the sync returns.
            unsafe { self.send(r.src, r.size, d, ch.layout.n)? };
        }
        Ok(())
    }

    fn exchange(&mut self, ch: &mut MpiChannel, x: &mut Exchange<'_, '_, '_>) -> Result<()> {
        self.st.mark(0);
        let n = ch.layout.n;
        // Receives of the large puts: in place if the piece survives whole.
        for src in x.peers() {
            let Some(inc) = &x.incoming[src] else { continue };
            for (k, p) in inc.raw_puts().enumerate() {
                // SAFETY: a put's write is a checked, resolved piece of this process's memory.
                unsafe { self.recv(x.plan, x.plan.put_writes[src][k], p.size, src, n)? };
            }
        }
        self.st.mark(1);

        // Serve the gets asked of us: statuses and small data in one control message,
        // large data as messages.
        for q in x.askers() {
            let mut body = Vec::new();
            let mut large = Vec::new();
            let mut small = Vec::new();
            x.serve_gets(q, |g, at| {
                body.push(at.is_some() as u8);
                match at {
                    // SAFETY: checked against the source registration by `serve_gets`.
                    Some(p) if g.size <= INLINE_MAX => small.extend_from_slice(unsafe { std::slice::from_raw_parts(p, g.size) }),
                    Some(p) => large.push((p, g.size)),
                    None => {}
                }
            });
            body.extend_from_slice(&small);
            ch.post(q, x.id.tag(Kind::GetReply), &body, 0);
            for (p, len) in large {
                // SAFETY: checked above; unchanged until the sync returns.
                unsafe { self.send(p, len, q, n)? };
            }
        }
        let out = x.out;
        let asked = out.iter().any(|o| !o.my_gets.is_empty());
        if !asked && self.reqs.is_empty() {
            // Nothing to wait for: no gets of ours, no large data.
            return Ok(());
        }

        // Ask for ours: each reply's small data is copied, its large data received.
        let mut replied: Vec<bool> = out.iter().map(|o| o.my_gets.is_empty()).collect();
        replied[x.loc.me] = true;
        let plan = &*x.plan;
        let mut error: Option<Error> = None;
        ch.wait_for_data(|ch| {
            for q in 0..n {
                if replied[q] {
                    continue;
                }
                let Some(pos) = ch.take_frame(q, x.id.tag(Kind::GetReply)).map(|f| f.body) else {
                    ch.check_peer(q, x.id.tag(Kind::GetReply))?;
                    continue;
                };
                replied[q] = true;
                let gets = &out[q].my_gets;
                if pos.len() < gets.len() {
                    return Err(Error::protocol(format!("malformed get reply from process {q}")));
                }
                let mut at = gets.len();
                for (k, g) in gets.iter().enumerate() {
                    if pos[k] == 0 {
                        continue;
                    }
                    let i = plan.get_writes[q] + k;
                    if g.size <= INLINE_MAX {
                        if at + g.size > pos.len() {
                            return Err(Error::protocol(format!("malformed get reply from process {q}")));
                        }
                        plan.fill(i, &pos[at..at + g.size]);
                        at += g.size;
                    } else {
                        // SAFETY: a resolved piece of one of our get destinations.
                        if let Err(e) = unsafe { self.recv(plan, Some(i), g.size, q, n) } {
                            error.get_or_insert(e);
                        }
                    }
                }
            }
            if error.is_some() {
                return Ok(true);
            }
            Ok(replied.iter().all(|&r| r) && ffi::test_all(&mut self.reqs)?)
        })?;
        if let Some(e) = error {
            return Err(e);
        }
        self.st.mark(2);
        for (buf, write) in &self.bounce {
            if let Some(i) = *write {
                plan.fill(i, buf);
            }
        }
        self.st.mark(3);
        self.large = !self.reqs.is_empty() || !self.bounce.is_empty() || out.iter().any(|o| !o.raw.is_empty());
        Ok(())
    }

    /// No final barrier. Every write into this process's memory is done (its receives
    /// completed), and every read of it by a get (the replies were sent); the peers'
    /// likewise when their syncs return. An error found here fails this process only:
    /// it leaves the section saying why, and the others fail at their next sync or at
    /// the end of the section (`MpiChannel::finish`; docs/mpi.md, "Errors"). This saves
    /// the round that agreeing in every sync would cost (unless the channel agrees on
    /// errors).
    fn complete(&mut self, ch: &mut MpiChannel, id: SyncId, found: Found) -> Result<()> {
        let r = ch.end_sync(id, found);
        self.st.mark(4);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_tags_tell_neighbouring_syncs_apart_and_stay_below_the_bound() {
        let tag = |step, k, ub| DataTag { step, k }.mpi(ub).0;
        assert!(tag(7, 3, i32::MAX) != tag(8, 3, i32::MAX) && tag(7, 3, i32::MAX) != tag(7, 4, i32::MAX));
        for k in [0, 1, 32767, 32768, 1 << 20, u32::MAX] {
            assert!((0..=32767).contains(&tag(7, k, 32767)) && tag(1023, k, i32::MAX) >= 0, "k {k}");
        }
    }
}
