//! Kyverno PolicyExceptions (`kyverno.io/v2`, `kyverno.io/v2beta1`) for classic policies,
//! following `/work/shared/spec/exceptions.md`.
//!
//! An exception names rules (`policyName` exactly, `ruleNames` with wildcards, computed autogen
//! names included), resources (`match.any` / `match.all`) and, optionally, `conditions`. The
//! engine asks [`response`] about a rule that matched a resource and passed its
//! preconditions; when an exception applies, the rule is not evaluated and gives `skip` with
//! [`skip_message`] — for podSecurity rules, exceptions with `podSecurity` entries are
//! exclusions added to the rule's own (exceptions.md §6.3, in [`pss`]).
//!
//! `policies.kyverno.io` PolicyExceptions, for CEL policies, load through the same files and
//! flags into the same list ([`PolicyException::cel`], in [`cel`]). Both kinds of policy ask
//! [`apply`]: classic rules through [`response`], CEL policies from their evaluation; an
//! exception of one family never applies to a policy of the other.

pub mod cel;
mod load;
mod pss;
mod step;

use std::sync::Arc;

pub use load::{Loaded, load_documents};
pub(crate) use step::{CelRefs, Decided, cel_step};

use crate::base::wildcard;
use crate::cel::Program;
use crate::matching::ResourceFilter;
use crate::policy::{Policy, Rule, RuleBody, ValidateCheck};
use crate::report::{RuleResponse, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::yaml::Node;

/// One loaded PolicyException.
#[derive(Clone, Debug)]
pub struct PolicyException {
    pub name: String,
    /// `metadata.namespace`, `default` when absent.
    pub namespace: String,
    /// `spec.exceptions`: `(policyName, ruleNames)`.
    pub entries: Vec<(String, Vec<String>)>,
    /// Where each entry's `policyName` is written, parallel to `entries`.
    pub entry_locations: Vec<crate::diagnostic::Location>,
    any: Vec<Filter>,
    all: Vec<Filter>,
    /// `spec.conditions`, as written.
    pub conditions: Option<Node>,
    /// `spec.podSecurity` entries (exceptions.md §6.3), as written.
    pub pod_security: Vec<Node>,
    /// Set for a `policies.kyverno.io` exception (then `entries`, `match` and `conditions` are
    /// empty: it never applies to a classic rule).
    pub cel: Option<Arc<cel::CelException>>,
}

/// A compiled `match` filter; `empty` is decided before `operations` are dropped.
#[derive(Clone, Debug)]
struct Filter {
    filter: ResourceFilter,
    empty: bool,
}

impl PolicyException {
    /// `<namespace>/<name>`, as Kyverno's messages write it.
    pub fn qualified_name(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether an entry names this policy (exact key) and the rule (wildcards), exceptions.md §3.
    pub fn covers(&self, policy_key: &str, rule: &str) -> bool {
        self.entries
            .iter()
            .any(|(p, rules)| p == policy_key && rules.iter().any(|r| wildcard::matches(r, rule)))
    }

    /// Whether `spec.match` selects the resource (exceptions.md §4): `any` if given, else
    /// `all`; neither never matches; `operations` are ignored; user filters are kept.
    pub fn matches(&self, resource: &Resource, request: &Request) -> bool {
        let one = |f: &Filter| -> bool {
            if f.empty {
                return false;
            }
            if resource.kind == "Namespace" && f.filter.resources.namespace_selector.is_some() {
                let mut plain = f.filter.clone();
                plain.resources.namespace_selector = None;
                return plain.matches(resource, request, &plain.user);
            }
            f.filter.matches(resource, request, &f.filter.user)
        };
        if !self.any.is_empty() {
            self.any.iter().any(one)
        } else if !self.all.is_empty() {
            self.all.iter().all(one)
        } else {
            false
        }
    }
}

/// The exceptions that apply to `(policy_key, rule)` for this resource, in load order.
/// `conditions_hold` evaluates an exception's `conditions` in the rule's context; an
/// exception whose conditions do not hold, or cannot be evaluated, does not apply (§5).
pub fn matching<'a>(
    exceptions: &'a [PolicyException],
    policy_key: &str,
    rule: &str,
    resource: &Resource,
    request: &Request,
    conditions_hold: &mut dyn FnMut(&Node) -> bool,
) -> Vec<&'a PolicyException> {
    exceptions
        .iter()
        .filter(|e| e.covers(policy_key, rule))
        .filter(|e| e.matches(resource, request))
        .filter(|e| e.conditions.as_ref().is_none_or(&mut *conditions_hold))
        .collect()
}

