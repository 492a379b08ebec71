//! The (group, version, kind) → loader table of the policy kinds whose bodies live above
//! `policy` (docs/ARCHITECTURE.md), and the policy loader that uses it.

use crate::policy::{KindLoader, Kinds, LoadedPolicies, RuleCompiler};
use crate::source::Source;
use crate::yaml::Document;

/// The kinds loaded by a module of the kinds layer; ClusterPolicy / Policy and
/// PolicyException are read by `policy` itself.
pub const LOADERS: &[KindLoader] = &[
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "ValidatingPolicy",
        load: crate::vpol::load::validating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "NamespacedValidatingPolicy",
        load: crate::vpol::load::validating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "MutatingPolicy",
        load: crate::mpol::load::mutating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "NamespacedMutatingPolicy",
        load: crate::mpol::load::mutating_policy,
    },
    KindLoader {
        group: "admissionregistration.k8s.io",
        version: Some("v1"),
        kind: "ValidatingAdmissionPolicy",
        load: crate::vpol::load::admission_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "GeneratingPolicy",
        load: crate::gpol::load::generating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "NamespacedGeneratingPolicy",
        load: crate::gpol::load::generating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "DeletingPolicy",
        load: crate::dpol::load::deleting_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "NamespacedDeletingPolicy",
        load: crate::dpol::load::deleting_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "ImageValidatingPolicy",
        load: crate::ivpol::load::image_validating_policy,
    },
    KindLoader {
        group: "policies.kyverno.io",
        version: None,
        kind: "NamespacedImageValidatingPolicy",
        load: crate::ivpol::load::image_validating_policy,
    },
    KindLoader {
        group: "admissionregistration.k8s.io",
        version: Some("v1alpha1"),
        kind: "MutatingAdmissionPolicy",
        load: crate::mapol::load::mutating_admission_policy,
    },
    KindLoader {
        group: "admissionregistration.k8s.io",
        version: Some("v1beta1"),
        kind: "MutatingAdmissionPolicy",
        load: crate::mapol::load::mutating_admission_policy,
    },
];

/// The evaluator side of building ClusterPolicy / Policy rules: how a validate check is
/// compiled, autogen, and the policy checks that read a rule body with an evaluator's grammar.
pub const RULES: RuleCompiler = RuleCompiler {
    check: crate::validate::compile,
    autogen: crate::autogen::compute,
    autogen_for_kind: crate::autogen::compute_rules,
    pod_security_error: crate::pss::policy_error,
    unsupported_anchor: crate::pattern::unsupported_in_validate,
};

/// What the policy loader is handed: [`LOADERS`] and [`RULES`].
pub const KINDS: Kinds = Kinds {
    loaders: LOADERS,
    rules: RULES,
};

/// Loads the policy documents of one file, every kind kpol evaluates included.
pub fn load_policies(source: &Source, docs: Vec<Document>) -> LoadedPolicies {
    crate::policy::load_policies_with(source, docs, &KINDS)
}

/// [`load_policies`], with the VAP and MAP bindings of the run's other policy files
/// (`crate::policy::admission_bindings`).
pub fn load_policies_bound(
    source: &Source,
    docs: Vec<Document>,
    other_bindings: &[crate::yaml::Node],
) -> LoadedPolicies {
    crate::policy::load_policies_bound(source, docs, &KINDS, other_bindings)
}
