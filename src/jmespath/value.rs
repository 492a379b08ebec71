//! Helpers on kpol's value tree with the meaning Go gives them in Kyverno's JMESPath fork:
//! truthiness (`isFalse`), `reflect.DeepEqual` (an `int64` never equals a `float64`),
//! `fmt.Sprint` (`%v`) and `encoding/json` output.
//!
//! Values are `crate::yaml::Node`s; numbers keep the int/float distinction of validate.md
//! §2.1 (JSON numbers are `Float`; `elementIndex` and `compare()` results are `Int`).

use crate::number::{format_go_g, format_json_float};
use crate::yaml::{Map, Node, Value};

pub fn node(v: Value) -> Node {
    Node::synthetic(v)
}

pub fn null() -> Node {
    Node::null()
}

pub fn string(s: impl Into<String>) -> Node {
    node(Value::Str(s.into()))
}

pub fn float(f: f64) -> Node {
    node(Value::Float(f))
}

pub fn boolean(b: bool) -> Node {
    node(Value::Bool(b))
}

pub fn seq(items: Vec<Node>) -> Node {
    node(Value::Seq(items))
}

pub fn map(entries: Vec<(String, Node)>) -> Node {
    let mut m = Map::with_capacity(entries.len());
    for (k, v) in entries {
        m.insert(k, crate::source::Span::EMPTY, v);
    }
    node(Value::Map(m))
}

/// go-jmespath `isFalse`: null, false, "", [] and {} are false; numbers (even 0) are true.
pub(crate) fn is_false(v: &Node) -> bool {
    match &v.value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Str(s) => s.is_empty(),
        Value::Seq(s) => s.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Int(_) | Value::Float(_) => false,
    }
}

/// `reflect.DeepEqual` on decoded JSON: maps compare as sets of entries, `Int(1)` differs
/// from `Float(1.0)`, NaN differs from itself.
pub(crate) fn deep_equal(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => false,
    }
}

/// Go `fmt.Sprint(v)` of a decoded JSON value: floats as `%v` (`1e+06`), null as `<nil>`,
/// lists as `[a b]`, maps as `map[k:v]` with sorted keys.
pub(crate) fn go_sprint(v: &Node) -> String {
    let mut out = String::new();
    sprint_into(v, &mut out);
    out
}

fn sprint_into(v: &Node, out: &mut String) {
    match &v.value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_go_g(*f)),
        Value::Str(s) => out.push_str(s),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                sprint_into(item, out);
            }
            out.push(']');
        }
        Value::Map(m) => {
            let mut keys: Vec<&str> = m.keys().collect();
            keys.sort_unstable();
            out.push_str("map[");
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                if let Some(val) = m.get(k) {
                    sprint_into(val, out);
                }
            }
            out.push(']');
        }
    }
}

/// `encoding/json.Marshal` output: compact, map keys sorted (Go maps), floats in Go's JSON
/// form, HTML-sensitive characters escaped as Go does (`<`, `>`, `&` → `\u003c` ...).
pub(crate) fn to_json_string(v: &Node) -> String {
    let mut out = String::new();
    json_into(v, &mut out);
    out
}

fn json_into(v: &Node, out: &mut String) {
    match &v.value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) if f.is_finite() => out.push_str(&format_json_float(*f)),
        Value::Float(_) => out.push_str("null"),
        Value::Str(s) => json_string(s, out),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_into(item, out);
            }
            out.push(']');
        }
        Value::Map(m) => {
            let mut keys: Vec<&str> = m.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(k, out);
                out.push(':');
                if let Some(val) = m.get(k) {
                    json_into(val, out);
                }
            }
            out.push('}');
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Decodes JSON the way Go's `json.Unmarshal` into `interface{}` does: every number is a
/// float64.
pub fn from_json(v: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    match v {
        J::Null => null(),
        J::Bool(b) => boolean(*b),
        J::Number(n) => float(n.as_f64().unwrap_or(0.0)),
        J::String(s) => string(s.clone()),
        J::Array(a) => seq(a.iter().map(from_json).collect()),
        J::Object(o) => map(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect()),
    }
}

/// The same tree with every integer turned into a float (a JSON round trip).
pub fn json_round_trip(v: &Node) -> Node {
    match &v.value {
        Value::Int(i) => float(*i as f64),
        Value::Seq(items) => seq(items.iter().map(json_round_trip).collect()),
        Value::Map(m) => map(m
            .iter()
            .map(|(k, v)| (k.to_owned(), json_round_trip(v)))
            .collect()),
        Value::Float(f) if !f.is_finite() => null(),
        _ => v.clone(),
    }
}

/// Go `strconv.ParseFloat(s, 64)`: decimal or `inf`/`infinity`/`nan` in any case; an
/// out-of-range value is an error (`None`), not an infinity.
pub(crate) fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let special = matches!(
        body.to_ascii_lowercase().as_str(),
        "inf" | "infinity" | "nan"
    );
    if !special
        && !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    (special || f.is_finite()).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprint_and_json() {
        let v = Node::from_json(&serde_json::json!({"b": [1.5, null, "x"], "a": true}));
        assert_eq!(go_sprint(&v), "map[a:true b:[1.5 <nil> x]]");
        assert_eq!(to_json_string(&v), r#"{"a":true,"b":[1.5,null,"x"]}"#);
        assert_eq!(go_sprint(&float(1_000_000.0)), "1e+06");
        assert_eq!(
            to_json_string(&string("<a&b>")),
            r#""\u003ca\u0026b\u003e""#
        );
    }

    #[test]
    fn deep_equal_is_typed() {
        assert!(!deep_equal(&node(Value::Int(1)), &float(1.0)));
        assert!(deep_equal(&float(1.0), &float(1.0)));
        let a = Node::from_json(&serde_json::json!({"x": 1, "y": 2}));
        let b = Node::from_json(&serde_json::json!({"y": 2, "x": 1}));
        assert!(deep_equal(&a, &b));
        assert!(!is_false(&float(0.0)));
        assert!(is_false(&string("")));
    }
}
