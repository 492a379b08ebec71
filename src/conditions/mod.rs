//! Kyverno's condition language (validate.md §8, §9, §14): `any`/`all`/legacy-list blocks
//! used by `deny` and `preconditions`, every operator, and the deny verdict and messages.
//!
//! * [`evaluate_block`]: `(holds, messages)` — messages of the conditions that decided the
//!   result (true ones when it holds, false ones otherwise), joined upstream with `"; "`.
//! * [`deny_verdict`]: status and message of a `validate.deny` rule.
//!
//! Keys and values are substituted (§8.2) lazily, so short-circuiting hides errors.

mod equal;
mod in_ops;
mod numeric;

use std::borrow::Cow;

use crate::jmespath::value;
use crate::report::Status;
use crate::variables::{Context, VarError, substitute_at, substitute_cow};
use crate::yaml::{Node, Value};

/// The outcome of a condition block: whether it holds, and the deciding messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockResult {
    pub holds: bool,
    /// Already joined as Kyverno joins them (`"; "`), empty parts dropped.
    pub message: String,
}

/// The condition error text upstream reports (`failed to substitute variables in condition
/// key: ...`, `failed to create handler for condition operator: ...`).
pub type CondError = VarError;

/// Evaluates `conditions` (the value of `deny.conditions` or `preconditions`): a map with
/// `any`/`all`, or the legacy list (all must hold). An absent block (null) holds.
pub fn evaluate_block(conditions: &Node, ctx: &mut Context) -> Result<BlockResult, CondError> {
    match &conditions.value {
        Value::Null => Ok(BlockResult {
            holds: true,
            message: String::new(),
        }),
        Value::Seq(list) => {
            // Legacy form (`evaluateOldConditions`): true messages joined with ";".
            let mut true_msgs = Vec::new();
            for c in list {
                let (ok, msg) = evaluate_condition(c, ctx)?;
                if !ok {
                    return Ok(BlockResult {
                        holds: false,
                        message: msg,
                    });
                }
                // perf: only messages are kept (an empty one is dropped when joined anyway),
                // so a block without messages allocates no list.
                if !msg.is_empty() {
                    true_msgs.push(msg);
                }
            }
            Ok(BlockResult {
                holds: true,
                message: join_non_empty(&true_msgs, ";"),
            })
        }
        Value::Map(m) => {
            let mut true_msgs = Vec::new();
            let mut false_msgs = Vec::new();
            let mut any_ok = true;
            if let Some(any) = m.get("any").filter(|a| !a.is_null()) {
                any_ok = false;
                for c in any.as_seq().unwrap_or(&[]) {
                    let (ok, msg) = evaluate_condition(c, ctx)?;
                    let msgs = if ok { &mut true_msgs } else { &mut false_msgs };
                    if !msg.is_empty() {
                        msgs.push(msg);
                    }
                    if ok {
                        any_ok = true;
                        break;
                    }
                }
            }
            let mut all_ok = true;
            if let Some(all) = m.get("all") {
                for c in all.as_seq().unwrap_or(&[]) {
                    let (ok, msg) = evaluate_condition(c, ctx)?;
                    let msgs = if ok { &mut true_msgs } else { &mut false_msgs };
                    if !msg.is_empty() {
                        msgs.push(msg);
                    }
                    if !ok {
                        all_ok = false;
                        break;
                    }
                }
            }
            let holds = any_ok && all_ok;
            let msgs = if holds { &true_msgs } else { &false_msgs };
            Ok(BlockResult {
                holds,
                message: join_non_empty(msgs, "; "),
            })
        }
        _ => Err(VarError::new("invalid condition")),
    }
}

fn join_non_empty(parts: &[String], sep: &str) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(sep)
}

/// Condition literals as upstream decodes them (§2.1): top-level numbers are float64,
/// integral numbers nested in lists/maps are int64.
fn literal(n: &Node) -> Cow<'_, Node> {
    fn nested(n: &Node) -> Node {
        match &n.value {
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                value::node(Value::Int(*f as i64))
            }
            Value::Seq(items) => value::seq(items.iter().map(nested).collect()),
            Value::Map(m) => value::map(m.iter().map(|(k, v)| (k.to_owned(), nested(v))).collect()),
            _ => n.clone(),
        }
    }
    /// Whether `nested` would change anything (perf: most lists are strings).
    fn has_integral(n: &Node) -> bool {
        match &n.value {
            Value::Float(f) => f.fract() == 0.0 && f.abs() < 9.2e18,
            Value::Seq(items) => items.iter().any(has_integral),
            Value::Map(m) => m.iter().any(|(_, v)| has_integral(v)),
            _ => false,
        }
    }
    match &n.value {
        Value::Int(i) => Cow::Owned(value::float(*i as f64)),
        Value::Seq(_) | Value::Map(_) if has_integral(n) => Cow::Owned(nested(n)),
        _ => Cow::Borrowed(n),
    }
}

