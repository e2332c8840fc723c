//! How a process waits for its peers, and how a wait is cancelled: the one policy
//! every wait loop of the library follows (the shared-memory barrier, the TCP mesh,
//! the MPI channel, the bootstraps).
//!
//! A wait looks whether what it waits for is there and, after each unsuccessful look,
//! does what [`Patience::pause`] says:
//!
//! 1. **spin**: look again at once, for at most the process's spin budget (below);
//! 2. **yield** the core between looks, for the engine's yield period (a peer that is
//!    ready to run on this core gets it);
//! 3. **block** (on a condition variable, in `poll`, or asleep on MPI, which has no
//!    blocking wait LPF can use) in slices of at most [`BLOCK_SLICE`], so that the
//!    cores go to whoever needs them and a cancellation is seen within a slice.
//!
//! The spin budget. Spinning pays only while the awaited peers run on other cores
//! and arrive within the spin: then a wait ends microseconds earlier than a wake-up
//! would allow. When the host's cores are fewer than the LPF processes that run on it
//! ([`crowded`]: the section's threads, the job's processes on this host), a spinning
//! waiter holds a core an awaited process needs, so waits do not spin at all (as MPI
//! implementations do when oversubscribed). Otherwise the budget starts at
//! [`DEFAULT_SPIN`] and adapts to how the waits go: a wait that ended within
//! [`DEFAULT_SPIN`] raises it by an eighth of that, a longer one halves it (to none
//! below a 64th). So on a
//! host that other work keeps busy (waits last until the scheduler runs the peer) or
//! in a computation whose supersteps are unbalanced (waits last as long as the
//! imbalance), spinning fades out after a few waits, and comes back when waits are
//! short again. A spin set by `LPF_SPIN_US` is fixed: neither crowding nor the waits
//! change it.
//!
//! Cancellation. A [`Cancel`] token, set from any thread, makes every wait of the
//! processes that carry it fail with [`crate::Reason::Cancelled`] at its next pause
//! (at once while blocking: every slice ends with a look at the token), and every
//! `sync` fail at its start. The process then leaves its section like any failed
//! process, so that its peers' waits fail too (with [`crate::Reason::PeerLeft`]).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The spin budget's ceiling, and where it starts, when the host is not crowded.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

/// The longest a wait blocks before it looks again (and at the cancel token).
pub(crate) const BLOCK_SLICE: Duration = Duration::from_millis(50);

/// A cancellation token: cloned into every process (and bootstrap) that should stop
/// when it is set. [`Cancel::cancel`] may be called from any thread, any number of
/// times; the first reason stays.
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<Flag>>);

#[derive(Default)]
struct Flag {
    set: AtomicBool,
    reason: OnceLock<String>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Cancel(never)"),
            Some(_) if self.is_cancelled() => write!(f, "Cancel(cancelled: {})", self.reason().unwrap_or_default()),
            Some(_) => f.write_str("Cancel(not cancelled)"),
        }
    }
}

impl Cancel {
    /// A token nobody can set: what waits check where no token was given.
    pub const NEVER: Cancel = Cancel(None);

    /// A new token, not set.
    pub fn new() -> Cancel {
        Cancel(Some(Arc::default()))
    }

    /// Sets the token: the processes carrying it fail at their next pause or sync.
    /// `reason` ends up in their error message.
    pub fn cancel(&self, reason: impl Into<String>) {
        if let Some(f) = &self.0 {
            let _ = f.reason.set(reason.into());
            f.set.store(true, Ordering::Release);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.set.load(Ordering::Acquire))
    }

    /// The reason given to [`Cancel::cancel`], once it was called.
    pub fn reason(&self) -> Option<&str> {
        self.0.as_ref().filter(|f| f.set.load(Ordering::Acquire)).and_then(|f| f.reason.get()).map(String::as_str)
    }

    /// `Err` ([`crate::Reason::Cancelled`]) once the token is set.
    pub(crate) fn check(&self) -> Result<()> {
        if !self.is_cancelled() {
            return Ok(());
        }
        let why = self.reason().filter(|r| !r.is_empty()).unwrap_or("no reason given");
        Err(Error::cancelled(format!("this process was cancelled ({why})")))
    }
}

/// Whether the LPF processes that run on this host outnumber its cores: then a
/// spinning waiter holds a core an awaited process needs.
pub(crate) fn crowded(local_procs: usize, cores: usize) -> bool {
    local_procs > cores.max(1)
}

/// The cores this process may run on (its affinity mask and CPU quota).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What decides how the processes of one host wait: `LPF_SPIN_US`, and how many LPF
/// processes run on the host, against its cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Host {
    pub spin_setting: Option<Duration>,
    pub local_procs: usize,
    pub cores: usize,
}

