//! Kubernetes' `MutatingAdmissionPolicy` with its `MutatingAdmissionPolicyBinding`s
//! (admissionregistration.k8s.io v1alpha1, v1beta1; cel.md §5, §6.3–6.4, §11.1.3, §11.1.6,
//! §11.2.1), compiled once ([`load`]) and applied offline as the Kyverno v1.19 CLI applies them
//! ([`evaluate`], `pkg/admissionpolicy/mutate.go`): always as a CREATE, through the bindings'
//! matchResources when the policy has bindings, ApplyConfiguration merged with the schema-less
//! (deduced) structured-merge-diff ([`crate::smd::apply_deduced`]: maps merge, lists are
//! replaced), JSONPatch as MutatingPolicies apply it.

pub mod evaluate;
pub mod load;
#[cfg(test)]
mod tests;

use crate::cel::Program;
use crate::mpol::Mutation;
use crate::vpol::constraints::Constraints;

pub use evaluate::mutate;

/// A compiled MutatingAdmissionPolicy.
#[derive(Debug)]
pub struct MutatingAdmissionPolicy {
    pub name: String,
    /// `spec.matchConstraints`; `None`: every resource (Kubernetes' matcher, cel.md §11.1.3).
    pub constraints: Option<Constraints>,
    pub variables: Vec<(String, Program)>,
    pub match_conditions: Vec<(String, Program)>,
    pub mutations: Vec<Mutation>,
    /// `failurePolicy: Ignore`: a match condition that fails to evaluate skips.
    pub ignore_failures: bool,
    /// The policy's bindings found with it, in file order.
    pub bindings: Vec<Binding>,
    /// Set when the policy does not compile: it mutates nothing (the CLI drops the response).
    pub broken: Option<String>,
}

/// A MutatingAdmissionPolicyBinding of the policy.
#[derive(Debug)]
pub struct Binding {
    /// `spec.matchResources`; `None`: every resource.
    pub match_resources: Option<Constraints>,
    /// `spec.paramRef`: where the binding's params come from (crate::vpol::params).
    pub param_ref: Option<crate::vpol::params::ParamRef>,
    /// The policy's `spec.paramKind`, read when the params come from the virtual cluster.
    pub param_kind: Option<crate::yaml::Node>,
}

impl crate::policy::CelBody for MutatingAdmissionPolicy {
    /// Mutations do not fail resources.
    fn failure_action(&self) -> crate::report::FailureAction {
        crate::report::FailureAction::Audit
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled MutatingAdmissionPolicy of `policy`; `None` for other kinds.
pub fn mutating_admission_policy(
    policy: &crate::policy::Policy,
) -> Option<&MutatingAdmissionPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}
