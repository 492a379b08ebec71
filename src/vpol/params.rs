//! A VAP or MAP binding's `paramRef`, resolved offline among a test's `paramResources` as the
//! Kyverno v1.19 CLI resolves it (cel.md §5, §11.2.1; `pkg/admissionpolicy/validate.go`
//! `processVAPWithoutClient`, `mutate.go` `matchesSelector`): `paramKind` is not compared and
//! every `paramResources` object is a candidate; with a `selector`, every object whose labels
//! match, as a list object (`params.items`); else the first whose name equals the reference's
//! (or, without a name, whose namespace does). `parameterNotFoundAction` is not read there.
//!
//! [`collect`] is the other resolution, the one Kyverno runs against a cluster client
//! (`pkg/admissionpolicy/utils.go` `CollectParams`, called by the ClusterPolicy `validate.cel`
//! handler): `paramKind` and scope are honoured and `parameterNotFoundAction: Deny` turns an
//! empty selection into an error.

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
    /// `parameterNotFoundAction` is `Deny`.
    pub deny_when_missing: bool,
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
            deny_when_missing: text("parameterNotFoundAction") == "Deny",
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

/// Where [`collect`] looks for params: objects (a test's `paramResources`, the virtual
/// cluster's objects, params files) and whether a kind is namespaced.
pub struct ParamPool<'a> {
    pub objects: Vec<&'a Node>,
    /// The custom kinds CRDs taught: `(group, kind, namespaced)`.
    pub custom_scopes: Vec<(String, String, bool)>,
}

impl ParamPool<'_> {
    /// Whether `kind` of `group` is namespaced: a CRD's scope, else every built-in kind that is
    /// not cluster-scoped (a kind nothing describes counts as namespaced).
    fn namespaced(&self, group: &str, kind: &str) -> bool {
        self.custom_scopes
            .iter()
            .find(|(g, k, _)| g == group && k == kind)
            .map_or_else(
                || !crate::resource::is_cluster_scoped(group, kind),
                |(_, _, n)| *n,
            )
    }
}

/// The params of a `paramKind` (`{apiVersion, kind}`) and `paramRef` for a resource in
/// `namespace` (empty for a cluster-scoped one), as `CollectParams` selects them from a
/// cluster: a namespaced kind is read in `paramRef.namespace`, else in the resource's own
/// namespace (an error for a cluster-scoped resource); a cluster-scoped kind refuses
/// `paramRef.namespace`. A name gets one object (absent: an error); a selector lists the
/// matching ones; nothing selected with `parameterNotFoundAction: Deny` is an error.
pub fn collect(
    param_kind: &Node,
    param_ref: &ParamRef,
    namespace: &str,
    pool: &ParamPool,
) -> Result<Vec<Value>, String> {
    let (api_version, kind, group) = read_param_kind(param_kind)?;
    let namespaced = pool.namespaced(&group, kind);
    let params_namespace = if namespaced {
        if !param_ref.namespace.is_empty() {
            param_ref.namespace.as_str()
        } else if namespace.is_empty() {
            return Err(
                "can't use namespaced paramRef to match cluster-scoped resources".to_owned(),
            );
        } else {
            namespace
        }
    } else if !param_ref.namespace.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".to_owned(),
        );
    } else {
        ""
    };
    // An object of a namespaced kind written without a namespace lands in `default`.
    fn object_namespace(n: &Node, namespaced: bool) -> &str {
        match meta(n, "namespace") {
            "" if namespaced => "default",
            ns => ns,
        }
    }
    let of_kind = pool.objects.iter().copied().filter(|n| {
        n.get("apiVersion").and_then(Node::as_str) == Some(api_version)
            && n.get("kind").and_then(Node::as_str) == Some(kind)
            && (params_namespace.is_empty() || object_namespace(n, namespaced) == params_namespace)
    });
    let params = select(of_kind, &group, kind, param_ref)?;
    if params.is_empty() && param_ref.deny_when_missing {
        return Err("no params found".to_owned());
    }
    Ok(params)
}

/// A `paramKind`'s apiVersion, kind and group (`schema.ParseGroupVersion`'s error worded as
/// `CollectParams` words it).
fn read_param_kind(param_kind: &Node) -> Result<(&str, &str, String), String> {
    let text = |k: &str| param_kind.get(k).and_then(Node::as_str).unwrap_or("");
    let api_version = text("apiVersion");
    let (group, _) = crate::cluster::parse_group_version(api_version)
        .map_err(|_| "can't parse the parameter resource group version".to_owned())?;
    Ok((api_version, text("kind"), group))
}

