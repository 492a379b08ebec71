//! The generate phase (Kyverno's background `generate` rules, as the Kyverno CLI evaluates them
//! offline): for one trigger resource, the resources each matching generate rule would create.
//!
//! Order of work, after `pkg/engine/background.go` and `pkg/background/generate/`:
//! 1. PolicyExceptions that apply to the rule for the trigger skip it (`exception_skip`);
//!    otherwise every generate rule (the policy's rules as computed for the whole controller set) whose
//!    match/exclude selects the trigger gets a response: its context is loaded (a context
//!    error gives no response), preconditions hold → `pass`, do not hold → `skip`, fail to
//!    evaluate → `error`; `applyRules: One` stops after the first rule that is not skipped;
//!    Under DELETE the CLI's new object is empty: a rule that matches the old one is `fail`,
//!    and nothing is generated;
//! 2. for a passing rule, the generate body (or each `foreach` entry, per element) has its
//!    variables substituted, then yields resources from `data`, `clone` or `cloneList`
//!    (`target.rs`). Clone sources come from a [`SourcePool`]: a source that is not there is a
//!    [`Missing`] finding, never a silent skip.
//!
//! A GeneratingPolicy (crate::gpol) gives one response, named after the policy, with what its
//! `generate[]` entries recorded.
//!
//! Generation problems do not change the rule's status (the CLI keeps the background check's
//! verdict); they are carried on [`RuleGeneration::problems`].

mod foreach;
mod labels;
mod pool;
mod target;

pub use labels::same_resource;
pub use pool::SourcePool;

use serde::Serialize;

use crate::conditions::evaluate_block;
use crate::exception::PolicyException;
use crate::pipeline;
use crate::policy::{Policy, Rule, RuleBody};
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::validate;

/// One resource a generate rule would create.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Generated {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// `generate.synchronize`, carried as written on the rule.
    pub synchronize: bool,
    /// `data`, `clone` or `cloneList`.
    pub mode: &'static str,
    /// The whole resource, as Kyverno would create it (labels included).
    pub resource: serde_json::Value,
}

/// A clone source kpol was not given.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Missing {
    /// What to provide, in words (`v1 Secret regcred in namespace default`).
    pub what: String,
    /// A `cloneList` kind with no source: upstream lists nothing and goes on (no error),
    /// where a missing `clone` source fails the rule's generation.
    pub clone_list: bool,
}

/// One generate rule's response for one trigger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleGeneration {
    pub rule: String,
    pub status: Status,
    pub message: String,
    pub generated: Vec<Generated>,
    /// Clone sources that were not among the inputs.
    pub missing: Vec<Missing>,
    /// Errors met while building the resources (variable substitution, foreach lists).
    pub problems: Vec<String>,
}

impl RuleGeneration {
    /// Whether upstream's generation of this rule returns an error (a rule error, a
    /// substitution or foreach problem, a missing `clone` source); the Kyverno CLI then
    /// drops what every rule of the policy generated (`handleGeneratePolicy`).
    pub fn failed(&self) -> bool {
        self.status == Status::Error
            || !self.problems.is_empty()
            || self.missing.iter().any(|m| !m.clone_list)
    }
}

/// All generate responses of one policy for one trigger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GeneratePolicyResponse {
    /// Index of the policy in the engine's policy list.
    pub policy: usize,
    pub rules: Vec<RuleGeneration>,
}

/// Whether the policy has any generate rule, or is a GeneratingPolicy.
pub fn has_generate(policy: &Policy) -> bool {
    crate::gpol::generating_policy(policy).is_some()
        || policy
            .rules()
            .iter()
            .any(|r| matches!(r.body, RuleBody::Generate(_)))
}

