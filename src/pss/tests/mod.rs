//! Unit tests of podSecurity: helpers; every control ([`controls`]); messages, controllers,
//! errors and `exclude` ([`flow`]).

mod controls;
mod flow;

use std::sync::Arc;

use serde_json::{Value as Json, json};

use super::registry::{self, Version};
use super::{PssVerdict, pod, validate};
use crate::manifest::read_manifests;
use crate::resource::Resource;
use crate::source::SourceFile;
use crate::yaml::{Limits, Node, parse_documents};

/// A container security context that passes every restricted check.
const OK_SC: &str = r#"{"allowPrivilegeEscalation": false, "runAsNonRoot": true,
  "seccompProfile": {"type": "RuntimeDefault"}, "capabilities": {"drop": ["ALL"]}}"#;

/// A Pod that passes every check at every level.
fn base() -> Json {
    let sc: Json = serde_json::from_str(OK_SC).unwrap();
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "securityContext": sc}]}
    })
}

/// `patch` merged into `doc`: maps key by key, lists item by item, `null` deletes.
fn merge(doc: &mut Json, patch: &Json) {
    match (doc, patch) {
        (Json::Object(d), Json::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    d.remove(k);
                } else if let Some(slot) = d.get_mut(k) {
                    merge(slot, v);
                } else {
                    d.insert(k.clone(), v.clone());
                }
            }
        }
        (Json::Array(d), Json::Array(p)) => {
            for (i, v) in p.iter().enumerate() {
                match d.get_mut(i) {
                    Some(slot) => merge(slot, v),
                    None => d.push(v.clone()),
                }
            }
        }
        (d, p) => *d = p.clone(),
    }
}

/// The base pod with `patch` applied.
fn pod_with(patch: Json) -> Json {
    let mut doc = base();
    merge(&mut doc, &patch);
    doc
}

/// A patch of the first container's security context.
fn sc(patch: Json) -> Json {
    json!({"spec": {"containers": [{"securityContext": patch}]}})
}

fn resource(text: &str) -> Resource {
    let source = Arc::new(SourceFile::new("r.yaml", text));
    read_manifests(&source, Limits::default())
        .resources
        .remove(0)
}

fn node(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

/// The ids of the checks a Pod document fails at `level`/`version`.
fn failed(level: &str, version: &str, doc: &Json) -> Vec<&'static str> {
    let r = resource(&doc.to_string());
    let pod = pod::decode(
        r.root.get("spec"),
        r.root.get("metadata"),
        "spec",
        "metadata",
    )
    .unwrap();
    let v = Version::parse(version).unwrap();
    registry::evaluate(level == "baseline", v, &pod)
        .into_iter()
        .map(|c| c.id)
        .collect()
}

/// The rule `r` with podSecurity body `rule` (YAML) on the document.
fn run(rule: &str, doc: &Json) -> PssVerdict {
    validate("r", &node(rule), &resource(&doc.to_string()))
}

#[test]
fn the_base_pod_passes_every_level_and_version() {
    for level in ["baseline", "restricted", "privileged"] {
        for version in ["latest", "v1.0", "v1.19", "v1.24", "v1.25", "v1.32"] {
            assert!(
                failed(level, version, &base()).is_empty(),
                "{level} {version}"
            );
        }
    }
}
