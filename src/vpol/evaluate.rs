//! Evaluating a ValidatingPolicy (cel.md §3.3) or a ValidatingAdmissionPolicy (§5) against one
//! resource, with each kind's result rules: for these kinds a CEL evaluation error is an
//! `error` result (unlike ClusterPolicy `validate.cel`, see [`super::cel_rule`]).

use cel::Value;

use super::{CelKind, CelPolicy, Variant};
use crate::cel::convert::{map_of, string, to_cel};
use crate::cel::{Activation, ResourceValues, Shared};
use crate::exception::{self, CelRefs, Decided, PolicyException};
use crate::report::{RuleResponse, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;

/// The rule responses of `policy` for `resource`: `None` when the CLI drops the response
/// entirely (no match and the policy's constraints are simple, §3.7), `Some(vec![])` for an empty one.
/// `exceptions` are all the loaded PolicyExceptions; those for CEL policies that refer to this
/// ValidatingPolicy apply (cel.md §3.3); none ever applies to a VAP (§11.1 item 2). `values`:
/// the CEL values of this resource evaluation, shared with every other CEL policy and rule on it.
/// `variants`: the positions of the variants that may match (in order; the policy's
/// [`super::CelPolicy::kind_plan`] for the resource's kind); a ValidatingPolicy matches only
/// those.
pub fn evaluate(
    policy: &CelPolicy,
    variants: &[usize],
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
    values: &ResourceValues,
) -> Option<Vec<RuleResponse>> {
    // One evaluation budget for the policy on this resource: its variables and validations
    // together (crate::base::budget).
    let _budget = crate::base::budget::Scope::enter();
    match policy.kind {
        CelKind::ValidatingAdmissionPolicy => Some(evaluate_vap(policy, resource, request, values)),
        _ => evaluate_vpol(policy, variants, resource, request, exceptions, values),
    }
}

/// The rule responses of `policy` for a JSON payload (cel.md §3.5: `kpol check
/// --json-payload`, test files' `jsonPayloads`): only a ValidatingPolicy in `evaluation.mode:
/// JSON` sees payloads (`None` for every other policy, as the Kyverno CLI skips them), with
/// `object` the payload, no matchConstraints and no namespace scope.
pub(crate) fn evaluate_payload(
    policy: &CelPolicy,
    payload: &Resource,
    exceptions: &[PolicyException],
) -> Option<Vec<RuleResponse>> {
    if !policy.json_mode
        || policy.kind == CelKind::ValidatingAdmissionPolicy
        || policy.authz.is_some()
    {
        return None;
    }
    let _budget = crate::base::budget::Scope::enter();
    let values = ResourceValues::new();
    // JSON mode evaluates the first variant whatever the plan (no constraints are matched).
    evaluate_vpol(
        policy,
        &[],
        payload,
        &Request::default(),
        exceptions,
        &values,
    )
}

fn response(policy: &CelPolicy, status: Status, message: impl Into<String>) -> RuleResponse {
    let mut r = RuleResponse::new(policy.rule_name(), status, message);
    r.failure_action = policy.action;
    r
}

fn evaluate_vpol(
    policy: &CelPolicy,
    variants: &[usize],
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
    values: &ResourceValues,
) -> Option<Vec<RuleResponse>> {
    let mut act = Activation::new();
    let variant = if policy.json_mode {
        // JSON mode: every payload, only `object` (and `variables`) bound (§3.5).
        act.bind("object", values.shared_node(OBJECT, &resource.root));
        for name in ["oldObject", "request", "namespaceObject"] {
            act.bind(name, Shared::null());
        }
        policy.variants.first()?
    } else {
        let mut candidates = variants.iter().filter_map(|&i| policy.variants.get(i));
        let found = candidates.find(|v| {
            v.constraints
                .as_ref()
                .is_some_and(|c| c.matches(resource, request))
        });
        let Some(v) = found else {
            return if policy.unmatched_dropped() {
                None
            } else {
                Some(Vec::new())
            };
        };
        bind_admission(&mut act, resource, request, values, request.operation, true);
        act.bind(
            "namespaceObject",
            values.shared("namespaceObject/vpol", || {
                namespace_object(resource, request)
            }),
        );
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
    let refs = CelRefs::Policy {
        kind,
        name: &policy.name,
        ignore_failures: policy.ignore_failures,
    };
    match exception::cel_step(&mut act, exceptions, refs, resource, request) {
        Decided::GoOn => {}
        Decided::Respond(mut r) => {
            r.failure_action = policy.action;
            return Some(vec![r]);
        }
        Decided::Error(e) => return Some(vec![context_error(policy, &e)]),
    }
    Some(vec![run_vpol(policy, variant, &mut act, &resource.root)])
}

fn run_vpol(
    policy: &CelPolicy,
    v: &Variant,
    act: &mut Activation,
    root: &crate::yaml::Node,
) -> RuleResponse {
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut errors = Vec::new();
    for (_, cond) in &v.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return response(policy, Status::Skip, "match conditions not met"),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return if policy.ignore_failures {
            response(policy, Status::Skip, "match conditions not met")
        } else {
            // Kyverno joins the conditions' errors unnamed (multierr).
            context_error(policy, &errors.join("; "))
        };
    }
    for (i, val) in v.validations.iter().enumerate() {
        match act.eval_bool(&val.expression) {
            Err(e) => return response(policy, Status::Error, format!("error: {e}")),
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
                    return response(policy, Status::Error, format!("error: {e}"));
                }
                let mut r = response(policy, Status::Fail, message);
                // The field the expression reads (Kyverno names none, crate::cel::locate).
                r.span = val
                    .expression
                    .expr
                    .as_ref()
                    .ok()
                    .and_then(|e| crate::cel::locate::failure_span(e, root));
                return r;
            }
        }
    }
    if let Some(e) = audit_error(v, act) {
        return context_error(policy, &e);
    }
    response(policy, Status::Pass, "success")
}

