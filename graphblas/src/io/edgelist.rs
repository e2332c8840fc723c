//! Whitespace-separated edge list reader: one `src dst [weight]` per line,
//! `#` and `%` comment lines, blank lines allowed. The weight, when not asked for
//! ([`EdgeListOptions::weighted`]), is optional, must be a number, and is ignored.
//! Ids are non-negative integers; [`read_edge_list_range`] (the local API) takes them
//! as 0-based indices below 2^32, [`read_edge_list_ids_range`] (the distributed
//! loader) as arbitrary `u64` labels.
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
    /// Require a third (floating-point) weight field on every line and keep it as
    /// the value. When false, a third field is optional: it must be a number and is
    /// ignored (pattern semantics: an edge is an edge whatever its weight).
    pub weighted: bool,
    /// If known, ids must be `< num_vertices` (checked per line, so the
    /// error names the line); otherwise only the u32 limit is checked
    /// ([`read_edge_list_range`]; [`read_edge_list_ids_range`] takes any `u64`).
    pub num_vertices: Option<u64>,
    /// The ids are 1-based: an id 0 is an error naming its line. (Ids are kept as
    /// they are; this only checks the convention the caller declared.)
    pub(crate) one_based: bool,
    /// With `weighted`: a negative or NaN weight is an error naming its line
    /// (shortest-path distances need non-negative weights).
    pub(crate) nonnegative_weights: bool,
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
    pub(crate) max_id: Option<u64>,
}

/// Edges parsed from one byte range with their ids as written (any `u64`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct EdgeIdsChunk {
    pub ids: EdgeIds,
    /// The largest id of the range, if it has an edge.
    pub(crate) max_id: Option<u64>,
    /// With [`EdgeListOptions::weighted`]: the weight of every edge, parallel to `ids`.
    pub weights: Option<Vec<f64>>,
}

/// Sources and targets: 32-bit while every id of the range fits (half the memory and
/// memory traffic of the common case), else 64-bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeIds {
    Narrow { src: Vec<u32>, dst: Vec<u32> },
    Wide { src: Vec<u64>, dst: Vec<u64> },
}

impl Default for EdgeIds {
    fn default() -> Self {
        EdgeIds::Narrow { src: Vec::new(), dst: Vec::new() }
    }
}

