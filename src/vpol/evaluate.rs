//! Evaluating a ValidatingPolicy (cel.md §3.3) or a ValidatingAdmissionPolicy (§5) against one
//! resource, with each kind's result rules: for these kinds a CEL evaluation error is an
//! `error` result (unlike ClusterPolicy `validate.cel`, see [`super::cel_rule`]).

use cel::Value;

use super::{CelKind, CelPolicy, Variant};
use crate::cel::Activation;
use crate::cel::convert::{map_of, string, strings, to_cel};
use crate::exception::{self, Outcome, PolicyException, Subject};
use crate::report::{RuleResponse, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;

/// The rule responses of `policy` for `resource`: `None` when the CLI drops the response
/// entirely (no match and the policy has selectors, §3.7), `Some(vec![])` for an empty one.
/// `exceptions` are all the loaded PolicyExceptions; those for CEL policies that refer to this
/// ValidatingPolicy apply (cel.md §3.3); none ever applies to a VAP (§11.1 item 2).
pub fn evaluate(
    policy: &CelPolicy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<Vec<RuleResponse>> {
    // One evaluation budget for the policy on this resource: its variables and validations
    // together (crate::base::budget).
    let _budget = crate::base::budget::Scope::enter();
    match policy.kind {
        CelKind::ValidatingAdmissionPolicy => Some(evaluate_vap(policy, resource, request)),
        _ => evaluate_vpol(policy, resource, request, exceptions),
    }
}

fn response(policy: &CelPolicy, status: Status, message: impl Into<String>) -> RuleResponse {
    let mut r = RuleResponse::new(policy.rule_name(), status, message);
    r.failure_action = policy.action;
    r
}

fn evaluate_vpol(
    policy: &CelPolicy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<Vec<RuleResponse>> {
    let mut act = Activation::new();
    let variant = if policy.json_mode {
        // JSON mode: every payload, only `object` (and `variables`) bound (§3.5).
        act.set("object", to_cel(&resource.root));
        for name in ["oldObject", "request", "namespaceObject"] {
            act.set(name, Value::Null);
        }
        policy.variants.first()?
    } else {
        let found = policy.variants.iter().find(|v| {
            v.constraints
                .as_ref()
                .is_some_and(|c| c.matches(resource, request))
        });
        let Some(v) = found else {
            return if policy.has_selector() {
                None
            } else {
                Some(Vec::new())
            };
        };
        bind_admission(&mut act, resource, request, request.operation, true);
        act.set("namespaceObject", namespace_object(resource, request));
        v
    };
    if let Some(why) = &policy.broken {
        return Some(vec![response(policy, Status::Error, why.clone())]);
    }
    // CEL PolicyExceptions first, with neither `variables` nor `exceptions` bound yet.
    let kind = match policy.kind {
        CelKind::NamespacedValidatingPolicy => "NamespacedValidatingPolicy",
        _ => "ValidatingPolicy",
    };
    let outcome = {
        let probe = &act;
        let mut eval = |p: &crate::cel::Program| probe.eval_bool(p);
        let subject = Subject::Cel {
            kind,
            name: &policy.name,
            ignore_failures: policy.ignore_failures,
            eval: &mut eval,
        };
        exception::apply(exceptions, subject, resource, request)
    };
    let (images, values) = match outcome {
        Outcome::Respond(mut r) => {
            r.failure_action = policy.action;
            return Some(vec![r]);
        }
        Outcome::Error(e) => return Some(vec![response(policy, Status::Error, e)]),
        Outcome::Evaluate {
            allowed_images,
            allowed_values,
        } => (allowed_images, allowed_values),
    };
    act.set(
        "exceptions",
        map_of([
            ("allowedImages", strings(images.iter().map(String::as_str))),
            ("allowedValues", strings(values.iter().map(String::as_str))),
        ]),
    );
    Some(vec![run_vpol(policy, variant, &mut act)])
}

fn run_vpol(policy: &CelPolicy, v: &Variant, act: &mut Activation) -> RuleResponse {
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut errors = Vec::new();
    for (name, cond) in &v.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return response(policy, Status::Skip, "match conditions not met"),
            Ok(true) => {}
            Err(e) => errors.push(format!("matchCondition '{name}': {e}")),
        }
    }
    if !errors.is_empty() {
        return if policy.ignore_failures {
            response(policy, Status::Skip, "match conditions not met")
        } else {
            response(policy, Status::Error, errors.join("; "))
        };
    }
    for (i, val) in v.validations.iter().enumerate() {
        match act.eval_bool(&val.expression) {
            Err(e) => return response(policy, Status::Error, e),
            Ok(true) => {}
            Ok(false) => {
                let message = match &val.message_expression {
                    Some(p) => match act.eval(p) {
                        Ok(Value::String(s)) => s.to_string(),
                        Ok(other) => format!(
                            "failed to convert message expression to string: got {}",
                            other.type_of()
                        ),
                        Err(e) => format!("failed to evaluate message expression: {e}"),
                    },
                    None => val
                        .message
                        .clone()
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| {
                            format!("CEL expression validation failed at index {i}")
                        }),
                };
                if let Some(e) = audit_error(v, act) {
                    return response(policy, Status::Error, e);
                }
                return response(policy, Status::Fail, message);
            }
        }
    }
    if let Some(e) = audit_error(v, act) {
        return response(policy, Status::Error, e);
    }
    response(policy, Status::Pass, "success")
}

