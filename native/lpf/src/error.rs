//! The error type: an LPF error code (the C ABI's), a [`Reason`] a caller can match on,
//! and a message that names the problem.

use std::fmt;

use crate::types::Pid;

/// What kind of failure an [`Error`] is; maps one-to-one onto LPF's error codes.
/// Non-exhaustive: a caller outside this crate matches with a `_` arm, so that a code
/// LPF adds later is not a breaking change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

    /// The kind whose C value is `code` ([`ErrorKind::code`]); `None` for a code that is
    /// not an error's (`LPF_SUCCESS` = 0 among them).
    pub(crate) fn from_code(code: i32) -> Option<ErrorKind> {
        [ErrorKind::OutOfMemory, ErrorKind::Fatal].into_iter().find(|k| k.code() == code)
    }
}

/// Why an operation failed, beside the LPF code: what a caller matches on to tell
/// failures apart (the message says the details). Non-exhaustive, as [`ErrorKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Another process left the section: it returned from its SPMD function, failed,
    /// died or lost its connection while this one waited for it. `pid` is its LPF pid
    /// (the first one of an OS process running several); `None` where the engine cannot
    /// tell who left (the shared-memory engine's barrier counts departures only).
    PeerLeft { pid: Option<Pid> },
    /// The processes are in different collective operations (sync, register_global,
    /// rehook, a different number of global (de)registrations).
    OutOfStep,
    /// The program called `call` (its C name, e.g. `"lpf_put"`) with an argument LPF
    /// does not accept: a pid out of range, a range past a registered area, an unknown or
    /// stale slot, a read-write conflict, a NULL pointer given to the C interface.
    Misuse { call: &'static str },
    /// A capacity, memory or thread limit: the register or queue is full (here or at a
    /// put's destination), an allocation failed, a thread could not be created, every
    /// port of the listening range is taken.
    ResourceExhausted,
    /// An operating-system or MPI call failed (sockets, poll, bind, MPI functions).
    Io,
    /// The two sides of a TCP connection do not hold the same job secret (or one has
    /// none): the handshake's authentication failed. (A master that refuses a process
    /// for another reason, a wrong job or nprocs, is [`Reason::Config`].)
    Authentication,
    /// A wait for other processes ran out of time.
    Timeout,
    /// The process was cancelled: the [`crate::Cancel`] token it carries was set
    /// (e.g. by the Spark bridge when Spark kills its task). Its peers see it leave
    /// ([`Reason::PeerLeft`]).
    Cancelled,
    /// A peer sent a message that breaks the protocol (malformed or inconsistent).
    Protocol,
    /// The configuration is invalid: an environment variable's value, an engine that is
    /// not built in, an impossible process layout, a TCP job that refuses this process.
    Config,
    /// None of the above (a panic, an internal state that should not happen).
    Other,
}

impl Reason {
    /// The calls whose misuse a sync finds and tells the other processes: an `Error`
    /// crossing to another process carries the call by its position here (a call not
    /// listed arrives as [`Reason::Other`]).
    pub const CALLS: &'static [&'static str] = &[
        "lpf_put",
        "lpf_get",
        "lpf_sync",
        "lpf_register_global",
        "lpf_register_local",
        "lpf_deregister",
        "lpf_exec",
        "lpf_rehook",
        "lpf_hook",
        "lpf_pthread_initialize",
        "lpf_mpi_initialize_with_mpicomm",
    ];

    /// The reason as two numbers, for an error crossing to another process (a sync's
    /// error; a launcher sharing a section's outcome, as lpf-conformance's under MPI);
    /// see [`Reason::from_wire`].
    pub fn to_wire(self) -> (u8, u32) {
        match self {
            Reason::PeerLeft { pid } => (0, pid.unwrap_or(u32::MAX)),
            Reason::OutOfStep => (1, 0),
            Reason::Misuse { call } => (2, Self::CALLS.iter().position(|&c| c == call).map_or(u32::MAX, |i| i as u32)),
            Reason::ResourceExhausted => (3, 0),
            Reason::Io => (4, 0),
            Reason::Authentication => (5, 0),
            Reason::Timeout => (6, 0),
            Reason::Protocol => (7, 0),
            Reason::Config => (8, 0),
            Reason::Other => (9, 0),
            Reason::Cancelled => (10, 0),
        }
    }

    /// The reason [`Reason::to_wire`] encoded; `Other` for what it cannot have made.
    pub fn from_wire(tag: u8, arg: u32) -> Reason {
        match tag {
            0 => Reason::PeerLeft { pid: (arg != u32::MAX).then_some(arg) },
            1 => Reason::OutOfStep,
            2 => Self::CALLS.get(arg as usize).map_or(Reason::Other, |&call| Reason::Misuse { call }),
            3 => Reason::ResourceExhausted,
            4 => Reason::Io,
            5 => Reason::Authentication,
            6 => Reason::Timeout,
            7 => Reason::Protocol,
            8 => Reason::Config,
            10 => Reason::Cancelled,
            _ => Reason::Other,
        }
    }
}

/// An LPF error: its code, its reason and a message that names the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    reason: Reason,
    message: String,
}

