//! Flat against hierarchical collectives on the hybrid engine over loopback: allreduce
//! (f64 sums) and broadcast of a few sizes on 2 OS processes x 2 threads (and other
//! layouts given on the command line), each policy timed in alternation, medians
//! reported. Not a test: run it alone, in release mode.
//!
//! ```text
//! cargo run --release -p lpf --example hier_bench [-- RUNS [LAYOUT ...]]   # LAYOUT e.g. 2,2 or 3,3,2
//! ```

use lpf::collectives::{Algorithm, Collective, Collectives, Config, CostModel, Hierarchy};
use lpf::tcp::{MetaAlgo, TcpConfig, TcpInit};
use lpf::{Args, Context, Pid, SYNC_DEFAULT};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

/// Runs `spmd` on TCP processes (threads here, each with its own init) of `nodes[i]`
/// LPF processes each.
fn run(nodes: &[Pid], spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync)) {
    let n = nodes.len() as Pid;
    let cfg = |pid: Pid, port: u16| {
        TcpConfig::new("127.0.0.1", port, pid, n).threads(nodes[pid as usize]).hybrid(true).meta(MetaAlgo::Direct)
    };
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        for pid in 1..n {
            let rx = &rx;
            s.spawn(move || {
                let port = rx.lock().unwrap().recv().unwrap();
                TcpInit::new(cfg(pid, port)).unwrap().hook(spmd, Args::none()).unwrap();
            });
        }
        let p = TcpInit::prepare(cfg(0, 0)).unwrap();
        for _ in 1..n {
            tx.send(p.bound_port()).unwrap();
        }
        p.join().unwrap().hook(spmd, Args::none()).unwrap();
    });
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = v.len();
    if k % 2 == 1 {
        v[k / 2]
    } else {
        (v[k / 2 - 1] + v[k / 2]) / 2.0
    }
}

fn bench(layout: &[Pid], runs: usize) {
    const SIZES: [usize; 3] = [2, 8 << 10, 128 << 10]; // f64 elements: 16 B, 64 KiB, 1 MiB
    let report = Mutex::new(String::new());
    run(layout, &|ctx, _| {
        let me = ctx.pid() as usize;
        let model = CostModel::from_probe(ctx).unwrap();
        let mut c = Collectives::with_config(ctx, &Config { cost: Some(model), ..Config::new(SIZES[2] * 8) }).unwrap();
        let mut out = format!("layout {layout:?}, nodes {:?}, cost model {model:?}\n", c.nodes());
        for &ne in &SIZES {
            for kind in [Collective::Allreduce, Collective::Broadcast] {
                let auto = c.algorithm(kind, ne * 8);
                let policies = [Hierarchy::Never, Hierarchy::Always];
                let mut algs = [Algorithm::Local; 2];
                let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
                let reps = if ne > 1000 { runs.div_ceil(4).max(10) } else { runs };
                for rep in 0..reps + 3 {
                    for (i, &h) in policies.iter().enumerate() {
                        c.set_hierarchy(h);
                        algs[i] = c.algorithm(kind, ne * 8);
                        let mut data: Vec<f64> = (0..ne).map(|j| (me * ne + j) as f64 * 0.5).collect();
                        ctx.sync(SYNC_DEFAULT).unwrap();
                        let t = Instant::now();
                        match kind {
                            Collective::Allreduce => c.allreduce(ctx, &mut data, |a, b| *a += *b).unwrap(),
                            _ => c.broadcast(ctx, 0, &mut data).unwrap(),
                        }
                        let dt = t.elapsed().as_secs_f64();
                        if rep >= 3 {
                            times[i].push(dt);
                        }
                    }
                }
                // Pid 0's view; the slowest process would be the fair BSP time, but the
                // sync after the call puts everyone in step, so they differ little.
                let (f, h) = (median(&mut times[0]), median(&mut times[1]));
                out += &format!(
                    "{kind:?} {:>8} B: flat {:?} {:9.1} us | hierarchical {:?} {:9.1} us | ratio {:.2} | auto picks {:?} | predicted flat {:.1} us hier {:.1} us ({} runs)\n",
                    ne * 8,
                    algs[0],
                    f * 1e6,
                    algs[1],
                    h * 1e6,
                    h / f,
                    auto,
                    c.predicted_node_cost(kind, algs[0], ne * 8) * 1e6,
                    c.predicted_node_cost(kind, algs[1], ne * 8) * 1e6,
                    reps
                );
                c.set_hierarchy(Hierarchy::Auto);
            }
        }
        if me == 0 {
            *report.lock().unwrap() = out;
        }
    });
    print!("{}", report.into_inner().unwrap());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = args.first().and_then(|a| a.parse().ok()).unwrap_or(201);
    let layouts: Vec<Vec<Pid>> = if args.len() > 1 {
        args[1..].iter().map(|l| l.split(',').map(|k| k.parse().unwrap()).collect()).collect()
    } else {
        vec![vec![2, 2]]
    };
    for l in layouts {
        bench(&l, runs);
    }
}
