//! Binary CSR format of the kernels' graph ("GBPRCSR"), written once by `graph convert`
//! so that a later load is reads at computed offsets and nothing else.
//!
//! Layout (little-endian), every section at an offset that follows from the header:
//!
//! | section        | contents                                                        |
//! |----------------|-----------------------------------------------------------------|
//! | header, 32 B   | magic `GBPRCSR\0`, version `u32`, flags `u32` (bit 0: ids, bit 1: weights), `n` `u64`, `m` `u64` |
//! | ids            | with bit 0: `n` ascending `u64`, the id of every vertex number (absent: the ids are `0..n`) |
//! | out offsets    | `n + 1` `u64`: row `v`'s out-neighbours are `out_idx[off[v]..off[v + 1]]` |
//! | out indices    | `m` `u32`, each row's strictly ascending (no duplicates), each `< n` |
//! | in offsets     | `n + 1` `u64`, as the out offsets, of the in-neighbours        |
//! | in indices     | `m` `u32`                                                       |
//! | weights        | with bit 1: `m` `f64`, the weight of out-edge k (of parallel edges the smallest) |
//!
//! The vertex numbers are the dense numbering every other input gets (ascending id), so
//! a kernel's result is the same from the converted file as from the input. A reader of
//! rows `lo..hi` reads `n + 1`-entry offsets `lo..=hi` and the slice of indices they
//! bound: nothing is routed, sorted or deduplicated, only checked (offsets ascending
//! and ending at `m`, indices below `n` and strictly ascending in a row), so a damaged
//! file is an error naming it and the byte offset, never a wrong graph.

use super::{checked_header, file_len, open, read_at_full, InputError, InputErrorKind as K, InputResult};
use std::fs::File;
use std::path::Path;

/// File magic.
pub(crate) const CSR_MAGIC: [u8; 8] = *b"GBPRCSR\0";
/// Current format version.
pub(crate) const CSR_VERSION: u32 = 1;
/// Bytes of the header.
pub(crate) const CSR_HEADER_LEN: u64 = 32;
const HAS_IDS: u32 = 1;
const HAS_WEIGHTS: u32 = 2;

/// Which adjacency a section holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrSide {
    /// Row v: the targets of v's edges.
    Out,
    /// Row v: the sources of the edges into v.
    In,
}

impl CsrSide {
    fn name(self) -> &'static str {
        match self {
            CsrSide::Out => "out-edge",
            CsrSide::In => "in-edge",
        }
    }
}

/// Header of a CSR file, with the offsets of its sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsrHeader {
    /// Vertices.
    pub n: u64,
    /// Edges (distinct `(source, target)` pairs).
    pub m: u64,
    /// The ids section is present (the ids are not `0..n`).
    pub has_ids: bool,
    /// The weights section is present.
    pub has_weights: bool,
}

impl CsrHeader {
    /// The 32 header bytes.
    pub fn encode(&self) -> [u8; CSR_HEADER_LEN as usize] {
        let mut h = [0u8; CSR_HEADER_LEN as usize];
        h[..8].copy_from_slice(&CSR_MAGIC);
        h[8..12].copy_from_slice(&CSR_VERSION.to_le_bytes());
        let flags = if self.has_ids { HAS_IDS } else { 0 } | if self.has_weights { HAS_WEIGHTS } else { 0 };
        h[12..16].copy_from_slice(&flags.to_le_bytes());
        h[16..24].copy_from_slice(&self.n.to_le_bytes());
        h[24..32].copy_from_slice(&self.m.to_le_bytes());
        h
    }

    /// Byte offset of the ids section.
    pub(crate) fn ids_at(&self) -> u64 {
        CSR_HEADER_LEN
    }

    /// Byte offset of a side's offsets section.
    pub fn offsets_at(&self, side: CsrSide) -> u64 {
        let ids = if self.has_ids { self.n * 8 } else { 0 };
        let one_side = (self.n + 1) * 8 + self.m * 4;
        CSR_HEADER_LEN + ids + if side == CsrSide::In { one_side } else { 0 }
    }

