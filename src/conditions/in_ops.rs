//! `AnyIn`/`AllIn`/`AnyNotIn`/`AllNotIn` (`anyin.go`, `allin.go`, `anynotin.go`,
//! `allnotin.go`) and the deprecated `In`/`NotIn` (`in.go`, `notin.go`), validate.md §8.3.
//!
//! Keys are compared as `fmt.Sprint` strings with wildcards on both sides; a string value
//! may be a wildcard, a range `a-b` (checked with the pattern language's range semantics,
//! §5.2), a JSON array of strings, or a single literal.
//!
//! Range values are checked with the pattern language's scalar matching
//! (`crate::pattern::scalar_match`), as upstream calls `pattern.Validate`.

use std::borrow::Cow;

use super::CondError;
use crate::jmespath::value::go_sprint;
use crate::pattern::{Op, operator_of, scalar_match};
use crate::variables::VarError;
use crate::yaml::{Node, Value};

/// The four set operators, named as upstream names them.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    AnyIn,
    AllIn,
    AnyNotIn,
    AllNotIn,
}

fn wildcard(pattern: &str, s: &str) -> bool {
    crate::base::wildcard::matches(pattern, s)
}

fn both_ways(a: &str, b: &str) -> bool {
    wildcard(a, b) || wildcard(b, a)
}

/// `json.Valid` then `json.Unmarshal` into `[]string`: `Err(())` = not a string array
/// (invalid type), `Ok(None)` = not JSON at all. JSON nulls decode as "".
fn json_strings(s: &str) -> Result<Option<Vec<String>>, ()> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(s) else {
        return Ok(None);
    };
    match v {
        serde_json::Value::Null => Ok(Some(Vec::new())),
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                serde_json::Value::String(s) => Ok(s),
                serde_json::Value::Null => Ok(String::new()),
                _ => Err(()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        _ => Err(()),
    }
}

enum Keys<'a> {
    One(Cow<'a, str>),
    Many(Vec<Cow<'a, str>>),
}

fn keys_of(key: &Node) -> Option<Keys<'_>> {
    match &key.value {
        Value::Str(s) => Some(Keys::One(Cow::Borrowed(s))),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(Keys::One(sprint(key))),
        Value::Seq(items) => Some(Keys::Many(items.iter().map(sprint).collect())),
        _ => None,
    }
}

/// `fmt.Sprint` of a value, borrowed when it is a string (perf: condition lists are
/// compared per resource; their strings are not copied for it).
fn sprint(v: &Node) -> Cow<'_, str> {
    match &v.value {
        Value::Str(s) => Cow::Borrowed(s),
        _ => Cow::Owned(go_sprint(v)),
    }
}

pub(super) fn any_all(key: &Node, val: &Node, mode: Mode) -> bool {
    match keys_of(key) {
        None => false,
        Some(Keys::One(k)) => {
            let found = match key_in(&k, val) {
                Some(f) => f,
                None => return false,
            };
            match mode {
                Mode::AnyIn | Mode::AllIn => found,
                Mode::AnyNotIn | Mode::AllNotIn => !found,
            }
        }
        Some(Keys::Many(ks)) => set_in(&ks, val, mode).unwrap_or(false),
    }
}

/// `anyKeyExistsInArray`/`allKeyExistsInArray` (identical): `None` = invalid type.
fn key_in(k: &str, val: &Node) -> Option<bool> {
    match &val.value {
        Value::Seq(items) => Some(items.iter().any(|v| both_ways(&sprint(v), k))),
        Value::Str(v) => {
            if wildcard(v, k) {
                return Some(true);
            }
            if operator_of(v) == Op::InRange {
                return Some(pattern_match(k, v));
            }
            let arr = match json_strings(v) {
                Err(()) => return None,
                Ok(Some(arr)) => arr,
                Ok(None) => vec![v.clone()],
            };
            Some(arr.iter().any(|a| a == k))
        }
        _ => None,
    }
}