impl EdgeIds {
    pub fn len(&self) -> usize {
        match self {
            EdgeIds::Narrow { src, .. } => src.len(),
            EdgeIds::Wide { src, .. } => src.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The edges as `u64` pairs (copies).
    pub fn to_u64(&self) -> (Vec<u64>, Vec<u64>) {
        match self {
            EdgeIds::Narrow { src, dst } => (src.iter().map(|&x| x as u64).collect(), dst.iter().map(|&x| x as u64).collect()),
            EdgeIds::Wide { src, dst } => (src.clone(), dst.clone()),
        }
    }
}

fn field_err(path: &Path, line: u64, what: &str, e: FieldError) -> InputError {
    match e {
        FieldError::Missing => InputError::new(path, Some(line), K::Malformed, format!("missing {what} (truncated line?)")),
        FieldError::NotNumeric => InputError::new(path, Some(line), K::NotNumeric, format!("{what} is not a valid non-negative integer")),
        FieldError::Overflow => InputError::new(path, Some(line), K::IndexOutOfRange, format!("{what} does not fit in 64 bits")),
    }
}

/// Where the parse loop puts what it reads.
trait Sink {
    /// Room for about `n` edges.
    fn reserve(&mut self, n: usize) -> InputResult<()>;
    fn edge(&mut self, line: u64, u: u64, v: u64, weight: Option<f64>) -> InputResult<()>;
}

/// The parse loop shared by both readers: calls `edge(line, src, dst, weight)` for
/// every edge line of the range (weight only if `opts.weighted` or present).
fn parse_edge_lines(
    path: &Path,
    opts: &EdgeListOptions,
    start: u64,
    end: u64,
    sink: &mut impl Sink,
) -> InputResult<()> {
    let file = open(path)?;
    let chunk = read_line_chunk(path, &file, 0, 1, start, end)?;
    sink.reserve(chunk.bytes.len() / 12)?;
    let mut s = Scanner::new(&chunk.bytes, chunk.first_line);
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
        if opts.one_based && (u == 0 || v == 0) {
            let what = if u == 0 { "source" } else { "target" };
            return Err(InputError::new(path, Some(line), K::IndexOutOfRange, format!("{what} id 0 in an edge list declared 1-based")));
        }
        let weight_err = |e| match e {
            FieldError::NotNumeric => InputError::new(path, Some(line), K::NotNumeric, "weight is not a valid number"),
            e => field_err(path, line, "weight", e),
        };
        let w = if opts.weighted {
            let w = s.float().map_err(weight_err)?;
            if opts.nonnegative_weights {
                super::check_nonnegative_weight(path, line, w)?;
            }
            Some(w)
        } else {
            s.skip_blanks();
            match s.peek() {
                None | Some(b'\n') => None,
                Some(_) => Some(s.float().map_err(weight_err)?),
            }
        };
        if !s.finish_line() {
            return Err(InputError::new(path, Some(line), K::Malformed, "too many fields on edge line (expected `source target [weight]`)"));
        }
        sink.edge(line, u, v, w)?;
    }
    Ok(())
}

/// Parses the edge lines that start in `[start, end)`; ids must fit the u32 index
/// range (see [`EdgeListOptions::num_vertices`]).
pub fn read_edge_list_range(path: &Path, opts: &EdgeListOptions, start: u64, end: u64) -> InputResult<EdgeListChunk> {
    struct Local<'a> {
        path: &'a Path,
        limit: u64,
        weighted: bool,
        coo: Coo<f64>,
        entries: u64,
        max_id: Option<u64>,
    }
    impl Sink for Local<'_> {
        fn reserve(&mut self, n: usize) -> InputResult<()> {
            self.coo.rows.reserve(n);
            self.coo.cols.reserve(n);
            Ok(())
        }
        fn edge(&mut self, line: u64, u: u64, v: u64, w: Option<f64>) -> InputResult<()> {
            for (id, what) in [(u, "source"), (v, "target")] {
                if id >= self.limit {
                    let msg = format!("{what} id {id} out of range (must be < {})", self.limit);
                    return Err(InputError::new(self.path, Some(line), K::IndexOutOfRange, msg));
                }
            }
            self.coo.rows.push(u as u32);
            self.coo.cols.push(v as u32);
            if self.weighted {
                self.coo.vals.as_mut().unwrap().push(w.unwrap_or(0.0));
            }
            self.max_id = Some(self.max_id.unwrap_or(0).max(u).max(v));
            self.entries += 1;
            Ok(())
        }
    }
    let limit = opts.num_vertices.unwrap_or(u32::MAX as u64 + 1).min(u32::MAX as u64 + 1);
    let coo = if opts.weighted { Coo::new_valued(0, 0) } else { Coo::new_pattern(0, 0) };
    let mut l = Local { path, limit, weighted: opts.weighted, coo, entries: 0, max_id: None };
    parse_edge_lines(path, opts, start, end, &mut l)?;
    let n = opts.num_vertices.unwrap_or(l.max_id.map_or(0, |m| m + 1)) as usize;
    l.coo.nrows = n;
    l.coo.ncols = n;
    Ok(EdgeListChunk { coo: l.coo, entries: l.entries, max_id: l.max_id })
}

