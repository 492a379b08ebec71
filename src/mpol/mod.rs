//! Kyverno's `MutatingPolicy` and `NamespacedMutatingPolicy` (policies.kyverno.io v1alpha1,
//! v1beta1, v1; cel.md §6): compiled once ([`load`]), copied for pod controllers
//! ([`autogen`]), and evaluated offline as the Kyverno v1.19 CLI does ([`evaluate`]) —
//! matchConstraints, variables, matchConditions, CEL PolicyExceptions, then each mutation in
//! order, JSONPatch ([`crate::mutate::json_patch`]) or ApplyConfiguration ([`apply`]).
//!
//! The entry point for a phase is [`evaluate::mutate`]: one policy on one resource → its
//! response and the patched resource.

pub mod apply;
pub mod autogen;
pub mod evaluate;
pub mod load;
#[cfg(test)]
mod tests;

use crate::cel::Program;
use crate::vpol::constraints::Constraints;

pub use evaluate::mutate;

/// A compiled MutatingPolicy / NamespacedMutatingPolicy.
#[derive(Debug)]
pub struct MutatingPolicy {
    /// `MutatingPolicy` or `NamespacedMutatingPolicy`, as CEL PolicyExceptions name it.
    pub kind: &'static str,
    pub name: String,
    /// The policy as written, then its autogen copies (cel.md §6.5), each evaluated as a
    /// policy of its own, in this order.
    pub variants: Vec<Variant>,
    /// `failurePolicy: Ignore` (exception match-condition errors then mean "not matched").
    pub ignore_failures: bool,
    /// `evaluation.useServerSideApply`: ApplyConfigurations may replace atomic lists, maps and
    /// structs (crate::smd::Options).
    pub server_side_apply: bool,
    /// Set when the policy cannot be evaluated (a compile error, an invalid field): every
    /// evaluation that matches is an error with this message.
    pub broken: Option<String>,
    /// `evaluation.mutateExisting.enabled: true`: how the policy selects existing targets.
    pub existing: Option<Existing>,
}

/// The target selection of a mutate-existing MutatingPolicy.
#[derive(Debug)]
pub struct Existing {
    /// `targetMatchConstraints` with `resourceRules`, else `matchConstraints`, every
    /// operation allowed (the background controller ignores operations).
    pub constraints: Option<Constraints>,
    /// `targetMatchConstraints.expression`: evaluated on the trigger, it names the targets.
    pub expression: Option<Program>,
    /// `targetMatchConditions`, evaluated on each target.
    pub match_conditions: Vec<(String, Program)>,
}

/// Whether `policy` is a MutatingPolicy with `evaluation.mutateExisting.enabled`.
pub fn mutates_existing(policy: &crate::policy::Policy) -> bool {
    mutating_policy(policy).is_some_and(|b| b.existing.is_some())
}

pub use evaluate::selects_target;

impl crate::policy::CelBody for MutatingPolicy {
    /// Mutating policies do not fail resources; the envelope asks for validation only.
    fn failure_action(&self) -> crate::report::FailureAction {
        crate::report::FailureAction::Audit
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled MutatingPolicy of `policy`; `None` for other kinds.
pub fn mutating_policy(policy: &crate::policy::Policy) -> Option<&MutatingPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}

/// The policy as written or one autogen copy.
#[derive(Debug)]
pub struct Variant {
    pub constraints: Option<Constraints>,
    pub variables: Vec<(String, Program)>,
    pub match_conditions: Vec<(String, Program)>,
    pub mutations: Vec<Mutation>,
}

/// One entry of `spec.mutations`.
#[derive(Debug)]
pub enum Mutation {
    /// `patchType: ApplyConfiguration`: an expression producing an `Object{…}`.
    ApplyConfiguration(Program),
    /// `patchType: JSONPatch`: an expression producing a list of `JSONPatch{…}`.
    JsonPatch(Program),
}
