//! Standard JMESPath functions as go-jmespath implements them (`functions.go`): numbers are
//! float64 (an `Int` such as `elementIndex` is rejected by type checks and by `type()`),
//! `length` counts runes, `avg([])` is NaN, `contains` on a list compares scalars only.

use std::cmp::Ordering;

use super::{Arg, owned};
use crate::jmespath::Error;
use crate::jmespath::interp::eval;
use crate::jmespath::ir::Ir;
use crate::jmespath::value::{self, to_json_string};
use crate::yaml::{Node, Value};

type R = Result<Node, Error>;

fn num(a: &Arg<'_, '_>) -> f64 {
    a.float().unwrap_or(0.0)
}

fn seq<'x>(a: &'x Arg<'_, '_>) -> &'x [Node] {
    a.node().as_seq().unwrap_or(&[])
}

fn expref<'x>(a: &'x Arg<'_, '_>) -> Option<&'x Ir> {
    match a {
        Arg::Ref(ir) => Some(ir),
        Arg::Val(_) => None,
    }
}

pub(super) fn abs(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::float(num(&a[0]).abs()))
}

pub(super) fn ceil(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::float(num(&a[0]).ceil()))
}

pub(super) fn floor(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::float(num(&a[0]).floor()))
}

pub(super) fn avg(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let items = seq(&a[0]);
    let total: f64 = items.iter().map(float_of).sum();
    Ok(value::float(total / items.len() as f64))
}

fn float_of(n: &Node) -> f64 {
    match n.value {
        Value::Float(f) => f,
        _ => 0.0,
    }
}

pub(super) fn contains(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let needle = a[1].node();
    let found = match &a[0].node().value {
        Value::Str(s) => needle.as_str().is_some_and(|n| s.contains(n)),
        Value::Seq(items) => items.iter().any(|i| scalar_identical(i, needle)),
        _ => false,
    };
    Ok(value::boolean(found))
}

/// Go's `==` on interface values holding scalars (maps and lists would panic in Go).
fn scalar_identical(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => false,
    }
}

pub(super) fn starts_with(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, p) = (a[0].str().unwrap_or(""), a[1].str().unwrap_or(""));
    Ok(value::boolean(s.starts_with(p)))
}

pub(super) fn ends_with(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, p) = (a[0].str().unwrap_or(""), a[1].str().unwrap_or(""));
    Ok(value::boolean(s.ends_with(p)))
}

pub(super) fn join(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let glue = a[0].str().unwrap_or("");
    let parts: Vec<&str> = seq(&a[1]).iter().filter_map(Node::as_str).collect();
    Ok(value::string(parts.join(glue)))
}

pub(super) fn keys(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let m = a[0].node().as_map();
    Ok(value::seq(
        m.map(|m| m.keys().map(value::string).collect())
            .unwrap_or_default(),
    ))
}

