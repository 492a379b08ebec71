//! The envelope every CEL policy kind shares: what its loader reads from the document's
//! `metadata` (name, namespace, annotations), and the loaded [`Policy`] around its compiled body.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{CelBody, Policy, PolicyBody, PolicyKind};
use crate::source::{Source, Span};
use crate::yaml::Node;

/// What every CEL kind's envelope reads from `metadata` (name, namespace, annotations).
pub(crate) struct Envelope {
    pub(crate) name: String,
    /// The namespace of a namespaced kind (`default` when unset); `None` otherwise.
    pub(crate) namespace: Option<String>,
    api_version: String,
    annotations: BTreeMap<String, String>,
}

/// What every CEL loader starts from ([`Envelope::open`]): the envelope, which of the kind's
/// two forms the document is (cluster-wide or namespaced), and its `spec`.
pub(crate) struct Opened {
    pub(crate) envelope: Envelope,
    pub(crate) kind: PolicyKind,
    /// `spec`, or null when the document has none.
    pub(crate) spec: Node,
}

impl Opened {
    /// `<Kind> <name>`: how the loader's diagnostics name the policy.
    pub(crate) fn what(&self) -> String {
        format!("{} {}", self.kind.name(), self.envelope.name)
    }

    /// The problem of a `spec` that is not a map (a missing one included), at the spec.
    pub(crate) fn spec_problem(&self) -> Option<(String, Span)> {
        self.spec.as_map().is_none().then(|| {
            (
                format!("spec must be a map, not {}", self.spec.value.type_name()),
                self.spec.span,
            )
        })
    }

    /// `spec.matchConstraints`, when written and not null.
    pub(crate) fn match_constraints(&self) -> Option<&Node> {
        self.spec.get("matchConstraints").filter(|n| !n.is_null())
    }

    /// The loaded policy with `body`.
    pub(crate) fn policy(self, source: &Source, node: Node, body: Arc<dyn CelBody>) -> Policy {
        self.envelope.policy(source, node, self.kind, body)
    }
}

impl Envelope {
    /// The start every CEL loader shares: the envelope of a document of `cluster` or (when
    /// its `kind` says so) `namespaced`, and its `spec`. A kind with no namespaced form
    /// passes `None`.
    pub(crate) fn open(node: &Node, cluster: PolicyKind, namespaced: Option<PolicyKind>) -> Opened {
        let envelope = Envelope::read(node, namespaced.map_or("", PolicyKind::name));
        let kind = match namespaced {
            Some(ns) if envelope.namespace.is_some() => ns,
            _ => cluster,
        };
        Opened {
            envelope,
            kind,
            spec: node.get("spec").cloned().unwrap_or_else(Node::null),
        }
    }

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
