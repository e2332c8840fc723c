//! Optional per-phase timing of MPI syncs (`LPF_MPI_PROF=1`): mean time per phase,
//! printed on stderr when a section ends. A diagnosis aid; off by default (one
//! cached check per sync).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

const PHASES: usize = 6;
const CLASSES: usize = 2;
static ACC: [[AtomicU64; PHASES + 1]; CLASSES] = [const { [const { AtomicU64::new(0) }; PHASES + 1] }; CLASSES];

pub(crate) fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("LPF_MPI_PROF").is_ok_and(|v| v == "1"))
}

/// Phase stamps of one sync.
pub(crate) struct Stamps {
    on: bool,
    last: Option<Instant>,
    t: [u64; PHASES],
}

impl Stamps {
    pub fn start() -> Stamps {
        let on = on();
        Stamps { on, last: on.then(Instant::now), t: [0; PHASES] }
    }
    /// Ends phase `i`.
    pub fn mark(&mut self, i: usize) {
        if let Some(l) = self.last {
            let now = Instant::now();
            self.t[i] += (now - l).as_nanos() as u64;
            self.last = Some(now);
        }
    }
    /// Adds this sync to class `c` (0: no large data, 1: large data).
    pub fn done(&self, c: usize) {
        if !self.on {
            return;
        }
        for (i, &t) in self.t.iter().enumerate() {
            ACC[c][i].fetch_add(t, Ordering::Relaxed);
        }
        ACC[c][PHASES].fetch_add(1, Ordering::Relaxed);
    }
}

pub(crate) fn report(who: usize) {
    if !on() {
        return;
    }
    for (c, acc) in ACC.iter().enumerate() {
        let n = acc[PHASES].load(Ordering::Relaxed).max(1);
        let v: Vec<String> = (0..PHASES).map(|i| format!("{:.2}", acc[i].load(Ordering::Relaxed) as f64 / n as f64 / 1e3)).collect();
        eprintln!("lpf prof rank {who} class {c}: {} syncs, mean us per phase [build, meta, plan+recv, data, copy, barrier] = {}", acc[PHASES].load(Ordering::Relaxed), v.join(" "));
    }
}
