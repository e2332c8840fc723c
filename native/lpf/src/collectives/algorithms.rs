//! How each collective of [`super::Collectives`] moves its data: the supersteps of the
//! direct, two-phase and hierarchical algorithms (the module documentation of
//! [`super`] gives their BSP costs, [`super::cost`] the choice between them).

use super::{block, bytes_of, lend, lend_mut, sync, Algorithm, Collective, Collectives, Inter};
use crate::context::Context;
use crate::error::Result;
use crate::types::{Memslot, Pid, Pod, MSG_DEFAULT};
use std::mem::size_of;

impl Collectives {
    /// The algorithm of [`Collectives::broadcast`], after its checks.
    pub(super) fn broadcast_by<T: Pod>(&mut self, ctx: &mut Context, root: Pid, data: &mut [T], n: usize) -> Result<()> {
        let (p, me, root) = (self.p, self.me, root as usize);
        let s = size_of::<T>();
        match self.algorithm(Collective::Broadcast, n) {
            Algorithm::Local => Ok(()),
            Algorithm::Direct => {
                if me == root {
                    // SAFETY: between syncs, and no other part of the scratch is in use here.
                    unsafe { self.part::<T>(0, data.len()) }.copy_from_slice(data);
                    return sync(ctx);
                }
                let slot = self.slot();
                lend_mut(ctx, data, |ctx, dst| {
                    ctx.get(root as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                    sync(ctx)
                })
            }
            Algorithm::Hierarchical(inter) => self.broadcast_hierarchical(ctx, root, data, inter),
            Algorithm::TwoPhase => {
                let ne = data.len();
                let slot = self.slot();
                // Phase 1 (scatter): the vector goes to the root's scratch; each process
                // fetches its block into the same place of its own scratch.
                if me == root {
                    // SAFETY: between syncs, and no other part of the scratch is in use here.
                    unsafe { self.part::<T>(0, ne) }.copy_from_slice(data);
                } else {
                    let (start, len) = self.block(me, ne);
                    ctx.get(root as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                }
                sync(ctx)?;
                // Phase 2 (allgather): every block from its owner, straight into `data`.
                if me == root {
                    return sync(ctx);
                }
                let (start, len) = self.block(me, ne);
                // SAFETY: between syncs, and no other part of the scratch is in use here.
                data[start..start + len].copy_from_slice(unsafe { self.part::<T>(start * s, len) });
                lend_mut(ctx, data, |ctx, dst| {
                    for q in (0..p).filter(|&q| q != me) {
                        let (start, len) = self.block(q, ne);
                        ctx.get(q as Pid, slot, start * s, dst, start * s, len * s, MSG_DEFAULT)?;
                    }
                    sync(ctx)
                })
            }
        }
    }

    /// The algorithm of [`Collectives::scatter`], after its checks.
    pub(super) fn scatter_by<T: Pod>(&mut self, ctx: &mut Context, root: usize, src: &[T], dst: &mut [T], kb: usize) -> Result<()> {
        let (p, me, k) = (self.p, self.me, dst.len());
        if p == 1 {
            dst.copy_from_slice(src);
            return Ok(());
        }
        let slot = self.slot();
        if me == root {
            dst.copy_from_slice(&src[me * k..(me + 1) * k]);
            // SAFETY: `src` stays valid and unchanged for the call; LPF only reads it (puts).
            unsafe {
                lend(ctx, src.as_ptr(), src.len(), |ctx, lent| {
                    for q in (0..p).filter(|&q| q != me) {
                        ctx.put(lent, q * kb, q as Pid, slot, 0, kb, MSG_DEFAULT)?;
                    }
                    sync(ctx)
                })
            }
        } else {
            sync(ctx)?;
            // SAFETY: between syncs, and no other part of the scratch is in use here.
            dst.copy_from_slice(unsafe { self.part::<T>(0, k) });
            Ok(())
        }
    }

    /// The algorithm of [`Collectives::gather`], after its checks.
    pub(super) fn gather_by<T: Pod>(&mut self, ctx: &mut Context, root: usize, src: &[T], dst: &mut [T], kb: usize) -> Result<()> {
        let (p, me, k) = (self.p, self.me, src.len());
        if p == 1 {
            dst.copy_from_slice(src);
            return Ok(());
        }
        let slot = self.slot();
        if me == root {
            dst[me * k..(me + 1) * k].copy_from_slice(src);
            lend_mut(ctx, dst, |ctx, lent| {
                for q in (0..p).filter(|&q| q != me) {
                    ctx.get(q as Pid, slot, 0, lent, q * kb, kb, MSG_DEFAULT)?;
                }
                sync(ctx)
            })
        } else {
            // SAFETY: between syncs, and no other part of the scratch is in use here.
            unsafe { self.part::<T>(0, k) }.copy_from_slice(src);
            sync(ctx)
        }
    }

    /// The algorithm of [`Collectives::alltoall`], after its checks.
    pub(super) fn alltoall_by<T: Pod>(&mut self, ctx: &mut Context, src: &[T], dst: &mut [T], kb: usize) -> Result<()> {
        let (p, me) = (self.p, self.me);
        let k = src.len() / p;
        dst[me * k..(me + 1) * k].copy_from_slice(&src[me * k..(me + 1) * k]);
        if p == 1 {
            return Ok(());
        }
        for q in (0..p).filter(|&q| q != me) {
            // SAFETY: between syncs, and no other part of the scratch is in use here.
            unsafe { self.part::<T>(q * kb, k) }.copy_from_slice(&src[q * k..(q + 1) * k]);
        }
        let slot = self.slot();
        lend_mut(ctx, dst, |ctx, lent| {
            for q in (0..p).filter(|&q| q != me) {
                ctx.get(q as Pid, slot, me * kb, lent, q * kb, kb, MSG_DEFAULT)?;
            }
            sync(ctx)
        })
    }

    /// [`Algorithm::Hierarchical`] broadcast (see [`Collectives::broadcast`]).
    pub(super) fn broadcast_hierarchical<T: Pod>(&mut self, ctx: &mut Context, root: usize, data: &mut [T], inter: Inter) -> Result<()> {
        let (me, s, ne) = (self.me, size_of::<T>(), data.len());
        let n = bytes_of::<T>(ne);
        let m = self.nodes.len();
        let slot = self.slot();
        let root_node = self.node_of(root);
        let rep = |i: usize| if i == root_node { root } else { self.nodes[i].start };
        let mine = self.node_of(me);
        // The vector is served from the scratch: the root's, then the representatives'.
        if me == root {
            // SAFETY: between syncs, and no other part of the scratch is in use here.
            unsafe { self.part::<T>(0, ne) }.copy_from_slice(data);
        }
        let ptr = data.as_mut_ptr();
        // SAFETY: `data` is held mutably for the whole call, so nothing else reads or writes it while LPF does.
        unsafe {
            lend(ctx, ptr, ne, |ctx, dst| {
                // Superstep 1: into the root's node by shared memory; to the other
                // nodes' representatives over the network (whole, or block j of m, which
                // belongs to node j's representative).
                if mine == root_node {
                    if me != root {
                        ctx.get(root as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                    }
                } else if me == rep(mine) {
                    let (start, len) = if inter == Inter::Direct { (0, ne) } else { block(mine, ne, m) };
                    ctx.get(root as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                }
                sync(ctx)?;
                if inter == Inter::TwoPhase {
                    // Superstep 2: representatives allgather the blocks (the root has all).
                    if mine != root_node && me == rep(mine) {
                        for j in (0..m).filter(|&j| j != mine) {
                            let (start, len) = block(j, ne, m);
                            ctx.get(rep(j) as Pid, slot, start * s, slot, start * s, len * s, MSG_DEFAULT)?;
                        }
                    }
                    sync(ctx)?;
                }
                // Last superstep: the other nodes' members fetch the vector from their
                // representative by shared memory.
                if mine != root_node {
                    if me == rep(mine) {
                        std::slice::from_raw_parts_mut(ptr, ne).copy_from_slice(self.part::<T>(0, ne));
                    } else {
                        ctx.get(rep(mine) as Pid, slot, 0, dst, 0, n, MSG_DEFAULT)?;
                    }
                }
                sync(ctx)
            })
        }
    }

    /// The index of the node holding process q.
    pub(super) fn node_of(&self, q: usize) -> usize {
        self.nodes.partition_point(|r| r.end <= q)
    }

    pub(super) fn reduction<T: Pod>(&mut self, ctx: &mut Context, root: Option<Pid>, data: &mut [T], op: &impl Fn(&mut T, &T)) -> Result<()> {
        Self::check_type::<T>();
        if let Some(r) = root {
            self.check_root(r);
        }
        let kind = if root.is_some() { Collective::Reduce } else { Collective::Allreduce };
        let what = if root.is_some() { "reduce" } else { "allreduce" };
        let n = bytes_of::<T>(data.len());
        self.check_size(what, n)?;
        let (p, me) = (self.p, self.me);
        let root = root.map(|r| r as usize);
        let slot = self.slot();
        let (ne, s) = (data.len(), size_of::<T>());
        let alg = self.algorithm(kind, n);
        // Direct algorithms gather p whole vectors in the scratch, two-phase ones p blocks
        // of ⌈ne/p⌉ elements.
        let direct = matches!(alg, Algorithm::Direct | Algorithm::Hierarchical(Inter::Direct));
        self.check_scratch(what, p * if direct { n } else { ne.div_ceil(p) * s })?;
        // One pointer for both the registration and our own access to `data`.
        let ptr = data.as_mut_ptr();
        match alg {
            Algorithm::Local => Ok(()),
            Algorithm::Direct => {
                let receives = |q: usize| root.is_none_or(|r| r == q);
                lend_mut(ctx, data, |ctx, src| {
                    for q in (0..p).filter(|&q| q != me && receives(q)) {
                        ctx.put(src, 0, q as Pid, slot, me * n, n, MSG_DEFAULT)?;
                    }
                    sync(ctx)
                })?;
                if receives(me) {
                    // SAFETY: between syncs, after the superstep that filled the scratch blocks.
                    unsafe { self.fold_direct(data, op) };
                }
                Ok(())
            }
            Algorithm::TwoPhase => {
                // SAFETY: `data` is held mutably for the whole call, so nothing else reads or writes it while LPF does.
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        self.reduce_scatter(ctx, lent, ptr, ne, op)?;
                        // Then gather (to the root) or allgather (to all) the combined
                        // blocks, read from scratch block 0 of their owners.
                        if root.is_none_or(|r| r == me) {
                            self.own_block(ptr, ne);
                            for q in (0..p).filter(|&q| q != me) {
                                let (start, len) = self.block(q, ne);
                                ctx.get(q as Pid, slot, 0, lent, start * s, len * s, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)
                    })
                }
            }
            Algorithm::Hierarchical(Inter::Direct) => {
                debug_assert!(root.is_none());
                let leader = self.nodes[self.node_of(me)].start;
                // SAFETY: `data` is held mutably for the whole call, so nothing else reads or writes it while LPF does.
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        // Superstep 1: my vector to every node's leader (scratch block
                        // me), over the network to the other nodes' leaders.
                        for l in self.nodes.iter().map(|r| r.start).filter(|&l| l != me) {
                            ctx.put(lent, 0, l as Pid, slot, me * n, n, MSG_DEFAULT)?;
                        }
                        sync(ctx)?;
                        // The leaders fold all p vectors exactly as the flat direct
                        // algorithm does; the result ends in scratch block 0, from which
                        // the members fetch it (superstep 2, shared memory).
                        let data = std::slice::from_raw_parts_mut(ptr, ne);
                        if me == leader {
                            self.fold_direct(data, op);
                            if me == 0 {
                                self.part::<T>(0, ne).copy_from_slice(data);
                            }
                        } else {
                            ctx.get(leader as Pid, slot, 0, lent, 0, n, MSG_DEFAULT)?;
                        }
                        sync(ctx)
                    })
                }
            }
            Algorithm::Hierarchical(Inter::TwoPhase) => {
                debug_assert!(root.is_none());
                let node = self.nodes[self.node_of(me)].clone();
                let leader = node.start;
                let (before, after) = (self.block(node.start, ne).0, self.block(node.end, ne).0);
                // SAFETY: `data` is held mutably for the whole call, so nothing else reads or writes it while LPF does.
                unsafe {
                    lend(ctx, ptr, ne, |ctx, lent| {
                        // Superstep 1: the flat reduce-scatter (so every block is folded
                        // exactly as there); process q's result block sits in its scratch
                        // block 0 and in its `data`.
                        self.reduce_scatter(ctx, lent, ptr, ne, op)?;
                        self.own_block(ptr, ne);
                        // Superstep 2: every process fetches its node mates' blocks
                        // (shared memory); the leader also fetches every other node's
                        // blocks (network: each block enters each node once).
                        let leads = me == leader;
                        for q in (0..p).filter(|&q| q != me && (leads || node.contains(&q))) {
                            let (start, len) = self.block(q, ne);
                            ctx.get(q as Pid, slot, 0, lent, start * s, len * s, MSG_DEFAULT)?;
                        }
                        sync(ctx)?;
                        // Superstep 3: the members fetch the other nodes' blocks, two
                        // ranges around their node's, from the leader's scratch (shared
                        // memory), where the leader copies them first.
                        if leads {
                            let data = std::slice::from_raw_parts(ptr, ne);
                            self.part::<T>(0, before).copy_from_slice(&data[..before]);
                            self.part::<T>(after * s, ne - after).copy_from_slice(&data[after..]);
                        } else {
                            for (start, len) in [(0, before), (after, ne - after)] {
                                ctx.get(leader as Pid, slot, start * s, lent, start * s, len * s, MSG_DEFAULT)?;
                            }
                        }
                        sync(ctx)
                    })
                }
            }
        }
    }

