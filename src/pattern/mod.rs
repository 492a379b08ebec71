//! Kyverno's validate pattern language (validate.md §3–7, §14): `validate.pattern` and
//! `validate.anyPattern` evaluated against one resource.
//!
//! The walk lives in [`walk`]; this file runs it (`MatchPattern` in
//! `kyverno/kyverno:pkg/engine/validate/validate.go`), classifies its outcome (§3.1) and turns
//! it into a rule status and message (`validatePatterns` in
//! `pkg/engine/handlers/validation/validate_resource.go`).

mod anchor;
mod messages;
mod path;
mod plan;
mod reference;
mod scalar;
mod walk;
mod wildcards;

#[cfg(test)]
mod cases_tests;

use std::borrow::Cow;

use crate::report::Status;
use crate::yaml::{Node, Value};

pub(crate) use anchor::{AnchorKind, parse_anchor, unsupported_in_validate};
pub(crate) use reference::{has_references, substitute_references};
// Pieces the condition operators (validate.md §8) reuse; not all are used here yet.
#[allow(unused_imports)]
pub(crate) use scalar::{Op, go_parse_float, operator_of, scalar_match, wildcard_match};

pub(crate) use plan::Plan;

use path::{PathNode, render_segments};
use walk::Walker;

/// The outcome of a pattern or anyPattern rule.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternVerdict {
    pub status: Status,
    /// Kyverno's message for this result (validate.md §14).
    pub message: String,
    /// The failing path, split into segments, when the status is Fail.
    pub path: Option<Vec<String>>,
}

/// The classified result of one pattern walk (§3.1), before messages are built.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    Pass,
    /// Skip with the skip error text.
    Skip(String),
    /// Fail at a path (segments); `error` is the walk's error text.
    Fail {
        path: Vec<String>,
        error: String,
    },
    /// Error (a failure with no path, or with a never-seen condition/existence anchor key).
    Error(String),
}

/// `MatchPattern`: walks `pattern` (with its plan, when it was planned) over `resource` and
/// classifies the result.
pub(crate) fn match_pattern(resource: &Value, pattern: &Value, plan: Option<&Plan>) -> Outcome {
    if plan.is_some() && walk::surely_passes(resource, pattern, plan) {
        debug_assert!(
            Walker::default()
                .element(resource, pattern, plan, &PathNode::root())
                .is_ok(),
            "surely_passes said Ok where the walk fails"
        );
        return Outcome::Pass;
    }
    let mut walker = Walker::default();
    let Err(failure) = walker.element(resource, pattern, plan, &PathNode::root()) else {
        return Outcome::Pass;
    };
    if failure.is_skip() {
        return Outcome::Skip(failure.message);
    }
    // A negation hit fails even when some anchor key was never seen; otherwise a recorded
    // conditional/existence key that no resource map had turns the failure into an error.
    if !failure.is_negation() && walker.registry.keys_are_missing() {
        return Outcome::Error(failure.message);
    }
    match failure.path {
        Some(path) => Outcome::Fail {
            path,
            error: failure.message,
        },
        None => Outcome::Error(failure.message),
    }
}

/// Evaluates `validate.pattern`.
pub fn validate_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    pattern: &Node,
) -> PatternVerdict {
    let references = has_references(&pattern.value);
    let plan = Plan::of(&pattern.value);
    check_pattern(
        rule_name,
        rule_message,
        resource,
        pattern,
        references,
        Some(&plan),
    )
}

/// [`validate_pattern`] when whether `pattern` may hold `$(…)` references ([`has_references`])
/// is already known, and maybe its plan (a rule's pattern is scanned and planned once, at
/// load).
pub(crate) fn check_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    pattern: &Node,
    references: bool,
    plan: Option<&Plan>,
) -> PatternVerdict {
    let substituted = if references {
        substitute_references(&pattern.value)
    } else {
        Ok(None)
    };
    // A substituted pattern is planned as the walk goes.
    let (pattern, plan): (Cow<'_, Value>, _) = match substituted {
        Ok(None) => (Cow::Borrowed(&pattern.value), plan),
        Ok(Some(v)) => (Cow::Owned(v), None),
        Err(e) => return verdict(Status::Error, messages::substitution_failed(&e), None),
    };
    match match_pattern(&resource.value, &pattern, plan) {
        Outcome::Pass => verdict(Status::Pass, messages::pass(rule_name), None),
        Outcome::Skip(msg) => verdict(Status::Skip, msg, None),
        Outcome::Fail { path, .. } => {
            let msg = messages::fail_at(rule_name, rule_message, &render_segments(&path));
            verdict(Status::Fail, msg, Some(path))
        }
        Outcome::Error(err) => verdict(
            Status::Error,
            messages::execution_error(rule_name, rule_message, &err),
            None,
        ),
    }
}

/// Evaluates `validate.anyPattern` (§7). The reported path is the first failing
/// alternative's.
pub fn validate_any_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    patterns: &[Node],
) -> PatternVerdict {
    let references = patterns.iter().any(|p| has_references(&p.value));
    let plans: Vec<Plan> = patterns.iter().map(|p| Plan::of(&p.value)).collect();
    check_any_pattern(
        rule_name,
        rule_message,
        resource,
        patterns,
        references,
        Some(&plans),
    )
}

/// [`validate_any_pattern`] when whether `patterns` may hold references is already known,
/// and maybe their plans.
pub(crate) fn check_any_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    patterns: &[Node],
    references: bool,
    plans: Option<&[Plan]>,
) -> PatternVerdict {
    // All alternatives are substituted first, as one document (the list).
    let substituted: Option<Vec<Node>> = if references {
        match substitute_references(&Value::Seq(patterns.to_vec())) {
            Ok(Some(Value::Seq(items))) => Some(items),
            Ok(_) => None,
            Err(e) => return verdict(Status::Error, messages::substitution_failed(&e), None),
        }
    } else {
        None
    };
    let plans = if substituted.is_some() { None } else { plans };
    let patterns: &[Node] = substituted.as_deref().unwrap_or(patterns);

    let mut failed: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut first_path: Option<Vec<String>> = None;
    for (i, p) in patterns.iter().enumerate() {
        let plan = plans.and_then(|ps| ps.get(i));
        match match_pattern(&resource.value, &p.value, plan) {
            Outcome::Pass => {
                return verdict(Status::Pass, messages::any_pattern_pass(rule_name, i), None);
            }
            Outcome::Skip(err) => skipped.push(format!("rule {rule_name}[{i}] skipped: {err}")),
            Outcome::Fail { path, .. } => {
                failed.push(format!(
                    "rule {rule_name}[{i}] failed at path {}",
                    render_segments(&path)
                ));
                first_path.get_or_insert(path);
            }
            Outcome::Error(err) => failed.push(format!("rule {rule_name}[{i}] failed: {err}")),
        }
    }
    if !failed.is_empty() {
        let msg = messages::any_pattern_fail(rule_message, &failed);
        return verdict(Status::Fail, msg, first_path);
    }
    if !skipped.is_empty() {
        return verdict(Status::Skip, skipped.join(" "), None);
    }
    // An empty anyPattern passes with the raw rule message.
    verdict(
        Status::Pass,
        rule_message.unwrap_or_default().to_owned(),
        None,
    )
}

fn verdict(status: Status, message: String, path: Option<Vec<String>>) -> PatternVerdict {
    PatternVerdict {
        status,
        message,
        path,
    }
}
