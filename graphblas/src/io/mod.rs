//! Graph/matrix input: MatrixMarket, whitespace edge lists and a binary
//! format for fast reloads.
//!
//! All readers can parse a *byte range* `[start, end)` of a file so that each
//! of P processes parses only its share: a line belongs to the range in
//! which it *starts*, headers are read by everyone, and reported line
//! numbers are the true 1-based line numbers of the whole file (found by
//! counting newlines before the range with a fast byte scan). Checks that
//! need global knowledge (the declared entry count, the vertex count of an
//! edge list) are exposed as counts plus a separate check function, since
//! only the sum over all ranges can be validated.

mod binary;
mod csr;
mod edgelist;
mod mtx;
mod scan;

pub use binary::{read_binary, read_binary_header, read_binary_range, write_binary, BinaryHeader};
pub(crate) use binary::{alloc_binary_range, read_binary_labels, read_binary_range_into, BINARY_MAGIC, BINARY_VERSION};
pub use csr::{read_csr_header, CsrHeader, CsrSide};
pub(crate) use csr::{is_csr_file, read_csr_ids, read_csr_indices, read_csr_offsets, read_csr_weights};
pub use edgelist::{read_edge_list, read_edge_list_range, EdgeIds, EdgeListChunk, EdgeListOptions};
pub(crate) use edgelist::{read_edge_list_ids_range, EdgeIdsChunk};
pub use mtx::{read_mtx, read_mtx_header, read_mtx_range, MtxChunk, MtxField, MtxHeader};
pub(crate) use mtx::{check_mtx_entry_count, read_mtx_range_checked};
pub(crate) use scan::count_newlines;

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What went wrong while reading input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputErrorKind {
    /// The OS refused: missing file, permission, read failure.
    Io,
    /// Malformed or missing header / size line / magic.
    Header,
    /// A data line that does not have the expected fields.
    Malformed,
    /// A field that should be a number but is not.
    NotNumeric,
    /// An index outside the declared dimensions.
    IndexOutOfRange,
    /// Number of entries differs from the declared count.
    EntryCount,
    /// The file ends before the declared data does (binary format).
    Truncated,
    /// Valid input that this reader does not support (e.g. `complex`).
    Unsupported,
}

/// An input error that always names the file and, when the file is a text
/// file and the problem is on a line, the true 1-based line number. Errors
/// that are not about a line (the file cannot be opened; binary files, which
/// have byte offsets in the message instead) have `line == None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file being read.
    pub path: PathBuf,
    /// 1-based line number, if the error is on a line.
    pub line: Option<u64>,
    /// Category, for programmatic handling.
    pub kind: InputErrorKind,
    /// Human-readable description.
    pub message: String,
}

impl InputError {
    pub(crate) fn new(path: &Path, line: Option<u64>, kind: InputErrorKind, message: impl Into<String>) -> Self {
        InputError { path: path.to_path_buf(), line, kind, message: message.into() }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.path.display(), l, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for InputError {}

/// Result type of the readers.
pub(crate) type InputResult<T> = Result<T, InputError>;

/// A shortest-path weight must be a non-negative number (NaN is not one).
pub(crate) fn check_nonnegative_weight(path: &Path, line: u64, w: f64) -> InputResult<()> {
    if w >= 0.0 {
        return Ok(());
    }
    Err(InputError::new(path, Some(line), InputErrorKind::NotNumeric, format!("weight {w} is negative or not a number (shortest paths need weights >= 0)")))
}

/// Splits `0..file_len` into `parts` contiguous byte ranges of equal size.
/// Feed range `p` to process `p`'s reader; the readers move the boundaries
/// to line (or record) starts themselves.
pub fn split_byte_ranges(file_len: u64, parts: usize) -> Vec<(u64, u64)> {
    let parts = parts.max(1) as u128;
    (0..parts)
        .map(|p| ((file_len as u128 * p / parts) as u64, (file_len as u128 * (p + 1) / parts) as u64))
        .collect()
}

/// Length of a file in bytes.
pub fn file_len(path: &Path) -> InputResult<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| InputError::new(path, None, InputErrorKind::Io, format!("cannot stat: {e}")))
}

