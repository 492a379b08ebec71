//! The simulated admission request around a resource: operation, user, namespace labels.
//! Offline these come from defaults, values files and userinfo files (cli-compat.md §5–7).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

pub mod values;

use crate::resource::Resource;
use crate::yaml::{Map, Node, Value};
use values::Values;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Operation {
    #[default]
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "CREATE" => Some(Self::Create),
            "UPDATE" => Some(Self::Update),
            "DELETE" => Some(Self::Delete),
            "CONNECT" => Some(Self::Connect),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }
}

/// The requesting user (from a userinfo file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub username: String,
    pub groups: Vec<String>,
    /// `namespace:name` role keys.
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
    /// `userInfo.uid` and `userInfo.extra` (keys sorted, as Go marshals a map).
    pub uid: String,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Everything about the request that is not the resource itself.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub operation: Operation,
    /// Labels of namespaces, by namespace name (values file `namespaceSelector`).
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// `None` when no userinfo was given (match filters then ignore subjects/roles).
    pub user_info: Option<UserInfo>,
    /// Values injected into rule contexts (values file, `--set`).
    pub values: Arc<Values>,
    /// The cluster's Namespaces by name, as `kpol check` knows them (Namespace inputs, then
    /// the values file): CEL's `namespaceObject` for `validate.cel` and the CEL kinds.
    /// Empty in `kpol test`, where the Kyverno CLI reads only the values file.
    pub namespaces: Arc<BTreeMap<String, Node>>,
    /// The object before the change, for an UPDATE: the previous revision given with
    /// `kpol check --old` / `--diff-base`. `None`: the resource itself stands in for it, as
    /// in the Kyverno CLI (its `oldObject` is a copy of the resource, with the values
    /// file's `request.oldObject` merged over it).
    pub old_object: Option<Arc<Resource>>,
    /// What cluster-backed context entries (`apiCall`, `configMap`, `globalReference`) are
    /// served from offline: the virtual cluster and the test's mocks. Empty by default, and
    /// then those entries are not loaded, as in the Kyverno CLI without a cluster.
    pub offline: Arc<crate::cluster::Offline>,
    /// The objects a test's `paramResources` name, in file order: the params of
    /// MutatingAdmissionPolicy bindings (cel.md §11.2.1). Empty outside `kpol test`.
    pub params: Arc<Vec<Node>>,
}

/// What a rule's `kinds` are checked against (Kyverno's `PolicyContext.ResourceKind`): the
/// top-level group, version and kind, and the subresource (empty for none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MatchKind<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub subresource: &'a str,
}

impl Request {
    /// The kind the matcher sees for `resource`: its own, with no subresource; outside
    /// cluster mode, for a kind the values' `subresources` map, the mapping's parent kind and
    /// subresource, as the Kyverno v1.19 CLI matches it (`policy_processor.go`). The resource
    /// itself (its `request.object`, its row key) is unchanged.
    pub(crate) fn match_kind<'a>(&'a self, resource: &'a Resource) -> MatchKind<'a> {
        self.mapped_kind(resource).unwrap_or_else(|| {
            let (group, version) = resource.group_version();
            MatchKind {
                group,
                version,
                kind: &resource.kind,
                subresource: "",
            }
        })
    }

    /// [`Request::match_kind`] when a `subresources` mapping gives it; `None` otherwise.
    pub(crate) fn mapped_kind<'a>(&'a self, resource: &'a Resource) -> Option<MatchKind<'a>> {
        if self.values.subresources.is_empty() || self.offline.cluster.is_some() {
            return None;
        }
        let (group, version) = resource.group_version();
        let m = self.values.subresource_of(group, version, &resource.kind)?;
        Some(MatchKind {
            group: &m.parent.0,
            version: &m.parent.1,
            kind: &m.parent.2,
            subresource: m.subresource().unwrap_or(""),
        })
    }

