//! The communication helpers of the distributed code: a context with its
//! [`Collectives`], irregular exchanges (alltoallv, allgatherv) by gets from registered
//! buffers, and the error agreement that keeps every process in step.

use super::{DistError, DistResult};
use lpf::collectives::{Collectives, Config};
use lpf::{Context, Memslot, Pid, Pod, MSG_DEFAULT, SYNC_DEFAULT};
use std::mem::size_of;

/// Bytes a collective call of ours is about at most (counts, a few scalars, an error
/// message): big vectors never go through the collectives' scratch.
const SMALL: usize = 64 * 1024;

/// Memory slots the distributed code holds at once on top of the collectives'
/// (iteration: two contribution buffers, the partials, a send buffer; exchanges:
/// a send and a receive buffer).
pub(crate) const USER_SLOTS: usize = 8;

/// A context and its collectives, for the duration of one collective call.
pub(crate) struct Comm<'c> {
    pub ctx: &'c mut Context,
    coll: Collectives,
    pub p: usize,
    pub me: usize,
}

/// `n` zeroed elements, or the out-of-memory error naming the bytes and `what`.
///
/// Claimed zeroed from the allocator (calloc): a large block comes as fresh zero pages,
/// not written here, so the pages are first touched by whoever fills them (the threads
/// of a parallel read) instead of by a memset on one thread.
pub(crate) fn try_zeroed<T: Pod>(n: usize, me: usize, what: &str) -> DistResult<Vec<T>> {
    let fail = || oom(n.saturating_mul(size_of::<T>()), me, what);
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| fail())?;
    if layout.size() == 0 {
        // n = 0, or a zero-sized T.
        // SAFETY: Pod types accept every bit pattern, zero included.
        return try_filled(n, unsafe { std::mem::zeroed::<T>() }, me, what);
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if ptr.is_null() {
        return Err(fail());
    }
    advise_huge_pages(ptr as *const u8, layout.size());
    // SAFETY: `ptr` comes from the global allocator with the layout of exactly n T's
    // (capacity n), and its n elements are zero bytes, a valid T (Pod: every bit
    // pattern is one).
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// `n` copies of `x`, claimed fallibly: an allocation the machine cannot give is an
/// error naming how much was needed, for what, on which process, instead of an abort.
pub(crate) fn try_filled<T: Clone>(n: usize, x: T, me: usize, what: &str) -> DistResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| oom(n.saturating_mul(size_of::<T>()), me, what))?;
    advise_huge_pages(v.as_ptr() as *const u8, v.capacity() * size_of::<T>());
    v.resize(n, x);
    Ok(v)
}