pub(crate) fn open(path: &Path) -> InputResult<File> {
    File::open(path).map_err(|e| InputError::new(path, None, InputErrorKind::Io, format!("cannot open: {e}")))
}

/// The `N`-byte header at the start of one of the crate's binary formats, checked
/// for its 8-byte `magic` (else `not_ours`), its length (a truncated header) and its
/// u32 version at byte 8 (`format` names the format in that error); the caller reads
/// the rest.
pub(crate) fn checked_header<const N: usize>(path: &Path, file: &File, magic: &[u8; 8], version: u32, not_ours: &str, format: &str) -> InputResult<[u8; N]> {
    let mut h = [0u8; N];
    let got = read_at_full(path, file, 0, &mut h)?;
    if got < 8 || h[..8] != magic[..] {
        return Err(InputError::new(path, None, InputErrorKind::Header, not_ours));
    }
    if got < N {
        return Err(InputError::new(path, None, InputErrorKind::Truncated, format!("truncated header: {got} of {N} bytes")));
    }
    let found = u32::from_le_bytes(h[8..12].try_into().unwrap());
    if found != version {
        return Err(InputError::new(path, None, InputErrorKind::Unsupported, format!("{format} version {found} (this reader supports {version})")));
    }
    Ok(h)
}

/// Reads up to `buf.len()` bytes at `offset`, retrying short reads; returns
/// how many bytes were read (less only at end of file).
pub(crate) fn read_at_full(path: &Path, file: &File, mut offset: u64, buf: &mut [u8]) -> InputResult<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset) {
            Ok(0) => break,
            Ok(k) => {
                done += k;
                offset += k as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(InputError::new(path, None, InputErrorKind::Io, format!("read failed at byte {offset}: {e}")))
            }
        }
    }
    Ok(done)
}

const BLOCK: usize = 1 << 20;

/// The lines of a text file that start inside one byte range.
pub(crate) struct LineChunk {
    /// Bytes from the first line start in the range through the end of the
    /// last line that starts in the range (including its `\n` if any).
    pub bytes: Vec<u8>,
    /// True 1-based line number of `bytes[0]`.
    pub(crate) first_line: u64,
}

/// Loads the lines starting in `[start, end)` of the data section that
/// begins at byte `data_start` (which is line `data_line`). Lines before
/// `data_start` (the header) never belong to any range.
pub(crate) fn read_line_chunk(
    path: &Path,
    file: &File,
    data_start: u64,
    data_line: u64,
    start: u64,
    end: u64,
) -> InputResult<LineChunk> {
    let len = file.metadata().map_err(|e| InputError::new(path, None, InputErrorKind::Io, format!("cannot stat: {e}")))?.len();
    let end = end.min(len);
    let s = start.max(data_start);
    let empty = LineChunk { bytes: Vec::new(), first_line: data_line };
    if s >= end {
        return Ok(empty);
    }
    // First line start p >= s.
    let p = if s == data_start {
        s
    } else {
        let mut prev = [0u8; 1];
        read_at_full(path, file, s - 1, &mut prev)?;
        if prev[0] == b'\n' {
            s
        } else {
            match find_newline(path, file, s, end)? {
                Some(nl) => nl + 1,
                None => return Ok(empty),
            }
        }
    };
    if p >= end {
        return Ok(empty);
    }
    let first_line = data_line + count_newlines_in_file(path, file, data_start, p)?;
    let want = (end - p) as usize;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(want).map_err(|_| {
        InputError::new(path, None, InputErrorKind::Io, format!("out of memory: cannot allocate {want} bytes to read bytes {p}..{end}"))
    })?;
    bytes.resize(want, 0);
    let got = read_at_full(path, file, p, &mut bytes)?;
    bytes.truncate(got);
    // Extend through the end of the last line that starts before `end`.
    if bytes.last() != Some(&b'\n') {
        let mut off = p + bytes.len() as u64;
        let mut block = vec![0u8; 64 * 1024];
        loop {
            let k = read_at_full(path, file, off, &mut block)?;
            if k == 0 {
                break;
            }
            if let Some(i) = block[..k].iter().position(|&b| b == b'\n') {
                bytes.extend_from_slice(&block[..=i]);
                break;
            }
            bytes.extend_from_slice(&block[..k]);
            off += k as u64;
        }
    }
    Ok(LineChunk { bytes, first_line })
}

