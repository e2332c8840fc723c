//! Graph kernels written against the algebra ([`crate::ops`] over
//! [`crate::algebra`] semirings), with the LDBC Graphalytics semantics
//! (`docs/graph-kernels.md`). Each module holds the process-local kernel; the
//! distributed versions (in [`crate::dist`]) run the same algebra on each process's
//! block of rows and add only the communication. BFS is a native level loop over the
//! rows of a block (`bfs::search`), which the distributed BFS runs per process.

pub mod bfs;
pub mod cdlp;
pub mod lcc;
pub mod pagerank;
pub mod sssp;
pub mod wcc;

pub use bfs::{bfs, UNREACHABLE};
pub use cdlp::cdlp;
pub use lcc::lcc;
pub use sssp::{sssp, sssp_with_delta};
pub use wcc::wcc;
