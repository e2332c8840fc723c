//! A [`Launcher`] for programs started by `mpirun -n W` (feature `mpi`): every rank
//! runs the same sequence of cases; a section on p <= W processes runs on ranks 0..p
//! (an init split off the world's), and the section's outcome (pid 0's failure, else
//! the first failure of any process) and pid 0's output are then shared with every
//! rank, so that each rank's case sees exactly what rank 0's sees and all ranks
//! take the same path through the suite.
//!
//! On the hybrid engine (threads in ranks) a section of p processes runs on the fewest
//! first ranks whose threads hold p ([`MpiInit::split_layout`]): with 2 threads per rank,
//! p = 3 is 2 + 1 threads on ranks 0 and 1.

use crate::Launcher;
use lpf::mpi::{MpiEngineKind, MpiInit};
use lpf::{Args, Context, Error, Pid, Result};

pub struct MpiLauncher {
    world: MpiInit,
    /// `parts[p - 1]`: the init over the ranks of p processes (None on the ranks above).
    parts: Vec<Option<MpiInit>>,
}

impl MpiLauncher {
    /// Over `MPI_COMM_WORLD` (initialising MPI), with the engine `kind`. Collective.
    pub fn new(kind: MpiEngineKind) -> Result<MpiLauncher> {
        Self::over(MpiInit::world(kind)?)
    }

    /// Over `MPI_COMM_WORLD`, with the engine the environment names (the hybrid engine
    /// with `LPF_ENGINE=hybrid`: see [`lpf::mpi::engine_from_env`]). Collective.
    pub fn from_env() -> Result<MpiLauncher> {
        Self::over(MpiInit::world_from_env()?)
    }

    fn over(world: MpiInit) -> Result<MpiLauncher> {
        let mut parts = Vec::new();
        for p in 1..=world.total_procs() {
            parts.push(world.split(p)?);
        }
        Ok(MpiLauncher { world, parts })
    }

    pub fn rank(&self) -> Pid {
        self.world.pid()
    }

    /// Number of ranks.
    pub fn size(&self) -> Pid {
        self.world.nprocs()
    }

    /// Number of LPF processes (threads of all ranks).
    pub fn total(&self) -> Pid {
        self.world.total_procs()
    }

    pub fn world(&self) -> &MpiInit {
        &self.world
    }
}

impl Launcher for MpiLauncher {
    fn errors_agreed_at_sync(&self) -> bool {
        self.world.agrees_on_errors()
    }
    fn run(&self, p: Pid, spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync), args: Args<'_>) -> Result<()> {
        if p == 0 || p > self.total() {
            return Err(Error::fatal(format!("the MPI launcher runs 1..={} processes, not {p}", self.total())));
        }
        let ranks = self.world.split_layout(p).len();
        let Args { input, output, symbols } = args;
        let r = match &self.parts[p as usize - 1] {
            None => Ok(()),
            Some(init) if init.pid() == 0 => init.hook(spmd, Args { input, output: &mut *output, symbols }),
            Some(init) => init.hook(spmd, Args { input: &[], output: &mut [], symbols }),
        };
        // Every process's outcome, everywhere; the section's result is pid 0's if it
        // failed, else the first failure (as an exec reports it), and pid 0's output.
        // A failure travels whole: its code, its reason and its message.
        // (An error's bytes never start with 0, a success's single byte.)
        let mine = match &r {
            Ok(()) => vec![0u8],
            Err(e) => e.to_wire(),
        };
        let all = self.world.allgather_bytes(&mine)?;
        let failure = all[..ranks].iter().find(|b| b[0] != 0).map(|b| {
            Error::from_wire(b).unwrap_or_else(|| Error::fatal("a process's failure arrived malformed"))
        });
        let result = failure.map_or(Ok(()), Err);
        let mut out = if self.rank() == 0 { output.to_vec() } else { Vec::new() };
        self.world.broadcast(&mut out)?;
        if self.rank() != 0 && out.len() == output.len() {
            output.copy_from_slice(&out);
        }
        result
    }

    fn max_procs(&self) -> Option<Pid> {
        Some(self.total())
    }

    fn gather(&self, mine: Vec<String>) -> Vec<String> {
        // [length u64, bytes]* per rank; with no message anywhere, every rank gives
        // allgather_bytes nothing (as after every case that passes).
        let mut packed = Vec::new();
        for m in &mine {
            packed.extend_from_slice(&(m.len() as u64).to_le_bytes());
            packed.extend_from_slice(m.as_bytes());
        }
        let all = self.world.allgather_bytes(&packed).unwrap_or_else(|e| panic!("rank {}: gather: {e}", self.rank()));
        let mut out = Vec::new();
        for (rank, b) in all.iter().enumerate() {
            let mut at = 0;
            while at < b.len() {
                let len = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
                out.push(format!("rank {rank}: {}", String::from_utf8_lossy(&b[at + 8..at + 8 + len])));
                at += 8 + len;
            }
        }
        out
    }

    fn nodes(&self, p: Pid) -> Option<Vec<std::ops::Range<Pid>>> {
        let mut start = 0;
        Some(
            self.world
                .split_layout(p)
                .into_iter()
                .map(|k| {
                    start += k;
                    start - k..start
                })
                .collect(),
        )
    }
}
