//! One generate pattern (the rule's body, or a foreach entry's) after variable substitution:
//! the target (`apiVersion`, `kind`, `name`, `namespace`) and its content from `data`,
//! `clone` or `cloneList` (`pkg/background/generate/generator.go`, `data.go`, `clone.go`).
//!
//! A target that already exists among the offered resources is not created again (the
//! Kyverno CLI's fake cluster updates it, and lists nothing as generated).

use serde_json::{Map, Value};

use super::labels;
use super::pool::SourcePool;
use super::{Generated, Missing, RuleGeneration};
use crate::matching::compile_selector;
use crate::policy::Policy;
use crate::resource::Resource;
use crate::variables::{Context, substitute_at};
use crate::yaml::{Node, Value as YValue};

/// What every pattern of one rule shares.
pub(super) struct RuleCx<'a, 'p> {
    pub policy: &'a Policy,
    pub rule: &'a str,
    pub trigger: &'a Resource,
    pub pool: &'a SourcePool<'p>,
    pub synchronize: bool,
}

/// A resource identity (`kyvernov1.ResourceSpec`).
#[derive(Clone, Debug, Default)]
struct Spec {
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
}

impl Spec {
    fn describe(&self) -> String {
        let api = if self.api_version.is_empty() {
            String::new()
        } else {
            format!("{} ", self.api_version)
        };
        if self.namespace.is_empty() {
            format!("{api}{} {}", self.kind, self.name)
        } else {
            format!(
                "{api}{} {} in namespace {}",
                self.kind, self.name, self.namespace
            )
        }
    }
}

/// Generate fields that are not part of the pattern Kyverno substitutes.
const NOT_PATTERN: [&str; 4] = [
    "synchronize",
    "orphanDownstreamOnPolicyDelete",
    "foreach",
    "generateExisting",
];

fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Substitutes and applies one pattern.
pub(super) fn generate_pattern(
    cx: &RuleCx<'_, '_>,
    body: &Node,
    ctx: &mut Context,
    out: &mut RuleGeneration,
) {
    let mut pattern = body.clone();
    if let YValue::Map(m) = &mut pattern.value {
        for k in NOT_PATTERN {
            m.remove(k);
        }
    }
    let pattern = match substitute_at(&pattern, ctx, "") {
        Ok(p) => p,
        Err(e) => {
            out.problems.push(format!(
                "variable substitution failed for rule {}: {e}",
                cx.rule
            ));
            return;
        }
    };
    let json = pattern.to_json();
    let target = Spec {
        api_version: str_at(&json, "apiVersion").to_owned(),
        kind: str_at(&json, "kind").to_owned(),
        namespace: str_at(&json, "namespace").to_owned(),
        name: str_at(&json, "name").to_owned(),
    };
    let clone = json.get("clone").cloned().unwrap_or(Value::Null);
    let kinds: Vec<String> = json
        .pointer("/cloneList/kinds")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if !str_at(&clone, "name").is_empty() {
        let source = Spec {
            api_version: target.api_version.clone(),
            kind: target.kind.clone(),
            namespace: str_at(&clone, "namespace").to_owned(),
            name: str_at(&clone, "name").to_owned(),
        };
        clone_one(cx, &target, &source, out);
    } else if !kinds.is_empty() {
        clone_list(cx, &pattern, &target.namespace, &kinds, out);
    } else {
        match json.get("data") {
            None | Some(Value::Null) => {}
            Some(data @ Value::Object(_)) => {
                if !exists(cx, &target) {
                    finish(cx, data.clone(), &target, "data", out);
                }
            }
            Some(other) => out.problems.push(format!(
                "generate.data must be an object, not {}",
                type_word(other)
            )),
        }
    }
}

fn type_word(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn exists(cx: &RuleCx<'_, '_>, t: &Spec) -> bool {
    cx.pool
        .get(
            cx.policy,
            cx.rule,
            &t.api_version,
            &t.kind,
            &t.namespace,
            &t.name,
        )
        .is_some()
}

/// `manageClone`: the source copied, cleaned and relabelled, unless it is the target itself.
fn clone_one(cx: &RuleCx<'_, '_>, target: &Spec, source: &Spec, out: &mut RuleGeneration) {
    if source.namespace == target.namespace && source.name == target.name {
        return;
    }
    let Some(src) = cx.pool.get(
        cx.policy,
        cx.rule,
        &source.api_version,
        &source.kind,
        &source.namespace,
        &source.name,
    ) else {
        out.missing.push(Missing {
            what: source.describe(),
            clone_list: false,
        });
        return;
    };
    let mut copy = src.root.to_json();
    labels::tag_source(&mut copy, src);
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        if src.namespace != target.namespace {
            meta.shift_remove("ownerReferences");
        }
        for k in [
            "uid",
            "selfLink",
            "creationTimestamp",
            "managedFields",
            "resourceVersion",
        ] {
            meta.shift_remove(k);
        }
    }
    if !exists(cx, target) {
        finish(cx, copy, target, "clone", out);
    }
}

