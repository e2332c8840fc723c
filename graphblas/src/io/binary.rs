//! Binary coordinate format for fast reloads.
//!
//! Layout (little-endian): a 40-byte header — magic `GBPRCOO\0`, version
//! `u32`, flags `u32` (bit 0: has `f64` values; bit 1: has a label table),
//! `nrows`, `ncols`, `nnz` as `u64` — followed by `nnz` fixed-size records `row
//! u32, col u32[, value f64]`, and, with bit 1, `nrows` ascending `u64` labels:
//! the vertex id of each index (written by the distributed converter when the
//! input's ids are not `0..n`, so a reload reports the original ids). Records (array-of-structs rather than three arrays) make a byte
//! range map to a contiguous run of entries, so the same "an item belongs to
//! the range where it starts" rule as for text lines splits the file among
//! processes. Binary files have no lines, so errors give record numbers and
//! byte offsets instead.

use super::{checked_header, file_len, open, read_at_full, InputError, InputErrorKind as K, InputResult};
use crate::matrix::Coo;
use std::io::Write;
use std::path::Path;

/// File magic.
pub(crate) const BINARY_MAGIC: [u8; 8] = *b"GBPRCOO\0";
/// Current format version.
pub(crate) const BINARY_VERSION: u32 = 1;
const HEADER_LEN: u64 = 40;

/// Header of a binary file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryHeader {
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Number of records.
    pub nnz: u64,
    /// Whether records carry an `f64` value.
    pub(crate) has_values: bool,
    /// Whether a table of `nrows` u64 labels follows the records.
    pub(crate) has_labels: bool,
}

impl BinaryHeader {
    fn record_len(&self) -> u64 {
        if self.has_values {
            16
        } else {
            8
        }
    }
}

