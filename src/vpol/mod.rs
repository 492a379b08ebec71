//! Kyverno's `ValidatingPolicy` (policies.kyverno.io, also `NamespacedValidatingPolicy`) and
//! Kubernetes' `ValidatingAdmissionPolicy` with its bindings, compiled once
//! ([`load`]), matched by `matchConstraints` ([`constraints`]), copied for pod controllers
//! ([`autogen`]) and evaluated with each kind's own result rules ([`evaluate`]); plus the
//! ClusterPolicy `validate.cel` rule body ([`cel_rule`]).
//!
//! These kinds enter the common policy model as a [`crate::policy::Policy`] whose body
//! ([`crate::policy::PolicyBody::Cel`]) is the compiled [`CelPolicy`]; the engine's validate
//! phase evaluates it.

pub mod authz;
pub mod authz_request;
pub mod autogen;
#[cfg(test)]
mod cel_params_tests;
pub mod cel_rule;
pub mod constraints;
pub mod evaluate;
pub mod explain;
pub mod load;
pub mod params;
#[cfg(test)]
mod tests;

use crate::cel::Program;
use constraints::Constraints;

/// Which CEL policy kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CelKind {
    ValidatingPolicy,
    NamespacedValidatingPolicy,
    ValidatingAdmissionPolicy,
}

/// A compiled ValidatingPolicy / ValidatingAdmissionPolicy.
#[derive(Debug)]
pub struct CelPolicy {
    pub kind: CelKind,
    pub name: String,
    /// The policy as written, then its autogen copies (cel.md §3.6).
    pub variants: Vec<Variant>,
    /// `failurePolicy: Ignore` (match-condition errors then mean "not matched").
    pub ignore_failures: bool,
    /// `evaluation.mode: JSON` (cel.md §3.5).
    pub json_mode: bool,
    /// `evaluation.mode: HTTP` / `Envoy`: the policy answers authorization requests only
    /// ([`authz`]), never resources or JSON payloads.
    pub authz: Option<authz::AuthzMode>,
    /// VAP bindings, in file order (cel.md §5); empty for ValidatingPolicies.
    pub bindings: Vec<Binding>,
    /// Set when the policy uses something kpol cannot evaluate offline (an evaluation mode, a
    /// compile error): every evaluation is an error with this message.
    pub broken: Option<String>,
    /// A ValidatingPolicy's first compile error (a CEL expression that does not compile):
    /// the Kyverno CLI compiles every such policy before it validates a resource, so in
    /// `kpol test` this stops the test ([`CelPolicy::compile_stop`]).
    pub compile_error: Option<String>,
    /// What a failing or erroring result does (`validationActions`, default `Deny`):
    /// Enforce, Warn or Audit. For a VAP each binding has its own ([`Binding::action`]).
    pub action: crate::report::FailureAction,
}

impl crate::policy::CelBody for CelPolicy {
    fn failure_action(&self) -> crate::report::FailureAction {
        self.action
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled CEL policy of a ValidatingPolicy / VAP; `None` for other kinds.
pub fn cel_policy(policy: &crate::policy::Policy) -> Option<&CelPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}

/// One set of constraints and expressions: the policy as written or an autogen copy.
#[derive(Debug)]
pub struct Variant {
    pub constraints: Option<Constraints>,
    pub match_conditions: Vec<(String, Program)>,
    pub variables: Vec<(String, Program)>,
    pub validations: Vec<Validation>,
    /// `(key, valueExpression)`, in file order.
    pub audit_annotations: Vec<(String, Program)>,
}

pub use crate::policy::CelValidation as Validation;

/// [`CelPolicy::kind_plan`]: what one apiVersion and kind gets from a CEL policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KindPlan {
    /// Evaluated per resource ([`evaluate::evaluate`]), matching only these variants (positions in
    /// [`CelPolicy::variants`], in order): the others cannot select the kind.
    Evaluate(Vec<usize>),
    /// An empty response for every resource in the policy's scope, without evaluating.
    Empty,
    /// No response at all.
    Dropped,
}

