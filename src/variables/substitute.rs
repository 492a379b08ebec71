//! `{{ }}` substitution (validate.md §11.2–11.5; `pkg/engine/variables/vars.go`
//! `substituteVariablesIfAny`, `jsonutils/traverse.go`).
//!
//! Every string leaf and map key of a document is scanned with Kyverno's regex
//! `(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})`. A string that is exactly one variable becomes
//! the typed query result; otherwise results are spliced in as text (strings as is, other
//! values as JSON) and the string is scanned again, unless the last variable was shallow
//! (`{{- ... }}`); the rescan finds only the policy's own braces, never a value's
//! ([`substitute_str`]). Finally the policy's `\{{` becomes `{{`.
//!
//! Errors: a query error reads `failed to resolve <expr> at path <path>: <query error>`
//! (upstream wraps even the missing-key error, see `pkg/engine/validation_test.go`).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::{Context, VarError};
use crate::base::budget;
use crate::jmespath::value::{self, to_json_string};
use crate::request::Operation;
use crate::yaml::{Map, Node, Value};

static VARIABLE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})").ok());

static VARIABLE_INIT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\{\{(\{[^{}]*\}|[^{}])*\}\}").ok());

/// Kyverno's variable regex (`RegexVariables`), compiled once for every user.
pub(crate) fn variable_regex() -> Option<&'static Regex> {
    VARIABLE.as_ref()
}

/// Re-scans allowed for one string (values that keep producing variables).
const MAX_PASSES: usize = 64;

/// Substitutes every variable in a document (root path `""`).
pub fn substitute(doc: &Node, ctx: &mut Context) -> Result<Node, VarError> {
    substitute_at(doc, ctx, "")
}

/// Substitutes with `path` as the JSON path of `doc` (for messages and `{{@}}`).
pub fn substitute_at(doc: &Node, ctx: &mut Context, path: &str) -> Result<Node, VarError> {
    substitute_cow(doc, ctx, path).map(Cow::into_owned)
}

/// [`substitute_at`], borrowing `doc` when it holds no variable (most condition keys and
/// values, patches and patterns): no copy, no path strings.
pub(crate) fn substitute_cow<'a>(
    doc: &'a Node,
    ctx: &mut Context,
    path: &str,
) -> Result<Cow<'a, Node>, VarError> {
    if has_variables(doc) {
        substitute_node(doc, ctx, path).map(Cow::Owned)
    } else {
        Ok(Cow::Borrowed(doc))
    }
}

/// Whether a node holds a `{{` anywhere (keys included): a node without one substitutes to
/// itself.
pub fn has_variables(node: &Node) -> bool {
    match &node.value {
        Value::Str(s) => opens_variable(s),
        Value::Seq(items) => items.iter().any(has_variables),
        Value::Map(m) => m
            .entries()
            .iter()
            .any(|e| opens_variable(&e.key) || has_variables(&e.value)),
        _ => false,
    }
}

/// Whether `s` contains `{{`. perf: asked of every condition key and value for every
/// resource; a byte search for `{` beats setting up a substring search on short strings.
pub(crate) fn opens_variable(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr_iter(b'{', b).any(|i| b.get(i + 1) == Some(&b'{'))
}

