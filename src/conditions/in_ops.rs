//! `AnyIn`/`AllIn`/`AnyNotIn`/`AllNotIn` (`anyin.go`, `allin.go`, `anynotin.go`,
//! `allnotin.go`) and the deprecated `In`/`NotIn` (`in.go`, `notin.go`), validate.md §8.3.
//!
//! Keys are compared as `fmt.Sprint` strings with wildcards on both sides; a string value
//! may be a wildcard, a range `a-b` (checked with the pattern language's range semantics,
//! §5.2), a JSON array of strings, or a single literal.
//!
//! The range check is a local copy of the pattern operator logic restricted to string
//! inputs; it should move to `crate::pattern` once that module exposes scalar matching.

use std::sync::LazyLock;

use regex::Regex;

use super::CondError;
use crate::jmespath::duration;
use crate::jmespath::quantity::Quantity;
use crate::jmespath::value::go_sprint;
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
    wildmatch::WildMatch::new(pattern).matches(s)
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

enum Keys {
    One(String),
    Many(Vec<String>),
}

fn keys_of(key: &Node) -> Option<Keys> {
    match &key.value {
        Value::Str(s) => Some(Keys::One(s.clone())),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(Keys::One(go_sprint(key))),
        Value::Seq(items) => Some(Keys::Many(items.iter().map(go_sprint).collect())),
        _ => None,
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
        Value::Seq(items) => Some(items.iter().any(|v| both_ways(&go_sprint(v), k))),
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

fn set_in(ks: &[String], val: &Node, mode: Mode) -> Option<bool> {
    let values: Vec<String> = match &val.value {
        Value::Seq(items) => items.iter().map(go_sprint).collect(),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => match mode {
            Mode::AnyIn | Mode::AnyNotIn => vec![go_sprint(val)],
            // allin.go has no case for scalars: invalid type.
            _ => return None,
        },
        Value::Str(v) => {
            if ks.len() == 1 && ks[0] == *v {
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
                Ok(Some(arr)) => arr,
                Ok(None) => vec![v.clone()],
            }
        }
        _ => return None,
    };
    let matched = |k: &String| values.iter().any(|v| both_ways(k, v));
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
                    if ks.len() == 1 && ks[0] == *v {
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

// ---- The pattern language's operators on string values (validate.md §5.2). ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    NotEqual,
    More,
    MoreEqual,
    Less,
    LessEqual,
    InRange,
    NotInRange,
}

const BOUND: &str = r"[-|+]?\d+(?:\.\d+)?[A-Za-z]*";
static IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^({BOUND})-({BOUND})$")).ok());
static NOT_IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^({BOUND})!-({BOUND})$")).ok());

fn range_bounds(re: &LazyLock<Option<Regex>>, s: &str) -> Option<(String, String)> {
    let c = re.as_ref()?.captures(s)?;
    Some((c.get(1)?.as_str().to_owned(), c.get(2)?.as_str().to_owned()))
}

/// `operator.GetOperatorFromStringPattern`.
fn operator_of(p: &str) -> Op {
    if p.len() < 2 {
        return Op::Equal;
    }
    for (prefix, op) in [
        (">=", Op::MoreEqual),
        ("<=", Op::LessEqual),
        (">", Op::More),
        ("<", Op::Less),
        ("!", Op::NotEqual),
    ] {
        if p.starts_with(prefix) {
            return op;
        }
    }
    if range_bounds(&NOT_IN_RANGE, p).is_some() {
        return Op::NotInRange;
    }
    if range_bounds(&IN_RANGE, p).is_some() {
        return Op::InRange;
    }
    Op::Equal
}

/// `pattern.Validate(value, pattern)` for a string value and string pattern.
fn pattern_match(value: &str, pattern: &str) -> bool {
    if value == pattern {
        return true;
    }
    pattern
        .split('|')
        .any(|alt| alt.split('&').all(|term| term_match(value, term.trim())))
}

fn term_match(value: &str, term: &str) -> bool {
    let op = operator_of(term);
    let operand = |n: usize| term[n..].trim();
    match op {
        Op::Equal => compare(value, term, Op::Equal),
        Op::NotEqual => compare(value, operand(1), Op::NotEqual),
        Op::MoreEqual | Op::LessEqual => compare(value, operand(2), op),
        Op::More | Op::Less => compare(value, operand(1), op),
        Op::InRange => range_bounds(&IN_RANGE, term).is_some_and(|(a, b)| {
            compare(value, &a, Op::MoreEqual) && compare(value, &b, Op::LessEqual)
        }),
        Op::NotInRange => range_bounds(&NOT_IN_RANGE, term)
            .is_some_and(|(a, b)| compare(value, &a, Op::Less) || compare(value, &b, Op::More)),
    }
}

fn ordered(ord: std::cmp::Ordering, op: Op) -> bool {
    use std::cmp::Ordering::*;
    match op {
        Op::Equal => ord == Equal,
        Op::NotEqual => ord != Equal,
        Op::More => ord == Greater,
        Op::MoreEqual => ord != Less,
        Op::Less => ord == Less,
        Op::LessEqual => ord != Greater,
        _ => false,
    }
}

fn compare(value: &str, operand: &str, op: Op) -> bool {
    if let (Some(p), Some(v)) = (duration::parse(operand), duration::parse(value)) {
        return ordered(v.cmp(&p), op);
    }
    if let (Some(p), Some(v)) = (Quantity::parse(operand), Quantity::parse(value)) {
        return ordered(v.cmp_value(&p), op);
    }
    match op {
        Op::Equal => wildcard(operand, value),
        Op::NotEqual => !wildcard(operand, value),
        _ => false,
    }
}
