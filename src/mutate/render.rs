//! YAML rendering of (parts of) a tree, for nodes a patch adds or replaces and for showing
//! whole resources. Block style, two-space indentation, strings plain when they read back as
//! the same string and double-quoted otherwise (JSON escapes, and YAML's for what JSON leaves:
//! `crate::yaml::double_quoted`).

use crate::yaml::{Node, Value, resolve_plain};

/// A scalar (or an empty collection) on one line.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => number(*f),
        Value::Str(s) => string(s),
        Value::Seq(items) if items.is_empty() => "[]".to_owned(),
        Value::Map(m) if m.is_empty() => "{}".to_owned(),
        Value::Seq(_) | Value::Map(_) => flow(v),
    }
}

/// Integral floats print as integers (resources hold integers as floats, match.md §6).
fn number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else if f.is_nan() {
        ".nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.to_owned()
    } else {
        format!("{f}")
    }
}

/// A string, plain when safe.
pub fn string(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_owned()
    } else {
        crate::yaml::double_quoted(s)
    }
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@` \t".contains(first) || s.ends_with([' ', '\t', ':']) {
        return false;
    }
    if s.contains(": ")
        || s.contains(" #")
        || s.chars().any(|c| {
            c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                )
        })
    {
        return false;
    }
    matches!(resolve_plain(s), Value::Str(ref r) if r == s)
}

/// One-line flow rendering as JSON (valid YAML flow, and right for `.json` files).
pub fn flow(v: &Value) -> String {
    flow_styled(v, true)
}

/// One-line YAML flow rendering: strings plain where they read back unchanged.
pub(crate) fn flow_yaml(v: &Value) -> String {
    flow_styled(v, false)
}

fn flow_styled(v: &Value, json: bool) -> String {
    let text = |s: &str| {
        // Flow indicators end a plain scalar inside a flow collection.
        if json || s.contains([',', '[', ']', '{', '}']) {
            json_string(s)
        } else {
            string(s)
        }
    };
    match v {
        Value::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|i| flow_styled(&i.value, json)).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Map(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", text(k), flow_styled(&v.value, json)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Str(s) => text(s),
        Value::Float(f) if !f.is_finite() && json => "null".to_owned(),
        other => scalar(other),
    }
}

fn json_string(s: &str) -> String {
    crate::yaml::double_quoted(s)
}

/// Whether a value renders as an indented block (a non-empty collection).
pub(crate) fn is_block(v: &Value) -> bool {
    matches!(v, Value::Seq(i) if !i.is_empty()) || matches!(v, Value::Map(m) if !m.is_empty())
}

/// The value of a `key:` entry: ` scalar` on the key's line, or a newline and a block indented
/// by `indent`.
pub(crate) fn entry_value(v: &Value, indent: usize) -> String {
    if is_block(v) {
        format!("\n{}", block(v, indent))
    } else {
        format!(" {}", scalar(v))
    }
}

/// A non-empty collection as block lines at `indent` (no trailing newline).
pub fn block(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match v {
        Value::Map(m) if !m.is_empty() => m
            .iter()
            .map(|(k, val)| format!("{pad}{}:{}", string(k), entry_value(&val.value, indent + 2)))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Seq(items) if !items.is_empty() => items
            .iter()
            .map(|item| {
                if is_block(&item.value) {
                    let inner = block(&item.value, indent + 2);
                    format!("{pad}- {}", &inner[(indent + 2).min(inner.len())..])
                } else {
                    format!("{pad}- {}", scalar(&item.value))
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => format!("{pad}{}", scalar(other)),
    }
}

/// A whole document as block YAML with a trailing newline.
pub fn document(n: &Node) -> String {
    if is_block(&n.value) {
        format!("{}\n", block(&n.value, 0))
    } else {
        format!("{}\n", scalar(&n.value))
    }
}