    /// Byte offset of a side's indices section.
    pub fn indices_at(&self, side: CsrSide) -> u64 {
        self.offsets_at(side) + (self.n + 1) * 8
    }

    /// Byte offset of the weights section.
    pub fn weights_at(&self) -> u64 {
        self.indices_at(CsrSide::In) + self.m * 4
    }

    /// The length of the whole file, in 128 bits (a damaged header may declare sizes
    /// whose sum does not fit 64).
    fn file_len(&self) -> u128 {
        let (n, m) = (self.n as u128, self.m as u128);
        CSR_HEADER_LEN as u128 + if self.has_ids { n * 8 } else { 0 } + 2 * ((n + 1) * 8 + m * 4) + if self.has_weights { m * 8 } else { 0 }
    }
}

/// Whether the file starts with the CSR magic (false when it cannot be read: the
/// reader of the format it is taken for reports that).
pub(crate) fn is_csr_file(path: &Path) -> bool {
    let Ok(file) = File::open(path) else { return false };
    let mut m = [0u8; 8];
    matches!(read_at_full(path, &file, 0, &mut m), Ok(8)) && m == CSR_MAGIC
}

/// Reads and checks the header, including that the file is exactly as long as it
/// declares (a truncated file is found here, by every reader).
pub fn read_csr_header(path: &Path) -> InputResult<CsrHeader> {
    let file = open(path)?;
    let h: [u8; CSR_HEADER_LEN as usize] =
        checked_header(path, &file, &CSR_MAGIC, CSR_VERSION, "not a graph CSR file (bad magic; write one with `graph convert`)", "CSR format")?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().unwrap());
    let flags = u32_at(12);
    if flags & !(HAS_IDS | HAS_WEIGHTS) != 0 {
        return Err(InputError::new(path, None, K::Header, format!("unknown flags {flags:#x}")));
    }
    let hdr = CsrHeader { n: u64_at(16), m: u64_at(24), has_ids: flags & HAS_IDS != 0, has_weights: flags & HAS_WEIGHTS != 0 };
    if hdr.n > u32::MAX as u64 {
        return Err(InputError::new(path, None, K::Header, format!("{} vertices exceed the 32-bit vertex numbers", hdr.n)));
    }
    let len = file_len(path)?;
    let need = hdr.file_len();
    if (len as u128) < need {
        return Err(InputError::new(
            path,
            None,
            K::Truncated,
            format!("truncated: the header declares {} vertices and {} edges, {need} bytes, but the file is {len} bytes", hdr.n, hdr.m),
        ));
    }
    if len as u128 > need {
        return Err(InputError::new(path, None, K::EntryCount, format!("{} trailing bytes after the {need} the header declares", len as u128 - need)));
    }
    Ok(hdr)
}

/// Fills `dst` with the little-endian values of `W` bytes each at `offset`, through a
/// small buffer (a read from the page cache and a conversion that stays in cache;
/// `from` is a generic, not a function pointer, so that the conversion inlines into a
/// vector loop).
fn read_values<T, const W: usize>(path: &Path, file: &File, offset: u64, dst: &mut [T], from: impl Fn([u8; W]) -> T) -> InputResult<()> {
    const BLOCK: usize = 64 * 1024;
    let mut buf = vec![0u8; BLOCK.min(dst.len() * W)];
    let per = buf.len() / W;
    for (k, part) in dst.chunks_mut(per.max(1)).enumerate() {
        let at = offset + (k * per * W) as u64;
        let bytes = &mut buf[..part.len() * W];
        let got = read_at_full(path, file, at, bytes)?;
        if got < bytes.len() {
            return Err(InputError::new(path, None, K::Truncated, format!("truncated at byte offset {}", at + got as u64)));
        }
        for (d, b) in part.iter_mut().zip(bytes.chunks_exact(W)) {
            *d = from(b.try_into().unwrap());
        }
    }
    Ok(())
}

