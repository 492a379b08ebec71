//! The condition checks of `validateResources` (validate.md §8.1): a rule's preconditions and
//! deny conditions name a key, a value and an operator; a `{{request.operation}}` key is
//! compared with an operation; and every operator, in foreach entries too, is spelled exactly
//! as Kyverno lists it (`kyverno/kyverno:pkg/validation/policy/validate.go`).

use super::Invalid;
use crate::conditions::OPERATORS;
use crate::policy::model::Rule;
use crate::source::Span;
use crate::yaml::{Node, Value};

const OPERATIONS: &[&str] = &["CREATE", "UPDATE", "DELETE", "CONNECT"];

/// A problem: the path below the rule (as upstream writes it), the reason, where it points.
type Problem = (String, String, Span);

/// Checks rule `i` (a rule of `ComputeRules`): the first problem of each of its condition
/// blocks (preconditions, deny conditions, validate and mutate foreach), in that order.
pub fn check(rule: &Rule, i: usize) -> Vec<Invalid> {
    problems(rule)
        .into_iter()
        .map(|(path, reason, span)| {
            Invalid::new(format!("path: spec.rules[{i}].{path}: {reason}"), span)
        })
        .collect()
}

fn problems(rule: &Rule) -> Vec<Problem> {
    let mut out = Vec::new();
    // Upstream prefixes preconditions with `validate.` whatever the rule's type.
    if let Some(p) = &rule.preconditions {
        let found = values_in(p, "preconditions").or_else(|| operators_in(p, "preconditions"));
        if let Some((path, reason, span)) = found {
            out.push((format!("validate.{path}"), reason, span));
        }
    }
    let validate = present(&rule.raw, "validate");
    if let Some(c) = validate
        .and_then(|v| present(v, "deny"))
        .and_then(|d| present(d, "conditions"))
    {
        let found = values_in(c, "conditions").or_else(|| operators_in(c, "conditions"));
        if let Some((path, reason, span)) = found {
            out.push((format!("validate.deny.{path}"), reason, span));
        }
    }
    if let Some(fes) = validate.and_then(|v| present(v, "foreach"))
        && let Some(found) = foreach(fes, "validate.foreach", true)
    {
        out.push(found);
    }
    if let Some(fes) = present(&rule.raw, "mutate").and_then(|m| present(m, "foreach"))
        && let Some(found) = foreach(fes, "mutate.foreach", false)
    {
        out.push(found);
    }
    out
}

/// `validateValidationForEach` / `validateMutationForEach`: operators only.
fn foreach(entries: &Node, key: &str, validate: bool) -> Option<Problem> {
    for fe in entries.as_seq().unwrap_or_default() {
        if let Some(p) = present(fe, "preconditions")
            && let Some((path, reason, span)) = any_all_operators(p, "conditions")
        {
            return Some((format!("{key}.{path}"), reason, span));
        }
        if validate
            && let Some(c) = present(fe, "deny").and_then(|d| present(d, "conditions"))
            && let Some((path, reason, span)) = operators_in(c, "conditions")
        {
            return Some((format!("{key}.deny.{path}"), reason, span));
        }
        if let Some(nested) = present(fe, "foreach")
            && let Some((path, reason, span)) = foreach(nested, key, validate)
        {
            return Some((format!("{key}.{path}"), reason, span));
        }
    }
    None
}

/// `validateConditions`: key, value and operator present; `{{request.operation}}` values.
fn values_in(block: &Node, key: &str) -> Option<Problem> {
    match &block.value {
        Value::Seq(items) => items.iter().enumerate().find_map(|(j, c)| {
            condition_values(c)
                .map(|(path, reason, span)| (format!("{key}[{j}].{path}"), reason, span))
        }),
        Value::Map(_) => ["any", "all"].into_iter().find_map(|list| {
            let items = present(block, list).and_then(Node::as_seq)?;
            items.iter().enumerate().find_map(|(j, c)| {
                condition_values(c)
                    .map(|(path, reason, span)| (format!("{key}.{list}[{j}].{path}"), reason, span))
            })
        }),
        _ => None,
    }
}

/// `validateRawJSONConditionOperator`: every operator spelled as listed.
fn operators_in(block: &Node, key: &str) -> Option<Problem> {
    match &block.value {
        Value::Seq(items) => items
            .iter()
            .enumerate()
            .find_map(|(j, c)| invalid_operator(c).map(|(r, s)| (format!("{key}[{j}]."), r, s))),
        _ => any_all_operators(block, key),
    }
}

/// `validateAnyAllConditionOperator`. Upstream names an `all` entry `any[j]` too.
fn any_all_operators(block: &Node, key: &str) -> Option<Problem> {
    ["any", "all"].into_iter().find_map(|list| {
        let items = present(block, list).and_then(Node::as_seq)?;
        items
            .iter()
            .enumerate()
            .find_map(|(j, c)| invalid_operator(c).map(|(r, s)| (format!("{key}.any[{j}]."), r, s)))
    })
}

fn invalid_operator(c: &Node) -> Option<(String, Span)> {
    let op = c.get("operator").and_then(Node::as_str).unwrap_or("");
    if OPERATORS.contains(&op) {
        return None;
    }
    let quoted: Vec<String> = OPERATORS.iter().map(|o| format!("{o:?}")).collect();
    let reason = format!(
        "entered value of `operator` is invalid. valid values: [{}]",
        quoted.join(" ")
    );
    Some((reason, c.get("operator").unwrap_or(c).span))
}

/// `validateConditionValues` for one condition.
fn condition_values(c: &Node) -> Option<Problem> {
    let key = present(c, "key");
    let value = present(c, "value");
    let op = c.get("operator").and_then(Node::as_str).unwrap_or("");
    let (Some(key), Some(value)) = (key, value) else {
        return Some((String::new(), MISSING.to_owned(), c.span));
    };
    if op.is_empty() {
        return Some((String::new(), MISSING.to_owned(), c.span));
    }
    let is_operation = key
        .as_str()
        .is_some_and(|k| k.replace(' ', "") == "{{request.operation}}");
    if !is_operation {
        return None;
    }
    let unknown = |v: &str, path: String, span| {
        let reason = format!(
            "unknown value '{v}' found under the 'value' field. Only the following values are allowed: [CREATE, UPDATE, DELETE, CONNECT]"
        );
        Some((path, reason, span))
    };
    match &value.value {
        Value::Str(v) => {
            let templated = v.len() >= 4 && v.starts_with("{{") && v.ends_with("}}");
            if templated || OPERATIONS.contains(&v.as_str()) {
                None
            } else {
                unknown(v, format!("value: {v}"), value.span)
            }
        }
        Value::Seq(items) => items.iter().enumerate().find_map(|(j, item)| {
            let v = item.as_str()?;
            if OPERATIONS.contains(&v) {
                None
            } else {
                unknown(v, format!("value[{j}]"), item.span)
            }
        }),
        other => {
            // The Go kind of the decoded JSON value.
            let kind = match other {
                Value::Bool(_) => "bool",
                Value::Map(_) => "map",
                _ => "float64",
            };
            let reason = format!(
                "'value' field found to be of the type {kind}. The provided value/values are expected to be either in the form of a string or list"
            );
            Some(("value".to_owned(), reason, value.span))
        }
    }
}

const MISSING: &str = "entered value of `key`, `value` or `operator` is missing or misspelled";

fn present<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.get(key).filter(|v| !v.is_null())
}
