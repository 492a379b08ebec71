//! Typed reads of policy fields with the error a schema check would give, pointing at the
//! offending node. Used by policy building and by the matcher's compiler.

use crate::source::Span;
use crate::yaml::{Map, Node, Value};

/// A field that does not have the type the Kyverno CRD schema requires.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub message: String,
    pub span: Span,
}

impl FieldError {
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Self {
            message: message.into(),
            span,
        }
    }
}

pub(crate) type FieldResult<T> = Result<T, FieldError>;

/// Keeps reading past a field error: the error is pushed to `errs` and `fallback` stands in,
/// so that the fields after it are checked too.
pub(crate) fn or_push<T>(res: FieldResult<T>, errs: &mut Vec<FieldError>, fallback: T) -> T {
    res.unwrap_or_else(|e| {
        errs.push(e);
        fallback
    })
}

fn type_error(path: &str, want: &str, node: &Node) -> FieldError {
    FieldError::new(
        format!(
            "{path}: Invalid value: \"{}\": {path} in body must be of type {want}",
            node.value.type_name()
        ),
        node.span,
    )
}

/// A map field; `None` when absent or null.
pub(crate) fn opt_map<'a>(parent: &'a Map, key: &str, path: &str) -> FieldResult<Option<&'a Map>> {
    match parent.get(key) {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(Node {
            value: Value::Map(m),
            ..
        }) => Ok(Some(m)),
        Some(n) => Err(type_error(&format!("{path}.{key}"), "object", n)),
    }
}

/// A list field; `None` when absent or null.
pub(crate) fn opt_seq<'a>(
    parent: &'a Map,
    key: &str,
    path: &str,
) -> FieldResult<Option<&'a [Node]>> {
    match parent.get(key) {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(Node {
            value: Value::Seq(s),
            ..
        }) => Ok(Some(s)),
        Some(n) => Err(type_error(&format!("{path}.{key}"), "array", n)),
    }
}

/// A string field; `None` when absent or null.
pub(crate) fn opt_str<'a>(parent: &'a Map, key: &str, path: &str) -> FieldResult<Option<&'a str>> {
    match parent.get(key) {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(Node {
            value: Value::Str(s),
            ..
        }) => Ok(Some(s)),
        Some(n) => Err(type_error(&format!("{path}.{key}"), "string", n)),
    }
}

/// A boolean field; `None` when absent or null.
pub(crate) fn opt_bool(parent: &Map, key: &str, path: &str) -> FieldResult<Option<bool>> {
    match parent.get(key) {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(Node {
            value: Value::Bool(b),
            ..
        }) => Ok(Some(*b)),
        Some(n) => Err(type_error(&format!("{path}.{key}"), "boolean", n)),
    }
}

/// A list of strings (`[]string`); `None` when absent or null.
pub(crate) fn opt_str_list(
    parent: &Map,
    key: &str,
    path: &str,
) -> FieldResult<Option<Vec<String>>> {
    let Some(items) = opt_seq(parent, key, path)? else {
        return Ok(None);
    };
    items
        .iter()
        .enumerate()
        .map(|(i, n)| match &n.value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(type_error(&format!("{path}.{key}[{i}]"), "string", n)),
        })
        .collect::<FieldResult<Vec<_>>>()
        .map(Some)
}

/// A `map[string]string`; `None` when absent or null.
pub(crate) fn opt_str_map(
    parent: &Map,
    key: &str,
    path: &str,
) -> FieldResult<Option<Vec<(String, String)>>> {
    let Some(m) = opt_map(parent, key, path)? else {
        return Ok(None);
    };
    m.iter()
        .map(|(k, n)| match &n.value {
            Value::Str(s) => Ok((k.to_owned(), s.clone())),
            _ => Err(type_error(&format!("{path}.{key}.{k}"), "string", n)),
        })
        .collect::<FieldResult<Vec<_>>>()
        .map(Some)
}

/// The node as a map, or a type error.
pub fn as_map<'a>(node: &'a Node, path: &str) -> FieldResult<&'a Map> {
    match &node.value {
        Value::Map(m) => Ok(m),
        _ => Err(type_error(path, "object", node)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    #[test]
    fn typed_reads() {
        let d = parse_documents("a: [x, z]\nb: 1\nc: {k: v}\nn: null\n", Limits::default())
            .unwrap()
            .remove(0);
        let m = d.root.as_map().unwrap();
        assert_eq!(
            opt_str_list(m, "a", "spec").unwrap(),
            Some(vec!["x".into(), "z".into()])
        );
        assert!(opt_str(m, "b", "spec").is_err());
        assert_eq!(opt_str(m, "n", "spec").unwrap(), None);
        assert_eq!(
            opt_str_map(m, "c", "spec").unwrap(),
            Some(vec![("k".into(), "v".into())])
        );
        assert!(opt_seq(m, "c", "spec").is_err());
    }
}
