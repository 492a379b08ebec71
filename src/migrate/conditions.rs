//! Condition blocks (`preconditions`, `deny.conditions`; validate.md §8) as CEL: `any` is a
//! disjunction, `all` a conjunction, a bare list `all`. A condition whose key is a missing
//! path is false, as Kyverno's operators are for a null key.

use crate::yaml::{Node, Value};

use super::Blocked;
use super::cel_text::{and, not, or, paren, quote, wildcard_regex};
use super::jmes::{Tr, Translator};

/// The block as one CEL boolean (`true` for an empty or null block).
pub(crate) fn block(node: &Node, jmes: &Translator) -> Result<String, Blocked> {
    match &node.value {
        Value::Null => Ok("true".to_owned()),
        Value::Seq(items) => all(items, jmes),
        Value::Map(m) => {
            let mut parts = Vec::new();
            if let Some(any) = m.get("any") {
                let items = any.as_seq().unwrap_or(&[]);
                if !items.is_empty() {
                    let each: Vec<String> = items
                        .iter()
                        .map(|c| condition(c, jmes))
                        .collect::<Result<_, _>>()?;
                    parts.push(or(&each));
                }
            }
            if let Some(a) = m.get("all") {
                parts.push(all(a.as_seq().unwrap_or(&[]), jmes)?);
            }
            Ok(and(&parts))
        }
        _ => Err(Blocked::new(
            node.span,
            "a condition block must be a map or a list".to_owned(),
        )),
    }
}

fn all(items: &[Node], jmes: &Translator) -> Result<String, Blocked> {
    let each: Vec<String> = items
        .iter()
        .map(|c| condition(c, jmes))
        .collect::<Result<_, _>>()?;
    Ok(and(&each))
}

/// One `{key, operator, value}`.
pub(crate) fn condition(c: &Node, jmes: &Translator) -> Result<String, Blocked> {
    let (Some(key), Some(op)) = (c.get("key"), c.get("operator").and_then(Node::as_str)) else {
        return Err(Blocked::new(
            c.span,
            "a condition needs `key` and `operator`".to_owned(),
        ));
    };
    let null = Node::null();
    let value = c.get("value").unwrap_or(&null);
    let k = jmes.operand(key)?;
    let v = jmes.operand(value)?;
    let op_span = c
        .as_map()
        .and_then(|m| m.entry("operator"))
        .map_or(c.span, |e| e.key_span);
    let lower = op.to_ascii_lowercase();
    let body = match lower.as_str() {
        "equals" | "equal" => equals(&k, value, &v),
        "notequals" | "notequal" => not(&equals(&k, value, &v)),
        "anyin" | "allin" | "anynotin" | "allnotin" | "in" | "notin" => {
            if !v.list {
                return Err(Blocked::new(
                    value.span,
                    format!(
                        "`{op}` with a value that is not a list: Kyverno splits or wildcard-matches it, which is not translated"
                    ),
                ));
            }
            if value.as_seq().is_some_and(|s| {
                s.iter()
                    .any(|n| n.as_str().is_some_and(super::cel_text::has_wildcard))
            }) {
                return Err(Blocked::new(
                    value.span,
                    format!("`{op}` with wildcard entries is not translated"),
                ));
            }
            let literal_key = k.guards.is_empty() && !k.expr.contains('.');
            // Kyverno compares with wildcards on both sides: a key `*` is in any list. Other
            // wildcard keys from the resource are compared literally (docs/MIGRATE.md).
            let member = |x: &str| {
                if literal_key {
                    v.has_item(x)
                } else {
                    or(&[v.has_item(x), format!("{x} == '*'")])
                }
            };
            let e = &k.expr;
            let on_list = match lower.as_str() {
                "anyin" => k.exists("k", &member("k")),
                "allin" | "in" => k.all("k", &member("k")),
                "anynotin" => k.exists("k", &not(&member("k"))),
                "allnotin" => k.all("k", &not(&member("k"))),
                _ if k.guards.is_empty() && !e.contains('.') => String::new(),
                _ => {
                    return Err(Blocked::new(
                        op_span,
                        "the deprecated `NotIn` on a key that may be a list is not translated (use AllNotIn or AnyNotIn)".to_owned(),
                    ));
                }
            };
            let m = member(&paren(e));
            let on_scalar = if lower.contains("not") { not(&m) } else { m };
            if k.list {
                on_list
            } else if literal_key {
                // A literal key.
                on_scalar
            } else {
                // A path whose type is known only at run time: a list key is tested element
                // by element (Kyverno's `AnyIn` and friends take both).
                format!(
                    "type({e}) == list ? {} : {}",
                    paren(&on_list),
                    paren(&on_scalar)
                )
            }
        }
        "greaterthan" | "greaterthanorequals" | "lessthan" | "lessthanorequals" => {
            let cmp = match lower.as_str() {
                "greaterthan" => ">",
                "greaterthanorequals" => ">=",
                "lessthan" => "<",
                _ => "<=",
            };
            // A number, or a string of digits (Kyverno reads it as the same number).
            let numeric = |n: &Node| match &n.value {
                Value::Int(_) | Value::Float(_) => true,
                Value::Str(s) => s.parse::<i64>().is_ok(),
                _ => false,
            };
            let number = |n: &Node| matches!(n.value, Value::Int(_) | Value::Float(_));
            // A digit string counts only against a count (`length()`): any other key could
            // be a quantity or a duration, which Kyverno would compare as such.
            let counted = k.expr.starts_with("size(") || k.expr.ends_with(".sum()");
            if !(number(value) || number(key) || (counted && numeric(value))) {
                return Err(Blocked::new(
                    op_span,
                    format!(
                        "`{op}` on values that may be quantities or durations needs CEL's quantity library (kpol's CEL has none)"
                    ),
                ));
            }
            format!("double({}) {cmp} double({})", k.expr, v.folded())
        }
        _ => {
            return Err(Blocked::new(
                op_span,
                format!("the operator `{op}` is not translated"),
            ));
        }
    };
    Ok(and(&[and(&k.guards), body]))
}

/// `Equals`: a string value with wildcards matches the key as a pattern.
fn equals(k: &Tr, value: &Node, v: &Tr) -> String {
    match &value.value {
        Value::Str(s) if !s.contains("{{") && super::cel_text::has_wildcard(s) => {
            format!("string({}).matches({})", k.expr, quote(&wildcard_regex(s)))
        }
        _ => format!("{} == {}", paren(&k.expr), paren(&v.folded())),
    }
}
