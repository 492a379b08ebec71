//! `Equals`/`NotEquals` (and the deprecated `Equal`/`NotEqual`), after
//! `pkg/engine/variables/operator/equal.go` and `notequal.go` (validate.md §8.3). NotEquals
//! is not always the negation: a null key is false for both, and a quantity key against an
//! unparsable string value is false for Equals and true for NotEquals.

use std::cmp::Ordering;

use crate::base::duration;

use crate::base::quantity::Quantity;
use crate::jmespath::value::deep_equal;
use crate::yaml::{Node, Value};

/// `parseDuration(key, value)`: one side a duration string (not `"0"`), the other a
/// duration string or a number of seconds (truncated to whole seconds).
pub(super) fn durations(key: &Node, val: &Node) -> Option<(f64, f64)> {
    let as_dur = |n: &Node| match &n.value {
        Value::Str(s) if s != "0" => duration::parse(s),
        _ => None,
    };
    let as_secs = |n: &Node| match n.value {
        Value::Int(i) => Some(i.saturating_mul(1_000_000_000)),
        Value::Float(f) => Some(duration::from_seconds_truncated(f)),
        _ => None,
    };
    let (k, v) = (as_dur(key), as_dur(val));
    if k.is_none() && v.is_none() {
        return None;
    }
    let k = k.or_else(|| as_secs(key))?;
    let v = v.or_else(|| as_secs(val))?;
    Some((duration::seconds(k), duration::seconds(v)))
}

fn wildcard(pattern: &str, s: &str) -> bool {
    crate::base::wildcard::matches(pattern, s)
}

/// Go `strconv.ParseInt(s, 10, 64)`.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Go `strconv.ParseFloat(s, 64)` (also `inf`, `nan`; out of range is an error).
pub(super) fn parse_float(s: &str) -> Option<f64> {
    crate::jmespath::value::parse_go_float(s)
}

/// `None` where upstream's handler falls to its default (false for Equals, true for
/// NotEquals) — only used to share the string logic.
fn string_equal(key: &str, val: &Node) -> Option<bool> {
    let k = crate::yaml::Node::synthetic(Value::Str(key.to_owned()));
    if let Some((a, b)) = durations(&k, val) {
        return Some(a == b);
    }
    if let Some(kq) = Quantity::parse(key)
        && let Value::Str(v) = &val.value
    {
        return Quantity::parse(v).map(|vq| {
            if kq.is_saturated() || vq.is_saturated() {
                crate::base::quantity::cmp_texts(key, v).is_some_and(Ordering::is_eq)
            } else {
                kq.cmp_value(&vq).is_eq()
            }
        });
    }
    match &val.value {
        Value::Str(v) => Some(wildcard(v, key)),
        _ => None,
    }
}

pub(super) fn equals(key: &Node, val: &Node) -> bool {
    match &key.value {
        Value::Bool(k) => matches!(val.value, Value::Bool(v) if v == *k),
        Value::Int(k) => int_equal(*k, val).unwrap_or(false),
        Value::Float(k) => float_equal(*k, val).unwrap_or(false),
        Value::Str(k) => string_equal(k, val).unwrap_or(false),
        Value::Map(_) => matches!(val.value, Value::Map(_)) && deep_equal(key, val),
        Value::Seq(_) => matches!(val.value, Value::Seq(_)) && deep_equal(key, val),
        Value::Null => false,
    }
}

pub(super) fn not_equals(key: &Node, val: &Node) -> bool {
    match &key.value {
        Value::Bool(k) => !matches!(val.value, Value::Bool(v) if v == *k),
        Value::Int(k) => !int_equal(*k, val).unwrap_or(false),
        Value::Float(k) => !float_equal(*k, val).unwrap_or(false),
        Value::Str(k) => {
            // notequal.go: a quantity key with an empty value goes the wildcard way, an
            // unparsable value is "not equal".
            if let Some((a, b)) = durations(key, val) {
                return a != b;
            }
            if Quantity::parse(k).is_some()
                && let Value::Str(v) = &val.value
            {
                if v.is_empty() {
                    return !wildcard(v, k);
                }
                return string_equal(k, val).is_none_or(|eq| !eq);
            }
            string_equal(k, val).is_none_or(|eq| !eq)
        }
        Value::Map(_) | Value::Seq(_) => {
            !(std::mem::discriminant(&key.value) == std::mem::discriminant(&val.value)
                && deep_equal(key, val))
        }
        Value::Null => false,
    }
}

fn int_equal(k: i64, val: &Node) -> Option<bool> {
    match &val.value {
        Value::Int(v) => Some(*v == k),
        Value::Float(v) => Some(v.fract() == 0.0 && *v as i64 == k),
        Value::Str(s) => parse_int(s).map(|v| v == k),
        _ => None,
    }
}

fn float_equal(k: f64, val: &Node) -> Option<bool> {
    match &val.value {
        // float key vs int value: only an integral key can equal.
        Value::Int(v) => Some(k.fract() == 0.0 && k as i64 == *v),
        Value::Float(v) => Some(*v == k),
        Value::Str(s) => parse_float(s).map(|v| v == k),
        _ => None,
    }
}