/// The params `param_ref` selects among `of_kind` (the readable objects of the param kind): a
/// name one object (absent: the API server's not-found error), a selector every object whose
/// labels match, neither nothing.
fn select<'a>(
    mut of_kind: impl Iterator<Item = &'a Node>,
    group: &str,
    kind: &str,
    param_ref: &ParamRef,
) -> Result<Vec<Value>, String> {
    if !param_ref.name.is_empty() {
        return match of_kind.find(|n| meta(n, "name") == param_ref.name) {
            Some(n) => Ok(vec![to_cel(n)]),
            None => Err(format!(
                "{} \"{}\" not found",
                crate::cluster::group_resource(&(
                    group.to_owned(),
                    String::new(),
                    crate::base::gvk::plural(kind)
                )),
                param_ref.name
            )),
        };
    }
    Ok(match &param_ref.selector {
        Some(sel) => of_kind
            .filter(|n| sel.matches(&labels(n)).unwrap_or(false))
            .map(to_cel)
            .collect(),
        None => Vec::new(),
    })
}

/// The params of a VAP binding in `clusterResources` mode, as the Kyverno v1.19.0 CLI's fake
/// cluster gives them (`processVAPWithClient` → `CollectParams` over `ext/cluster/fake.go`'s
/// client): its discovery reports every kind it serves as cluster-scoped, so the params are
/// read with no namespace — a `paramRef.namespace` is refused, a name finds only an object
/// stored without a namespace (a namespaced kind written without one is stored in
/// `default`), a selector lists the matching objects of every namespace. `discovered`: the
/// fake discovery serves the kind (`Cluster::find_resource`), else the scope check fails.
///
/// `Ok(None)`: a selector matched nothing and nothing denies — the CLI indexes the empty
/// list and panics there. One param is the object itself, several a list (`items`).
pub(crate) fn collect_in_fake_cluster(
    param_kind: &Node,
    param_ref: &ParamRef,
    pool: &ParamPool,
    discovered: bool,
) -> Result<Option<Value>, String> {
    let (api_version, kind, group) = read_param_kind(param_kind)?;
    if !discovered {
        return Err("failed to check if resource is namespaced or not (not found)".to_owned());
    }
    if !param_ref.namespace.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".to_owned(),
        );
    }
    let namespaced = pool.namespaced(&group, kind);
    let of_kind = pool.objects.iter().copied().filter(|n| {
        n.get("apiVersion").and_then(Node::as_str) == Some(api_version)
            && n.get("kind").and_then(Node::as_str) == Some(kind)
    });
    // A name is looked up outside any namespace; a selector lists every namespace.
    let stored_without_namespace = |n: &&Node| meta(n, "namespace").is_empty() && !namespaced;
    let readable = of_kind.filter(|n| param_ref.name.is_empty() || stored_without_namespace(n));
    let mut params = select(readable, &group, kind, param_ref)?;
    match params.len() {
        0 if param_ref.deny_when_missing => Err("no params found".to_owned()),
        0 => Ok(None),
        1 => Ok(params.pop()),
        _ => Ok(Some(map_of([("items", Value::List(params.into()))]))),
    }
}

/// [`collect_in_fake_cluster`] over the objects of the virtual cluster: a binding's params in
/// `clusterResources` mode (VAP and MAP bindings alike). `param_kind`: the policy's
/// `spec.paramKind`.
pub(crate) fn from_fake_cluster(
    param_kind: Option<&Node>,
    param_ref: &ParamRef,
    cluster: &crate::cluster::Cluster,
) -> Result<Option<Value>, String> {
    let null = Node::null();
    let param_kind = param_kind.unwrap_or(&null);
    let kind = param_kind.get("kind").and_then(Node::as_str);
    let discovered = kind.is_some_and(|k| cluster.find_resource(k).is_some());
    let pool = ParamPool {
        objects: cluster.objects().map(|(_, _, _, n)| n).collect(),
        custom_scopes: cluster
            .custom_kinds()
            .iter()
            .map(|c| (c.group.clone(), c.kind.clone(), c.namespaced))
            .collect(),
    };
    collect_in_fake_cluster(param_kind, param_ref, &pool, discovered)
}
