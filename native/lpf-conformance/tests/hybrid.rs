//! The conformance suite on the hybrid engine: p LPF processes spread over
//! max(2, ceil(p / 3)) TCP processes (threads of this test, each with its own TCP init
//! over loopback), each running its share as threads: p = 8 is 3 + 3 + 2, p = 4 is
//! 2 + 2, p = 3 is 2 + 1. The collectives also run on uneven layouts with single-thread
//! processes between multi-thread ones (p = 4 as 1 + 2 + 1, p = 8 as 2 + 1 + 3 + 2), so
//! hierarchical algorithms meet nodes of every size and leaders in every position.

mod tcp_launcher;

use lpf::tcp::MetaAlgo;
use lpf::{Args, Context, Pid, Result};
use lpf_conformance::{collectives_suite, conformance_suite, Launcher};

struct Hybrid(MetaAlgo);

/// The hybrid engine with the layouts of [`uneven`].
struct Uneven;

fn uneven(p: Pid) -> Vec<Pid> {
    match p {
        3 => vec![1, 2],
        4 => vec![1, 2, 1],
        8 => vec![2, 1, 3, 2],
        _ => split(p),
    }
}

/// The nodes `ctx.nodes()` must report for a layout: each TCP process's threads.
fn ranges(layout: &[Pid]) -> Vec<std::ops::Range<Pid>> {
    let mut start = 0;
    layout
        .iter()
        .map(|&k| {
            start += k;
            start - k..start
        })
        .collect()
}

impl Launcher for Uneven {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        tcp_launcher::run_over_tcp(&uneven(p), MetaAlgo::Direct, true, spmd, args)
    }
    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        Some(ranges(&uneven(p)))
    }
}

fn split(p: Pid) -> Vec<Pid> {
    if p == 1 {
        return vec![1];
    }
    let n = 2.max(p.div_ceil(3));
    (0..n).map(|i| p / n + Pid::from(i < p % n)).collect()
}

impl Launcher for Hybrid {
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        tcp_launcher::run_over_tcp(&split(p), self.0, true, spmd, args)
    }
    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        Some(ranges(&split(p)))
    }
}

#[test]
fn split_covers_p() {
    for p in 1..20 {
        let s = split(p);
        assert_eq!(s.iter().sum::<Pid>(), p);
        assert!(s.iter().all(|&k| k >= 1));
    }
    assert_eq!(split(8), vec![3, 3, 2]);
    for p in 1..20 {
        assert_eq!(uneven(p).iter().sum::<Pid>(), p);
    }
    assert_eq!(ranges(&[1, 2, 1]), vec![0..1, 1..3, 3..4]);
}

mod direct {
    use super::*;
    conformance_suite!(Hybrid(MetaAlgo::Direct));
    collectives_suite!(Hybrid(MetaAlgo::Direct));
}

mod uneven_layouts {
    use super::*;
    collectives_suite!(Uneven; coll_hierarchical, coll_allreduce, coll_broadcast, coll_reduce, coll_random_sequence);
}

mod bruck {
    use super::*;
    conformance_suite!(Hybrid(MetaAlgo::Bruck));
}
