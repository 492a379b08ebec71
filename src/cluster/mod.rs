//! The in-memory cluster a test's inputs form (cel.md §11.2 item 2): objects by
//! (group, version, resource), namespace and name, with CustomResourceDefinitions teaching
//! custom kinds (their plural and scope). It answers what the Kyverno CLI's fake cluster
//! answers (`kyverno/kyverno:ext/cluster/fake.go`, `pkg/clients/dclient/client.go`
//! `rawAbsPathForFakeClient`): raw `GET` paths of ClusterPolicy `context.apiCall`
//! ([`Cluster::raw_get`]), `context.configMap` lookups ([`Cluster::get`] on `v1`
//! `configmaps`) and CEL `resource.Get`/`resource.List`.
//!
//! [`Offline`] bundles what a rule's context entries can be served from offline: the
//! cluster (only in `clusterResources` mode, as the CLI allows API calls only then), the
//! test's `apiCallResponses` mocks and its `globalContextEntries` ([`mocks`]).

pub(crate) mod builtin;
pub mod mocks;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::yaml::{Map, Node, Value};

/// `(group, version, resource)`, as `schema.GroupVersionResource`.
pub(crate) type Gvr = (String, String, String);

/// What a rule's context entries and CEL library calls are served from offline.
#[derive(Clone, Debug, Default)]
pub struct Offline {
    /// The virtual cluster: `Some` only in `clusterResources` mode.
    pub cluster: Option<Arc<Cluster>>,
    /// `apiCallResponses`, by `METHOD:url` and `url`.
    pub api_calls: mocks::ApiCalls,
    /// `globalContextEntries`, resolved (after `fieldPath` and projections).
    pub globals: mocks::Globals,
    /// The objects the CLI's fake client holds (`kpol test`: the resources, target and
    /// parameter resources, and in `clusterResources` mode the cluster's too): what a
    /// ClusterPolicy's mutate-existing `targets` are looked up in. `None` outside `kpol test`
    /// (such rules are then not evaluated).
    pub objects: Option<Arc<Cluster>>,
}

impl Offline {
    /// Whether nothing is served (the default: every cluster-backed entry is skipped).
    pub fn is_empty(&self) -> bool {
        self.cluster.is_none() && self.api_calls.is_empty() && self.globals.is_empty()
    }
}

/// A custom kind as its CRD declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CustomKind {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
}

/// Objects by GVR, namespace and name (sorted, so lists are deterministic).
#[derive(Debug, Default)]
pub struct Cluster {
    objects: HashMap<Gvr, BTreeMap<String, BTreeMap<String, Node>>>,
    /// The kind of each GVR known from a CRD or an object.
    kinds: HashMap<Gvr, String>,
    crds: Vec<CustomKind>,
    /// Each custom kind's `openAPIV3Schema`, by (apiVersion, kind): what types an
    /// ApplyConfiguration on it (`crate::smd::apply_crd`).
    schemas: HashMap<(String, String), Node>,
}

/// `schema.ParseGroupVersion`: `""` → empty, `v1` → core, `g/v` → group and version.
pub(crate) fn parse_group_version(api_version: &str) -> Result<(String, String), String> {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [""] => Ok((String::new(), String::new())),
        [v] => Ok((String::new(), (*v).to_owned())),
        [g, v] => Ok(((*g).to_owned(), (*v).to_owned())),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

fn api_version_of(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// `GroupResource.String()`: `resource.group`, or `resource` for the core group.
pub(crate) fn group_resource(gvr: &Gvr) -> String {
    if gvr.0.is_empty() {
        gvr.2.clone()
    } else {
        format!("{}.{}", gvr.2, gvr.0)
    }
}

/// apimachinery's `UnsafeGuessKindToResource`: the lowercased kind, `s` → `ses`, `y` → `ies`,
/// else `+s` (`Goose` → `gooses`, `Gateway` → `gatewaies`).
pub(crate) fn guessed_resource(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else if lower.is_empty() {
        lower
    } else {
        format!("{lower}s")
    }
}

fn text<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path).and_then(Node::as_str).unwrap_or("")
}

