//! The strategic merge of a preprocessed overlay into a resource, as kustomize's kyaml
//! `merge2` does it with Kyverno's options (mutate.md §4.5–4.6): maps merge key by key, lists
//! merge by the schema's merge keys with overlay elements first (`ListIncreaseDirection =
//! Prepend`), every other list is replaced, `null` deletes, `$patch` directives apply.

use super::merge_keys::{ListStrategy, SchemaType};
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

/// A merge failure (becomes `failed to patch resource: …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError(pub String);

/// Merges `overlay` into `dest`; `None` means the field is removed.
pub fn merge(
    dest: Option<&Node>,
    overlay: &Node,
    ty: SchemaType,
    list: ListStrategy,
    path: &str,
) -> Result<Option<Node>, MergeError> {
    let dest = dest.filter(|d| !d.is_null());
    match &overlay.value {
        Value::Null => Ok(None),
        Value::Map(om) => {
            match directive(om) {
                Some("delete") => return Ok(None),
                Some("replace") => return Ok(Some(without_directive(overlay))),
                _ => {}
            }
            let empty = Map::new();
            let dm = match dest.map(|d| &d.value) {
                None => &empty,
                Some(Value::Map(m)) => m,
                Some(v) => {
                    return Err(MergeError(format!(
                        "{path}: cannot merge an object into {}",
                        a(v.type_name())
                    )));
                }
            };
            merge_maps(dm, om, ty, path).map(|m| Some(with_value(dest, Value::Map(m))))
        }
        Value::Seq(oitems) => {
            let ditems = match dest.map(|d| &d.value) {
                None => return Ok(Some(Node::synthetic(Value::Seq(no_directives(oitems))))),
                Some(Value::Seq(items)) => items,
                Some(v) => {
                    return Err(MergeError(format!(
                        "{path}: cannot merge a list into {}",
                        a(v.type_name())
                    )));
                }
            };
            let merged = match list {
                ListStrategy::Replace => Some(no_directives(oitems)),
                ListStrategy::ScalarSet => Some(scalar_union(ditems, oitems)),
                ListStrategy::Keys(keys) => merge_lists(ditems, oitems, keys, ty, path)?,
            };
            Ok(merged.map(|items| with_value(dest, Value::Seq(items))))
        }
        scalar => match dest.map(|d| &d.value) {
            Some(Value::Map(_) | Value::Seq(_)) => Err(MergeError(format!(
                "{path}: cannot replace {} with {}",
                a(dest.map_or("null", |d| d.value.type_name())),
                a(scalar.type_name())
            ))),
            _ => Ok(Some(overlay.clone())),
        },
    }
}

/// A type's name with its article: `an object`, `a string`.
fn a(type_name: &str) -> String {
    let article = if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {type_name}")
}

/// Whether merging `overlay` into `dest` certainly gives `dest` back unchanged: the overlay
/// is maps only (no list, scalar, null or `$patch`), each over a map `dest` has.
pub(crate) fn is_noop(dest: &Node, overlay: &Node) -> bool {
    let (Value::Map(dm), Value::Map(om)) = (&dest.value, &overlay.value) else {
        return false;
    };
    directive(om).is_none()
        && om
            .iter()
            .all(|(k, o)| dm.get(k).is_some_and(|d| is_noop(d, o)))
}

/// A result node keeps the destination's span (so edits can find it), else none.
fn with_value(dest: Option<&Node>, value: Value) -> Node {
    Node::new(value, dest.map_or(Span::EMPTY, |d| d.span))
}

fn directive(m: &Map) -> Option<&str> {
    m.get("$patch").and_then(Node::as_str)
}

fn without_directive(n: &Node) -> Node {
    let mut n = n.clone();
    if let Value::Map(m) = &mut n.value {
        m.remove("$patch");
    }
    n
}

fn is_list_directive(n: &Node) -> bool {
    n.as_map()
        .is_some_and(|m| m.len() == 1 && directive(m).is_some())
}