impl Host {
    /// `local_procs` processes on this host (its [`cores`]), with the spin setting of
    /// the configuration.
    pub fn here(spin_setting: Option<Duration>, local_procs: usize) -> Host {
        Host { spin_setting, local_procs, cores: cores() }
    }

    /// The way a process of this host waits on an engine whose looks cost `cost`.
    pub fn patience(&self, cost: LookCost) -> Patience {
        Patience::new(cost, self.spin_setting, self.local_procs, self.cores)
    }
}

/// What the engine does before looking again, after an unsuccessful look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pause {
    /// Look again at once (a pause instruction at most).
    Spin,
    /// Yield the core, then look again.
    Yield,
    /// Block for at most this long (or until what is awaited may have come), then look.
    Block(Duration),
}

/// How an engine's looks behave, for [`Patience`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct LookCost {
    /// Looks between two readings of the clock while spinning: a shared-memory look is
    /// a load (the clock would cost more than the look), a network look a system or
    /// MPI call.
    pub looks_per_clock: u32,
    /// How long a wait yields after its spin before it blocks.
    pub yield_for: Duration,
}

impl LookCost {
    /// A look at shared memory (a load: a few nanoseconds with its pause instruction,
    /// so 256 looks last some microseconds, longer than most waits of a short
    /// superstep on idle cores, which thus never read the clock); the yield phase hands
    /// the core to a sibling thread that is about to arrive.
    pub const SHARED_MEMORY: LookCost = LookCost { looks_per_clock: 256, yield_for: Duration::from_micros(50) };
    /// A `poll(0)` over the sockets; then straight to blocking in `poll`, which wakes
    /// up when data arrives.
    pub const SOCKETS: LookCost = LookCost { looks_per_clock: 1, yield_for: Duration::ZERO };
    /// An `MPI_Test`. MPI has no wait LPF can block in (a blocking MPI call would not
    /// see a peer leave), so blocking is sleeping, and the yield phase is longer to
    /// keep the sleep's latency off moderately long waits.
    #[cfg_attr(not(any(feature = "mpi", test)), allow(dead_code))]
    pub const MPI: LookCost = LookCost { looks_per_clock: 16, yield_for: Duration::from_millis(20) };
}

/// One process's way of waiting (see the module's documentation): the spin budget and
/// the engine's [`LookCost`]. Kept by the process (engine) across its waits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Patience {
    cost: LookCost,
    /// The budget's ceiling (ns); 0: never spin.
    max_ns: u32,
    /// The spin of the next wait (ns).
    budget_ns: u32,
    /// Whether the budget follows the waits (not for a spin set by `LPF_SPIN_US`).
    adaptive: bool,
}

/// One wait's progress through the phases.
pub(crate) struct Wait {
    /// Looks left before the next reading of the clock while spinning (a countdown: a
    /// division per look would slow the spin's reaction).
    looks_to_clock: u32,
    /// When the wait was first timed (the first reading of the clock, after
    /// `looks_per_clock` looks while spinning: a wait that ends before never reads it).
    started: Option<Instant>,
    /// How long it had waited at its last reading of the clock (what the budget learns
    /// from: the end of a wait reads no clock).
    waited: Duration,
    spinning: bool,
}

impl Patience {
    /// The way `local_procs` LPF processes on a host of `cores` cores wait on an engine
    /// whose looks cost `cost`: `setting` (`LPF_SPIN_US`) fixes the spin; without it,
    /// no spin when [`crowded`], else [`DEFAULT_SPIN`], adapted.
    pub fn new(cost: LookCost, setting: Option<Duration>, local_procs: usize, cores: usize) -> Patience {
        let ns = |d: Duration| d.as_nanos().min(u32::MAX as u128) as u32;
        let (max_ns, adaptive) = match setting {
            Some(d) => (ns(d), false),
            None if crowded(local_procs, cores) => (0, false),
            None => (ns(DEFAULT_SPIN), true),
        };
        Patience { cost, max_ns, budget_ns: max_ns, adaptive }
    }

    /// A wait that never spins: for the rare waits whose spin would not pay (start-up).
    pub fn without_spin(cost: LookCost) -> Patience {
        Patience { cost, max_ns: 0, budget_ns: 0, adaptive: false }
    }

    /// The spin the next wait starts with.
    #[cfg(test)]
    pub fn budget(&self) -> Duration {
        Duration::from_nanos(self.budget_ns as u64)
    }

    /// Starts a wait (after a first unsuccessful look, or before the first look).
    #[inline]
    pub fn start(&self) -> Wait {
        Wait { looks_to_clock: self.cost.looks_per_clock, started: None, waited: Duration::ZERO, spinning: self.budget_ns > 0 }
    }

