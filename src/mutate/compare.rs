//! `patchedResources` comparison as `kyverno test` does it (mutate.md §10, cli-compat.md):
//! the expected document is found by apiVersion, kind, name and namespace; both sides are
//! normalised (managed-by label forced, `generate.kyverno.io/*` labels dropped, nulls and
//! empty maps/lists removed) and compared as JSON (numbers by value, lists in order).

use std::sync::Arc;

use super::merge::value_eq;
use super::{render, udiff};
use crate::manifest::read_manifests;
use crate::resource::Resource;
use crate::source::{SourceFile, Span};
use crate::yaml::{Limits, Map, Node, Value};

/// The outcome of one comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchedCheck {
    Match,
    /// No document of the file has the actual resource's identity (the row is dropped).
    NotFound,
    /// The file could not be read as resources.
    LoadError(String),
    /// A text diff of the two normalised resources (expected → actual).
    Mismatch(String),
}

/// Compares `actual` (a patched resource tree) with the matching document of `file_text`.
pub fn compare(file_name: &str, file_text: &str, actual: &Node) -> PatchedCheck {
    let source = Arc::new(SourceFile::new(file_name, file_text));
    let manifests = read_manifests(&source, Limits::default());
    if let Some(d) = manifests
        .diagnostics
        .iter()
        .find(|d| d.severity == crate::diagnostic::Severity::Error)
    {
        return PatchedCheck::LoadError(d.message.clone());
    }
    let Ok(actual) = Resource::from_document(actual.clone(), None, 0) else {
        return PatchedCheck::NotFound;
    };
    let same = |r: &&Resource| {
        r.api_version == actual.api_version
            && r.kind == actual.kind
            && r.name == actual.name
            && r.namespace == actual.namespace
    };
    let Some(expected) = manifests.resources.iter().find(same) else {
        return PatchedCheck::NotFound;
    };
    let (want, have) = (normalise(&expected.root), normalise(&actual.root));
    if value_eq(&want.value, &have.value) {
        PatchedCheck::Match
    } else {
        let (a, b) = (
            render::document(&sorted(&want)),
            render::document(&sorted(&have)),
        );
        PatchedCheck::Mismatch(udiff::unified(&a, &b, "expected", "actual"))
    }
}

/// Labels normalised, then tidied.
fn normalise(root: &Node) -> Node {
    let mut n = root.clone();
    if let Value::Map(m) = &mut n.value {
        let meta = m.get_mut("metadata");
        if let Some(Node {
            value: Value::Map(meta),
            ..
        }) = meta
        {
            let mut labels = match meta.remove("labels").map(|l| l.value) {
                Some(Value::Map(l)) => l,
                _ => Map::new(),
            };
            let mut kept = Map::new();
            for e in labels.entries() {
                if !e.key.starts_with("generate.kyverno.io/") {
                    kept.insert(e.key.clone(), e.key_span, e.value.clone());
                }
            }
            labels = kept;
            labels.insert(
                "app.kubernetes.io/managed-by".to_owned(),
                Span::EMPTY,
                Node::synthetic(Value::Str("kyverno".to_owned())),
            );
            meta.insert(
                "labels".to_owned(),
                Span::EMPTY,
                Node::synthetic(Value::Map(labels)),
            );
        }
    }
    tidy(&n).unwrap_or_else(|| Node::synthetic(Value::Map(Map::new())))
}

/// Removes nulls and empty maps/lists, recursively; `None` when the node itself goes.
fn tidy(n: &Node) -> Option<Node> {
    match &n.value {
        Value::Null => None,
        Value::Map(m) => {
            let mut out = Map::new();
            for e in m.entries() {
                if let Some(v) = tidy(&e.value) {
                    out.insert(e.key.clone(), e.key_span, v);
                }
            }
            (!out.is_empty()).then(|| Node::new(Value::Map(out), n.span))
        }
        Value::Seq(items) => {
            let out: Vec<Node> = items.iter().filter_map(tidy).collect();
            (!out.is_empty()).then(|| Node::new(Value::Seq(out), n.span))
        }
        _ => Some(n.clone()),
    }
}

/// Keys sorted at every level, for a stable rendering.
fn sorted(n: &Node) -> Node {
    match &n.value {
        Value::Map(m) => {
            let mut entries: Vec<(&str, &Node)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Map::with_capacity(entries.len());
            for (k, v) in entries {
                out.insert(k.to_owned(), Span::EMPTY, sorted(v));
            }
            Node::synthetic(Value::Map(out))
        }
        Value::Seq(items) => Node::synthetic(Value::Seq(items.iter().map(sorted).collect())),
        _ => n.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_documents;

    fn node(text: &str) -> Node {
        parse_documents(text, Limits::default())
            .unwrap()
            .remove(0)
            .root
    }

    #[test]
    fn identity_normalisation_and_diff() {
        let file = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {x: '1'}}\nspec: {n: 1, e: {}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n";
        let actual = node(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default, labels: {x: '1', generate.kyverno.io/y: z}}\nspec: {n: 1.0, z: null}\n",
        );
        assert_eq!(compare("f", file, &actual), PatchedCheck::Match);
        let other = node("apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n");
        assert_eq!(compare("f", file, &other), PatchedCheck::NotFound);
        let wrong = node("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {x: 2}\n");
        let PatchedCheck::Mismatch(d) = compare("f", file, &wrong) else {
            panic!("expected a mismatch")
        };
        assert!(d.contains("+spec:") && d.contains("+  x: 2"), "{d}");
    }
}
