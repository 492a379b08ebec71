//! Manifest files → resources: parse every document, expand `kind: List` (nested ones too, as
//! kubectl does), skip what is not a resource, and say why for everything that goes wrong,
//! with line and column.

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
        let mut nodes = Vec::new();
        if let Some(at) = expand_lists(doc.root, 0, &mut nodes) {
            out.diagnostics.push(Diagnostic::error(
                Code::Limit,
                format!(
                    "kind: List nested more than {MAX_LIST_NESTING} levels deep (kpol's limit); \
                     the items of the Lists below are not read"
                ),
                Some(Location::at(source, Span::new(at.start, at.start))),
            ));
        }
        for node in nodes {
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

/// Lists within Lists that are expanded; a List deeper than this is an error.
pub(crate) const MAX_LIST_NESTING: usize = 32;

/// Puts `node` into `out`, or, for a `kind: List` (`items` a sequence or null), its items,
/// each expanded the same way (kubectl flattens nested Lists), each keeping its own spans.
/// Other kinds are kept as they are, `*List` kinds too (an API list's items carry no kind).
/// `depth` is how many Lists hold `node`. Returns where the first List too deep to expand
/// starts; its items are dropped.
fn expand_lists(node: Node, depth: usize, out: &mut Vec<Node>) -> Option<Span> {
    let is_list = node
        .get("kind")
        .and_then(Node::as_str)
        .is_some_and(|k| k == "List")
        && matches!(
            node.get("items").map(|n| &n.value),
            Some(Value::Seq(_)) | Some(Value::Null)
        );
    if !is_list {
        out.push(node);
        return None;
    }
    if depth > MAX_LIST_NESTING {
        return Some(node.span);
    }
    let items = match node.value {
        Value::Map(mut m) => match m.remove("items").map(|n| n.value) {
            Some(Value::Seq(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let mut too_deep = None;
    for item in items {
        let at = expand_lists(item, depth + 1, out);
        too_deep = too_deep.or(at);
    }
    too_deep
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

    /// `depth` Lists, each holding a Pod and then the next List (six lines each).
    fn nested(depth: usize) -> String {
        let mut text = String::new();
        for d in 0..depth {
            let pad = "  ".repeat(d);
            if d > 0 {
                text.push_str(&"  ".repeat(d - 1));
                text.push_str("- ");
            }
            text.push_str(&format!(
                "apiVersion: v1\n{pad}kind: List\n{pad}items:\n{pad}- apiVersion: v1\n{pad}  kind: Pod\n{pad}  metadata: {{name: p{d}}}\n"
            ));
        }
        text
    }

    #[test]
    fn nested_lists_are_expanded_each_item_at_its_line() {
        let m = read(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: inner}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: outer}\n",
        );
        let names: Vec<&str> = m.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["inner", "outer"]);
        let lines: Vec<u32> = m
            .resources
            .iter()
            .filter_map(|r| {
                r.source
                    .as_ref()
                    .map(|s| s.line_col(r.root.span.start).line)
            })
            .collect();
        assert_eq!(lines, [7, 10]);
        assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
        // Another kind with items is a resource of its own.
        let m = read("apiVersion: v1\nkind: PodList\nitems:\n- kind: Pod\n");
        assert_eq!(m.resources.len(), 1);
        assert_eq!(m.resources[0].kind, "PodList");
    }

    #[test]
    fn lists_nested_too_deep_are_an_error_and_the_rest_is_read() {
        let m = read(&nested(MAX_LIST_NESTING + 1));
        assert_eq!(m.resources.len(), MAX_LIST_NESTING + 1);
        assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
        let m = read(&nested(MAX_LIST_NESTING + 3));
        // The Pods of the Lists that are expanded are read; the deeper ones are not.
        assert_eq!(m.resources.len(), MAX_LIST_NESTING + 1);
        assert_eq!(m.diagnostics.len(), 1);
        let d = &m.diagnostics[0];
        assert_eq!(d.code, Code::Limit);
        assert!(
            d.message.contains("nested more than 32 levels"),
            "{}",
            d.message
        );
        let line = d.location.as_ref().and_then(|l| l.start).map(|p| p.line);
        // The List too deep is the 34th: 6 lines per List before it.
        assert_eq!(line, Some(6 * (MAX_LIST_NESTING + 1) as u32 + 1));
    }
}
