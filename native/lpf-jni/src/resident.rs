//! Resident graphs: the parts of loaded graphs (`graphblas::dist::Graph`) that this OS
//! process keeps between LPF jobs, so that a later `graph-call` runs a kernel on a part
//! without reading or numbering anything (docs/spark.md, "Resident graphs").
//!
//! A part is kept under the graph's id (16 bytes the driver chose at random for one load),
//! the pid of the LPF process that loaded it and the job's process count `p`: a later
//! call finds it only as the same pid of a job of the same `p`, since the part holds that
//! process's block of the vertices and of the id dictionary. A `Graph` is plain memory,
//! not tied to the LPF context that loaded it; calls share a part read-only (an `Arc`),
//! so that a drop while a call runs frees the part when that call ends.

use graphblas::dist::Graph;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A resident graph's id.
pub(crate) type GraphId = [u8; 16];

struct Part {
    p: u32,
    graph: Arc<Graph>,
    bytes: u64,
}

/// Every kept part of this process, by (graph id, pid).
fn table() -> MutexGuard<'static, HashMap<(GraphId, u32), Part>> {
    static KEPT: OnceLock<Mutex<HashMap<(GraphId, u32), Part>>> = OnceLock::new();
    // A panic while the lock was held cannot leave the map half-changed (each change is
    // one insert or remove): a poisoned lock is used as it is.
    KEPT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps `graph` as part `pid` of `p` of the graph `id` (replacing an earlier one);
/// returns the part and its native bytes.
pub(crate) fn keep(id: GraphId, pid: u32, p: u32, graph: Graph) -> (Arc<Graph>, u64) {
    let bytes = graph.native_bytes() as u64;
    let graph = Arc::new(graph);
    table().insert((id, pid), Part { p, graph: Arc::clone(&graph), bytes });
    (graph, bytes)
}

/// Part `pid` of `p` of the graph `id`, with its bytes, if this process keeps it.
pub(crate) fn find(id: &GraphId, pid: u32, p: u32) -> Option<(Arc<Graph>, u64)> {
    table().get(&(*id, pid)).filter(|part| part.p == p).map(|part| (Arc::clone(&part.graph), part.bytes))
}

/// Drops every part of the graph `id` this process keeps; the bytes they held.
pub(crate) fn drop_graph(id: &GraphId) -> u64 {
    let mut t = table();
    let mine: Vec<(GraphId, u32)> = t.keys().filter(|(g, _)| g == id).copied().collect();
    mine.iter().filter_map(|k| t.remove(k)).map(|part| part.bytes).sum()
}

/// One line per kept part: graph id (hex), pid, p, bytes; sorted.
pub(crate) fn list() -> String {
    let t = table();
    let mut lines: Vec<String> = t.iter().map(|((id, pid), part)| format!("{} {pid} {} {}", hex(id), part.p, part.bytes)).collect();
    lines.sort();
    lines.join("\n")
}

pub(crate) fn hex(id: &GraphId) -> String {
    id.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The id written as 32 hex digits, or what is wrong with it.
pub(crate) fn parse_hex(text: &str) -> Result<GraphId, String> {
    let bad = || format!("a resident graph's id is 32 hex digits, not {text:?}");
    if text.len() != 32 || !text.is_ascii() {
        return Err(bad());
    }
    let mut id = [0u8; 16];
    for (k, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * k..2 * k + 2], 16).map_err(|_| bad())?;
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use graphblas::dist::{KeyedEdges, VertexIds};

    fn small_graph() -> Graph {
        let out = crate::on_shm_threads(vec![vec![0u8]], |ctx, _| {
            let edges = KeyedEdges { ends: VertexIds::Integral(vec![1, 2, 2, 3]), vertices: VertexIds::Integral(vec![9]), weights: None };
            Graph::load(ctx, edges, 1).map(|g| {
                keep([7; 16], 0, 1, g);
                Vec::new()
            })
            .map_err(|e| e.to_string())
        });
        assert!(out.iter().all(|r| r.is_ok()), "{out:?}");
        let (g, _) = find(&[7; 16], 0, 1).expect("kept");
        drop_graph(&[7; 16]);
        Arc::try_unwrap(g).ok().expect("the only reference")
    }

    #[test]
    fn parts_are_found_by_id_pid_and_p_and_dropped_by_id() {
        let (id, other) = ([1u8; 16], [2u8; 16]);
        let (_, bytes) = keep(id, 0, 2, small_graph());
        keep(id, 1, 2, small_graph());
        keep(other, 0, 2, small_graph());
        assert!(bytes > 0);
        assert!(find(&id, 0, 2).is_some() && find(&id, 1, 2).is_some());
        assert!(find(&id, 0, 3).is_none(), "another p is another group");
        assert!(find(&id, 2, 2).is_none());
        let listed = list();
        assert!(listed.contains(&format!("{} 1 2 {bytes}", hex(&id))), "{listed}");
        let (held, _) = find(&id, 0, 2).unwrap();
        assert_eq!(drop_graph(&id), 2 * bytes);
        assert!(find(&id, 0, 2).is_none() && find(&other, 0, 2).is_some());
        assert_eq!(held.n(), 4, "a part in use outlives its drop");
        assert_eq!(drop_graph(&id), 0);
        drop_graph(&other);
    }

    #[test]
    fn ids_cross_as_32_hex_digits() {
        let id: GraphId = [0, 1, 0xab, 0xff, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
        assert_eq!(parse_hex(&hex(&id)).unwrap(), id);
        assert!(parse_hex("00").unwrap_err().contains("32 hex digits"));
        assert!(parse_hex(&"g".repeat(32)).is_err());
    }
}