/// The substitution proper; children without variables are copied as they are.
fn substitute_node(doc: &Node, ctx: &mut Context, path: &str) -> Result<Node, VarError> {
    match &doc.value {
        Value::Str(s) => substitute_str(s, ctx, path).map(|mut n| {
            if matches!(n.value, Value::Str(_)) {
                n.span = doc.span;
            }
            n
        }),
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(if has_variables(item) {
                    substitute_node(item, ctx, &format!("{path}/{i}"))?
                } else {
                    item.clone()
                });
            }
            Ok(Node::new(Value::Seq(out), doc.span))
        }
        Value::Map(m) => {
            let mut out = Map::with_capacity(m.len());
            for e in m.entries() {
                let key = if opens_variable(&e.key) {
                    match substitute_str(&e.key, ctx, path)?.value {
                        Value::Str(s) => s,
                        Value::Null => e.key.clone(),
                        _ => {
                            return Err(VarError::new(format!(
                                "expected string after substituting variables in key \"{}\"",
                                e.key
                            )));
                        }
                    }
                } else {
                    e.key.clone()
                };
                let v = if has_variables(&e.value) {
                    let child = format!("{path}/{}", e.key.replace('/', "\\/"));
                    substitute_node(&e.value, ctx, &child)?
                } else {
                    e.value.clone()
                };
                out.insert(key, e.key_span, v);
            }
            Ok(Node::new(Value::Map(out), doc.span))
        }
        _ => Ok(doc.clone()),
    }
}

/// Substitutes the variables of one string; the result is typed when the string is exactly
/// one variable.
///
/// Values are spliced in as text and never scanned again for variables: a `{{` or `}}` that a
/// value brings (a resource field, a context entry) is literal text, so data cannot make
/// kpol evaluate expressions it holds (Kyverno re-scans them, validate.md §11.3; kpol
/// substitutes like its `{{- }}` form, issue #19). Re-scanning still resolves the variables
/// written in the policy: a nested variable's outer braces are the policy's own. Each pass
/// builds the new text once (linear in its length), and the text built is charged to the
/// rule's evaluation budget.
pub(crate) fn substitute_str(s: &str, ctx: &mut Context, path: &str) -> Result<Node, VarError> {
    let (Some(re), Some(init)) = (VARIABLE.as_ref(), VARIABLE_INIT.as_ref()) else {
        return Ok(value::string(s));
    };
    if !opens_variable(s) {
        // No variable, and so no `\{{` escape either.
        return Ok(value::string(s));
    }
    // perf: a string that is one variable without braces inside (`{{ request.object.x }}`,
    // most conditions) is the one match the scan below would find, and its typed result.
    if lone_variable(s).is_some() {
        return resolve(s, ctx, path).map(|(val, _)| val);
    }
    let _scope = budget::Scope::enter();
    let over = |e: budget::Exceeded| {
        VarError::new(format!("failed to resolve variables at path {path}: {e}"))
    };
    // `mask` is `text` with every brace a value brought blanked (same length): variables are
    // found in the mask, expressions and output are taken from the text.
    let mut text = s.to_owned();
    let mut mask = s.to_owned();
    let mut vars = find_all(re, &mask);
    let mut passes = 0;
    while !vars.is_empty() {
        passes += 1;
        if passes > MAX_PASSES {
            return Err(VarError::new(format!(
                "failed to resolve variables at path {path}: too many nested substitutions"
            )));
        }
        let mut out = String::with_capacity(text.len());
        let mut out_mask = String::with_capacity(text.len());
        let mut last = 0;
        let mut shallow = false;
        for m in &vars {
            budget::work(1).map_err(over)?;
            let cut = if init.is_match(&mask[m.clone()]) {
                0
            } else {
                mask[m.clone()].chars().next().map_or(0, char::len_utf8)
            };
            let v = m.start + cut..m.end;
            let expr = if text[v.clone()] == mask[v.clone()] {
                None
            } else {
                Some(strip_masked(&text[v.clone()], &mask[v.clone()]))
            };
            let (val, is_shallow) = match expr {
                None => resolve(&text[v.clone()], ctx, path)?,
                Some((e, sh)) => (resolve_expr(Cow::Owned(e), ctx, path)?, sh),
            };
            shallow = is_shallow;
            if text.len() == v.len() {
                return Ok(val);
            }
            let rendered = match &val.value {
                Value::Str(s) => Cow::Borrowed(s.as_str()),
                _ => Cow::Owned(to_json_string(&val)),
            };
            budget::bytes(rendered.len() as u64).map_err(over)?;
            out.push_str(&text[last..v.start]);
            out_mask.push_str(&mask[last..v.start]);
            out.push_str(&rendered);
            out_mask.extend(rendered.chars().map(|c| match c {
                '{' | '}' | '\\' => '\0',
                c => c,
            }));
            last = v.end;
        }
        out.push_str(&text[last..]);
        out_mask.push_str(&mask[last..]);
        budget::bytes(out.len() as u64).map_err(over)?;
        (text, mask) = (out, out_mask);
        vars = if shallow {
            Vec::new()
        } else {
            find_all(re, &mask)
        };
    }
    Ok(value::string(unescape_masked(&text, &mask)))
}

