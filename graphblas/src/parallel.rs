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
use std::sync::atomic::{AtomicUsize, Ordering::{AcqRel, Acquire, Relaxed, Release}};
use std::sync::{Condvar, Mutex};

/// The most threads an operation runs on: LPF's limit of processes per section,
/// far above what a machine holds, but below counts whose block tables alone
/// (8 bytes a thread) would not fit in memory.
pub(crate) const MAX_THREADS: usize = 65535;

/// `threads` if it is at most [`MAX_THREADS`], else [`GrbError::ThreadsUnavailable`]:
/// the check of a thread count given from outside (a command line, the Spark bridge)
/// before anything is sized by it.
pub(crate) fn check_thread_count(threads: usize) -> GrbResult<usize> {
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
pub(crate) fn balanced_row_blocks(ptr: &[usize], parts: usize) -> Vec<usize> {
    balanced_row_blocks_weighted(ptr, parts, 1)
}

/// As [`balanced_row_blocks`] with a row costing `nnz(row) + row_cost`:
/// kernels with substantial per-row work (loop setup, a mispredicted loop
/// exit, several per-row writes) need a larger `row_cost` to balance.
pub(crate) fn balanced_row_blocks_weighted(ptr: &[usize], parts: usize, row_cost: usize) -> Vec<usize> {
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
pub(crate) fn even_blocks(n: usize, parts: usize) -> Vec<usize> {
    let parts = parts.max(1);
    (0..=parts).map(|k| (n as u128 * k as u128 / parts as u128) as usize).collect()
}

/// Splits a mutable slice at the given boundaries (as produced by
/// [`balanced_row_blocks`]), returning one sub-slice per block.
pub(crate) fn split_by_bounds<'a, T>(mut s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
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
pub(crate) fn run_dynamic<W, R, F>(items: Vec<W>, threads: usize, f: F) -> GrbResult<Vec<R>>
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
    lpf::shm::check_room_for_threads(threads - 1)
        .map_err(|e| GrbError::ThreadsUnavailable { threads, message: e.message().to_string() })?;
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
            (_, why) => Err(refused_thread(threads, why, joined.len())),
        }
    })
}

/// The error of a spawn the OS refused after `started` of the `threads - 1` new
/// threads had started.
fn refused_thread(threads: usize, why: Option<std::io::Error>, started: usize) -> GrbError {
    GrbError::ThreadsUnavailable {
        threads,
        message: format!(
            "the OS refused to create a thread ({}) after {} of the {} new ones were started: lower the \
             thread count or raise the limits on threads and memory (ulimit -u, ulimit -v, \
             /proc/sys/kernel/threads-max)",
            why.map_or_else(String::new, |e| e.to_string()),
            started,
            threads - 1
        ),
    }
}

/// Threads that run a loop in lock-step phases, meeting at [`Team::wait`].
pub(crate) struct Team {
    threads: usize,
    /// Threads at the current barrier.
    arrived: AtomicUsize,
    /// Barriers passed; a waiter leaves when it changes.
    passed: AtomicUsize,
    park: Mutex<()>,
    wake: Condvar,
}

/// Polls of a waiter before it sleeps: phases of short supersteps end within
/// microseconds of each other, and a futex sleep and wake-up costs more than that;
/// on a machine with more threads than cores the waiter soon gives its core up.
const SPINS: usize = 4000;

impl Team {
    fn new(threads: usize) -> Team {
        Team { threads, arrived: AtomicUsize::new(0), passed: AtomicUsize::new(0), park: Mutex::new(()), wake: Condvar::new() }
    }

    /// Returns once every thread of the team has called it (the phase's writes are
    /// then visible to all).
    pub fn wait(&self) {
        let passed = self.passed.load(Acquire);
        // The AcqRel chain of arrivals makes every earlier arrival's writes the last
        // one's, and its Release of `passed` hands them all to the waiters.
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            // Reset before the release: a waiter arrives at the next barrier only
            // after it has seen `passed` change.
            self.arrived.store(0, Relaxed);
            let _parked = self.park.lock().expect("team poisoned");
            self.passed.store(passed + 1, Release);
            self.wake.notify_all();
            return;
        }
        for _ in 0..SPINS {
            if self.passed.load(Acquire) != passed {
                return;
            }
            std::hint::spin_loop();
        }
        // `passed` changes under the lock, so a sleeper cannot miss the wake-up.
        let mut parked = self.park.lock().expect("team poisoned");
        while self.passed.load(Acquire) == passed {
            parked = self.wake.wait(parked).expect("team poisoned");
        }
    }
}

