//! Distributed PageRank on the MPI engines, against the local reference (the checks of
//! tests/dist.rs, run by every rank of `mpirun -n W`; feature `mpi`, no libtest
//! harness):
//!
//! ```text
//! LPF_ENGINE=mpirma mpirun -n 4 target/.../mpi_dist-<hash>
//! LPF_ENGINE=hybrid LPF_HYBRID_NET=mpimsg LPF_THREADS=2 mpirun -n 2 target/.../mpi_dist-<hash>
//! ```
//!
//! For p = 1..=W (W: the LPF processes of the job, all threads of all ranks on the
//! hybrid engine, where a section of p runs on the first ranks holding p), both
//! exchanges, special and random graphs from MatrixMarket files
//! and an R-MAT graph: ranks 0..p run the section, every process's result is gathered
//! everywhere and assembled and compared on every rank (so all ranks agree). Rank 0
//! prints `ok`/`FAIL` lines and `N passed, M failed` last.

mod common;
mod mpi_world;

use common::*;
use mpi_world::MpiWorld;
use graphblas::dist::{pagerank_spmd_with, DistOptions, DistributedResult, Exchange, Input};
use graphblas::kron::KronParams;
use graphblas::PageRankConfig;
use lpf::mpi::MpiInit;
use lpf::{Args, Context};
use std::sync::Mutex;

fn encode(r: &Result<DistributedResult, graphblas::dist::DistError>) -> Vec<u8> {
    let mut b = Vec::new();
    match r {
        Err(e) => {
            b.push(0);
            b.extend_from_slice(e.to_string().as_bytes());
        }
        Ok(r) => {
            b.push(1);
            for v in [r.n, r.iterations as u64, r.converged as u64, r.residual.to_bits(), r.ids.len() as u64] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            for (&id, &x) in r.ids.iter().zip(&r.ranks) {
                b.extend_from_slice(&id.to_le_bytes());
                b.extend_from_slice(&x.to_bits().to_le_bytes());
            }
        }
    }
    b
}

/// A process's result as the other ranks see it: (n, iterations, converged, residual,
/// ids, ranks), or its error text.
type Seen = Result<(u64, usize, bool, f64, Vec<u64>, Vec<f64>), String>;

fn decode(b: &[u8]) -> Seen {
    if b.first() != Some(&1) {
        return Err(String::from_utf8_lossy(b.get(1..).unwrap_or(&[])).into_owned());
    }
    let w = |i: usize| u64::from_le_bytes(b[1 + 8 * i..9 + 8 * i].try_into().unwrap());
    let k = w(4) as usize;
    let ids = (0..k).map(|j| w(5 + 2 * j)).collect();
    let ranks = (0..k).map(|j| f64::from_bits(w(6 + 2 * j))).collect();
    Ok((w(0), w(1) as usize, w(2) != 0, f64::from_bits(w(3)), ids, ranks))
}

struct Mpi {
    world: MpiInit,
    parts: Vec<Option<MpiInit>>,
}

impl Mpi {
    /// Runs the distributed PageRank of `input` on p processes (the first ranks); every
    /// rank gets every participating process's result, in pid order.
    fn run(&self, p: u32, exchange: Exchange, input: &(dyn Fn() -> Input + Sync)) -> Vec<Seen> {
        // This rank's processes' results (one per thread on the hybrid engine), by pid.
        let mine: Mutex<Vec<(u32, Vec<u8>)>> = Mutex::new(Vec::new());
        if let Some(init) = &self.parts[p as usize - 1] {
            let r = init.hook(&|ctx: &mut Context, _: Args<'_>| {
                let cfg = PageRankConfig::default();
                let opts = DistOptions { exchange, ..Default::default() };
                let b = encode(&pagerank_spmd_with(ctx, input(), &cfg, &opts));
                mine.lock().unwrap().push((ctx.pid(), b));
            }, Args::none());
            if let Err(e) = r {
                let mut b = vec![0u8];
                b.extend_from_slice(format!("hook failed: {e}").as_bytes());
                let (first, count) = init.local_procs();
                *mine.lock().unwrap() = (first..first + count).map(|q| (q, b.clone())).collect();
            }
        }
        // [pid u32, length u64, bytes]*
        let mut packed = Vec::new();
        for (q, b) in mine.into_inner().unwrap() {
            packed.extend_from_slice(&q.to_le_bytes());
            packed.extend_from_slice(&(b.len() as u64).to_le_bytes());
            packed.extend_from_slice(&b);
        }
        let all = self.world.allgather_bytes(&packed).expect("allgather");
        let mut seen: Vec<Option<Seen>> = (0..p).map(|_| None).collect();
        for rank in all {
            let mut at = 0;
            while at < rank.len() {
                let q = u32::from_le_bytes(rank[at..at + 4].try_into().unwrap()) as usize;
                let len = u64::from_le_bytes(rank[at + 4..at + 12].try_into().unwrap()) as usize;
                seen[q] = Some(decode(&rank[at + 12..at + 12 + len]));
                at += 12 + len;
            }
        }
        seen.into_iter().enumerate().map(|(q, s)| s.unwrap_or_else(|| Err(format!("no result from process {q}")))).collect()
    }

    /// The check of tests/dist.rs's `check_all`, over the MPI ranks.
    fn check(&self, what: &str, ids: &[u64], want: &(Vec<f64>, usize), input: &(dyn Fn() -> Input + Sync)) {
        for p in 1..=self.world.total_procs() {
            for exchange in [Exchange::Allgather, Exchange::Plan] {
                let tag = format!("{what} [p={p} {exchange:?}]");
                let seen = self.run(p, exchange, input);
                let results: Vec<Result<DistributedResult, graphblas::dist::DistError>> = seen
                    .into_iter()
                    .map(|s| {
                        let (nn, iterations, converged, residual, ids, ranks) = s.unwrap_or_else(|e| panic!("{tag}: {e}"));
                        Ok(DistributedResult { n: nn, ids, ranks, iterations, converged, residual, ..placeholder() })
                    })
                    .collect();
                let (got, iters) = assemble(&results, ids);
                assert_eq!(iters, want.1, "{tag}: iterations");
                assert_close(&got, &want.0, &tag);
                let r0 = results[0].as_ref().unwrap();
                assert!(r0.converged && r0.residual < 1e-7, "{tag}: residual {}", r0.residual);
            }
        }
    }
}

