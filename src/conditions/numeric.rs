//! `GreaterThan`/`GreaterThanOrEquals`/`LessThan`/`LessThanOrEquals` (`numeric.go`) and the
//! deprecated `Duration*` operators (`duration.go`), validate.md §8.3. Strings try, in
//! order: durations (a number on the other side is seconds), quantities, float, int, and
//! strict semver.

use std::cmp::Ordering;

use super::equal::{durations, parse_float, parse_int};
use crate::base::duration;
use crate::base::semver::Version;
use crate::yaml::{Node, Value};

/// `compareByCondition` with the operator's exact spelling (upstream compares against the
/// canonical names, so other spellings are false).
fn by_condition(op: &str, ord: Option<Ordering>) -> bool {
    let Some(ord) = ord else { return false };
    match op {
        "GreaterThanOrEquals" => ord != Ordering::Less,
        "GreaterThan" => ord == Ordering::Greater,
        "LessThanOrEquals" => ord != Ordering::Greater,
        "LessThan" => ord == Ordering::Less,
        _ => false,
    }
}

fn num_vs(op: &str, k: f64, key: &Node, val: &Node) -> bool {
    match &val.value {
        Value::Int(v) => by_condition(op, k.partial_cmp(&(*v as f64))),
        Value::Float(v) => by_condition(op, k.partial_cmp(v)),
        Value::Str(s) => {
            if let Some((a, b)) = durations(key, val) {
                return by_condition(op, a.partial_cmp(&b));
            }
            if let Some(v) = parse_float(s) {
                return by_condition(op, k.partial_cmp(&v));
            }
            if let Some(v) = parse_int(s) {
                return by_condition(op, k.partial_cmp(&(v as f64)));
            }
            false
        }
        _ => false,
    }
}

pub(super) fn compare(op: &str, key: &Node, val: &Node) -> bool {
    match &key.value {
        Value::Int(k) => num_vs(op, *k as f64, key, val),
        Value::Float(k) => num_vs(op, *k, key, val),
        Value::Str(k) => {
            if let Some((a, b)) = durations(key, val) {
                return by_condition(op, a.partial_cmp(&b));
            }
            if let Value::Str(v) = &val.value
                && let Some(order) = crate::base::quantity::cmp_texts(k, v)
            {
                return by_condition(op, Some(order));
            }
            if let Some(f) = parse_float(k) {
                return num_vs(op, f, &Node::synthetic(Value::Float(f)), val);
            }
            if let Some(i) = parse_int(k) {
                return num_vs(op, i as f64, &Node::synthetic(Value::Int(i)), val);
            }
            if let Ok(kv) = Version::parse(k) {
                return match &val.value {
                    Value::Str(v) => Version::parse(v)
                        .map(|vv| by_condition(op, Some(kv.compare(&vv))))
                        .unwrap_or(false),
                    _ => false,
                };
            }
            false
        }
        _ => false,
    }
}

fn duration_by_condition(op: &str, k: i64, v: i64) -> bool {
    match op {
        "DurationGreaterThanOrEquals" => k >= v,
        "DurationGreaterThan" => k > v,
        "DurationLessThanOrEquals" => k <= v,
        "DurationLessThan" => k < v,
        _ => false,
    }
}

/// Deprecated `Duration*`: numbers are whole seconds, strings Go durations.
pub(super) fn duration_compare(op: &str, key: &Node, val: &Node) -> bool {
    let secs = |n: &Node| match n.value {
        Value::Int(i) => Some(i.saturating_mul(1_000_000_000)),
        Value::Float(f) => Some(duration::from_seconds_truncated(f)),
        _ => None,
    };
    let k = match &key.value {
        Value::Str(s) => duration::parse(s),
        _ => secs(key),
    };
    let v = match &val.value {
        Value::Str(s) => duration::parse(s),
        _ => secs(val),
    };
    match (k, v) {
        (Some(k), Some(v)) => duration_by_condition(op, k, v),
        _ => false,
    }
}
