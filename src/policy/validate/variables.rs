//! Kyverno's check that a policy reads only variables it can have (`hasInvalidVariables` and
//! `ruleForbiddenSectionsHaveVariables`, `kyverno/kyverno:pkg/validation/policy/validate.go`;
//! the mock context of `pkg/engine/context/mock_context.go`).
//!
//! Every string and key of a rule is substituted against a context that knows no values, only
//! which names exist: an expression is accepted when Kyverno's allowed-variables regex finds a
//! match anywhere in it (`request`, `element`, `images`, a function call, …; narrower in
//! background mode, `target.` only in a rule with mutate targets), or when it matches the
//! wildcard pattern of a declared name: `NAME*` for an apiCall, globalReference,
//! imageRegistry or variable context entry and for an attestation, `NAME.data`,
//! `NAME.metadata` and their `.*` for a configMap entry. Only the rule's own context and the
//! contexts of its top-level `foreach` entries (and mutate targets) declare names. Any other
//! expression makes the whole policy invalid, so Kyverno never runs it.
//!
//! Before that, variables are refused outright in match/exclude blocks, in image references
//! and in the paths of a JSON 6902 patch.

use std::sync::LazyLock;

use regex::Regex;

use super::{Invalid, PolicyCtx};
use crate::base::wildcard::matches;
use crate::source::Span;
use crate::yaml::{Limits, Node, Value, parse_documents};

/// Kyverno's four allowed-variable regexes, by (background, mutate targets).
const ALLOWED: [&str; 4] = [
    r"request|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|image|([a-z_0-9]+\()[^{}]",
    r"request\.|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]",
    r"request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]",
    r"request\.|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]",
];

static ALLOWED_RE: LazyLock<Vec<Option<Regex>>> =
    LazyLock::new(|| ALLOWED.iter().map(|p| Regex::new(p).ok()).collect());

/// `regexVariables` of validate.go: a variable without braces inside.
static PLAIN_VARIABLE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\{\{[^{}]*\}\}").ok());

/// The first problem of each rule, in Kyverno's order; Kyverno stops at the first rule that
/// fails, kpol reports every rule.
pub fn check(ctx: &PolicyCtx, errs: &mut Vec<Invalid>) {
    for rule in ctx.rule_nodes {
        if let Err(e) = forbidden_sections(rule).and_then(|()| undeclared(rule, ctx.background)) {
            errs.push(e);
        }
    }
}

fn rule_name(rule: &Node) -> &str {
    rule.get("name").and_then(Node::as_str).unwrap_or("")
}

fn present<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.get(key).filter(|v| !v.is_null())
}

/// `ruleForbiddenSectionsHaveVariables`.
fn forbidden_sections(rule: &Node) -> Result<(), Invalid> {
    let name = rule_name(rule);
    let refuse = |section: &str, span| {
        Err(Invalid::new(
            format!(
                "policy contains invalid variables: rule \"{name}\" should not have variables in {section} section"
            ),
            span,
        ))
    };
    if let Some(patch) = present(rule, "mutate").and_then(|m| present(m, "patchesJson6902"))
        && let Some(text) = patch.as_str()
        && json_patch_paths_have_variables(text)
    {
        return refuse("patchesJSON6902 path", patch.span);
    }
    let Some(plain) = PLAIN_VARIABLE.as_ref() else {
        return Ok(());
    };
    for section in ["exclude", "match"] {
        if let Some(block) = present(rule, section)
            && let Some(at) = first_string(block, &mut |s| plain.is_match(s))
        {
            return refuse(section, at.span);
        }
    }
    let Some(vars) = crate::variables::variable_regex() else {
        return Ok(());
    };
    for vi in present(rule, "verifyImages")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        // `Convert` moves the deprecated `image` into `imageReferences`.
        let refs = present(vi, "imageReferences")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .chain(present(vi, "image"));
        for r in refs {
            if r.as_str().is_some_and(|s| vars.is_match(s)) {
                return refuse("image reference", r.span);
            }
        }
    }
    Ok(())
}

/// Whether an operation's `path` in a JSON 6902 patch holds a variable (a patch that does not
/// parse is the JSON patch check's to report).
fn json_patch_paths_have_variables(text: &str) -> bool {
    let Some(vars) = crate::variables::variable_regex() else {
        return false;
    };
    let Ok(docs) = parse_documents(text, Limits::default()) else {
        return false;
    };
    docs.first()
        .and_then(|d| d.root.as_seq())
        .unwrap_or_default()
        .iter()
        .filter_map(|op| op.get("path").and_then(Node::as_str))
        .any(|p| vars.is_match(p))
}

/// The first string or key at or under `n` (the node holding it) for which `hit` holds.
fn first_string<'a>(n: &'a Node, hit: &mut dyn FnMut(&str) -> bool) -> Option<&'a Node> {
    match &n.value {
        Value::Str(s) => hit(s).then_some(n),
        Value::Seq(items) => items.iter().find_map(|i| first_string(i, hit)),
        Value::Map(m) => m.iter().find_map(|(k, v)| {
            if hit(k) {
                Some(v)
            } else {
                first_string(v, hit)
            }
        }),
        _ => None,
    }
}