    /// The namespace labels a classic policy (ClusterPolicy / Policy: match and exclude
    /// `namespaceSelector`, PolicyExceptions, `validationFailureActionOverrides`) sees for a
    /// resource in `namespace`: the values file's, and when it gives none (no entry, or
    /// `labels: {}`) in `clusterResources` mode, the labels of the cluster's Namespace object,
    /// as the Kyverno v1.19 CLI reads them (`processor/policy_processor.go`). The CEL kinds
    /// read only the values file, as upstream. A Namespace resource itself is matched on its
    /// own labels elsewhere (`namespace` is its empty one here).
    pub(crate) fn classic_namespace_labels(
        &self,
        namespace: &str,
    ) -> Cow<'_, BTreeMap<String, String>> {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        let given = self.namespace_labels.get(namespace);
        if given.is_some_and(|l| !l.is_empty()) || namespace.is_empty() {
            return Cow::Borrowed(given.unwrap_or(&EMPTY));
        }
        let found = self
            .offline
            .cluster
            .as_ref()
            .and_then(|c| c.namespace_labels(namespace));
        match found {
            Some(m) => Cow::Owned(m),
            None => Cow::Borrowed(given.unwrap_or(&EMPTY)),
        }
    }

    /// The operation the matcher sees: CONNECT only changes variables (match.md §5.7).
    pub(crate) fn match_operation(&self) -> Operation {
        match self.operation {
            Operation::Connect => Operation::Create,
            op => op,
        }
    }

    /// The old object of an UPDATE as `policy` sees it for `resource`: the previous revision
    /// (else the resource itself), with the values' `request.oldObject` keys (global, then
    /// the policy's for this resource) deep-merged over it, as the Kyverno CLI merges
    /// variables into its JSON context and reads `request.oldObject` back. Borrowed when no
    /// value changes it.
    pub(crate) fn old_for<'a>(&'a self, policy: &str, resource: &'a Resource) -> Cow<'a, Resource> {
        let base = self.old_object.as_deref().unwrap_or(resource);
        let keys: Vec<&(String, Node)> = self
            .values
            .for_resource(policy, &resource.name)
            .filter(|(k, _)| k == "request.oldObject" || k.starts_with("request.oldObject."))
            .collect();
        if keys.is_empty() {
            return Cow::Borrowed(base);
        }
        let mut root = base.root.clone();
        for (k, v) in keys {
            let rest: Vec<&str> = k.split('.').skip(2).collect();
            merge_at(&mut root, &rest, v);
        }
        Cow::Owned(base.with_root(root))
    }
}

/// Deep-merges `v` into `node` at `path` (maps merge key by key; anything else replaces),
/// creating maps on the way.
fn merge_at(node: &mut Node, path: &[&str], v: &Node) {
    if let Some((first, rest)) = path.split_first() {
        if !matches!(node.value, Value::Map(_)) {
            node.value = Value::Map(Map::new());
        }
        if let Value::Map(m) = &mut node.value {
            if m.get(first).is_none() {
                let empty = Node::synthetic(Value::Map(Map::new()));
                m.insert((*first).to_owned(), crate::source::Span::EMPTY, empty);
            }
            if let Some(child) = m.get_mut(first) {
                merge_at(child, rest, v);
            }
        }
        return;
    }
    match (&mut node.value, &v.value) {
        (Value::Map(dst), Value::Map(src)) => {
            for (k, sv) in src.iter() {
                match dst.get_mut(k) {
                    Some(dv) => merge_at(dv, &[], sv),
                    None => dst.insert(k.to_owned(), crate::source::Span::EMPTY, sv.clone()),
                }
            }
        }
        _ => *node = v.clone(),
    }
}

/// The user Kyverno matches an old object with (`matchResource` of the validate handlers):
/// one no rule names, so that a rule matching on subjects or roles does not match the old
/// object (the requester of the change need not be the one who created it).
pub(crate) fn old_object_matcher() -> UserInfo {
    UserInfo {
        username: "kyverno:kyverno-invalid-controller".to_owned(),
        groups: vec!["kyverno:invalidgroup".to_owned()],
        roles: vec!["kyverno:invalidrole".to_owned()],
        cluster_roles: vec!["kyverno:invalidrole".to_owned()],
        ..UserInfo::default()
    }
}
