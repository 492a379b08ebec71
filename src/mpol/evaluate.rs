//! Evaluating a MutatingPolicy on one resource as the Kyverno v1.19 CLI does (cel.md §6.4,
//! `pkg/cel/policies/mpol/{compiler/policy.go,engine/engine.go}`,
//! `cmd/cli/kubectl-kyverno/processor/policy_processor.go`).
//!
//! The policy as written and each autogen copy are evaluated in turn on the object the one
//! before left. For one that matches: CEL PolicyExceptions (before `variables` exist), then
//! `variables` (visible to matchConditions), matchConditions (false → skip, error → error),
//! then every mutation in order, `object` rebound after each; any error → error "failed to
//! evaluate policy: …", else pass "success".

use cel::Value;

use super::apply::apply_configuration;
use super::{MutatingPolicy, Mutation, Variant, mutating_policy};
use crate::cel::Activation;
use crate::cel::convert::to_cel;
use crate::cel::objects::{check_type_names, to_plain_node, type_name};
use crate::exception::{self, CelRefs, Decided, PolicyException};
use crate::mutate::PolicyMutation;
use crate::mutate::json_patch;
use crate::policy::Policy;
use crate::report::{PolicyResponse, RuleResponse, RuleType, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::vpol::evaluate::{bind_admission, namespace_object};
use crate::yaml::Node;

/// What `policy` (the engine's policy number `index`) does to `resource`: `None` when it is
/// not a MutatingPolicy or the CLI drops its response (nothing
/// matched and every copy's matchConstraints is simple, cel.md §3.7); else the response and,
/// when something matched, the resource after the policy (`patched`, what `patchedResources`
/// compares — the resource itself when nothing changed). `exceptions` are all the loaded
/// PolicyExceptions; the CEL ones naming this policy apply.
pub fn mutate(
    index: usize,
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<PolicyMutation> {
    let body = mutating_policy(policy)?;
    let _ns = crate::cel::context::PolicyNamespace::enter(policy.namespace.as_deref());
    let _budget = crate::base::budget::Scope::enter();
    let mut current = resource.clone();
    let mut rules = Vec::new();
    let mut matched = false;
    for variant in &body.variants {
        let hit = variant
            .constraints
            .as_ref()
            .is_some_and(|c| c.matches(&current, request));
        if !hit {
            continue;
        }
        matched = true;
        let (rule, patched) = evaluate_variant(body, variant, &current, None, request, exceptions);
        rules.push(rule);
        if let Some(root) = patched {
            current = current.with_root(root);
        }
    }
    if !matched && body.variants.iter().all(simple) {
        return None;
    }
    Some(PolicyMutation {
        response: PolicyResponse {
            policy: index,
            rules,
        },
        patched: matched.then(|| current.root.clone()),
    })
}

/// `hasSelector` of the CLI (despite its name, true for the simple case, cel.md §3.7).
fn simple(v: &Variant) -> bool {
    v.constraints
        .as_ref()
        .is_some_and(crate::vpol::constraints::Constraints::simple)
}

fn response(rule: &str, status: Status, message: impl Into<String>) -> RuleResponse {
    let mut r = RuleResponse::new(rule, status, message);
    r.rule_type = RuleType::Mutation;
    r
}

fn error(e: impl std::fmt::Display) -> RuleResponse {
    response(
        "evaluation",
        Status::Error,
        format!("failed to evaluate policy: {e}"),
    )
}

/// What the policy does to an existing target (`engine.go` `Evaluate`, `handlePolicy` with
/// `target`): the policy as written, without its matchConstraints (the caller selected the
/// target, [`selects_target`]), on `target` with the trigger's request; PolicyExceptions,
/// then `variables`, `targetMatchConditions` (false → skip), then the mutations. `None` when
/// the policy is not a mutate-existing MutatingPolicy.
pub fn mutate_target(
    index: usize,
    policy: &Policy,
    target: &Resource,
    trigger: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<PolicyMutation> {
    let body = mutating_policy(policy)?;
    let existing = body.existing.as_ref()?;
    let variant = body.variants.first()?;
    let _budget = crate::base::budget::Scope::enter();
    let on = Some((trigger, existing.match_conditions.as_slice()));
    let (rule, patched) = evaluate_variant(body, variant, target, on, request, exceptions);
    Some(PolicyMutation {
        response: PolicyResponse {
            policy: index,
            rules: vec![rule],
        },
        patched,
    })
}

/// Whether a mutate-existing MutatingPolicy selects `target` for `trigger`
/// (`targetMatchPredicate`, `discoverCELTargets` of the CLI): with
/// `targetMatchConstraints.expression`, the expression evaluated with `object` = the trigger
/// and the policy's `variables` must name the target (a map with `items`, each an object,
/// or one object; by namespace and name); else the target constraints (every operation).
/// `Err`: the expression failed or is not a map (the CLI then stops the test).
pub fn selects_target(
    policy: &Policy,
    target: &Resource,
    trigger: &Resource,
    request: &Request,
) -> Result<bool, String> {
    let Some(body) = mutating_policy(policy) else {
        return Ok(false);
    };
    let Some(existing) = &body.existing else {
        return Ok(false);
    };
    if !policy.in_scope(&target.namespace) {
        return Ok(false);
    }
    let Some(expr) = &existing.expression else {
        return Ok(existing
            .constraints
            .as_ref()
            .is_some_and(|c| c.matches(target, request)));
    };
    let name = &body.name;
    if let Some(why) = &body.broken {
        return Err(format!(
            "failed to compile CEL expression for policy {name}: {why}"
        ));
    }
    let mut act = Activation::new();
    act.set("object", to_cel(&trigger.root));
    if let Some(v) = body.variants.first() {
        act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    }
    let out = act
        .eval(expr)
        .map_err(|e| format!("failed to evaluate CEL expression for policy {name}: {e}"))?;
    if !matches!(out, Value::Map(_)) {
        return Err(format!(
            "output type of the target selector expression must be a map for policy {name}"
        ));
    }
    let node = crate::cel::convert::to_node(&out);
    let key = |n: &Node| {
        let s = |k: &str| {
            n.get_path(&["metadata", k])
                .and_then(Node::as_str)
                .unwrap_or("")
        };
        (s("namespace").to_owned(), s("name").to_owned())
    };
    let wanted = (target.namespace.clone(), target.name.clone());
    Ok(match node.get("items").and_then(Node::as_seq) {
        Some(items) => items
            .iter()
            .filter(|i| i.as_map().is_some())
            .any(|i| key(i) == wanted),
        None => key(&node) == wanted,
    })
}

/// One variant on the resource: its response, and the new tree when it passed. `on`: a
/// mutate-existing pass, `resource` being the target — the trigger (whose request CEL sees)
/// and the `targetMatchConditions` that replace the matchConditions.
fn evaluate_variant(
    body: &MutatingPolicy,
    v: &Variant,
    resource: &Resource,
    on: Option<(&Resource, &[(String, crate::cel::Program)])>,
    request: &Request,
    exceptions: &[PolicyException],
) -> (RuleResponse, Option<Node>) {
    if let Some(why) = &body.broken {
        return (error(why), None);
    }
    let mut act = Activation::new();
    // The resource changes after each mutation: its values are built for this variant only.
    let values = crate::cel::ResourceValues::new();
    bind_admission(
        &mut act,
        on.map_or(resource, |(trigger, _)| trigger),
        request,
        &values,
        request.operation,
        true,
    );
    if on.is_some() {
        // The target is the object; the engine passes it no namespace and no old object.
        act.set("object", to_cel(&resource.root));
        act.set("oldObject", Value::Null);
        act.set("namespaceObject", Value::Null);
    } else {
        act.set("namespaceObject", namespace_object(resource, request));
    }
    let conditions = on.map_or(v.match_conditions.as_slice(), |(_, c)| c);
    let refs = CelRefs::Policy {
        kind: body.kind,
        name: &body.name,
        ignore_failures: body.ignore_failures,
    };
    match exception::cel_step(&mut act, exceptions, refs, resource, request) {
        Decided::GoOn => {}
        Decided::Respond(mut r) => {
            r.rule_type = RuleType::Mutation;
            return (r, None);
        }
        Decided::Error(e) => return (error(e), None),
    }
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut errors = Vec::new();
    for (_, cond) in conditions {
        match act.eval_bool(cond) {
            Ok(false) => return (response("", Status::Skip, "skip"), None),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return (error(errors.join("; ")), None);
    }
    let mut root = resource.root.clone();
    for m in &v.mutations {
        let next = match m {
            Mutation::ApplyConfiguration(p) => act.eval(p).and_then(|value| {
                let crd = request
                    .offline
                    .cluster
                    .as_deref()
                    .and_then(|c| c.crd_schema(&resource.api_version, &resource.kind));
                apply_object(
                    &root,
                    &value,
                    &resource.api_version,
                    &resource.kind,
                    body.server_side_apply,
                    crd,
                )
            }),
            Mutation::JsonPatch(p) => act
                .eval(p)
                .and_then(|value| apply_json_patch(&root, &value)),
        };
        match next {
            Ok(n) => {
                act.set("object", to_cel(&n));
                root = n;
            }
            Err(e) => return (error(e), None),
        }
    }
    (response("", Status::Pass, "success"), Some(root))
}

/// An ApplyConfiguration result merged into `root` (k8s `patch/smd.go` `Patch`).
fn apply_object(
    root: &Node,
    value: &Value,
    api_version: &str,
    kind: &str,
    server_side_apply: bool,
    crd: Option<&Node>,
) -> Result<Node, String> {
    let patch = apply_configuration_patch(value)?;
    apply_configuration(root, &patch, api_version, kind, server_side_apply, crd)
        .map_err(|e| format!("error applying patch: {e}"))
}

/// The partial object an ApplyConfiguration expression produced, checked as Kubernetes does
/// (an `Object` literal whose nested type names agree with their fields); shared with
/// MutatingAdmissionPolicies (crate::mapol), which merge it without a schema.
pub(crate) fn apply_configuration_patch(value: &Value) -> Result<Node, String> {
    if type_name(value) != Some("Object") {
        return Err(format!(
            "unsupported return type from ApplyConfiguration expression: {}",
            type_name(value).map_or_else(|| value.type_of().to_string(), str::to_owned)
        ));
    }
    check_type_names(value).map_err(|e| format!("type mismatch: {e}"))?;
    Ok(to_plain_node(value))
}

/// A JSONPatch result applied to `root` (k8s `patch/json_patch.go`, with json-patch v4's
/// defaults: no parent created on `add`, removing a missing path is an error): a failed `test`
/// operation leaves the object as it was.
pub(crate) fn apply_json_patch(root: &Node, value: &Value) -> Result<Node, String> {
    let Value::List(items) = value else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".to_owned());
    };
    let mut ops = Vec::with_capacity(items.len());
    for item in items.iter() {
        let Value::Map(m) = item else {
            return Err(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch"
                    .to_owned(),
            );
        };
        let field = |k: &str| m.map.get(&cel::objects::Key::from(k));
        let text = |k: &str| match field(k) {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        };
        let op = text("op");
        let path = json_patch::pointer(&text("path"))
            .ok_or_else(|| format!("invalid JSON patch path {:?}", text("path")))?;
        let from = match text("from") {
            f if f.is_empty() => None,
            f => Some(
                json_patch::pointer(&f).ok_or_else(|| format!("invalid JSON patch from {f:?}"))?,
            ),
        };
        let value = match field("value") {
            None => None,
            Some(v) => {
                if type_name(v).is_some() {
                    check_type_names(v).map_err(|e| format!("type mismatch: {e}"))?;
                }
                Some(to_plain_node(v))
            }
        };
        ops.push(json_patch::Op {
            op,
            path,
            from,
            value,
        });
    }
    let mut out = root.clone();
    match json_patch::apply_with(&mut out, &ops, json_patch::Options::KUBERNETES) {
        Ok(()) => Ok(out),
        Err(e) if e.starts_with("testing value") => Ok(root.clone()),
        Err(e) => Err(format!("JSON Patch: {e}")),
    }
}
