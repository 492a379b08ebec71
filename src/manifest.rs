//! Manifest files → resources: parse every document, expand `kind: List`, skip what is not a
//! resource, and say why for everything that goes wrong, with line and column.

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::resource::{NotAResource, Resource};
use crate::source::{Source, Span};
use crate::yaml::{Limits, Node, Value, parse_reading};

/// The resources of one file and the problems found reading it.
#[derive(Debug, Default)]
pub struct Manifests {
    pub resources: Vec<Resource>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a source into resources. A YAML error rejects the whole file, as Kubernetes does.
pub fn read_manifests(source: &Source, limits: Limits) -> Manifests {
    let mut out = Manifests::default();
    let docs = match parse_reading(source.text(), limits, crate::resource::READING) {
        Ok(d) => d,
        Err(e) => {
            out.diagnostics.push(Diagnostic::error(
                Code::Yaml,
                format!("invalid YAML: {}", e.message),
                Some(Location::at(source, Span::new(e.offset, e.offset))),
            ));
            return out;
        }
    };
    for doc in docs {
        for node in expand_lists(doc.root) {
            let span = node.span;
            match Resource::from_parsed(node, Some(source.clone()), doc.index) {
                Ok(r) => out.resources.push(r),
                Err(why) => {
                    let what = match why {
                        NotAResource::NotAMap => "document is not a map",
                        NotAResource::MissingApiVersion => "document has no apiVersion",
                        NotAResource::MissingKind => "document has no kind",
                    };
                    out.diagnostics.push(Diagnostic::info(
                        Code::NotAResource,
                        format!("skipped: {what}"),
                        Some(Location::at(source, Span::new(span.start, span.start))),
                    ));
                }
            }
        }
    }
    out
}

/// `kind: List` (and `*List` kinds with `items`, as kubectl writes them) → its items.
fn expand_lists(root: Node) -> Vec<Node> {
    let is_list = root
        .get("kind")
        .and_then(Node::as_str)
        .is_some_and(|k| k == "List")
        && matches!(
            root.get("items").map(|n| &n.value),
            Some(Value::Seq(_)) | Some(Value::Null)
        );
    if !is_list {
        return vec![root];
    }
    match root.value {
        Value::Map(mut m) => match m.remove("items").map(|n| n.value) {
            Some(Value::Seq(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use std::sync::Arc;

    fn read(text: &str) -> Manifests {
        read_manifests(
            &Arc::new(SourceFile::new("m.yaml", text)),
            Limits::default(),
        )
    }

    #[test]
    fn lists_are_expanded_with_their_own_spans() {
        let m = read(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n",
        );
        assert_eq!(m.resources.len(), 2);
        assert_eq!(m.resources[1].name, "b");
        let src = m.resources[1].source.clone();
        let lc = src.map(|s| s.line_col(m.resources[1].root.span.start));
        assert_eq!(lc.map(|l| l.line), Some(7));
    }

    #[test]
    fn yaml_errors_have_a_position_and_non_resources_are_reported() {
        let m = read("a: [1\n");
        assert_eq!(m.diagnostics.len(), 1);
        assert_eq!(m.diagnostics[0].code, Code::Yaml);
        assert!(
            m.diagnostics[0]
                .location
                .as_ref()
                .and_then(|l| l.start)
                .is_some()
        );
        let m = read("foo: bar\n");
        assert!(m.resources.is_empty());
        assert_eq!(m.diagnostics[0].code, Code::NotAResource);
    }
}
