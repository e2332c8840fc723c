//! The graph kernels on the MPI engines (feature `mpi`, no libtest harness; run by
//! tests/mpi/run.sh under `mpirun -n W`, also on the hybrid engine): BFS, WCC, SSSP,
//! CDLP, LCC and Graphalytics PageRank on a small graph with isolated vertices,
//! self-loops, duplicate edges, several components and zero weights, at every
//! p = 1..=W (the job's LPF processes, the first ranks running the section), the
//! kernels' `threads` 1 and 2, against the references of `common` (exact for BFS, WCC,
//! SSSP, CDLP; 1e-12 for PR and LCC). Every LPF process checks its own part; the ranks
//! gather the outcomes and the counts (together exactly the vertices). An absent
//! source is the same error on every process. Rank 0 prints `ok`/`FAIL` lines and
//! `N passed, M failed` last.

mod common;
mod mpi_world;

use common::*;
use mpi_world::MpiWorld;
use graphblas::dist::{bfs_spmd, cdlp_spmd, lcc_spmd, pagerank_spmd, sssp_spmd, wcc_spmd, DistError, Input, VertexValues};
use graphblas::PageRankConfig;
use lpf::mpi::MpiInit;
use lpf::{Args, Context};
use std::sync::Mutex;

/// What one LPF process found: how many vertices it returned, or what was wrong.
type Outcome = Result<usize, String>;

/// This process's block against the reference values `want` of the vertices `ids`.
fn own_block<T: Copy + std::fmt::Debug>(r: Result<VertexValues<T>, DistError>, ids: &[u64], want: &[T], same: fn(T, T) -> bool) -> Outcome {
    let r = r.map_err(|e| e.to_string())?;
    let at = r.first_index as usize;
    if r.n as usize != ids.len() || ids.get(at..at + r.ids.len()) != Some(&r.ids[..]) {
        return Err(format!("vertices {:?} at {at}, n {}", r.ids, r.n));
    }
    for (k, (&got, &w)) in r.values.iter().zip(&want[at..]).enumerate() {
        if !same(got, w) {
            return Err(format!("vertex {}: {got:?}, want {w:?}", r.ids[k]));
        }
    }
    Ok(r.ids.len())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

type Kernel = Box<dyn Fn(&mut Context, usize) -> Outcome + Sync>;

struct Mpi {
    world: MpiInit,
    parts: Vec<Option<MpiInit>>,
}

impl Mpi {
    /// Runs `kernel` on p processes (the first ranks); every rank gets every
    /// participating process's outcome.
    fn run(&self, p: u32, threads: usize, kernel: &Kernel) -> Vec<Outcome> {
        let mine: Mutex<Vec<(u32, Outcome)>> = Mutex::new(Vec::new());
        if let Some(init) = &self.parts[p as usize - 1] {
            let r = init.hook(&|ctx: &mut Context, _: Args<'_>| {
                let o = kernel(ctx, threads);
                mine.lock().unwrap().push((ctx.pid(), o));
            }, Args::none());
            if let Err(e) = r {
                let (first, count) = init.local_procs();
                *mine.lock().unwrap() = (first..first + count).map(|q| (q, Err(format!("hook failed: {e}")))).collect();
            }
        }
        // [pid u32, ok u8, count u64 | length u64 + text]*
        let mut packed = Vec::new();
        for (q, o) in mine.into_inner().unwrap() {
            packed.extend_from_slice(&q.to_le_bytes());
            match o {
                Ok(c) => {
                    packed.push(1);
                    packed.extend_from_slice(&(c as u64).to_le_bytes());
                }
                Err(m) => {
                    packed.push(0);
                    packed.extend_from_slice(&(m.len() as u64).to_le_bytes());
                    packed.extend_from_slice(m.as_bytes());
                }
            }
        }
        let mut seen: Vec<Outcome> = (0..p).map(|q| Err(format!("no outcome from process {q}"))).collect();
        for rank in self.world.allgather_bytes(&packed).expect("allgather") {
            let mut at = 0;
            while at < rank.len() {
                let q = u32::from_le_bytes(rank[at..at + 4].try_into().unwrap()) as usize;
                let word = u64::from_le_bytes(rank[at + 5..at + 13].try_into().unwrap()) as usize;
                if rank[at + 4] == 1 {
                    seen[q] = Ok(word);
                    at += 13;
                } else {
                    seen[q] = Err(String::from_utf8_lossy(&rank[at + 13..at + 13 + word]).into_owned());
                    at += 13 + word;
                }
            }
        }
        seen
    }

    /// Every p and thread count: each process's part right, together all n vertices.
    fn check(&self, n: usize, kernel: &Kernel) -> Result<(), String> {
        for p in 1..=self.world.total_procs() {
            for threads in [1, 2] {
                let mut total = 0;
                for (q, o) in self.run(p, threads, kernel).into_iter().enumerate() {
                    total += o.map_err(|e| format!("p={p} threads={threads} process {q}: {e}"))?;
                }
                if total != n {
                    return Err(format!("p={p} threads={threads}: {total} vertices returned, the graph has {n}"));
                }
            }
        }
        Ok(())
    }
}

