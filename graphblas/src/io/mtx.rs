//! MatrixMarket coordinate reader (`pattern`/`real`/`integer`,
//! `general`/`symmetric`), whole-file or by byte range.

use super::scan::{FieldError, Scanner};
use super::{open, read_at_full, read_line_chunk, InputError, InputErrorKind as K, InputResult};
use crate::matrix::Coo;
use std::path::Path;

/// Value field of a MatrixMarket file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxField {
    /// Floating-point values.
    Real,
    /// Integer values (stored as `f64`).
    Integer,
    /// No values: structure only.
    Pattern,
}

/// Symmetry of a MatrixMarket file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MtxSymmetry {
    /// Every entry is listed.
    General,
    /// Only one triangle is listed; off-diagonal entries are mirrored.
    Symmetric,
}

/// Parsed header and size line, plus where the data starts. Every process
/// reads this itself; it is small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MtxHeader {
    /// Declared rows.
    pub nrows: u64,
    /// Declared columns.
    pub ncols: u64,
    /// Declared number of entry lines (before symmetric expansion).
    pub nnz: u64,
    /// Value field.
    pub field: MtxField,
    /// Symmetry.
    pub(crate) symmetry: MtxSymmetry,
    /// Byte offset of the first line after the size line.
    pub(crate) data_start: u64,
    /// Line number of that line.
    pub(crate) data_line: u64,
    /// Line number of the size line (named in entry-count errors).
    pub(crate) size_line: u64,
}

/// The entries parsed from one byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct MtxChunk {
    /// Entries (0-based; symmetric files already mirrored). Values are
    /// `None` for `pattern` files.
    pub coo: Coo<f64>,
    /// Number of entry lines parsed (what the size line counts); sum this
    /// over all ranges and pass it to [`check_mtx_entry_count`].
    pub entries: u64,
    /// Line number just past the last line of this range.
    pub(crate) end_line: u64,
}

fn field_err(path: &Path, line: u64, what: &str, e: FieldError) -> InputError {
    match e {
        FieldError::Missing => InputError::new(path, Some(line), K::Malformed, format!("missing {what} (truncated line?)")),
        FieldError::NotNumeric => InputError::new(path, Some(line), K::NotNumeric, format!("{what} is not a valid number")),
        FieldError::Overflow => InputError::new(path, Some(line), K::IndexOutOfRange, format!("{what} does not fit in 64 bits")),
    }
}

/// Reads and validates the banner, comments and size line.
pub fn read_mtx_header(path: &Path) -> InputResult<MtxHeader> {
    let file = open(path)?;
    // Read a growing prefix until the size line is complete (comment blocks
    // can be long, but are rarely more than a few KiB).
    let mut buf = Vec::new();
    let mut want = 64 * 1024;
    loop {
        buf.resize(want, 0);
        let got = read_at_full(path, &file, 0, &mut buf)?;
        buf.truncate(got);
        match parse_header(path, &buf, got < want)? {
            Some(h) => return Ok(h),
            None => want *= 4,
        }
    }
}