/// The generate responses of one policy for one trigger; `None` when the policy has no
/// generate rule or gave no response at all.
pub fn generate_policy(
    index: usize,
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    pool: &SourcePool<'_>,
    exceptions: &[PolicyException],
) -> Option<GeneratePolicyResponse> {
    if crate::gpol::generating_policy(policy).is_some() {
        return gpol_response(index, policy, resource, request, exceptions);
    }
    if !has_generate(policy) {
        return None;
    }
    let mut rules = Vec::new();
    for rule in policy.rules() {
        let RuleBody::Generate(body) = &rule.body else {
            continue;
        };
        let response = |status, message: String| RuleGeneration {
            rule: rule.name.clone(),
            status,
            message,
            generated: Vec::new(),
            missing: Vec::new(),
            problems: Vec::new(),
        };
        let skip = || {
            exception_skip(exceptions, policy, rule, resource, request, pool)
                .map(|message| crate::report::RuleResponse::new(&rule.name, Status::Skip, message))
        };
        let how = generate_how(&skip);
        let s = pipeline::Subject {
            policy,
            rule,
            resource,
            request,
            exceptions,
        };
        // DELETE: the CLI's new object is empty and only the old one matches, which the
        // background check reports as `fail` ("delete the downstream"); nothing is generated.
        let early = |stage| {
            (stage == pipeline::Stage::Selected && request.operation == Operation::Delete).then(
                || {
                    pipeline::Early::Respond(crate::report::RuleResponse::new(
                        &rule.name,
                        Status::Fail,
                        String::new(),
                    ))
                },
            )
        };
        let context = || Some(validate::rule_context(policy, rule, resource, request));
        let out = match pipeline::gate(&s, &how, false, early, context) {
            pipeline::Gate::Silent | pipeline::Gate::Body(None) => continue,
            pipeline::Gate::Respond(r) => response(r.status, r.message),
            pipeline::Gate::Body(Some(mut ctx)) => {
                let mut out = response(Status::Pass, String::new());
                let cx = target::RuleCx {
                    policy,
                    rule: &rule.name,
                    trigger: resource,
                    pool,
                    synchronize: body.get("synchronize").and_then(|n| n.as_bool()) == Some(true),
                };
                match body.get("foreach") {
                    Some(list) => foreach::generate_foreach(&cx, list, &mut ctx, &mut out),
                    None => target::generate_pattern(&cx, body, &mut ctx, &mut out),
                }
                out
            }
        };
        let stops = how.stops(policy, std::iter::once(out.status));
        rules.push(out);
        if stops {
            break;
        }
    }
    Some(GeneratePolicyResponse {
        policy: index,
        rules,
    })
}

/// How generate rules go through the shared rule steps (crate::pipeline), as the Kyverno CLI
/// runs Kyverno's background check: PolicyExceptions first, before the rule's own match
/// (`skip`, the rule's exception lookup); a context that fails to load gives no response;
/// preconditions that do not hold skip without a message; `applyRules: One` stops after the
/// first rule that is not skipped.
fn generate_how<'f>(
    skip: &'f dyn Fn() -> Option<crate::report::RuleResponse>,
) -> pipeline::How<'f> {
    pipeline::How {
        rule_type: crate::report::RuleType::Generation,
        exceptions: pipeline::Exceptions::BeforeMatch(skip),
        context_error: pipeline::ContextError::Silent,
        preconditions: pipeline::Preconditions::Background,
        one_stops_at: pipeline::OneStopsAt::NotSkip,
    }
}

/// A GeneratingPolicy's response (crate::gpol) as one rule's: its objects, identified.
/// No namespace scope is checked: the Kyverno v1.19 CLI gives a NamespacedGeneratingPolicy
/// triggers of every namespace (what it generates stays in its own).
fn gpol_response(
    index: usize,
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<GeneratePolicyResponse> {
    let g = crate::gpol::generate(policy, resource, request, exceptions)?;
    let s = |v: &serde_json::Value, p: &str| {
        v.pointer(p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let generated = g
        .generated
        .into_iter()
        .map(|o| Generated {
            api_version: s(&o.resource, "/apiVersion"),
            kind: s(&o.resource, "/kind"),
            namespace: s(&o.resource, "/metadata/namespace"),
            name: s(&o.resource, "/metadata/name"),
            synchronize: g.synchronize,
            mode: o.mode,
            resource: o.resource,
        })
        .collect();
    Some(GeneratePolicyResponse {
        policy: index,
        rules: vec![RuleGeneration {
            rule: g.rule,
            status: g.status,
            message: g.message,
            generated,
            missing: Vec::new(),
            problems: Vec::new(),
        }],
    })
}

/// PolicyExceptions for generate rules (`pkg/engine/background.go` `filterRule`): checked
/// before the rule's own match, against the trigger, with `isCluster` set — the trigger's
/// Namespace is read from the cluster ([`SourcePool::namespaces`]) for its labels, and when it
/// is not there no exception applies. Returns the skip message when exceptions apply:
/// `rule is skipped due to policy exception <ns>/<name>, …`.
fn exception_skip(
    exceptions: &[PolicyException],
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
    pool: &SourcePool<'_>,
) -> Option<String> {
    if exceptions.is_empty() {
        return None;
    }
    let mut request = request.clone();
    if !resource.namespace.is_empty() {
        let ns = pool
            .namespaces
            .iter()
            .find(|n| n.kind == "Namespace" && n.name == resource.namespace)?;
        let labels: std::collections::BTreeMap<String, String> = ns
            .labels()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.to_owned(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        request
            .namespace_labels
            .insert(resource.namespace.clone(), labels);
    }
    let mut ctx = crate::variables::Context::for_resource(resource, &request);
    let mut holds = |c: &crate::yaml::Node| evaluate_block(c, &mut ctx).is_ok_and(|r| r.holds);
    let applied = crate::exception::matching(
        exceptions,
        &policy.key(),
        &rule.name,
        resource,
        &request,
        &mut holds,
    );
    if applied.is_empty() {
        return None;
    }
    let names: Vec<String> = applied.iter().map(|e| e.qualified_name()).collect();
    Some(format!(
        "{}{}",
        crate::exception::SKIP_PREFIX_PSS,
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests;
