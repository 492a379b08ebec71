//! Kyverno's policy validation in mock mode (match.md §1.4,
//! `kyverno/kyverno:pkg/validation/policy/validate.go`, `api/kyverno/v1/*_types.go`).
//! A policy that fails is not evaluated. Every independent failure is collected (the first
//! of each check and rule, in Kyverno's order, comes first); messages follow Kyverno's text
//! where it is stable.

mod conditions;
mod filters;
mod rules;
mod variables;

use std::collections::BTreeMap;

use super::model::{PolicyKind, Rule, RuleBody};
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

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
pub(crate) struct PolicyCtx<'a> {
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
    /// The evaluator side of the checks that read a rule body with an evaluator's grammar.
    pub compiler: &'a super::RuleCompiler,
}

impl PolicyCtx<'_> {
    fn span_of(&self, path: &[&str]) -> Span {
        self.node.get_path(path).map_or(self.node.span, |n| n.span)
    }
}

/// Checks on the document, before rules are compiled; each failure is pushed to `errs`.
/// Returns the indices of the rules without exactly one type (not compiled: their type error
/// says it all).
pub(crate) fn check_document(ctx: &PolicyCtx, errs: &mut Vec<Invalid>) -> Vec<usize> {
    // 1. A ClusterPolicy has no namespace.
    if ctx.kind == PolicyKind::ClusterPolicy && ctx.namespace.is_some() {
        errs.push(Invalid::new(
            "A clusterpolicy should not have the namespace defined",
            ctx.span_of(&["metadata", "namespace"]),
        ));
    }
    // 3. autogen-controllers: all.
    if ctx
        .annotations
        .get(super::CONTROLLERS_ANNOTATION)
        .map(String::as_str)
        == Some("all")
    {
        errs.push(Invalid::new(
            "metadata.annotations: Forbidden: Autogen annotation does not support 'all' anymore, remove the annotation or set it to a valid value",
            ctx.span_of(&["metadata", "annotations"]),
        ));
    }
    // 2. Name length (it is stored in a label of reports).
    if ctx.name.len() > 63 {
        errs.push(Invalid::new(
            "name: Too long: may not be more than 63 bytes",
            ctx.span_of(&["metadata", "name"]),
        ));
    }
    let policy_mutate_existing = ctx
        .spec
        .get("mutateExistingOnPolicyUpdate")
        .and_then(Node::as_bool)
        == Some(true);
    for (i, r) in ctx.rule_nodes.iter().enumerate() {
        // 19. mutateExistingOnPolicyUpdate requires targets.
        if let Some(m) = r.get("mutate").filter(|n| !n.is_null()) {
            let on = m
                .get("mutateExistingOnPolicyUpdate")
                .and_then(Node::as_bool);
            let targets = m
                .get("targets")
                .and_then(Node::as_seq)
                .is_some_and(|t| !t.is_empty());
            if (policy_mutate_existing || on == Some(true)) && !targets {
                errs.push(Invalid::new(
                    format!(
                        "spec.mutateExistingOnPolicyUpdate: Forbidden: rules[{i}].mutate.targets has to be specified when mutateExistingOnPolicyUpdate is set"
                    ),
                    m.span,
                ));
            }
        }
    }
    // verifyImages: an entry that resolves tags to digests (`mutateDigest`, true unless set)
    // needs Enforce: Audit would admit the unmutated resource. The action is the policy's
    // `validationFailureAction` (anything but Enforce is Audit), and an entry's own
    // `failureAction` replaces it for that entry and, as Kyverno's loop keeps the flag, for the
    // entries after it in the same rule (`pkg/validation/policy/validate.go`).
    let policy_audit = !is_enforce(ctx.spec.get("validationFailureAction"));
    for (i, r) in ctx.rule_nodes.iter().enumerate() {
        let Some(entries) = r.get("verifyImages").and_then(Node::as_seq) else {
            continue;
        };
        let mut audit = policy_audit;
        for (j, e) in entries.iter().enumerate() {
            if let Some(action) = e.get("failureAction").filter(|n| !n.is_null()) {
                audit = !is_enforce(Some(action));
            }
            let mutate_digest = e.get("mutateDigest");
            if audit && mutate_digest.and_then(Node::as_bool) != Some(false) {
                errs.push(Invalid::new(
                    format!(
                        "spec.rules[{i}].verifyImages[{j}].mutateDigest: Invalid value: true: mutateDigest must be set to false for \u{2018}Audit\u{2019} failure action"
                    ),
                    mutate_digest.map_or(e.span, |n| n.span),
                ));
            }
        }
    }
    // 4. Duplicate rule names.
    let mut seen = Vec::new();
    for (i, r) in ctx.rule_nodes.iter().enumerate() {
        let name = r.get("name").and_then(Node::as_str).unwrap_or("");
        if seen.contains(&name) {
            errs.push(Invalid::new(
                format!("spec.rules[{i}].name: Invalid value: Duplicate rule name: '{name}'"),
                r.get("name").map_or(r.span, |n| n.span),
            ));
        }
        seen.push(name);
    }
    // 5. Exactly one rule type; imageExtractors only with verifyImages.
    let mut bad_types = Vec::new();
    for (i, r) in ctx.rule_nodes.iter().enumerate() {
        if let Err(e) = rules::check_rule_type(r, i) {
            errs.push(e);
            bad_types.push(i);
        }
    }
    // 11. validationFailureActionOverrides only in a ClusterPolicy.
    if ctx.kind == PolicyKind::Policy
        && let Some(e) = ctx.spec.entry("validationFailureActionOverrides")
        && e.value.as_seq().is_some_and(|s| !s.is_empty())
    {
        errs.push(Invalid::new(
            "spec.validationFailureActionOverrides: Forbidden: Use of validationFailureActionOverrides is supported only with ClusterPolicy",
            e.key_span,
        ));
    }
    bad_types
}

