//! Word wrapping of the human format's headlines: a message longer than the line is broken at
//! spaces, each further line indented to where the message starts (a hanging indent).
//!
//! Promises: the text is never changed — the lines joined with one space each give it back,
//! runs of spaces included — and a word is never split, so a word wider than the line stands
//! alone on a line that overflows. Widths count characters of the [printable] text, never the
//! colour escapes around the level tag (the caller passes the prefix's visible width).
//!
//! [printable]: super::printable

use std::io::{self, Write};

/// The line width when standard output is not a terminal (a CI log, a pipe, a file).
pub const DEFAULT_WIDTH: usize = 100;

/// Below this many columns left after the prefix, continuation lines are indented by
/// [`NARROW_INDENT`] instead of the prefix's width: a long `policy/rule` would leave a column
/// a word wide.
const MIN_TEXT_WIDTH: usize = 20;
const NARROW_INDENT: usize = 4;

/// The width of the human output: `--width N` (0: no wrapping), else on a terminal the
/// `COLUMNS` variable when it is a positive number, else the terminal's width, else
/// [`DEFAULT_WIDTH`]; anywhere else [`DEFAULT_WIDTH`], so a log or a file reads the same on
/// every machine. `None`: never wrap.
pub fn width(flag: Option<usize>, terminal: bool) -> Option<usize> {
    let width = match flag {
        Some(n) => n,
        None if terminal => std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .or_else(|| {
                console::Term::stdout()
                    .size_checked()
                    .map(|(_, cols)| usize::from(cols))
            })
            .unwrap_or(DEFAULT_WIDTH),
        None => DEFAULT_WIDTH,
    };
    (width > 0).then_some(width)
}

/// The lines of `text` after a prefix `prefix_width` columns wide, in a line of `width`
/// columns: the first line's budget is what the prefix leaves, the others' what the indent
/// leaves. Each line but the first is meant to follow [`indent`] spaces.
pub fn lines(text: &str, prefix_width: usize, width: Option<usize>) -> (Vec<&str>, usize) {
    let indent = indent(prefix_width, width);
    let Some(width) = width else {
        return (vec![text], indent);
    };
    let mut out = Vec::new();
    let mut budget = width.saturating_sub(prefix_width);
    // Greedy over the words between single spaces (a run of spaces gives empty words, so
    // joining the lines with one space gives the text back): a word joins the line when it
    // fits, else it starts the next one; the first word of a line always stays on it.
    let (mut start, mut used) = (0usize, 0usize);
    let mut offset = 0usize;
    for (n, word) in text.split(' ').enumerate() {
        let chars = word.chars().count();
        if n > 0 && used + 1 + chars > budget {
            out.push(&text[start..offset - 1]);
            start = offset;
            used = chars;
            budget = width.saturating_sub(indent);
        } else {
            used += chars + usize::from(n > 0);
        }
        offset += word.len() + 1;
    }
    out.push(&text[start..]);
    (out, indent)
}

/// The indent of continuation lines.
fn indent(prefix_width: usize, width: Option<usize>) -> usize {
    match width {
        Some(w) if w.saturating_sub(prefix_width) < MIN_TEXT_WIDTH => NARROW_INDENT.min(w / 2),
        _ => prefix_width,
    }
}

/// Writes `prefix` (which may carry colour escapes; `prefix_width` is what it shows) and
/// `text` wrapped, then a line feed.
pub fn write_wrapped(
    out: &mut dyn Write,
    prefix: &str,
    prefix_width: usize,
    text: &str,
    width: Option<usize>,
) -> io::Result<()> {
    let (lines, indent) = lines(text, prefix_width, width);
    let mut lines = lines.into_iter();
    write!(out, "{prefix}{}", lines.next().unwrap_or_default())?;
    for line in lines {
        write!(out, "\n{:indent$}{line}", "")?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(text: &str, prefix: usize, width: usize) -> Vec<&str> {
        lines(text, prefix, Some(width)).0
    }

    /// Every line fits (with its prefix or indent) unless it is one word too long.
    fn fits(text: &str, prefix: usize, width: usize) {
        let (got, indent) = lines(text, prefix, Some(width));
        assert_eq!(got.join(" "), text, "text preserved");
        for (n, line) in got.iter().enumerate() {
            let lead = if n == 0 { prefix } else { indent };
            let wide = lead + line.chars().count();
            assert!(
                wide <= width || !line.contains(' '),
                "line {n} {line:?} is {wide} wide in {width}"
            );
        }
    }

    #[test]
    fn a_short_message_is_one_line() {
        assert_eq!(wrap("short text", 10, 40), ["short text"]);
        assert_eq!(lines("any length", 10, None).0, ["any length"]);
    }

    #[test]
    fn a_long_message_breaks_at_spaces_under_the_message_start() {
        let text = "validation error: every container must set resources.limits.memory \
                    and resources.limits.cpu in rule check-limits";
        let got = wrap(text, 20, 60);
        assert_eq!(
            got,
            [
                "validation error: every container must",
                "set resources.limits.memory and",
                "resources.limits.cpu in rule",
                "check-limits"
            ]
        );
        fits(text, 20, 60);
        let mut out = Vec::new();
        let text = "aaaa bbbb cccc dddd eeee ffff";
        // The prefix's escapes are not counted: its width is given.
        let prefix = "\x1b[1;31mfail\x1b[0m[p/r]: ";
        write_wrapped(&mut out, prefix, 11, text, Some(35)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{prefix}aaaa bbbb cccc dddd eeee\n           ffff\n")
        );
    }

    #[test]
    fn a_word_wider_than_the_line_is_kept_whole() {
        let long = "x".repeat(50);
        let text = format!("see {long} now");
        assert_eq!(wrap(&text, 4, 30), ["see", long.as_str(), "now"]);
        fits(&text, 4, 30);
        // One word alone, wider than everything: one line.
        assert_eq!(wrap(&long, 10, 20), [long.as_str()]);
    }

    #[test]
    fn runs_of_spaces_and_utf8_survive_wrapping() {
        let text = "ça  coûte   très cher — 名前 名前 名前 ok  done";
        for width in 8..40 {
            for prefix in [0, 3, 7] {
                fits(text, prefix, width);
            }
        }
    }

    #[test]
    fn a_long_prefix_falls_back_to_a_narrow_indent() {
        let (got, indent) = lines("one two three four five six", 70, Some(80));
        assert_eq!(indent, NARROW_INDENT);
        assert_eq!(got.join(" "), "one two three four five six");
    }

    #[test]
    fn the_width_is_fixed_off_a_terminal_and_the_flag_wins() {
        assert_eq!(width(None, false), Some(DEFAULT_WIDTH));
        assert_eq!(width(Some(72), false), Some(72));
        assert_eq!(width(Some(0), true), None);
    }
}