/// Offset of the first `\n` in `[from, limit)`, if any.
fn find_newline(path: &Path, file: &File, from: u64, limit: u64) -> InputResult<Option<u64>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut off = from;
    while off < limit {
        let want = ((limit - off) as usize).min(buf.len());
        let k = read_at_full(path, file, off, &mut buf[..want])?;
        if k == 0 {
            return Ok(None);
        }
        if let Some(i) = buf[..k].iter().position(|&b| b == b'\n') {
            return Ok(Some(off + i as u64));
        }
        off += k as u64;
    }
    Ok(None)
}

/// Number of `\n` bytes in `[from, to)` of the file, streaming in 1 MiB blocks.
fn count_newlines_in_file(path: &Path, file: &File, from: u64, to: u64) -> InputResult<u64> {
    let mut buf = vec![0u8; BLOCK];
    let mut off = from;
    let mut total = 0u64;
    while off < to {
        let want = ((to - off) as usize).min(BLOCK);
        let k = read_at_full(path, file, off, &mut buf[..want])?;
        if k == 0 {
            break;
        }
        total += count_newlines(&buf[..k]) as u64;
        off += k as u64;
    }
    Ok(total)
}

#[cfg(test)]
pub(crate) mod test_util {
    use std::path::PathBuf;

    /// A temp file removed on drop (tests only; avoids a tempfile dependency).
    pub struct TempFile(pub PathBuf);

    impl TempFile {
        pub fn with_bytes(name: &str, bytes: &[u8]) -> TempFile {
            let mut p = std::env::temp_dir();
            p.push(format!("gbpr-test-{}-{}-{}", std::process::id(), name, unique()));
            std::fs::write(&p, bytes).unwrap();
            TempFile(p)
        }
    }

    fn unique() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_tile_the_file() {
        let r = split_byte_ranges(10, 3);
        assert_eq!(r, vec![(0, 3), (3, 6), (6, 10)]);
        assert_eq!(split_byte_ranges(0, 2), vec![(0, 0), (0, 0)]);
    }

    #[test]
    fn missing_file_names_the_file() {
        let e = open(Path::new("/nonexistent/dir/x.mtx")).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::Io);
        assert!(e.to_string().starts_with("/nonexistent/dir/x.mtx: cannot open"), "{e}");
    }

    #[test]
    fn line_chunks_partition_lines_at_every_split() {
        let text = b"hdr\nab\n\ncde\nf\nlast-no-newline";
        let t = test_util::TempFile::with_bytes("chunks", text);
        let f = File::open(&t.0).unwrap();
        let n = text.len() as u64;
        for a in 0..=n {
            for b in a..=n {
                let ranges = [(0, a), (a, b), (b, n)];
                let mut all = Vec::new();
                for (s, e) in ranges {
                    let c = read_line_chunk(&t.0, &f, 4, 2, s, e).unwrap();
                    if !c.bytes.is_empty() {
                        // The chunks tile the data section in order, so this
                        // chunk starts at byte 4 + all.len(); its reported
                        // first line number must be the true one there.
                        let offset = 4 + all.len();
                        let true_line = 1 + text[..offset].iter().filter(|&&x| x == b'\n').count() as u64;
                        assert_eq!(c.first_line, true_line, "split {a} {b}");
                    }
                    all.extend(c.bytes);
                }
                assert_eq!(all, text[4..].to_vec(), "split at {a}, {b}");
            }
        }
    }
}
