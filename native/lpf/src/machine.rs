//! Machine parameters for `probe`: p, free_p, and the BSP cost functions g and l.
//!
//! g and l come from a table measured by the `lpfprobe` tool and stored in a file; a
//! lookup is O(1) in the number of processes and interpolates log-linearly in the
//! message size. Without a table, conservative estimates are returned (never zero).

use crate::types::{Pid, SyncAttr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// One measured point: at `nprocs` processes and messages of `msg_size` bytes, a
/// superstep costs `g` seconds per byte of its h-relation plus `l` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostPoint {
    pub nprocs: Pid,
    pub msg_size: usize,
    pub g: f64,
    pub l: f64,
}

/// The cost table of one engine, sorted by (nprocs, msg_size).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostTable {
    points: Vec<CostPoint>,
}

/// Fallback when nothing was measured: 1 GB/s and 100 us, safe upper-side estimates.
const FALLBACK_G: f64 = 1e-9;
const FALLBACK_L: f64 = 1e-4;

impl CostTable {
    pub fn new(mut points: Vec<CostPoint>) -> Self {
        points.retain(|c| c.g > 0.0 && c.l > 0.0 && c.g.is_finite() && c.l.is_finite());
        points.sort_by_key(|c| (c.nprocs, c.msg_size));
        CostTable { points }
    }

    pub fn points(&self) -> &[CostPoint] {
        &self.points
    }

    /// Parses the text format written by `lpfprobe`: lines `nprocs msg_size g l`,
    /// `#` comments.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut points = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("line {}: expected `nprocs msg_size g l`, found `{line}`", n + 1);
            if f.len() != 4 {
                return Err(bad());
            }
            points.push(CostPoint {
                nprocs: f[0].parse().map_err(|_| bad())?,
                msg_size: f[1].parse().map_err(|_| bad())?,
                g: f[2].parse().map_err(|_| bad())?,
                l: f[3].parse().map_err(|_| bad())?,
            });
        }
        Ok(CostTable::new(points))
    }

    pub fn to_text(&self, engine: &str) -> String {
        let mut s = format!("# LPF cost table for engine `{engine}`: nprocs msg_size g[s/byte] l[s]\n");
        for c in &self.points {
            s += &format!("{} {} {:e} {:e}\n", c.nprocs, c.msg_size, c.g, c.l);
        }
        s
    }

    /// (g, l) at `nprocs` processes for messages of at least `min_msg_size` bytes: the
    /// measured row of the nearest process count not below `nprocs` (else the largest),
    /// interpolated log-linearly between the two nearest message sizes.
    pub fn lookup(&self, nprocs: Pid, min_msg_size: usize) -> (f64, f64) {
        let Some(largest) = self.points.last() else { return (FALLBACK_G, FALLBACK_L) };
        let row_p = self.points.iter().map(|c| c.nprocs).find(|&q| q >= nprocs).unwrap_or(largest.nprocs);
        let row: Vec<&CostPoint> = self.points.iter().filter(|c| c.nprocs == row_p).collect();
        let size = min_msg_size.max(1) as f64;
        let (first, last) = (row[0], row[row.len() - 1]);
        if size <= first.msg_size.max(1) as f64 {
            return (first.g, first.l);
        }
        if size >= last.msg_size as f64 {
            return (last.g, last.l);
        }
        let i = row.iter().position(|c| c.msg_size as f64 >= size).unwrap();
        let (a, b) = (row[i - 1], row[i]);
        let t = (size.ln() - (a.msg_size.max(1) as f64).ln()) / ((b.msg_size as f64).ln() - (a.msg_size.max(1) as f64).ln());
        (a.g + t * (b.g - a.g), a.l + t * (b.l - a.l))
    }
}

/// Where the cost table of `engine` is stored: `$LPF_PROBE_DIR/<engine>.txt`, else
/// `$XDG_CACHE_HOME/lpf/`, else `$HOME/.cache/lpf/`.
pub fn table_path(engine: &str) -> Option<PathBuf> {
    // An invalid configuration names no directory here; the exec or probe that reads
    // the table has reported it.
    let dir = if let Some(d) = crate::config::Config::from_env().ok().and_then(|c| c.probe_dir) {
        d
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(d).join("lpf")
    } else {
        PathBuf::from(std::env::var_os("HOME")?).join(".cache").join("lpf")
    };
    Some(dir.join(format!("{engine}.txt")))
}

/// The table of `engine`, read once per process (so every later probe is O(1)); empty
/// when no file exists or it does not parse.
pub fn table_for(engine: &'static str) -> Arc<CostTable> {
    type Loaded = Vec<(&'static str, Arc<CostTable>)>;
    static TABLES: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| Mutex::new(Vec::new()));
    let mut tables = crate::lock::relock(tables);
    if let Some((_, t)) = tables.iter().find(|(e, _)| *e == engine) {
        return t.clone();
    }
    let table = table_path(engine)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| CostTable::parse(&text).ok())
        .unwrap_or_default();
    let table = Arc::new(table);
    tables.push((engine, table.clone()));
    table
}

/// What `probe` reports (`lpf_machine_t`).
#[derive(Clone, Debug)]
pub struct Machine {
    /// All processors of the runtime: the same from the root and at any nesting depth
    /// (under a launcher, the job's LPF processes).
    pub p: Pid,
    /// Processors available to a nested `exec` from this process (at least 1).
    pub free_p: Pid,
    engine: &'static str,
    pub(crate) table: Arc<CostTable>,
}

impl Machine {
    /// The parameters of `engine` (g and l from its cost table, [`table_for`]).
    pub fn new(p: Pid, free_p: Pid, engine: &'static str) -> Self {
        Machine { p, free_p: free_p.max(1), engine, table: table_for(engine) }
    }
    /// The engine whose cost table g and l come from (`shm`, `tcp`, ...).
    pub fn engine(&self) -> &'static str {
        self.engine
    }
    /// Seconds per byte of an h-relation among `p` processes whose messages are at least
    /// `min_msg_size` bytes.
    pub fn g(&self, p: Pid, min_msg_size: usize, _attr: SyncAttr) -> f64 {
        self.table.lookup(p, min_msg_size).0
    }
    /// Seconds of fixed cost of a superstep among `p` processes.
    pub fn l(&self, p: Pid, min_msg_size: usize, _attr: SyncAttr) -> f64 {
        self.table.lookup(p, min_msg_size).1
    }
    pub fn table(&self) -> &CostTable {
        &self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_interpolates_and_falls_back() {
        assert_eq!(CostTable::default().lookup(2, 8), (FALLBACK_G, FALLBACK_L));
        let t = CostTable::parse("# x\n2 8 4e-9 2e-6\n2 1024 1e-9 3e-6\n4 8 8e-9 5e-6\n").unwrap();
        assert_eq!(t.lookup(2, 1), (4e-9, 2e-6));
        assert_eq!(t.lookup(2, 1 << 20), (1e-9, 3e-6));
        let (g, _) = t.lookup(2, 90);
        assert!(g < 4e-9 && g > 1e-9);
        assert_eq!(t.lookup(3, 8), (8e-9, 5e-6));
        assert_eq!(t.lookup(64, 8), (8e-9, 5e-6));
        assert!(CostTable::parse("2 8 x 1").is_err());
        assert_eq!(CostTable::parse(&t.to_text("shm")).unwrap(), t);
    }
}
