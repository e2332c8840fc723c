//! Bad input at p = 1 and p = 3: every process returns the same error naming the file
//! and the line, nobody hangs, and no output file (partial or temp) is left behind.

mod common;

use common::*;
use graphblas::dist::{pagerank_spmd, write_ranks_spmd, DistError, Format, Input};
use graphblas::io::InputErrorKind;
use graphblas::PageRankConfig;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Runs PageRank (and, if it succeeded, the output writer) on `path`; returns each
/// process's error.
fn errors(p: u32, path: &Path, format: Format, out: Option<PathBuf>) -> Vec<DistError> {
    let path = path.to_path_buf();
    let mut errs = Vec::new();
    for (engine, launch) in launchers() {
        let (path2, out) = (path.clone(), out.clone());
        let res = run_all(launch, p, LIMIT, move |ctx| {
            let r = pagerank_spmd(ctx, Input::File { path: path2.clone(), format }, &PageRankConfig::default());
            match (r, &out) {
                (Ok(r), Some(o)) => write_ranks_spmd(ctx, &r, o).and(Ok(())),
                (r, _) => r.map(|_| ()),
            }
        });
        for (q, r) in res.into_iter().enumerate() {
            match r {
                Err(e) => errs.push(e),
                Ok(()) => panic!("[{engine} p={p}] process {q} succeeded on bad input {}", path.display()),
            }
        }
    }
    errs
}

/// Checks that every process reports the same input error at `line` (None: no line)
/// of the kind given, and that the message names the file.
fn expect(p: u32, path: &Path, format: Format, kind: InputErrorKind, line: Option<u64>) {
    let errs = errors(p, path, format, None);
    assert_eq!(errs.len(), p as usize * launchers().len());
    for e in &errs {
        let text = e.to_string();
        assert!(text.starts_with(&path.display().to_string()), "p={p}: {text}");
        match e {
            DistError::Input(ie) => {
                assert_eq!((ie.kind, ie.line), (kind, line), "p={p}: {text}");
                if let Some(l) = line {
                    assert!(text.contains(&format!(":{l}: ")), "p={p}: {text}");
                }
            }
            other => panic!("p={p}: expected an input error, got {other:?}"),
        }
        assert_eq!(e, &errs[0], "processes disagree");
    }
}

/// A valid MatrixMarket body of `k` entry lines (line numbers start at 3).
fn mtx_lines(n: usize, k: usize) -> Vec<String> {
    (0..k).map(|i| format!("{} {}", i % n + 1, (i * 7 + 3) % n + 1)).collect()
}

fn mtx(n: usize, declared: usize, lines: &[String]) -> String {
    format!("%%MatrixMarket matrix coordinate pattern general\n{n} {n} {declared}\n{}\n", lines.join("\n"))
}

#[test]
fn missing_file() {
    let dir = TempDir::new("missing");
    for p in [1, 3] {
        for (name, f) in [("nope.mtx", Format::Auto), ("nope.edges", Format::Auto), ("nope.bin", Format::Bin)] {
            expect(p, &dir.path(name), f, InputErrorKind::Io, None);
        }
    }
}

#[test]
fn malformed_headers() {
    let dir = TempDir::new("hdr");
    let no_banner = dir.file("a.mtx", b"3 3 1\n1 2\n");
    let short_size = dir.file("b.mtx", b"%%MatrixMarket matrix coordinate pattern general\n% c\n3 3\n1 2\n");
    let not_square = dir.file("c.mtx", b"%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n");
    let bad_magic = dir.file("d.bin", b"NOTABINARYFILE..........................................");
    for p in [1, 3] {
        expect(p, &no_banner, Format::Auto, InputErrorKind::Header, Some(1));
        expect(p, &short_size, Format::Auto, InputErrorKind::Header, Some(3));
        expect(p, &not_square, Format::Auto, InputErrorKind::Header, Some(2));
        expect(p, &bad_magic, Format::Auto, InputErrorKind::Header, None);
    }
}

#[test]
fn wrong_entry_count() {
    let dir = TempDir::new("count");
    let lines = mtx_lines(20, 200);
    // Too few entries: named at the line past the end; too many: at the size line.
    let few = dir.file("few.mtx", mtx(20, 205, &lines).as_bytes());
    let many = dir.file("many.mtx", mtx(20, 150, &lines).as_bytes());
    for p in [1, 3] {
        expect(p, &few, Format::Auto, InputErrorKind::EntryCount, Some(203));
        expect(p, &many, Format::Auto, InputErrorKind::EntryCount, Some(2));
    }
}

#[test]
fn bad_lines_are_named_wherever_they_are() {
    let dir = TempDir::new("lines");
    for (at, bad, kind) in [
        (10usize, "3 21", InputErrorKind::IndexOutOfRange),
        (150, "0 4", InputErrorKind::IndexOutOfRange),
        (190, "7 x", InputErrorKind::NotNumeric),
        (100, "7", InputErrorKind::Malformed),
        (60, "1 2 3", InputErrorKind::Malformed),
    ] {
        let mut lines = mtx_lines(20, 200);
        lines[at] = bad.to_string();
        let path = dir.file(&format!("bad{at}.mtx"), mtx(20, 200, &lines).as_bytes());
        for p in [1, 3] {
            expect(p, &path, Format::Auto, kind, Some(at as u64 + 3));
        }
    }
    // Two bad lines in different processes' ranges: everyone reports the first one.
    let mut lines = mtx_lines(20, 200);
    lines[40] = "1 y".into();
    lines[180] = "99 1".into();
    let path = dir.file("two.mtx", mtx(20, 200, &lines).as_bytes());
    for p in [1, 3] {
        expect(p, &path, Format::Auto, InputErrorKind::NotNumeric, Some(43));
    }
    // Edge lists: a non-numeric field near the end (in the last process's range).
    let mut text = String::new();
    for i in 0..300 {
        text += &if i == 250 { "12 -3\n".to_string() } else { format!("{} {}\n", i % 17, i % 13) };
    }
    let path = dir.file("bad.edges", text.as_bytes());
    for p in [1, 3] {
        expect(p, &path, Format::Auto, InputErrorKind::NotNumeric, Some(251));
    }
}

