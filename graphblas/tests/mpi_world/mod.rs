//! The MPI set-up of the harness-less MPI test binaries (mpi_dist, mpi_kernels; run by
//! tests/mpi/run.sh under mpirun): the world, split once for every process count, and
//! a directory for the inputs that rank 0 makes and every rank (one machine) reads.

use crate::common::TempDir;
use lpf::mpi::MpiInit;
use std::path::PathBuf;

pub struct MpiWorld {
    pub world: MpiInit,
    /// `parts[p - 1]`: the first p ranks as a job of their own (None on the others).
    pub parts: Vec<Option<MpiInit>>,
    /// The engine's name as the test labels show it (`hybrid-<network>` for hybrid).
    pub engine: String,
    /// The inputs' directory, the same path on every rank.
    pub base: PathBuf,
    /// Rank 0's handle on it, which removes it when dropped (drop it before
    /// `MpiTally::finish`, which exits).
    pub dir: Option<TempDir>,
}

impl MpiWorld {
    /// Joins the world `mpirun` started (the engine from `LPF_ENGINE`); `tag` names the
    /// inputs' directory.
    pub fn join(tag: &str) -> MpiWorld {
        let world = MpiInit::world_from_env().expect("MPI init");
        let parts = (1..=world.total_procs()).map(|p| world.split(p).expect("split")).collect();
        let engine = match world.engine_name() {
            "hybrid" => format!("hybrid-{}", world.kind().name()),
            e => e.to_string(),
        };
        let dir = if world.pid() == 0 { Some(TempDir::new(tag)) } else { None };
        let mut path = dir.as_ref().map(|d| d.0.to_string_lossy().into_owned().into_bytes()).unwrap_or_default();
        world.broadcast(&mut path).expect("broadcast of the inputs' directory");
        let base = PathBuf::from(String::from_utf8(path).expect("a UTF-8 path"));
        MpiWorld { world, parts, engine, base, dir }
    }
}