/// Parses the edge lines that start in `[start, end)`, keeping the ids as written:
/// any `u64` (the distributed loader relabels them densely). Weights are kept only
/// with [`EdgeListOptions::weighted`].
/// Memory is claimed fallibly: a range too large for memory is an error naming the
/// bytes it needed, not an abort.
pub(crate) fn read_edge_list_ids_range(path: &Path, opts: &EdgeListOptions, start: u64, end: u64) -> InputResult<EdgeIdsChunk> {
    struct Ids<'a> {
        path: &'a Path,
        range: (u64, u64),
        limit: Option<u64>,
        c: EdgeIdsChunk,
        max: u64,
    }
    impl Ids<'_> {
        fn oom(&self, bytes: usize) -> InputError {
            let (a, b) = self.range;
            InputError::new(self.path, None, K::Io, format!("out of memory: cannot allocate {bytes} bytes for the edges of bytes {a}..{b}"))
        }
        fn grow(&mut self, more: usize) -> InputResult<()> {
            let len = self.c.ids.len();
            let ok = match &mut self.c.ids {
                EdgeIds::Narrow { src, dst } => src.try_reserve(more).and_then(|_| dst.try_reserve(more)).map_err(|_| 8),
                EdgeIds::Wide { src, dst } => src.try_reserve(more).and_then(|_| dst.try_reserve(more)).map_err(|_| 16),
            };
            let ok = ok.and_then(|_| match &mut self.c.weights {
                Some(w) => w.try_reserve(more).map_err(|_| 8),
                None => Ok(()),
            });
            ok.map_err(|per| self.oom((len + more).saturating_mul(per)))
        }
        /// From 32-bit to 64-bit storage (the first id >= 2^32).
        fn widen(&mut self) -> InputResult<()> {
            if let EdgeIds::Narrow { src, dst } = &self.c.ids {
                let want = src.len().max(1024) * 2;
                let mut s: Vec<u64> = Vec::new();
                let mut d: Vec<u64> = Vec::new();
                if s.try_reserve_exact(want).and_then(|_| d.try_reserve_exact(want)).is_err() {
                    return Err(self.oom(want.saturating_mul(16)));
                }
                s.extend(src.iter().map(|&x| x as u64));
                d.extend(dst.iter().map(|&x| x as u64));
                self.c.ids = EdgeIds::Wide { src: s, dst: d };
            }
            Ok(())
        }
    }
    impl Sink for Ids<'_> {
        fn reserve(&mut self, n: usize) -> InputResult<()> {
            self.grow(n)
        }
        #[inline]
        fn edge(&mut self, line: u64, u: u64, v: u64, w: Option<f64>) -> InputResult<()> {
            if let Some(limit) = self.limit {
                for (id, what) in [(u, "source"), (v, "target")] {
                    if id >= limit {
                        let msg = format!("{what} id {id} out of range (must be < {limit})");
                        return Err(InputError::new(self.path, Some(line), K::IndexOutOfRange, msg));
                    }
                }
            }
            let m = u.max(v);
            if m > u32::MAX as u64 {
                self.widen()?;
            }
            let len = self.c.ids.len();
            let full = match &self.c.ids {
                EdgeIds::Narrow { src, .. } => src.capacity() == len,
                EdgeIds::Wide { src, .. } => src.capacity() == len,
            };
            if full {
                self.grow(len.max(1024))?;
            }
            match &mut self.c.ids {
                EdgeIds::Narrow { src, dst } => {
                    src.push(u as u32);
                    dst.push(v as u32);
                }
                EdgeIds::Wide { src, dst } => {
                    src.push(u);
                    dst.push(v);
                }
            }
            if let (Some(ws), Some(w)) = (self.c.weights.as_mut(), w) {
                ws.push(w);
            }
            self.max = self.max.max(m);
            Ok(())
        }
    }
    let c = EdgeIdsChunk { weights: opts.weighted.then(Vec::new), ..Default::default() };
    let mut ids = Ids { path, range: (start, end), limit: opts.num_vertices, c, max: 0 };
    parse_edge_lines(path, opts, start, end, &mut ids)?;
    ids.c.max_id = (!ids.c.ids.is_empty()).then_some(ids.max);
    Ok(ids.c)
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
    fn optional_weight_is_ignored_and_any_u64_id_is_kept() {
        let t = TempFile::with_bytes("w3.txt", b"0 1 0.5\n1 2\n2 9223372036854775813 7\n");
        let c = read_edge_list(&t.0, &EdgeListOptions::default());
        assert!(c.is_err(), "the u32 reader refuses ids >= 2^32");
        let c = read_edge_list_ids_range(&t.0, &EdgeListOptions::default(), 0, u64::MAX).unwrap();
        assert!(matches!(c.ids, EdgeIds::Wide { .. }));
        assert_eq!(c.ids.to_u64(), (vec![0, 1, 2], vec![1, 2, (1 << 63) + 5]));
        assert_eq!(c.max_id, Some((1 << 63) + 5));
        let c = read_edge_list_ids_range(&t.0, &EdgeListOptions::default(), 0, 10).unwrap();
        assert_eq!(c.ids, EdgeIds::Narrow { src: vec![0, 1], dst: vec![1, 2] });
        assert_eq!(c.max_id, Some(2));
        let t = TempFile::with_bytes("w4.txt", b"0 1 0.5\n1 2\n");
        let c = read_edge_list(&t.0, &EdgeListOptions::default()).unwrap();
        assert_eq!((c.rows, c.cols, c.vals), (vec![0, 1], vec![1, 2], None));
    }

    #[test]
    fn weighted_and_errors() {
        let t = TempFile::with_bytes("w.txt", b"0 1 0.5\n1 0 2\n");
        let o = EdgeListOptions { weighted: true, ..Default::default() };
        assert_eq!(read_edge_list(&t.0, &o).unwrap().vals, Some(vec![0.5, 2.0]));

        let cases: [(&[u8], EdgeListOptions, InputErrorKind, u64); 8] = [
            (b"0 1 0.5\n1 2 w\n", EdgeListOptions::default(), InputErrorKind::NotNumeric, 2),
            (b"1 2\n2 0\n", EdgeListOptions { one_based: true, ..Default::default() }, InputErrorKind::IndexOutOfRange, 2),
            (b"0 1\n# c\n1 -2\n", EdgeListOptions::default(), InputErrorKind::NotNumeric, 3),
            (b"0 1\n1\n", EdgeListOptions::default(), InputErrorKind::Malformed, 2),
            (b"0 1\n1 2 3 4\n", EdgeListOptions::default(), InputErrorKind::Malformed, 2),
            (b"0 1\n\n1 9\n", EdgeListOptions { num_vertices: Some(5), ..Default::default() }, InputErrorKind::IndexOutOfRange, 3),
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
