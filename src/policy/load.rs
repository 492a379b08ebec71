//! Placeholder until the policy loader lands (branch `policy`).

use super::Policy;
use crate::diagnostic::{Diagnostic, Location};
use crate::source::Source;
use crate::yaml::{Document, Node};

pub struct LoadedPolicies {
    pub policies: Vec<Policy>,
    pub invalid: Vec<InvalidPolicy>,
    pub unsupported: Vec<UnsupportedPolicy>,
    pub exceptions: Vec<Node>,
    pub diagnostics: Vec<Diagnostic>,
}

pub struct InvalidPolicy {
    pub name: String,
    pub namespace: Option<String>,
    pub kind: String,
    pub reason: String,
    pub location: Option<Location>,
}

pub struct UnsupportedPolicy {
    pub name: String,
    pub namespace: Option<String>,
    pub kind: String,
}

pub fn load_policies(source: &Source, docs: Vec<Document>) -> LoadedPolicies {
    let _ = (source, docs);
    LoadedPolicies {
        policies: Vec::new(),
        invalid: Vec::new(),
        unsupported: Vec::new(),
        exceptions: Vec::new(),
        diagnostics: Vec::new(),
    }
}
