//! What the distributed kernels report after each round of their loops: one
//! [`RoundProgress`] per PageRank or CDLP iteration, BFS level, WCC or SSSP round and
//! LCC phase, handed to the caller's observer (`*_spmd_observed`), which the Spark bridge
//! sends to the driver's log (native/lpf-jni/src/progress.rs).

use super::IterationProgress;
use std::time::Instant;

/// A kernel's progress after one round, the same on every process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundProgress {
    /// What the kernel calls a round: `iteration` (PageRank, GraphX PageRank, CDLP),
    /// `level` (BFS; shortest paths: each landmark's search in turn), `round` (WCC, SSSP,
    /// SCC, MIS), `phase` (LCC, triangle count), `core` (k-core: one line per coreness).
    pub unit: &'static str,
    /// BFS and shortest-paths levels count from 0 (the source's level), k-core's lines
    /// are the corenesses met (ascending, from 0), everything else counts from 1.
    pub round: usize,
    /// What `value` is (one word): `residual` (PageRank: the iteration's L1 change),
    /// `change` (GraphX PageRank: the iteration's largest per-vertex change),
    /// `frontier` (BFS: vertices at this level), `changed` (WCC: links of the pass that
    /// joined two trees; CDLP: vertices whose label changed), `improved` (SSSP:
    /// vertices whose distance fell), `candidates` (LCC phase 1: vertices with two or
    /// more neighbours), `links` (LCC phase 2: edges among the vertices' neighbours,
    /// summed over the vertices), `peeled` (k-core: the vertices of this coreness).
    pub measure: &'static str,
    pub value: Measure,
    /// This round's time, and the time since the first one started (this process).
    pub seconds: f64,
    pub elapsed: f64,
}

/// A round's value: a count, or a real number (PageRank's residual).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    Count(u64),
    Real(f64),
}

impl From<&IterationProgress> for RoundProgress {
    fn from(p: &IterationProgress) -> RoundProgress {
        RoundProgress {
            unit: "iteration",
            round: p.iteration,
            measure: "residual",
            value: Measure::Real(p.residual),
            seconds: p.seconds,
            elapsed: p.elapsed,
        }
    }
}

/// The observer of a kernel's rounds.
pub(crate) type Observer<'o> = &'o mut dyn FnMut(&RoundProgress);

/// Times a loop's rounds and hands each to the observer.
pub(crate) struct Rounds<'o> {
    unit: &'static str,
    start: Instant,
    last: Instant,
    observe: Observer<'o>,
}

impl<'o> Rounds<'o> {
    /// Rounds called `unit`, the first starting now.
    pub(crate) fn start(unit: &'static str, observe: Observer<'o>) -> Rounds<'o> {
        let now = Instant::now();
        Rounds { unit, start: now, last: now, observe }
    }

    /// Round `round` has ended with `value` of `measure`.
    pub(crate) fn done(&mut self, round: usize, measure: &'static str, value: Measure) {
        let now = Instant::now();
        let p = RoundProgress {
            unit: self.unit,
            round,
            measure,
            value,
            seconds: (now - self.last).as_secs_f64(),
            elapsed: (now - self.start).as_secs_f64(),
        };
        (self.observe)(&p);
        self.last = Instant::now();
    }
}
