//! A value read against its type: the checks structured-merge-diff makes when it converts an
//! object to a typed value (`typed.AsTyped`), the element identities of associative lists,
//! and the apiserver's search for atomic parts in an ApplyConfiguration.

use std::fmt::{self, Write as _};

use super::schema::{List, ListKind, Scalar, Schema, TypeRef};
use crate::yaml::{Node, Value};

/// Where an element sits in its list: by its keys, by its value (a set), or by position.
#[derive(Clone, Debug)]
pub(crate) enum PathElem<'a> {
    Key(Vec<(&'a str, &'a Value)>),
    Set(&'a Value),
    Index(usize),
}

impl PartialEq for PathElem<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (PathElem::Key(a), PathElem::Key(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((an, av), (bn, bv))| an == bn && values_equal(av, bv))
            }
            (PathElem::Set(a), PathElem::Set(b)) => values_equal(a, b),
            (PathElem::Index(a), PathElem::Index(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for PathElem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElem::Key(keys) => {
                f.write_str("[")?;
                for (i, (name, value)) in keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={}", ValueText(value))?;
                }
                f.write_str("]")
            }
            PathElem::Set(value) => write!(f, "[={}]", ValueText(value)),
            PathElem::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A value in a path: strings quoted, the rest as written.
struct ValueText<'a>(&'a Value);

impl fmt::Display for ValueText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Seq(items) => {
                f.write_str("[")?;
                for (i, n) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", ValueText(&n.value))?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                for (k, v) in m.iter() {
                    write!(f, "{k}={}", ValueText(&v.value))?;
                }
                Ok(())
            }
        }
    }
}

/// Equality as structured-merge-diff compares values: an integer equals the float of the same
/// number; maps compare key by key, lists element by element.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x == y,
        // Go compares float64(int) with the float.
        (Value::Float(x), Value::Int(i)) | (Value::Int(i), Value::Float(x)) => *x == *i as f64,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(a, b)| values_equal(&a.value, &b.value))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(&v.value, &w.value)))
        }
        _ => false,
    }
}

/// The identity of an associative-list element: its key fields (a missing one takes the
/// field's schema default, if any), or its value in a set.
pub(crate) fn list_key<'a>(
    schema: &'a Schema,
    list: &'a List,
    item: &'a Node,
) -> Result<PathElem<'a>, String> {
    match &list.kind {
        ListKind::Atomic => Err("an atomic list has no element keys".into()),
        ListKind::Set => match &item.value {
            Value::Map(_) => Err("a set has an element that is a map".into()),
            Value::Seq(_) => Err("a set has an element that is a list".into()),
            Value::Null => Err("a set has an element that is null".into()),
            v => Ok(PathElem::Set(v)),
        },
        ListKind::Map(keys) => {
            let map = match &item.value {
                Value::Map(m) => m,
                Value::Null => return Err("a keyed list has an element that is null".into()),
                v => {
                    return Err(format!(
                        "a keyed list has an element that is not a map but {}",
                        article(v)
                    ));
                }
            };
            let mut fields: Vec<(&str, &Value)> = Vec::with_capacity(keys.len());
            for name in keys {
                if let Some(v) = map.get(name) {
                    fields.push((name.as_str(), &v.value));
                    continue;
                }
                let elem = schema
                    .resolve(&list.elem)
                    .and_then(|v| v.map)
                    .ok_or_else(|| "a keyed list's elements must be maps".to_owned())?;
                if let Some(d) = elem.field(name).and_then(|f| f.default.as_ref()) {
                    fields.push((name.as_str(), d));
                }
            }
            if fields.is_empty() && !keys.is_empty() {
                return Err(format!(
                    "an element of a keyed list has none of its key fields ({}) and no defaults for them",
                    keys.join(", ")
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(b.0));
            Ok(PathElem::Key(fields))
        }
    }
}

/// `a string`, `an integer`, … for messages.
pub(crate) fn article(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Str(_) => "a string",
        Value::Seq(_) => "a list",
        Value::Map(_) => "a map",
    }
}

/// Checks a value against its type and collects every problem, as `path: message`.
pub(crate) struct Checker<'a> {
    pub schema: &'a Schema,
    /// Whether associative lists may repeat a key (allowed in the live object, not in a patch).
    pub allow_duplicates: bool,
    pub errors: Vec<String>,
}

