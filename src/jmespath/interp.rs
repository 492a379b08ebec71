//! The tree interpreter, following `kyverno/go-jmespath`'s `interpreter.go`: a field missing
//! from an object is `Error::NotFound`, which sub-expressions and index expressions
//! propagate and everything else (comparisons, function arguments, `||`, `&&`, `!`, pipes,
//! projections, multi-selects) turns into null (validate.md §12.1).
//!
//! Results borrow from the searched document where possible (`Cow::Borrowed`).

use std::borrow::Cow;

use ::jmespath::ast::Comparator;

use super::functions::{Arg, call};
use super::ir::Ir;
use super::value::{self, deep_equal, is_false};
use super::{Error, MAX_DEPTH};
use crate::base::budget;
use crate::yaml::{Node, Value};

pub(crate) type Val<'a> = Cow<'a, Node>;

fn null<'a>() -> Val<'a> {
    Cow::Owned(value::null())
}

/// Swallows the fork's NotFound error, keeping the others.
fn lenient<'a>(r: Result<Val<'a>, Error>) -> Result<Val<'a>, Error> {
    match r {
        Err(Error::NotFound(_)) => Ok(null()),
        r => r,
    }
}

/// Fields that live outside the searched tree, lent to two of its map nodes: the variable
/// context keeps the resource it checks, and the foreach elements taken from it, out of its
/// document and lends them here (`request.object`, `element`; `crate::variables::Context`)
/// instead of copying them in. A field present in the map itself wins. The context only
/// searches this way an expression that does not [`expose`](super::Expr::exposes) those
/// maps: they are never seen whole (listed, printed, compared), only looked up field by field.
#[derive(Clone, Copy)]
pub(crate) struct Lent<'a> {
    /// The map node `fields` belong to (compared by address).
    pub parent: Option<&'a Node>,
    pub fields: [(&'static str, Option<&'a Node>); 2],
    /// The searched document itself, and the fields lent to it (the last of a key wins).
    pub root: Option<&'a Node>,
    pub top: &'a [(String, &'a Node)],
}

impl<'a> Lent<'a> {
    pub(crate) const NONE: Lent<'static> = Lent {
        parent: None,
        fields: [("", None), ("", None)],
        root: None,
        top: &[],
    };

    fn get(&self, data: &Node, key: &str) -> Option<&'a Node> {
        if self.parent.is_some_and(|p| std::ptr::eq(p, data)) {
            return self
                .fields
                .iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| *v);
        }
        if self.root.is_some_and(|r| std::ptr::eq(r, data)) {
            return self
                .top
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| *v);
        }
        None
    }
}

/// Applies `ir` to a value that may be borrowed or owned, keeping the borrow when possible.
fn apply<'a>(ir: &Ir, v: Val<'a>, depth: u32, lent: &Lent<'a>) -> Result<Val<'a>, Error> {
    match v {
        Cow::Borrowed(b) => eval_in(ir, b, depth, lent),
        Cow::Owned(o) => eval_in(ir, &o, depth, lent).map(|r| Cow::Owned(r.into_owned())),
    }
}

pub(crate) fn eval<'a>(ir: &Ir, data: &'a Node, depth: u32) -> Result<Val<'a>, Error> {
    eval_in(ir, data, depth, &Lent::NONE)
}

