//! The ClusterPolicy / Policy `validate.cel` rule body (cel.md §2,
//! `kyverno/kyverno:pkg/engine/handlers/validation/validate_cel.go`): Kubernetes validations run
//! by Kyverno's handler, where a CEL evaluation error is a `fail` (failure policy Fail → deny).

use cel::Value;

use super::Validation;
use super::evaluate::{OBJECT, OLD_OBJECT};
use super::params::{ParamPool, ParamRef, collect};
use crate::cel::convert::{map_of, string, to_cel};
use crate::cel::{Activation, ResourceValues, Shared};
pub use crate::policy::CelRule;
use crate::report::Status;
use crate::request::Request;
use crate::resource::Resource;

/// The outcome of one `validate.cel` rule: status, message, and the unsupported feature when
/// kpol cannot decide. `old`: the old object of an UPDATE (`oldObject`); `None` stands for the
/// resource itself. `values`: the CEL values of this resource evaluation, shared with every
/// other CEL rule and policy on it.
pub fn evaluate(
    rule_name: &str,
    rule_message: Option<&str>,
    rule: &CelRule,
    resource: &Resource,
    old: Option<&Resource>,
    request: &Request,
    values: &ResourceValues,
) -> (Status, String, Option<&'static str>) {
    let _budget = crate::base::budget::Scope::enter();
    let mut act = Activation::new();
    let obj = || values.shared_node(OBJECT, &resource.root);
    let op = request.operation;
    let (object, old) = match op {
        crate::request::Operation::Update => match old {
            // The resource itself, or the request's previous revision, are shared; an old
            // object made for this policy alone (values-file overrides) is not.
            Some(old) if std::ptr::eq(old, resource) => (obj(), obj()),
            Some(old)
                if request
                    .old_object
                    .as_deref()
                    .is_some_and(|o| std::ptr::eq(o, old)) =>
            {
                (obj(), values.shared_node(OLD_OBJECT, &old.root))
            }
            Some(old) => (obj(), Shared::of_node(&old.root)),
            None => (obj(), obj()),
        },
        crate::request::Operation::Delete => (Shared::null(), obj()),
        _ => (obj(), Shared::null()),
    };
    act.bind("object", object);
    act.bind("oldObject", old);
    act.bind(
        "request",
        values.shared("request/rule", || {
            super::evaluate::request_value(resource, request, op, None, false)
        }),
    );
    // The Namespace `kpol check` knows (an input, the values file); else, as the Kyverno CLI
    // has it offline (`kpol test`), only a name (§2.3).
    let ns = values.shared("namespaceObject/rule", || {
        if resource.namespace.is_empty() || resource.kind == "Namespace" {
            Value::Null
        } else if let Some(ns) = request.namespaces.get(&resource.namespace) {
            to_cel(ns)
        } else {
            map_of([("metadata", map_of([("name", string(&resource.namespace))]))])
        }
    });
    act.bind("namespaceObject", ns);
    // Kubernetes' `authorizer`, for the request's user (the CLI's offline answers).
    let username = request
        .user_info
        .as_ref()
        .map_or("", |u| u.username.as_str());
    act.set("authorizer", crate::cel::k8s_authz::authorizer(username));
    let Some((param_kind, param_ref)) = &rule.params else {
        let (status, message) = validate(rule_name, rule_message, rule, &mut act);
        return (status, message, None);
    };
    // With params (`validate_cel.go`): the rule runs once per param, the first result that is
    // not a pass decides; none selected (and none required) is a pass.
    let namespace = if resource.kind == "Namespace" {
        ""
    } else {
        resource.namespace.as_str()
    };
    let params = ParamRef::read(param_ref).and_then(|r| {
        let pool = param_pool(request);
        collect(param_kind, &r, namespace, &pool)
    });
    let params = match params {
        Ok(p) => p,
        Err(e) => {
            return (
                Status::Error,
                format!("error in parameterized resource: {e}"),
                None,
            );
        }
    };
    for param in params {
        act.set("params", param);
        let (status, message) = validate(rule_name, rule_message, rule, &mut act);
        if status != Status::Pass {
            return (status, message, None);
        }
    }
    (
        Status::Pass,
        format!("Validation rule '{rule_name}' passed."),
        None,
    )
}

/// Where a rule's params are looked up: the request's params (a test's `paramResources`,
/// `kpol check`'s params files), then the objects of the virtual cluster, whose CRDs also
/// give custom kinds their scope.
fn param_pool(request: &Request) -> ParamPool<'_> {
    let mut objects: Vec<&crate::yaml::Node> = request.params.iter().collect();
    let mut custom_scopes = Vec::new();
    if let Some(cluster) = &request.offline.cluster {
        objects.extend(cluster.objects().map(|(_, _, _, n)| n));
        custom_scopes.extend(
            cluster
                .custom_kinds()
                .iter()
                .map(|c| (c.group.clone(), c.kind.clone(), c.namespaced)),
        );
    }
    ParamPool {
        objects,
        custom_scopes,
    }
}

/// An expression's evaluation error as Kubernetes' validator words it (validate.cel and VAP
/// rows, checked against the Kyverno v1.19.0 CLI).
pub(super) fn resulted_in_error(p: &crate::cel::Program, e: &str) -> String {
    format!("expression '{}' resulted in error: {e}", p.text)
}

/// The rule's preconditions and validations on `act` (params bound if the rule has them).
fn validate(
    rule_name: &str,
    rule_message: Option<&str>,
    rule: &CelRule,
    act: &mut Activation,
) -> (Status, String) {
    // celPreconditions: false → skip; an error is a deny → fail.
    for p in &rule.preconditions {
        match act.eval_bool(p) {
            Ok(true) => {}
            Ok(false) => return (Status::Skip, "cel preconditions not met".to_owned()),
            Err(e) => return (Status::Fail, resulted_in_error(p, &e)),
        }
    }
    act.bind_composited_variables(rule.variables.iter().map(|(n, p)| (n.as_str(), p)));
    for val in &rule.validations {
        // A validation that does not compile denies with the compiler's error (Kubernetes'
        // validator: `compilation error: …`).
        if let Err(e) = &val.expression.expr {
            return (Status::Fail, format!("compilation error: {e}"));
        }
        match act.eval_bool(&val.expression) {
            Ok(true) => {}
            Err(e) => return (Status::Fail, resulted_in_error(&val.expression, &e)),
            Ok(false) => {
                let mut m = k8s_message(act, val);
                if val.message_expression.is_none()
                    && val.message.as_deref().is_none_or(str::is_empty)
                    && let Some(rm) = rule_message.filter(|m| !m.is_empty())
                {
                    m = rm.to_owned();
                }
                return (Status::Fail, m);
            }
        }
    }
    for a in &rule.audit_annotations {
        // Evaluated; the result is not surfaced offline (§2.1).
        let _ = act.eval(a);
    }
    (
        Status::Pass,
        format!("Validation rule '{rule_name}' passed."),
    )
}

/// The Kubernetes message of a failed validation: a non-empty single-line messageExpression
/// result (trimmed), else `message`, else `failed expression: <expr>`.
pub(crate) fn k8s_message(act: &Activation, val: &Validation) -> String {
    if let Some(p) = &val.message_expression
        && let Ok(Value::String(s)) = act.eval(p)
    {
        let t = s.trim();
        if !t.is_empty() && !t.contains('\n') && t.len() <= 5 * 1024 {
            return t.to_owned();
        }
    }
    match val.message.as_deref().filter(|m| !m.is_empty()) {
        Some(m) => m.to_owned(),
        None => format!("failed expression: {}", val.expression.text.trim()),
    }
}
