//! The LPF conformance suite: one set of cases, run against any engine through a
//! [`Launcher`]. An engine's test file instantiates it with [`conformance_suite!`].
//!
//! Each case runs SPMD sections at p = 1, 2, 3, 4 and 8 (more processes than cores:
//! oversubscribed) and checks the rules of the LPF specification. Assertions inside a
//! section panic; the engine turns that into a fatal exec result, which the case reports
//! with the process's message.

pub mod cases;
pub mod collective_cases;
#[cfg(feature = "mpi")]
pub mod mpi;

use lpf::{Args, Context, Pid, Result};

/// Starts SPMD sections on one engine.
pub trait Launcher: Sync {
    /// Runs `spmd` on exactly `p` processes, pid 0 getting `args`; returns what the
    /// section's `exec` (or every hook) returned, pid 0's result first on failure.
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()>;
    /// Whether `exec` inside a section may start threads (nested exec).
    fn supports_nested_exec(&self) -> bool {
        true
    }
    /// The most processes one section may have (a fixed-size launcher such as
    /// `mpirun -n W`); `None`: any number.
    fn max_procs(&self) -> Option<Pid> {
        None
    }
    /// Whether the engine's syncs agree on errors: a request rejected at its
    /// destination fails that sync on every process. Engines that skip that agreement
    /// (the MPI engines: it costs a round per sync) fail the destination's sync, the
    /// others' next sync, and the section everywhere.
    fn errors_agreed_at_sync(&self) -> bool {
        true
    }
    /// What `ctx.nodes()` must say in a section of p processes, if the launcher knows
    /// (`coll_hierarchical` checks it).
    fn nodes(&self, _p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        None
    }
    /// What every OS process running the suite recorded (`mine` here), in order: a
    /// case that judges what its own processes saw (panics of an SPMD function) must
    /// see the others' too, and take the same path on every rank under mpirun. Every
    /// OS process calls it at the same point. Launchers in one OS process: `mine`.
    fn gather(&self, mine: Vec<String>) -> Vec<String> {
        mine
    }
}

/// The counts of [`PROCESS_COUNTS`] the launcher can run.
pub fn counts(l: &dyn Launcher) -> Vec<Pid> {
    PROCESS_COUNTS.into_iter().filter(|&p| l.max_procs().is_none_or(|m| p <= m)).collect()
}

/// The process counts every case runs at.
pub(crate) const PROCESS_COUNTS: [Pid; 5] = [1, 2, 3, 4, 8];

/// Instantiates every case of the suite as a `#[test]` for the launcher `$l`.
#[macro_export]
macro_rules! conformance_suite {
    ($l:expr) => {
        $crate::conformance_suite!($l;
            probe_is_sane, nothing_is_preallocated, put_all_to_all, get_all_to_all, put_and_get_to_self,
            overlapping_puts_serialise, registrations_grow_shrink_and_interleave, register_shrink_is_delayed,
            queue_shrink_is_delayed, out_of_memory_resizes_have_no_effect, zero_size_and_null_registrations,
            random_supersteps_match_a_model, nested_exec, rehook_isolates_registrations,
            unmatched_syncs_are_fatal, early_return_is_fatal_and_output_arrives, bad_arguments_are_rejected,
            remote_bounds_are_checked_at_the_call, registration_sizes_are_learnt_per_process, non_collective_calls_fail_everywhere, too_many_incoming_messages_fail, many_sections_in_a_row, many_small_messages_in_one_sync);
    };
    ($l:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::cases::$case(&$l);
            }
        )*
    };
}

/// Instantiates every case of `lpf::collectives` ([`collective_cases`]) as a `#[test]`
/// for the launcher `$l`.
#[macro_export]
macro_rules! collectives_suite {
    ($l:expr) => {
        $crate::collectives_suite!($l;
            coll_allreduce, coll_reduce, coll_broadcast, coll_scatter_gather, coll_allgather, coll_alltoall,
            coll_limits_and_user_messages, coll_random_sequence, coll_hierarchical);
    };
    ($l:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::collective_cases::$case(&$l);
            }
        )*
    };
}

/// Resizes register and queue and syncs, as every section must before communicating.
pub fn setup(ctx: &mut Context, regs: usize, msgs: usize) {
    ctx.resize_memory_register(regs).expect("resize_memory_register");
    ctx.resize_message_queue(msgs).expect("resize_message_queue");
    ctx.sync(lpf::SYNC_DEFAULT).expect("sync after resize");
}

/// A small deterministic generator (splitmix64) so every process derives the same
/// random plan from one seed.
#[derive(Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
