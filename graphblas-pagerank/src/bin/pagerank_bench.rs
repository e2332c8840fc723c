//! Micro benchmark: Graph500 Kronecker graph + PageRank, with a streaming
//! bandwidth probe measured in the same run for the floor model
//! (12 bytes per edge + 32 bytes per vertex per iteration).
//!
//! Usage: `pagerank_bench [--scale 20] [--seed 1] [--threads 1,2] [--runs 5] [--io DIR]`
//!
//! With `--io DIR`, also writes the generated edges as MatrixMarket and as
//! the binary format into DIR and times reading them back (whole file, and
//! as two byte ranges parsed by two threads, as two processes would).

use graphblas::bandwidth::{measure, pagerank_floor_bytes};
use graphblas::io::{
    file_len, read_binary_header, read_binary_range, read_mtx_header, read_mtx_range, split_byte_ranges, write_binary,
};
use graphblas::parallel::run_blocks;
use graphblas::Coo;
use std::io::Write;
use std::path::Path;
use graphblas::kron::{matrix_from_edges_no_loops, KronParams};
use graphblas::algorithms::pagerank::{pagerank_pull, PageRankConfig, PullGraph};
use std::time::Instant;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("bad value for {name}")))
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scale: u32 = arg(&args, "--scale", 20);
    let seed: u64 = arg(&args, "--seed", 1);
    let runs: usize = arg(&args, "--runs", 5);
    let io_dir: String = arg(&args, "--io", String::new());
    let threads: Vec<usize> =
        arg(&args, "--threads", "1,2".to_string()).split(',').map(|t| t.parse().expect("bad --threads")).collect();
    let gen_threads = *threads.iter().max().unwrap_or(&1);

    let params = KronParams::graph500(scale, seed);
    let t = Instant::now();
    let perm = params.permutation();
    let coo = params.generate(0..params.num_edges(), &perm, gen_threads).expect("generate");
    let t_gen = t.elapsed().as_secs_f64();
    if !io_dir.is_empty() {
        io_benchmark(Path::new(&io_dir), &coo);
    }
    let t = Instant::now();
    let a = matrix_from_edges_no_loops(coo).expect("build");
    let t_build = t.elapsed().as_secs_f64();
    let g = PullGraph::from_matrix(&a).expect("pull graph");
    let (n, nnz) = (g.n(), g.nnz());
    let dangling = a.row_counts().iter().filter(|&&d| d == 0).count();
    drop(a);
    println!("kron{scale}: n = {n}, generated edges = {}, nnz after dedup/loop removal = {nnz}, dangling = {dangling}", params.num_edges());
    println!("generate: {t_gen:.3} s ({gen_threads} threads), build CSR+CSC: {t_build:.3} s");

    let floor_bytes = pagerank_floor_bytes(n, nnz);
    println!("floor model: {:.1} MB per iteration", floor_bytes / 1e6);

    let mut reference: Option<Vec<f64>> = None;
    for &th in &threads {
        let bw = measure(512 << 20, th, 3).expect("bandwidth threads");
        let mut times = Vec::new();
        let mut iters = 0;
        let mut residual = 0.0;
        for _ in 0..runs.max(1) {
            let r = pagerank_pull(&g, &PageRankConfig { threads: th, ..Default::default() }).expect("pagerank threads");
            times.push(r.iteration_seconds / r.iterations as f64);
            iters = r.iterations;
            residual = r.residual;
            let sum: f64 = r.ranks.iter().sum();
            assert!((sum - 1.0).abs() < 1e-9, "ranks sum to {sum}");
            match &reference {
                None => reference = Some(r.ranks),
                Some(r0) => {
                    let diff = r0.iter().zip(&r.ranks).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
                    assert!(diff < 1e-12, "thread counts disagree by {diff}");
                }
            }
        }
        times.sort_by(f64::total_cmp);
        let best = times[0];
        let median = times[times.len() / 2];
        println!(
            "threads {th}: bandwidth read {:.2} GB/s, triad {:.2} GB/s | pagerank {iters} iterations (residual {residual:.2e}), \
             best {best:.5} s/iteration (median of {} runs {median:.5}), {:.2} GB/s effective, \
             floor {:.5} s/iteration (at read bandwidth), {:.2}x floor",
            bw.read_gbs,
            bw.triad_gbs,
            times.len(),
            floor_bytes / best / 1e9,
            floor_bytes / (bw.read_gbs * 1e9),
            best / (floor_bytes / (bw.read_gbs * 1e9)),
        );
    }
}

/// Writes `coo` as MatrixMarket and binary files and times reading them.
fn io_benchmark(dir: &Path, coo: &Coo<f64>) {
    std::fs::create_dir_all(dir).expect("create io dir");
    let mtx = dir.join("kron.mtx");
    let bin = dir.join("kron.bin");
    let t = Instant::now();
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&mtx).expect("create mtx"));
        writeln!(w, "%%MatrixMarket matrix coordinate pattern general\n% R-MAT edges").unwrap();
        writeln!(w, "{} {} {}", coo.nrows, coo.ncols, coo.len()).unwrap();
        for k in 0..coo.len() {
            writeln!(w, "{} {}", coo.rows[k] + 1, coo.cols[k] + 1).unwrap();
        }
    }
    write_binary(&bin, coo).expect("write binary");
    println!("io: wrote {:.0} MB MatrixMarket + {:.0} MB binary in {:.2} s",
        file_len(&mtx).unwrap() as f64 / 1e6, file_len(&bin).unwrap() as f64 / 1e6, t.elapsed().as_secs_f64());
    for parts in [1usize, 2] {
        let t = Instant::now();
        let h = read_mtx_header(&mtx).expect("header");
        let ranges = split_byte_ranges(file_len(&mtx).unwrap(), parts);
        let total: u64 = run_blocks(ranges, |_, (s, e)| read_mtx_range(&mtx, &h, s, e).expect("read").entries).expect("reader threads").iter().sum();
        assert_eq!(total, coo.len() as u64);
        let dt = t.elapsed().as_secs_f64();
        println!("io: MatrixMarket read with {parts} range(s)/thread(s): {dt:.3} s ({:.0} MB/s)", file_len(&mtx).unwrap() as f64 / dt / 1e6);
        let t = Instant::now();
        let h = read_binary_header(&bin).expect("header");
        let ranges = split_byte_ranges(file_len(&bin).unwrap(), parts);
        let total: usize = run_blocks(ranges, |_, (s, e)| read_binary_range(&bin, &h, s, e).expect("read").len()).expect("reader threads").iter().sum();
        assert_eq!(total, coo.len());
        println!("io: binary read with {parts} range(s)/thread(s): {:.3} s", t.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_file(&mtx);
    let _ = std::fs::remove_file(&bin);
}
