//! What the API server does to an object before Kyverno sees it (`kpol check
//! --apiserver-defaults`): the defaulting of built-in kinds, the `omitempty` of re-serialising
//! it, and the admission plugins that change Pods on CREATE (ServiceAccount,
//! DefaultTolerationSeconds, Priority).
//!
//! kpol's own table, written from Kubernetes v1.34 (`pkg/apis/*/v1/defaults.go`,
//! `plugin/pkg/admission/*`), one module per API group. Only a field that is absent is filled;
//! a field written in the manifest is never changed. Defaults are first planned against the
//! resource as written (a list of `Default`s, each named by its path and value), then applied
//! to a copy: a subset of them can be applied alone, which is how `kpol check` tells which
//! defaults changed a verdict.
//!
//! Inserted nodes are synthetic (an empty span): a finding on a defaulted field is reported at
//! the nearest field that is written (the map that received the default, [`Node::locate`]).

mod apps;
mod batch;
mod core;
mod storage;
mod verdict;

pub use verdict::Change;
pub(crate) use verdict::changed;

use crate::engine::Engine;
use crate::request::{Operation, Request};
use crate::resource::Resource;

/// `resource` as the API server hands it to Kyverno for `request` (the Pod admission plugins
/// on CREATE only), and the results of `engine` that the defaults changed; `None` when the
/// table defaults nothing on it.
pub fn defaulted(
    engine: &Engine,
    request: &Request,
    resource: &Resource,
) -> Option<(Resource, Vec<Change>)> {
    let plan = plan_for(resource, request.operation == Operation::Create);
    if plan.is_empty() {
        return None;
    }
    let all: Vec<&Default> = plan.iter().collect();
    let defaulted = apply(resource, &all);
    let changed = changed(engine, request, resource, &defaulted, &plan);
    Some((defaulted, changed))
}
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

/// One step of a path into the tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// One change to the tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Edit {
    /// Sets the key at the end of the path when it is absent or null (a null decodes to Go's
    /// zero value, which defaulting fills); its parent map exists.
    Set(Vec<Seg>, Node),
    /// Appends to the list at the path, creating the list when the key is absent.
    Push(Vec<Seg>, Node),
    /// Removes the key at the end of the path (a zero value re-serialisation drops).
    Remove(Vec<Seg>),
}

/// One default, as the output names it, and the edits it makes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Default {
    /// `spec.containers[0].imagePullPolicy=Always`.
    pub label: String,
    pub edits: Vec<Edit>,
}

/// The defaults the API server would apply to `resource` on CREATE; empty for a kind it does
/// not default (custom resources, kinds not in the table).
#[cfg(test)]
pub(crate) fn plan(resource: &Resource) -> Vec<Default> {
    plan_for(resource, true)
}

/// [`plan`] for a request that creates the resource (`create`) or not: the Pod admission
/// plugins act on CREATE only; defaulting on every decode.
pub(crate) fn plan_for(resource: &Resource, create: bool) -> Vec<Default> {
    let mut p = Planner {
        out: Vec::new(),
        create,
    };
    let (group, version) = resource.group_version();
    let root = &resource.root;
    match (group, version, resource.kind.as_str()) {
        ("", "v1", "Pod") => core::pod(&mut p, root),
        ("", "v1", "Service") => core::service(&mut p, root),
        ("", "v1", "PersistentVolumeClaim") => core::pvc(&mut p, root),
        ("", "v1", "PersistentVolume") => core::pv(&mut p, root),
        ("", "v1", "ReplicationController") => core::replication_controller(&mut p, root),
        ("", "v1", "PodTemplate") => {
            p.pod_template(root, &[k("template")], Owner::Template);
        }
        ("apps", "v1", "Deployment") => apps::deployment(&mut p, root),
        ("apps", "v1", "StatefulSet") => apps::stateful_set(&mut p, root),
        ("apps", "v1", "DaemonSet") => apps::daemon_set(&mut p, root),
        ("apps", "v1", "ReplicaSet") => apps::replica_set(&mut p, root),
        ("batch", "v1", "Job") => batch::job(&mut p, root),
        ("batch", "v1", "CronJob") => batch::cron_job(&mut p, root),
        ("storage.k8s.io", "v1", "StorageClass") => storage::storage_class(&mut p, root),
        _ => return Vec::new(),
    }
    // Re-serialising an object without a creation time writes `creationTimestamp: null`; a
    // kind whose `status` is a struct gets `status: {}`.
    p.set_if_absent(root, &[k("metadata")], "creationTimestamp", Value::Null);
    let status = match (group, resource.kind.as_str()) {
        ("", "Pod" | "ReplicationController" | "PersistentVolumeClaim" | "PersistentVolume")
        | ("apps", _)
        | ("batch", _) => Some(map(vec![])),
        ("", "Service") => Some(map(vec![("loadBalancer", map(vec![]))])),
        _ => None,
    };
    if let Some(status) = status {
        p.set_if_absent(root, &[], "status", status);
    }
    p.out
}

/// `resource` with `defaults` applied, normalised as resources are.
pub(crate) fn apply(resource: &Resource, defaults: &[&Default]) -> Resource {
    let mut root = resource.root.clone();
    for d in defaults {
        for e in &d.edits {
            edit(&mut root, e);
        }
    }
    resource.with_root(root)
}

