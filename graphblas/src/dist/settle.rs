//! Rounds of pull updates on a replicated per-vertex vector until nothing changes: the
//! loop of SCC's colouring and reachability and MIS's decisions.
//!
//! Every process holds the whole vector (`n` u32) and updates the entries of its block
//! from their neighbours' entries; a round's changes are then shared with every process:
//! as (vertex, value) pairs when they are few (an all-gather of 8 bytes per change), else
//! as the blocks (an all-gather of 4n bytes), whichever moves less, the same choice
//! everywhere (from the summed count). Each thread updates a part of the block in place
//! (Gauss-Seidel inside the part: later rows see earlier rows' new values, which shortens
//! chains) and skips a row none of whose neighbours changed since the row was last
//! updated (the caller asks [`View::stale`]): after the first rounds only the rows near a
//! change cost anything but a scan of a bitmap of n bits.
//!
//! The updates must be monotone with one fixed point that any order of updates reaches
//! (a minimum over the neighbours, a reachability, a greedy choice by fixed
//! priorities), so the result depends neither on the processes nor on the threads.

use super::comm::{try_zeroed, Comm};
use super::DistResult;
use crate::parallel::{balanced_row_blocks, run_blocks, split_by_bounds};

/// The vector as a row's update sees it: the values at the start of the round, the
/// thread's part as updated so far, which vertices changed in the last round and which of
/// the part's in this one.
pub(crate) struct View<'a> {
    all: &'a [u32],
    part: &'a [u32],
    start: usize,
    changed: &'a [u64],
    fresh: &'a [u64],
    first: bool,
}

impl View<'_> {
    /// The current value of vertex `u`.
    #[inline]
    pub fn get(&self, u: usize) -> u32 {
        match u.checked_sub(self.start) {
            Some(k) if k < self.part.len() => self.part[k],
            _ => self.all[u],
        }
    }

    /// Whether `u` changed after the rows of the previous round saw it.
    #[inline]
    fn dirty(&self, u: usize) -> bool {
        if self.changed[u / 64] & (1 << (u % 64)) != 0 {
            return true;
        }
        matches!(u.checked_sub(self.start), Some(k) if k < self.part.len() && self.fresh[k / 64] & (1 << (k % 64)) != 0)
    }

    /// Whether a row with these neighbours must be updated again: in the first round, or
    /// when one of them changed since the row's last update.
    #[inline]
    pub(crate) fn stale(&self, neighbours: impl IntoIterator<Item = u32>) -> bool {
        self.first || neighbours.into_iter().any(|u| self.dirty(u as usize))
    }
}

/// Updates the block `lo..lo + rows` of the replicated `values` round by round until a
/// round changes at most `enough` entries over all processes (0: the fixed point), and
/// returns the rounds run (the last one's changes shared too). `update(k, view, scratch)`
/// is the new value of vertex `lo + k`, or `None` to keep it (`scratch`: the thread's
/// buffer, for the update to use as it likes); `work` (rows + 1 prefix sums,
/// a CSR's row pointers) balances the threads' parts. `observe(round, changes)` follows
/// each round. Collective.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settle<F>(
    comm: &mut Comm<'_>,
    values: &mut [u32],
    lo: usize,
    work: &[usize],
    threads: usize,
    enough: u64,
    update: F,
    mut observe: impl FnMut(usize, u64),
) -> DistResult<usize>
where
    F: Fn(usize, &View<'_>, &mut Vec<u32>) -> Option<u32> + Sync,
{
    let (n, me) = (values.len(), comm.me);
    let rows = work.len() - 1;
    let bounds = balanced_row_blocks(work, threads.max(1));
    let mut changed = try_zeroed::<u64>(n.div_ceil(64), me, "the bitmap of changed vertices")?;
    let mut next = try_zeroed::<u32>(rows, me, "the block's new values")?;
    for round in 1.. {
        next.copy_from_slice(&values[lo..lo + rows]);
        {
            let (all, changed, update) = (&*values, &changed, &update);
            let parts: Vec<(&mut [u32], usize)> = split_by_bounds(&mut next, &bounds).into_iter().zip(bounds.iter().copied()).collect();
            run_blocks(parts, |_, (part, first_row)| {
                let start = lo + first_row;
                let mut scratch = Vec::new();
                let mut fresh = vec![0u64; part.len().div_ceil(64)];
                for k in 0..part.len() {
                    let view = View { all, part: &*part, start, changed, fresh: &fresh, first: round == 1 };
                    if let Some(x) = update(first_row + k, &view, &mut scratch) {
                        part[k] = x;
                        fresh[k / 64] |= 1 << (k % 64);
                    }
                }
            })?;
        }
        changed.iter_mut().for_each(|w| *w = 0);
        // This block's changes as (vertex, new value) pairs.
        let mut mine = Vec::new();
        for (k, (&x, old)) in next.iter().zip(&mut values[lo..lo + rows]).enumerate() {
            if x != *old {
                *old = x;
                mine.push((lo + k) as u32);
                mine.push(x);
            }
        }
        let total = comm.sum_u64((mine.len() / 2) as u64)?;
        observe(round, total);
        if total == 0 {
            return Ok(round);
        }
        let mut mark = |v: usize| changed[v / 64] |= 1 << (v % 64);
        for pair in mine.chunks_exact(2) {
            mark(pair[0] as usize);
        }
        if 2 * total < n as u64 {
            let (pairs, _) = comm.allgatherv(&mine)?;
            for pair in pairs.chunks_exact(2) {
                let v = pair[0] as usize;
                if values[v] != pair[1] {
                    values[v] = pair[1];
                    mark(v);
                }
            }
        } else {
            drop(mine);
            let (all, _) = comm.allgatherv(&values[lo..lo + rows])?;
            for (v, (x, &y)) in values.iter_mut().zip(&all).enumerate() {
                if *x != y {
                    *x = y;
                    mark(v);
                }
            }
        }
        if total <= enough {
            return Ok(round);
        }
    }
    unreachable!("the rounds are unbounded")
}
