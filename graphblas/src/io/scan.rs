//! Hand-written byte scanner for the text readers.
//!
//! Parsing goes straight over the byte buffer: no `String` per line, no
//! UTF-8 validation of whole lines, no `split_whitespace`. Integers are
//! accumulated digit by digit with overflow checks; floats use a fast path
//! for plain integers and fall back to the standard library's (correctly
//! rounding) parser on the token only.

/// Counts `\n` bytes. Works on 255-byte blocks with a `u8` counter per
/// block, which LLVM turns into 16-byte-wide compare/subtract SIMD; this is
/// how the readers find the true line number of a range start quickly.
pub(crate) fn count_newlines(buf: &[u8]) -> usize {
    let mut total = 0usize;
    for block in buf.chunks(255) {
        let c = block.iter().fold(0u8, |acc, &b| acc.wrapping_add((b == b'\n') as u8));
        total += c as usize;
    }
    total
}

/// Why a field could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldError {
    /// End of line/file reached before the field.
    Missing,
    /// The token is not a number of the expected kind.
    NotNumeric,
    /// The number does not fit in 64 bits.
    Overflow,
}

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

#[inline]
fn is_sep(b: u8) -> bool {
    is_blank(b) || b == b'\n'
}

/// Cursor over a buffer of whole lines, tracking the current line number.
pub(crate) struct Scanner<'a> {
    buf: &'a [u8],
    pos: usize,
    /// 1-based line number of the line the cursor is on.
    pub line: u64,
}

impl<'a> Scanner<'a> {
    pub fn new(buf: &'a [u8], first_line: u64) -> Self {
        Scanner { buf, pos: 0, line: first_line }
    }

    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    pub(crate) fn skip_blanks(&mut self) {
        while self.pos < self.buf.len() && is_blank(self.buf[self.pos]) {
            self.pos += 1;
        }
    }

    /// Next byte without consuming it.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Skips to the start of the next line.
    pub(crate) fn skip_line(&mut self) {
        match self.buf[self.pos..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                self.pos += i + 1;
                self.line += 1;
            }
            None => self.pos = self.buf.len(),
        }
    }

    /// Requires that only blanks remain on the line, then moves past it.
    /// Returns false (without moving) if another field follows.
    #[inline]
    pub(crate) fn finish_line(&mut self) -> bool {
        self.skip_blanks();
        match self.peek() {
            None => true,
            Some(b'\n') => {
                self.pos += 1;
                self.line += 1;
                true
            }
            Some(_) => false,
        }
    }

    /// The next whitespace-delimited token on the current line.
    #[inline]
    pub fn token(&mut self) -> Result<&'a [u8], FieldError> {
        self.skip_blanks();
        let start = self.pos;
        while self.pos < self.buf.len() && !is_sep(self.buf[self.pos]) {
            self.pos += 1;
        }
        if self.pos == start {
            Err(FieldError::Missing)
        } else {
            Ok(&self.buf[start..self.pos])
        }
    }

    /// Parses an unsigned decimal integer field.
    #[inline]
    pub(crate) fn uint(&mut self) -> Result<u64, FieldError> {
        self.skip_blanks();
        let start = self.pos;
        let mut v: u64 = 0;
        let mut overflow = false;
        while let Some(&b) = self.buf.get(self.pos) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            match v.checked_mul(10).and_then(|x| x.checked_add(d as u64)) {
                Some(x) => v = x,
                None => overflow = true,
            }
            self.pos += 1;
        }
        match self.peek() {
            Some(b) if !is_sep(b) => {
                // Consume the rest of the bad token for a clean state.
                while self.pos < self.buf.len() && !is_sep(self.buf[self.pos]) {
                    self.pos += 1;
                }
                return Err(FieldError::NotNumeric);
            }
            _ => {}
        }
        if self.pos == start {
            return Err(FieldError::Missing);
        }
        if overflow {
            return Err(FieldError::Overflow);
        }
        Ok(v)
    }

    /// Parses a floating-point field (also accepts integers, `inf`, `nan`).
    #[inline]
    pub(crate) fn float(&mut self) -> Result<f64, FieldError> {
        let tok = self.token()?;
        parse_f64(tok)
    }

    /// Parses a signed integer field and returns it as `f64`
    /// (MatrixMarket `integer` values).
    #[inline]
    pub(crate) fn int_as_f64(&mut self) -> Result<f64, FieldError> {
        let tok = self.token()?;
        let (neg, digits) = match tok[0] {
            b'-' => (true, &tok[1..]),
            b'+' => (false, &tok[1..]),
            _ => (false, tok),
        };
        let v = parse_digits(digits)?;
        let v = v as f64;
        Ok(if neg { -v } else { v })
    }
}

fn parse_digits(digits: &[u8]) -> Result<u64, FieldError> {
    if digits.is_empty() {
        return Err(FieldError::NotNumeric);
    }
    let mut v: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(FieldError::NotNumeric);
        }
        v = v.checked_mul(10).and_then(|x| x.checked_add(d as u64)).ok_or(FieldError::Overflow)?;
    }
    Ok(v)
}

/// Float parse: exact fast path for short integers, std parser otherwise.
pub(crate) fn parse_f64(tok: &[u8]) -> Result<f64, FieldError> {
    let (neg, digits) = match tok[0] {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(|b| b.is_ascii_digit()) {
        let v = parse_digits(digits)? as f64; // < 1e15 < 2^53: exact
        return Ok(if neg { -v } else { v });
    }
    std::str::from_utf8(tok).ok().and_then(|s| s.parse::<f64>().ok()).ok_or(FieldError::NotNumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_newlines_across_block_boundaries() {
        for len in [0usize, 1, 254, 255, 256, 1000, 70_000] {
            let buf: Vec<u8> = (0..len).map(|i| if i % 3 == 0 { b'\n' } else { b'x' }).collect();
            assert_eq!(count_newlines(&buf), buf.iter().filter(|&&b| b == b'\n').count());
        }
        // A block of 255 newlines must not overflow the u8 counter.
        assert_eq!(count_newlines(&[b'\n'; 1020]), 1020);
    }

    #[test]
    fn scanner_fields() {
        let mut s = Scanner::new(b"  12\t34 \r\n5 x7 1e3\n-2.5e-1", 7);
        assert_eq!(s.uint(), Ok(12));
        assert_eq!(s.uint(), Ok(34));
        assert_eq!(s.uint(), Err(FieldError::Missing));
        assert!(s.finish_line());
        assert_eq!(s.line, 8);
        assert_eq!(s.uint(), Ok(5));
        assert_eq!(s.uint(), Err(FieldError::NotNumeric));
        assert_eq!(s.float(), Ok(1000.0));
        assert!(s.finish_line());
        assert_eq!(s.float(), Ok(-0.25));
        assert!(s.finish_line());
        assert!(s.at_end());
        assert_eq!(s.line, 9);
    }

    #[test]
    fn overflow_and_ints() {
        let mut s = Scanner::new(b"99999999999999999999999 -17 +3 1.5", 1);
        assert_eq!(s.uint(), Err(FieldError::Overflow));
        assert_eq!(s.int_as_f64(), Ok(-17.0));
        assert_eq!(s.int_as_f64(), Ok(3.0));
        assert_eq!(s.int_as_f64(), Err(FieldError::NotNumeric));
        assert_eq!(parse_f64(b"nan").map(|x| x.is_nan()), Ok(true));
        assert_eq!(parse_f64(b"abc"), Err(FieldError::NotNumeric));
        assert_eq!(parse_f64(b"12345678901234567890"), Ok(12345678901234567890.0));
    }
}
