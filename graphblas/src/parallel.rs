//! Intra-process parallelism helpers.
//!
//! Deliberately *not* a global thread pool (rayon): several LPF "processes"
//! may later be threads of one OS process, each with its own thread budget,
//! and a shared global pool would make them interfere. Every kernel takes an
//! explicit thread count and uses `std::thread::scope`, so borrowed data can
//! be shared without `Arc` and without `unsafe`. Spawning costs a few
//! microseconds per call, negligible against the millisecond-scale kernels
//! this crate runs.
//!
//! Threads are a resource like memory: a thread count the machine cannot hold
//! (address-space, memory-map or thread limits) is an error,
//! [`GrbError::ThreadsUnavailable`], never a panic or an abort. Before spawning,
//! [`run_blocks`] asks LPF whether the threads' stacks and mappings fit
//! ([`lpf::shm::check_room_for_threads`]: a thread whose start fails half-way
//! inside the Rust runtime aborts the program); a thread that the OS then still
//! refuses ends the call with the same error once the threads started are joined.

use crate::error::{GrbError, GrbResult};

/// The most threads an operation runs on: LPF's limit of processes per section,
/// far above what a machine holds, but below counts whose block tables alone
/// (8 bytes a thread) would not fit in memory.
pub const MAX_THREADS: usize = 65535;

/// `threads` if it is at most [`MAX_THREADS`], else [`GrbError::ThreadsUnavailable`]:
/// the check of a thread count given from outside (a command line, the Spark bridge)
/// before anything is sized by it.
pub fn check_thread_count(threads: usize) -> GrbResult<usize> {
    if threads > MAX_THREADS {
        return Err(GrbError::ThreadsUnavailable {
            threads,
            message: format!("more than the {MAX_THREADS} threads an operation may run on"),
        });
    }
    Ok(threads)
}

/// Splits rows `0..n` (with `n = ptr.len() - 1`) into `parts` contiguous
/// blocks of roughly equal cost, where a row costs `nnz(row) + 1`: the `+1`
/// keeps blocks of empty rows from being arbitrarily long, since each output
/// row is still written.
///
/// Returns `parts + 1` boundaries `b` with `b[0] = 0`, `b[parts] = n`;
/// block `k` is `b[k]..b[k+1]` (possibly empty).
pub fn balanced_row_blocks(ptr: &[usize], parts: usize) -> Vec<usize> {
    balanced_row_blocks_weighted(ptr, parts, 1)
}

/// As [`balanced_row_blocks`] with a row costing `nnz(row) + row_cost`:
/// kernels with substantial per-row work (loop setup, a mispredicted loop
/// exit, several per-row writes) need a larger `row_cost` to balance.
pub fn balanced_row_blocks_weighted(ptr: &[usize], parts: usize, row_cost: usize) -> Vec<usize> {
    let n = ptr.len().saturating_sub(1);
    let parts = parts.max(1);
    let total = (ptr.last().copied().unwrap_or(0) - ptr.first().copied().unwrap_or(0)) + n * row_cost;
    let mut bounds = Vec::with_capacity(parts + 1);
    bounds.push(0);
    for k in 1..parts {
        let target = (total as u128 * k as u128 / parts as u128) as usize;
        // First row i whose prefix cost (ptr[i] - ptr[0] + i) reaches target.
        let pos = partition_point_range(n + 1, |i| ptr[i] - ptr[0] + i * row_cost < target);
        let prev = *bounds.last().unwrap();
        bounds.push(pos.max(prev).min(n));
    }
    bounds.push(n);
    bounds
}

/// Binary search on `0..len` for the first index where `pred` is false
/// (`pred` must be monotone: true…true false…false).
fn partition_point_range(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Splits `0..n` into `parts` blocks of (almost) equal length.
pub fn even_blocks(n: usize, parts: usize) -> Vec<usize> {
    let parts = parts.max(1);
    (0..=parts).map(|k| (n as u128 * k as u128 / parts as u128) as usize).collect()
}

/// Splits a mutable slice at the given boundaries (as produced by
/// [`balanced_row_blocks`]), returning one sub-slice per block.
pub fn split_by_bounds<'a, T>(mut s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = s.split_at_mut(w[1] - w[0]);
        out.push(head);
        s = tail;
    }
    out
}

