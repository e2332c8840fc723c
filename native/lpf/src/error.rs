//! The error type: one variant per LPF error code other than success.

use std::fmt;

/// What kind of failure an [`Error`] is; maps one-to-one onto LPF's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `LPF_ERR_OUT_OF_MEMORY`: the call had no effect; the process may go on.
    OutOfMemory,
    /// `LPF_ERR_FATAL`: the process is now in a failed state; every later `sync`,
    /// `exec` and `rehook` of its context returns this too.
    Fatal,
}

impl ErrorKind {
    /// The C value of this code (`LPF_ERR_OUT_OF_MEMORY` = 1, `LPF_ERR_FATAL` = 2).
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::OutOfMemory => 1,
            ErrorKind::Fatal => 2,
        }
    }
}

/// An LPF error: its code and a message that names the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }
    pub fn fatal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Fatal, message)
    }
    pub fn out_of_memory(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::OutOfMemory, message)
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn is_fatal(&self) -> bool {
        self.kind == ErrorKind::Fatal
    }
    /// The same error with `context` put in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = match self.kind {
            ErrorKind::OutOfMemory => "LPF_ERR_OUT_OF_MEMORY",
            ErrorKind::Fatal => "LPF_ERR_FATAL",
        };
        write!(f, "{code}: {}", self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
