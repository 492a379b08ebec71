//! A VAP or MAP binding's `paramRef`, resolved offline among a test's `paramResources` as the
//! Kyverno v1.19 CLI resolves it (cel.md §5, §11.2.1; `pkg/admissionpolicy/validate.go`
//! `processVAPWithoutClient`, `mutate.go` `matchesSelector`): `paramKind` is not compared and
//! every `paramResources` object is a candidate; with a `selector`, every object whose labels
//! match, as a list object (`params.items`); else the first whose name equals the reference's
//! (or, without a name, whose namespace does). `parameterNotFoundAction` is not read.

use std::collections::BTreeMap;

use cel::Value;

use crate::cel::convert::{map_of, to_cel};
use crate::matching::selector::LabelSelector;
use crate::yaml::Node;

/// A compiled `paramRef`.
#[derive(Clone, Debug)]
pub struct ParamRef {
    pub name: String,
    pub namespace: String,
    pub selector: Option<LabelSelector>,
}

impl ParamRef {
    /// Reads `paramRef`; a malformed selector is an error message.
    pub fn read(node: &Node) -> Result<Self, String> {
        let text = |k: &str| node.get(k).and_then(Node::as_str).unwrap_or("").to_owned();
        let selector = match node.as_map() {
            Some(m) => crate::matching::compile_selector(m, "selector", "paramRef")
                .map_err(|e| e.message)?,
            None => None,
        };
        Ok(ParamRef {
            name: text("name"),
            namespace: text("namespace"),
            selector,
        })
    }

    /// The params among `candidates`; `None` when nothing is found.
    pub fn resolve(&self, candidates: &[Node]) -> Option<Value> {
        if let Some(sel) = &self.selector {
            let items: Vec<Value> = candidates
                .iter()
                .filter(|p| sel.matches(&labels(p)).unwrap_or(false))
                .map(to_cel)
                .collect();
            return (!items.is_empty()).then(|| map_of([("items", Value::List(items.into()))]));
        }
        candidates
            .iter()
            .find(|p| {
                if !self.name.is_empty() {
                    meta(p, "name") == self.name
                } else {
                    !self.namespace.is_empty() && meta(p, "namespace") == self.namespace
                }
            })
            .map(to_cel)
    }
}

fn labels(n: &Node) -> BTreeMap<String, String> {
    n.get_path(&["metadata", "labels"])
        .and_then(Node::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

fn meta<'a>(n: &'a Node, key: &str) -> &'a str {
    n.get_path(&["metadata", key])
        .and_then(Node::as_str)
        .unwrap_or("")
}