/// What an exception is asked about, with how its conditions are evaluated in that context.
pub enum Subject<'a> {
    /// A classic rule that matched the resource and passed its preconditions; `conditions_hold`
    /// evaluates an exception's `conditions` in the rule's context.
    Rule {
        policy: &'a Policy,
        rule: &'a Rule,
        conditions_hold: &'a mut dyn FnMut(&Node) -> bool,
    },
    /// A CEL policy (`kind` as written, e.g. `ValidatingPolicy`) whose constraints matched;
    /// `eval` evaluates one match condition with the policy's variables bound.
    Cel {
        kind: &'a str,
        name: &'a str,
        /// The policy's `failurePolicy: Ignore`.
        ignore_failures: bool,
        eval: &'a mut dyn FnMut(&Program) -> Result<bool, String>,
    },
}

/// What the exceptions decide for one subject and resource.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// None applies fully: evaluate as usual, with the values partial CEL exceptions allow
    /// (`exceptions.allowedImages` / `exceptions.allowedValues`; always empty for rules).
    Evaluate {
        allowed_images: Vec<String>,
        allowed_values: Vec<String>,
    },
    /// The subject's response.
    Respond(RuleResponse),
    /// A CEL exception's match condition could not be evaluated: the policy's error.
    Error(String),
}

impl Outcome {
    fn evaluate() -> Self {
        Outcome::Evaluate {
            allowed_images: Vec::new(),
            allowed_values: Vec::new(),
        }
    }
}

/// The one entry point: what `exceptions` (both families, in load order) decide for `subject`
/// on this resource (exceptions.md §6 for rules, cel.md §3.3 for CEL policies).
pub fn apply(
    exceptions: &[PolicyException],
    subject: Subject<'_>,
    resource: &Resource,
    request: &Request,
) -> Outcome {
    if exceptions.is_empty() {
        return Outcome::evaluate();
    }
    match subject {
        Subject::Rule {
            policy,
            rule,
            conditions_hold,
        } => {
            let applied = matching(
                exceptions,
                &policy.key(),
                &rule.name,
                resource,
                request,
                conditions_hold,
            );
            if applied.is_empty() {
                return Outcome::evaluate();
            }
            if let RuleBody::Validate(v) = &rule.body
                && let ValidateCheck::PodSecurity(body) = &v.check
            {
                return pss::response(&rule.name, body, resource, &applied)
                    .map_or_else(Outcome::evaluate, Outcome::Respond);
            }
            Outcome::Respond(skipped(&rule.name, skip_message(&applied), &applied))
        }
        Subject::Cel {
            kind,
            name,
            ignore_failures,
            eval,
        } => {
            let applicable: Vec<&cel::CelException> = exceptions
                .iter()
                .filter_map(|e| e.cel.as_deref())
                .filter(|c| c.refers_to(kind, name))
                .collect();
            if applicable.is_empty() {
                return Outcome::evaluate();
            }
            cel::decide(&applicable, ignore_failures, eval)
        }
    }
}

/// What every `policies.kyverno.io` exception decides, whatever its `policyRefs`: the Kyverno
/// CLI compiles all of a run's CEL exceptions into each GeneratingPolicy (cel.md §11.2.5,
/// `processor/policy_processor.go`). A match condition that fails to evaluate is the outcome.
pub(crate) fn apply_every_cel(
    exceptions: &[PolicyException],
    eval: &mut dyn FnMut(&Program) -> Result<bool, String>,
) -> Outcome {
    let every: Vec<&cel::CelException> =
        exceptions.iter().filter_map(|e| e.cel.as_deref()).collect();
    if every.is_empty() {
        return Outcome::evaluate();
    }
    cel::decide(&every, false, eval)
}

/// The response exceptions give a rule, or `None` when none applies and the rule is
/// evaluated as usual (exceptions.md §6): [`apply`] for a [`Subject::Rule`].
pub fn response(
    exceptions: &[PolicyException],
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
    conditions_hold: &mut dyn FnMut(&Node) -> bool,
) -> Option<RuleResponse> {
    let subject = Subject::Rule {
        policy,
        rule,
        conditions_hold,
    };
    match apply(exceptions, subject, resource, request) {
        Outcome::Respond(r) => Some(r),
        Outcome::Evaluate { .. } | Outcome::Error(_) => None,
    }
}

/// A skip by `applied`, whose names the response records (reports list them).
fn skipped(rule: &str, message: String, applied: &[&PolicyException]) -> RuleResponse {
    let mut r = RuleResponse::new(rule, Status::Skip, message);
    r.exceptions = applied.iter().map(|e| e.name.clone()).collect();
    r
}

/// The prefix of Kyverno's skip message (no space before the first name, as upstream).
pub(crate) const SKIP_PREFIX: &str = "rule is skipped due to policy exceptions";
/// The prefix for a podSecurity rule skipped by an exception without `podSecurity`.
pub(crate) const SKIP_PREFIX_PSS: &str = "rule is skipped due to policy exception ";

/// `rule is skipped due to policy exceptions<ns>/<name>[, <ns>/<name>...]` (exceptions.md §6.1).
pub(crate) fn skip_message(applied: &[&PolicyException]) -> String {
    let names: Vec<String> = applied.iter().map(|e| e.qualified_name()).collect();
    format!("{SKIP_PREFIX}{}", names.join(", "))
}

#[cfg(test)]
mod tests;