/// One condition: substitute key and value, apply the operator. Returns the result and the
/// condition's `message`.
pub fn evaluate_condition(cond: &Node, ctx: &mut Context) -> Result<(bool, String), CondError> {
    let null = value::null();
    let key = literal(cond.get("key").unwrap_or(&null));
    let val = literal(cond.get("value").unwrap_or(&null));
    let key = substitute_cow(&key, ctx, "").map_err(|e| {
        VarError::new(format!(
            "failed to substitute variables in condition key: {e}"
        ))
    })?;
    let val = substitute_cow(&val, ctx, "").map_err(|e| {
        VarError::new(format!(
            "failed to substitute variables in condition value: {e}"
        ))
    })?;
    let op = cond.get("operator").and_then(Node::as_str).unwrap_or("");
    let result = apply_operator(op, &key, &val)?;
    let message = cond
        .get("message")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    Ok((result, message))
}

/// Every operator name policy validation accepts (§8.3), exactly spelled.
pub const OPERATORS: &[&str] = &[
    "Equal",
    "Equals",
    "NotEqual",
    "NotEquals",
    "In",
    "AnyIn",
    "AllIn",
    "NotIn",
    "AnyNotIn",
    "AllNotIn",
    "GreaterThanOrEquals",
    "GreaterThan",
    "LessThanOrEquals",
    "LessThan",
    "DurationGreaterThanOrEquals",
    "DurationGreaterThan",
    "DurationLessThanOrEquals",
    "DurationLessThan",
];

/// Applies an operator to substituted operands. Names match case-insensitively like the
/// engine (`operator.go`); the numeric and duration families then compare against the exact
/// spelling, so a mis-cased comparison operator is always false (upstream quirk).
pub fn apply_operator(op: &str, key: &Node, val: &Node) -> Result<bool, CondError> {
    // perf: lowercased on the stack; no operator is longer than 32 bytes (a longer one is
    // unknown either way).
    let mut buf = [0u8; 32];
    let lower = match buf.get_mut(..op.len()) {
        Some(b) => {
            b.copy_from_slice(op.as_bytes());
            b.make_ascii_lowercase();
            std::str::from_utf8(b).unwrap_or("")
        }
        None => "",
    };
    Ok(match lower {
        "equal" | "equals" => equal::equals(key, val),
        "notequal" | "notequals" => equal::not_equals(key, val),
        "in" => in_ops::in_op(key, val, false)?,
        "notin" => in_ops::in_op(key, val, true)?,
        "anyin" => in_ops::any_all(key, val, in_ops::Mode::AnyIn),
        "allin" => in_ops::any_all(key, val, in_ops::Mode::AllIn),
        "anynotin" => in_ops::any_all(key, val, in_ops::Mode::AnyNotIn),
        "allnotin" => in_ops::any_all(key, val, in_ops::Mode::AllNotIn),
        "greaterthanorequals" | "greaterthan" | "lessthanorequals" | "lessthan" => {
            numeric::compare(op, key, val)
        }
        "durationgreaterthanorequals"
        | "durationgreaterthan"
        | "durationlessthanorequals"
        | "durationlessthan" => numeric::duration_compare(op, key, val),
        _ => {
            return Err(VarError::new(
                "failed to create handler for condition operator: %!w(<nil>)",
            ));
        }
    })
}

/// The verdict of a `validate.deny` rule (§14): conditions true → Fail, false → Pass,
/// evaluation error → Error.
pub fn deny_verdict(
    rule_name: &str,
    rule_message: Option<&str>,
    deny: &Node,
    ctx: &mut Context,
) -> (Status, String) {
    let null = value::null();
    let conditions = deny.get("conditions").unwrap_or(&null);
    let result = match evaluate_block(conditions, ctx) {
        Ok(r) => r,
        Err(e) => {
            return (
                Status::Error,
                format!("failed to check deny conditions: {e}"),
            );
        }
    };
    if !result.holds {
        return (
            Status::Pass,
            crate::report::pass_message("validation", rule_name),
        );
    }
    let rule_message = rule_message.unwrap_or("");
    if rule_message.is_empty() && result.message.is_empty() {
        return (
            Status::Fail,
            format!("validation error: rule {rule_name} failed"),
        );
    }
    let joined = join_non_empty(&[rule_message.to_owned(), result.message.clone()], "; ");
    let message = match substitute_at(&value::string(joined), ctx, "") {
        Ok(n) => match n.value {
            Value::Str(s) => s,
            _ => "the produced message didn't resolve to a string, check your policy definition."
                .to_owned(),
        },
        Err(_) => result.message,
    };
    (Status::Fail, message)
}

#[cfg(test)]
mod tests;
