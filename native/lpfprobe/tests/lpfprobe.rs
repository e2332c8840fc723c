//! `lpfprobe --quick` runs, writes a cost table that parses, and `probe()` then answers
//! from it. Its own test binary: it sets `LPF_PROBE_DIR`, and the table is read once
//! per process.

use lpf::machine::CostTable;
use lpf::{Args, Context, Root, SYNC_DEFAULT};
use std::path::Path;
use std::process::Command;

fn run_probe(dir: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lpfprobe"))
        .args(["--quick"])
        .args(extra)
        .env("LPF_PROBE_DIR", dir)
        .output()
        .expect("start lpfprobe");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "lpfprobe {extra:?} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn quick_probe_writes_a_table_that_probe_reads() {
    let dir = std::env::temp_dir().join(format!("lpfprobe-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let out = run_probe(&dir, &["-p", "2", "--save"]);
    for needle in ["g·r", "l·r/w", "memcpy r", "1048576", "cost table written"] {
        assert!(out.contains(needle), "output lacks {needle:?}:\n{out}");
    }
    // A second run at another p, also to a file of our choosing: rows merge.
    let other = dir.join("sub").join("other.txt");
    run_probe(&dir, &["-p", "1", "--save", "--output", other.to_str().unwrap()]);
    let other = CostTable::parse(&std::fs::read_to_string(&other).unwrap()).unwrap();
    assert!(other.points().iter().all(|c| c.nprocs == 1) && other.points().len() == 4);

    let text = std::fs::read_to_string(dir.join("shm.txt")).expect("the saved table");
    let table = CostTable::parse(&text).expect("the table parses");
    for p in [1, 2] {
        let sizes: Vec<usize> = table.points().iter().filter(|c| c.nprocs == p).map(|c| c.msg_size).collect();
        assert_eq!(sizes, [8, 64, 1024, 1 << 20], "rows for p = {p}:\n{text}");
    }
    assert!(table.points().iter().all(|c| c.g > 0.0 && c.l > 0.0 && c.g < 1e-3 && c.l < 1.0), "{text}");

    // probe() inside a section and from the root answers from that file.
    std::env::set_var("LPF_PROBE_DIR", &dir);
    Root::with_max_procs(2)
        .exec(2, &|ctx: &mut Context, _| {
            let m = ctx.probe().unwrap();
            for size in [8, 64, 1024, 1 << 20, 300] {
                let (g, l) = table.lookup(2, size);
                assert_eq!((m.g(2, size, SYNC_DEFAULT), m.l(2, size, SYNC_DEFAULT)), (g, l));
            }
            assert_eq!(m.g(1, 64, SYNC_DEFAULT), table.lookup(1, 64).0);
        }, Args::none())
        .unwrap();
    assert_eq!(Root::with_max_procs(2).probe().unwrap().table(), &table);

    let bad = Command::new(env!("CARGO_BIN_EXE_lpfprobe")).args(["--engine", "nope"]).output().unwrap();
    assert!(!bad.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}
