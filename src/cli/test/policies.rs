//! The bridge to the policy loader: one policy file → policies to evaluate, invalid policies
//! (rows `Invalid Policy`, match.md §1.4) and policies of kinds kpol does not evaluate.

use kpol::diagnostic::Code;
use kpol::load_policies_bound;
use kpol::policy::Policy;
use kpol::source::Source;
use kpol::yaml::{Document, Node};

/// What one policy file contributed.
#[derive(Default)]
pub struct PolicySet {
    pub policies: Vec<Policy>,
    /// Name and validation error of each policy that is not evaluated.
    pub invalid: Vec<(String, String)>,
    /// Name and kind of each policy kpol cannot evaluate (CEL kinds...).
    pub unsupported: Vec<(String, String)>,
    /// Non-fatal per-document problems (printed as `ERROR: <file>: <error>`).
    pub errors: Vec<String>,
    /// The first field that the policy kind's CRD schema refuses (position, message): Kyverno's
    /// strict decoding refuses the whole file, so the test cannot run.
    pub refused: Option<(String, String)>,
}

impl PolicySet {
    pub fn extend(&mut self, other: PolicySet) {
        self.policies.extend(other.policies);
        self.invalid.extend(other.invalid);
        self.unsupported.extend(other.unsupported);
        self.errors.extend(other.errors);
        self.refused = self.refused.take().or(other.refused);
    }
}

/// Loads the policies of one parsed file, with the VAP/MAP bindings of the test's other
/// policy files.
pub fn load_file(source: &Source, docs: Vec<Document>, other_bindings: &[Node]) -> PolicySet {
    let loaded = load_policies_bound(source, docs, other_bindings);
    let refused = loaded
        .diagnostics
        .iter()
        .find(|d| d.code == Code::Schema && d.severity == kpol::diagnostic::Severity::Error)
        .map(|d| (d.position(), d.message.clone()));
    PolicySet {
        refused,
        policies: loaded.policies,
        invalid: loaded
            .invalid
            .into_iter()
            .map(|p| (p.name, p.reason))
            .collect(),
        unsupported: loaded
            .unsupported
            .into_iter()
            .map(|p| (p.name, p.kind))
            .collect(),
        // Invalid and unsupported policies become rows; other problems are printed.
        errors: loaded
            .diagnostics
            .into_iter()
            .filter(|d| !matches!(d.code, Code::InvalidPolicy | Code::UnsupportedPolicy))
            .map(|d| format!("{}: {}", d.position(), d.message))
            .collect(),
    }
}

/// How a policy kind kpol does not evaluate is named in an `unsupported:` reason.
pub fn unsupported_feature(kind: &str) -> String {
    const CEL: &[&str] = &[
        "ValidatingPolicy",
        "NamespacedValidatingPolicy",
        "ImageValidatingPolicy",
        "NamespacedImageValidatingPolicy",
        "MutatingPolicy",
        "NamespacedMutatingPolicy",
        "GeneratingPolicy",
        "NamespacedGeneratingPolicy",
        "DeletingPolicy",
        "NamespacedDeletingPolicy",
        "ValidatingAdmissionPolicy",
        "MutatingAdmissionPolicy",
    ];
    if CEL.contains(&kind) {
        format!("cel ({kind})")
    } else {
        format!("policy kind {kind}")
    }
}