/// Parses the header from a prefix; `Ok(None)` means "need more bytes".
fn parse_header(path: &Path, buf: &[u8], at_eof: bool) -> InputResult<Option<MtxHeader>> {
    // Complete lines only: a line without '\n' is complete only at EOF.
    let mut pos = 0usize;
    let mut line = 1u64;
    let next_line = |pos: &mut usize| -> Option<Option<(usize, usize)>> {
        if *pos >= buf.len() {
            return Some(None);
        }
        let start = *pos;
        match buf[start..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                *pos = start + i + 1;
                Some(Some((start, start + i)))
            }
            None if at_eof => {
                *pos = buf.len();
                Some(Some((start, buf.len())))
            }
            None => None,
        }
    };
    let Some(first) = next_line(&mut pos) else { return Ok(None) };
    let (b0, b1) = first.unwrap_or((0, 0));
    let banner = String::from_utf8_lossy(&buf[b0..b1]).to_ascii_lowercase();
    let words: Vec<&str> = banner.split_whitespace().collect();
    let herr = |kind, msg: String| InputError::new(path, Some(1), kind, msg);
    if words.first() != Some(&"%%matrixmarket") {
        return Err(herr(K::Header, "missing '%%MatrixMarket' banner".into()));
    }
    if words.len() != 5 {
        return Err(herr(K::Header, "banner must be '%%MatrixMarket matrix coordinate <field> <symmetry>'".into()));
    }
    if words[1] != "matrix" {
        return Err(herr(K::Unsupported, format!("object '{}' is not supported (only 'matrix')", words[1])));
    }
    if words[2] != "coordinate" {
        return Err(herr(K::Unsupported, format!("format '{}' is not supported (only 'coordinate')", words[2])));
    }
    let field = match words[3] {
        "real" | "double" => MtxField::Real,
        "integer" => MtxField::Integer,
        "pattern" => MtxField::Pattern,
        other => return Err(herr(K::Unsupported, format!("field '{other}' is not supported"))),
    };
    let symmetry = match words[4] {
        "general" => MtxSymmetry::General,
        "symmetric" => MtxSymmetry::Symmetric,
        other => return Err(herr(K::Unsupported, format!("symmetry '{other}' is not supported"))),
    };
    // Comments and blank lines, then the size line.
    let (s0, s1) = loop {
        line += 1;
        match next_line(&mut pos) {
            None => return Ok(None),
            Some(None) => {
                return Err(InputError::new(path, Some(line), K::Header, "missing size line 'rows cols entries'"))
            }
            Some(Some((a, b))) => {
                let text = &buf[a..b];
                let first = text.iter().position(|&c| !matches!(c, b' ' | b'\t' | b'\r'));
                match first.map(|k| text[k]) {
                    None | Some(b'%') => continue,
                    Some(_) => break (a, b),
                }
            }
        }
    };
    let size_line = line;
    let mut sc = Scanner::new(&buf[s0..s1], size_line);
    let mut dims = [0u64; 3];
    for (k, name) in ["row count", "column count", "entry count"].iter().enumerate() {
        dims[k] = sc.uint().map_err(|e| {
            let mut err = field_err(path, size_line, &format!("size line {name}"), e);
            err.kind = K::Header;
            err
        })?;
    }
    if !sc.finish_line() {
        return Err(InputError::new(path, Some(size_line), K::Header, "size line has more than 3 fields"));
    }
    if dims[0] > u32::MAX as u64 || dims[1] > u32::MAX as u64 {
        return Err(InputError::new(path, Some(size_line), K::Unsupported, "dimensions above 2^32-1 are not supported"));
    }
    if symmetry == MtxSymmetry::Symmetric && dims[0] != dims[1] {
        return Err(InputError::new(path, Some(size_line), K::Header, "symmetric matrix must be square"));
    }
    Ok(Some(MtxHeader {
        nrows: dims[0],
        ncols: dims[1],
        nnz: dims[2],
        field,
        symmetry,
        data_start: pos as u64,
        data_line: size_line + 1,
        size_line,
    }))
}

/// Parses the entry lines that start in `[start, end)`. Comment and blank
/// lines inside the data are skipped (and not counted).
pub fn read_mtx_range(path: &Path, header: &MtxHeader, start: u64, end: u64) -> InputResult<MtxChunk> {
    read_mtx_range_checked(path, header, start, end, false)
}

