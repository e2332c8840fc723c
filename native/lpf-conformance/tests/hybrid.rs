//! The conformance suite on the hybrid engine: p LPF processes spread over
//! max(2, ceil(p / 3)) TCP processes (threads of this test, each with its own TCP init
//! over loopback), each running its share as threads: p = 8 is 3 + 3 + 2.

mod tcp_launcher;

use lpf::tcp::MetaAlgo;
use lpf::{Args, Context, Pid, Result};
use lpf_conformance::{collectives_suite, conformance_suite, Launcher};

struct Hybrid(MetaAlgo);

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
}

#[test]
fn split_covers_p() {
    for p in 1..20 {
        let s = split(p);
        assert_eq!(s.iter().sum::<Pid>(), p);
        assert!(s.iter().all(|&k| k >= 1));
    }
    assert_eq!(split(8), vec![3, 3, 2]);
}

mod direct {
    use super::*;
    conformance_suite!(Hybrid(MetaAlgo::Direct));
    collectives_suite!(Hybrid(MetaAlgo::Direct));
}

mod bruck {
    use super::*;
    conformance_suite!(Hybrid(MetaAlgo::Bruck));
}