/// The names a context list declares, as wildcard patterns (`addContextVariables`).
fn declare(entries: Option<&Node>, out: &mut Vec<String>) {
    for e in entries.and_then(Node::as_seq).unwrap_or_default() {
        let Some(name) = e.get("name").and_then(Node::as_str) else {
            continue;
        };
        if ["apiCall", "globalReference", "imageRegistry", "variable"]
            .iter()
            .any(|k| present(e, k).is_some())
        {
            out.push(format!("{name}*"));
        }
        if present(e, "configMap").is_some() {
            for suffix in [".data", ".metadata", ".data.*", ".metadata.*"] {
                out.push(format!("{name}{suffix}"));
            }
        }
    }
}

/// `buildContext`: the patterns a rule declares.
fn declared(rule: &Node) -> Vec<String> {
    let mut out = Vec::new();
    declare(rule.get("context"), &mut out);
    let seq = |n: Option<&Node>, key: &str| -> Vec<Node> {
        n.and_then(|n| present(n, key))
            .and_then(Node::as_seq)
            .map(<[Node]>::to_vec)
            .unwrap_or_default()
    };
    for vi in seq(Some(rule), "verifyImages") {
        for att in seq(Some(&vi), "attestations") {
            if let Some(name) = att.get("name").and_then(Node::as_str) {
                out.push(format!("{name}*"));
            }
        }
    }
    let lists = [
        seq(present(rule, "validate"), "foreach"),
        seq(present(rule, "mutate"), "foreach"),
        seq(present(rule, "mutate"), "targets"),
        seq(present(rule, "generate"), "foreach"),
    ];
    for entry in lists.iter().flatten() {
        declare(entry.get("context"), &mut out);
    }
    out
}

/// The strings and keys of a rule as Kyverno substitutes them: attestation `conditions` are
/// left out (they read the attestation's payload).
fn strings<'a>(n: &'a Node, path: &mut Vec<&'a str>, out: &mut Vec<(&'a str, &'a Node)>) {
    match &n.value {
        Value::Str(s) => out.push((s.as_str(), n)),
        Value::Seq(items) => items.iter().for_each(|i| strings(i, path, out)),
        Value::Map(m) => {
            let attestation =
                path.len() >= 2 && path[path.len() - 2..] == ["verifyImages", "attestations"];
            for (k, v) in m.iter() {
                if attestation && k == "conditions" {
                    continue;
                }
                out.push((k, v));
                path.push(k);
                strings(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The first undeclared variable of a rule (the substitution half of `hasInvalidVariables`).
/// A rule with mutate targets is first read as Kyverno reads each target alone: its context,
/// preconditions and the targets' resource specs, where `target.` is not allowed yet.
fn undeclared(rule: &Node, background: bool) -> Result<(), Invalid> {
    let targets = present(rule, "mutate")
        .and_then(|m| present(m, "targets"))
        .map(|t| t.as_seq().unwrap_or_default());
    let name = rule_name(rule);
    if let Some(targets) = targets {
        let mut own = Vec::new();
        declare(rule.get("context"), &mut own);
        let mut found = Vec::new();
        for key in ["context", "preconditions"] {
            if let Some(n) = rule.get(key) {
                strings(n, &mut vec![key], &mut found);
            }
        }
        let head = found.len();
        for (i, target) in targets.iter().enumerate() {
            for key in ["apiVersion", "kind", "namespace", "name", "uid", "selector"] {
                if let Some(n) = target.get(key) {
                    strings(n, &mut vec![key], &mut found);
                }
            }
            // The rule's context and preconditions are read with the first target.
            let from = if i == 0 { 0 } else { head };
            scan(&found[from..], usize::from(background) * 2, &own).map_err(|(msg, span)| {
                Invalid::new(
                    format!(
                        "policy contains invalid variables: invalid variables defined at mutate.targets[{i}]: {msg}"
                    ),
                    span,
                )
            })?;
            found.truncate(head);
        }
    }
    let index = usize::from(background) * 2 + usize::from(targets.is_some());
    let mut found = Vec::new();
    strings(rule, &mut Vec::new(), &mut found);
    scan(&found, index, &declared(rule)).map_err(|(msg, span)| {
        Invalid::new(
            format!(
                "policy contains invalid variables: variable substitution failed for rule {name}: {msg}"
            ),
            span,
        )
    })
}

/// The mock substitution of `found` with allowed-variables regex `index` and the declared
/// `patterns`: the first refusal's message (`InvalidVariableError`) and where it is.
fn scan(found: &[(&str, &Node)], index: usize, patterns: &[String]) -> Result<(), (String, Span)> {
    let Some(allowed) = ALLOWED_RE.get(index).and_then(Option::as_ref) else {
        return Ok(());
    };
    for (text, node) in found {
        crate::variables::mock_scan(text, &mut |expr| {
            // An expression that does not parse is reported by the expression check.
            if crate::jmespath::Expr::compile(expr).is_err() {
                return Ok(());
            }
            let query = expr.replace('"', "");
            if allowed.is_match(&query) || patterns.iter().any(|p| matches(p, &query)) {
                return Ok(());
            }
            Err((
                format!(
                    "variable {query} must match regex \"{}\" or patterns [{}]",
                    ALLOWED[index],
                    patterns.join(" ")
                ),
                node.span,
            ))
        })?;
    }
    Ok(())
}