fn set_in(ks: &[Cow<'_, str>], val: &Node, mode: Mode) -> Option<bool> {
    let values: Vec<Cow<'_, str>> = match &val.value {
        Value::Seq(items) => items.iter().map(sprint).collect(),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => match mode {
            Mode::AnyIn | Mode::AnyNotIn => vec![sprint(val)],
            // allin.go has no case for scalars: invalid type.
            _ => return None,
        },
        Value::Str(v) => {
            if ks.len() == 1 && ks[0] == v.as_str() {
                return Some(matches!(mode, Mode::AnyIn | Mode::AllIn));
            }
            if operator_of(v) == Op::InRange {
                return Some(match mode {
                    Mode::AnyIn => ks.iter().any(|k| pattern_match(k, v)),
                    Mode::AllIn => ks.iter().all(|k| pattern_match(k, v)),
                    Mode::AllNotIn => !ks.iter().any(|k| pattern_match(k, v)),
                    Mode::AnyNotIn => {
                        // Upstream rewrites the first '-' to "!-" (breaks negative bounds).
                        let not = v.replacen('-', "!-", 1);
                        ks.iter().any(|k| pattern_match(k, &not))
                    }
                });
            }
            match json_strings(v) {
                Err(()) => return None,
                Ok(Some(arr)) => arr.into_iter().map(Cow::Owned).collect(),
                Ok(None) => vec![Cow::Borrowed(v.as_str())],
            }
        }
        _ => return None,
    };
    let matched = |k: &Cow<'_, str>| values.iter().any(|v| both_ways(k, v));
    Some(match mode {
        Mode::AnyIn => ks.iter().any(matched),
        Mode::AllIn => ks.iter().all(matched),
        Mode::AnyNotIn => ks.iter().any(|k| !matched(k)),
        Mode::AllNotIn => !ks.iter().any(matched),
    })
}

/// Deprecated `In` / `NotIn`.
pub(super) fn in_op(key: &Node, val: &Node, negate: bool) -> Result<bool, CondError> {
    match &key.value {
        Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
            let k = go_sprint(key);
            let found = match &val.value {
                Value::Seq(items) => Some(items.iter().any(|v| both_ways(&go_sprint(v), &k))),
                Value::Str(v) => {
                    if wildcard(v, &k) {
                        Some(true)
                    } else {
                        match json_strings(v) {
                            Ok(Some(arr)) => Some(arr.contains(&k)),
                            _ => None,
                        }
                    }
                }
                _ => None,
            };
            Ok(match found {
                None => false,
                Some(f) => f != negate,
            })
        }
        Value::Seq(items) => {
            let mut ks = Vec::with_capacity(items.len());
            for i in items {
                match &i.value {
                    Value::Str(s) => ks.push(s.clone()),
                    // Upstream panics on a non-string key element (type assertion).
                    _ => {
                        return Err(VarError::new(format!(
                            "In/NotIn key list element {} is not a string",
                            go_sprint(i)
                        )));
                    }
                }
            }
            let values: Vec<String> = match &val.value {
                Value::Seq(vs) => {
                    let mut out = Vec::new();
                    for v in vs {
                        match &v.value {
                            Value::Str(s) => out.push(s.clone()),
                            _ => return Ok(false),
                        }
                    }
                    out
                }
                Value::Str(v) => {
                    if ks.len() == 1 && ks[0] == v.as_str() {
                        // setExistsInArray answers "found" for In and NotIn alike.
                        return Ok(true);
                    }
                    match json_strings(v) {
                        Ok(Some(arr)) => arr,
                        _ => return Ok(false),
                    }
                }
                _ => return Ok(false),
            };
            let all_in = ks.iter().all(|k| values.contains(k));
            Ok(if negate { !all_in } else { all_in })
        }
        _ => Ok(false),
    }
}

/// `pattern.Validate(key, value)` (upstream `handleRange`) for a string key and range.
fn pattern_match(value: &str, pattern: &str) -> bool {
    scalar_match(
        &Value::Str(value.to_owned()),
        &Value::Str(pattern.to_owned()),
    )
}
