//! A manifest document as the engine sees it: normalised the way the Kyverno CLI normalises
//! resources before evaluation (match.md §6, validate.md §2.2), with its identity extracted.

use crate::source::Source;
use crate::yaml::{Map, Node, Reading, Value};

/// One Kubernetes resource taken from a file.
#[derive(Clone, Debug)]
pub struct Resource {
    /// The normalised document (integers as floats, null label maps as empty maps, the
    /// default namespace filled in). Spans still point into `source`.
    pub root: Node,
    pub api_version: String,
    pub kind: String,
    /// `metadata.name`, else `metadata.generateName`, else empty.
    pub name: String,
    /// The namespace; empty for cluster-scoped kinds.
    pub namespace: String,
    /// Where the document came from; `None` for resources kpol made itself.
    pub source: Option<Source>,
    /// Index of the document in its file.
    pub doc_index: usize,
}

/// Why a document is not a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAResource {
    NotAMap,
    MissingApiVersion,
    MissingKind,
}

/// apiVersion and kind of a document that is a resource.
fn identity(root: &Node) -> Result<(String, String), NotAResource> {
    let Value::Map(map) = &root.value else {
        return Err(NotAResource::NotAMap);
    };
    let api_version = map
        .get("apiVersion")
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(NotAResource::MissingApiVersion)?
        .to_owned();
    let kind = map
        .get("kind")
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(NotAResource::MissingKind)?
        .to_owned();
    Ok((api_version, kind))
}

impl Resource {
    /// Builds a resource from a parsed document, applying the CLI's normalisation.
    pub fn from_document(
        mut root: Node,
        source: Option<Source>,
        doc_index: usize,
    ) -> Result<Self, NotAResource> {
        // The normalisation changes no string, so the identity read after it is the same.
        normalise(&mut root);
        Self::from_parsed(root, source, doc_index)
    }

    /// [`Resource::from_document`] for a document read with [`READING`], whose values are
    /// normalised already.
    pub(crate) fn from_parsed(
        root: Node,
        source: Option<Source>,
        doc_index: usize,
    ) -> Result<Self, NotAResource> {
        let (api_version, kind) = identity(&root)?;
        Ok(Self::read(root, api_version, kind, source, doc_index))
    }

    /// This resource with its tree replaced by `root` (a patched copy), normalised and with
    /// name and namespace read again; a tree that is no longer a resource (no apiVersion or
    /// kind) keeps the old identity. The old tree is not copied.
    pub fn with_root(&self, root: Node) -> Self {
        match identity(&root) {
            Ok((api_version, kind)) => {
                let mut root = root;
                normalise(&mut root);
                Self::read(root, api_version, kind, self.source.clone(), self.doc_index)
            }
            Err(_) => Self {
                root,
                api_version: self.api_version.clone(),
                kind: self.kind.clone(),
                name: self.name.clone(),
                namespace: self.namespace.clone(),
                source: self.source.clone(),
                doc_index: self.doc_index,
            },
        }
    }

    /// A resource from a normalised tree and its identity: the default namespace filled in,
    /// name and namespace read.
    fn read(
        mut root: Node,
        api_version: String,
        kind: String,
        source: Option<Source>,
        doc_index: usize,
    ) -> Self {
        let cluster_scoped = is_cluster_scoped(group_of(&api_version), &kind);
        if !cluster_scoped {
            set_default_namespace(&mut root);
        }
        let meta = root.get("metadata");
        let name = meta
            .and_then(|m| m.get("name"))
            .and_then(Node::as_str)
            .or_else(|| {
                meta.and_then(|m| m.get("generateName"))
                    .and_then(Node::as_str)
            })
            .unwrap_or("")
            .to_owned();
        let namespace = if cluster_scoped {
            String::new()
        } else {
            meta.and_then(|m| m.get("namespace"))
                .and_then(Node::as_str)
                .unwrap_or("default")
                .to_owned()
        };
        Self {
            root,
            api_version,
            kind,
            name,
            namespace,
            source,
            doc_index,
        }
    }

    /// `(group, version)` of the apiVersion; core `v1` has group `""`.
    pub fn group_version(&self) -> (&str, &str) {
        split_api_version(&self.api_version)
    }

    pub fn labels(&self) -> Option<&Map> {
        self.root
            .get_path(&["metadata", "labels"])
            .and_then(Node::as_map)
    }

    pub fn annotations(&self) -> Option<&Map> {
        self.root
            .get_path(&["metadata", "annotations"])
            .and_then(Node::as_map)
    }