/// A ValidatingAdmissionPolicyBinding of the policy.
#[derive(Debug, Clone)]
pub struct Binding {
    pub match_resources: Option<Constraints>,
    /// `spec.paramRef`: where the binding's params come from (a malformed one makes the
    /// binding's evaluations errors).
    pub param_ref: Option<Result<params::ParamRef, String>>,
    /// The policy's `spec.paramKind` (`{apiVersion, kind}`), read when the params come from
    /// the virtual cluster.
    pub param_kind: Option<crate::yaml::Node>,
    /// The binding's `spec.validationActions` as one action (`Deny` → Enforce).
    pub action: crate::report::FailureAction,
}

impl CelPolicy {
    /// The rule name the Kyverno CLI reports for this kind (cel.md §1): empty for
    /// ValidatingPolicies, the policy name for VAPs.
    pub(crate) fn rule_name(&self) -> &str {
        match self.kind {
            CelKind::ValidatingAdmissionPolicy => &self.name,
            _ => "",
        }
    }

    /// What the validate phase does with this policy for resources of `api_version` and
    /// `kind`, decided once per kind from the constraints (perf: a policy that cannot select
    /// the kind is not matched per resource). Every answer gives the responses
    /// [`evaluate::evaluate`] would give: a ValidatingPolicy none of whose variants can select
    /// the kind responds as one that matched nothing (empty, or dropped when its
    /// constraints are simple, cel.md §3.7); a VAP whose constraints and bindings cannot select it, with
    /// an empty response.
    pub(crate) fn kind_plan(&self, api_version: &str, kind: &str) -> KindPlan {
        let can = |c: &Constraints| c.can_select(api_version, kind);
        match self.kind {
            _ if self.authz.is_some() => KindPlan::Dropped,
            // JSON mode evaluates every payload, without matching (cel.md §3.5).
            _ if self.json_mode => KindPlan::Evaluate((0..self.variants.len()).collect()),
            CelKind::ValidatingAdmissionPolicy => {
                let own = self
                    .variants
                    .first()
                    .is_none_or(|v| v.constraints.as_ref().is_none_or(can));
                let any = if self.bindings.is_empty() {
                    own
                } else {
                    self.bindings
                        .iter()
                        .any(|b| b.match_resources.as_ref().is_none_or(can))
                };
                if any {
                    KindPlan::Evaluate((0..self.variants.len()).collect())
                } else {
                    KindPlan::Empty
                }
            }
            _ => {
                let variants: Vec<usize> = self
                    .variants
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.constraints.as_ref().is_some_and(can))
                    .map(|(i, _)| i)
                    .collect();
                if !variants.is_empty() {
                    KindPlan::Evaluate(variants)
                } else if self.unmatched_dropped() {
                    KindPlan::Dropped
                } else {
                    KindPlan::Empty
                }
            }
        }
    }

    /// The words the Kyverno v1.19 CLI stops a test with when it is to validate `resource`
    /// (by name) and this ValidatingPolicy (Kubernetes or JSON mode) does not compile
    /// (`processor/policy_processor.go`: the provider compiles them all first); `None` for
    /// every other policy.
    pub fn compile_stop(&self, resource: &str) -> Option<String> {
        if self.kind == CelKind::ValidatingAdmissionPolicy || self.authz.is_some() {
            return None;
        }
        let e = self.compile_error.as_ref()?;
        Some(format!(
            "failed to apply policies on resource {resource} (failed to compile policy {} ({e}))",
            self.name
        ))
    }

    /// Whether a resource that no variant matched gets no response at all: the policy's own
    /// `matchConstraints` (the first variant's, before autogen) are what the Kyverno CLI's
    /// `hasSelector` calls simple ([`Constraints::simple`], cel.md §3.7). Otherwise the
    /// response is kept, empty.
    pub(crate) fn unmatched_dropped(&self) -> bool {
        self.variants
            .first()
            .and_then(|v| v.constraints.as_ref())
            .is_some_and(Constraints::simple)
    }
}
