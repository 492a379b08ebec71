//! One GeneratingPolicy against one trigger, in Kyverno's order (`gpol/engine/engine.go`
//! `generate`, `gpol/compiler/policy.go` `Evaluate`; cel.md §11.2.4):
//!
//! 1. `matchConstraints` (none: no match) — no match gives no response at all (a policy that
//!    did not compile is an error response instead, see [`super::load`]);
//! 2. every CEL PolicyException, whatever its `policyRefs` (the CLI gives them all to
//!    GeneratingPolicies, §11.2.5), without `variables`: a full exemption is the response
//!    (rule `exception`, skip or pass);
//! 3. `matchConditions` (with `exceptions` bound): one false → no response;
//! 4. `variables`, then each `generate[]` entry in order: an expression is evaluated (its
//!    `generator.Apply` calls record objects), a template is rendered and its resources
//!    recorded in their own `metadata.namespace` (a namespaced policy: its own namespace,
//!    never another);
//! 5. `auditAnnotations`.
//!
//! Any error in 2–5 is the response `error` "failed to evaluate policy: …" and nothing is
//! generated; otherwise `pass` "policy evaluated successfully" (rule: the policy name) with
//! the objects recorded.

use serde_json::Value as Json;

use super::{Entry, GeneratingPolicy};
use crate::cel::Activation;
use crate::exception::{self, CelRefs, Decided, PolicyException};
use crate::policy::Policy;
use crate::report::Status;
use crate::request::Request;
use crate::resource::Resource;

/// A GeneratingPolicy's response for one trigger.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The policy name, or `exception` for a response given by an exception.
    pub rule: String,
    pub status: Status,
    pub message: String,
    /// What was generated, in order (empty unless `pass`).
    pub generated: Vec<Generated>,
    /// `evaluation.synchronize.enabled` (not evaluated offline).
    pub synchronize: bool,
}

/// One object the policy generated.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// `expression` or `template`: the kind of `generate[]` entry that made it.
    pub mode: &'static str,
    /// The object as Kyverno's CLI records it (its namespace set, numbers from CEL doubles).
    pub resource: Json,
}

/// The response of `policy` for `trigger`: `None` when `policy` is no GeneratingPolicy, or
/// when it gives no response (no match, a false match condition). `exceptions` are all the
/// loaded exceptions; the CEL ones apply.
pub fn generate(
    policy: &Policy,
    trigger: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<Generation> {
    let g = super::generating_policy(policy)?;
    let _ns = crate::cel::context::PolicyNamespace::enter(policy.namespace.as_deref());
    let matched = g
        .constraints
        .as_ref()
        .is_some_and(|c| c.matches(trigger, request));
    // A policy that did not compile is an error wherever it matches, and everywhere when
    // its constraints could not be read.
    let broken_everywhere = g.broken.is_some() && g.constraints.is_none();
    if !matched && !broken_everywhere {
        return None;
    }
    // One evaluation budget for the policy on this trigger (crate::base::budget).
    let _budget = crate::base::budget::Scope::enter();
    let respond = |rule: &str, status, message: String, generated| Generation {
        rule: rule.to_owned(),
        status,
        message,
        generated,
        synchronize: g.synchronize,
    };
    if let Some(why) = &g.broken {
        return Some(respond(&g.name, Status::Error, why.clone(), Vec::new()));
    }
    let (result, recorded) = crate::cel::generator::collect(g.policy_namespace.as_deref(), || {
        run(g, trigger, request, exceptions)
    });
    match result {
        Run::NoResponse => None,
        Run::Exception(r) => Some(respond(&r.rule, r.status, r.message, Vec::new())),
        Run::Error(e) => Some(respond(
            &g.name,
            Status::Error,
            format!("failed to evaluate policy: {e}"),
            Vec::new(),
        )),
        Run::Done(modes) => {
            let generated = recorded
                .into_iter()
                .zip(modes)
                .map(|(resource, mode)| Generated { mode, resource })
                .collect();
            Some(respond(
                &g.name,
                Status::Pass,
                "policy evaluated successfully".to_owned(),
                generated,
            ))
        }
    }
}

enum Run {
    NoResponse,
    Exception(crate::report::RuleResponse),
    Error(String),
    /// The mode of each recorded object, in order.
    Done(Vec<&'static str>),
}

fn run(
    g: &GeneratingPolicy,
    trigger: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Run {
    let mut act = Activation::new();
    let values = crate::cel::ResourceValues::new();
    crate::vpol::evaluate::bind_admission(
        &mut act,
        trigger,
        request,
        &values,
        request.operation,
        true,
    );
    act.set(
        "namespaceObject",
        crate::vpol::evaluate::namespace_object(trigger, request),
    );
    match exception::cel_step(&mut act, exceptions, CelRefs::Every, trigger, request) {
        Decided::GoOn => {}
        Decided::Respond(r) => return Run::Exception(r),
        Decided::Error(e) => return Run::Error(e),
    }
    // Every condition is evaluated: a false one decides, else the errors do.
    let mut errors = Vec::new();
    for (_, cond) in &g.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return Run::NoResponse,
            Ok(true) => {}
            // Unnamed, as Kyverno joins them (checked with the v1.19.0 CLI).
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Run::Error(errors.join("; "));
    }
    act.bind_variables(g.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut modes = Vec::new();
    for entry in &g.generate {
        let before = crate::cel::generator::recorded();
        let (mode, result) = match entry {
            Entry::Expression(p) => ("expression", act.eval(p).map(drop)),
            Entry::Template(t) => ("template", apply_template(g, t, &act)),
        };
        if let Err(e) = result {
            return Run::Error(e);
        }
        // What this entry recorded is everything recorded since the last entry.
        let now = crate::cel::generator::recorded();
        modes.extend(std::iter::repeat_n(mode, now.saturating_sub(before)));
    }
    for (key, p) in &g.audit_annotations {
        match act.eval(p) {
            Ok(cel::Value::String(_)) => {}
            Ok(other) => {
                return Run::Error(format!(
                    "failed to convert auditAnnotation {key:?} expression: got {}",
                    other.type_of()
                ));
            }
            Err(e) => {
                return Run::Error(format!("failed to evaluate auditAnnotation {key:?}: {e}"));
            }
        }
    }
    Run::Done(modes)
}

/// Renders a template and records its resources, grouped by their `metadata.namespace` in
/// order of first appearance (`gpol/compiler/policy.go` `applyTemplate`).
fn apply_template(
    g: &GeneratingPolicy,
    t: &super::template::Template,
    act: &Activation,
) -> Result<(), String> {
    let resources = t
        .render(act)
        .map_err(|e| format!("failed to render generation template: {e}"))?;
    let mut groups: Vec<(String, Vec<Json>)> = Vec::new();
    for r in resources {
        let mut ns = r
            .pointer("/metadata/namespace")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(own) = &g.policy_namespace {
            if ns.is_empty() {
                ns = own.clone();
            } else if ns != *own {
                return Err(format!(
                    "cross-namespace generation denied: a policy in namespace {own:?} cannot generate resources into namespace {ns:?}"
                ));
            }
        }
        match groups.iter_mut().find(|(n, _)| *n == ns) {
            Some((_, list)) => list.push(r),
            None => groups.push((ns, vec![r])),
        }
    }
    for (ns, list) in groups {
        crate::cel::generator::generate_resources(&ns, list)
            .map_err(|e| format!("failed to generate resources: {e}"))?;
    }
    Ok(())
}
