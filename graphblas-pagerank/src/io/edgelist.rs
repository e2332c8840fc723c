//! Whitespace-separated edge list reader: one `src dst [weight]` per line,
//! 0-based vertex ids, `#` and `%` comment lines, blank lines allowed.
//!
//! There is no header, so the vertex count is either given by the caller or
//! is the global maximum id + 1, which only the union of all ranges knows:
//! each chunk reports its `max_id` for the distributed loader to all-reduce.

use super::scan::{FieldError, Scanner};
use super::{open, read_line_chunk, InputError, InputErrorKind as K, InputResult};
use crate::matrix::Coo;
use std::path::Path;

/// Reader options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeListOptions {
    /// Require a third (floating-point) weight field on every line. When
    /// false, lines must have exactly two fields.
    pub weighted: bool,
    /// If known, ids must be `< num_vertices` (checked per line, so the
    /// error names the line); otherwise only the u32 limit is checked.
    pub num_vertices: Option<u64>,
}

/// Edges parsed from one byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeListChunk {
    /// Edges (rows = sources, cols = targets). Shape is
    /// `num_vertices` if given, else local `max_id + 1`.
    pub coo: Coo<f64>,
    /// Number of edge lines parsed.
    pub entries: u64,
    /// Largest id seen in this range, if any edge was read.
    pub max_id: Option<u64>,
}

fn field_err(path: &Path, line: u64, what: &str, e: FieldError) -> InputError {
    match e {
        FieldError::Missing => InputError::new(path, Some(line), K::Malformed, format!("missing {what} (truncated line?)")),
        FieldError::NotNumeric => InputError::new(path, Some(line), K::NotNumeric, format!("{what} is not a valid non-negative integer")),
        FieldError::Overflow => InputError::new(path, Some(line), K::IndexOutOfRange, format!("{what} does not fit in 64 bits")),
    }
}

/// Parses the edge lines that start in `[start, end)`.
pub fn read_edge_list_range(path: &Path, opts: &EdgeListOptions, start: u64, end: u64) -> InputResult<EdgeListChunk> {
    let file = open(path)?;
    let chunk = read_line_chunk(path, &file, 0, 1, start, end)?;
    let limit = opts.num_vertices.unwrap_or(u32::MAX as u64 + 1).min(u32::MAX as u64 + 1);
    let mut coo: Coo<f64> = if opts.weighted { Coo::new_valued(0, 0) } else { Coo::new_pattern(0, 0) };
    let guess = chunk.bytes.len() / 12;
    coo.rows.reserve(guess);
    coo.cols.reserve(guess);
    let mut s = Scanner::new(&chunk.bytes, chunk.first_line);
    let mut entries = 0u64;
    let mut max_id: Option<u64> = None;
    while !s.at_end() {
        s.skip_blanks();
        match s.peek() {
            Some(b'#') | Some(b'%') | Some(b'\n') => {
                s.skip_line();
                continue;
            }
            None => break,
            _ => {}
        }
        let line = s.line;
        let u = s.uint().map_err(|e| field_err(path, line, "source id", e))?;
        let v = s.uint().map_err(|e| field_err(path, line, "target id", e))?;
        for (id, what) in [(u, "source"), (v, "target")] {
            if id >= limit {
                return Err(InputError::new(
                    path,
                    Some(line),
                    K::IndexOutOfRange,
                    format!("{what} id {id} out of range (must be < {limit})"),
                ));
            }
        }
        if opts.weighted {
            let w = s.float().map_err(|e| match e {
                FieldError::NotNumeric => InputError::new(path, Some(line), K::NotNumeric, "weight is not a valid number"),
                e => field_err(path, line, "weight", e),
            })?;
            coo.vals.as_mut().unwrap().push(w);
        }
        if !s.finish_line() {
            return Err(InputError::new(path, Some(line), K::Malformed, "too many fields on edge line"));
        }
        coo.rows.push(u as u32);
        coo.cols.push(v as u32);
        max_id = Some(max_id.unwrap_or(0).max(u).max(v));
        entries += 1;
    }
    let n = opts.num_vertices.unwrap_or(max_id.map_or(0, |m| m + 1)) as usize;
    coo.nrows = n;
    coo.ncols = n;
    Ok(EdgeListChunk { coo, entries, max_id })
}