/// Whether a failure action reads as Enforce (`Enforce`, or the old `enforce`); anything else,
/// absent included, is Audit.
fn is_enforce(action: Option<&Node>) -> bool {
    matches!(action.and_then(Node::as_str), Some("Enforce" | "enforce"))
}

/// A rule with the index Kyverno names it by (`spec.rules[i]`).
pub(crate) type Indexed<'a> = (usize, &'a Rule);

/// Checks on the compiled rules (`rules`, as written) and on the autogen-expanded list
/// (`computed`, `ComputeRules(policy, "")`) that Kyverno checks for several items; each
/// failure is pushed to `errs`. A failure of an autogen copy is only kept when nothing else
/// failed: it repeats a problem of the rule it was made from.
pub(crate) fn check_rules(
    ctx: &PolicyCtx,
    rules: &[Indexed],
    computed: &[Indexed],
    errs: &mut Vec<Invalid>,
) {
    let on_computed = |errs: &mut Vec<Invalid>, rule: &Rule, res: Result<(), Invalid>| {
        if let Err(e) = res
            && (!rule.autogen || errs.is_empty())
        {
            errs.push(e);
        }
    };
    // 14. Background mode: no user info in match/exclude, no user variables.
    if ctx.background {
        for &(i, r) in computed {
            on_computed(errs, r, filters::check_no_user_info(r, i));
        }
        // Read from the documents, so that a rule that did not compile counts too.
        let mutate_existing = ctx.rule_nodes.iter().any(|r| {
            r.get("mutate")
                .filter(|m| !m.is_null())
                .and_then(|m| m.get("targets"))
                .and_then(Node::as_seq)
                .is_some_and(|t| !t.is_empty())
        });
        if !mutate_existing {
            check_user_variables(ctx, errs);
        }
    }
    // hasInvalidVariables: every variable is one the rule can have.
    variables::check(ctx, errs);
    // Rule.Validate on the rules as written (items 6, 8, 9, 10, 12, 13, 19).
    for &(i, r) in rules {
        filters::check_match_exclude(ctx, r, i, errs);
        // ValidatePSaControlNames (validate.md §13.4).
        if let RuleBody::Validate(v) = &r.body
            && let crate::policy::ValidateCheck::PodSecurity(body) = &v.check
            && let Some((msg, node)) = (ctx.compiler.pod_security_error)(body, i)
        {
            errs.push(Invalid::new(msg, node.span));
        }
    }
    // 16. admission / background.
    if !ctx.admission && !ctx.background {
        errs.push(Invalid::new(
            "disabling both admission and background processing is not allowed",
            ctx.span_of(&["spec", "admission"]),
        ));
    } else if !ctx.admission
        && ctx
            .rule_nodes
            .iter()
            .any(|r| r.get("validate").is_none_or(Node::is_null))
    {
        errs.push(Invalid::new(
            "disabling admission processing is only allowed with validation policies",
            ctx.span_of(&["spec", "admission"]),
        ));
    }
    // Kinds (14, 15), then per-rule checks on the computed rules (6, 7, 18, 20, validate forms).
    for &(i, r) in computed {
        on_computed(errs, r, rules::check_kinds(r, i, ctx.background));
    }
    for &(i, r) in computed {
        for e in rules::check_computed_rule(r, i, ctx.compiler) {
            on_computed(errs, r, Err(e));
        }
    }
}

