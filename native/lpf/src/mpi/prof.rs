//! Optional per-phase timing of MPI syncs (`LPF_MPI_PROF=1`): mean time per phase,
//! printed on stderr when a section ends. A diagnosis aid; off by default (one
//! cached check per sync).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

const PHASES: usize = 5;
const CLASSES: usize = 2;
static ACC: [[AtomicU64; PHASES + 1]; CLASSES] = [const { [const { AtomicU64::new(0) }; PHASES + 1] }; CLASSES];

pub(crate) fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    // An invalid LPF_MPI_PROF already failed the init that started the section.
    *ON.get_or_init(|| crate::config::Config::from_env().is_ok_and(|c| c.mpi_prof))
}

/// Phase stamps of one sync (nothing to fill when profiling is off).
pub(crate) struct Stamps(Option<Times>);

struct Times {
    last: Instant,
    t: [u64; PHASES],
}

impl Stamps {
    pub fn start() -> Stamps {
        Stamps(on().then(|| Times { last: Instant::now(), t: [0; PHASES] }))
    }
    /// Ends phase `i`.
    pub fn mark(&mut self, i: usize) {
        if let Some(s) = &mut self.0 {
            let now = Instant::now();
            s.t[i] += (now - s.last).as_nanos() as u64;
            s.last = now;
        }
    }
    /// Adds this sync to class `c` (0: no large data, 1: large data).
    pub fn done(&self, c: usize) {
        let Some(s) = &self.0 else { return };
        for (i, &t) in s.t.iter().enumerate() {
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
        eprintln!("lpf prof rank {who} class {c}: {} syncs, mean us per phase [build+meta+plan, recv, data, copy, end] = {}", acc[PHASES].load(Ordering::Relaxed), v.join(" "));
    }
}