fn no_directives(items: &[Node]) -> Vec<Node> {
    items
        .iter()
        .filter(|i| !is_list_directive(i))
        .cloned()
        .collect()
}

fn merge_maps(dm: &Map, om: &Map, ty: SchemaType, path: &str) -> Result<Map, MergeError> {
    let mut out = Map::with_capacity(dm.len() + om.len());
    for e in dm.entries() {
        match om.get(&e.key) {
            None => out.insert(e.key.clone(), e.key_span, e.value.clone()),
            Some(o) => {
                let (cty, strat) = ty.field(&e.key);
                let sub = format!("{path}/{}", e.key);
                if let Some(v) = merge(Some(&e.value), o, cty, strat, &sub)? {
                    out.insert(e.key.clone(), e.key_span, v);
                }
            }
        }
    }
    // New fields are appended in the overlay's order (kyaml appends them sorted; the order of
    // keys is not observable in Kyverno's JSON, and the overlay's order reads better in files).
    let new: Vec<&str> = om
        .keys()
        .filter(|k| *k != "$patch" && !dm.contains_key(k))
        .collect();
    for k in new {
        let Some(o) = om.get(k) else { continue };
        let (cty, strat) = ty.field(k);
        let sub = format!("{path}/{k}");
        if let Some(v) = merge(None, o, cty, strat, &sub)? {
            out.insert(k.to_owned(), Span::EMPTY, v);
        }
    }
    Ok(out)
}

fn scalar_union(d: &[Node], o: &[Node]) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for n in o.iter().chain(d) {
        if !out.iter().any(|x| value_eq(&x.value, &n.value)) {
            out.push(n.clone());
        }
    }
    out
}

fn key_of<'a>(n: &'a Node, keys: &[&str]) -> Vec<Option<&'a Value>> {
    keys.iter()
        .map(|k| n.get(k).map(|v| &v.value).filter(|v| !is_empty_key(v)))
        .collect()
}

fn is_empty_key(v: &Value) -> bool {
    matches!(v, Value::Null) || matches!(v, Value::Str(s) if s.is_empty())
}

/// Keys agree when every key is equal, or empty on one side.
fn keys_match(a: &[Option<&Value>], b: &[Option<&Value>]) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => value_eq(x, y),
        _ => true,
    })
}

fn merge_lists(
    d: &[Node],
    o: &[Node],
    keys: &[&str],
    ty: SchemaType,
    path: &str,
) -> Result<Option<Vec<Node>>, MergeError> {
    for item in o.iter().filter(|i| is_list_directive(i)) {
        match item.as_map().and_then(directive) {
            Some("replace") => return Ok(Some(no_directives(o))),
            Some("delete") => return Ok(None),
            _ => {}
        }
    }
    let mut used = vec![false; d.len()];
    let mut out = Vec::new();
    let mut keyless = Vec::new();
    for (i, oe) in o.iter().enumerate() {
        if is_list_directive(oe) {
            continue;
        }
        let ok = key_of(oe, keys);
        if ok.iter().all(Option::is_none) {
            keyless.push(oe.clone());
            continue;
        }
        let found = d
            .iter()
            .enumerate()
            .find(|(j, de)| !used[*j] && keys_match(&key_of(de, keys), &ok));
        let sub = format!("{path}/{i}");
        let dest = found.map(|(j, de)| {
            used[j] = true;
            de
        });
        let deleting = oe.as_map().is_some_and(|m| directive(m) == Some("delete"));
        if deleting {
            continue;
        }
        if let Some(v) = merge(dest, oe, ty, ListStrategy::Replace, &sub)?
            && !v.as_map().is_some_and(Map::is_empty)
        {
            out.push(v);
        }
    }
    out.extend(
        d.iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(n, _)| n.clone()),
    );
    out.extend(keyless);
    Ok(Some(out))
}

/// JSON equality: numbers by value (`1` = `1.0`), maps by key set, lists in order.
pub(crate) fn value_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            as_f64(a) == as_f64(b)
        }
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| value_eq(&p.value, &q.value))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| value_eq(&v.value, &w.value)))
        }
        _ => a == b,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}
