//! What the unit tests of the policy kinds build their inputs with: policies, resources and
//! PolicyExceptions read from text, and CEL expressions parsed. Test code only (`#[cfg(test)]`
//! in `lib.rs`), so it may reach any layer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crate::exception::PolicyException;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::policy::LoadedPolicies;
use crate::resource::Resource;
use crate::source::{SourceFile, Span};
use crate::yaml::{Limits, parse_documents};
use ::cel::IdedExpr;

/// The policies of `text` (the file `p.yaml`), through the kinds' loader table.
pub(crate) fn load(text: &str) -> LoadedPolicies {
    let source = Arc::new(SourceFile::new("p.yaml", text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    load_policies(&source, docs)
}

/// The first resource of `text` (the file `r.yaml`).
pub(crate) fn resource(text: &str) -> Resource {
    let source = Arc::new(SourceFile::new("r.yaml", text));
    read_manifests(&source, Limits::default())
        .resources
        .remove(0)
}

/// The PolicyExceptions of `text` (the file `e.yaml`), whatever their diagnostics.
pub(crate) fn exceptions_unchecked(text: &str) -> Vec<PolicyException> {
    let source = SourceFile::new("e.yaml", text);
    let docs = parse_documents(text, Limits::default()).unwrap();
    crate::exception::load_documents(&source, docs.iter().map(|d| &d.root), true).exceptions
}

/// The PolicyExceptions of `text` (the file `e.yaml`), which must load without a diagnostic.
pub(crate) fn exceptions(text: &str) -> Vec<PolicyException> {
    let source = SourceFile::new("e.yaml", text);
    let docs = parse_documents(text, Limits::default()).unwrap();
    let l = crate::exception::load_documents(&source, docs.iter().map(|d| &d.root), true);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    l.exceptions
}

/// The CEL expression `text`, parsed.
pub(crate) fn parse_cel(text: &str) -> IdedExpr {
    crate::cel::compile::compile(text, Span::EMPTY)
        .0
        .expr
        .unwrap()
}