#[test]
fn truncated_files() {
    let dir = TempDir::new("trunc");
    let full = mtx(20, 200, &mtx_lines(20, 200));
    // Cut in the middle of the last line: "i" without "j".
    let cut = full.trim_end().rsplit_once(' ').unwrap().0.to_string();
    let path = dir.file("cut.mtx", cut.as_bytes());
    let g = random_graph(3, 30, 100);
    let bin = dir.path("g.bin");
    g.binary(&bin);
    let bytes = std::fs::read(&bin).unwrap();
    let tbin = dir.file("t.bin", &bytes[..bytes.len() - 12]);
    for p in [1, 3] {
        expect(p, &path, Format::Auto, InputErrorKind::Malformed, Some(202));
        expect(p, &tbin, Format::Auto, InputErrorKind::Truncated, None);
    }
    // Binary record with an index out of range.
    let mut bad = bytes.clone();
    let rec = 40 + 8 * 77;
    bad[rec..rec + 4].copy_from_slice(&1000u32.to_le_bytes());
    let path = dir.file("oob.bin", &bad);
    for p in [1, 3] {
        let errs = errors(p, &path, Format::Auto, None);
        for e in &errs {
            assert!(e.to_string().contains("record 77"), "{e}");
            assert_eq!(e, &errs[0]);
        }
    }
}

#[test]
fn failed_runs_leave_no_output() {
    let dir = TempDir::new("noout");
    let mut lines = mtx_lines(20, 200);
    lines[170] = "5 five".into();
    let bad = dir.file("bad.mtx", mtx(20, 200, &lines).as_bytes());
    let out = dir.path("ranks.txt");
    for p in [1, 3] {
        let errs = errors(p, &bad, Format::Auto, Some(out.clone()));
        assert!(errs.iter().all(|e| e.to_string().contains(":173: ")), "{:?}", errs[0]);
        assert_eq!(dir.listing(), vec!["bad.mtx".to_string()], "p={p}");
    }
    // An output path in a directory that does not exist: every process fails the same
    // way, and nothing is left anywhere.
    let good = dir.file("good.mtx", mtx(20, 200, &mtx_lines(20, 200)).as_bytes());
    let nowhere = dir.path("no/such/dir/ranks.txt");
    for p in [1, 3] {
        let errs = errors(p, &good, Format::Auto, Some(nowhere.clone()));
        for e in &errs {
            assert!(matches!(e, DistError::Output { .. }), "{e:?}");
            assert!(e.to_string().contains("no/such/dir/ranks.txt"), "{e}");
            assert_eq!(e, &errs[0]);
        }
        assert_eq!(dir.listing(), vec!["bad.mtx".to_string(), "good.mtx".to_string()]);
    }
    // And a successful write is complete and alone.
    let ok = dir.path("ranks.txt");
    for p in [1, 3] {
        let path = good.clone();
        let o = ok.clone();
        let res = run_all(shm, p, LIMIT, move |ctx| {
            let r = pagerank_spmd(ctx, Input::file(path.clone()), &PageRankConfig::default()).unwrap();
            write_ranks_spmd(ctx, &r, &o)
        });
        assert!(res.iter().all(|r| r.is_ok()));
        let text = std::fs::read_to_string(&ok).unwrap();
        assert_eq!(text.lines().count(), 20);
        assert!(text.starts_with("1 "));
        assert_eq!(dir.listing(), vec!["bad.mtx".to_string(), "good.mtx".to_string(), "ranks.txt".to_string()]);
    }
}

/// A process that leaves the section instead of calling the kernel: the others' errors
/// are LPF's, with its reason, so a caller tells "a peer left" from bad input by
/// matching `Reason::PeerLeft`, not by reading the message.
#[test]
fn a_peer_that_left_is_told_by_its_reason() {
    for (engine, launch) in [("shm", shm as Launcher), ("tcp", tcp as Launcher)] {
        let errs = Mutex::new(Vec::new());
        let section = launch(3, &|ctx| {
            if ctx.pid() == 1 {
                return;
            }
            let edges = vec![(0, 1), (1, 2), (2, 0)];
            let r = pagerank_spmd(ctx, Input::Edges(edges), &PageRankConfig::default());
            errs.lock().unwrap().push((ctx.pid(), r.err()));
        });
        assert!(section.is_err(), "[{engine}] a process left: the section fails");
        let errs = errs.into_inner().unwrap();
        assert_eq!(errs.len(), 2, "[{engine}]");
        for (pid, e) in errs {
            match e {
                Some(DistError::Lpf(e)) => {
                    assert!(matches!(e.reason(), lpf::Reason::PeerLeft { pid: who } if who != Some(pid)), "[{engine}] pid {pid}: {:?}: {e}", e.reason());
                    assert_eq!(e.kind(), lpf::ErrorKind::Fatal, "[{engine}] pid {pid}: {e}");
                }
                other => panic!("[{engine}] pid {pid}: expected LPF's error, got {other:?}"),
            }
        }
    }
}
