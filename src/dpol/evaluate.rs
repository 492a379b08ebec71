//! Would a DeletingPolicy delete this resource? Evaluated as the Kyverno v1.19 CLI does
//! (`dpol/engine/engine.go` `Handle`, `dpol/compiler/policy.go` `Evaluate`, `test.go`
//! `applyDeletingPolicies`; cel.md §7, §11.1.7, §11.2.5):
//!
//! - `matchConstraints` (operations ignored) must select the resource, else there is no
//!   response at all (a row naming the resource is *Not found*);
//! - CEL PolicyExceptions naming the policy: one whose match conditions hold keeps the
//!   resource → fail "resource did not match" (partial exceptions too: `images` and
//!   `allowedValues` mean nothing to a deletion);
//! - `conditions`, in order: the first false → fail "resource did not match"; else any error →
//!   error with the errors as message; else pass "resource matched".
//!
//! The CEL environment has `object`, `namespaceObject`, `variables` and the `resource.*`
//! library; `oldObject` and `request` are declared but never bound (reading them is an
//! error, as upstream).
//!
//! A JSON payload (no apiVersion, no kind; a test's `jsonPayloads`) is not matched at all:
//! `Handle` skips the constraints and the namespace for an object without a type, so every
//! DeletingPolicy evaluates its conditions on it, with `namespaceObject` null.

use cel::Value;

use super::deleting_policy;
use crate::cel::Activation;
use crate::cel::convert::{map_of, string, to_cel};
use crate::exception::PolicyException;
use crate::policy::Policy;
use crate::report::{RuleResponse, RuleType, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::vpol::evaluate::namespace_object;

/// The pass message: the resource would be deleted.
pub const MATCHED: &str = "resource matched";
/// The fail message: the resource would be kept.
pub const NOT_MATCHED: &str = "resource did not match";

/// The response of `policy` for `resource`, named after the policy: `None` when it is not a
/// DeletingPolicy or its matchConstraints do not
/// select the resource. `exceptions` are all the loaded PolicyExceptions.
pub fn evaluate(
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<RuleResponse> {
    let body = deleting_policy(policy)?;
    let payload = resource.api_version.is_empty() && resource.kind.is_empty();
    // The cleanup controller lists a namespaced policy's resources in its namespace only: the
    // engine asked that before (`Engine::deletion`).
    // No matchConstraints: nothing is selected (`matchPolicy`).
    if !payload && !body.constraints.as_ref()?.matches(resource, request) {
        return None;
    }
    let _budget = crate::base::budget::Scope::enter();
    let _ns = crate::cel::context::PolicyNamespace::enter(policy.namespace.as_deref());
    let respond = |status: Status, message: String| {
        let mut r = RuleResponse::new(&body.name, status, message);
        r.rule_type = RuleType::Deletion;
        r
    };
    if let Some(why) = &body.broken {
        return Some(respond(Status::Error, why.clone()));
    }
    let mut act = Activation::new();
    act.set("object", to_cel(&resource.root));
    let namespace = if payload {
        Value::Null
    } else {
        namespace_of(resource, request)
    };
    act.set("namespaceObject", namespace);
    act.bind_variables(body.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let applicable = exceptions
        .iter()
        .filter_map(|e| e.cel.as_deref())
        .filter(|e| e.refers_to(body.kind, &body.name));
    for e in applicable {
        match all_hold(&act, &e.match_conditions) {
            Ok(true) => return Some(respond(Status::Fail, NOT_MATCHED.to_owned())),
            Ok(false) => {}
            Err(err) => return Some(respond(Status::Error, err)),
        }
    }
    Some(match all_hold(&act, &body.conditions) {
        Ok(true) => respond(Status::Pass, MATCHED.to_owned()),
        Ok(false) => respond(Status::Fail, NOT_MATCHED.to_owned()),
        Err(err) => respond(Status::Error, err),
    })
}

/// Kyverno's `match`: the first false condition decides; otherwise the errors of those that
/// failed to evaluate, joined; no condition at all holds.
fn all_hold(
    act: &Activation,
    conditions: &[(String, crate::cel::Program)],
) -> Result<bool, String> {
    let mut errors = Vec::new();
    for (_, p) in conditions {
        match act.eval_bool(p) {
            Ok(false) => return Ok(false),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(true)
    } else {
        Err(errors.join("; "))
    }
}

/// `namespaceObject`: the resource's Namespace as the values file gives it; a Namespace is
/// its own (name and labels) unless the values file has it.
fn namespace_of(resource: &Resource, request: &Request) -> Value {
    if resource.namespace.is_empty()
        && resource.kind == "Namespace"
        && resource.group_version().0.is_empty()
    {
        if let Some(ns) = request.namespaces.get(&resource.name) {
            return to_cel(ns);
        }
        if let Some(ns) = request.values.namespace_objects.get(&resource.name) {
            return to_cel(ns);
        }
        let labels = resource.labels().map_or_else(
            || map_of(Vec::<(String, Value)>::new()),
            |m| {
                map_of(
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), string(v))))
                        .collect::<Vec<_>>(),
                )
            },
        );
        return map_of([(
            "metadata",
            map_of([("name", string(&resource.name)), ("labels", labels)]),
        )]);
    }
    namespace_object(resource, request)
}
