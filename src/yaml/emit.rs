//! The one block-style YAML writer for JSON values: two-space indents, list items at their
//! parent's indent (as sigs.k8s.io/yaml writes them), the first key of a mapping in a list on
//! the dash line, empty containers as `{}` / `[]`. What differs between its users — key order
//! and how a key or a scalar is spelt — is the [`Style`].

use serde_json::{Map, Value};

/// How keys and scalars are written.
pub struct Style<'a> {
    /// Keys in sorted order (sigs.k8s.io/yaml), else in the map's own order.
    pub sort_keys: bool,
    /// A mapping key.
    pub key: &'a dyn Fn(&str) -> String,
    /// A scalar, or an empty mapping or sequence.
    pub scalar: &'a dyn Fn(&Value) -> String,
}

/// The value as a YAML document body (no `---`), ending with a newline.
pub fn block(v: &Value, style: &Style<'_>) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => map(m, 0, false, style, &mut out),
        Value::Array(a) if !a.is_empty() => seq(a, 0, style, &mut out),
        other => {
            out.push_str(&(style.scalar)(other));
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A mapping at `level`; with `inline`, its first key continues the current (dash) line.
fn map(m: &Map<String, Value>, level: usize, inline: bool, style: &Style<'_>, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    if style.sort_keys {
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if !(inline && i == 0) {
            indent(out, level);
        }
        out.push_str(&(style.key)(k));
        out.push(':');
        after_key(v, level, style, out);
    }
}

fn seq(a: &[Value], level: usize, style: &Style<'_>, out: &mut String) {
    for item in a {
        indent(out, level);
        out.push('-');
        match item {
            Value::Object(m) if !m.is_empty() => {
                out.push(' ');
                map(m, level + 2, true, style, out);
            }
            Value::Array(b) if !b.is_empty() => {
                out.push('\n');
                seq(b, level + 2, style, out);
            }
            other => {
                out.push(' ');
                out.push_str(&(style.scalar)(other));
                out.push('\n');
            }
        }
    }
}

/// After `key:` — a nested block on the next lines, or a scalar on the same line.
fn after_key(v: &Value, level: usize, style: &Style<'_>, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            map(m, level + 2, false, style, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            seq(a, level, style, out);
        }
        other => {
            out.push(' ');
            out.push_str(&(style.scalar)(other));
            out.push('\n');
        }
    }
}

/// A string as a plain scalar when it reads back as the same string (letters first, a small
/// safe alphabet, not a YAML 1.1 boolean or null word), else double-quoted
/// ([`double_quoted`](super::double_quoted)): the conservative spelling for keys and strings.
pub fn plain_or_quoted(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " -_./'()".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && !s.ends_with(' ')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        s.to_owned()
    } else {
        super::double_quoted(s)
    }
}

/// A scalar as JSON spells it (strings by [`plain_or_quoted`]); an empty container as `{}` or
/// `[]`.
pub fn json_scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => plain_or_quoted(s),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}
