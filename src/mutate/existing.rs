//! Mutate-existing rules (`mutate.targets`) as the Kyverno v1.19 CLI evaluates them
//! (`pkg/engine/handlers/mutation/{mutate_existing.go,load_targets.go}`,
//! `pkg/clients/dclient/helpers.go` `GetResources`, the fake discovery of
//! `pkg/clients/dclient/fake.go`): the targets are looked up among the objects the CLI's fake
//! client holds ([`crate::cluster::Offline::objects`]), each is patched on its own with
//! `target` bound to it, and the trigger is never changed.
//!
//! Per target spec, in order: variables substituted in `apiVersion`, `kind`, `namespace`,
//! `name` and `selector` (a failure is an error response, the other specs still run); the
//! kind found as the fake discovery finds it (the resource `lowercase(kind) + "s"`, any
//! group: an unknown one is `not found`); a plain namespace and name is a GET (an absent
//! object is an error), anything else a list filtered by the label selector and by
//! namespace / name wildcards. A namespaced Policy reads only its own namespace. Lookup
//! errors come first, as one error response; then per target object: its `context` entries,
//! its `preconditions` (false → skip), then the rule's patch. A pass carries the patched
//! target ([`crate::report::RuleResponse::target`]).

use std::collections::BTreeMap;

use super::{patch_rule, response};
use crate::cluster::{Cluster, group_resource};
use crate::conditions::evaluate_block;
use crate::jmespath::value;
use crate::policy::Rule;
use crate::report::{RuleResponse, Status};
use crate::resource::Resource;
use crate::variables::{Context, substitute_cow};
use crate::yaml::{Node, Value};

use super::Env;

/// The rule's responses over its targets (none when no target exists).
pub(super) fn apply(
    env: &Env<'_>,
    rule: &Rule,
    body: &Node,
    targets: &Node,
    objects: &Cluster,
    ctx: &mut Context<'_>,
) -> Vec<RuleResponse> {
    let specs: &[Node] = match &targets.value {
        Value::Seq(items) => items,
        _ => &[],
    };
    let mut errors = Vec::new();
    let mut found: Vec<(&Node, Node)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match resolve(env, spec, i, objects, ctx) {
            Ok(objs) => found.extend(objs.into_iter().map(|o| (spec, o))),
            Err(e) => errors.push(e),
        }
    }
    let mut out = Vec::new();
    if !errors.is_empty() {
        out.push(response(
            rule,
            Status::Error,
            format!(": {}", errors.join("; ")),
        ));
    }
    for (spec, object) in found {
        if let Some(r) = one_target(rule, body, spec, object, ctx) {
            out.push(r);
        }
    }
    out
}

/// The objects one target spec names, after variable substitution.
fn resolve(
    env: &Env<'_>,
    spec: &Node,
    index: usize,
    objects: &Cluster,
    ctx: &mut Context<'_>,
) -> Result<Vec<Node>, String> {
    // Only the selector part is substituted (`resolveSpec`): `context` and `preconditions`
    // are evaluated per target.
    let mut selector = crate::yaml::Map::new();
    if let Value::Map(m) = &spec.value {
        for e in m.entries() {
            if !matches!(e.key.as_str(), "context" | "preconditions") {
                selector.insert(e.key.clone(), e.key_span, e.value.clone());
            }
        }
    }
    let selector = value::node(Value::Map(selector));
    let selector = substitute_cow(&selector, ctx, &format!("/mutate/targets/{index}"))
        .map_err(|e| {
            format!(
                "failed to substitute variables in target[{index}]: {}",
                e.message
            )
        })?
        .into_owned();
    let text = |k: &str| {
        selector
            .get(k)
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (api_version, kind, name) = (text("apiVersion"), text("kind"), text("name"));
    let mut namespace = text("namespace");
    if let Some(ns) = env.policy.namespace.as_deref().filter(|n| !n.is_empty()) {
        namespace = ns.to_owned();
    }
    let Some((_, _, kind, subresource)) =
        crate::base::gvk::parse_kind_selector(&format!("{api_version}/{kind}"))
    else {
        return Err("not found".to_owned());
    };
    if !subresource.is_empty() {
        return Err(format!(
            "kpol does not look up subresource targets ({kind}/{subresource}) offline"
        ));
    }
    let gvr = objects
        .find_resource(&kind)
        .ok_or_else(|| "not found".to_owned())?;
    let wild = |s: &str| s.contains(['*', '?']);
    if !namespace.is_empty() && !name.is_empty() && !wild(&namespace) && !wild(&name) {
        return objects
            .get(&gvr, &namespace, &name)
            .map(|o| vec![o.clone()])
            .ok_or_else(|| format!("{} \"{name}\" not found", group_resource(&gvr)));
    }
    let labels = match &selector.value {
        Value::Map(m) => crate::matching::compile_selector(m, "selector", "selector")
            .map_err(|e| format!("failed to parse selector: {e:?}"))?,
        _ => None,
    };
    let mut out = Vec::new();
    for o in objects.list(&gvr, "").unwrap_or_default() {
        let meta = |k: &str| {
            o.get_path(&["metadata", k])
                .and_then(Node::as_str)
                .unwrap_or("")
        };
        if !name_matches(&namespace, &name, meta("namespace"), meta("name")) {
            continue;
        }
        if let Some(sel) = &labels {
            let have: BTreeMap<String, String> = o
                .get_path(&["metadata", "labels"])
                .and_then(Node::as_map)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), v.to_owned())))
                        .collect()
                })
                .unwrap_or_default();
            if !sel.matches(&have)? {
                continue;
            }
        }
        out.push(o.clone());
    }
    Ok(out)
}

/// `match` of `load_targets.go`: namespace and name wildcards, an empty one matching all.
fn name_matches(ns_pattern: &str, name_pattern: &str, namespace: &str, name: &str) -> bool {
    let m = crate::base::wildcard::matches;
    match (ns_pattern.is_empty(), name_pattern.is_empty()) {
        (true, true) => true,
        (true, false) => m(name_pattern, name),
        (false, _) => {
            m(ns_pattern, namespace) && (name_pattern.is_empty() || m(name_pattern, name))
        }
    }
}

/// One target object: `target` bound, its context entries and preconditions, then the patch.
fn one_target(
    rule: &Rule,
    body: &Node,
    spec: &Node,
    object: Node,
    ctx: &mut Context<'_>,
) -> Option<RuleResponse> {
    let Ok(target) = Resource::from_document(object, None, 0) else {
        return None;
    };
    ctx.set_path(&["target"], value::json_round_trip(&target.root));
    if let Some(entries) = spec.get("context")
        && let Err(e) = ctx.add_context_entries(entries, &BTreeMap::new())
    {
        return Some(response(
            rule,
            Status::Error,
            format!("failed to load context: {e}"),
        ));
    }
    if let Some(pre) = spec.get("preconditions") {
        match evaluate_block(pre, ctx) {
            Err(e) => {
                return Some(response(
                    rule,
                    Status::Error,
                    format!("failed to evaluate preconditions: {}", e.message),
                ));
            }
            Ok(r) if !r.holds => {
                let mut msg = "preconditions not met".to_owned();
                if !r.message.is_empty() {
                    msg = format!("{msg}; {}", r.message);
                }
                return Some(response(rule, Status::Skip, msg));
            }
            Ok(_) => {}
        }
    }
    // The patch sees the trigger's context with `target` added.
    let mut cx = Some(ctx.clone());
    let (mut r, after) = patch_rule(rule, body, &target, &mut cx);
    if let Some(after) = after {
        r.target = Some(Box::new(after.root));
    }
    Some(r)
}