impl Error {
    /// An error of code `kind` and no particular reason ([`Reason::Other`]).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::with_reason(kind, Reason::Other, message)
    }
    pub fn with_reason(kind: ErrorKind, reason: Reason, message: impl Into<String>) -> Self {
        Error { kind, reason, message: message.into() }
    }
    /// A fatal error of no particular reason ([`Reason::Other`]).
    pub fn fatal(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Other, message)
    }
    /// `LPF_ERR_OUT_OF_MEMORY`: a capacity or allocation that the call could not get; it
    /// had no effect.
    pub fn out_of_memory(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::OutOfMemory, Reason::ResourceExhausted, message)
    }
    /// A fatal error because a limit was reached (threads, memory the process needs).
    pub fn exhausted(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::ResourceExhausted, message)
    }
    pub fn peer_left(pid: Option<Pid>, message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::PeerLeft { pid }, message)
    }
    pub(crate) fn out_of_step(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::OutOfStep, message)
    }
    /// A bad argument to `call` (its C name).
    pub fn misuse(call: &'static str, message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Misuse { call }, message)
    }
    pub fn io(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Io, message)
    }
    pub fn authentication(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Authentication, message)
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Timeout, message)
    }
    /// The process was cancelled ([`Reason::Cancelled`]).
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Cancelled, message)
    }
    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Protocol, message)
    }
    pub fn config(message: impl Into<String>) -> Self {
        Self::with_reason(ErrorKind::Fatal, Reason::Config, message)
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn reason(&self) -> Reason {
        self.reason
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn is_fatal(&self) -> bool {
        self.kind == ErrorKind::Fatal
    }
    /// The whole error as bytes, for a library or launcher that tells other processes
    /// of it (graphblas's error agreement, lpf-conformance's MPI launcher): its code
    /// (one byte), its reason ([`Reason::to_wire`]: one byte, four little-endian) and its
    /// message (the rest, UTF-8). The first byte is never 0. See [`Error::from_wire`].
    pub fn to_wire(&self) -> Vec<u8> {
        let (tag, arg) = self.reason.to_wire();
        let mut out = vec![self.kind.code() as u8, tag];
        out.extend_from_slice(&arg.to_le_bytes());
        out.extend_from_slice(self.message.as_bytes());
        out
    }

    /// The error [`Error::to_wire`] encoded; `None` for bytes it cannot have made (too
    /// short, or an unknown code).
    pub fn from_wire(bytes: &[u8]) -> Option<Error> {
        let (&[code, tag, a, b, c, d], message) = bytes.split_first_chunk::<6>()?;
        let kind = ErrorKind::from_code(code as i32)?;
        let reason = Reason::from_wire(tag, u32::from_le_bytes([a, b, c, d]));
        Some(Error::with_reason(kind, reason, String::from_utf8_lossy(message).into_owned()))
    }

    /// The same error (code and reason) with `context` put in front of its message.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_survives_the_wire() {
        let mut all = vec![
            Reason::PeerLeft { pid: Some(7) },
            Reason::PeerLeft { pid: None },
            Reason::OutOfStep,
            Reason::ResourceExhausted,
            Reason::Io,
            Reason::Authentication,
            Reason::Timeout,
            Reason::Protocol,
            Reason::Config,
            Reason::Other,
            Reason::Cancelled,
        ];
        all.extend(Reason::CALLS.iter().map(|&call| Reason::Misuse { call }));
        for r in all {
            let (tag, arg) = r.to_wire();
            assert_eq!(Reason::from_wire(tag, arg), r);
        }
        let (tag, arg) = Reason::Misuse { call: "lpf_probe" }.to_wire();
        assert_eq!(Reason::from_wire(tag, arg), Reason::Other);
    }

    #[test]
    fn an_error_survives_the_wire_whole() {
        for e in [
            Error::peer_left(Some(3), "pid 3 left"),
            Error::out_of_memory("the queue is full"),
            Error::misuse("lpf_get", "slot 9 is stale"),
            Error::with_reason(ErrorKind::OutOfMemory, Reason::Timeout, ""),
        ] {
            let bytes = e.to_wire();
            assert_ne!(bytes[0], 0);
            assert_eq!(Error::from_wire(&bytes), Some(e));
        }
        assert_eq!(Error::from_wire(&[2, 1, 0, 0, 0]), None, "too short");
        assert_eq!(Error::from_wire(&[0, 1, 0, 0, 0, 0]), None, "LPF_SUCCESS is no error");
        assert_eq!(ErrorKind::from_code(1), Some(ErrorKind::OutOfMemory));
        assert_eq!(ErrorKind::from_code(3), None);
    }

    #[test]
    fn context_keeps_code_and_reason() {
        let e = Error::misuse("lpf_put", "pid 9 is not below nprocs 2").context("put");
        assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" });
        assert_eq!(e.kind(), ErrorKind::Fatal);
        assert_eq!(e.message(), "put: pid 9 is not below nprocs 2");
        assert_eq!(Error::out_of_memory("x").reason(), Reason::ResourceExhausted);
    }
}