/// [`eval`] with fields lent to the searched document and to one of its map nodes ([`Lent`]).
/// Projections, filters and function references evaluate their elements without them: an
/// element is never a lending map, since the searches that lend never return one
/// ([`super::Expr::exposes`]).
pub(crate) fn eval_in<'a>(
    ir: &Ir,
    data: &'a Node,
    depth: u32,
    lent: &Lent<'a>,
) -> Result<Val<'a>, Error> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    budget::work(1).map_err(over_budget)?;
    let d = depth + 1;
    match ir {
        Ir::Identity => Ok(Cow::Borrowed(data)),
        Ir::Field(key) => match &data.value {
            Value::Map(m) => m
                .get(key)
                .or_else(|| lent.get(data, key))
                .map(Cow::Borrowed)
                .ok_or_else(|| Error::NotFound(key.clone())),
            _ => Ok(null()),
        },
        Ir::Index(i) => Ok(match &data.value {
            Value::Seq(items) => {
                let idx = if *i < 0 { *i + items.len() as i64 } else { *i };
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| items.get(i))
                    .map_or_else(null, Cow::Borrowed)
            }
            _ => null(),
        }),
        Ir::Literal(n) => {
            charge(n)?;
            Ok(Cow::Owned(n.clone()))
        }
        Ir::Sub(lhs, rhs) => {
            let left = eval_in(lhs, data, d, lent)?;
            apply(rhs, left, d, lent)
        }
        Ir::Pipe(lhs, rhs) => {
            let left = lenient(eval_in(lhs, data, d, lent))?;
            lenient(apply(rhs, left, d, lent))
        }
        Ir::Projection(lhs, rhs) => {
            let items = match items_of(lhs, data, d, lent) {
                Ok(Some(items)) => items,
                // Not a list, or a missing key: null.
                Ok(None) | Err(Error::NotFound(_)) => return Ok(null()),
                Err(e) => return Err(e),
            };
            let mut out = Vec::with_capacity(items.len());
            for item in &items {
                let v = lenient(eval(rhs, item, d))?;
                if !v.is_null() {
                    out.push(own(v)?);
                }
            }
            Ok(Cow::Owned(value::seq(out)))
        }
        Ir::Filter(lhs, cond, rhs) => {
            let Ok(Some(items)) = items_of(lhs, data, d, lent) else {
                return Ok(null());
            };
            let mut pass = Vec::new();
            for item in &items {
                let c = lenient(eval(cond, item, d))?;
                if !is_false(&c) {
                    let v = lenient(eval(rhs, item, d))?;
                    if !v.is_null() {
                        pass.push(own(v)?);
                    }
                }
            }
            Ok(Cow::Owned(value::seq(pass)))
        }
        Ir::Flatten(_) | Ir::ObjectValues(_) | Ir::MultiList(_) => {
            // At this node's own depth: `items_of` is its evaluation.
            Ok(match items_of(ir, data, depth, lent)? {
                Some(items) => Cow::Owned(value::seq(
                    items.into_iter().map(own).collect::<Result<_, _>>()?,
                )),
                None => null(),
            })
        }
        Ir::Slice(start, stop, step) => Ok(match &data.value {
            Value::Seq(items) => {
                let out = slice(items, *start, *stop, *step)?;
                out.iter().try_for_each(charge)?;
                Cow::Owned(value::seq(out))
            }
            _ => null(),
        }),
        Ir::MultiHash(elems) => {
            if data.is_null() {
                return Ok(null());
            }
            let mut out = Vec::with_capacity(elems.len());
            for (k, e) in elems {
                out.push((k.clone(), own(lenient(eval_in(e, data, d, lent))?)?));
            }
            Ok(Cow::Owned(value::map(out)))
        }
        Ir::Not(inner) => {
            let v = lenient(eval_in(inner, data, d, lent))?;
            Ok(Cow::Owned(value::boolean(is_false(&v))))
        }
        Ir::And(lhs, rhs) => {
            let left = lenient(eval_in(lhs, data, d, lent))?;
            if is_false(&left) {
                return Ok(left);
            }
            eval_in(rhs, data, d, lent)
        }
        Ir::Or(lhs, rhs) => {
            let left = lenient(eval_in(lhs, data, d, lent))?;
            if is_false(&left) {
                return lenient(eval_in(rhs, data, d, lent));
            }
            Ok(left)
        }
        Ir::Compare(op, lhs, rhs) => {
            let left = lenient(eval_in(lhs, data, d, lent))?;
            let right = lenient(eval_in(rhs, data, d, lent))?;
            Ok(Cow::Owned(compare(op, &left, &right)))
        }
        Ir::Call(func, args) => {
            let mut resolved = Vec::with_capacity(args.len());
            for a in args {
                match a {
                    Ir::ExpRef(inner) => resolved.push(Arg::Ref(inner)),
                    _ => resolved.push(Arg::Val(lenient(eval_in(a, data, d, lent))?)),
                }
            }
            let out = call(func, &resolved, d)?;
            charge(&out)?;
            Ok(Cow::Owned(out))
        }
        // An expression reference outside a function call has no JSON value.
        Ir::ExpRef(_) => Ok(null()),
    }
}

/// What `ir` evaluates to as the items of a list, borrowed from `data` where it can be
/// (perf: `[initContainers, containers][].image` copies no container, docs/PERFORMANCE.md);
/// `None` when the value is not a list. Errors are those `eval_in` gives for `ir`.
fn items_of<'a>(
    ir: &Ir,
    data: &'a Node,
    depth: u32,
    lent: &Lent<'a>,
) -> Result<Option<Vec<Val<'a>>>, Error> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    let d = depth + 1;
    match ir {
        Ir::MultiList(elems) => {
            if data.is_null() {
                return Ok(None);
            }
            let mut out = Vec::with_capacity(elems.len());
            for e in elems {
                out.push(lenient(eval_in(e, data, d, lent))?);
            }
            Ok(Some(out))
        }
        // `a[]`: any error on the left gives null.
        Ir::Flatten(inner) => {
            let Ok(Some(items)) = items_of(inner, data, d, lent) else {
                return Ok(None);
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Cow::Borrowed(n) => match &n.value {
                        Value::Seq(inner) => out.extend(inner.iter().map(Cow::Borrowed)),
                        _ => out.push(Cow::Borrowed(n)),
                    },
                    Cow::Owned(n) => match n.value {
                        Value::Seq(inner) => out.extend(inner.into_iter().map(Cow::Owned)),
                        _ => out.push(Cow::Owned(n)),
                    },
                }
            }
            Ok(Some(out))
        }
        // `a.*`: any error on the left gives null.
        Ir::ObjectValues(inner) => {
            let Ok(left) = eval_in(inner, data, d, lent) else {
                return Ok(None);
            };
            Ok(match left {
                Cow::Borrowed(n) => match &n.value {
                    Value::Map(m) => Some(m.iter().map(|(_, v)| Cow::Borrowed(v)).collect()),
                    _ => None,
                },
                Cow::Owned(n) => match n.value {
                    Value::Map(m) => Some(
                        m.entries()
                            .iter()
                            .map(|e| Cow::Owned(e.value.clone()))
                            .collect(),
                    ),
                    _ => None,
                },
            })
        }
        Ir::Sub(lhs, rhs) => match eval_in(lhs, data, d, lent)? {
            Cow::Borrowed(n) => items_of(rhs, n, d, lent),
            owned => Ok(split(apply(rhs, owned, d, lent)?)),
        },
        _ => Ok(split(eval_in(ir, data, depth, lent)?)),
    }
}