/// As [`read_mtx_range`]; with `nonnegative_values`, a negative or NaN value is an
/// error naming its line (shortest-path weights).
pub(crate) fn read_mtx_range_checked(path: &Path, header: &MtxHeader, start: u64, end: u64, nonnegative_values: bool) -> InputResult<MtxChunk> {
    let file = open(path)?;
    let chunk = read_line_chunk(path, &file, header.data_start, header.data_line, start, end)?;
    let (nr, nc) = (header.nrows as usize, header.ncols as usize);
    let mut coo = match header.field {
        MtxField::Pattern => Coo::new_pattern(nr, nc),
        _ => Coo::new_valued(nr, nc),
    };
    // Rough capacity guess: ~16 bytes per line.
    let guess = chunk.bytes.len() / 16;
    coo.rows.reserve(guess);
    coo.cols.reserve(guess);
    if let Some(v) = coo.vals.as_mut() {
        v.reserve(guess);
    }
    let mut s = Scanner::new(&chunk.bytes, chunk.first_line);
    let mut entries = 0u64;
    let symmetric = header.symmetry == MtxSymmetry::Symmetric;
    while !s.at_end() {
        s.skip_blanks();
        match s.peek() {
            Some(b'%') | Some(b'\n') => {
                s.skip_line();
                continue;
            }
            None => break,
            _ => {}
        }
        let line = s.line;
        let i = s.uint().map_err(|e| field_err(path, line, "row index", e))?;
        let j = s.uint().map_err(|e| field_err(path, line, "column index", e))?;
        if i == 0 || i > header.nrows {
            return Err(InputError::new(path, Some(line), K::IndexOutOfRange, format!("row index {i} outside 1..={}", header.nrows)));
        }
        if j == 0 || j > header.ncols {
            return Err(InputError::new(path, Some(line), K::IndexOutOfRange, format!("column index {j} outside 1..={}", header.ncols)));
        }
        let v = match header.field {
            MtxField::Pattern => None,
            MtxField::Real => Some(s.float().map_err(|e| field_err(path, line, "value", e))?),
            MtxField::Integer => Some(s.int_as_f64().map_err(|e| field_err(path, line, "integer value", e))?),
        };
        if let (true, Some(w)) = (nonnegative_values, v) {
            super::check_nonnegative_weight(path, line, w)?;
        }
        if !s.finish_line() {
            return Err(InputError::new(path, Some(line), K::Malformed, "too many fields on entry line"));
        }
        let (r, c) = ((i - 1) as u32, (j - 1) as u32);
        coo.rows.push(r);
        coo.cols.push(c);
        if let (Some(vals), Some(v)) = (coo.vals.as_mut(), v) {
            vals.push(v);
        }
        if symmetric && r != c {
            coo.rows.push(c);
            coo.cols.push(r);
            if let (Some(vals), Some(v)) = (coo.vals.as_mut(), v) {
                vals.push(v);
            }
        }
        entries += 1;
    }
    Ok(MtxChunk { coo, entries, end_line: s.line })
}

/// Checks the global entry count (sum of [`MtxChunk::entries`] over all
/// ranges) against the size line; `last_line` is the line just past the end
/// of the file, named when entries are missing.
pub(crate) fn check_mtx_entry_count(path: &Path, header: &MtxHeader, total_entries: u64, last_line: u64) -> InputResult<()> {
    if total_entries == header.nnz {
        return Ok(());
    }
    let (line, msg) = if total_entries < header.nnz {
        (last_line, format!(
            "file ends with {total_entries} entries but the size line (line {}) declares {} (truncated file?)",
            header.size_line, header.nnz
        ))
    } else {
        (header.size_line, format!("size line declares {} entries but the file has {total_entries}", header.nnz))
    };
    Err(InputError::new(path, Some(line), K::EntryCount, msg))
}

