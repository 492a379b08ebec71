//! Source files and byte spans: the one place that turns a byte offset into a line and column.
//!
//! Every node of every document carries a [`Span`] into the [`SourceFile`] it came from; a
//! diagnostic resolves it to `line:column` only when it is rendered.

use std::sync::Arc;

/// A half-open byte range `[start, end)` into a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    /// A span that covers nothing, for values that have no place in a file (defaults, values
    /// computed by kpol).
    pub const EMPTY: Span = Span { start: 0, end: 0 };

    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }
}

/// A 1-based line and 1-based column (counted in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// A named source text with a line index.
#[derive(Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    /// For each [`BLOCK`] bytes of the text, how many line breaks come before it, then the
    /// total. Built on the first position asked for (perf: most files checked report none);
    /// a position then costs one count within its block (docs/PERFORMANCE.md).
    breaks_before: std::sync::OnceLock<Vec<u32>>,
}

/// Bytes per block of the line index.
const BLOCK: usize = 4096;

/// Shared handle to a source file: documents keep one so that their spans stay resolvable.
pub type Source = Arc<SourceFile>;

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
            breaks_before: std::sync::OnceLock::new(),
        }
    }

    fn breaks_before(&self) -> &[u32] {
        self.breaks_before.get_or_init(|| {
            let mut out = Vec::with_capacity(self.text.len() / BLOCK + 2);
            let mut n = 0;
            for block in self.text.as_bytes().chunks(BLOCK) {
                out.push(to_u32(n));
                n += count_breaks(block);
            }
            out.push(to_u32(n));
            out
        })
    }

    /// The name the user gave (a path as written, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Line and column of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let bytes = self.text.as_bytes();
        let offset = (offset as usize).min(bytes.len());
        let block = offset / BLOCK;
        let breaks =
            self.breaks_before()[block] as usize + count_breaks(&bytes[block * BLOCK..offset]);
        let start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
        let mut end = offset;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() + 1;
        LineCol {
            line: to_u32(breaks + 1),
            column: to_u32(column),
        }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: u32) -> &str {
        let bytes = self.text.as_bytes();
        // The line starts after the text's `line - 1`-th break.
        let k = (line as usize).saturating_sub(1);
        let start = if k == 0 {
            0
        } else {
            let index = self.breaks_before();
            if index.last().is_none_or(|&total| (total as usize) < k) {
                return "";
            }
            // The last block with fewer than `k` breaks before it holds the break.
            let block = index.partition_point(|&b| (b as usize) < k) - 1;
            let from = block * BLOCK;
            match nth_break(&bytes[from..], k - index[block] as usize - 1) {
                Some(i) => from + i + 1,
                None => return "",
            }
        };
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }
}

/// How many `\n` a text holds. perf: 64 bytes at a time, counted into one byte, which the
/// compiler turns into vector compares.
fn count_breaks(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(64);
    let mut n = 0;
    for chunk in &mut chunks {
        n += usize::from(chunk.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>());
    }
    n + chunks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// The position of the `n`-th `\n` (from 0) of a text. perf: whole 64-byte chunks with too
/// few are skipped by counting ([`count_breaks`]), not visited break by break.
fn nth_break(bytes: &[u8], mut n: usize) -> Option<usize> {
    let mut from = 0;
    for chunk in bytes.chunks(64) {
        let here = count_breaks(chunk);
        if n < here {
            return memchr::memchr_iter(b'\n', chunk).nth(n).map(|i| from + i);
        }
        n -= here;
        from += chunk.len();
    }
    None
}

/// Offsets are stored as `u32`: inputs larger than 4 GiB are refused before parsing.
pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let f = SourceFile::new("x", "a: 1\nbé: 2\n");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 1 });
        // "bé: " — 'é' is two bytes, one column.
        assert_eq!(f.line_col(10), LineCol { line: 2, column: 5 });
        assert_eq!(f.line_text(2), "bé: 2");
        assert_eq!(f.line_text(9), "");
    }

    /// Line and column the plain way: every byte before the offset.
    fn naive(text: &str, offset: usize) -> LineCol {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        LineCol {
            line: to_u32(before.matches('\n').count() + 1),
            column: to_u32(before[line_start..].chars().count() + 1),
        }
    }

    #[test]
    fn positions_agree_with_counting_every_byte_across_blocks() {
        // Lines of varied length (some empty, some with CRLF or multi-byte characters) over
        // several index blocks, including a text that ends exactly at a block's end.
        let mut text = String::new();
        let mut i = 0u32;
        while text.len() < 3 * BLOCK + 500 {
            let n = (i * 37 % 151) as usize;
            text.push_str(&"é".repeat(n % 5));
            text.push_str(&"x".repeat(n));
            text.push_str(if i.is_multiple_of(7) { "\r\n" } else { "\n" });
            i += 1;
        }
        let exact = text[..2 * BLOCK].to_owned();
        for t in [text.as_str(), exact.as_str(), "", "\n", "no break"] {
            let f = SourceFile::new("t", t);
            for offset in (0..=t.len() + 2)
                .step_by(7)
                .chain([BLOCK - 1, BLOCK, BLOCK + 1])
            {
                assert_eq!(
                    f.line_col(to_u32(offset)),
                    naive(t, offset),
                    "offset {offset}"
                );
            }
            let lines: Vec<&str> = t.split('\n').collect();
            for (i, want) in lines.iter().enumerate() {
                let got = f.line_text(to_u32(i + 1));
                assert_eq!(got, want.trim_end_matches('\r'), "line {}", i + 1);
            }
            assert_eq!(f.line_text(to_u32(lines.len() + 1)), "");
        }
    }
}