/// A result with every field we do not compare, from a real run (one edge; an empty
/// graph is an error).
fn placeholder() -> DistributedResult {
    static EMPTY: std::sync::OnceLock<Mutex<Option<DistributedResult>>> = std::sync::OnceLock::new();
    let cell = EMPTY.get_or_init(|| {
        let out = Mutex::new(None);
        // The shared-memory engine whatever LPF_ENGINE says (Root::exec would follow it).
        lpf::ShmInit::new(0, 1)
            .expect("shm init")
            .hook(&|ctx: &mut Context, _: Args<'_>| {
                let r = pagerank_spmd_with(ctx, Input::Edges(vec![(0, 1)]), &PageRankConfig::default(), &DistOptions::default());
                *out.lock().unwrap() = r.ok();
            }, Args::none())
            .expect("empty run");
        Mutex::new(out.into_inner().unwrap())
    });
    let g = cell.lock().unwrap();
    let r = g.as_ref().expect("one-edge graph result");
    DistributedResult { ids: Vec::new(), ranks: Vec::new(), index: Vec::new(), ..r.clone() }
}

/// A named check, run collectively by every rank.
type Case = (String, Box<dyn Fn(&Mpi)>);

fn main() {
    let MpiWorld { world, parts, engine, base, dir } = MpiWorld::join("mpi");
    let mpi = Mpi { world, parts };
    let rank = mpi.world.pid();
    std::panic::set_hook(Box::new(|_| {}));
    let cfg = PageRankConfig::default();

    let mut cases: Vec<Case> = Vec::new();
    let mut graphs = special_graphs();
    graphs.extend((0..3u64).map(|s| random_graph(s, 40 + 17 * s as usize, 150 + 40 * s as usize)));
    for (k, g) in graphs.into_iter().enumerate() {
        let file = base.join(format!("g{k}.mtx"));
        if rank == 0 {
            std::fs::write(&file, g.mtx_pattern()).unwrap();
        }
        let want = g.reference_declared(&cfg);
        let ids1: Vec<u64> = g.declared().iter().map(|x| x + 1).collect();
        let name = format!("{} (mtx)", g.name);
        cases.push((name.clone(), Box::new(move |m: &Mpi| m.check(&name, &ids1, &want, &|| Input::file(file.clone())))));
    }
    let params = KronParams::graph500(9, 77);
    let kg = kron_graph(&params);
    let (want, ids) = (kg.reference_declared(&cfg), kg.declared());
    cases.push(("rmat scale 9".into(), Box::new(move |m: &Mpi| m.check("rmat scale 9", &ids, &want, &|| Input::Rmat(params)))));
    mpi.world.barrier().unwrap();

    let mut tally = MpiTally::new(rank as usize);
    for (name, case) in &cases {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&mpi))).map_err(|p| {
            p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        });
        mpi.world.barrier().unwrap();
        let label = format!("pagerank {engine} {name} (W={}, {} processes)", mpi.world.nprocs(), mpi.world.total_procs());
        tally.record(&label, outcome);
    }
    drop(dir);
    tally.finish()
}
