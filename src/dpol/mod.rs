//! Kyverno's `DeletingPolicy` and `NamespacedDeletingPolicy` (policies.kyverno.io v1alpha1,
//! v1beta1, v1; cel.md §7, §11.1.7): compiled once ([`load`]) and evaluated offline on one
//! resource as the Kyverno v1.19 CLI does ([`evaluate`], `pkg/cel/policies/dpol`,
//! `cmd/cli/kubectl-kyverno/commands/test/test.go` `applyDeletingPolicies`).
//!
//! A DeletingPolicy is not admission-driven: Kyverno's cleanup controller lists the matching
//! resources on its `schedule` and deletes those whose `conditions` all hold. Offline there
//! is no clock and no cluster, so kpol answers the question the CLI answers: would this
//! resource be deleted? The schedule is checked for its shape only, never run.

pub mod evaluate;
pub mod load;
#[cfg(test)]
mod tests;

use crate::cel::Program;
use crate::vpol::constraints::Constraints;

pub use evaluate::evaluate;

/// A compiled DeletingPolicy / NamespacedDeletingPolicy.
#[derive(Debug)]
pub struct DeletingPolicy {
    /// `DeletingPolicy` or `NamespacedDeletingPolicy`, as CEL PolicyExceptions name it.
    pub kind: &'static str,
    pub name: String,
    /// `spec.matchConstraints` with every operation widened to `*` (the controller matches
    /// regardless of operation); `None` when absent: nothing matches.
    pub constraints: Option<Constraints>,
    pub variables: Vec<(String, Program)>,
    /// `spec.conditions`: all true → the resource would be deleted.
    pub conditions: Vec<(String, Program)>,
    /// Set when the policy cannot be evaluated (a compile error, an invalid field): every
    /// evaluation that matches is an error with this message.
    pub broken: Option<String>,
}

impl crate::policy::CelBody for DeletingPolicy {
    /// Deleting policies never fail a resource at admission.
    fn failure_action(&self) -> crate::report::FailureAction {
        crate::report::FailureAction::Audit
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled DeletingPolicy of `policy`; `None` for other kinds.
pub fn deleting_policy(policy: &crate::policy::Policy) -> Option<&DeletingPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}