/// The ids of the vertex numbers `0..n`, checked strictly ascending (`0..n` when the
/// file has no ids section).
pub(crate) fn read_csr_ids(path: &Path, hdr: &CsrHeader, ids: &mut [u64]) -> InputResult<()> {
    if !hdr.has_ids {
        for (k, x) in ids.iter_mut().enumerate() {
            *x = k as u64;
        }
        return Ok(());
    }
    let file = open(path)?;
    read_values(path, &file, hdr.ids_at(), ids, u64::from_le_bytes)?;
    if let Some(k) = ids.windows(2).position(|w| w[0] >= w[1]) {
        return Err(InputError::new(
            path,
            None,
            K::Header,
            format!("vertex ids not strictly ascending at vertex {} (byte offset {})", k + 1, hdr.ids_at() + 8 * (k as u64 + 1)),
        ));
    }
    Ok(())
}

/// Offsets `lo..=hi` of a side (global: into the whole indices section), checked
/// ascending, the first 0 and the last `m` where the block holds them, none past `m`.
pub(crate) fn read_csr_offsets(path: &Path, hdr: &CsrHeader, side: CsrSide, lo: usize, offsets: &mut [usize]) -> InputResult<()> {
    let file = open(path)?;
    let at = hdr.offsets_at(side) + lo as u64 * 8;
    read_values(path, &file, at, offsets, |b| u64::from_le_bytes(b) as usize)?;
    let bad = |k: usize, what: String| {
        Err(InputError::new(path, None, K::Header, format!("{} offset of row {} (byte offset {}) {what}", side.name(), lo + k, at + 8 * k as u64)))
    };
    let hi = lo + offsets.len() - 1;
    if lo == 0 && offsets[0] != 0 {
        return bad(0, format!("is {}, not 0", offsets[0]));
    }
    if hi as u64 == hdr.n && offsets[offsets.len() - 1] as u64 != hdr.m {
        return bad(offsets.len() - 1, format!("is {}, not the edge count {}", offsets[offsets.len() - 1], hdr.m));
    }
    if let Some(k) = offsets.iter().position(|&o| o as u64 > hdr.m) {
        return bad(k, format!("is {}, past the edge count {}", offsets[k], hdr.m));
    }
    if let Some(k) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return bad(k + 1, format!("is {}, below the previous row's {}", offsets[k + 1], offsets[k]));
    }
    Ok(())
}

/// The indices of rows `first_row..first_row + offsets.len() - 1` of a side into
/// `dst` (`offsets`: their global offsets, as [`read_csr_offsets`] gives them), checked
/// below n and strictly ascending in every row.
pub(crate) fn read_csr_indices(path: &Path, hdr: &CsrHeader, side: CsrSide, first_row: usize, offsets: &[usize], dst: &mut [u32]) -> InputResult<()> {
    let base = offsets[0];
    debug_assert_eq!(dst.len(), offsets[offsets.len() - 1] - base);
    if dst.is_empty() {
        return Ok(());
    }
    let file = open(path)?;
    let at = hdr.indices_at(side);
    read_values(path, &file, at + base as u64 * 4, dst, u32::from_le_bytes)?;
    if rows_are_sound(offsets, dst, hdr.n) {
        return Ok(());
    }
    // Something is wrong: find the first bad index, row by row, to name it.
    for (r, w) in offsets.windows(2).enumerate() {
        let row = &dst[w[0] - base..w[1] - base];
        let bad = |j: usize, what: String| {
            let place = format!("{} index {} of row {} (byte offset {})", side.name(), row[j], first_row + r, at + 4 * (w[0] + j) as u64);
            Err(InputError::new(path, None, K::IndexOutOfRange, format!("{place} {what}")))
        };
        if let Some(j) = row.windows(2).position(|x| x[0] >= x[1]) {
            return bad(j + 1, format!("is not above the index before it, {}", row[j]));
        }
        if row.last().is_some_and(|&x| x as u64 >= hdr.n) {
            return bad(row.len() - 1, format!("is not below the vertex count {}", hdr.n));
        }
    }
    // Not reached: a fault the passes see is in some row.
    Err(InputError::new(path, None, K::IndexOutOfRange, format!("{} indices of rows {first_row}.. out of order or range", side.name())))
}