fn main() {
    let MpiWorld { world, parts, engine, base, dir } = MpiWorld::join("mpik");
    let mpi = Mpi { world, parts };
    let rank = mpi.world.pid();

    // Isolated vertices, self-loops, duplicates, many components, triangles; weights 0..3.
    let mut g = random_graph(7, 60, 45);
    g.edges.extend([(3, 3), (3, 3), (10, 11), (10, 11), (59, 0), (20, 21), (21, 22), (22, 20), (21, 20)]);
    // A dense cluster: many triangles, some edges both ways, so LCC sees varied values.
    g.edges.extend((30..37).flat_map(|u| (30..37).filter(move |&v| u != v && (u * 7 + v) % 3 != 0).map(move |v| (u, v))));
    let w = WeightedGraph::weigh(&g, 1, 4);
    let (mtx, wmtx) = (base.join("g.mtx"), base.join("w.mtx"));
    if rank == 0 {
        std::fs::write(&mtx, g.mtx_pattern()).unwrap();
        std::fs::write(&wmtx, w.mtx("integer")).unwrap();
    }
    mpi.world.barrier().unwrap();
    let n = g.n;
    let ids: Vec<u64> = (1..=n as u64).collect();
    let source = g.edges[0].0;
    let bfs = reference_bfs(n, &g.edges, source);
    let wcc: Vec<u64> = reference_wcc(n, &g.edges).into_iter().map(|r| ids[r]).collect();
    let sssp = reference_sssp(n, &w.edges, source);
    let cdlp: Vec<u64> = reference_cdlp(n, &g.edges, 10).into_iter().map(|r| ids[r]).collect();
    let lcc = reference_lcc(n, &g.edges);
    let pr = reference_pagerank_fixed(n, &g.edges, 0.85, 30);
    let file = move || Input::file(mtx.clone());
    let wfile = move || Input::file(wmtx.clone());
    let src = source as u64 + 1;
    let (ids, f1, f2, f3, f4, f5, f6, f7) = (ids.clone(), file.clone(), file.clone(), file.clone(), file.clone(), file.clone(), file.clone(), wfile.clone());
    let (i1, i2, i3, i4, i5, i6) = (ids.clone(), ids.clone(), ids.clone(), ids.clone(), ids.clone(), ids.clone());
    let cases: Vec<(&str, Kernel)> = vec![
        ("bfs", Box::new(move |ctx, t| own_block(bfs_spmd(ctx, f1(), src, t), &i1, &bfs, |a, b| a == b))),
        ("wcc", Box::new(move |ctx, t| own_block(wcc_spmd(ctx, f2(), t), &i2, &wcc, |a, b| a == b))),
        ("sssp", Box::new(move |ctx, t| own_block(sssp_spmd(ctx, f7(), src, t), &i3, &sssp, |a, b| a == b))),
        ("cdlp", Box::new(move |ctx, t| own_block(cdlp_spmd(ctx, f3(), 10, t), &i4, &cdlp, |a, b| a == b))),
        ("lcc", Box::new(move |ctx, t| own_block(lcc_spmd(ctx, f4(), t), &i5, &lcc, close))),
        ("pr", Box::new(move |ctx, t| {
            let r = pagerank_spmd(ctx, f5(), &PageRankConfig { threads: t, ..PageRankConfig::fixed_iterations(30) }).map_err(|e| e.to_string())?;
            if r.iterations != 30 {
                return Err(format!("{} iterations run, 30 asked", r.iterations));
            }
            for (&id, &x) in r.ids.iter().zip(&r.ranks) {
                let v = i6.binary_search(&id).map_err(|_| format!("id {id} is no vertex"))?;
                if !close(x, pr[v]) {
                    return Err(format!("vertex {id}: {x}, want {}", pr[v]));
                }
            }
            Ok(r.ids.len())
        })),
        ("absent source", Box::new(move |ctx, t| match bfs_spmd(ctx, f6(), 0, t) {
            Err(e) if e.to_string().contains("the BFS source 0 is not a vertex of the graph") => Ok(0),
            other => Err(format!("want the absent-source error, got {:?}", other.map(|r| r.values))),
        })),
    ];

    let mut tally = MpiTally::new(rank as usize);
    for (name, kernel) in &cases {
        let expect = if *name == "absent source" { 0 } else { n };
        let outcome = mpi.check(expect, kernel);
        mpi.world.barrier().unwrap();
        let label = format!("graph kernel {name} {engine} (W={}, {} processes)", mpi.world.nprocs(), mpi.world.total_procs());
        tally.record(&label, outcome);
    }
    drop(dir);
    tally.finish()
}