/// Runs `f(id, item)` for every work item on `threads` threads that take
/// items from a shared queue (dynamic scheduling: robust when the cost of
/// items is hard to predict). Returns results indexed by item id, so that
/// reductions over them can be done in a fixed order — results then do not
/// depend on the thread count or on scheduling. Errors as [`run_blocks`].
pub fn run_dynamic<W, R, F>(items: Vec<W>, threads: usize, f: F) -> GrbResult<Vec<R>>
where
    W: Send,
    R: Send,
    F: Fn(usize, W) -> R + Sync,
{
    let count = items.len();
    let threads = threads.max(1).min(count.max(1));
    if threads == 1 {
        return Ok(items.into_iter().enumerate().map(|(k, w)| f(k, w)).collect());
    }
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let per_thread = run_blocks(vec![(); threads], |_, ()| {
        let mut out = Vec::new();
        loop {
            let next = queue.lock().expect("work queue poisoned").next();
            match next {
                Some((k, w)) => out.push((k, f(k, w))),
                None => return out,
            }
        }
    })?;
    let mut slots: Vec<Option<R>> = (0..count).map(|_| None).collect();
    for (k, r) in per_thread.into_iter().flatten() {
        slots[k] = Some(r);
    }
    Ok(slots.into_iter().map(|r| r.expect("work item not run")).collect())
}

/// Runs `f(k, item)` for every work item, one scoped thread per item
/// (item 0 runs on the calling thread), and returns the results in order.
///
/// [`GrbError::ThreadsUnavailable`] when the threads cannot be had: before any
/// starts when their stacks or memory mappings would not fit under the process's
/// limits, else when the OS refuses one (`ulimit -u`, `threads-max`, a cgroup's
/// `pids.max`); then no more are started, item 0 does not run, and the call
/// returns once the threads already started have finished their items.
pub fn run_blocks<W, R, F>(items: Vec<W>, f: F) -> GrbResult<Vec<R>>
where
    W: Send,
    R: Send,
    F: Fn(usize, W) -> R + Sync,
{
    run_blocks_or(items, f, || {})
}

/// As [`run_blocks`], calling `refused()` when the OS refuses a thread, before the
/// threads already started are joined (a [`run_team`] lets its waiting members go).
fn run_blocks_or<W, R, F>(items: Vec<W>, f: F, refused: impl FnOnce()) -> GrbResult<Vec<R>>
where
    W: Send,
    R: Send,
    F: Fn(usize, W) -> R + Sync,
{
    if items.len() <= 1 {
        return Ok(items.into_iter().enumerate().map(|(k, w)| f(k, w)).collect());
    }
    let threads = items.len();
    let unavailable = |message: String| GrbError::ThreadsUnavailable { threads, message };
    lpf::shm::check_room_for_threads(threads - 1)
        .map_err(|e| unavailable(e.message().to_string()))?;
    let f = &f;
    std::thread::scope(|scope| {
        let mut iter = items.into_iter().enumerate();
        let (k0, first) = iter.next().unwrap();
        let mut handles = Vec::with_capacity(threads - 1);
        let mut refused_start = None;
        for (k, w) in iter {
            match std::thread::Builder::new().spawn_scoped(scope, move || f(k, w)) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    refused_start = Some(e);
                    break;
                }
            }
        }
        if refused_start.is_some() {
            refused();
        }
        let first = refused_start.is_none().then(|| f(k0, first));
        // Every thread started is joined before returning, also on failure; a
        // worker's panic goes on in the caller as that panic.
        let joined: Vec<R> = handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
        match (first, refused_start) {
            (Some(r0), None) => Ok(std::iter::once(r0).chain(joined).collect()),
            (_, why) => Err(unavailable(format!(
                "the OS refused to create a thread ({}) after {} of the {} new ones were started: lower the \
                 thread count or raise the limits on threads and memory (ulimit -u, ulimit -v, \
                 /proc/sys/kernel/threads-max)",
                why.map_or_else(String::new, |e| e.to_string()),
                joined.len(),
                threads - 1
            ))),
        }
    })
}