/// Kyverno's policy-validation pass over one string (`hasInvalidVariables`, which substitutes
/// against a mock context): each variable's expression, shallow marker dropped, goes to
/// `check`; an accepted one reads as null, so a string that is one variable ends there and any
/// other is spliced with `null` and scanned again (unless the variable was shallow), exactly as
/// the real substitution rescans. `{{@}}` always stands for a `request.object` path, which
/// every mock context accepts. The first refusal is returned.
pub(crate) fn mock_scan<E>(s: &str, check: &mut dyn FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let (Some(re), Some(init)) = (VARIABLE.as_ref(), VARIABLE_INIT.as_ref()) else {
        return Ok(());
    };
    if !opens_variable(s) {
        return Ok(());
    }
    let mut text = s.to_owned();
    let mut vars = find_all(re, &text);
    for _ in 0..MAX_PASSES {
        if vars.is_empty() {
            break;
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut shallow = false;
        for m in &vars {
            let cut = if init.is_match(&text[m.clone()]) {
                0
            } else {
                text[m.clone()].chars().next().map_or(0, char::len_utf8)
            };
            let v = m.start + cut..m.end;
            let (expr, is_shallow) = strip_braces(&text[v.clone()]);
            shallow = is_shallow;
            if expr != "@" {
                check(&expr)?;
            }
            if text.len() == v.len() {
                return Ok(());
            }
            out.push_str(&text[last..v.start]);
            out.push_str("null");
            last = v.end;
        }
        out.push_str(&text[last..]);
        text = out;
        vars = if shallow {
            Vec::new()
        } else {
            find_all(re, &text)
        };
    }
    Ok(())
}

/// `\{{` → `{{` where the policy wrote it (a value's text is kept as it is).
fn unescape_masked(text: &str, mask: &str) -> String {
    if text == mask {
        return text.replace("\\{{", "{{");
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in mask.match_indices("\\{{") {
        out.push_str(&text[last..i]);
        last = i + 1;
    }
    out.push_str(&text[last..]);
    out
}

/// [`strip_braces`] of a variable part of whose text a value brought: only the policy's own
/// `{{`/`}}` (found in `mask`) are dropped.
fn strip_masked(text: &str, mask: &str) -> (String, bool) {
    fn drop_pairs(text: &str, mask: &str, pair: &str) -> (String, String) {
        let (mut t, mut m) = (String::with_capacity(text.len()), String::new());
        let mut last = 0;
        for (i, _) in mask.match_indices(pair) {
            t.push_str(&text[last..i]);
            m.push_str(&mask[last..i]);
            last = i + 2;
        }
        t.push_str(&text[last..]);
        m.push_str(&mask[last..]);
        (t, m)
    }
    let (t, m) = drop_pairs(text, mask, "{{");
    let (t, _) = drop_pairs(&t, &m, "}}");
    let (expr, shallow) = trim_shallow(&t);
    (expr.to_owned(), shallow)
}

/// The value of one variable `v` (`{{ ... }}`, braces included) and whether it is shallow
/// (`{{- ... }}`).
fn resolve(v: &str, ctx: &mut Context, path: &str) -> Result<(Node, bool), VarError> {
    let (variable, shallow) = strip_braces(v);
    Ok((resolve_expr(variable, ctx, path)?, shallow))
}

/// The value of one variable's expression (braces already dropped).
fn resolve_expr(
    mut variable: Cow<'_, str>,
    ctx: &mut Context,
    path: &str,
) -> Result<Node, VarError> {
    if variable == "@" {
        variable = Cow::Owned(at_path(ctx, path));
    }
    if ctx.operation() == Operation::Delete {
        variable = Cow::Owned(variable.replace("request.object", "request.oldObject"));
    }
    let val = ctx
        .query(&variable)
        .map_err(|e| VarError::new(format!("failed to resolve {variable} at path {path}: {e}")))?;
    Ok(val)
}

/// The JMESPath expressions of the variables a string holds on its first scan (for a nested
/// variable, the inner ones: the outer expression only exists once they are resolved).
/// Shallow markers are dropped; `{{@}}` is kept as `@`. Each comes with where it starts in `text` (a byte offset), when its text is written there as is
/// (always, but for a variable with braces inside that dropping `{{`/`}}` changed).
pub fn expressions(text: &str) -> Vec<(String, Option<usize>)> {
    let Some(re) = VARIABLE.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(text)
        .filter_map(|c| c.get(2))
        .filter_map(|m| {
            let e = strip_braces(m.as_str()).0.into_owned();
            let at = m.as_str().find(e.as_str()).map(|i| m.start() + i);
            (!e.is_empty()).then_some((e, at))
        })
        .collect()
}

fn find_all(re: &Regex, text: &str) -> Vec<std::ops::Range<usize>> {
    re.find_iter(text).map(|m| m.range()).collect()
}

/// `replaceBracesAndTrimSpaces`: drops every `{{`/`}}`, trims, and detects `{{- ...}}`.
fn strip_braces(v: &str) -> (Cow<'_, str>, bool) {
    // perf: `{{ expr }}` with no other brace is the common case: no replacing, no copy.
    match lone_variable(v) {
        Some(inner) => {
            let (expr, shallow) = trim_shallow(inner);
            (Cow::Borrowed(expr), shallow)
        }
        None => {
            let replaced = v.replace("{{", "").replace("}}", "");
            let (expr, shallow) = trim_shallow(&replaced);
            (Cow::Owned(expr.to_owned()), shallow)
        }
    }
}

/// A variable's text without its braces, trimmed, and whether it is `{{- … }}` (shallow).
fn trim_shallow(inner: &str) -> (&str, bool) {
    let inner = inner.trim();
    match inner.strip_prefix('-') {
        Some(rest) => (rest.trim(), true),
        None => (inner, false),
    }
}

/// The inside of `v` when it is one `{{ … }}` with no other brace in it.
fn lone_variable(v: &str) -> Option<&str> {
    v.strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .filter(|inner| memchr::memchr2(b'{', b'}', inner.as_bytes()).is_none())
}

/// `{{@}}`: the query for the current position, under `target` when the context has one,
/// else `request.object` (§11.4; [`super::pointer::at_query`]).
fn at_path(ctx: &mut Context, path: &str) -> String {
    let prefix = if ctx.root().get("target").is_some() {
        "target"
    } else {
        "request.object"
    };
    super::pointer::at_query(prefix, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context<'static> {
        Context::from_root(Node::from_json(&serde_json::json!({
            "request": {"object": {"metadata": {"name": "temp", "labels": {"app": "web"}},
                                   "spec": {"replicas": 3.0, "tpl": "{{ request.object.metadata.name }}"}}},
            "n": 3
        })))
    }

    fn sub(s: &str) -> Result<serde_json::Value, VarError> {
        substitute_str(s, &mut ctx(), "").map(|n| n.to_json())
    }

    #[test]
    fn opens_variable_finds_double_braces() {
        for (s, want) in [
            ("", false),
            ("{", false),
            ("{{", true),
            ("a{b{c", false),
            ("a{b{{c", true),
            ("{ {", false),
            ("x}}{{", true),
            ("é{{", true),
        ] {
            assert_eq!(opens_variable(s), want, "{s:?}");
            assert_eq!(opens_variable(s), s.contains("{{"), "{s:?}");
        }
    }

    #[test]
    fn typed_and_interpolated() {
        assert_eq!(
            sub("{{ request.object.spec.replicas }}").unwrap(),
            serde_json::json!(3.0)
        );
        assert_eq!(
            sub("x{{ request.object.spec.replicas }}").unwrap(),
            serde_json::json!("x3")
        );
        assert_eq!(
            sub("{{request.object.metadata.labels}}-").unwrap(),
            serde_json::json!(r#"{"app":"web"}-"#)
        );
        assert!(sub("{{a}}{{b}}").is_err());
        assert_eq!(sub("{{n}}{{n}}").unwrap(), serde_json::json!("33"));
        assert_eq!(
            sub("\\{{ value }}").unwrap(),
            serde_json::json!("{{ value }}")
        );
        assert_eq!(sub("plain").unwrap(), serde_json::json!("plain"));
        // One whole variable: the typed value, shallow or not; an empty one is an error.
        assert_eq!(
            sub("{{- request.object.spec.replicas }}").unwrap(),
            serde_json::json!(3.0)
        );
        assert_eq!(
            sub("{{ request.object.spec.tpl }}").unwrap(),
            serde_json::json!("{{ request.object.metadata.name }}")
        );
        assert_eq!(
            sub("{{}}").unwrap_err().message,
            "failed to resolve  at path : invalid query (nil)"
        );
    }

    #[test]
    fn values_are_never_substituted_again() {
        // A value holding a variable stays text, shallow or not (Kyverno re-scans it).
        assert_eq!(
            sub("v={{ request.object.spec.tpl }}").unwrap(),
            serde_json::json!("v={{ request.object.metadata.name }}")
        );
        // Self-replicating data: literal, and its size is what was inserted.
        let mut c = Context::from_root(Node::from_json(&serde_json::json!({
            "name": "{{name}}{{name}}", "bs": "x\\"
        })));
        let out = substitute_str("{{name}}{{name}}", &mut c, "").unwrap();
        assert_eq!(
            out.to_json(),
            serde_json::json!("{{name}}{{name}}{{name}}{{name}}")
        );
        // A value's braces cannot close or open the policy's variables, nor its backslash
        // escape them.
        let out = substitute_str("{{bs}}{{name}}", &mut c, "").unwrap();
        assert_eq!(out.to_json(), serde_json::json!("x\\{{name}}{{name}}"));
        // Nested variables written in the policy still resolve over the inserted value.
        assert_eq!(
            sub("{{ request.object.metadata.labels.{{ 'app' }} }}!").unwrap(),
            serde_json::json!("web!")
        );
    }

    #[test]
    fn ten_thousand_variables_substitute_in_linear_time() {
        for sep in ["", " "] {
            let text = vec!["{{ n }}"; 10_000].join(sep);
            let start = std::time::Instant::now();
            let out = sub(&text).unwrap();
            assert_eq!(out, serde_json::json!(vec!["3"; 10_000].join(sep)));
            // Quadratic splicing took seconds here; linear passes take milliseconds.
            assert!(
                start.elapsed() < std::time::Duration::from_secs(2),
                "{:?}",
                start.elapsed()
            );
        }
    }

    #[test]
    fn shallow_stops_the_rescan() {
        assert_eq!(
            sub("v={{- request.object.spec.tpl }}").unwrap(),
            serde_json::json!("v={{ request.object.metadata.name }}")
        );
    }

    #[test]
    fn nested_variables() {
        assert_eq!(
            sub("{{ request.object.metadata.labels.{{ request.object.metadata.labels.app == 'web' && 'app' || 'x' }} }}").unwrap(),
            serde_json::json!("web")
        );
    }

    #[test]
    fn missing_key_message() {
        let e =
            substitute_str("{{ request.object.spec.missing }}", &mut ctx(), "/spec/x").unwrap_err();
        assert_eq!(
            e.message,
            "failed to resolve request.object.spec.missing at path /spec/x: JMESPath query failed: Unknown key \"missing\" in path"
        );
        assert!(e.is_unknown_key());
    }

    #[test]
    fn keys_are_substituted() {
        let doc =
            Node::from_json(&serde_json::json!({"{{ request.object.metadata.name }}": "{{ n }}"}));
        let out = substitute(&doc, &mut ctx()).unwrap();
        assert_eq!(out.to_json(), serde_json::json!({"temp": 3}));
    }

    /// `{{@}}` in a mutate overlay: each value is replaced by the resource's value at the
    /// same place; the query text is upstream's `Pointer.JMESPath` (`vars.go`).
    fn at_ctx() -> Context<'static> {
        Context::from_root(Node::from_json(&serde_json::json!({
            "request": {"object": {
                "metadata": {"name": "web",
                             "labels": {"corp.com/retention": "days_37"},
                             "annotations": {"app.kubernetes.io.name": "shop"}},
                "spec": {"containers": [{"image": "nginx"}, {"image": "redis"}]}}}
        })))
    }

    fn at_doc(doc: serde_json::Value) -> Result<serde_json::Value, VarError> {
        substitute_at(
            &Node::from_json(&doc),
            &mut at_ctx(),
            "/mutate/patchStrategicMerge",
        )
        .map(|n| n.to_json())
    }

    /// The query `{{@}}` became, read from the missing-key error of a resource without it.
    fn at_query_text(doc: serde_json::Value) -> String {
        let mut ctx = Context::from_root(Node::from_json(&serde_json::json!({
            "request": {"object": {}}
        })));
        let e = substitute_at(
            &Node::from_json(&doc),
            &mut ctx,
            "/mutate/patchStrategicMerge",
        )
        .unwrap_err()
        .message;
        let rest = e.strip_prefix("failed to resolve ").unwrap_or(&e);
        rest.split(" at path ")
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn at_under_a_label_key_with_a_slash() {
        let doc = serde_json::json!({"metadata": {"labels": {"corp.com/retention": "{{@}}"}}});
        assert_eq!(
            at_doc(doc.clone()).unwrap(),
            serde_json::json!({"metadata": {"labels": {"corp.com/retention": "days_37"}}})
        );
        assert_eq!(
            at_query_text(doc),
            r#"request.object.metadata.labels."corp.com/retention""#
        );
    }

    #[test]
    fn at_under_an_annotation_key_with_dots() {
        let doc =
            serde_json::json!({"metadata": {"annotations": {"app.kubernetes.io.name": "{{ @ }}"}}});
        assert_eq!(
            at_doc(doc.clone()).unwrap(),
            serde_json::json!({"metadata": {"annotations": {"app.kubernetes.io.name": "shop"}}})
        );
        assert_eq!(
            at_query_text(doc),
            r#"request.object.metadata.annotations."app.kubernetes.io.name""#
        );
    }

    #[test]
    fn at_under_array_elements() {
        let doc =
            serde_json::json!({"spec": {"containers": [{"image": "{{@}}"}, {"image": "x-{{@}}"}]}});
        assert_eq!(
            at_doc(doc.clone()).unwrap(),
            serde_json::json!({"spec": {"containers": [{"image": "nginx"}, {"image": "x-redis"}]}})
        );
        assert_eq!(
            at_query_text(doc),
            "request.object.spec.containers[0].image"
        );
    }

    #[test]
    fn at_under_a_plain_key() {
        let doc = serde_json::json!({"metadata": {"name": "{{@}}"}});
        assert_eq!(
            at_doc(doc.clone()).unwrap(),
            serde_json::json!({"metadata": {"name": "web"}})
        );
        assert_eq!(at_query_text(doc), "request.object.metadata.name");
    }
}
