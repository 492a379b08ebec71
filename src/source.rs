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
    /// Built on the first position asked for (perf: most files checked report none).
    line_starts: std::sync::OnceLock<Vec<u32>>,
}

/// Shared handle to a source file: documents keep one so that their spans stay resolvable.
pub type Source = Arc<SourceFile>;

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| to_u32(i + 1)))
                .collect()
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
        let offset = offset.min(to_u32(self.text.len()));
        let line_idx = match self.line_starts().binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts()[line_idx] as usize;
        let mut end = offset as usize;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() + 1;
        LineCol {
            line: to_u32(line_idx + 1),
            column: to_u32(column),
        }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: u32) -> &str {
        let idx = (line as usize).saturating_sub(1);
        let starts = self.line_starts();
        let Some(&start) = starts.get(idx) else {
            return "";
        };
        let end = starts.get(idx + 1).map_or(self.text.len(), |&e| e as usize);
        self.text[start as usize..end].trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }
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
}