/// One of the threads of a [`run_team`]: its number (0 is the calling thread) and the
/// work-shared phases it takes part in.
pub struct Member<'t> {
    team: &'t Team,
    pub id: usize,
    /// The phases this member has started (every member starts the same ones).
    phase: std::cell::Cell<usize>,
}

struct Team {
    threads: usize,
    /// `Some(true)` once every member is started, `Some(false)` if a start was refused.
    gate: std::sync::Mutex<Option<bool>>,
    opened: std::sync::Condvar,
    barrier: std::sync::Barrier,
    /// The next piece of the current phase and of the next one, alternately.
    cursors: [std::sync::atomic::AtomicUsize; 2],
}

/// Runs `body` on `threads` threads started once for a sequence of work-shared phases
/// (an OpenMP parallel region with dynamic loops): every member calls
/// [`Member::share`] for the same phases in the same order. Against a [`run_dynamic`]
/// per phase this saves a thread start and join per phase (tens of microseconds, more
/// on a loaded machine). Returns the members' results by id; errors as [`run_blocks`]
/// (the members started wait for all the others before any work, and a refused start
/// lets them go). `body` must not panic: the other members would wait for it.
pub fn run_team<R: Send>(threads: usize, body: impl Fn(&Member<'_>) -> R + Sync) -> GrbResult<Vec<R>> {
    use std::sync::atomic::AtomicUsize;
    let threads = threads.max(1);
    let team = Team {
        threads,
        gate: std::sync::Mutex::new(None),
        opened: std::sync::Condvar::new(),
        barrier: std::sync::Barrier::new(threads),
        cursors: [AtomicUsize::new(0), AtomicUsize::new(0)],
    };
    let open = |all_started: bool| {
        *team.gate.lock().expect("team gate poisoned") = Some(all_started);
        team.opened.notify_all();
    };
    let results = run_blocks_or(
        vec![(); threads],
        |id, ()| {
            // Member 0 runs on the calling thread once every other one has started.
            if id == 0 {
                open(true);
            } else {
                let gate = team.opened.wait_while(team.gate.lock().expect("team gate poisoned"), |g| g.is_none()).expect("team gate poisoned");
                if *gate != Some(true) {
                    return None;
                }
            }
            Some(body(&Member { team: &team, id, phase: std::cell::Cell::new(0) }))
        },
        || open(false),
    )?;
    Ok(results.into_iter().flatten().collect())
}

impl Member<'_> {
    /// The team's size.
    pub fn threads(&self) -> usize {
        self.team.threads
    }

    /// One work-shared phase: `f` on pieces of `piece` items of `0..len`, each piece
    /// run by the member that takes it first; returns once every member is done (so
    /// the next phase sees all of this one's writes). Every member calls it with the
    /// same `len` and `piece`.
    pub fn share(&self, len: usize, piece: usize, mut f: impl FnMut(std::ops::Range<usize>)) {
        use std::sync::atomic::Ordering::Relaxed;
        let (phase, piece) = (self.phase.get(), piece.max(1));
        self.phase.set(phase + 1);
        // The next phase's cursor was last used by the previous phase, which every
        // member has left (its barrier): it is reset now, for after this phase's barrier.
        if self.id == 0 {
            self.team.cursors[(phase + 1) % 2].store(0, Relaxed);
        }
        let cursor = &self.team.cursors[phase % 2];
        loop {
            let start = cursor.fetch_add(piece, Relaxed);
            if start >= len {
                break;
            }
            f(start..(start + piece).min(len));
        }
        self.team.barrier.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_blocks_cover_and_balance() {
        // Row 0 is heavy (100 nnz), the other 100 rows have 1 nnz each.
        let mut ptr = vec![0usize, 100];
        for i in 0..100 {
            ptr.push(101 + i);
        }
        let b = balanced_row_blocks(&ptr, 2);
        assert_eq!(b.len(), 3);
        assert_eq!(b[0], 0);
        assert_eq!(*b.last().unwrap(), 101);
        // Total cost 200 + 101 = 301; row 0 alone costs 101, so the split
        // must be well past row 1 but before the end.
        assert!(b[1] > 1 && b[1] < 101, "{b:?}");
        let cost = |lo: usize, hi: usize| ptr[hi] - ptr[lo] + (hi - lo);
        let (c0, c1) = (cost(b[0], b[1]), cost(b[1], b[2]));
        assert!(c0.abs_diff(c1) <= 4, "{c0} vs {c1}");
    }

    #[test]
    fn blocks_handle_degenerate_inputs() {
        assert_eq!(balanced_row_blocks(&[0], 3), vec![0, 0, 0, 0]);
        assert_eq!(balanced_row_blocks(&[0, 0, 0], 1), vec![0, 2]);
        let b = balanced_row_blocks(&[0, 5], 4);
        assert_eq!(b.first(), Some(&0));
        assert_eq!(b.last(), Some(&1));
        assert!(b.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(even_blocks(10, 3), vec![0, 3, 6, 10]);
    }

    #[test]
    fn run_dynamic_runs_each_item_once_in_id_order() {
        for threads in [1, 2, 5] {
            let items: Vec<usize> = (0..37).collect();
            let out = run_dynamic(items, threads, |k, w| {
                assert_eq!(k, w);
                w * w
            })
            .unwrap();
            assert_eq!(out, (0..37).map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(run_dynamic(Vec::<u8>::new(), 3, |_, w| w).unwrap().is_empty());
    }

    #[test]
    fn weighted_blocks_shift_toward_rows() {
        // Rows 0..10 have 100 nnz each; rows 10..1010 are empty.
        let mut ptr: Vec<usize> = (0..=10).map(|i| i * 100).collect();
        ptr.extend(std::iter::repeat_n(1000, 1000));
        assert_eq!(balanced_row_blocks_weighted(&ptr, 2, 0), vec![0, 5, 1010]);
        // With row_cost 1 the 1000 empty rows weigh as much as the edges.
        let b = balanced_row_blocks_weighted(&ptr, 2, 1);
        assert_eq!(b[1], 10);
    }

    #[test]
    fn a_team_shares_each_phase_once_and_in_order() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        for threads in [1, 2, 3] {
            let cells: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(0)).collect();
            let counted = run_team(threads, |m| {
                let mut mine = 0;
                for phase in 0..5u32 {
                    // Each phase sees the whole previous one: every cell holds `phase`.
                    m.share(cells.len(), 7, |r| {
                        for c in &cells[r] {
                            assert_eq!(c.load(Relaxed), phase);
                            c.store(phase + 1, Relaxed);
                            mine += 1;
                        }
                    });
                }
                (m.id, m.threads(), mine)
            })
            .unwrap();
            assert_eq!(counted.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(), (0..threads).map(|k| (k, threads)).collect::<Vec<_>>());
            assert_eq!(counted.iter().map(|c| c.2).sum::<u32>(), 5000);
            assert!(cells.iter().all(|c| c.load(Relaxed) == 5));
        }
    }

    #[test]
    fn run_blocks_preserves_order_and_splits() {
        let mut data = vec![0u32; 10];
        let bounds = even_blocks(10, 3);
        let parts = split_by_bounds(&mut data, &bounds);
        let sums = run_blocks(parts, |k, part| {
            for x in part.iter_mut() {
                *x = k as u32 + 1;
            }
            part.len()
        })
        .unwrap();
        assert_eq!(sums, vec![3, 3, 4]);
        assert_eq!(data, vec![1, 1, 1, 2, 2, 2, 3, 3, 3, 3]);
    }
}