fn audit_error(v: &Variant, act: &Activation) -> Option<String> {
    v.audit_annotations.iter().find_map(|(key, p)| {
        let e = act.eval(p).err()?;
        Some(format!("failed to evaluate auditAnnotation '{key}': {e}"))
    })
}

/// An error before the validations decide (match conditions, exceptions' conditions, audit
/// annotations after a pass): Kyverno's engine names the row `evaluation` and says it failed
/// to load the context; a validation's own error is `error: …` on the policy's row.
fn context_error(policy: &CelPolicy, e: &str) -> RuleResponse {
    let mut r = RuleResponse::new(
        "evaluation",
        Status::Error,
        format!("failed to load context: {e}"),
    );
    r.failure_action = policy.action;
    r
}

/// VAPs as the CLI applies them (§5): always CREATE, the last matching binding decides.
fn evaluate_vap(
    policy: &CelPolicy,
    resource: &Resource,
    request: &Request,
    values: &ResourceValues,
) -> Vec<RuleResponse> {
    let Some(v) = policy.variants.first() else {
        return Vec::new();
    };
    // In `clusterResources` mode a VAP with bindings is matched over the CLI's fake cluster
    // (`processVAPWithClient`): a namespaced resource's Namespace is the cluster's object,
    // for the selectors (its own labels only) and as `namespaceObject`; without it there,
    // the response is empty. The values file's namespace labels are not read.
    let in_cluster = request
        .offline
        .cluster
        .as_ref()
        .filter(|_| !policy.bindings.is_empty());
    let cluster_ns = match in_cluster {
        Some(c) if !resource.namespace.is_empty() => match c.namespace(&resource.namespace) {
            Some(ns) => Some((
                ns,
                c.namespace_labels(&resource.namespace).unwrap_or_default(),
            )),
            None => return Vec::new(),
        },
        _ => None,
    };
    let labels = cluster_ns.as_ref().map(|(_, l)| l);
    let own = v
        .constraints
        .as_ref()
        .is_none_or(|c| c.matches_in(resource, request, labels));
    // There the policy's own constraints must match first; without a cluster only the
    // bindings' are read, and a binding without `matchResources` selects every resource
    // (`processVAPWithoutClient`).
    if in_cluster.is_some() && !own {
        return Vec::new();
    }
    let mut act = Activation::new();
    bind_admission(
        &mut act,
        resource,
        request,
        values,
        Operation::Create,
        false,
    );
    let key = match cluster_ns {
        Some(_) => "namespaceObject/vap-cluster",
        None => "namespaceObject/vap",
    };
    let ns = values.shared(key, || {
        if let Some((ns, _)) = cluster_ns {
            to_cel(ns)
        } else if resource.namespace.is_empty() {
            map_of([("metadata", map_of(Vec::<(String, Value)>::new()))])
        } else if let Some(ns) = request.namespaces.get(&resource.namespace) {
            to_cel(ns)
        } else {
            namespace_object_with_labels(resource, request)
        }
    });
    act.bind("namespaceObject", ns);
    let run = |act: &mut Activation| match &policy.broken {
        Some(why) => response(policy, Status::Error, why.clone()),
        None => run_vap(policy, v, act, &resource.root),
    };
    if policy.bindings.is_empty() {
        return if own { vec![run(&mut act)] } else { Vec::new() };
    }
    let mut last = None;
    // Every matching binding acts on the result: the strongest of their actions.
    let mut action: Option<crate::report::FailureAction> = None;
    for b in &policy.bindings {
        let matched = match &b.match_resources {
            Some(c) => c.matches_in(resource, request, labels),
            None => true,
        };
        if !matched {
            continue;
        }
        let mut r = match &b.param_ref {
            // In `clusterResources` mode the params come from the CLI's fake cluster; a
            // failure to collect them ends the policy with the responses so far.
            Some(Ok(param_ref)) if in_cluster.is_some() => {
                let cluster = in_cluster.map(AsRef::as_ref);
                let from_cluster = cluster.map_or_else(
                    || Err(String::new()),
                    |c| super::params::from_fake_cluster(b.param_kind.as_ref(), param_ref, c),
                );
                match from_cluster {
                    Ok(Some(params)) => {
                        act.set("params", params);
                        run(&mut act)
                    }
                    Ok(None) => response(
                        policy,
                        Status::Error,
                        "no params selected by the binding's paramRef (the Kyverno v1.19.0 CLI panics here)"
                            .to_owned(),
                    ),
                    Err(_) => break,
                }
            }
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

fn run_vap(
    policy: &CelPolicy,
    v: &Variant,
    act: &mut Activation,
    root: &crate::yaml::Node,
) -> RuleResponse {
    act.bind_composited_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut first_error = None;
    for (_, cond) in &v.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return response(policy, Status::Skip, "match conditions aren't met"),
            Ok(true) => {}
            Err(e) => {
                first_error.get_or_insert_with(|| super::cel_rule::resulted_in_error(cond, &e));
            }
        }
    }
    if let Some(e) = first_error {
        return response(policy, Status::Error, e);
    }
    let mut deny = None;
    for val in &v.validations {
        // A validation that does not compile is an error with the compiler's text.
        if let Err(e) = &val.expression.expr {
            return response(policy, Status::Error, format!("compilation error: {e}"));
        }
        match act.eval_bool(&val.expression) {
            Err(e) => {
                let e = super::cel_rule::resulted_in_error(&val.expression, &e);
                return response(policy, Status::Error, e);
            }
            Ok(true) => {}
            Ok(false) => {
                deny.get_or_insert_with(|| (super::cel_rule::k8s_message(act, val), val));
            }
        }
    }
    match deny {
        Some((m, val)) => {
            let mut r = response(policy, Status::Fail, m);
            r.span = val
                .expression
                .expr
                .as_ref()
                .ok()
                .and_then(|e| crate::cel::locate::failure_span(e, root));
            r
        }
        None => response(policy, Status::Pass, ""),
    }
}

pub(crate) use crate::cel::admission::{OBJECT, OLD_OBJECT, bind_admission, request_value};

/// vpol `namespaceObject`: the Namespace `kpol check` knows (an input, the values file), else
/// `{name, labels}` from the values file, null when unknown or cluster-scoped (§4.3).
pub(crate) fn namespace_object(resource: &Resource, request: &Request) -> Value {
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