pub(super) fn values(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let m = a[0].node().as_map();
    Ok(value::seq(
        m.map(|m| m.iter().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default(),
    ))
}

pub(super) fn length(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let n = match &a[0].node().value {
        Value::Str(s) => s.chars().count(),
        Value::Seq(s) => s.len(),
        Value::Map(m) => m.len(),
        _ => 0,
    };
    Ok(value::float(n as f64))
}

pub(super) fn map(_: &str, a: &[Arg<'_, '_>], depth: u32) -> R {
    let ir = expref(&a[0]).ok_or_else(|| Error::Eval("invalid expref".to_owned()))?;
    let mut out = Vec::new();
    for item in seq(&a[1]) {
        out.push(eval(ir, item, depth)?.into_owned());
    }
    Ok(value::seq(out))
}

fn extreme(items: &[Node], want: Ordering) -> Node {
    let mut best: Option<&Node> = None;
    for i in items {
        best = match best {
            None => Some(i),
            Some(b) if order(i, b) == Some(want) => Some(i),
            keep => keep,
        };
    }
    best.cloned().unwrap_or_else(value::null)
}

fn order(a: &Node, b: &Node) -> Option<Ordering> {
    match (&a.value, &b.value) {
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

pub(super) fn max(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(extreme(seq(&a[0]), Ordering::Greater))
}

pub(super) fn min(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(extreme(seq(&a[0]), Ordering::Less))
}

/// Keys of `items` under `ir`: all numbers or all strings (decided by the first).
fn sort_keys(items: &[Node], ir: &Ir, depth: u32, msg_numbers: bool) -> Result<Vec<Node>, Error> {
    let mut keys = Vec::with_capacity(items.len());
    let mut kind = None;
    for (i, item) in items.iter().enumerate() {
        let k = match eval(ir, item, depth) {
            Ok(k) => k.into_owned(),
            // sort_by: only the first key's error is reported as is (byExprFloat/String).
            Err(_) if i > 0 && !msg_numbers => {
                return Err(Error::Eval("error in sort_by comparison".to_owned()));
            }
            Err(e) => return Err(e),
        };
        let this = match k.value {
            Value::Float(_) => 0,
            Value::Str(_) => 1,
            _ => 2,
        };
        let first = *kind.get_or_insert(this);
        if first == 2 {
            return Err(Error::Eval(
                "invalid type, must be number of string".to_owned(),
            ));
        }
        if this != first {
            return Err(Error::Eval(if !msg_numbers {
                "error in sort_by comparison".to_owned()
            } else if first == 0 {
                "invalid type, must be number".to_owned()
            } else {
                "invalid type, must be string".to_owned()
            }));
        }
        keys.push(k);
    }
    Ok(keys)
}

fn by(a: &[Arg<'_, '_>], depth: u32, want: Ordering) -> R {
    let items = seq(&a[0]);
    let ir = expref(&a[1]).ok_or_else(|| Error::Eval("invalid expref".to_owned()))?;
    match items.len() {
        0 => return Ok(value::null()),
        1 => return Ok(items[0].clone()),
        _ => {}
    }
    let keys = sort_keys(items, ir, depth, true)?;
    let mut best = 0;
    for i in 1..items.len() {
        if order(&keys[i], &keys[best]) == Some(want) {
            best = i;
        }
    }
    Ok(items[best].clone())
}

pub(super) fn max_by(_: &str, a: &[Arg<'_, '_>], depth: u32) -> R {
    by(a, depth, Ordering::Greater)
}

pub(super) fn min_by(_: &str, a: &[Arg<'_, '_>], depth: u32) -> R {
    by(a, depth, Ordering::Less)
}

pub(super) fn sort_by(_: &str, a: &[Arg<'_, '_>], depth: u32) -> R {
    let items = seq(&a[0]);
    let ir = expref(&a[1]).ok_or_else(|| Error::Eval("invalid expref".to_owned()))?;
    if items.len() < 2 {
        return Ok(value::seq(items.to_vec()));
    }
    let keys = sort_keys(items, ir, depth, false)?;
    let mut idx: Vec<usize> = (0..items.len()).collect();
    idx.sort_by(|&x, &y| order(&keys[x], &keys[y]).unwrap_or(Ordering::Equal));
    Ok(value::seq(
        idx.into_iter().map(|i| items[i].clone()).collect(),
    ))
}

pub(super) fn sort(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let mut items = seq(&a[0]).to_vec();
    items.sort_by(|x, y| order(x, y).unwrap_or(Ordering::Equal));
    Ok(value::seq(items))
}

pub(super) fn merge(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let mut out: Vec<(String, Node)> = Vec::new();
    for arg in a {
        if let Some(m) = arg.node().as_map() {
            for (k, v) in m.iter() {
                match out.iter_mut().find(|(ok, _)| ok == k) {
                    Some(slot) => slot.1 = v.clone(),
                    None => out.push((k.to_owned(), v.clone())),
                }
            }
        }
    }
    Ok(value::map(out))
}

pub(super) fn not_null(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(a.iter()
        .map(Arg::node)
        .find(|n| !n.is_null())
        .cloned()
        .unwrap_or_else(value::null))
}

pub(super) fn reverse(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(match &a[0].node().value {
        Value::Str(s) => value::string(s.chars().rev().collect::<String>()),
        Value::Seq(items) => value::seq(items.iter().rev().cloned().collect()),
        _ => value::null(),
    })
}

pub(super) fn to_array(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(match &a[0] {
        Arg::Val(v) if v.as_seq().is_some() => owned(v),
        other => value::seq(vec![other.node().clone()]),
    })
}

pub(super) fn to_number(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(match &a[0].node().value {
        Value::Float(f) => value::float(*f),
        Value::Str(s) => {
            crate::jmespath::value::parse_go_float(s).map_or_else(value::null, value::float)
        }
        Value::Int(_) => return Err(Error::Eval("unknown type".to_owned())),
        _ => value::null(),
    })
}

pub(super) fn to_string(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(match &a[0].node().value {
        Value::Str(s) => value::string(s.clone()),
        _ => value::string(to_json_string(a[0].node())),
    })
}

pub(super) fn type_of(_: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let t = match &a[0].node().value {
        Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
        Value::Null => "null",
        Value::Int(_) => return Err(Error::Eval("unknown type".to_owned())),
    };
    Ok(value::string(t))
}