/// `manageCloneList`: every listed source of each kind, cloned into the target namespace.
fn clone_list(
    cx: &RuleCx<'_, '_>,
    pattern: &Node,
    target_ns: &str,
    kinds: &[String],
    out: &mut RuleGeneration,
) {
    let Some(list) = pattern.get("cloneList").and_then(Node::as_map) else {
        return;
    };
    let namespace = list.get("namespace").and_then(Node::as_str).unwrap_or("");
    let selector = match compile_selector(list, "selector", "generate.cloneList") {
        Ok(s) => s,
        Err(e) => {
            out.problems
                .push(format!("invalid cloneList selector: {}", e.message));
            return;
        }
    };
    for gvk in kinds {
        let (api_version, kind) = kind_from_gvk(gvk);
        let sources = cx.pool.list(
            cx.policy,
            cx.rule,
            &api_version,
            &kind,
            namespace,
            selector.as_ref(),
        );
        if sources.is_empty() {
            out.missing.push(Missing {
                what: format!(
                    "{gvk} resources in namespace {namespace}{} (cloneList)",
                    if selector.is_some() {
                        " matching the selector"
                    } else {
                        ""
                    }
                ),
                clone_list: true,
            });
        }
        for src in sources {
            let target = Spec {
                api_version: src.api_version.clone(),
                kind: src.kind.clone(),
                namespace: target_ns.to_owned(),
                name: src.name.clone(),
            };
            if src.namespace == target.namespace {
                continue;
            }
            let source = Spec {
                namespace: src.namespace.clone(),
                ..target.clone()
            };
            clone_one(cx, &target, &source, out);
        }
    }
}

/// `GetKindFromGVK` for cloneList kinds: `Kind`, `v1/Kind`, `group/v1/Kind`.
fn kind_from_gvk(s: &str) -> (String, String) {
    let is_version = |p: &str| {
        p.strip_prefix('v').is_some_and(|rest| {
            let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            digits.len() < rest.len()
                && (digits.is_empty()
                    || ["alpha", "beta"].iter().any(|w| {
                        digits
                            .strip_prefix(w)
                            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
                    }))
        })
    };
    let parts: Vec<&str> = s.split('/').collect();
    match parts.as_slice() {
        [k] => (String::new(), (*k).to_owned()),
        [v, k] if is_version(v) => ((*v).to_owned(), (*k).to_owned()),
        [g, v, k] if !is_version(g) => (format!("{g}/{v}"), (*k).to_owned()),
        _ => (String::new(), s.to_owned()),
    }
}

/// The created object: name and namespace from the target, kind when the content has none,
/// apiVersion from the target, Kyverno's labels; keys ordered apiVersion, kind, metadata.
fn finish(
    cx: &RuleCx<'_, '_>,
    content: Value,
    target: &Spec,
    mode: &'static str,
    out: &mut RuleGeneration,
) {
    let Value::Object(mut body) = content else {
        return;
    };
    let mut meta = match body.shift_remove("metadata") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let kind = match body.shift_remove("kind") {
        Some(Value::String(k)) if !k.is_empty() => k,
        _ => target.kind.clone(),
    };
    body.shift_remove("apiVersion");
    // name and namespace first, the rest of the written metadata after them.
    let mut head = Map::new();
    set_or_remove(&mut head, "name", &target.name);
    set_or_remove(&mut head, "namespace", &target.namespace);
    meta.shift_remove("name");
    meta.shift_remove("namespace");
    head.extend(meta);
    let meta = head;
    let mut obj = Map::new();
    obj.insert(
        "apiVersion".into(),
        Value::String(target.api_version.clone()),
    );
    obj.insert("kind".into(), Value::String(kind.clone()));
    obj.insert("metadata".into(), Value::Object(meta));
    obj.extend(body);
    let mut resource = Value::Object(obj);
    labels::manage(&mut resource, cx.trigger, cx.policy, cx.rule);
    out.generated.push(Generated {
        api_version: target.api_version.clone(),
        kind,
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        synchronize: cx.synchronize,
        mode,
        resource,
    });
}

fn set_or_remove(meta: &mut Map<String, Value>, key: &str, v: &str) {
    if v.is_empty() {
        meta.shift_remove(key);
    } else {
        meta.insert(key.to_owned(), Value::String(v.to_owned()));
    }
}