fn audit_error(v: &Variant, act: &Activation) -> Option<String> {
    v.audit_annotations.iter().find_map(|p| act.eval(p).err())
}

/// VAPs as the CLI applies them (§5): always CREATE, the last matching binding decides.
fn evaluate_vap(policy: &CelPolicy, resource: &Resource, request: &Request) -> Vec<RuleResponse> {
    let Some(v) = policy.variants.first() else {
        return Vec::new();
    };
    let own = v
        .constraints
        .as_ref()
        .is_none_or(|c| c.matches(resource, request));
    let mut act = Activation::new();
    bind_admission(&mut act, resource, request, Operation::Create, false);
    let ns = if resource.namespace.is_empty() {
        map_of([("metadata", map_of(Vec::<(String, Value)>::new()))])
    } else if let Some(ns) = request.namespaces.get(&resource.namespace) {
        to_cel(ns)
    } else {
        namespace_object_with_labels(resource, request)
    };
    act.set("namespaceObject", ns);
    let run = |act: &mut Activation| match &policy.broken {
        Some(why) => response(policy, Status::Error, why.clone()),
        None => run_vap(policy, v, act),
    };
    if policy.bindings.is_empty() {
        return if own { vec![run(&mut act)] } else { Vec::new() };
    }
    let mut last = None;
    // Every matching binding acts on the result: the strongest of their actions.
    let mut action: Option<crate::report::FailureAction> = None;
    for b in &policy.bindings {
        let matched = match &b.match_resources {
            Some(c) => c.matches(resource, request),
            None => own,
        };
        if !matched {
            continue;
        }
        let mut r = match &b.param_ref {
            // Nothing found: `params` is null (reading it is an error).
            Some(Ok(param_ref)) => {
                act.set(
                    "params",
                    param_ref.resolve(&request.params).unwrap_or(Value::Null),
                );
                run(&mut act)
            }
            Some(Err(e)) => response(policy, Status::Error, format!("invalid paramRef: {e}")),
            None => {
                act.set("params", Value::Null);
                run(&mut act)
            }
        };
        let a = action.map_or(b.action, |a| a.stronger(b.action));
        action = Some(a);
        r.failure_action = a;
        last = Some(r);
    }
    last.into_iter().collect()
}

fn run_vap(policy: &CelPolicy, v: &Variant, act: &mut Activation) -> RuleResponse {
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut first_error = None;
    for (_, cond) in &v.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return response(policy, Status::Skip, "match conditions aren't met"),
            Ok(true) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return response(policy, Status::Error, e);
    }
    let mut deny = None;
    for val in &v.validations {
        match act.eval_bool(&val.expression) {
            Err(e) => return response(policy, Status::Error, e),
            Ok(true) => {}
            Ok(false) => {
                deny.get_or_insert_with(|| super::cel_rule::k8s_message(act, val));
            }
        }
    }
    match deny {
        Some(m) => response(policy, Status::Fail, m),
        None => response(policy, Status::Pass, ""),
    }
}

