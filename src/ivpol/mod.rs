//! Kyverno's `ImageValidatingPolicy` and `NamespacedImageValidatingPolicy` (policies.kyverno.io
//! v1alpha1, v1beta1, v1; cel.md §7, §11.1.8): compiled once with their autogen copies
//! ([`load`]) and evaluated offline as the Kyverno v1.19 CLI does ([`evaluate`],
//! `pkg/cel/policies/ivpol`, `pkg/image/verification/evaluator/policy.go`).
//!
//! Image verification needs registry data: before any validation runs Kyverno fetches the
//! manifest of every image that `matchImageReferences` selects. Offline that fetch cannot
//! happen, so kpol decides only what Kyverno decides before it — the match, the match
//! conditions, the exceptions, and the digest check — and gives every other matched image an
//! `error` naming what could not be fetched. Never a pass for what needs a registry.

pub mod evaluate;
pub mod load;
#[cfg(test)]
mod payload_tests;
#[cfg(test)]
mod tests;

use crate::base::glob::Glob;
use crate::cel::Program;
use crate::policy::CelValidation;
use crate::vpol::constraints::Constraints;

pub use evaluate::{evaluate, evaluate_payload};

/// A compiled ImageValidatingPolicy / NamespacedImageValidatingPolicy.
#[derive(Debug)]
pub struct ImageValidatingPolicy {
    /// `ImageValidatingPolicy` or `NamespacedImageValidatingPolicy`, as CEL PolicyExceptions
    /// name it.
    pub kind: &'static str,
    pub name: String,
    /// The policy as written, then its autogen copies (cel.md §3.6), which share its name:
    /// the last one that matches a resource gives the response.
    pub variants: Vec<Variant>,
    /// `failurePolicy: Ignore`: a match condition that cannot be evaluated means no match.
    pub ignore_failures: bool,
    /// `validationConfigurations.verifyDigest` (default true): an image without a digest fails.
    pub verify_digest: bool,
    /// `evaluation.mode: JSON`: the policy sees JSON payloads only, never resources
    /// (`evaluator/eval.go` `filterPolicies`).
    pub json_mode: bool,
    /// `spec.validationActions` (default `[Deny]`).
    pub action: crate::report::FailureAction,
    /// Set when the policy does not compile: every matching evaluation is an error.
    pub broken: Option<String>,
}

impl crate::policy::CelBody for ImageValidatingPolicy {
    fn failure_action(&self) -> crate::report::FailureAction {
        self.action
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The compiled ImageValidatingPolicy of `policy`; `None` for other kinds.
pub fn image_validating_policy(policy: &crate::policy::Policy) -> Option<&ImageValidatingPolicy> {
    match &policy.body {
        crate::policy::PolicyBody::Cel(body) => body.as_any().downcast_ref(),
        crate::policy::PolicyBody::Rules(_) => None,
    }
}

/// The policy as written or one autogen copy.
#[derive(Debug)]
pub struct Variant {
    pub constraints: Option<Constraints>,
    pub match_conditions: Vec<(String, Program)>,
    pub variables: Vec<(String, Program)>,
    /// `spec.images`: extractors `images.<name>` beside the built-in ones.
    pub images: Vec<(String, Program)>,
    /// `spec.matchImageReferences`; empty: every image.
    pub match_images: Vec<ImageMatch>,
    pub validations: Vec<CelValidation>,
    pub audit_annotations: Vec<(String, Program)>,
    /// `spec.attestors` by name, as written (bound as `attestors.<name>`).
    pub attestors: Vec<(String, crate::yaml::Node)>,
    /// `spec.attestations` names (bound as `attestations.<name>` = the name).
    pub attestations: Vec<String>,
    /// Only the policy as written sees PolicyExceptions (autogen copies get none upstream).
    pub exceptions_apply: bool,
}

/// One `matchImageReferences` entry.
#[derive(Debug)]
pub enum ImageMatch {
    Glob(Glob),
    /// A CEL expression over `ref`, the image reference.
    Expression(Program),
}
