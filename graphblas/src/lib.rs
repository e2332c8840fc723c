//! GraphBLAS-style sparse linear algebra and graph kernels (the LDBC Graphalytics
//! six: BFS, PageRank, WCC, CDLP, LCC, SSSP), process-local and distributed over LPF
//! (Lightweight Parallel Foundations, Suijlen & Yzelman). The process-local code is
//! shaped so that the distributed version only *adds communication* between
//! existing steps:
//!
//! * [`io`] readers parse a byte range of a file, so each process parses only
//!   its own part before entries are routed to their owners;
//! * [`kron`] generates any contiguous chunk of the R-MAT edge list
//!   independently and deterministically;
//! * [`pagerank`](mod@algorithms::pagerank) splits an iteration into a local block step that returns
//!   partial sums (the future all-reduce) and reads a full contribution
//!   vector (the future all-gather).
//!
//! The distributed layer is [`dist`]: PageRank over LPF with a 1D row
//! distribution, parallel input and the SPMD entry point
//! [`dist::pagerank_spmd`] (see `docs/pagerank.md`).
//!
//! Module map: [`algebra`] (scalars, monoids, semirings), [`algorithms`] (BFS, PageRank, WCC,
//! SSSP, CDLP and LCC over the algebra, one module per kernel; their distributed versions are in [`dist`]), [`matrix`]
//! (`Matrix`, `Coo`, duplicate policies), [`vector`] (`Vector`, `Mask`),
//! [`ops`] (`mxv`, `vxm`, `mxm_masked`, `ewise_add`, `ewise_mult`, `apply`, `select_matrix`,
//! reductions),
//! [`parallel`] (thread-count-explicit helpers, no global pool), [`prng`]
//! (counter-based hash, xoshiro), [`reference`](mod@reference) (slow, obviously correct
//! PageRank used as a test oracle), [`settings`] (graphblas's `GBPR_*` variables), [`bandwidth`] (streaming bandwidth probe
//! for the benchmark's floor model), [`cli`] (what the `graph` program and the `pagerank`
//! program of the `graphblas-pagerank` crate share).

pub mod algebra;
pub mod algorithms;
pub mod bandwidth;
pub mod cli;
pub mod dist;
pub mod error;
pub mod io;
pub mod kron;
pub mod matrix;
pub mod ops;
pub mod parallel;
pub mod prng;
pub mod reference;
pub mod settings;
pub mod vector;

pub use algebra::{
    Any, BinaryOp, Cast, First, LAnd, LOr, Max, Min, Monoid, Number, Pair, Plus, Scalar, Second, Semiring, SemiringOf, Times,
    ANY_PAIR, LOR_LAND, MAX_TIMES, MIN_PLUS, MIN_SECOND, PLUS_FIRST, PLUS_PAIR, PLUS_SECOND, PLUS_TIMES,
};
pub use error::{GrbError, GrbResult};
pub use matrix::{Compressed, Coo, DupPolicy, Matrix};
pub use ops::{
    apply, apply_matrix, assign_indices, assign_scalar, ewise_add, ewise_add_matrix, ewise_mult, extract, mxm_masked, mxv, reduce_matrix, reduce_to_vector,
    pattern_with, reduce_vector, select_matrix, triangle_sums, vxm, Accum, Descriptor, Direction,
};
pub use algorithms::pagerank::{pagerank, pagerank_graphblas, pagerank_pull, PageRankConfig, PageRankResult, PullGraph};
pub use vector::{Mask, Vector};
