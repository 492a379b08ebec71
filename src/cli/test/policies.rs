//! The bridge to the policy loader: one policy file → policies to evaluate, invalid policies
//! (rows `Invalid Policy`, match.md §1.4) and policies of kinds kpol does not evaluate.

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
}

impl PolicySet {
    pub fn extend(&mut self, other: PolicySet) {
        self.policies.extend(other.policies);
        self.invalid.extend(other.invalid);
        self.unsupported.extend(other.unsupported);
        self.errors.extend(other.errors);
    }
}

/// Loads the policies of one parsed file.
pub fn load_file(source: &Source, docs: Vec<Document>) -> PolicySet {
    // Until the policy loader lands every policy is reported unsupported: no row can pass by
    // accident.
    let _ = source;
    let mut set = PolicySet::default();
    for d in docs {
        let kind = d.root.get("kind").and_then(Node::as_str).unwrap_or("");
        let name = d
            .root
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("");
        if !kind.is_empty() {
            set.unsupported.push((name.to_owned(), kind.to_owned()));
        }
    }
    set
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
