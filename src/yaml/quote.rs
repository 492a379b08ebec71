//! Strings written back out: one double-quoted form that reads as the same string in JSON, in
//! YAML 1.2 and in the YAML 1.1 of go-yaml v2.

use std::fmt::Write as _;

/// `s` double-quoted, as `serde_json` writes it (`\"`, `\\`, `\n`, `\t`, `\u001b` …) and, beyond
/// JSON's rules, with the characters a YAML stream may not hold or reads as line breaks escaped
/// too: DEL, the C1 controls (NEL among them), the line and paragraph separators, the byte
/// order mark and the non-characters U+FFFE/U+FFFF. Any string round-trips, whatever it holds.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\0'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    #[test]
    fn every_string_reads_back_as_itself_in_json_and_yaml() {
        let mut all: String = ('\0'..='\u{2ff}').collect();
        all.push_str("\u{2028}\u{2029}\u{feff}\u{fffe}\u{ffff}名前 \"quoted\" \\ 'single'");
        for s in [
            all.as_str(),
            "plain",
            "",
            "\n::error file=x::pwned",
            "::stop-commands::tok",
        ] {
            let q = double_quoted(s);
            assert_eq!(serde_json::from_str::<String>(&q).ok().as_deref(), Some(s));
            let docs = parse_documents(&format!("k: {q}\n"), Limits::default());
            let back = docs
                .ok()
                .and_then(|d| d.first().and_then(|d| d.root.get("k").cloned()));
            assert_eq!(back.as_ref().and_then(|n| n.as_str()), Some(s), "{q}");
        }
        // Where JSON is enough, the bytes are serde_json's.
        let common = "a\tb\n\"c\"\\ \u{1b}é";
        assert_eq!(
            double_quoted(common),
            serde_json::to_string(common).unwrap_or_default()
        );
    }
}
