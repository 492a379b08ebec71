//! The envelope every CEL policy kind shares: what its loader reads from the document's
//! `metadata` (name, namespace, annotations), and the loaded [`Policy`] around its compiled body.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{CelBody, Policy, PolicyBody, PolicyKind};
use crate::source::Source;
use crate::yaml::Node;

/// What every CEL kind's envelope reads from `metadata` (name, namespace, annotations).
pub(crate) struct Envelope {
    pub(crate) name: String,
    /// The namespace of a namespaced kind (`default` when unset); `None` otherwise.
    pub(crate) namespace: Option<String>,
    api_version: String,
    annotations: BTreeMap<String, String>,
}

impl Envelope {
    /// Reads the envelope; the document is of a namespaced kind when its kind is `namespaced`.
    pub(crate) fn read(node: &Node, namespaced: &str) -> Self {
        let str_at = |path: &[&str]| node.get_path(path).and_then(Node::as_str);
        let namespace = (node.get("kind").and_then(Node::as_str) == Some(namespaced)).then(|| {
            str_at(&["metadata", "namespace"])
                .filter(|s| !s.is_empty())
                .unwrap_or("default")
                .to_owned()
        });
        Envelope {
            name: str_at(&["metadata", "name"]).unwrap_or("").to_owned(),
            namespace,
            api_version: node
                .get("apiVersion")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned(),
            annotations: node
                .get_path(&["metadata", "annotations"])
                .and_then(Node::as_map)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), v.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The loaded policy with `body`.
    pub(crate) fn policy(
        self,
        source: &Source,
        node: Node,
        kind: PolicyKind,
        body: Arc<dyn CelBody>,
    ) -> Policy {
        Policy {
            name: self.name,
            namespace: self.namespace,
            kind,
            source: source.clone(),
            annotations: self.annotations,
            background: true,
            raw: node,
            api_version: self.api_version,
            admission: true,
            match_conditions: None,
            body: PolicyBody::Cel(body),
        }
    }
}
