//! Message texts: Go's `%v`/`%T` renderings used inside pattern errors, and the rule messages
//! Kyverno builds from a pattern outcome (validate.md §14,
//! `kyverno/kyverno:pkg/engine/handlers/validation/validate_resource.go`).

use std::fmt::Write;

use crate::number::format_go_g;
use crate::yaml::Value;

/// Go `fmt.Sprint` (`%v`) of a JSON-shaped value: maps as `map[k:v ...]` with sorted keys,
/// slices as `[a b]`, nil as `<nil>`, floats in `%g` shortest form (`1e+06`).
pub(crate) fn go_sprint(value: &Value) -> String {
    let mut out = String::new();
    write_go_sprint(&mut out, value);
    out
}

fn write_go_sprint(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&format_go_g(*f)),
        Value::Str(s) => out.push_str(s),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go_sprint(out, &item.value);
            }
            out.push(']');
        }
        Value::Map(map) => {
            // fmt sorts map keys when printing.
            let mut entries: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k, &v.value)).collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push_str("map[");
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_go_sprint(out, v);
            }
            out.push(']');
        }
    }
}

/// Go `%T` of a decoded JSON value.
pub(crate) fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::Seq(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
    }
}

/// The rule message, or `None` when Kyverno treats it as absent (empty).
fn rule_msg(rule_message: Option<&str>) -> Option<&str> {
    rule_message.filter(|m| !m.is_empty())
}

/// `validation rule '<rule>' passed.`
pub(crate) fn pass(rule: &str) -> String {
    crate::report::pass_message("validation", rule)
}

/// `validation rule '<rule>' anyPattern[<i>] passed.`
pub(crate) fn any_pattern_pass(rule: &str, index: usize) -> String {
    format!("validation rule '{rule}' anyPattern[{index}] passed.")
}

/// `buildErrorMessage` with a path: the Fail message.
pub(crate) fn fail_at(rule: &str, rule_message: Option<&str>, path: &str) -> String {
    match rule_msg(rule_message) {
        None => format!("validation error: rule {rule} failed at path {path}"),
        Some(msg) => format!(
            "validation error: {}{} rule {rule} failed at path {path}",
            msg,
            if msg.ends_with('.') { "" } else { "." }
        ),
    }
}

/// `buildErrorMessage` without a path: the Error message.
pub(crate) fn execution_error(rule: &str, rule_message: Option<&str>, err: &str) -> String {
    match rule_msg(rule_message) {
        None => format!("validation error: rule {rule} execution error: {err}"),
        Some(msg) => format!(
            "validation error: {}{} rule {rule} execution error: {err}",
            msg,
            if msg.ends_with('.') { "" } else { "." }
        ),
    }
}

/// `buildAnyPatternErrorMessage`: the anyPattern Fail message from its items.
pub(crate) fn any_pattern_fail(rule_message: Option<&str>, items: &[String]) -> String {
    let joined = items.join(" ");
    match rule_msg(rule_message) {
        None => format!("validation error: {joined}"),
        Some(msg) if msg.ends_with('.') => format!("validation error: {msg} {joined}"),
        Some(msg) => format!("validation error: {msg}. {joined}"),
    }
}

/// `variable substitution failed: <err>` (rule Error).
pub(crate) fn substitution_failed(err: &str) -> String {
    format!("variable substitution failed: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;
    use crate::yaml::{Map, Node};

    #[test]
    fn sprint_values() {
        let mut map = Map::new();
        map.insert("b".into(), Span::EMPTY, Node::synthetic(Value::Float(1e6)));
        map.insert("a".into(), Span::EMPTY, Node::synthetic(Value::Null));
        let seq = Value::Seq(vec![
            Node::synthetic(Value::Str("x".into())),
            Node::synthetic(Value::Map(map)),
            Node::synthetic(Value::Float(80.0)),
        ]);
        assert_eq!(go_sprint(&seq), "[x map[a:<nil> b:1e+06] 80]");
        assert_eq!(go_sprint(&Value::Int(-3)), "-3");
        assert_eq!(go_sprint(&Value::Bool(false)), "false");
    }

    #[test]
    fn rule_messages() {
        assert_eq!(
            fail_at("r", Some("need x"), "/a/"),
            "validation error: need x. rule r failed at path /a/"
        );
        assert_eq!(
            fail_at("r", Some("need x."), "/a/"),
            "validation error: need x. rule r failed at path /a/"
        );
        assert_eq!(
            fail_at("r", Some("need x.\n"), "/a/"),
            "validation error: need x.\n. rule r failed at path /a/"
        );
        assert_eq!(
            fail_at("r", Some(""), "/a/"),
            "validation error: rule r failed at path /a/"
        );
        assert_eq!(
            execution_error("r", None, "boom"),
            "validation error: rule r execution error: boom"
        );
        assert_eq!(
            any_pattern_fail(Some("m."), &["a".into(), "b".into()]),
            "validation error: m. a b"
        );
        assert_eq!(
            any_pattern_fail(Some("m"), &["a".into()]),
            "validation error: m. a"
        );
        assert_eq!(any_pattern_fail(None, &["a".into()]), "validation error: a");
    }
}
