//! From a place in a scalar's value back to the byte of the file that wrote it: an error found
//! inside a string a policy holds (a CEL or JMESPath syntax error) is shown at its character,
//! not at the start of the string.
//!
//! The value and its written text are walked side by side. Plain and quoted scalars, literal
//! and folded blocks map exactly: a line break the value keeps or folds to a space is matched
//! to the break written, indentation and other layout whitespace is passed over, `''` in a
//! single-quoted scalar and every escape of a double-quoted one (`\n`, `\"`, `\x41`, `\u00e9`,
//! an escaped line break) are decoded where they are written. Where the two do not line up
//! (a value that did not come from this text, such as an alias copied from elsewhere), there
//! is no answer and the caller points at the scalar's start.

use crate::source::{LineCol, SourceFile, Span, to_u32};

/// The byte offset in `written` (the scalar's text as in the file, quotes and block header
/// included) of the byte at `offset` in `value` (its parsed value); `None` when the two do not
/// line up. An `offset` at the end of `value` maps to just past its last character.
pub(crate) fn value_offset_in_source(written: &str, value: &str, offset: usize) -> Option<usize> {
    if offset > value.len() || !value.is_char_boundary(offset) {
        return None;
    }
    let (mut src, quote) = match written.as_bytes().first() {
        Some(b'\'') => (1, Some('\'')),
        Some(b'"') => (1, Some('"')),
        // A block scalar's value starts on the line after its header (`|-`, `>2 # note`).
        Some(b'|' | b'>') => (written.find('\n')? + 1, None),
        _ => (0, None),
    };
    for (at, want) in value.char_indices() {
        let (found, next) = match_char(written, src, want, quote)?;
        if at == offset {
            return Some(found);
        }
        src = next;
    }
    (offset == value.len()).then_some(src)
}

/// The file position of byte `offset` of the string `value` that the node at `span` of
/// `source` holds; `None` where the written text does not line up with it.
pub(crate) fn position_in_scalar(
    source: &SourceFile,
    span: Span,
    value: &str,
    offset: usize,
) -> Option<LineCol> {
    let at = value_offset_in_source(source.slice(span), value, offset)?;
    Some(source.line_col(span.start + to_u32(at)))
}

/// Finds the written form of the value character `want` at or after `src`: layout whitespace
/// before it is passed over. Returns where it starts and where the text after it starts.
fn match_char(
    written: &str,
    mut src: usize,
    want: char,
    quote: Option<char>,
) -> Option<(usize, usize)> {
    loop {
        let c = written.get(src..)?.chars().next()?;
        let after = src + c.len_utf8();
        if quote == Some('"') && c == '\\' {
            let (decoded, len) = escape(&written[after..])?;
            match decoded {
                Some(d) if d == want => return Some((src, after + len)),
                // An escaped line break writes nothing: go on after it.
                None => {
                    src = after + len;
                    continue;
                }
                Some(_) => return None,
            }
        }
        if quote == Some('\'') && c == '\'' && want == '\'' {
            // `''` writes one quote.
            return written[after..]
                .starts_with('\'')
                .then_some((src, after + 1));
        }
        if c == want {
            return Some((src, after));
        }
        // A folded line break is a space in the value; other layout whitespace is skipped.
        if matches!(c, ' ' | '\t' | '\r' | '\n') {
            if want == ' ' && c == '\n' {
                return Some((src, after));
            }
            src = after;
            continue;
        }
        return None;
    }
}

/// The character a double-quoted escape (the text after its `\`) writes, `None` for an escaped
/// line break (with the indentation after it), and the escape's length after the `\`.
fn escape(rest: &str) -> Option<(Option<char>, usize)> {
    let c = rest.chars().next()?;
    let simple = match c {
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        'e' => '\x1b',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        'x' | 'u' | 'U' => {
            let n = match c {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let hex = rest.get(1..1 + n)?;
            let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
            return Some((Some(ch), 1 + n));
        }
        '\n' | '\r' => {
            let skipped = rest
                .bytes()
                .take_while(|b| matches!(b, b'\n' | b'\r' | b' ' | b'\t'))
                .count();
            return Some((None, skipped));
        }
        _ => return None,
    };
    Some((Some(simple), c.len_utf8()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    /// Parses `doc` (one `k:` entry), finds `needle` in the value and maps its offset back:
    /// the written text there must start with `expect`.
    fn maps(doc: &str, needle: &str, expect: &str) {
        let docs = parse_documents(doc, Limits::default()).unwrap();
        let node = docs[0].root.get("k").unwrap();
        let value = node.as_str().unwrap();
        let at = value.find(needle).unwrap();
        let span = node.span;
        let written = &doc[span.start as usize..span.end as usize];
        let mapped = value_offset_in_source(written, value, at)
            .unwrap_or_else(|| panic!("no mapping in {written:?}"));
        assert!(
            written[mapped..].starts_with(expect),
            "{doc:?}: at {mapped} {:?}",
            &written[mapped..]
        );
    }

    #[test]
    fn plain_and_quoted_scalars_map_exactly() {
        maps("k: a {{ b.[ }}\n", "[", "[ }}");
        maps("k: 'it''s {{ b.[ }}'\n", "[", "[ }}");
        maps("k: \"tab\\t\\u00e9 \\\"q\\\" {{ b.[ }}\"\n", "[", "[ }}");
        maps("k: \"x\\x41{{ b.[ }}\"\n", "[", "[ }}");
    }

    #[test]
    fn multi_line_scalars_map_exactly() {
        // Plain and quoted scalars folded over lines.
        maps("k: first\n  second {{ b.~ }}\n", "~", "~ }}");
        maps("k: 'first\n\n  second {{ b.~ }}'\n", "~", "~ }}");
        maps("k: \"first \\\n   second {{ b.~ }}\"\n", "~", "~ }}");
        // Literal and folded blocks, with headers and a blank line.
        maps("k: |-\n  -one\n\n  two {{ b.~ }}\n", "~", "~ }}");
        maps(
            "k: >2 # note\n  one\n  two\n\n  three {{ b.~ }}\n",
            "~",
            "~ }}",
        );
        maps("k: |2\n    indented more\n  {{ b.~ }}\n", "~", "~ }}");
    }

    #[test]
    fn the_end_of_the_value_and_mismatches() {
        assert_eq!(value_offset_in_source("'ab'", "ab", 2), Some(3));
        assert_eq!(value_offset_in_source("abc", "abc", 0), Some(0));
        // Not this scalar's value.
        assert_eq!(value_offset_in_source("abc", "xyz", 1), None);
        assert_eq!(value_offset_in_source("ab", "ab", 9), None);
        assert_eq!(value_offset_in_source("é", "é", 1), None);
    }
}
