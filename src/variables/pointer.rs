//! `{{@}}`'s JMESPath: the substitution path of the current value, turned into a query
//! (`pkg/engine/variables/vars.go` `substituteVariablesIfAny`, with the helpers of
//! `pkg/utils/jsonpointer/pointer.go`: `ParsePath`, `SkipPast`, `SkipN`, `Prepend`,
//! `JMESPath`).
//!
//! A substitution path joins map keys and list indices with `/`; a `/` inside a key is
//! written `\/` (`jsonutils/traverse.go`). Reading it back, `\` takes the next character
//! as is and `"…"` keeps the `/` between the quotes, so `corp.com\/retention` is one
//! segment. Each segment then becomes a JMESPath step: a decimal `u64` an index `[n]`, a
//! plain identifier as is, anything else a quoted identifier (`."corp.com/retention"`).

/// The segments of a substitution path (`ParsePath`). Empty segments are dropped; a
/// trailing lone `\` reads as U+FFFD and a U+FFFD in the path ends it, as upstream's rune
/// decoding does.
pub(super) fn parse_path(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seg = String::new();
    let flush = |seg: &mut String, out: &mut Vec<String>| {
        if !seg.is_empty() {
            out.push(std::mem::take(seg));
        }
    };
    let (mut escaped, mut quoted) = (false, false);
    for c in raw.chars() {
        if escaped {
            seg.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            // Upstream unquotes only the closing quote itself, which fails: the quotes are
            // dropped and only stop `/` from splitting.
            quoted = !quoted;
        } else if c == '/' && !quoted {
            flush(&mut seg, &mut out);
        } else if c == char::REPLACEMENT_CHARACTER {
            flush(&mut seg, &mut out);
            return out;
        } else {
            seg.push(c);
        }
    }
    if escaped {
        seg.push(char::REPLACEMENT_CHARACTER);
    }
    flush(&mut seg, &mut out);
    out
}

/// `{{@}}`'s query for `path`: the segments after the first `foreach` (all of them when
/// there is none), less the first two (the rule's `mutate`/`validate` and the field; none
/// left when there are fewer than three), after `prefix`'s segments.
pub(super) fn at_query(prefix: &str, path: &str) -> String {
    let mut segs = parse_path(path);
    if let Some(i) = segs.iter().position(|s| s == "foreach") {
        segs.drain(..=i);
    }
    let rest = if segs.len() < 3 { &[][..] } else { &segs[2..] };
    let mut out = String::new();
    for s in prefix.split('.').chain(rest.iter().map(String::as_str)) {
        push_step(&mut out, s);
    }
    out
}

/// One JMESPath step for `seg` (`Pointer.JMESPath`).
fn push_step(out: &mut String, seg: &str) {
    if seg.bytes().all(|b| b.is_ascii_digit()) && seg.parse::<u64>().is_ok() {
        out.push('[');
        out.push_str(seg);
        out.push(']');
        return;
    }
    if !out.is_empty() {
        out.push('.');
    }
    if is_plain(seg) {
        out.push_str(seg);
        return;
    }
    out.push('"');
    for c in seg.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `seg` can be written unquoted: upstream's first-character table (`(`, letters,
/// `_`) and its every-character table (`)`, digits, letters, `_`) both hold, so a `(` is
/// always quoted and a `)` never forces quotes.
fn is_plain(seg: &str) -> bool {
    let Some(first) = seg.chars().next() else {
        return false;
    };
    (first == '(' || first == '_' || first.is_ascii_alphabetic())
        && seg
            .chars()
            .all(|c| c == ')' || c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MUTATE: &str = "/mutate/patchStrategicMerge";

    fn at(path: &str) -> String {
        at_query("request.object", &format!("{MUTATE}{path}"))
    }

    /// `ParsePath`: `\` escapes the next character, quotes keep `/`, empty segments drop.
    #[test]
    fn parse_path_reads_escapes_and_quotes() {
        assert_eq!(
            parse_path(r"/metadata/labels/corp.com\/retention"),
            ["metadata", "labels", "corp.com/retention"]
        );
        assert_eq!(parse_path(r#"/a/"b/c"/d"#), ["a", "b/c", "d"]);
        assert_eq!(parse_path(r"//a\\b//"), ["a\\b"]);
        assert_eq!(parse_path("/a\\"), ["a\u{fffd}"]);
        assert_eq!(parse_path("/a/b\u{fffd}c/d"), ["a", "b"]);
        assert!(parse_path("").is_empty());
    }

    /// A key with `/` stays one quoted step (it was split in two before).
    #[test]
    fn at_under_a_key_with_a_slash() {
        assert_eq!(
            at(r"/metadata/labels/corp.com\/retention"),
            r#"request.object.metadata.labels."corp.com/retention""#
        );
    }

    /// A key with dots is quoted, not read as nested fields.
    #[test]
    fn at_under_an_annotation_key_with_dots() {
        assert_eq!(
            at("/metadata/annotations/app.kubernetes.io.name"),
            r#"request.object.metadata.annotations."app.kubernetes.io.name""#
        );
    }

    /// List indices become `[n]`, with no dot before them.
    #[test]
    fn at_under_array_elements() {
        assert_eq!(
            at("/spec/containers/0/image"),
            "request.object.spec.containers[0].image"
        );
        assert_eq!(
            at("/spec/x/1/2/y-z"),
            r#"request.object.spec.x[1][2]."y-z""#
        );
        // Any `u64` in decimal is an index (a key `"0"` too); beyond `u64` it is a key.
        assert_eq!(at("/a/007"), "request.object.a[007]");
        assert_eq!(
            at("/a/18446744073709551616"),
            r#"request.object.a."18446744073709551616""#
        );
    }

    /// Plain identifiers are written as they are.
    #[test]
    fn at_under_a_plain_key() {
        assert_eq!(at("/metadata/name"), "request.object.metadata.name");
        assert_eq!(at("/spec/_a1"), "request.object.spec._a1");
        // The policy field alone, or less: the prefix alone.
        assert_eq!(at(""), "request.object");
        assert_eq!(at_query("request.object", "/mutate"), "request.object");
        assert_eq!(at_query("target", "/validate/pattern/x"), "target.x");
    }

    /// Everything up to the first `foreach` goes, then the first two segments.
    #[test]
    fn at_inside_foreach() {
        assert_eq!(
            at_query(
                "request.object",
                "/mutate/foreach/0/patchStrategicMerge/spec/containers/0/name"
            ),
            "request.object.spec.containers[0].name"
        );
    }

    /// Quoting: upstream's character tables and escapes.
    #[test]
    fn at_quotes_like_upstream() {
        assert_eq!(at("/x/(a"), r#"request.object.x."(a""#);
        assert_eq!(at("/x/a)"), "request.object.x.a)");
        assert_eq!(at("/x/1a"), r#"request.object.x."1a""#);
        assert_eq!(at(r#"/x/"a"#), "request.object.x.a");
        assert_eq!(at(r"/x/a\\b"), r#"request.object.x."a\\b""#);
        assert_eq!(
            at("/x/a\"\u{1}\n\u{e9}"),
            "request.object.x.\"a\\u0001\\n\u{e9}\""
        );
        assert_eq!(
            at("/x/\\\"\u{1}\n\t\u{e9}"),
            "request.object.x.\"\\\"\\u0001\\n\\t\u{e9}\""
        );
    }
}
