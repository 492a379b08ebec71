//! Kyverno's `GeneratingPolicy` and `NamespacedGeneratingPolicy` (policies.kyverno.io
//! v1alpha1, v1beta1, v1; cel.md §7, §11.2 items 4, 5, 7, 8), evaluated offline as the
//! Kyverno v1.19 CLI does (`kyverno/kyverno:pkg/cel/policies/gpol/{compiler,engine}`,
//! `cmd/cli/kubectl-kyverno/processor/policy_processor.go`): compiled once ([`load`]),
//! matched by `matchConstraints` (crate::vpol::constraints), then exceptions,
//! `matchConditions`, `variables` and each `generate[]` entry — an `expression` calling
//! `generator.Apply` (crate::cel::generator) or a [`template`] — evaluated for one trigger
//! ([`evaluate`]).
//!
//! The generate phase asks [`evaluate::generate`] (one call per policy and trigger) and turns
//! its [`Generation`](evaluate::Generation) into its own responses. What the cluster does afterwards —
//! `synchronize`, `orphanDownstreamOnPolicyDelete`, `generateExisting` — is lifecycle, not
//! evaluated offline.

pub mod evaluate;
pub mod load;
pub mod template;
#[cfg(test)]
mod tests;

pub use evaluate::generate;

use crate::cel::Program;
use crate::vpol::constraints::Constraints;

/// A compiled GeneratingPolicy / NamespacedGeneratingPolicy.
#[derive(Debug)]
pub struct GeneratingPolicy {
    pub name: String,
    /// `metadata.namespace` as written, for a NamespacedGeneratingPolicy: the namespace
    /// `generator.Apply([objects])` and templates generate into. `None` otherwise (and for a
    /// namespaced policy written without one, which Kyverno then compiles as cluster-wide).
    pub policy_namespace: Option<String>,
    /// `None`: no `matchConstraints`, which matches nothing (`gpol/engine` `matchPolicy`).
    pub constraints: Option<Constraints>,
    pub match_conditions: Vec<(String, Program)>,
    pub variables: Vec<(String, Program)>,
    pub generate: Vec<Entry>,
    /// `auditAnnotations`: `(key, valueExpression)`.
    pub audit_annotations: Vec<(String, Program)>,
    /// `evaluation.synchronize.enabled`, carried to the output (not evaluated offline).
    pub synchronize: bool,
    /// Why the policy cannot be evaluated (a compile error, a malformed field): every
    /// evaluation is an error with this message, never a pass.
    pub broken: Option<String>,
}

/// One `generate[]` entry.
#[derive(Debug)]
pub enum Entry {
    Expression(Program),
    Template(template::Template),
}

impl crate::policy::CelBody for GeneratingPolicy {
    /// Generation has no failure action; results are reported, never enforced.
    fn failure_action(&self) -> crate::report::FailureAction {
        crate::report::FailureAction::Audit
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled GeneratingPolicy of `policy`; `None` for other kinds.
pub fn generating_policy(policy: &crate::policy::Policy) -> Option<&GeneratingPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}
