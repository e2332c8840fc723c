//! g and l of the TCP and hybrid engines on loopback, measured with lpfprobe's bench module
//! (the paper's total exchange: g = (T(n_max) - T(2p)) / (n_max - 2p),
//! l = max{T(0), 2T(p) - T(2p)}), beside a plain TCP socket stream measured in the
//! same run. Not a test: run it alone, in release mode.
//!
//! ```text
//! cargo run --release -p lpf --example tcp_bench [-- --quick]
//! ```

// The probe's measurement code lives with lpfprobe; this example shares it.
#[path = "../src/bin/lpfprobe/bench.rs"]
#[allow(dead_code)] // the example uses the measurement, not the table output
mod probe_bench;
use probe_bench::{BenchConfig, Report};
use lpf::tcp::{MetaAlgo, TcpConfig, TcpInit};
use lpf::{Args, Context, Pid};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Runs `spmd` on TCP processes (threads here, each with its own init).
fn run(nodes: &[Pid], spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync)) {
    let n = nodes.len() as Pid;
    let cfg = |pid: Pid, port: u16| {
        TcpConfig::new("127.0.0.1", port, pid, n).threads(nodes[pid as usize]).hybrid(nodes.iter().any(|&k| k > 1)).meta(MetaAlgo::Direct)
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

fn measure(nodes: &[Pid], cfg: &BenchConfig) -> Report {
    let out = Mutex::new(None);
    run(nodes, &|ctx, _| {
        let r = probe_bench::measure(ctx, cfg).unwrap();
        if ctx.pid() == 0 {
            *out.lock().unwrap() = Some(r);
        }
    });
    out.into_inner().unwrap().unwrap()
}

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    a.set_nodelay(true).unwrap();
    b.set_nodelay(true).unwrap();
    (a, b)
}

/// Seconds per byte of a plain socket stream of 1 MiB writes: one direction, and both
/// directions at once (what a 2-process total exchange does).
fn raw_stream(total: usize) -> (f64, f64) {
    let buf = vec![7u8; 1 << 20];
    let one = |bidir: bool| {
        let (mut a, mut b) = pair();
        let t = Instant::now();
        std::thread::scope(|s| {
            let (mut a2, mut b2) = (a.try_clone().unwrap(), b.try_clone().unwrap());
            let buf = &buf;
            s.spawn(move || {
                for _ in 0..total >> 20 {
                    a.write_all(buf).unwrap();
                }
            });
            s.spawn(move || {
                let mut r = vec![0u8; 1 << 20];
                let mut left = total;
                while left > 0 {
                    left -= b.read(&mut r).unwrap();
                }
            });
            if bidir {
                s.spawn(move || {
                    for _ in 0..total >> 20 {
                        b2.write_all(buf).unwrap();
                    }
                });
                s.spawn(move || {
                    let mut r = vec![0u8; 1 << 20];
                    let mut left = total;
                    while left > 0 {
                        left -= a2.read(&mut r).unwrap();
                    }
                });
            }
        });
        t.elapsed().as_secs_f64() / total as f64
    };
    (one(false), one(true))
}

/// Half the round trip of one byte (ping-pong).
fn raw_latency(rounds: usize) -> f64 {
    let (mut a, mut b) = pair();
    let h = std::thread::spawn(move || {
        let mut x = [0u8];
        for _ in 0..rounds {
            b.read_exact(&mut x).unwrap();
            b.write_all(&x).unwrap();
        }
    });
    let mut x = [1u8];
    let t = Instant::now();
    for _ in 0..rounds {
        a.write_all(&x).unwrap();
        a.read_exact(&mut x).unwrap();
    }
    let d = t.elapsed().as_secs_f64() / rounds as f64 / 2.0;
    h.join().unwrap();
    d
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let small = BenchConfig { word_sizes: vec![8, 1024], total_bytes: if quick { 1 << 20 } else { 8 << 20 }, samples: if quick { 3 } else { 10 }, sample_time: 0.02 };
    let large = BenchConfig { word_sizes: vec![1 << 20], total_bytes: if quick { 16 << 20 } else { 128 << 20 }, samples: if quick { 3 } else { 10 }, sample_time: 0.02 };
    let (g_uni, g_bi) = raw_stream(if quick { 64 << 20 } else { 512 << 20 });
    let lat = raw_latency(if quick { 2000 } else { 20000 });
    println!("raw loopback TCP socket: one-way latency {:.1} us; stream 1 MiB writes: {:.2} GB/s one direction \
              (g = {:.3e} s/B), {:.2} GB/s each way when both directions run (g = {:.3e} s/B)",
        lat * 1e6, 1e-9 / g_uni, g_uni, 1e-9 / g_bi, g_bi);
    for (name, nodes) in [("tcp", vec![1, 1]), ("tcp", vec![1; 4]), ("hybrid", vec![1, 1]), ("hybrid", vec![2, 2])] {
        let p: Pid = nodes.iter().sum();
        let t = Instant::now();
        let rs = measure(&nodes, &small);
        let rl = measure(&nodes, &large);
        for (r, cfg) in [(&rs, &small), (&rl, &large)] {
            for w in &r.words {
                println!(
                    "{name:>6} p={p} nodes={:?} word {:>7} B: g = {:.3e} s/B ({:.2}x raw bidirectional stream), \
                     l = {:.1} us   [n_max = {} words, {} MiB per superstep]",
                    nodes, w.word, w.g.mean, w.g.mean / g_bi, w.l.mean * 1e6, w.n_max, cfg.total_bytes >> 20
                );
            }
        }
        let _ = Duration::ZERO;
        eprintln!("({name} p={p}: {:.1} s)", t.elapsed().as_secs_f64());
    }
}