/// Whether every row of `idx` (offsets rebased by `offsets[0]`) is strictly ascending
/// and below `n`, in passes that vectorize: the descents over the whole slice must be
/// exactly those at row starts (a row start may go down or not), and as the rows
/// ascend, the largest index is below `n` iff every one is.
fn rows_are_sound(offsets: &[usize], idx: &[u32], n: u64) -> bool {
    let base = offsets[0];
    let descents = idx.windows(2).fold(0usize, |c, w| c + (w[0] >= w[1]) as usize);
    // The starts of the non-empty rows but the first: the only places a descent may be.
    let at_row_starts = offsets.windows(2).filter(|w| w[0] != w[1] && w[0] > base).fold(0usize, |c, w| {
        let k = w[0] - base;
        c + (idx[k - 1] >= idx[k]) as usize
    });
    let largest = idx.iter().fold(0u32, |m, &x| m.max(x));
    descents == at_row_starts && (idx.is_empty() || (largest as u64) < n)
}

/// The weights of out-edges `first..first + dst.len()`, checked numbers >= 0.
pub(crate) fn read_csr_weights(path: &Path, hdr: &CsrHeader, first: usize, dst: &mut [f64]) -> InputResult<()> {
    if dst.is_empty() {
        return Ok(());
    }
    let file = open(path)?;
    let at = hdr.weights_at() + first as u64 * 8;
    read_values(path, &file, at, dst, f64::from_le_bytes)?;
    if let Some(k) = dst.iter().position(|w| !(*w >= 0.0)) {
        return Err(InputError::new(
            path,
            None,
            K::NotNumeric,
            format!("weight {} of out-edge {} (byte offset {}) is negative or not a number", dst[k], first + k, at + 8 * k as u64),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::test_util::TempFile;

    /// The graph 0 -> 1, 0 -> 2, 2 -> 0 with ids 10, 20, 30 and weights.
    fn sample() -> (CsrHeader, Vec<u8>) {
        let hdr = CsrHeader { n: 3, m: 3, has_ids: true, has_weights: true };
        let mut b = hdr.encode().to_vec();
        let u64s = |b: &mut Vec<u8>, xs: &[u64]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
        let u32s = |b: &mut Vec<u8>, xs: &[u32]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
        u64s(&mut b, &[10, 20, 30]);
        u64s(&mut b, &[0, 2, 2, 3]);
        u32s(&mut b, &[1, 2, 0]);
        u64s(&mut b, &[0, 1, 2, 3]);
        u32s(&mut b, &[2, 0, 0]);
        for w in [1.5f64, 2.0, 0.0] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        (hdr, b)
    }

    #[test]
    fn reads_every_section_in_any_block() {
        let (hdr, bytes) = sample();
        let t = TempFile::with_bytes("g.gcsr", &bytes);
        assert!(is_csr_file(&t.0));
        assert_eq!(read_csr_header(&t.0).unwrap(), hdr);
        let mut ids = [0u64; 3];
        read_csr_ids(&t.0, &hdr, &mut ids).unwrap();
        assert_eq!(ids, [10, 20, 30]);
        for (side, want_off, want_idx) in [(CsrSide::Out, [0, 2, 2, 3], [1, 2, 0]), (CsrSide::In, [0, 1, 2, 3], [2, 0, 0])] {
            for lo in 0..3 {
                for hi in lo..=3 {
                    let mut off = vec![0usize; hi - lo + 1];
                    read_csr_offsets(&t.0, &hdr, side, lo, &mut off).unwrap();
                    assert_eq!(off, want_off[lo..=hi].to_vec());
                    let mut idx = vec![0u32; off[hi - lo] - off[0]];
                    read_csr_indices(&t.0, &hdr, side, lo, &off, &mut idx).unwrap();
                    assert_eq!(idx, want_idx[off[0]..off[hi - lo]].to_vec());
                }
            }
        }
        let mut w = [0.0; 2];
        read_csr_weights(&t.0, &hdr, 1, &mut w).unwrap();
        assert_eq!(w, [2.0, 0.0]);
    }

    #[test]
    fn the_vector_check_agrees_with_the_row_by_row_one() {
        let naive = |offsets: &[usize], idx: &[u32], n: u64| {
            offsets.windows(2).all(|w| {
                let row = &idx[w[0] - offsets[0]..w[1] - offsets[0]];
                row.windows(2).all(|x| x[0] < x[1]) && row.iter().all(|&x| (x as u64) < n)
            })
        };
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..3000 {
            let rows = 1 + next(6) as usize;
            let base = next(3) as usize;
            let mut offsets = vec![base];
            for _ in 0..rows {
                offsets.push(offsets.last().unwrap() + next(4) as usize);
            }
            let idx: Vec<u32> = (0..offsets[rows] - base).map(|_| next(7) as u32).collect();
            let n = 1 + next(7);
            assert_eq!(rows_are_sound(&offsets, &idx, n), naive(&offsets, &idx, n), "{offsets:?} {idx:?} {n}");
        }
    }

    #[test]
    fn damage_is_an_error_naming_the_file() {
        let (hdr, good) = sample();
        let check = |bytes: &[u8], kind: K, text: &str| {
            let t = TempFile::with_bytes("bad.gcsr", bytes);
            let e = (|| {
                let h = read_csr_header(&t.0)?;
                let mut ids = vec![0; h.n as usize];
                read_csr_ids(&t.0, &h, &mut ids)?;
                for side in [CsrSide::Out, CsrSide::In] {
                    let mut off = vec![0usize; h.n as usize + 1];
                    read_csr_offsets(&t.0, &h, side, 0, &mut off)?;
                    let mut idx = vec![0u32; h.m as usize];
                    read_csr_indices(&t.0, &h, side, 0, &off, &mut idx)?;
                }
                read_csr_weights(&t.0, &h, 0, &mut vec![0.0; h.m as usize])
            })()
            .unwrap_err();
            assert_eq!(e.kind, kind, "{e}");
            assert!(e.to_string().starts_with(&t.0.display().to_string()) && e.message.contains(text), "{e}");
        };
        for cut in [0, 5, 31, 32, 40, good.len() - 1] {
            let kind = if cut < 8 { K::Header } else { K::Truncated };
            check(&good[..cut], kind, if cut < 8 { "bad magic" } else { "truncated" });
        }
        let mut b = good.clone();
        b[0] = b'X';
        check(&b, K::Header, "bad magic");
        let mut b = good.clone();
        b[8] = 7;
        check(&b, K::Unsupported, "version 7");
        let mut b = good.clone();
        b.push(0);
        check(&b, K::EntryCount, "trailing");
        let out_idx = hdr.indices_at(CsrSide::Out) as usize;
        let mut b = good.clone();
        b[out_idx + 8..out_idx + 12].copy_from_slice(&3u32.to_le_bytes());
        check(&b, K::IndexOutOfRange, "out-edge index 3 of row 2");
        let mut b = good.clone();
        b[out_idx..out_idx + 4].copy_from_slice(&2u32.to_le_bytes());
        check(&b, K::IndexOutOfRange, "not above");
        let in_off = hdr.offsets_at(CsrSide::In) as usize;
        let mut b = good.clone();
        b[in_off + 8..in_off + 16].copy_from_slice(&2u64.to_le_bytes());
        b[in_off + 16..in_off + 24].copy_from_slice(&1u64.to_le_bytes());
        check(&b, K::Header, "in-edge offset of row 2");
        let mut b = good.clone();
        b[hdr.ids_at() as usize..hdr.ids_at() as usize + 8].copy_from_slice(&25u64.to_le_bytes());
        check(&b, K::Header, "not strictly ascending");
        let w = hdr.weights_at() as usize;
        let mut b = good.clone();
        b[w..w + 8].copy_from_slice(&f64::NAN.to_le_bytes());
        check(&b, K::NotNumeric, "weight NaN");
    }
}
