//! In-pattern references `$(path)` (validate.md §6,
//! `kyverno/kyverno:pkg/engine/variables/vars.go` `substituteReferences`).
//!
//! References are resolved against the pattern document itself (for anyPattern: the whole
//! list, so absolute paths start with the index), before `{{ }}` variables. Paths are Go
//! traversal paths: `""` at the root, `/key` per map step with `/` in keys escaped as `\/`,
//! `/index` per list step; anchors are stripped only from the traversal side when comparing,
//! so a relative reference written under an anchored key keeps the anchor and never
//! resolves (an upstream quirk, kept).

use std::sync::LazyLock;

use regex::Regex;

use super::anchor::parse_anchor;
use super::messages::go_sprint;
use super::scalar::{Op, operator_of};
use crate::number::format_go_f6;
use crate::yaml::{Map, Node, Value};

/// `RegexReferences`: `$(...)` at the start, or preceded by a character other than `\`.
static REFERENCES: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\$\(.[^ ]*\)|[^\\]\$\(.[^ ]*\)").ok());
/// `RegexEscpReferences`: `\$(...)`.
static ESCAPED: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\\\$\(.[^ )]*\)").ok());

/// Whether any string or key of `doc` may hold a reference (or an escaped one).
pub(crate) fn has_references(doc: &Value) -> bool {
    match doc {
        Value::Str(s) => opens_reference(s),
        Value::Map(m) => m
            .iter()
            .any(|(k, v)| opens_reference(k) || has_references(&v.value)),
        Value::Seq(items) => items.iter().any(|i| has_references(&i.value)),
        _ => false,
    }
}

/// Whether `s` holds `$(` (perf: a byte search, called on every string of every pattern).
fn opens_reference(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr_iter(b'$', b).any(|i| b.get(i + 1) == Some(&b'('))
}

/// Substitutes every reference in `doc`. `Ok(None)` when there is nothing to substitute;
/// `Err` carries Kyverno's substitution error text.
pub(crate) fn substitute_references(doc: &Value) -> Result<Option<Value>, String> {
    if !has_references(doc) {
        return Ok(None);
    }
    substitute(doc, "", doc).map(Some)
}

fn substitute(value: &Value, path: &str, doc: &Value) -> Result<Value, String> {
    Ok(match value {
        Value::Str(s) => Value::Str(substitute_string(s, path, doc)?),
        Value::Map(m) => {
            let mut out = Map::with_capacity(m.len());
            for e in m.entries() {
                let key = substitute_string(&e.key, path, doc)?;
                let child = child_key_path(path, &e.key);
                let v = substitute(&e.value.value, &child, doc)?;
                out.insert(key, e.key_span, Node::new(v, e.value.span));
            }
            Value::Map(out)
        }
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let v = substitute(&item.value, &format!("{path}/{i}"), doc)?;
                out.push(Node::new(v, item.span));
            }
            Value::Seq(out)
        }
        other => other.clone(),
    })
}

fn child_key_path(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('/', "\\/"))
}

/// `substituteReferencesIfAny` for one string at traversal path `path`.
fn substitute_string(s: &str, path: &str, doc: &Value) -> Result<String, String> {
    if !s.contains("$(") {
        return Ok(s.to_owned());
    }
    let mut value = s.to_owned();
    if let Some(re) = REFERENCES.as_ref() {
        for m in re.find_iter(s) {
            let old = m.as_str();
            // A match not at the start carries the preceding character, which is kept.
            let (prefix, reference) = if old.starts_with("$(") {
                ("", old)
            } else {
                let cut = old.chars().next().map_or(0, char::len_utf8);
                old.split_at(cut)
            };
            let resolved = resolve_reference(doc, reference, path)
                .map_err(|e| format!("failed to resolve {reference} at path {path}: {e}"))?;
            match resolved {
                Some(Value::Str(v)) => value = value.replacen(old, &format!("{prefix}{v}"), 1),
                None | Some(Value::Null) => {
                    return Err(format!(
                        "got nil resolved variable {reference} at path {path}: <nil>"
                    ));
                }
                Some(_) => {
                    return Err(format!(
                        "NotResolvedReferenceErr,reference {reference} not resolved at path {path}"
                    ));
                }
            }
        }
    }
    if let Some(re) = ESCAPED.as_ref() {
        let escaped: Vec<String> = re
            .find_iter(&value)
            .map(|m| m.as_str().to_owned())
            .collect();
        for e in escaped {
            value = value.replace(&e, &e[1..]);
        }
    }
    Ok(value)
}

/// `resolveReference`: the referenced value, prefixed with the operator when there is one.
fn resolve_reference(
    doc: &Value,
    reference: &str,
    abs_path: &str,
) -> Result<Option<Value>, String> {
    let trimmed = reference.trim_matches(['$', '(', ')']);
    let op = operator_of(trimmed);
    let path = trimmed.get(op.text().len()..).unwrap_or("");
    if path.is_empty() {
        return Err("expected path, found empty reference".to_owned());
    }
    let full = if path.starts_with('/') {
        path.to_owned()
    } else {
        go_path_join(&[abs_path, path])
    };
    let found = value_at(doc, &full);
    if op == Op::Equal {
        return Ok(found);
    }
    let text = match &found {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) => format_go_f6(*f),
        other => {
            return Err(format!(
                "incorrect expression: operator {} does not match with value {}",
                op.text(),
                go_sprint(other.as_ref().unwrap_or(&Value::Null))
            ));
        }
    };
    Ok(Some(Value::Str(format!("{}{text}", op.text()))))
}

