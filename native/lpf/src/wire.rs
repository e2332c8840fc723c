//! Byte-level formats of the TCP engine: the 32-byte frame header of the mesh
//! protocol, and small little-endian encoders/decoders for frame bodies and the
//! bootstrap messages. See docs/tcp.md for the protocol.

use crate::error::{Error, Result};

/// First bytes of every greeting: tells an LPF peer from anything else on the port.
pub(crate) const MAGIC: [u8; 8] = *b"LPF-TCP\0";
/// Protocol version; peers of different versions refuse each other.
pub(crate) const VERSION: u16 = 2;
/// Puts and get replies of at most this many bytes travel inside a coalesced frame
/// body; larger ones follow the body as raw bytes, written from and read into user
/// memory directly.
pub(crate) const INLINE_MAX: usize = 2048;

pub(crate) const HEADER_LEN: usize = 32;

/// Which sync a message belongs to: the section (hook or rehook) and the collective
/// step in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyncId {
    pub section: u32,
    pub step: u64,
}

impl SyncId {
    /// The tag of this sync's message of `kind` (round 0).
    pub(crate) const fn tag(self, kind: Kind) -> Tag {
        Tag { kind, id: self, round: 0 }
    }
}

/// What names a control message among all of a job's: its kind, the sync it belongs
/// to and its round in that sync (0 for kinds sent once per step). Every send and
/// receive of a channel takes one, so its parts cannot be swapped with each other, a
/// pid or a length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub kind: Kind,
    pub id: SyncId,
    pub round: u8,
}

impl Tag {
    pub(crate) const fn round(self, round: u8) -> Tag {
        Tag { round, ..self }
    }
    /// The header of a frame with this tag, `body` bytes long, announcing `raw` bytes
    /// after it.
    pub(crate) fn header(self, body: usize, raw: u64) -> Header {
        Header { kind: self.kind, round: self.round, section: self.id.section, step: self.id.step, body: body as u64, raw }
    }
    /// Whether `h` is the header of a frame with this tag.
    pub(crate) fn names(self, h: &Header) -> bool {
        h.kind == self.kind && h.section == self.id.section && h.step == self.id.step && h.round == self.round
    }
    /// Whether `h` is of this tag's sync step but of another collective operation.
    pub(crate) fn other_operation(self, h: &Header) -> bool {
        h.section == self.id.section && h.step == self.id.step && h.kind.operation() != self.kind.operation()
    }
}

/// Frame kinds of the mesh protocol.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Meta-data of a sync: direct mode carries the request headers too; Bruck mode
    /// carries count blocks (one frame per round).
    Meta = 1,
    /// Request headers (put headers with inline payloads, get requests), Bruck mode.
    Hdrs = 2,
    /// Statuses of the gets a peer asked for; the data follows raw.
    GetReply = 3,
    /// One round of the final (dissemination) barrier, carrying the first error.
    Barrier = 4,
    /// The sender left the section; body: why.
    Leave = 5,
    /// One round of the collective barrier of `rehook`.
    Fresh = 6,
    /// A process's values of an allgather (sizes of newly registered global slots).
    Gather = 7,
    /// One round of the barrier at the end of a section (every process returned from
    /// its SPMD function without failing), so that a process that returned early
    /// fails as well as the ones still in a sync.
    End = 8,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        use Kind::*;
        [Meta, Hdrs, GetReply, Barrier, Leave, Fresh, Gather, End].into_iter().find(|&k| k as u8 == b)
    }

    /// The collective operation a frame belongs to: processes whose frames of one step
    /// belong to different operations are out of step.
    pub fn operation(self) -> &'static str {
        match self {
            Kind::Meta | Kind::Hdrs | Kind::GetReply | Kind::Barrier => "sync",
            Kind::Gather => "the allgather of a sync that registers global slots (register_global)",
            Kind::Fresh => "rehook",
            Kind::Leave => "leaving",
            Kind::End => "the end of the section (returned from its SPMD function)",
        }
    }
}

/// `kind u8 | round u8 | 0 u16 | section u32 | step u64 | body u64 | raw u64`, little
/// endian. `body` bytes follow the header; then `raw` bytes whose meaning the body
/// defines (the receiver knows where they go once it has read the body).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub kind: Kind,
    pub round: u8,
    pub section: u32,
    pub step: u64,
    pub body: u64,
    pub raw: u64,
}

impl Header {
    pub fn encode(&self, out: &mut Vec<u8>) {
        // Assembled in place and appended at once (one capacity check, not seven).
        let mut h = [0u8; HEADER_LEN];
        h[0] = self.kind as u8;
        h[1] = self.round;
        h[4..8].copy_from_slice(&self.section.to_le_bytes());
        h[8..16].copy_from_slice(&self.step.to_le_bytes());
        h[16..24].copy_from_slice(&self.body.to_le_bytes());
        h[24..32].copy_from_slice(&self.raw.to_le_bytes());
        out.extend_from_slice(&h);
    }

    pub fn decode(b: &[u8]) -> std::result::Result<Header, String> {
        debug_assert!(b.len() >= HEADER_LEN);
        let kind = Kind::from_u8(b[0]).ok_or_else(|| format!("unknown frame kind {}", b[0]))?;
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        Ok(Header {
            kind,
            round: b[1],
            section: u32::from_le_bytes(b[4..8].try_into().unwrap()),
            step: u64_at(8),
            body: u64_at(16),
            raw: u64_at(24),
        })
    }
}

/// A received frame (header and body; raw bytes are never stored here).
#[derive(Debug)]
pub(crate) struct Frame {
    pub h: Header,
    pub body: Vec<u8>,
}

/// Appends little-endian values to a byte buffer.
pub(crate) trait Put {
    fn u8(&mut self, v: u8);
    fn u32(&mut self, v: u32);
    fn u64(&mut self, v: u64);
    fn bytes(&mut self, v: &[u8]);
    /// A length-prefixed (u32) byte string.
    fn str(&mut self, v: &[u8]);
}

impl Put for Vec<u8> {
    fn u8(&mut self, v: u8) {
        self.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.extend_from_slice(v);
    }
    fn str(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.extend_from_slice(v);
    }
}

/// Reads little-endian values from a byte slice; running past the end is a protocol
/// error, never a panic.
pub(crate) struct Get<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Get<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Get { buf, pos: 0 }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn is_done(&self) -> bool {
        self.pos == self.buf.len()
    }
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.buf.len() => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            _ => Err(Error::protocol("malformed frame from a peer (truncated)")),
        }
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()))
    }
    pub fn usize(&mut self) -> Result<usize> {
        usize::try_from(self.u64()?).map_err(|_| Error::protocol("malformed frame from a peer (size)"))
    }
    pub fn str(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.bytes(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = Header { kind: Kind::GetReply, round: 7, section: 0xdead_beef, step: u64::MAX - 3, body: 12, raw: 1 << 40 };
        let mut b = Vec::new();
        h.encode(&mut b);
        assert_eq!(b.len(), HEADER_LEN);
        assert_eq!(Header::decode(&b).unwrap(), h);
        b[0] = 99;
        assert!(Header::decode(&b).is_err());
    }

    #[test]
    fn reader_rejects_truncation() {
        let mut b = Vec::new();
        b.u32(5);
        b.str(b"abc");
        let mut g = Get::new(&b);
        assert_eq!(g.u32().unwrap(), 5);
        assert_eq!(g.str().unwrap(), b"abc");
        assert!(g.is_done());
        assert!(g.u8().is_err());
        let mut g = Get::new(&b[..6]);
        g.u32().unwrap();
        assert!(g.str().is_err());
    }
}
