//! The conformance suite on an MPI engine, run by every rank of `mpirun -n W`:
//!
//! ```text
//! LPF_ENGINE=mpimsg mpirun -n 4 lpf-mpi-conformance [FILTER]
//! LPF_ENGINE=hybrid LPF_HYBRID_NET=mpirma LPF_THREADS=2 mpirun -n 2 lpf-mpi-conformance
//! ```
//!
//! Every case runs at each process count of the suite up to W (sections on ranks
//! 0..p), plus the large-payload cases of this file. Rank 0 prints one `ok NAME` or
//! `FAIL NAME: why` line per case and a last line `N passed, M failed`; the exit status
//! is non-zero if a case failed.

use lpf::{Args, Context, MSG_DEFAULT, SYNC_DEFAULT};
use lpf_conformance::mpi::MpiLauncher;
use lpf_conformance::{cases, collective_cases, counts, setup, Launcher};

type Case = fn(&dyn Launcher);

macro_rules! list {
    ($m:ident: $($c:ident),* $(,)?) => { vec![$((stringify!($c), $m::$c as Case)),*] };
}

/// Large payloads (above the inline limit: real data messages or one-sided
/// operations): all-to-all puts and gets of 48 KiB blocks, and large puts overlapping
/// at one process that must end as a serialisation.
fn large_payloads(l: &dyn Launcher) {
    for p in counts(l) {
        if let Err(e) = l.run(p, &cases::large_payloads_section, Args::none()) {
            panic!("p = {p}: {e}");
        }
    }
}

/// Payloads of several MiB, both directions at once, over several supersteps.
fn big_messages(l: &dyn Launcher) {
    for p in counts(l).into_iter().filter(|&p| p >= 2) {
        let r = l.run(p, &|ctx: &mut Context, _: Args<'_>| {
            let (pid, n) = (ctx.pid() as usize, ctx.nprocs() as usize);
            const W: usize = 3 << 17; // 3 MiB of u64
            setup(ctx, 2, 2);
            let mut a: Vec<u64> = (0..W).map(|i| (pid * W + i) as u64).collect();
            let mut b = vec![0u64; W];
            let sa = ctx.register_global(&mut a).unwrap();
            let sb = ctx.register_global(&mut b).unwrap();
            ctx.sync(SYNC_DEFAULT).unwrap();
            for round in 0..3 {
                let to = ((pid + 1 + round) % n) as u32;
                ctx.put(sa.slot(), 0, to, sb.slot(), 0, 8 * W, MSG_DEFAULT).unwrap();
                ctx.sync(SYNC_DEFAULT).unwrap();
                let from = (pid + n - (1 + round) % n) % n;
                assert!(ctx.slice(&sb).iter().enumerate().all(|(i, &x)| x == (from * W + i) as u64), "round {round}");
                let from = (pid + 1) % n;
                ctx.get(from as u32, sa.slot(), 0, sb.slot(), 0, 8 * W, MSG_DEFAULT).unwrap();
                ctx.sync(SYNC_DEFAULT).unwrap();
                assert!(ctx.slice(&sb).iter().enumerate().all(|(i, &x)| x == (from * W + i) as u64), "get round {round}");
            }
        }, Args::none());
        if let Err(e) = r {
            panic!("p = {p}: {e}");
        }
    }
}

/// `--spin`: through `Root::exec` (LPF_ENGINE), every process puts to its right
/// neighbour and syncs forever, printing `ready RANK OSPID` after 20 syncs; for the
/// test that kills one of them.
fn spin() -> ! {
    let r = lpf::Root::new().exec(lpf::MAX_P, &|ctx: &mut Context, _: Args<'_>| {
        setup(ctx, 2, 2);
        let (pid, n) = (ctx.pid(), ctx.nprocs());
        let mut a = vec![pid as u64; 8192];
        let mut b = vec![0u64; 8192];
        let s = ctx.register_global(&mut a).unwrap();
        let d = ctx.register_global(&mut b).unwrap();
        ctx.sync(SYNC_DEFAULT).unwrap();
        for i in 0u64.. {
            ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8 * 8192, MSG_DEFAULT).unwrap();
            if let Err(e) = ctx.sync(SYNC_DEFAULT) {
                println!("sync FATAL on {pid}: {e}");
                return;
            }
            if i == 20 {
                println!("ready {pid} {}", std::process::id());
                use std::io::Write;
                std::io::stdout().flush().unwrap();
            }
        }
    }, Args::none());
    println!("exec returned {r:?}");
    std::process::exit(3)
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    if filter == "--spin" {
        spin();
    }
    let launcher = match MpiLauncher::from_env() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("lpf-mpi-conformance: {e}");
            println!("FAIL init: {e}");
            println!("0 passed, 1 failed");
            std::process::exit(1);
        }
    };
    let rank = launcher.rank();
    let engine = launcher.world().engine_name();
    // Rank 0 reports each case's panic message itself; the others take the same path
    // silently.
    std::panic::set_hook(Box::new(|_| {}));
    let mut all: Vec<(&str, Case)> = list!(cases:
        probe_is_sane, nothing_is_preallocated, put_all_to_all, get_all_to_all, put_and_get_to_self,
        overlapping_puts_serialise, registrations_grow_shrink_and_interleave, register_shrink_is_delayed,
        queue_shrink_is_delayed, out_of_memory_resizes_have_no_effect, zero_size_and_null_registrations,
        random_supersteps_match_a_model, nested_exec, rehook_isolates_registrations,
        unmatched_syncs_are_fatal, early_return_is_fatal_and_output_arrives, bad_arguments_are_rejected,
        remote_bounds_are_checked_at_the_call, registration_sizes_are_learnt_per_process,
        non_collective_calls_fail_everywhere, too_many_incoming_messages_fail, many_sections_in_a_row, many_small_messages_in_one_sync);
    all.extend(list!(collective_cases:
        coll_allreduce, coll_reduce, coll_broadcast, coll_scatter_gather, coll_allgather, coll_alltoall,
        coll_limits_and_user_messages, coll_random_sequence, coll_hierarchical));
    all.push(("large_payloads", large_payloads as Case));
    all.push(("big_messages", big_messages as Case));
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in all.into_iter().filter(|(n, _)| n.contains(&filter)) {
        let t = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&launcher)));
        // Keep the ranks in step between cases.
        let _ = launcher.world().barrier();
        let label = if engine == "hybrid" {
            format!("hybrid-{} {name} (W={}, {} processes)", launcher.world().kind().name(), launcher.size(), launcher.total())
        } else {
            format!("{engine} {name} (W={})", launcher.size())
        };
        match outcome {
            Ok(()) => {
                passed += 1;
                if rank == 0 {
                    println!("ok {label} [{:.2}s]", t.elapsed().as_secs_f64());
                }
            }
            Err(p) => {
                failed += 1;
                let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                if rank == 0 {
                    println!("FAIL {label}: {}", why.unwrap_or_default().replace('\n', " "));
                }
            }
        }
    }
    if rank == 0 {
        println!("{passed} passed, {failed} failed");
    }
    std::process::exit(if failed > 0 && rank == 0 { 1 } else { 0 });
}