/// Reads a whole edge list. The vertex count is `opts.num_vertices` or the
/// largest id + 1.
pub fn read_edge_list(path: &Path, opts: &EdgeListOptions) -> InputResult<Coo<f64>> {
    Ok(read_edge_list_range(path, opts, 0, u64::MAX)?.coo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::test_util::TempFile;
    use crate::io::{split_byte_ranges, InputErrorKind};

    const TEXT: &str = "# SNAP-style header\n0 1\n1\t2\n\n% other comment\n  2 0  \r\n5 3\n3 3";

    #[test]
    fn reads_edges_and_comments() {
        let t = TempFile::with_bytes("el.txt", TEXT.as_bytes());
        let c = read_edge_list_range(&t.0, &EdgeListOptions::default(), 0, u64::MAX).unwrap();
        assert_eq!(c.coo.rows, vec![0, 1, 2, 5, 3]);
        assert_eq!(c.coo.cols, vec![1, 2, 0, 3, 3]);
        assert_eq!((c.entries, c.max_id, c.coo.nrows), (5, Some(5), 6));
        assert_eq!(c.coo.vals, None);
    }

    #[test]
    fn byte_ranges_union_equals_whole() {
        let t = TempFile::with_bytes("el2.txt", TEXT.as_bytes());
        let o = EdgeListOptions { num_vertices: Some(6), ..Default::default() };
        let whole = read_edge_list(&t.0, &o).unwrap();
        let n = TEXT.len() as u64;
        for a in 0..=n {
            for b in a..=n {
                let mut acc = Coo::new_pattern(6, 6);
                for (s, e) in [(0, a), (a, b), (b, n)] {
                    acc.append(read_edge_list_range(&t.0, &o, s, e).unwrap().coo);
                }
                assert_eq!(acc, whole, "{a} {b}");
            }
        }
        for p in [2, 3, 7] {
            let parts: Vec<_> = split_byte_ranges(n, p).into_iter().map(|(s, e)| read_edge_list_range(&t.0, &o, s, e).unwrap()).collect();
            assert_eq!(parts.iter().map(|c| c.entries).sum::<u64>(), 5);
        }
    }

    #[test]
    fn weighted_and_errors() {
        let t = TempFile::with_bytes("w.txt", b"0 1 0.5\n1 0 2\n");
        let o = EdgeListOptions { weighted: true, num_vertices: None };
        assert_eq!(read_edge_list(&t.0, &o).unwrap().vals, Some(vec![0.5, 2.0]));

        let cases: [(&[u8], EdgeListOptions, InputErrorKind, u64); 6] = [
            (b"0 1\n# c\n1 -2\n", EdgeListOptions::default(), InputErrorKind::NotNumeric, 3),
            (b"0 1\n1\n", EdgeListOptions::default(), InputErrorKind::Malformed, 2),
            (b"0 1\n1 2 3\n", EdgeListOptions::default(), InputErrorKind::Malformed, 2),
            (b"0 1\n\n1 9\n", EdgeListOptions { weighted: false, num_vertices: Some(5) }, InputErrorKind::IndexOutOfRange, 3),
            (b"0 1 x\n", o, InputErrorKind::NotNumeric, 1),
            (b"0 4294967296\n", EdgeListOptions::default(), InputErrorKind::IndexOutOfRange, 1),
        ];
        for (text, opts, kind, line) in cases {
            let t = TempFile::with_bytes("bad.txt", text);
            let e = read_edge_list(&t.0, &opts).unwrap_err();
            assert_eq!((e.kind, e.line), (kind, Some(line)), "{e}");
            assert!(e.to_string().starts_with(&format!("{}:{line}:", t.0.display())), "{e}");
        }
    }
}