impl Cluster {
    /// Adds one object, returning the GVR it is stored under. A CustomResourceDefinition
    /// also teaches its kind (every version).
    pub fn add(&mut self, node: &Node) -> Result<Gvr, String> {
        let kind = text(node, &["kind"]);
        if kind.is_empty() {
            return Err("cluster resource without a kind".to_owned());
        }
        let (group, version) = parse_group_version(text(node, &["apiVersion"]))?;
        if kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io" {
            self.learn_crd(node)?;
        }
        let resource = self.resource_of(&group, &version, kind);
        let gvr = (group, version, resource);
        self.kinds
            .entry(gvr.clone())
            .or_insert_with(|| kind.to_owned());
        self.objects
            .entry(gvr.clone())
            .or_default()
            .entry(text(node, &["metadata", "namespace"]).to_owned())
            .or_default()
            .insert(text(node, &["metadata", "name"]).to_owned(), node.clone());
        Ok(gvr)
    }

    /// Every object with its GVR, namespace and name.
    pub fn objects(&self) -> impl Iterator<Item = (&Gvr, &str, &str, &Node)> {
        self.objects.iter().flat_map(|(gvr, by_ns)| {
            by_ns.iter().flat_map(move |(ns, by_name)| {
                by_name
                    .iter()
                    .map(move |(name, n)| (gvr, ns.as_str(), name.as_str(), n))
            })
        })
    }

    /// Reads a CRD's group, names and scope for every version it serves.
    fn learn_crd(&mut self, node: &Node) -> Result<(), String> {
        let group = text(node, &["spec", "group"]);
        let kind = text(node, &["spec", "names", "kind"]);
        let plural = text(node, &["spec", "names", "plural"]);
        if group.is_empty() || kind.is_empty() || plural.is_empty() {
            return Err(format!(
                "CustomResourceDefinition {} needs spec.group, spec.names.kind and spec.names.plural",
                text(node, &["metadata", "name"])
            ));
        }
        let namespaced = text(node, &["spec", "scope"]) != "Cluster";
        let versions = node
            .get_path(&["spec", "versions"])
            .and_then(Node::as_seq)
            .unwrap_or(&[]);
        for v in versions {
            let version = text(v, &["name"]);
            if version.is_empty() {
                continue;
            }
            let ck = CustomKind {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: kind.to_owned(),
                plural: plural.to_owned(),
                namespaced,
            };
            self.kinds.insert(
                (group.to_owned(), version.to_owned(), plural.to_owned()),
                kind.to_owned(),
            );
            if let Some(schema) = v.get_path(&["schema", "openAPIV3Schema"]) {
                self.schemas
                    .entry((api_version_of(group, version), kind.to_owned()))
                    .or_insert_with(|| schema.clone());
            }
            if !self.crds.contains(&ck) {
                self.crds.push(ck);
            }
        }
        Ok(())
    }

    /// The `openAPIV3Schema` a CRD declares for `api_version` and `kind` (the first CRD read
    /// wins).
    pub(crate) fn crd_schema(&self, api_version: &str, kind: &str) -> Option<&Node> {
        self.schemas.get(&(api_version.to_owned(), kind.to_owned()))
    }

    /// The custom kinds the CRDs taught, in the order read.
    pub(crate) fn custom_kinds(&self) -> &[CustomKind] {
        &self.crds
    }

    /// The resource an object of a kind is stored under. The CLI's fake dynamic client files
    /// an object under apimachinery's guess from its kind (`UnsafeGuessKindToResource`), not
    /// under its CRD's plural: a `Goose` whose CRD says `geese` is stored as `gooses`, so CEL
    /// `resource.Get/List` (and `resource.ToGVR`, which maps to the CRD's plural) find it only
    /// by the guess, the CRD's plural listing nothing (Kyverno v1.19.0 CLI). Built-in kinds
    /// keep their discovery plural.
    fn resource_of(&self, group: &str, version: &str, kind: &str) -> String {
        if self.crd_of(group, version, kind).is_some() {
            return guessed_resource(kind);
        }
        crate::base::gvk::plural(kind)
    }

    fn crd_of(&self, group: &str, version: &str, kind: &str) -> Option<&CustomKind> {
        self.crds
            .iter()
            .find(|c| c.group == group && c.version == version && c.kind == kind)
    }

    /// The resource a raw API path names, as the objects are stored: a CRD's plural is read
    /// as its kind's guessed resource (the CLI's raw `GET`s find the objects by either name).
    fn stored_resource(&self, group: &str, version: &str, resource: &str) -> String {
        self.crds
            .iter()
            .find(|c| c.group == group && c.version == version && c.plural == resource)
            .map_or_else(|| resource.to_owned(), |c| guessed_resource(&c.kind))
    }

    /// The kind a GVR serves: known from a CRD or an object, else the singular guess
    /// (`inferKindFromResourceName`).
    pub(crate) fn kind_of(&self, gvr: &Gvr) -> String {
        if let Some(k) = self.kinds.get(gvr) {
            return k.clone();
        }
        let r = gvr.2.as_str();
        let stem = r
            .strip_suffix("ies")
            .map(|s| format!("{s}y"))
            .or_else(|| r.strip_suffix("ses").map(|s| format!("{s}s")))
            .or_else(|| r.strip_suffix('s').map(str::to_owned))
            .unwrap_or_else(|| r.to_owned());
        let mut c = stem.chars();
        c.next().map_or_else(String::new, |f| {
            f.to_uppercase().collect::<String>() + c.as_str()
        })
    }

    /// Whether any object or CRD serves this GVR.
    pub fn serves(&self, gvr: &Gvr) -> bool {
        self.kinds.contains_key(gvr)
    }

    /// One object, `None` when absent.
    pub fn get(&self, gvr: &Gvr, namespace: &str, name: &str) -> Option<&Node> {
        self.objects.get(gvr)?.get(namespace)?.get(name)
    }

    /// The Namespace object `name` (core v1 `namespaces`), `None` when absent.
    pub fn namespace(&self, name: &str) -> Option<&Node> {
        let gvr = (String::new(), "v1".to_owned(), "namespaces".to_owned());
        self.get(&gvr, "", name)
    }

    /// The string labels of the Namespace object `name`, `None` when the cluster does not
    /// hold it or it has no labels map.
    pub fn namespace_labels(&self, name: &str) -> Option<BTreeMap<String, String>> {
        let labels = self
            .namespace(name)?
            .get_path(&["metadata", "labels"])?
            .as_map()?;
        Some(
            labels
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), v.to_owned())))
                .collect(),
        )
    }

    /// The objects of a GVR in `namespace` (every namespace when empty), sorted by namespace
    /// and name; `None` when nothing serves the GVR.
    pub fn list(&self, gvr: &Gvr, namespace: &str) -> Option<Vec<&Node>> {
        if !self.serves(gvr) {
            return None;
        }
        let Some(by_ns) = self.objects.get(gvr) else {
            return Some(Vec::new());
        };
        let items = if namespace.is_empty() {
            by_ns.values().flat_map(BTreeMap::values).collect()
        } else {
            by_ns
                .get(namespace)
                .map(|m| m.values().collect())
                .unwrap_or_default()
        };
        Some(items)
    }

    /// A raw `GET` of a Kubernetes API path as the CLI's fake client serves it: `/api/v1/…`
    /// and `/apis/<group>/<version>/…`, namespaced (`namespaces/<ns>/<resource>[/<name>]`)
    /// or not; a path without a name lists (`<Kind>List` with `items`), one with a name gets
    /// the object. A query string is not part of the path and is ignored.
    pub(crate) fn raw_get(&self, path: &str) -> Result<Node, String> {
        let path = path.split('?').next().unwrap_or("");
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (group, version, rest): (&str, &str, &[&str]) = match parts.as_slice() {
            ["api", v, rest @ ..] => ("", v, rest),
            ["apis", g, v, rest @ ..] => (g, v, rest),
            _ => return Err(format!("failed to parse path: {path}")),
        };
        let (namespace, resource, name) = match rest {
            ["namespaces", ns, r, tail @ ..] => (*ns, *r, tail.first().copied().unwrap_or("")),
            [r, tail @ ..] => ("", *r, tail.first().copied().unwrap_or("")),
            [] => ("", "", ""),
        };
        // `/api/v1/namespaces/<name>`: the Namespace object itself.
        let (namespace, resource, name) = match rest {
            ["namespaces", ns] => ("", "namespaces", *ns),
            _ => (namespace, resource, name),
        };
        if resource.is_empty() {
            return Err(format!("failed to parse path: {path}"));
        }
        let gvr: Gvr = (group.to_owned(), version.to_owned(), resource.to_owned());
        let kind = self.kind_of(&gvr);
        let gvr: Gvr = (
            group.to_owned(),
            version.to_owned(),
            self.stored_resource(group, version, resource),
        );
        let api_version = api_version_of(group, version);
        if name.is_empty() {
            let Some(items) = self.list(&gvr, namespace) else {
                let place = if namespace.is_empty() {
                    " (cluster-scoped or all namespaces)".to_owned()
                } else {
                    format!(" in namespace \"{namespace}\"")
                };
                return Err(format!(
                    "failed to list resources {api_version}/{kind}{place}: the server could not find the requested resource"
                ));
            };
            let mut meta = Map::new();
            meta.insert(
                "resourceVersion".to_owned(),
                crate::source::Span::EMPTY,
                Node::synthetic(Value::Str(String::new())),
            );
            let mut list = Map::new();
            let mut put =
                |k: &str, v: Node| list.insert(k.to_owned(), crate::source::Span::EMPTY, v);
            put("apiVersion", Node::synthetic(Value::Str(api_version)));
            put(
                "items",
                Node::synthetic(Value::Seq(items.into_iter().cloned().collect())),
            );
            put("kind", Node::synthetic(Value::Str(format!("{kind}List"))));
            put("metadata", Node::synthetic(Value::Map(meta)));
            return Ok(Node::synthetic(Value::Map(list)));
        }
        self.get(&gvr, namespace, name).cloned().ok_or_else(|| {
            format!(
                "failed to get resource {api_version}/{kind}/{name}: {} \"{name}\" not found",
                group_resource(&gvr)
            )
        })
    }

    /// The GVR the CLI's fake discovery finds for `kind` (`fakeDiscoveryClient.FindResources`):
    /// the resource named `lowercase(kind) + "s"`, whatever the group and version asked (the
    /// first in GVR order when several groups serve it); `None` is its `not found`.
    pub(crate) fn find_resource(&self, kind: &str) -> Option<Gvr> {
        let wanted = format!("{}s", kind.to_lowercase());
        // The guessed resource a CRD kind's objects are stored under is not discovered
        // (discovery serves the CRD's plural): kept as before the storage followed the guess.
        let stored_only = |g: &Gvr| {
            self.crds.iter().any(|c| {
                c.group == g.0
                    && c.version == g.1
                    && c.plural != g.2
                    && guessed_resource(&c.kind) == g.2
            })
        };
        let mut found: Vec<&Gvr> = self
            .kinds
            .keys()
            .filter(|g| g.2 == wanted && !stored_only(g))
            .collect();
        found.sort();
        found.first().map(|g| (*g).clone())
    }

    /// The resource of `kind` at `api_version`, as the CLI's REST mapper in `clusterResources`
    /// mode answers it (`ext/cluster/fake.go` `RESTMapper`: the built-in kinds of
    /// [`builtin::BUILTIN_KINDS`] and the CRDs read): the kind is matched exactly; an empty
    /// version takes the first version serving it (built-in groups first, then the CRDs). An
    /// unknown kind is `no matches for kind …` as apimachinery's `NoKindMatchError` words it.
    pub fn rest_mapping(&self, api_version: &str, kind: &str) -> Result<Gvr, String> {
        let (group, version) = parse_group_version(api_version)?;
        let builtin = builtin::BUILTIN_KINDS
            .iter()
            .map(|&(g, v, k, r, _)| (g, v, k, r));
        let custom = self.crds.iter().map(|c| {
            (
                c.group.as_str(),
                c.version.as_str(),
                c.kind.as_str(),
                c.plural.as_str(),
            )
        });
        let found = builtin
            .chain(custom)
            .find(|&(g, v, k, _)| g == group && k == kind && (version.is_empty() || v == version));
        match found {
            Some((g, v, _, r)) => Ok((g.to_owned(), v.to_owned(), r.to_owned())),
            None if version.is_empty() => Err(format!(
                "no matches for kind \"{kind}\" in group \"{group}\""
            )),
            None => Err(format!(
                "no matches for kind \"{kind}\" in version \"{}\"",
                api_version_of(&group, &version)
            )),
        }
    }

    /// A ConfigMap, as the CLI's ConfigMap resolver reads it.
    pub(crate) fn config_map(&self, namespace: &str, name: &str) -> Result<&Node, String> {
        let gvr: Gvr = (String::new(), "v1".to_owned(), "configmaps".to_owned());
        self.get(&gvr, namespace, name)
            .ok_or_else(|| format!("configmaps \"{name}\" not found"))
    }
}

#[cfg(test)]
mod tests;
