//! JMESPath in a policy, checked when the policy is loaded: every `{{ }}` variable, every
//! `foreach` `list` and every context `variable.jmesPath` is compiled once, so an expression
//! that does not parse or calls an unknown function is reported before any resource is read: a
//! syntax error at the character the parser stopped at (the `{{`'s place in the string, plus
//! the error's in the expression, mapped through the scalar's quoting by
//! [`crate::yaml::position_in_scalar`]), an unknown function at the string that calls it. The policy is still evaluated: the rule then gives the error result
//! Kyverno gives at admission.

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::jmespath::{Error, Expr};
use crate::source::{Source, Span};
use crate::variables::expressions;
use crate::yaml::{Node, Value, position_in_scalar};

use super::{Policy, RuleBody};

/// Diagnostics for the expressions of every rule as written (autogen copies are skipped: they
/// repeat the same text).
pub(crate) fn check(source: &Source, policy: &Policy) -> Vec<Diagnostic> {
    let rules = policy.rules().iter().filter(|r| !r.autogen).filter_map(|rule| {
        // CEL rules hold CEL, not JMESPath.
        let cel = matches!(&rule.body, RuleBody::Validate(v) if matches!(v.check, super::ValidateCheck::Cel(_)));
        (!cel).then_some((rule.name.as_str(), &rule.raw))
    });
    check_rules(source, &policy.name, rules)
}

/// The same for the rule documents of a policy that did not compile (so that its bad
/// expressions are reported with its other problems).
pub(crate) fn check_raw(source: &Source, policy: &str, rule_nodes: &[Node]) -> Vec<Diagnostic> {
    let rules = rule_nodes.iter().filter_map(|raw| {
        let cel = raw
            .get("validate")
            .and_then(|v| v.get("cel"))
            .is_some_and(|c| !c.is_null());
        let name = raw.get("name").and_then(Node::as_str).unwrap_or("");
        (!cel).then_some((name, raw))
    });
    check_rules(source, policy, rules)
}

fn check_rules<'a>(
    source: &Source,
    policy: &str,
    rules: impl Iterator<Item = (&'a str, &'a Node)>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (rule, raw) in rules {
        walk(raw, false, &mut |text, span, raw| {
            let exprs = if raw && !text.contains("{{") {
                vec![(text.to_owned(), Some(0))]
            } else {
                expressions(text)
            };
            for (e, at) in exprs {
                if let Err(err) = Expr::compile(&e) {
                    let offset = err.offset().zip(at).map(|(o, at)| at + o);
                    let what = match err {
                        Error::UnknownFunction(f) => format!("unknown function {f}()"),
                        // The parser's message repeats the expression with a caret below.
                        other => other.to_string().lines().next().unwrap_or("").to_owned(),
                    };
                    let mut loc = Location::at(source, span);
                    if let Some(pos) =
                        offset.and_then(|o| position_in_scalar(source, span, text, o))
                    {
                        loc.start = Some(pos);
                    }
                    out.push(Diagnostic::error(
                        Code::InvalidPolicy,
                        format!(
                            "{policy}/{rule}: JMESPath expression `{}` is invalid: {what}",
                            shorten(&e)
                        ),
                        Some(loc),
                    ));
                }
            }
        });
    }
    out
}

/// An expression as quoted in a message: a hostile one can be 64 KiB long.
fn shorten(e: &str) -> String {
    const MAX: usize = 120;
    match e.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &e[..i]),
        None => e.to_owned(),
    }
}

/// Calls `f(text, span, raw)` for every string value and key; `raw` marks strings that are a
/// bare JMESPath expression (`foreach[].list`, `variable.jmesPath`).
fn walk(node: &Node, in_foreach: bool, f: &mut impl FnMut(&str, Span, bool)) {
    match &node.value {
        Value::Str(s) => f(s, node.span, false),
        Value::Seq(items) => {
            for item in items {
                walk(item, in_foreach, f);
            }
        }
        Value::Map(m) => {
            for e in m.entries() {
                if e.key.contains("{{") {
                    f(&e.key, e.key_span, false);
                }
                let raw = (in_foreach && e.key == "list") || e.key == "jmesPath";
                match (&e.value.value, raw) {
                    (Value::Str(s), true) => f(s, e.value.span, true),
                    _ => walk(&e.value, e.key == "foreach", f),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::kinds::load_policies;
    use crate::source::SourceFile;
    use crate::yaml::{Limits, parse_documents};

    const POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: 'ok {{ request.object.metadata.name }}'
      foreach:
      - list: LIST
        deny:
          conditions:
            any:
            - key: '{{ KEY }}'
              operator: Equals
              value: x
";

    fn diags(list: &str, key: &str) -> Vec<String> {
        let text = POLICY.replace("LIST", list).replace("KEY", key);
        let source = Arc::new(SourceFile::new("p.yaml", text.clone()));
        let loaded = load_policies(&source, parse_documents(&text, Limits::default()).unwrap());
        loaded
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.position(), d.message))
            .collect()
    }

    #[test]
    fn valid_expressions_give_no_diagnostic() {
        assert!(diags("request.object.spec.containers", "element.name").is_empty());
    }

    /// A syntax error is reported at the character the parser stopped at; an unknown function
    /// at the string that holds it.
    #[test]
    fn bad_expressions_are_reported_where_they_go_wrong() {
        let d = diags(
            "request.object.spec.containers[",
            "no_such_fn(element.name)",
        );
        assert_eq!(d.len(), 2, "{d:?}");
        // Just past the `[` (col 15 + 31): the expression ends there.
        assert!(d[0].starts_with("p.yaml:11:46"), "{d:?}");
        assert!(
            d[1].starts_with("p.yaml:15:20") && d[1].contains("unknown function no_such_fn()"),
            "{d:?}"
        );
        // In a single-quoted key, after other text (`'{{ it''s {{ a || ] }} }}'`: the inner
        // variable is the one parsed): at the `]`.
        let d = diags("element", "it''s {{ a || ] }}");
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("p.yaml:15:38"), "{d:?}");
    }

    /// Double-quoted escapes and a message written over several lines.
    #[test]
    fn quoted_and_folded_strings_map_exactly() {
        let text = POLICY
            .replace("LIST", "element")
            .replace("KEY", "element.x")
            .replace(
                "message: 'ok {{ request.object.metadata.name }}'",
                "message: \"\\t\\\"ok\\\" {{ a.b ]\n        }}\"",
            );
        let source = Arc::new(SourceFile::new("p.yaml", text.clone()));
        let loaded = load_policies(&source, parse_documents(&text, Limits::default()).unwrap());
        let d: Vec<_> = loaded.diagnostics.iter().map(|d| d.position()).collect();
        let line = text.lines().nth(8).unwrap();
        assert_eq!(
            d,
            vec![format!("p.yaml:9:{}", line.find(']').unwrap() + 1)],
            "{line}"
        );
    }
}