    /// Block q of the block distribution of `ne` elements over the p processes, as
    /// (first element, elements).
    pub(super) fn block(&self, q: usize, ne: usize) -> (usize, usize) {
        block(q, ne, self.p)
    }

    /// After a superstep in which every process q put its vector x_q into scratch block
    /// q (n bytes each) of this process: `data` (x_me) becomes x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1},
    /// folded left to right. Unless this is process 0 the fold runs in scratch block 0
    /// (x_0), which then holds the result too.
    ///
    /// # Safety
    /// Between syncs, with the scratch blocks filled as described.
    pub(super) unsafe fn fold_direct<T: Pod>(&self, data: &mut [T], op: &impl Fn(&mut T, &T)) {
        let n = bytes_of::<T>(data.len());
        if self.me == 0 {
            self.fold_rest(data, &[], n, op);
        } else {
            let acc = self.part::<T>(0, data.len());
            self.fold_rest(acc, data, n, op);
            data.copy_from_slice(acc);
        }
    }

    /// Folds x_1, …, x_{p-1} into `acc` (which holds x_0) left to right: x_me is `mine`,
    /// every other x_q the `acc.len()` elements at byte `q * stride` of the scratch.
    ///
    /// # Safety
    /// As [`Collectives::part`]; `acc` is not one of the x_q.
    unsafe fn fold_rest<T: Pod>(&self, acc: &mut [T], mine: &[T], stride: usize, op: &impl Fn(&mut T, &T)) {
        for q in 1..self.p {
            let x = if q == self.me { mine } else { self.part::<T>(q * stride, acc.len()) };
            debug_assert_eq!(acc.len(), x.len());
            acc.iter_mut().zip(x).for_each(|(a, b)| op(a, b));
        }
    }

