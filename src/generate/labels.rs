//! The labels Kyverno puts on what it generates (`pkg/background/common/labels.go`
//! `ManageLabels`) and on clone copies (`pkg/background/generate/source.go`), and the
//! normalisation the Kyverno CLI applies before comparing generated resources
//! (`cmd/cli/kubectl-kyverno/resource/labels.go` `FixupGenerateLabels`).

use serde_json::{Map, Value};

use crate::policy::Policy;
use crate::resource::Resource;

/// `metadata.labels` of a JSON object, created (as an empty map) when absent or not a map.
fn labels_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let root = obj.as_object_mut()?;
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let labels = meta
        .as_object_mut()?
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if !labels.is_object() {
        *labels = Value::Object(Map::new());
    }
    labels.as_object_mut()
}

fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

fn uid_of(root: &Value) -> String {
    root.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// `ManageLabels`: managed-by, the policy and rule, the trigger.
pub(super) fn manage(obj: &mut Value, trigger: &Resource, policy: &Policy, rule: &str) {
    let (group, version) = group_version(&trigger.api_version);
    let trigger_uid = trigger
        .root
        .get_path(&["metadata", "uid"])
        .and_then(crate::yaml::Node::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(labels) = labels_mut(obj) else {
        return;
    };
    let mut set = |k: &str, v: &str| {
        labels.insert(k.to_owned(), Value::String(v.to_owned()));
    };
    set("app.kubernetes.io/managed-by", "kyverno");
    set("generate.kyverno.io/policy-name", &policy.name);
    set(
        "generate.kyverno.io/policy-namespace",
        policy.namespace.as_deref().unwrap_or(""),
    );
    set("generate.kyverno.io/rule-name", rule);
    set("generate.kyverno.io/trigger-version", version);
    set("generate.kyverno.io/trigger-group", group);
    set("generate.kyverno.io/trigger-kind", &trigger.kind);
    set("generate.kyverno.io/trigger-namespace", &trigger.namespace);
    set("generate.kyverno.io/trigger-uid", &trigger_uid);
}

/// The labels a clone copy carries: the clone-source tag and where it came from.
pub(super) fn tag_source(obj: &mut Value, source: &Resource) {
    let (group, version) = group_version(&source.api_version);
    let uid = uid_of(obj);
    let Some(labels) = labels_mut(obj) else {
        return;
    };
    let mut set = |k: &str, v: &str| {
        labels.insert(k.to_owned(), Value::String(v.to_owned()));
    };
    set("generate.kyverno.io/clone-source", "");
    set("generate.kyverno.io/source-group", group);
    set("generate.kyverno.io/source-version", version);
    set("generate.kyverno.io/source-kind", &source.kind);
    set("generate.kyverno.io/source-namespace", &source.namespace);
    set("generate.kyverno.io/source-uid", &uid);
}

/// `FixupGenerateLabels`: `generate.kyverno.io/*` labels dropped, managed-by set to kyverno
/// (on the generated resource and on the expected one alike).
pub(crate) fn fixup_for_compare(obj: &mut Value) {
    let Some(labels) = labels_mut(obj) else {
        return;
    };
    labels.retain(|k, _| !k.starts_with("generate.kyverno.io/"));
    labels
        .entry("app.kubernetes.io/managed-by")
        .or_insert_with(|| Value::String("kyverno".to_owned()));
}

/// `Tidy`: null values, empty maps and empty lists removed, recursively.
pub(crate) fn tidy(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let out: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| tidy(v).map(|v| (k.clone(), v)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(a) => {
            let out: Vec<Value> = a.iter().filter_map(tidy).collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}

/// The CLI's resource comparison (`resource.Compare` with tidy, after the label fixup):
/// equal as JSON, numbers compared by value.
pub fn same_resource(actual: &Value, expected: &Value) -> bool {
    let mut a = actual.clone();
    let mut e = expected.clone();
    fixup_for_compare(&mut a);
    fixup_for_compare(&mut e);
    json_eq(
        &tidy(&a).unwrap_or(Value::Null),
        &tidy(&e).unwrap_or(Value::Null),
    )
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
