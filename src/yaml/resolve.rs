//! Plain-scalar resolution as Kubernetes does it: go-yaml v2 (YAML 1.1) behind sigs.k8s.io/yaml.
//!
//! `yes/no/on/off/y/n` are booleans, a leading `0` means octal, `_` is dropped from numbers,
//! timestamps stay strings, `.5` and `1e3` are floats, and anything else is a string.
//! Reference values: `shared/yaml-k8s/cases` (tested in `tests/yaml_k8s.rs`).

use super::node::Value;

/// What a plain (unquoted, untagged) scalar means.
pub(crate) fn resolve_plain(s: &str) -> Value {
    let Some(first) = s.bytes().next() else {
        return Value::Null;
    };
    match first {
        b'0'..=b'9' | b'+' | b'-' => resolve_number(s).unwrap_or_else(|| Value::Str(s.to_owned())),
        b'.' => match s {
            ".inf" | ".Inf" | ".INF" => Value::Float(f64::INFINITY),
            ".nan" | ".NaN" | ".NAN" => Value::Float(f64::NAN),
            // go-yaml: "not in the map, so maybe a normal float" (Go's ParseFloat on the input).
            _ => go_parse_float(s).map_or_else(|| Value::Str(s.to_owned()), Value::Float),
        },
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            resolve_word(s).unwrap_or_else(|| Value::Str(s.to_owned()))
        }
        _ => Value::Str(s.to_owned()),
    }
}

fn resolve_word(s: &str) -> Option<Value> {
    Some(match s {
        "~" | "null" | "Null" | "NULL" => Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        _ => return None,
    })
}

fn resolve_number(s: &str) -> Option<Value> {
    match s {
        "+.inf" | "+.Inf" | "+.INF" => return Some(Value::Float(f64::INFINITY)),
        "-.inf" | "-.Inf" | "-.INF" => return Some(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Some(match i {
            GoInt::Signed(i) => Value::Int(i),
            // Beyond i64: go-yaml yields a uint64; kpol keeps it as a float (the CLI turns every
            // resource number into float64 anyway).
            GoInt::Unsigned(u) => Value::Float(u as f64),
        });
    }
    if let Some(f) = is_yaml_style_float(&plain)
        .then(|| plain.parse::<f64>().ok())
        .flatten()
    {
        return Some(Value::Float(f));
    }
    let (neg, digits) = match plain.strip_prefix("-0b") {
        Some(d) => (true, d),
        None => (false, plain.strip_prefix("0b")?),
    };
    let v = i64::from_str_radix(digits, 2).ok()?;
    Some(Value::Int(if neg { -v } else { v }))
}

enum GoInt {
    Signed(i64),
    Unsigned(u64),
}

/// Go's `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)`: optional sign, `0x`/`0o`/`0b`
/// prefixes, a bare leading `0` for octal.
fn go_parse_int(s: &str) -> Option<GoInt> {
    let (neg, body) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mag = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            return Some(GoInt::Signed((mag as i64).wrapping_neg()));
        }
        return None;
    }
    match i64::try_from(mag) {
        Ok(i) => Some(GoInt::Signed(i)),
        Err(_) => Some(GoInt::Unsigned(mag)),
    }
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat` for the decimal forms a plain scalar starting with `.` can take.
fn go_parse_float(s: &str) -> Option<f64> {
    if is_yaml_style_float(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// How sigs.k8s.io/yaml turns a non-string map key into a JSON object key.
pub(crate) fn key_string(v: &Value) -> Option<String> {
    Some(match v {
        Value::Str(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => crate::number::format_go_g(*f),
        Value::Seq(_) | Value::Map(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Value {
        resolve_plain(s)
    }

    #[test]
    fn yaml11_booleans_and_nulls() {
        assert_eq!(r("yes"), Value::Bool(true));
        assert_eq!(r("Off"), Value::Bool(false));
        assert_eq!(r("y"), Value::Bool(true));
        assert_eq!(r("tRuE"), Value::Str("tRuE".into()));
        assert_eq!(r("~"), Value::Null);
        assert_eq!(r(""), Value::Null);
    }

    #[test]
    fn go_integers_and_floats() {
        assert_eq!(r("0755"), Value::Int(493));
        assert_eq!(r("0o755"), Value::Int(493));
        assert_eq!(r("08"), Value::Float(8.0));
        assert_eq!(r("0x1F"), Value::Int(31));
        assert_eq!(r("1_000"), Value::Int(1000));
        assert_eq!(r("0b101"), Value::Int(5));
        assert_eq!(r("+12"), Value::Int(12));
        assert_eq!(r("1.10"), Value::Float(1.1));
        assert_eq!(r("1e3"), Value::Float(1000.0));
        assert_eq!(r(".5"), Value::Float(0.5));
        assert_eq!(r("1E"), Value::Str("1E".into()));
        assert_eq!(r("500m"), Value::Str("500m".into()));
        assert_eq!(r("12:30:00"), Value::Str("12:30:00".into()));
        assert_eq!(r("2001-12-14"), Value::Str("2001-12-14".into()));
        assert_eq!(r("-"), Value::Str("-".into()));
    }
}