/// Runs `lead(&team)` on the calling thread and `member(k, &team)` for k in
/// `1..threads` on new threads, all members of one [`Team`], and returns what `lead`
/// returns once every member has ended. `lead` may hold what cannot cross threads (an
/// LPF context): it does the team's serial steps between two waits. No member starts
/// its work before all threads exist, so a thread the OS refuses ends the call with
/// [`GrbError::ThreadsUnavailable`] (as [`run_blocks`]) instead of leaving the started
/// ones waiting for it; `lead` then does not run.
pub(crate) fn run_team<R>(threads: usize, lead: impl FnOnce(&Team) -> R, member: impl Fn(usize, &Team) + Sync) -> GrbResult<R> {
    let threads = threads.max(1);
    let team = Team::new(threads);
    if threads == 1 {
        return Ok(lead(&team));
    }
    lpf::shm::check_room_for_threads(threads - 1)
        .map_err(|e| GrbError::ThreadsUnavailable { threads, message: e.message().to_string() })?;
    // None until every thread exists, then whether the team runs.
    let start = (std::sync::Mutex::new(None::<bool>), std::sync::Condvar::new());
    let open = |run: bool| {
        *start.0.lock().expect("team start poisoned") = Some(run);
        start.1.notify_all();
    };
    let (team, start_ref, member) = (&team, &start, &member);
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads - 1);
        let mut refused = None;
        for k in 1..threads {
            let run = move || {
                let mut go = start_ref.0.lock().expect("team start poisoned");
                while go.is_none() {
                    go = start_ref.1.wait(go).expect("team start poisoned");
                }
                if go.unwrap_or(false) {
                    drop(go);
                    member(k, team);
                }
            };
            match std::thread::Builder::new().spawn_scoped(scope, run) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        open(refused.is_none());
        let r = refused.is_none().then(|| lead(team));
        let started = handles.len();
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        match (r, refused) {
            (Some(r), None) => Ok(r),
            (_, why) => Err(refused_thread(threads, why, started)),
        }
    })
}

/// One of the threads of a [`run_phases`]: its number (0 is the calling thread) and
/// the work-shared phases it takes part in.
pub(crate) struct Member<'t> {
    team: &'t Team,
    /// The next piece of the current phase and of the next one, alternately.
    cursors: &'t [AtomicUsize; 2],
    pub id: usize,
    /// The phases this member has started (every member starts the same ones).
    phase: std::cell::Cell<usize>,
}

/// Runs `body` on `threads` threads of one [`run_team`] for a sequence of work-shared
/// phases (an OpenMP parallel region with dynamic loops): every member calls
/// [`Member::share`] for the same phases in the same order. Against a [`run_dynamic`]
/// per phase this saves a thread start and join per phase (tens of microseconds, more
/// on a loaded machine). Returns the members' results by id; errors as [`run_team`].
/// `body` must not panic: the other members would wait for it.
pub(crate) fn run_phases<R: Send>(threads: usize, body: impl Fn(&Member<'_>) -> R + Sync) -> GrbResult<Vec<R>> {
    let cursors = [AtomicUsize::new(0), AtomicUsize::new(0)];
    let others: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::new());
    let cursors = &cursors;
    let first = run_team(
        threads,
        |team| body(&Member { team, cursors, id: 0, phase: std::cell::Cell::new(0) }),
        |id, team| {
            let r = body(&Member { team, cursors, id, phase: std::cell::Cell::new(0) });
            others.lock().expect("team results poisoned").push((id, r));
        },
    )?;
    let mut others = others.into_inner().expect("team results poisoned");
    others.sort_unstable_by_key(|&(id, _)| id);
    Ok(std::iter::once(first).chain(others.into_iter().map(|(_, r)| r)).collect())
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
            self.cursors[(phase + 1) % 2].store(0, Relaxed);
        }
        let cursor = &self.cursors[phase % 2];
        loop {
            let start = cursor.fetch_add(piece, Relaxed);
            if start >= len {
                break;
            }
            f(start..(start + piece).min(len));
        }
        self.team.wait();
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
    fn a_team_meets_at_every_wait() {
        // Each phase every member adds 1 to the shared count; the lead checks between
        // two waits that all did, and tells them to stop after the last phase.
        for threads in [1, 2, 4] {
            let count = std::sync::atomic::AtomicUsize::new(0);
            let stop = std::sync::atomic::AtomicBool::new(false);
            let phases = 50;
            let step = |team: &Team| {
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                team.wait();
            };
            let seen = run_team(
                threads,
                |team| {
                    let mut seen = Vec::new();
                    for phase in 1..=phases {
                        step(team);
                        seen.push(count.load(std::sync::atomic::Ordering::Relaxed));
                        stop.store(phase == phases, std::sync::atomic::Ordering::Relaxed);
                        team.wait();
                    }
                    seen
                },
                |_, team| loop {
                    step(team);
                    team.wait();
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                },
            )
            .unwrap();
            assert_eq!(seen, (1..=phases).map(|k| k * threads).collect::<Vec<_>>(), "threads {threads}");
        }
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
            let counted = run_phases(threads, |m| {
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