    /// `Kind namespace/name` or `Kind name`, as kpol prints a resource.
    pub fn display_name(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

fn group_of(api_version: &str) -> &str {
    split_api_version(api_version).0
}

/// The cluster-scoped built-in kinds the Kyverno CLI knows (match.md §6); only the group is
/// compared.
pub(crate) fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    const KINDS: &[(&str, &str)] = &[
        ("", "ComponentStatus"),
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding",
        ),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("authentication.k8s.io", "SelfSubjectReview"),
        ("authentication.k8s.io", "TokenReview"),
        ("authorization.k8s.io", "SelfSubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectRulesReview"),
        ("authorization.k8s.io", "SubjectAccessReview"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("networking.k8s.io", "IPAddress"),
        ("networking.k8s.io", "IngressClass"),
        ("networking.k8s.io", "ServiceCIDR"),
        ("node.k8s.io", "RuntimeClass"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceSlice"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("storage.k8s.io", "VolumeAttributesClass"),
    ];
    KINDS.iter().any(|&(g, k)| g == group && k == kind)
}

/// Integers → floats everywhere; null `labels`/`annotations`/`matchLabels`/`nodeSelector`/
/// `data`/`stringData` → empty maps (the CLI's ProcessResources and resource loading).
fn normalise(node: &mut Node) {
    READING.apply(None, &mut node.value);
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match &mut n.value {
            Value::Seq(items) => {
                for item in items.iter_mut() {
                    READING.apply(None, &mut item.value);
                    stack.push(item);
                }
            }
            Value::Map(m) => {
                for e in m.entries_mut() {
                    READING.apply(Some(&e.key), &mut e.value.value);
                    stack.push(&mut e.value);
                }
            }
            _ => {}
        }
    }
}

/// How the Kyverno CLI reads a resource's values: integers as floats, as JSON decoding into
/// Go's `interface{}` makes them, and a null `labels`/`annotations`/... as an empty map.
/// [`normalise`] applies it to a whole tree; manifests are read with it
/// ([`crate::yaml::parse_reading`]), so that a parsed resource is not walked again.
pub(crate) const READING: Reading = Reading {
    ints_as_floats: true,
    empty_map_for_null: &[
        "annotations",
        "labels",
        "matchLabels",
        "nodeSelector",
        "data",
        "stringData",
    ],
};

fn set_default_namespace(root: &mut Node) {
    let Value::Map(map) = &mut root.value else {
        return;
    };
    if !matches!(map.get("metadata").map(|m| &m.value), Some(Value::Map(_))) {
        map.insert(
            "metadata".to_owned(),
            crate::source::Span::EMPTY,
            Node::synthetic(Value::Map(Map::new())),
        );
    }
    if let Some(Node {
        value: Value::Map(meta),
        ..
    }) = map.get_mut("metadata")
    {
        let has_ns =
            matches!(meta.get("namespace").map(|n| &n.value), Some(Value::Str(s)) if !s.is_empty());
        if !has_ns {
            meta.insert(
                "namespace".to_owned(),
                crate::source::Span::EMPTY,
                Node::synthetic(Value::Str("default".to_owned())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn res(text: &str) -> Resource {
        let doc = parse_documents(text, Limits::default())
            .ok()
            .and_then(|d| d.into_iter().next())
            .map(|d| d.root)
            .unwrap_or_else(Node::null);
        Resource::from_document(doc, None, 0).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn namespaced_kinds_get_default_namespace_cluster_kinds_do_not() {
        let pod = res("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
        assert_eq!(pod.namespace, "default");
        assert_eq!(
            pod.root
                .get_path(&["metadata", "namespace"])
                .and_then(Node::as_str),
            Some("default")
        );
        let ns = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n");
        assert_eq!(ns.namespace, "");
        let crb = res(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: n}\n",
        );
        assert_eq!(crb.namespace, "");
    }

    /// Reading a manifest with [`READING`] gives the tree that normalising it afterwards gives:
    /// through anchors and aliases (of scalars, nulls and maps), merge keys, integer and null
    /// keys (keys are not values), nested lists and a `kind: List`.
    #[test]
    fn reading_normalised_agrees_with_normalising_afterwards() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  \
            metadata:\n    name: p\n    labels: &nolabels\n    annotations: *nolabels\n  \
            spec:\n    base: &base {port: &p 80, labels: ~, data: null, other: ~}\n    \
            merged: {<<: *base, extra: *p}\n    list: [1, [2, {nodeSelector: ~}], ~, 3.5]\n    \
            1: one\n    ~: nothing\n    count: *p\n- 7\n---\n42\n---\nlabels: ~\n";
        let plain = parse_documents(text, Limits::default()).unwrap();
        let read = crate::yaml::parse_reading(text, Limits::default(), READING).unwrap();
        assert_eq!(plain.len(), read.len());
        for (p, r) in plain.into_iter().zip(read) {
            let mut p = p.root;
            normalise(&mut p);
            assert_eq!(p, r.root);
        }
        let manifests = crate::manifest::read_manifests(
            &std::sync::Arc::new(crate::source::SourceFile::new("t.yaml", text)),
            Limits::default(),
        );
        let pod = &manifests.resources[0];
        assert_eq!(
            pod.root
                .get_path(&["spec", "merged", "extra"])
                .map(|n| &n.value),
            Some(&Value::Float(80.0))
        );
        assert!(
            pod.root
                .get_path(&["metadata", "annotations"])
                .and_then(Node::as_map)
                .is_some()
        );
    }

    #[test]
    fn integers_become_floats_and_null_labels_empty_maps() {
        let r = res("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\nspec: {x: 80}\n");
        assert_eq!(
            r.root.get_path(&["spec", "x"]).map(|n| &n.value),
            Some(&Value::Float(80.0))
        );
        assert!(
            matches!(r.root.get_path(&["metadata", "labels"]).map(|n| &n.value), Some(Value::Map(m)) if m.is_empty())
        );
    }
}
