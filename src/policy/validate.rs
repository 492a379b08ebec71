//! Kyverno's policy validation in mock mode (match.md §1.4,
//! `kyverno/kyverno:pkg/validation/policy/validate.go`, `api/kyverno/v1/*_types.go`).
//! A policy that fails is not evaluated.

use std::collections::BTreeMap;

use super::model::{PolicyKind, Rule};
use crate::source::Span;
use crate::yaml::{Map, Node};

/// Why a policy is invalid, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    pub reason: String,
    pub span: Span,
}

impl Invalid {
    pub fn new(reason: impl Into<String>, span: Span) -> Self {
        Self {
            reason: reason.into(),
            span,
        }
    }
}

/// What the checks need to know about the policy document.
#[allow(dead_code)] // filled in by the next commit
pub struct PolicyCtx<'a> {
    pub kind: PolicyKind,
    pub name: &'a str,
    /// `metadata.namespace` as written.
    pub namespace: Option<&'a str>,
    pub annotations: &'a BTreeMap<String, String>,
    pub node: &'a Node,
    pub spec: &'a Map,
    pub rule_nodes: &'a [Node],
    pub background: bool,
    pub admission: bool,
}

/// Checks on the document, before rules are compiled.
pub fn check_document(ctx: &PolicyCtx) -> Result<(), Invalid> {
    let _ = ctx;
    Ok(())
}

/// Checks on the compiled rules and on the autogen-expanded rule list.
pub fn check_rules(ctx: &PolicyCtx, rules: &[Rule], computed: &[Rule]) -> Result<(), Invalid> {
    let _ = (ctx, rules, computed);
    Ok(())
}