fn over_budget(e: budget::Exceeded) -> Error {
    Error::Eval(e.to_string())
}

/// Charges what building `n` costs to the evaluation budget: its nodes and text.
fn charge(n: &Node) -> Result<(), Error> {
    budget::bytes(weight(n)).map_err(over_budget)
}

/// A value made owned; a borrowed one is copied, and the copy charged.
fn own(v: Val<'_>) -> Result<Node, Error> {
    match v {
        Cow::Borrowed(n) => {
            charge(n)?;
            Ok(n.clone())
        }
        Cow::Owned(n) => Ok(n),
    }
}

/// Bytes a copy of `n` takes, roughly: a node each, plus its strings (no recursion: values
/// can nest deeply).
fn weight(n: &Node) -> u64 {
    const NODE: u64 = std::mem::size_of::<Node>() as u64;
    let mut total = 0u64;
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        total = total.saturating_add(NODE);
        match &n.value {
            Value::Str(s) => total = total.saturating_add(s.len() as u64),
            Value::Seq(items) => stack.extend(items.iter()),
            Value::Map(m) => {
                for e in m.entries() {
                    total = total.saturating_add(e.key.len() as u64);
                    stack.push(&e.value);
                }
            }
            _ => {}
        }
    }
    total
}

fn too_deep() -> Error {
    Error::Eval("expression evaluation too deep".to_owned())
}

/// The items of a list value (moved out when owned); `None` for anything else.
fn split(v: Val<'_>) -> Option<Vec<Val<'_>>> {
    match v {
        Cow::Borrowed(n) => match &n.value {
            Value::Seq(items) => Some(items.iter().map(Cow::Borrowed).collect()),
            _ => None,
        },
        Cow::Owned(n) => match n.value {
            Value::Seq(items) => Some(items.into_iter().map(Cow::Owned).collect()),
            _ => None,
        },
    }
}

/// `==`/`!=` are `reflect.DeepEqual`; ordering needs two float64 numbers, else null.
fn compare(op: &Comparator, l: &Node, r: &Node) -> Node {
    match op {
        Comparator::Equal => value::boolean(deep_equal(l, r)),
        Comparator::NotEqual => value::boolean(!deep_equal(l, r)),
        _ => {
            let (Value::Float(a), Value::Float(b)) = (&l.value, &r.value) else {
                return value::null();
            };
            value::boolean(match op {
                Comparator::LessThan => a < b,
                Comparator::LessThanEqual => a <= b,
                Comparator::GreaterThan => a > b,
                _ => a >= b,
            })
        }
    }
}

/// go-jmespath `slice`: Python-style slicing with a non-zero step.
fn slice(
    items: &[Node],
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
) -> Result<Vec<Node>, Error> {
    if step == 0 {
        return Err(Error::Eval("Invalid slice, step cannot be 0".to_owned()));
    }
    let len = items.len() as i64;
    let cap = |v: i64| -> i64 {
        if v < 0 {
            let v = v + len;
            if v < 0 {
                if step < 0 { -1 } else { 0 }
            } else {
                v
            }
        } else if v >= len {
            if step < 0 { len - 1 } else { len }
        } else {
            v
        }
    };
    let start = match start {
        Some(s) => cap(s),
        None if step < 0 => len - 1,
        None => 0,
    };
    let stop = match stop {
        Some(s) => cap(s),
        None if step < 0 => -1,
        None => len,
    };
    let mut out = Vec::new();
    let mut i = start;
    if step > 0 {
        while i < stop {
            if let Some(n) = items.get(i as usize) {
                out.push(n.clone());
            }
            i += step;
        }
    } else {
        while i > stop {
            if let Some(n) = usize::try_from(i).ok().and_then(|i| items.get(i)) {
                out.push(n.clone());
            }
            i += step;
        }
    }
    Ok(out)
}
