//! Error type of the in-memory GraphBLAS API (I/O errors live in
//! [`crate::io::InputError`], because those must carry a file and a line).

use std::fmt;

/// Errors returned by matrix/vector construction and operations.
#[derive(Clone, Debug, PartialEq)]
pub enum GrbError {
    /// Operand shapes do not conform, e.g. `mxv` with `A.ncols != u.len`.
    DimensionMismatch {
        /// Which operation detected it.
        op: &'static str,
        /// Human-readable description of the two sizes.
        detail: String,
    },
    /// A coordinate lies outside the declared shape.
    IndexOutOfBounds {
        /// Offending row (or vector index).
        row: u64,
        /// Offending column (0 for vectors).
        col: u64,
        /// Shape it was checked against.
        nrows: u64,
        /// Shape it was checked against.
        ncols: u64,
    },
    /// A duplicate coordinate under [`crate::DupPolicy::Error`].
    DuplicateEntry {
        /// Row of the duplicate.
        row: u64,
        /// Column of the duplicate.
        col: u64,
    },
    /// Any other invalid argument (e.g. a dimension that does not fit in u32).
    InvalidValue(String),
    /// The `threads` threads an operation runs on cannot be had: their stacks or
    /// memory mappings do not fit under the process's limits, or the OS refused to
    /// create one ([`crate::parallel::run_blocks`]). `message` says which limit.
    ThreadsUnavailable {
        /// The thread count asked for (the calling thread included).
        threads: usize,
        /// What stood in the way.
        message: String,
    },
}

impl fmt::Display for GrbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrbError::DimensionMismatch { op, detail } => write!(f, "{op}: dimension mismatch: {detail}"),
            GrbError::IndexOutOfBounds { row, col, nrows, ncols } => {
                write!(f, "index ({row}, {col}) out of bounds for a {nrows} x {ncols} object")
            }
            GrbError::DuplicateEntry { row, col } => write!(f, "duplicate entry at ({row}, {col})"),
            GrbError::InvalidValue(s) => write!(f, "invalid value: {s}"),
            GrbError::ThreadsUnavailable { threads, message } => write!(f, "cannot run on {threads} threads: {message}"),
        }
    }
}

impl std::error::Error for GrbError {}

/// Shorthand result type.
pub(crate) type GrbResult<T> = Result<T, GrbError>;