/// Asks Linux to back the whole 2 MiB pages of `[ptr, ptr + bytes)`, fresh memory not
/// yet touched, with huge pages. Transparent huge pages are commonly enabled only where
/// asked (`madvise` mode); a large array is then faulted in 512 times fewer page faults,
/// which are most of the cost of filling fresh memory (issue 27: loading a converted
/// kron20 took 40% less CPU time). Below 4 MiB, or where the kernel does not do it,
/// nothing changes.
fn advise_huge_pages(ptr: *const u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 2 * HUGE {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    #[cfg(target_os = "linux")]
    if end > start {
        // SAFETY: the range lies inside one live allocation of ours; the advice changes
        // neither its contents nor its validity, only how its pages are backed, and a
        // refusal (huge pages disabled) is harmless, so its result is not looked at.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, end);
}

/// The out-of-memory error.
pub(crate) fn oom(bytes: usize, me: usize, what: &str) -> DistError {
    DistError::Invalid(format!(
        "out of memory: process {me} cannot allocate {bytes} bytes ({:.2} GiB) for {what}",
        bytes as f64 / (1u64 << 30) as f64
    ))
}

pub(crate) fn bytes<T>(n: usize) -> usize {
    n * size_of::<T>()
}

impl<'c> Comm<'c> {
    pub fn new(ctx: &'c mut Context) -> DistResult<Comm<'c>> {
        let p = ctx.nprocs() as usize;
        let cfg = Config { max_bytes: SMALL, user_slots: USER_SLOTS, user_msgs: 4 * p + 4, cost: None };
        let coll = Collectives::with_config(ctx, &cfg)?;
        let me = ctx.pid() as usize;
        Ok(Comm { ctx, coll, p, me })
    }

    pub fn release(self) -> DistResult<()> {
        if self.ctx.failure().is_some() {
            return Ok(());
        }
        self.coll.release(self.ctx).map_err(DistError::from)
    }

    pub fn sync(&mut self) -> DistResult<()> {
        self.ctx.sync(SYNC_DEFAULT).map_err(DistError::from)
    }

    pub(crate) fn allreduce_u64(&mut self, v: &mut [u64], op: fn(&mut u64, &u64)) -> DistResult<()> {
        self.coll.allreduce(self.ctx, v, op).map_err(DistError::from)
    }

    pub(crate) fn sum_u64(&mut self, x: u64) -> DistResult<u64> {
        let mut v = [x];
        self.allreduce_u64(&mut v, |a, b| *a = a.wrapping_add(*b))?;
        Ok(v[0])
    }

    pub(crate) fn max_u64(&mut self, x: u64) -> DistResult<u64> {
        let mut v = [x];
        self.allreduce_u64(&mut v, |a, b| *a = (*a).max(*b))?;
        Ok(v[0])
    }

    /// Every process's `x`, in process order.
    pub(crate) fn allgather_u64(&mut self, x: u64) -> DistResult<Vec<u64>> {
        self.allgather_u64s(&[x])
    }

    /// Every process's `xs` (the same length everywhere), concatenated in process
    /// order: one superstep.
    pub(crate) fn allgather_u64s(&mut self, xs: &[u64]) -> DistResult<Vec<u64>> {
        let mut all = vec![0u64; self.p * xs.len()];
        self.coll.allgather(self.ctx, xs, &mut all)?;
        Ok(all)
    }

    pub(crate) fn alltoall_u64(&mut self, send: &[u64]) -> DistResult<Vec<u64>> {
        let mut recv = vec![0u64; send.len()];
        self.coll.alltoall(self.ctx, send, &mut recv)?;
        Ok(recv)
    }

    pub(crate) fn broadcast_bytes(&mut self, root: usize, data: &mut Vec<u8>) -> DistResult<()> {
        let mut len = [data.len() as u64];
        self.coll.broadcast(self.ctx, root as Pid, &mut len)?;
        data.resize(len[0] as usize, 0);
        self.coll.broadcast(self.ctx, root as Pid, data)?;
        Ok(())
    }

    /// The error agreement: one allreduce of "lowest failing pid". If anybody failed,
    /// the lowest failing process's error (the first in file order, as ranges are in
    /// pid order) is broadcast and returned on every process; otherwise `r` is returned.
    /// Every process must call this at the same point, whether it failed or not.
    pub fn agree<T>(&mut self, r: DistResult<T>) -> DistResult<T> {
        if let Some(failure) = self.ctx.failure() {
            // Our context is dead (an LPF error): peers' syncs fail instead of waiting.
            // The error keeps the earlier failure's kind and reason.
            let earlier = lpf::Error::with_reason(failure.kind(), failure.reason(), "this process failed earlier");
            return r.and_then(|_| Err(DistError::Lpf(earlier)));
        }
        let mut flag = [if r.is_err() { self.me as u64 } else { u64::MAX }];
        self.allreduce_u64(&mut flag, |a, b| *a = (*a).min(*b))?;
        if flag[0] == u64::MAX {
            return r;
        }
        let root = flag[0] as usize;
        let mut msg = match (&r, root == self.me) {
            (Err(e), true) => e.encode(),
            _ => Vec::new(),
        };
        msg.truncate(SMALL - 64);
        self.broadcast_bytes(root, &mut msg)?;
        Err(DistError::decode(&msg))
    }

    /// Registers `len` elements at `ptr` as a global slot, which peers may write into.
    /// `ptr` is a `*mut` (from `Vec::as_mut_ptr`, never from a shared borrow) because
    /// LPF writes through it.
    ///
    /// # Safety
    /// The memory must stay valid and unmoved until the slot is deregistered, and not be
    /// accessed during syncs except through LPF.
    pub unsafe fn register_global<T: Pod>(&mut self, ptr: *mut T, len: usize) -> DistResult<Memslot> {
        self.ctx.register_global_raw(ptr.cast(), bytes::<T>(len)).map_err(DistError::from)
    }

    /// Registers `data` as a global slot that is only ever the source of peers' gets
    /// (no put or get of any process names it as a destination), so a shared borrow is
    /// enough.
    ///
    /// # Safety
    /// `data` must outlive the slot (deregistered before `data` is dropped or moved) and
    /// no process may write into the slot.
    pub(crate) unsafe fn register_global_source<T: Pod>(&mut self, data: &[T]) -> DistResult<Memslot> {
        // The cast only satisfies the registration's signature: LPF reads these bytes.
        self.ctx.register_global_raw(data.as_ptr() as *mut u8, bytes::<T>(data.len())).map_err(DistError::from)
    }

    /// As [`Comm::register_global`], a local slot (this process's own puts read it and
    /// its gets write into it).
    ///
    /// # Safety
    /// As for [`Comm::register_global`].
    pub unsafe fn register_local<T: Pod>(&mut self, ptr: *mut T, len: usize) -> DistResult<Memslot> {
        self.ctx.register_local_raw(ptr.cast(), bytes::<T>(len)).map_err(DistError::from)
    }

    pub fn deregister(&mut self, slot: Memslot) -> DistResult<()> {
        self.ctx.deregister(slot).map_err(DistError::from)
    }

    /// Irregular all-to-all: `send` holds p consecutive parts, part q of `counts[q]`
    /// elements for process q. Returns what every process sent to this one,
    /// concatenated in process order, and the counts. Costs an alltoall of 2p words
    /// (which also activates the send buffer's registration) and one superstep in which
    /// every process gets its parts from the senders' registered buffers.
    pub(crate) fn alltoallv<T: Pod>(&mut self, send: &[T], counts: &[usize]) -> DistResult<(Vec<T>, Vec<usize>)> {
        let (p, me) = (self.p, self.me);
        assert_eq!(counts.len(), p);
        assert_eq!(counts.iter().sum::<usize>(), send.len(), "alltoallv: counts must add up to the send buffer");
        let mut meta = vec![0u64; 2 * p];
        let mut off = 0usize;
        for q in 0..p {
            meta[2 * q] = counts[q] as u64;
            meta[2 * q + 1] = off as u64;
            off += counts[q];
        }
        // SAFETY: `send` outlives the slot (deregistered below); it is only got from.
        let send_slot = unsafe { self.register_global_source(send)? };
        let r = (|| {
            let mut got = vec![0u64; 2 * p];
            self.coll.alltoall(self.ctx, &meta, &mut got)?;
            let recv_counts: Vec<usize> = (0..p).map(|q| got[2 * q] as usize).collect();
            let total: usize = recv_counts.iter().sum();
            let recv = try_zeroed::<T>(total, me, "the elements received in an all-to-all exchange");
            // Everybody learns whether somebody could not make room before any get.
            let mut recv = self.agree(recv)?;
            // SAFETY: `recv` is neither touched nor moved until the slot is deregistered
            // below; the gets write through this `*mut`.
            let recv_slot = unsafe { self.register_local(recv.as_mut_ptr(), recv.len())? };
            let mut at = 0usize;
            let mut own = None;
            let mut r = Ok(());
            for q in 0..p {
                let (c, src_off) = (recv_counts[q], got[2 * q + 1] as usize);
                if q == me {
                    own = Some((at, src_off, c));
                } else if c > 0 && r.is_ok() {
                    r = self.ctx.get(q as Pid, send_slot, bytes::<T>(src_off), recv_slot, bytes::<T>(at), bytes::<T>(c), MSG_DEFAULT);
                }
                at += c;
            }
            r?;
            if p > 1 {
                self.sync()?;
            }
            self.deregister(recv_slot)?;
            if let Some((at, src_off, c)) = own {
                recv[at..at + c].copy_from_slice(&send[src_off..src_off + c]);
            }
            Ok((recv, recv_counts))
        })();
        if self.ctx.failure().is_none() {
            self.deregister(send_slot)?;
        }
        r
    }

    /// Irregular allgather: every process's `mine`, concatenated in process order, on
    /// every process, with the counts.
    pub(crate) fn allgatherv<T: Pod>(&mut self, mine: &[T]) -> DistResult<(Vec<T>, Vec<usize>)> {
        let (p, me) = (self.p, self.me);
        // SAFETY: `mine` outlives the slot (deregistered below); it is only got from.
        let slot = unsafe { self.register_global_source(mine)? };
        let r = (|| {
            let counts: Vec<usize> = self.allgather_u64(mine.len() as u64)?.into_iter().map(|c| c as usize).collect();
            let total: usize = counts.iter().sum();
            let all = try_zeroed::<T>(total, me, "the elements of an all-gather");
            let mut all = self.agree(all)?;
            // SAFETY: `all` is neither touched nor moved until the slot is deregistered
            // below; the gets write through this `*mut`.
            let dst = unsafe { self.register_local(all.as_mut_ptr(), all.len())? };
            let mut at = 0usize;
            let mut own_at = 0usize;
            let mut r = Ok(());
            for (q, &c) in counts.iter().enumerate() {
                if q == me {
                    own_at = at;
                } else if c > 0 && r.is_ok() {
                    r = self.ctx.get(q as Pid, slot, 0, dst, bytes::<T>(at), bytes::<T>(c), MSG_DEFAULT);
                }
                at += c;
            }
            r?;
            if p > 1 {
                self.sync()?;
            }
            self.deregister(dst)?;
            all[own_at..own_at + mine.len()].copy_from_slice(mine);
            Ok((all, counts))
        })();
        if self.ctx.failure().is_none() {
            self.deregister(slot)?;
        }
        r
    }

    /// Element-wise wrapping sum of `v` (the same length everywhere) over all processes,
    /// for long vectors: reduce-scatter by [`Comm::alltoallv`] (block q of every vector
    /// to process q, which adds them in process order), then [`Comm::allgatherv`].
    /// h = 2(p - 1)/p·n words, two irregular exchanges.
    pub(crate) fn allreduce_sum_u64_long(&mut self, v: &mut [u64]) -> DistResult<()> {
        self.allreduce_u64_long(v, u64::wrapping_add)
    }

    /// As [`Comm::allreduce_sum_u64_long`] with any associative, commutative `op`.
    pub(crate) fn allreduce_u64_long(&mut self, v: &mut [u64], op: fn(u64, u64) -> u64) -> DistResult<()> {
        self.allreduce_long(v, op)
    }

    /// As [`Comm::allreduce_u64_long`] for any element type (e.g. the u32 parents of
    /// WCC, combined by min).
    pub(crate) fn allreduce_long<T: Pod>(&mut self, v: &mut [T], op: fn(T, T) -> T) -> DistResult<()> {
        let (p, n) = (self.p, v.len());
        if p == 1 {
            return Ok(());
        }
        let start = |q: usize| ((q as u128 * n as u128) / p as u128) as usize;
        let counts: Vec<usize> = (0..p).map(|q| start(q + 1) - start(q)).collect();
        let (parts, _) = self.alltoallv(v, &counts)?;
        let mine = counts[self.me];
        let mut acc = parts[..mine].to_vec();
        for q in 1..p {
            for (a, b) in acc.iter_mut().zip(&parts[q * mine..(q + 1) * mine]) {
                *a = op(*a, *b);
            }
        }
        drop(parts);
        let (all, _) = self.allgatherv(&acc)?;
        v.copy_from_slice(&all);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_claims_are_zeroed_or_filled_whole() {
        for n in [0usize, 1, 1000, (6 << 20) + 3] {
            let z = try_zeroed::<u32>(n, 0, "test").unwrap();
            assert!(z.len() == n && z.iter().all(|&x| x == 0), "{n}");
            let f = try_filled::<u64>(n, 7, 0, "test").unwrap();
            assert!(f.len() == n && f.iter().all(|&x| x == 7), "{n}");
        }
        let e = try_zeroed::<u64>(usize::MAX / 4, 3, "the impossible").unwrap_err();
        assert!(e.to_string().contains("process 3 cannot allocate") && e.to_string().contains("the impossible"), "{e}");
    }
    /// The agreement hands every process the failing process's LPF error whole, its
    /// kind and reason too (not its text), so that every caller can match the reason.
    #[test]
    fn the_agreed_lpf_error_keeps_its_kind_and_reason() {
        for failed in [
            lpf::Error::peer_left(Some(2), "process 2 left"),
            lpf::Error::out_of_memory("the message queue is full"),
            lpf::Error::misuse("lpf_get", "slot 9 is stale"),
        ] {
            let got = crate::dist::on_processes(3, |comm| comm.agree(if comm.me == 1 { Err(DistError::Lpf(failed.clone())) } else { Ok(()) }));
            for (q, r) in got.iter().enumerate() {
                match r {
                    Err(DistError::Lpf(e)) => assert_eq!(e, &failed, "process {q}"),
                    other => panic!("process {q}: {other:?}"),
                }
            }
            assert!(matches!(&got[0], Err(DistError::Lpf(e)) if e.reason() == failed.reason() && e.kind() == failed.kind()));
        }
    }

    /// A process whose context failed earlier does not enter the agreement: it returns
    /// an error of the earlier failure's kind and reason, and its peers see it leave.
    #[test]
    fn a_failed_process_agrees_with_its_earlier_reason() {
        use lpf::{Args, Root, MSG_DEFAULT};
        let got = std::sync::Mutex::new(vec![None, None]);
        let spmd = |ctx: &mut Context, _args: Args| {
            let me = ctx.pid() as usize;
            let r = Comm::new(ctx).and_then(|mut comm| {
                if me == 1 {
                    // Pid 9 is no process: a misuse, which fails the context.
                    let bad = comm.ctx.put(Memslot::INVALID, 0, 9, Memslot::INVALID, 0, 8, MSG_DEFAULT);
                    assert!(bad.is_err() && comm.ctx.failure().is_some());
                }
                let r = comm.agree(Ok(()));
                super::super::finish(comm, r)
            });
            got.lock().unwrap()[me] = Some(r);
        };
        assert!(Root::with_max_procs(2).exec(2, &spmd, Args::none()).is_err(), "process 1 failed: the section fails");
        let got = got.into_inner().unwrap();
        match &got[1] {
            Some(Err(DistError::Lpf(e))) => {
                assert_eq!(e.reason(), lpf::Reason::Misuse { call: "lpf_put" }, "{e}");
                assert!(e.is_fatal() && e.message().contains("failed earlier"), "{e}");
            }
            other => panic!("process 1: {other:?}"),
        }
        assert!(matches!(&got[0], Some(Err(DistError::Lpf(e))) if matches!(e.reason(), lpf::Reason::PeerLeft { .. })), "process 0: {:?}", got[0]);
    }
}