    /// What to do after an unsuccessful look of `wait`; `Err` once `cancel` is set
    /// (checked at every reading of the clock, so within a few microseconds while
    /// spinning and at every pause after).
    #[inline]
    pub fn pause(&self, wait: &mut Wait, cancel: &Cancel) -> Result<Pause> {
        wait.looks_to_clock -= 1;
        if wait.spinning && wait.looks_to_clock > 0 {
            return Ok(Pause::Spin);
        }
        wait.looks_to_clock = self.cost.looks_per_clock;
        self.pause_timed(wait, cancel)
    }

    fn pause_timed(&self, wait: &mut Wait, cancel: &Cancel) -> Result<Pause> {
        cancel.check()?;
        let now = Instant::now();
        let waited = now.saturating_duration_since(*wait.started.get_or_insert(now));
        wait.waited = waited;
        let spin = Duration::from_nanos(self.budget_ns as u64);
        if wait.spinning {
            if waited < spin {
                return Ok(Pause::Spin);
            }
            wait.spinning = false;
        }
        if waited < spin + self.cost.yield_for {
            return Ok(Pause::Yield);
        }
        Ok(Pause::Block(BLOCK_SLICE))
    }

    /// The wait ended (what it waited for came): the budget learns from how long it
    /// took.
    #[inline]
    pub fn end(&mut self, wait: Wait) {
        if !self.adaptive {
            return;
        }
        // A wait that was never timed ended within its first looks: short. (A wait
        // that ends within a clock interval past the ceiling counts as short too.)
        let short = wait.waited <= Duration::from_nanos(self.max_ns as u64);
        self.budget_ns = if short {
            self.budget_ns.saturating_add(self.max_ns / 8).min(self.max_ns)
        } else if self.budget_ns / 2 < self.max_ns / 64 {
            // A spin this short is only the looks before the first timing: none.
            0
        } else {
            self.budget_ns / 2
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one wait of `p` that ends after `looks` unsuccessful looks (sleeping `each`
    /// at every pause), and returns the pauses it was told.
    fn wait_for(p: &mut Patience, looks: usize, each: Duration) -> Vec<Pause> {
        let mut w = p.start();
        let mut seen = Vec::new();
        for _ in 0..looks {
            seen.push(p.pause(&mut w, &Cancel::NEVER).unwrap());
            std::thread::sleep(each);
        }
        p.end(w);
        seen
    }

    #[test]
    fn a_crowded_host_never_spins_and_a_setting_is_fixed() {
        let crowded = Patience::new(LookCost::SOCKETS, None, 4, 2);
        assert_eq!(crowded.budget(), Duration::ZERO);
        let mut p = crowded;
        assert_eq!(wait_for(&mut p, 1, Duration::ZERO), vec![Pause::Block(BLOCK_SLICE)]);
        let mut set = Patience::new(LookCost::SOCKETS, Some(Duration::from_micros(7)), 4, 2);
        wait_for(&mut set, 3, Duration::from_millis(1));
        assert_eq!(set.budget(), Duration::from_micros(7), "a set spin does not adapt");
        assert_eq!(Patience::new(LookCost::SOCKETS, None, 2, 2).budget(), DEFAULT_SPIN);
    }

    #[test]
    fn long_waits_fade_the_spin_out_and_short_ones_bring_it_back() {
        let mut p = Patience::new(LookCost::SOCKETS, None, 1, 2);
        for _ in 0..12 {
            // Each wait lasts a millisecond or more: far past the spin.
            wait_for(&mut p, 2, Duration::from_millis(1));
        }
        assert_eq!(p.budget(), Duration::ZERO, "budget after long waits");
        let mut w = p.start();
        assert_ne!(p.pause(&mut w, &Cancel::NEVER).unwrap(), Pause::Spin, "a faded spin still spins");
        for _ in 0..8 {
            wait_for(&mut p, 0, Duration::ZERO);
        }
        assert_eq!(p.budget(), DEFAULT_SPIN);
    }

    #[test]
    fn the_phases_follow_each_other_and_a_cancel_ends_the_wait() {
        let p = Patience::new(LookCost::MPI, None, 1, 2);
        let mut w = p.start();
        let cancel = Cancel::new();
        let mut phases = Vec::new();
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(40) {
            let step = p.pause(&mut w, &cancel).unwrap();
            if phases.last() != Some(&step) {
                phases.push(step);
            }
        }
        assert_eq!(phases, vec![Pause::Spin, Pause::Yield, Pause::Block(BLOCK_SLICE)]);
        cancel.cancel("the test says so");
        let e = p.pause(&mut w, &cancel).unwrap_err();
        assert_eq!(e.reason(), crate::Reason::Cancelled);
        assert!(e.message().contains("the test says so"), "{e}");
        assert!(cancel.is_cancelled() && cancel.clone().is_cancelled());
        assert!(!Cancel::NEVER.is_cancelled() && !Cancel::new().is_cancelled());
    }
}