/// Reads a whole MatrixMarket file (one range covering everything) and
/// checks the entry count.
pub fn read_mtx(path: &Path) -> InputResult<(MtxHeader, Coo<f64>)> {
    let header = read_mtx_header(path)?;
    let chunk = read_mtx_range(path, &header, 0, u64::MAX)?;
    check_mtx_entry_count(path, &header, chunk.entries, chunk.end_line)?;
    Ok((header, chunk.coo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::test_util::TempFile;
    use crate::io::{split_byte_ranges, InputErrorKind};

    const GENERAL: &str = "%%MatrixMarket matrix coordinate real general\n% a comment\n%\n3 4 4\n1 1 1.5\n2 3 -2\n% inner comment\n3 4 1e2\n1 4 0.25\n";

    #[test]
    fn reads_general_real() {
        let t = TempFile::with_bytes("g.mtx", GENERAL.as_bytes());
        let (h, coo) = read_mtx(&t.0).unwrap();
        assert_eq!((h.nrows, h.ncols, h.nnz, h.size_line, h.data_line), (3, 4, 4, 4, 5));
        assert_eq!(coo.rows, vec![0, 1, 2, 0]);
        assert_eq!(coo.cols, vec![0, 2, 3, 3]);
        assert_eq!(coo.vals, Some(vec![1.5, -2.0, 100.0, 0.25]));
    }

    #[test]
    fn reads_symmetric_pattern_and_integer() {
        let t = TempFile::with_bytes("s.mtx", b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n");
        let (_, coo) = read_mtx(&t.0).unwrap();
        assert_eq!(coo.vals, None);
        assert_eq!(coo.rows, vec![0, 1, 0, 2, 1]);
        assert_eq!(coo.cols, vec![0, 0, 1, 1, 2]);
        let t = TempFile::with_bytes("i.mtx", b"%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +3");
        let (_, coo) = read_mtx(&t.0).unwrap();
        assert_eq!(coo.vals, Some(vec![-7.0, 3.0]));
    }

    /// Every way of splitting the file into 3 byte ranges yields the same
    /// entries, and errors report the true line number.
    #[test]
    fn byte_ranges_union_equals_whole_file() {
        let t = TempFile::with_bytes("r.mtx", GENERAL.as_bytes());
        let h = read_mtx_header(&t.0).unwrap();
        let (_, whole) = read_mtx(&t.0).unwrap();
        let n = GENERAL.len() as u64;
        for a in 0..=n {
            for b in a..=n {
                let mut total = 0;
                let mut acc = Coo::new_valued(3, 4);
                for (s, e) in [(0, a), (a, b), (b, n)] {
                    let c = read_mtx_range(&t.0, &h, s, e).unwrap();
                    total += c.entries;
                    acc.append(c.coo);
                }
                assert_eq!(total, 4);
                assert_eq!(acc, whole, "split {a} {b}");
            }
        }
        for p in [1, 2, 5, 40] {
            let total: u64 = split_byte_ranges(n, p).iter().map(|&(s, e)| read_mtx_range(&t.0, &h, s, e).unwrap().entries).sum();
            check_mtx_entry_count(&t.0, &h, total, 0).unwrap();
        }
    }

    fn err_of(text: &str) -> InputError {
        let t = TempFile::with_bytes("e.mtx", text.as_bytes());
        let e = read_mtx(&t.0).unwrap_err();
        assert!(e.to_string().starts_with(&t.0.display().to_string()), "{e}");
        e
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n1 x 2.0\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::NotNumeric, Some(4)));
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::IndexOutOfRange, Some(4)));
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n0 1 1.0\n1 1 2.0\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::IndexOutOfRange, Some(3)));
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 abc\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::NotNumeric, Some(4)));
        // Truncated in the middle of the last line.
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2");
        assert_eq!((e.kind, e.line), (InputErrorKind::Malformed, Some(4)));
        // Truncated at a line boundary: fewer entries than declared.
        let e = err_of("%%MatrixMarket matrix coordinate real general\n%c\n2 2 3\n1 1 1.0\n2 2 1.0\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::EntryCount, Some(6)));
        assert!(e.message.contains("line 3"), "{e}");
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 1.0\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::EntryCount, Some(2)));
        let e = err_of("%%MatrixMarket matrix array real general\n2 2\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::Unsupported, Some(1)));
        let e = err_of("%MatrixMarket matrix coordinate real general\n2 2 1\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::Header, Some(1)));
        let e = err_of("%%MatrixMarket matrix coordinate real general\n% only comments\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::Header, Some(3)));
        let e = err_of("%%MatrixMarket matrix coordinate real general\n2 two 1\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::Header, Some(2)));
        let e = err_of("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n");
        assert_eq!((e.kind, e.line), (InputErrorKind::Malformed, Some(3)));
        let e = read_mtx(Path::new("/no/such/file.mtx")).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::Io);
        assert!(e.to_string().contains("/no/such/file.mtx"));
    }

    #[test]
    fn range_error_line_numbers_are_global() {
        let mut text = String::from("%%MatrixMarket matrix coordinate integer general\n% c\n100 100 50\n");
        for k in 0..50 {
            if k == 37 {
                text.push_str("5 5 oops\n");
            } else {
                text.push_str(&format!("{} {} {}\n", k + 1, k + 1, k));
            }
        }
        let t = TempFile::with_bytes("big.mtx", text.as_bytes());
        let h = read_mtx_header(&t.0).unwrap();
        let n = text.len() as u64;
        let mut errs = Vec::new();
        for (s, e) in split_byte_ranges(n, 4) {
            if let Err(err) = read_mtx_range(&t.0, &h, s, e) {
                errs.push(err);
            }
        }
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].line, Some(3 + 37 + 1));
        assert_eq!(errs[0].kind, InputErrorKind::NotNumeric);
    }

    #[test]
    fn long_comment_block_header() {
        let mut text = String::from("%%MatrixMarket matrix coordinate pattern general\n");
        for _ in 0..20_000 {
            text.push_str("% padding padding padding\n");
        }
        text.push_str("2 2 1\n2 1\n");
        let t = TempFile::with_bytes("long.mtx", text.as_bytes());
        let (h, coo) = read_mtx(&t.0).unwrap();
        assert_eq!(h.size_line, 20_002);
        assert_eq!((coo.rows, coo.cols), (vec![1], vec![0]));
    }
}