/// Binds `object`, `oldObject` and `request` for an admission request with `op`.
/// `with_objects`: Kyverno's request also carries `object`/`oldObject` (§4.2).
pub fn bind_admission(
    act: &mut Activation,
    resource: &Resource,
    request: &Request,
    op: Operation,
    with_objects: bool,
) {
    let obj = to_cel(&resource.root);
    let (object, old) = match op {
        // The previous revision when one is given (`kpol check --old`), else the resource.
        Operation::Update => match &request.old_object {
            Some(old) => (obj, to_cel(&old.root)),
            None => (obj.clone(), obj),
        },
        Operation::Delete => (Value::Null, obj),
        _ => (obj, Value::Null),
    };
    act.set(
        "request",
        request_value(
            resource,
            request,
            op,
            with_objects.then_some((&object, &old)),
            !with_objects,
        ),
    );
    act.set("object", object);
    act.set("oldObject", old);
}

/// The admission request as CEL sees it; empty optional fields are absent (§4.2).
pub fn request_value(
    resource: &Resource,
    request: &Request,
    op: Operation,
    objects: Option<(&Value, &Value)>,
    sentinel_user: bool,
) -> Value {
    let (group, version) = resource.group_version();
    let gvk = map_of([
        ("group", string(group)),
        ("version", string(version)),
        ("kind", string(&resource.kind)),
    ]);
    let gvr = map_of([
        ("group", string(group)),
        ("version", string(version)),
        (
            "resource",
            string(&crate::base::gvk::plural(&resource.kind)),
        ),
    ]);
    let mut user: Vec<(&str, Value)> = Vec::new();
    match &request.user_info {
        Some(u) => {
            if !u.username.is_empty() {
                user.push(("username", string(&u.username)));
            }
            if !u.groups.is_empty() {
                user.push(("groups", strings(u.groups.iter().map(String::as_str))));
            }
        }
        None if sentinel_user => {
            user.push(("username", string("system:kyverno:background-scan")));
            user.push(("groups", strings(["system:authenticated"])));
        }
        None => {}
    }
    let mut fields: Vec<(&str, Value)> = vec![
        ("uid", string("")),
        ("kind", gvk.clone()),
        ("resource", gvr.clone()),
        ("requestKind", gvk),
        ("requestResource", gvr),
        ("operation", string(op.as_str())),
        ("userInfo", map_of(user)),
    ];
    if !resource.name.is_empty() {
        fields.push(("name", string(&resource.name)));
    }
    if !resource.namespace.is_empty() {
        fields.push(("namespace", string(&resource.namespace)));
    }
    if let Some((object, old)) = objects {
        if *object != Value::Null {
            fields.push(("object", object.clone()));
        }
        if *old != Value::Null {
            fields.push(("oldObject", old.clone()));
        }
    }
    map_of(fields)
}

/// vpol `namespaceObject`: the Namespace `kpol check` knows (an input, the values file), else
/// `{name, labels}` from the values file, null when unknown or cluster-scoped (§4.3).
pub fn namespace_object(resource: &Resource, request: &Request) -> Value {
    if resource.namespace.is_empty() {
        return Value::Null;
    }
    if let Some(ns) = request.namespaces.get(&resource.namespace) {
        return to_cel(ns);
    }
    if !request.namespace_labels.contains_key(&resource.namespace) {
        return Value::Null;
    }
    // A full Namespace from the values file is what the CLI's fake client holds.
    if let Some(ns) = request.values.namespace_objects.get(&resource.namespace) {
        return to_cel(ns);
    }
    namespace_object_with_labels(resource, request)
}

fn namespace_object_with_labels(resource: &Resource, request: &Request) -> Value {
    let labels = request
        .namespace_labels
        .get(&resource.namespace)
        .map(|l| map_of(l.iter().map(|(k, v)| (k.clone(), string(v)))))
        .unwrap_or_else(|| map_of(Vec::<(String, Value)>::new()));
    map_of([(
        "metadata",
        map_of([("name", string(&resource.namespace)), ("labels", labels)]),
    )])
}