/// The user variables background mode forbids, as Kyverno's regexes
/// `[^\.](<name>)(?-u:\b)` write them (their unescaped `.` matches any character but `\n`).
const FORBIDDEN: &[&str] = &[
    "serviceAccountName",
    "serviceAccountNamespace",
    "request.userInfo",
    "request.roles",
    "request.clusterRoles",
];

/// Whether `[^\.](name)(?-u:\b)` matches somewhere in `s`, `.` in `name` standing for any
/// character but a line break (perf: five regexes compiled per run cost more than the
/// policies' other validation).
fn mentions_forbidden(s: &str, name: &str) -> bool {
    let text: Vec<char> = s.chars().collect();
    let name: Vec<char> = name.chars().collect();
    (1..text.len()).any(|start| {
        let Some(rest) = text.get(start..start + name.len()) else {
            return false;
        };
        let matched = text[start - 1] != '.'
            && name.iter().zip(rest).all(|(p, c)| match p {
                '.' => *c != '\n',
                p => p == c,
            });
        // An ASCII word boundary after the name (whose last character is a letter).
        let next = text.get(start + name.len());
        matched && !next.is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
    })
}

/// `containsUserVariables`: variables about the requesting user are not allowed in
/// background mode (background.go). Scans every string of the policy, as Kyverno scans the
/// serialised policy; each forbidden variable is a failure.
fn check_user_variables(ctx: &PolicyCtx, errs: &mut Vec<Invalid>) {
    let Some(vars) = crate::variables::variable_regex() else {
        return;
    };
    let mut stack = vec![ctx.node];
    while let Some(n) = stack.pop() {
        match &n.value {
            Value::Str(s) => {
                for c in vars.captures_iter(s) {
                    let Some(var) = c.get(2) else { continue };
                    if FORBIDDEN
                        .iter()
                        .any(|name| mentions_forbidden(var.as_str(), name))
                    {
                        errs.push(Invalid::new(
                            format!(
                                "only select variables are allowed in background mode. Set spec.background=false to disable background mode for this policy rule: variable {} is not allowed ",
                                var.as_str()
                            ),
                            n.span,
                        ));
                    }
                }
            }
            Value::Seq(items) => stack.extend(items.iter().rev()),
            Value::Map(m) => {
                for (k, v) in m.iter().collect::<Vec<_>>().into_iter().rev() {
                    if k != "status" && k != "kubectl.kubernetes.io/last-applied-configuration" {
                        stack.push(v);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