    /// Copies this process's combined block (scratch block 0, after
    /// [`Collectives::reduce_scatter`]) into its place in `data` (`ptr`, `ne` elements).
    ///
    /// # Safety
    /// As `reduce_scatter`, after it.
    pub(super) unsafe fn own_block<T: Pod>(&self, ptr: *mut T, ne: usize) {
        let (start, len) = self.block(self.me, ne);
        std::slice::from_raw_parts_mut(ptr.add(start), len).copy_from_slice(self.part::<T>(0, len));
    }

    /// The reduce-scatter superstep of the two-phase reductions: block q of every
    /// process's vector goes to process q (into scratch block `sender` of stride
    /// ⌈ne/p⌉ elements), one sync, then this process folds its block in process order
    /// into scratch block 0 ([`Collectives::own_block`] copies it into `data`). `ptr`
    /// is `data`, lent as `lent`.
    ///
    /// # Safety
    /// `ptr` must be the `ne` elements lent as `lent`, held mutably by the caller.
    pub(super) unsafe fn reduce_scatter<T: Pod>(&self, ctx: &mut Context, lent: Memslot, ptr: *mut T, ne: usize, op: &impl Fn(&mut T, &T)) -> Result<()> {
        let (p, me, s) = (self.p, self.me, size_of::<T>());
        let stride = ne.div_ceil(p) * s;
        let slot = self.slot();
        for q in (0..p).filter(|&q| q != me) {
            let (start, len) = self.block(q, ne);
            ctx.put(lent, start * s, q as Pid, slot, me * stride, len * s, MSG_DEFAULT)?;
        }
        sync(ctx)?;
        // Combine my block in process order into scratch block 0 (which holds x_0's
        // block unless I am process 0).
        let (start, len) = self.block(me, ne);
        let mine = &mut *std::ptr::slice_from_raw_parts_mut(ptr.add(start), len);
        let acc = self.part::<T>(0, len);
        if me == 0 {
            acc.copy_from_slice(mine);
        }
        self.fold_rest(acc, mine, stride, op);
        Ok(())
    }

    /// Every process's part `part(q) = (offset, len)` of `data` (its own already in
    /// place) reaches every process.
    pub(super) fn allgather_parts<T: Pod>(&mut self, ctx: &mut Context, what: &str, data: &mut [T], part: &dyn Fn(usize) -> (usize, usize)) -> Result<()> {
        let n = bytes_of::<T>(data.len());
        self.check_size(what, n)?;
        let (p, me) = (self.p, self.me);
        if p == 1 {
            return Ok(());
        }
        let s = size_of::<T>();
        let (off, len) = part(me);
        // SAFETY: between syncs, and no other part of the scratch is in use here.
        unsafe { self.part::<T>(0, len) }.copy_from_slice(&data[off..off + len]);
        let slot = self.slot();
        lend_mut(ctx, data, |ctx, lent| {
            for q in (0..p).filter(|&q| q != me) {
                let (off, len) = part(q);
                ctx.get(q as Pid, slot, 0, lent, off * s, len * s, MSG_DEFAULT)?;
            }
            sync(ctx)
        })
    }
}
