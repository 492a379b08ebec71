//! PolicyExceptions on `validate.podSecurity` rules (exceptions.md §6.3,
//! `pkg/engine/handlers/validation/validate_pss.go`).
//!
//! 1. A matching exception without `podSecurity` entries skips the rule, naming the first such
//!    exception (`rule is skipped due to policy exception <ns>/<name>`, singular).
//! 2. Otherwise the pod is checked with the rule's own `exclude`: allowed → pass, exceptions
//!    unused. Violations → checked again with the `podSecurity` entries of every matching
//!    exception added to `exclude`: nothing left → skip naming them all; else fail with what
//!    remains.

use crate::report::{RuleResponse, Status};
use crate::resource::Resource;
use crate::yaml::{Node, Value};

use super::{PolicyException, SKIP_PREFIX_PSS, skip_message, skipped};

/// The response for a podSecurity rule (`body` = its `validate.podSecurity` map) that
/// `applied` (non-empty) except; `None` leaves the rule to its normal evaluation.
pub fn response(
    rule: &str,
    body: &Node,
    resource: &Resource,
    applied: &[&PolicyException],
) -> Option<RuleResponse> {
    if let Some(whole) = applied.iter().find(|e| e.pod_security.is_empty()) {
        let message = format!("{SKIP_PREFIX_PSS}{}", whole.qualified_name());
        return Some(skipped(rule, message, &[whole]));
    }
    let plain = crate::pss::validate(rule, body, resource);
    if plain.status != Status::Fail {
        return None;
    }
    let extended = with_exclusions(body, applied);
    let after = crate::pss::validate(rule, &extended, resource);
    match after.status {
        Status::Pass => Some(skipped(rule, skip_message(applied), applied)),
        status => {
            let mut r = RuleResponse::new(rule, status, after.message);
            r.path = after.path;
            Some(r)
        }
    }
}

/// `body` with the exceptions' `podSecurity` entries appended to `exclude`.
fn with_exclusions(body: &Node, applied: &[&PolicyException]) -> Node {
    let mut out = body.clone();
    let extra = applied.iter().flat_map(|e| e.pod_security.iter().cloned());
    if let Value::Map(m) = &mut out.value {
        match m.get_mut("exclude") {
            Some(Node {
                value: Value::Seq(list),
                ..
            }) => list.extend(extra),
            _ => {
                let list = Node::synthetic(Value::Seq(extra.collect()));
                m.insert("exclude".into(), crate::source::Span::EMPTY, list);
            }
        }
    }
    out
}
