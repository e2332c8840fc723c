//! One process's request in native memory, any size (a direct `ByteBuffer` stops at 2 GiB:
//! its capacity is an `int`), in four sections that grow on their own: the head
//! (graph-call: header, refusal, source; pagerank: its whole request), the edges' ids,
//! their weights, the vertex ids. The JVM appends each piece of a partition's rows to its
//! section as it reads it (so the JVM heap holds one piece at a time, whatever the
//! partition's size) and the head last, when the counts are known; then it hands the
//! request over to `hookProduceRequest`, which reads the sections in place and frees them
//! when the algorithm lets go of them (graph-call: once parsed, before the graph is built,
//! so that the request and the graph do not hold memory at once). A request never handed
//! over is freed by the JVM (`org.lpf.spark.LpfRequest`). Growth is fallible: a request
//! that does not fit is an error naming its bytes, never an abort of the JVM.
//!
//! The contiguous form of a request (a direct buffer, the unit tests) is its four
//! sections one after the other.

use std::sync::Arc;

/// The sections of a request, in the order of its contiguous form (the JVM's
/// `LpfLayout.SECTION_*`).
pub(crate) use crate::layout::sections::{EDGES, HEAD, SECTIONS, VERTICES, WEIGHTS};

/// A request's sections, appended to as the rows are read.
#[derive(Debug, Default)]
pub(crate) struct NativeRequest {
    sections: [Vec<u8>; SECTIONS],
}

impl NativeRequest {
    pub(crate) fn new() -> NativeRequest {
        NativeRequest::default()
    }

    /// Appends `k` bytes to `section`, written by `fill` into the slice it is given
    /// (zeroed first); an error leaves the request as it was.
    pub(crate) fn append_with<E: std::fmt::Display>(
        &mut self,
        section: usize,
        k: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<(), String> {
        let total = self.bytes();
        let s = self.sections.get_mut(section).ok_or_else(|| format!("a request has no section {section} (0..{SECTIONS})"))?;
        let at = s.len();
        s.try_reserve(k).map_err(|_| {
            format!("this executor could not allocate {k} more bytes of native memory for its request (which holds {total} bytes)")
        })?;
        s.resize(at + k, 0);
        fill(&mut s[at..]).map_err(|e| {
            s.truncate(at);
            format!("appending {k} bytes to section {section} at {at}: {e}")
        })
    }

    /// The four sections.
    pub(crate) fn sections(&self) -> [&[u8]; SECTIONS] {
        [&self.sections[0], &self.sections[1], &self.sections[2], &self.sections[3]]
    }

    /// Bytes of all sections.
    pub(crate) fn bytes(&self) -> u64 {
        self.sections.iter().map(|s| s.len() as u64).sum()
    }
}

/// A process's request as a bundled algorithm gets it: contiguous and borrowed for the
/// call (a direct buffer the JVM keeps), or in sections handed over and shared by the LPF
/// processes of this task (a TCP group's threads), freed when the last of them drops its
/// `RequestBytes`.
#[derive(Clone, Debug)]
pub(crate) enum RequestBytes<'a> {
    Contiguous(&'a [u8]),
    Sections(Arc<NativeRequest>),
}

impl RequestBytes<'_> {
    /// The request as one byte string, for algorithms whose request is a head alone
    /// (pagerank): a request in sections must have nothing but its head.
    pub(crate) fn whole(&self) -> Result<&[u8], String> {
        match self {
            RequestBytes::Contiguous(b) => Ok(b),
            RequestBytes::Sections(r) => {
                let s = r.sections();
                match s[EDGES..].iter().position(|x| !x.is_empty()) {
                    None => Ok(s[HEAD]),
                    Some(i) => Err(format!("this algorithm's request is a head alone, this one has {} bytes in section {}", s[EDGES + i].len(), EDGES + i)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(r: &mut NativeRequest, section: usize, b: &[u8]) -> Result<(), String> {
        r.append_with(section, b.len(), |to| {
            to.copy_from_slice(b);
            Ok::<_, String>(())
        })
    }

    #[test]
    fn sections_grow_on_their_own_and_a_failed_fill_leaves_them_as_they_were() {
        let mut r = NativeRequest::new();
        put(&mut r, EDGES, b"ab").unwrap();
        put(&mut r, WEIGHTS, b"w").unwrap();
        put(&mut r, EDGES, b"cd").unwrap();
        put(&mut r, HEAD, b"h").unwrap();
        let e = r.append_with(VERTICES, 2, |_| Err("the array is too short")).unwrap_err();
        assert!(e.contains("the array is too short"), "{e}");
        assert!(put(&mut r, SECTIONS, b"x").unwrap_err().contains("no section 4"));
        assert_eq!(r.sections(), [&b"h"[..], b"abcd", b"w", b""]);
        assert_eq!(r.bytes(), 6);
    }

    #[test]
    fn a_request_beyond_memory_is_an_error_naming_its_bytes() {
        let mut r = NativeRequest::new();
        let e = r.append_with(EDGES, usize::MAX / 2, |_| Ok::<_, String>(())).unwrap_err();
        assert!(e.contains(&(usize::MAX / 2).to_string()), "{e}");
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn a_head_alone_is_whole_and_a_request_with_other_sections_is_not() {
        let mut r = NativeRequest::new();
        put(&mut r, HEAD, b"head").unwrap();
        let shared = |r: NativeRequest| RequestBytes::Sections(Arc::new(r));
        assert_eq!(shared(std::mem::take(&mut r)).whole().unwrap(), b"head");
        put(&mut r, HEAD, b"head").unwrap();
        put(&mut r, VERTICES, b"v").unwrap();
        assert!(shared(r).whole().unwrap_err().contains("1 bytes in section 3"));
    }
}