fn walk_mut<'a>(mut node: &'a mut Node, path: &[Seg]) -> Option<&'a mut Node> {
    for seg in path {
        node = match (&mut node.value, seg) {
            (Value::Map(m), Seg::Key(k)) => m.get_mut(k)?,
            (Value::Seq(items), Seg::Index(i)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

fn edit(root: &mut Node, e: &Edit) {
    let (path, last) = match e {
        Edit::Set(p, _) | Edit::Push(p, _) | Edit::Remove(p) => match p.split_last() {
            Some((Seg::Key(last), path)) => (path, last),
            _ => return,
        },
    };
    let Some(Node {
        value: Value::Map(m),
        ..
    }) = walk_mut(root, path)
    else {
        return;
    };
    match e {
        Edit::Set(_, v) => {
            if m.get(last).is_none_or(Node::is_null) {
                m.insert(last.clone(), Span::EMPTY, v.clone());
            }
        }
        Edit::Push(_, v) => match m.get_mut(last) {
            Some(Node {
                value: Value::Seq(items),
                ..
            }) => items.push(v.clone()),
            Some(n) if n.is_null() => n.value = Value::Seq(vec![v.clone()]),
            Some(_) => {}
            None => m.insert(
                last.clone(),
                Span::EMPTY,
                Node::synthetic(Value::Seq(vec![v.clone()])),
            ),
        },
        Edit::Remove(_) => {
            m.remove(last);
        }
    }
}

pub(crate) fn k(s: &str) -> Seg {
    Seg::Key(s.to_owned())
}

/// `spec.containers[0].name` for a path.
fn dotted(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(key) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(key);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A value as the label shows it.
fn shown(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Str(s) => s.clone(),
        Value::Map(m) if m.is_empty() => "{}".to_owned(),
        Value::Map(_) => "{…}".to_owned(),
        Value::Seq(_) => "[…]".to_owned(),
    }
}

/// Who holds a pod spec: admission plugins and `SetDefaults_Pod` act on Pods only, a Job's
/// template keeps its own `restartPolicy` rule.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    Pod,
    Template,
    JobTemplate,
}

/// Collects the defaults of one resource.
pub(crate) struct Planner {
    out: Vec<Default>,
    /// The request creates the resource (admission plugins run).
    create: bool,
}

pub(crate) fn at(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

/// The node at `path` in `root`.
pub(crate) fn get<'a>(root: &'a Node, path: &[Seg]) -> Option<&'a Node> {
    let mut node = root;
    for seg in path {
        node = match (&node.value, seg) {
            (Value::Map(m), Seg::Key(k)) => m.get(k)?,
            (Value::Seq(items), Seg::Index(i)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

pub(crate) fn str_at<'a>(root: &'a Node, path: &[Seg], key: &str) -> Option<&'a str> {
    get(root, path)?.get(key)?.as_str()
}

/// A map value from `(key, value)` pairs.
pub(crate) fn map(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::with_capacity(pairs.len());
    for (key, v) in pairs {
        m.insert(key.to_owned(), Span::EMPTY, Node::synthetic(v));
    }
    Value::Map(m)
}

pub(crate) fn s(v: &str) -> Value {
    Value::Str(v.to_owned())
}

impl Planner {
    /// Sets `key` in the map at `path` when the map exists and `key` is absent there (a key
    /// written as `null` counts as absent: it decodes to Go's zero value).
    pub(crate) fn set_if_absent(&mut self, root: &Node, path: &[Seg], key: &str, v: Value) {
        let Some(Value::Map(m)) = get(root, path).map(|n| &n.value) else {
            return;
        };
        let full = at(path, k(key));
        match m.get(key) {
            None => {}
            Some(n) if n.is_null() && !matches!(v, Value::Null) => {}
            Some(_) => return,
        }
        let label = format!("{}={}", dotted(&full), shown(&v));
        let edits = vec![Edit::Set(full, Node::synthetic(v))];
        self.out.push(Default { label, edits });
    }

    /// A default made of several edits, named by `label`.
    pub(crate) fn push(&mut self, label: String, edits: Vec<Edit>) {
        self.out.push(Default { label, edits });
    }

    /// A pod template at `path` (`metadata` and `spec`). Its `metadata` is a struct, written
    /// even when empty, with `creationTimestamp: null`.
    pub(crate) fn pod_template(&mut self, root: &Node, path: &[Seg], owner: Owner) {
        if get(root, path).and_then(Node::as_map).is_none() {
            return;
        }
        match get(root, &at(path, k("metadata"))) {
            Some(m) if m.as_map().is_some() => self.set_if_absent(
                root,
                &at(path, k("metadata")),
                "creationTimestamp",
                Value::Null,
            ),
            Some(_) => {}
            None => self.set_if_absent(
                root,
                path,
                "metadata",
                map(vec![("creationTimestamp", Value::Null)]),
            ),
        }
        core::pod_spec(self, root, &at(path, k("spec")), owner);
    }
}

/// The items of the list at `path`, with their index.
pub(crate) fn items<'a>(root: &'a Node, path: &[Seg]) -> &'a [Node] {
    get(root, path).and_then(Node::as_seq).unwrap_or(&[])
}

#[cfg(test)]
mod tests;
