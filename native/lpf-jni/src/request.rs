//! One process's request in native memory: any size, where a direct `ByteBuffer` stops at
//! 2 GiB (its capacity is an `int`). The JVM declares the length, appends the request's
//! bytes in order (pieces of about 1 MiB read from a partition's rows), and hands the
//! handle over to `hookProduceRequest`, which reads the bytes in place and frees them
//! when the algorithm lets go of them (graph-call: once parsed, before the graph is built,
//! so that the request and the graph do not hold memory at once); a request never handed
//! over is freed by the JVM (`org.lpf.spark.LpfRequest`). Allocation is fallible: a
//! request that does not fit is an error naming its bytes, never an abort of the JVM.

use std::sync::Arc;

/// A process's request as a bundled algorithm gets it: borrowed for the call (a direct
/// buffer the JVM keeps), or handed over and shared by the LPF processes of this task
/// (a TCP group's threads), freed when the last of them drops its `RequestBytes`.
#[derive(Clone, Debug)]
pub enum RequestBytes<'a> {
    Borrowed(&'a [u8]),
    Shared(Arc<Vec<u8>>),
}

impl RequestBytes<'_> {
    pub fn bytes(&self) -> &[u8] {
        match self {
            RequestBytes::Borrowed(b) => b,
            RequestBytes::Shared(v) => v,
        }
    }
}

/// The bytes of a request, appended up to the length declared when it was made.
#[derive(Debug)]
pub struct NativeRequest {
    bytes: Vec<u8>,
    length: usize,
}

impl NativeRequest {
    /// Room for exactly `length` bytes, or the message naming them.
    pub fn with_length(length: u64) -> Result<NativeRequest, String> {
        let no_room = || format!("this executor could not allocate {length} bytes of native memory for its request");
        let length = usize::try_from(length).map_err(|_| no_room())?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(length).map_err(|_| no_room())?;
        Ok(NativeRequest { bytes, length })
    }

    /// Appends `k` bytes, written by `fill` into the slice it is given (zeroed first);
    /// more than the declared length is an error and leaves the request as it was.
    pub fn append_with<E: std::fmt::Display>(
        &mut self,
        k: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<(), String> {
        let at = self.bytes.len();
        if k > self.length - at {
            return Err(format!("appending {k} bytes at {at} would pass the request's length of {} bytes", self.length));
        }
        self.bytes.resize(at + k, 0);
        fill(&mut self.bytes[at..]).map_err(|e| {
            self.bytes.truncate(at);
            format!("appending {k} bytes at {at}: {e}")
        })
    }

    /// The whole request, once every declared byte was appended.
    pub fn complete(self) -> Result<Vec<u8>, String> {
        if self.bytes.len() != self.length {
            return Err(format!("the request holds {} of its {} bytes", self.bytes.len(), self.length));
        }
        Ok(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_complete_only_when_every_declared_byte_is_there() {
        let mut r = NativeRequest::with_length(5).unwrap();
        r.append_with(3, |b| {
            b.copy_from_slice(b"abc");
            Ok::<_, String>(())
        })
        .unwrap();
        let short = NativeRequest { bytes: r.bytes.clone(), length: 5 };
        assert!(short.complete().unwrap_err().contains("3 of its 5 bytes"));
        let e = r.append_with(3, |_| Ok::<_, String>(())).unwrap_err();
        assert!(e.contains("would pass the request's length of 5 bytes"), "{e}");
        let e = r.append_with(2, |_| Err("the array is too short")).unwrap_err();
        assert!(e.contains("the array is too short"), "{e}");
        r.append_with(2, |b| {
            b.copy_from_slice(b"de");
            Ok::<_, String>(())
        })
        .unwrap();
        assert_eq!(r.complete().unwrap(), b"abcde");
    }

    #[test]
    fn a_request_beyond_memory_is_an_error_naming_its_bytes() {
        let e = NativeRequest::with_length(u64::MAX / 2).unwrap_err();
        assert!(e.contains(&(u64::MAX / 2).to_string()), "{e}");
    }

    #[test]
    fn a_request_may_pass_2_gib() {
        // What a direct ByteBuffer cannot hold; reserved, not touched, so cheap to test.
        let r = NativeRequest::with_length(3 << 30).unwrap();
        assert_eq!(r.length, 3 << 30);
    }
}