impl Checker<'_> {
    pub(crate) fn check(&mut self, node: &Node, tr: &TypeRef, path: &mut String) {
        let Some(view) = self.schema.resolve(tr) else {
            self.error(path, "the schema has no such type".into());
            return;
        };
        let view = view.deduce(Some(&node.value));
        if let Some(map) = view.map {
            match &node.value {
                Value::Null => {}
                Value::Map(m) => {
                    for e in m.entries() {
                        let len = path.len();
                        let _ = write!(path, ".{}", e.key);
                        let ty = map.field(&e.key).map(|f| &f.ty).or(map.elem.as_ref());
                        match ty {
                            Some(ty) => self.check(&e.value, ty, path),
                            None => {
                                self.error(path, "field not declared in schema".into());
                                path.truncate(len);
                                break;
                            }
                        }
                        path.truncate(len);
                    }
                }
                v => self.error(path, format!("expected a map, got {}", article(v))),
            }
        } else if let Some(scalar) = view.scalar {
            let ok = matches!(
                (&node.value, scalar),
                (Value::Null, _)
                    | (Value::Int(_) | Value::Float(_), Scalar::Numeric)
                    | (Value::Str(_), Scalar::String)
                    | (Value::Bool(_), Scalar::Boolean)
                    | (
                        Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Bool(_),
                        Scalar::Untyped
                    )
            );
            if !ok {
                let want = match scalar {
                    Scalar::Numeric => "a number",
                    Scalar::String => "a string",
                    Scalar::Boolean => "a boolean",
                    Scalar::Untyped => "a scalar",
                };
                self.error(
                    path,
                    format!("expected {want}, got {}", article(&node.value)),
                );
            }
        } else if let Some(list) = view.list {
            match &node.value {
                Value::Null => {}
                Value::Seq(items) => self.check_items(list, items, path),
                v => self.error(path, format!("expected a list, got {}", article(v))),
            }
        } else {
            self.error(path, "the schema gives this type no form".into());
        }
    }

    fn check_items(&mut self, list: &List, items: &[Node], path: &mut String) {
        let mut seen: Vec<PathElem<'_>> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let pe = if list.kind == ListKind::Atomic {
                PathElem::Index(i)
            } else {
                match list_key(self.schema, list, item) {
                    Ok(pe) => pe,
                    Err(e) => {
                        self.error(path, format!("element {i}: {e}"));
                        return;
                    }
                }
            };
            if !matches!(pe, PathElem::Index(_)) {
                if !self.allow_duplicates && seen.contains(&pe) {
                    self.error(path, format!("duplicate entries for key {pe}"));
                }
                seen.push(pe.clone());
            }
            let len = path.len();
            let _ = write!(path, "{pe}");
            self.check(item, &list.elem, path);
            path.truncate(len);
        }
    }

    fn error(&mut self, path: &str, message: String) {
        self.errors.push(if path.is_empty() {
            message
        } else {
            format!("{path}: {message}")
        });
    }
}

/// The paths of the atomic lists, maps and structs a patch sets (apiserver `findAtomics`): it
/// descends through declared struct fields and list elements (by position), never through the
/// free keys of a map, so a schema-less (deduced) patch has none.
pub(crate) fn find_atomics(
    schema: &Schema,
    node: &Node,
    tr: &TypeRef,
    path: &mut String,
    out: &mut Vec<String>,
) {
    let Some(view) = schema.resolve(tr) else {
        return;
    };
    match &node.value {
        Value::Map(m) => {
            if let Some(map) = view.map {
                if view.map_atomic {
                    out.push(path.clone());
                }
                for e in m.entries() {
                    if let Some(f) = map.field(&e.key) {
                        let len = path.len();
                        let _ = write!(path, ".{}", e.key);
                        find_atomics(schema, &e.value, &f.ty, path, out);
                        path.truncate(len);
                    }
                }
            }
        }
        Value::Seq(items) => {
            if let Some(list) = view.list {
                if view.list_atomic {
                    out.push(path.clone());
                }
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    find_atomics(schema, item, &list.elem, path, out);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}
