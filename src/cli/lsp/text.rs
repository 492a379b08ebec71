//! Positions as the Language Server Protocol counts them (0-based lines, UTF-16 code units
//! within a line) to and from kpol's byte offsets and 1-based character columns, and `file:`
//! URIs to and from paths.

use std::path::{Path, PathBuf};

use lsp_types::{Position, Range, Uri};

/// The line starts of one text, for converting positions both ways.
pub struct Lines<'a> {
    text: &'a str,
    /// Byte offset where each line starts; the first is 0.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { text, starts }
    }

    /// The text of a 0-based line, without its line break.
    pub fn line(&self, line: u32) -> &'a str {
        let Some(&start) = self.starts.get(line as usize) else {
            return "";
        };
        let end = self
            .starts
            .get(line as usize + 1)
            .map_or(self.text.len(), |&e| e);
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }

    /// The position of a byte offset (clamped to the text, moved back to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while offset > 0 && !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        let units = self.text.get(start..offset).map_or(0, utf16_len);
        Position::new(to_u32(line), to_u32(units))
    }

    /// The byte offset of a position; a character past the line's end is its end, a line past
    /// the text's end is the text's end.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return self.text.len();
        };
        let line = self.line(position.line);
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= position.character {
                return start + i;
            }
            units += to_u32(c.len_utf16());
        }
        start + line.len()
    }

    /// The position of kpol's 1-based line and 1-based character column.
    pub fn at_line_col(&self, lc: kpol::source::LineCol) -> Position {
        let line = lc.line.saturating_sub(1);
        let text = self.line(line);
        let chars = lc.column.saturating_sub(1) as usize;
        let units: usize = text.chars().take(chars).map(char::len_utf16).sum();
        Position::new(line, to_u32(units))
    }

    /// The range of a byte span, for showing (not for edits): a block node's span ends after
    /// its last line break, which would mark the line below too, so it ends at the end of
    /// its last line instead.
    pub fn range(&self, span: kpol::source::Span) -> Range {
        self.shown(Range::new(
            self.position(span.start as usize),
            self.position(span.end as usize),
        ))
    }

    /// `range` without the start of the line below it (see [`Lines::range`]).
    pub fn shown(&self, range: Range) -> Range {
        if range.end.character == 0 && range.end.line > range.start.line {
            let line = range.end.line - 1;
            let end = Position::new(line, to_u32(utf16_len(self.line(line))));
            Range::new(range.start, end)
        } else {
            range
        }
    }
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether `position` lies within `range` (both ends included: a cursor just after a
/// flagged word still hovers it).
pub fn contains(range: &Range, position: Position) -> bool {
    range.start <= position && position <= range.end
}

/// Whether two ranges share a position.
pub fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The path of a `file:` URI (percent-decoded); `None` for another scheme.
pub fn uri_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///p` (empty authority) or `file://localhost/p`.
    let path = match rest.find('/') {
        Some(i) => &rest[i..],
        None => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes.get(i), bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'%'), Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let v = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 3;
            }
            (Some(&b), _, _) => {
                out.push(b);
                i += 1;
            }
            (None, _, _) => break,
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// The `file:` URI of an absolute path (bytes other than unreserved ones and `/`
/// percent-encoded).
pub fn path_uri(path: &Path) -> Option<Uri> {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Columns count UTF-16 units: a character outside the BMP is two, an accented letter one.
    #[test]
    fn positions_count_utf16_units_both_ways() {
        let text = "a: é\nb: 😀x\n";
        let lines = Lines::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(lines.position(x), Position::new(1, 5));
        assert_eq!(lines.offset(Position::new(1, 5)), x);
        assert_eq!(lines.position(text.len()), Position::new(2, 0));
        assert_eq!(lines.offset(Position::new(9, 0)), text.len());
        let lc = kpol::source::LineCol { line: 2, column: 5 };
        assert_eq!(lines.at_line_col(lc), Position::new(1, 5));
    }

    /// A path with a space and a non-ASCII name survives the round trip through a URI.
    #[test]
    fn file_uris_round_trip() {
        let p = Path::new("/tmp/a dir/ü.yaml");
        let uri = path_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20dir/%C3%BC.yaml");
        assert_eq!(uri_path(&uri).unwrap(), p);
        let other: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(uri_path(&other), None);
    }
}