/// `getValueFromReference`: the last leaf or map key (keys sit at their map's path) whose
/// anchor-stripped traversal path equals `target`.
fn value_at(doc: &Value, target: &str) -> Option<Value> {
    fn visit(v: &Value, path: &str, target: &str, found: &mut Option<Value>) {
        match v {
            Value::Map(m) => {
                let here = remove_anchors_from_path(path) == target;
                for e in m.entries() {
                    if here {
                        *found = Some(Value::Str(e.key.clone()));
                    }
                    visit(&e.value.value, &child_key_path(path, &e.key), target, found);
                }
            }
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    visit(&item.value, &format!("{path}/{i}"), target, found);
                }
            }
            leaf => {
                if remove_anchors_from_path(path) == target {
                    *found = Some(leaf.clone());
                }
            }
        }
    }
    let mut found = None;
    visit(doc, "", target, &mut found);
    found.filter(|v| *v != Value::Null)
}

/// `anchor.RemoveAnchorsFromPath`.
fn remove_anchors_from_path(s: &str) -> String {
    let mut parts: Vec<&str> = s.split('/').collect();
    if parts.first() == Some(&"") {
        parts.remove(0);
    }
    let parts: Vec<&str> = parts
        .into_iter()
        .map(|p| parse_anchor(p).map_or(p, |a| a.key))
        .collect();
    let joined = go_path_join(&parts);
    if s.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Go `path.Join`: non-empty elements joined with `/`, then cleaned; `""` if all are empty.
fn go_path_join(elems: &[&str]) -> String {
    let joined = elems
        .iter()
        .filter(|e| !e.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    if joined.is_empty() {
        return String::new();
    }
    go_path_clean(&joined)
}

/// Go `path.Clean`.
fn go_path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".to_owned();
    }
    let rooted = p.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_owned(),
        (false, false) => body,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn yaml(text: &str) -> Value {
        parse_documents(text, Limits::default()).unwrap()[0]
            .root
            .value
            .clone()
    }

    #[test]
    fn paths() {
        assert_eq!(go_path_clean("/a/b/../c/./d/"), "/a/c/d");
        assert_eq!(go_path_clean("a/../.."), "..");
        assert_eq!(go_path_clean("/.."), "/");
        assert_eq!(go_path_join(&["/a/b", "./../c"]), "/a/c");
        assert_eq!(go_path_join(&["", ""]), "");
        assert_eq!(
            remove_anchors_from_path("/spec/=(containers)/0/(name)"),
            "/spec/containers/0/name"
        );
        assert_eq!(remove_anchors_from_path(""), "");
    }

    #[test]
    fn relative_reference_with_operator() {
        let doc = yaml(
            "spec:\n  containers:\n  - name: '*'\n    resources:\n      requests:\n        memory: $(<=./../../limits/memory)\n      limits:\n        memory: 2048Mi\n",
        );
        let out = substitute_references(&doc).unwrap().unwrap();
        let containers = match &out {
            Value::Map(m) => m.get("spec").unwrap().get("containers").unwrap().clone(),
            _ => panic!(),
        };
        let Value::Seq(items) = containers.value else {
            panic!()
        };
        let mem = items[0]
            .get_path(&["resources", "requests", "memory"])
            .unwrap();
        assert_eq!(mem.as_str(), Some("<=2048Mi"));
    }

    #[test]
    fn reference_forms_and_errors() {
        let doc = yaml("a: x\nb: pre-$(/a)-post\nc: \\$(/a)\nnum: 5\nd: $(>/num)\n");
        let out = substitute_references(&doc).unwrap().unwrap();
        let get = |k: &str| match &out {
            Value::Map(m) => m.get(k).unwrap().value.clone(),
            _ => panic!(),
        };
        assert_eq!(get("b"), Value::Str("pre-x-post".into()));
        assert_eq!(get("c"), Value::Str("$(/a)".into()));
        assert_eq!(get("d"), Value::Str(">5".into()));

        let missing = yaml("a: $(./../nothere)\n");
        assert_eq!(
            substitute_references(&missing).unwrap_err(),
            "got nil resolved variable $(./../nothere) at path /a: <nil>"
        );
        let number = yaml("num: 5\na: $(/num)\n");
        assert_eq!(
            substitute_references(&number).unwrap_err(),
            "NotResolvedReferenceErr,reference $(/num) not resolved at path /a"
        );
        let op_missing = yaml("a: $(<=/x)\n");
        assert_eq!(
            substitute_references(&op_missing).unwrap_err(),
            "failed to resolve $(<=/x) at path /a: incorrect expression: operator <= does not match with value <nil>"
        );
        assert_eq!(substitute_references(&yaml("a: b\n")).unwrap(), None);
    }
}