/// Writes `coo` (shape, indices and optional values).
pub fn write_binary(path: &Path, coo: &Coo<f64>) -> InputResult<()> {
    let io = |e: std::io::Error| InputError::new(path, None, K::Io, format!("write failed: {e}"));
    let f = std::fs::File::create(path).map_err(|e| InputError::new(path, None, K::Io, format!("cannot create: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let has_values = coo.vals.is_some();
    w.write_all(&BINARY_MAGIC).map_err(io)?;
    w.write_all(&BINARY_VERSION.to_le_bytes()).map_err(io)?;
    w.write_all(&(has_values as u32).to_le_bytes()).map_err(io)?;
    for x in [coo.nrows as u64, coo.ncols as u64, coo.rows.len() as u64] {
        w.write_all(&x.to_le_bytes()).map_err(io)?;
    }
    let mut rec = [0u8; 16];
    for k in 0..coo.rows.len() {
        rec[0..4].copy_from_slice(&coo.rows[k].to_le_bytes());
        rec[4..8].copy_from_slice(&coo.cols[k].to_le_bytes());
        if let Some(v) = &coo.vals {
            rec[8..16].copy_from_slice(&v[k].to_le_bytes());
            w.write_all(&rec).map_err(io)?;
        } else {
            w.write_all(&rec[..8]).map_err(io)?;
        }
    }
    w.flush().map_err(io)
}

/// Reads and validates the header, including that the file is long enough
/// for the declared records (a truncated file is detected here, by everyone).
pub fn read_binary_header(path: &Path) -> InputResult<BinaryHeader> {
    let file = open(path)?;
    let h: [u8; HEADER_LEN as usize] =
        checked_header(path, &file, &BINARY_MAGIC, BINARY_VERSION, "not a graphblas-pagerank binary file (bad magic)", "format")?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().unwrap());
    let flags = u32_at(12);
    if flags & !3 != 0 {
        return Err(InputError::new(path, None, K::Header, format!("unknown flags {flags:#x}")));
    }
    let hdr = BinaryHeader { nrows: u64_at(16), ncols: u64_at(24), nnz: u64_at(32), has_values: flags & 1 == 1, has_labels: flags & 2 == 2 };
    if hdr.nrows > u32::MAX as u64 + 1 || hdr.ncols > u32::MAX as u64 + 1 {
        return Err(InputError::new(path, None, K::Header, "dimensions exceed the u32 index range"));
    }
    let table = if hdr.has_labels { hdr.nrows.checked_mul(8) } else { Some(0) };
    let need = hdr.nnz.checked_mul(hdr.record_len()).and_then(|x| x.checked_add(HEADER_LEN)).and_then(|x| x.checked_add(table?));
    let len = file_len(path)?;
    match need {
        Some(need) if len >= need => {
            if len > need {
                return Err(InputError::new(path, None, K::EntryCount, format!("{} trailing bytes after {} records", len - need, hdr.nnz)));
            }
        }
        _ => {
            let have = (len - HEADER_LEN).saturating_sub(table.unwrap_or(0)) / hdr.record_len();
            return Err(InputError::new(
                path,
                None,
                K::Truncated,
                format!("truncated: header declares {} records but the file holds {have} (file is {len} bytes)", hdr.nnz),
            ));
        }
    }
    Ok(hdr)
}

/// The records whose first byte lies in `[start, end)`: `(first, last)` record numbers.
pub(crate) fn binary_records_in(hdr: &BinaryHeader, start: u64, end: u64) -> (u64, u64) {
    let rl = hdr.record_len();
    let first = start.max(HEADER_LEN).saturating_sub(HEADER_LEN).div_ceil(rl).min(hdr.nnz);
    let last = end.max(HEADER_LEN).saturating_sub(HEADER_LEN).div_ceil(rl).min(hdr.nnz);
    (first, last.max(first))
}

/// Reads the records whose first byte lies in `[start, end)`. Memory for them is
/// claimed before reading and fallibly: a range too large for memory is an error
/// naming the bytes (at once, not after reading).
pub fn read_binary_range(path: &Path, hdr: &BinaryHeader, start: u64, end: u64) -> InputResult<Coo<f64>> {
    let mut coo = alloc_binary_range(path, hdr, start, end)?;
    read_binary_range_into(path, hdr, start, end, &mut coo)?;
    Ok(coo)
}

/// An empty [`Coo`] with room for the records of `[start, end)`, claimed fallibly
/// (the first half of [`read_binary_range`], so that processes can agree on memory
/// before any of them reads).
pub(crate) fn alloc_binary_range(path: &Path, hdr: &BinaryHeader, start: u64, end: u64) -> InputResult<Coo<f64>> {
    let (first, last) = binary_records_in(hdr, start, end);
    let count = (last - first) as usize;
    let (nr, nc) = (hdr.nrows as usize, hdr.ncols as usize);
    let mut coo = if hdr.has_values { Coo::new_valued(nr, nc) } else { Coo::new_pattern(nr, nc) };
    let per = if hdr.has_values { 16 } else { 8 };
    let oom = || {
        InputError::new(
            path,
            None,
            K::Io,
            format!("out of memory: cannot allocate {} bytes for records {first}..{last}", count.saturating_mul(per)),
        )
    };
    coo.rows.try_reserve_exact(count).map_err(|_| oom())?;
    coo.cols.try_reserve_exact(count).map_err(|_| oom())?;
    if let Some(v) = coo.vals.as_mut() {
        v.try_reserve_exact(count).map_err(|_| oom())?;
    }
    Ok(coo)
}

/// Appends the records of `[start, end)` to `coo` (the second half of
/// [`read_binary_range`]).
pub(crate) fn read_binary_range_into(path: &Path, hdr: &BinaryHeader, start: u64, end: u64, coo: &mut Coo<f64>) -> InputResult<()> {
    let (first, last) = binary_records_in(hdr, start, end);
    let rl = hdr.record_len();
    let file = open(path)?;
    // Read in blocks of whole records.
    let block_records = ((1usize << 20) / rl as usize) as u64;
    let mut bytes = vec![0u8; (block_records * rl) as usize];
    let mut rec = first;
    while rec < last {
        let k = (last - rec).min(block_records);
        let buf = &mut bytes[..(k * rl) as usize];
        let offset = HEADER_LEN + rec * rl;
        let got = read_at_full(path, &file, offset, buf)?;
        if got < buf.len() {
            let at = rec + got as u64 / rl;
            return Err(InputError::new(path, None, K::Truncated, format!("truncated at record {at} (byte offset {})", offset + got as u64)));
        }
        for (j, b) in buf.chunks_exact(rl as usize).enumerate() {
            let r = u32::from_le_bytes(b[0..4].try_into().unwrap());
            let c = u32::from_le_bytes(b[4..8].try_into().unwrap());
            if r as u64 >= hdr.nrows || c as u64 >= hdr.ncols {
                let idx = rec + j as u64;
                return Err(InputError::new(
                    path,
                    None,
                    K::IndexOutOfRange,
                    format!("record {idx} (byte offset {}): ({r}, {c}) outside {} x {}", HEADER_LEN + idx * rl, hdr.nrows, hdr.ncols),
                ));
            }
            coo.rows.push(r);
            coo.cols.push(c);
            if let Some(v) = coo.vals.as_mut() {
                v.push(f64::from_le_bytes(b[8..16].try_into().unwrap()));
            }
        }
        rec += k;
    }
    Ok(())
}

/// Reads the label table (`hdr.has_labels`): `nrows` ascending ids.
pub(crate) fn read_binary_labels(path: &Path, hdr: &BinaryHeader) -> InputResult<Vec<u64>> {
    let n = hdr.nrows as usize;
    let file = open(path)?;
    let offset = HEADER_LEN + hdr.nnz * hdr.record_len();
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n * 8).map_err(|_| {
        InputError::new(path, None, K::Io, format!("out of memory: cannot allocate {} bytes for the label table", n * 8))
    })?;
    bytes.resize(n * 8, 0);
    let got = read_at_full(path, &file, offset, &mut bytes)?;
    if got < bytes.len() {
        return Err(InputError::new(path, None, K::Truncated, format!("truncated label table at byte offset {}", offset + got as u64)));
    }
    let labels: Vec<u64> = bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    if let Some(k) = labels.windows(2).position(|w| w[0] >= w[1]) {
        return Err(InputError::new(
            path,
            None,
            K::Header,
            format!("label table not strictly ascending at index {} (byte offset {})", k + 1, offset + 8 * (k as u64 + 1)),
        ));
    }
    Ok(labels)
}

/// Reads a whole binary file.
pub fn read_binary(path: &Path) -> InputResult<Coo<f64>> {
    let h = read_binary_header(path)?;
    read_binary_range(path, &h, 0, u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::test_util::TempFile;
    use crate::io::{split_byte_ranges, InputErrorKind};

    fn sample(valued: bool) -> Coo<f64> {
        let mut c = if valued { Coo::new_valued(5, 7) } else { Coo::new_pattern(5, 7) };
        for k in 0..23u32 {
            c.rows.push(k % 5);
            c.cols.push((k * 3) % 7);
            if let Some(v) = c.vals.as_mut() {
                v.push(k as f64 * 0.5 - 3.0);
            }
        }
        c
    }

    #[test]
    fn round_trip_and_ranges() {
        for valued in [false, true] {
            let t = TempFile::with_bytes("b.bin", b"");
            let c = sample(valued);
            write_binary(&t.0, &c).unwrap();
            assert_eq!(read_binary(&t.0).unwrap(), c);
            let h = read_binary_header(&t.0).unwrap();
            let len = std::fs::metadata(&t.0).unwrap().len();
            for p in [1, 2, 3, 7, 100] {
                let mut acc = if valued { Coo::new_valued(5, 7) } else { Coo::new_pattern(5, 7) };
                for (s, e) in split_byte_ranges(len, p) {
                    acc.append(read_binary_range(&t.0, &h, s, e).unwrap());
                }
                assert_eq!(acc, c, "p = {p}");
            }
        }
    }

    #[test]
    fn detects_corruption() {
        let t = TempFile::with_bytes("c.bin", b"");
        write_binary(&t.0, &sample(true)).unwrap();
        let good = std::fs::read(&t.0).unwrap();

        let trunc = TempFile::with_bytes("t.bin", &good[..good.len() - 5]);
        let e = read_binary(&trunc.0).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::Truncated);
        assert!(e.to_string().contains(&trunc.0.display().to_string()), "{e}");

        let mut bad = good.clone();
        bad[0] = b'X';
        assert_eq!(read_binary(&TempFile::with_bytes("m.bin", &bad).0).unwrap_err().kind, InputErrorKind::Header);

        let mut bad = good.clone();
        bad[8] = 9;
        assert_eq!(read_binary(&TempFile::with_bytes("v.bin", &bad).0).unwrap_err().kind, InputErrorKind::Unsupported);

        let mut bad = good.clone();
        bad[40 + 16 * 3..40 + 16 * 3 + 4].copy_from_slice(&99u32.to_le_bytes());
        let e = read_binary(&TempFile::with_bytes("i.bin", &bad).0).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::IndexOutOfRange);
        assert!(e.message.contains("record 3"), "{e}");

        let mut long = good.clone();
        long.push(0);
        assert_eq!(read_binary(&TempFile::with_bytes("l.bin", &long).0).unwrap_err().kind, InputErrorKind::EntryCount);
        assert_eq!(read_binary(Path::new("/no/such.bin")).unwrap_err().kind, InputErrorKind::Io);
    }
}
