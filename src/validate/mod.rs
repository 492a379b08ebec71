//! One validate rule against one resource (validate.md §1, §7–11, §14): the rule context
//! (values, `context` entries), preconditions, then the check — `pattern`/`anyPattern` with
//! `{{ }}` substituted first, `deny`, or `foreach`.
//!
//! The variable context is built only for rules that need it: a plain pattern rule (most
//! rules) never copies the resource into a JMESPath context.

mod compiled;
mod foreach;
mod shared;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::conditions::{deny_verdict, evaluate_block};
use crate::pattern::{self, PatternVerdict};
use crate::policy::{Policy, Rule, Validate};
use crate::report::Status;
use crate::request::Request;
use crate::resource::Resource;
use crate::variables::{Context, has_variables, substitute_at, substitute_str};
use crate::yaml::{Node, Value};

pub use compiled::compile;
pub(crate) use compiled::compiled;
pub(crate) use foreach::{Entry as ForeachEntry, compile as compile_foreach, foreach_rule};
pub(crate) use shared::Contexts;

/// The result of a rule before the engine adds the rule name and action.
#[derive(Debug)]
pub(crate) struct Verdict {
    pub status: Status,
    pub message: String,
    pub path: Option<Vec<String>>,
    /// Where in the resource the failure is, when the path is not relative to the resource
    /// (a foreach element).
    pub span: Option<crate::source::Span>,
}

impl Verdict {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            path: None,
            span: None,
        }
    }
}

impl From<PatternVerdict> for Verdict {
    fn from(v: PatternVerdict) -> Self {
        Self {
            status: v.status,
            message: v.message,
            path: v.path,
            span: None,
        }
    }
}

/// Whether evaluating the rule needs the variable context.
pub(crate) fn needs_context(rule: &Rule, v: &Validate) -> bool {
    use crate::policy::ValidateCheck as C;
    rule.context.is_some()
        || rule.preconditions.is_some()
        || v.message_variables
        || compiled(v).patterns.variables
        || matches!(v.check, C::Deny(_) | C::Foreach(_))
}

/// Builds the rule's context: the CLI's request context, the values for this policy and
/// resource, then the rule's values, then its `context` entries (cli-compat.md §5.2). The
/// engine shares one context per resource instead ([`Contexts`]); this fresh one is for
/// callers outside a resource loop (an exception's conditions on a rule without context).
pub(crate) fn rule_context<'r>(
    policy: &Policy,
    rule: &Rule,
    resource: &'r Resource,
    request: &Request,
) -> Result<Context<'r>, Verdict> {
    let mut ctx = Context::for_resource(resource, request);
    apply_rule_context(&mut ctx, policy, rule, resource, request)?;
    Ok(ctx)
}

/// The rule's part of its context: values, then `context` entries.
pub(crate) fn apply_rule_context(
    ctx: &mut Context,
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
) -> Result<(), Verdict> {
    for (k, v) in request.values.for_resource(&policy.name, &resource.name) {
        if k != "request.operation" {
            ctx.set_variable(k, v);
        }
    }
    for (k, v) in request.values.for_rule(&policy.name, &rule.name) {
        ctx.set_variable(k, v);
    }
    if let Some(entries) = &rule.context {
        ctx.set_policy_namespace(policy.namespace.as_deref().unwrap_or(""));
        ctx.add_context_entries(entries, &BTreeMap::new())
            .map_err(|e| Verdict::new(Status::Error, format!("failed to load context: {e}")))?;
    }
    Ok(())
}

/// Rule-level preconditions (§9): `None` to go on, or the Skip/Error verdict.
pub(crate) fn preconditions(rule: &Rule, ctx: &mut Context) -> Option<Verdict> {
    let pre = rule.preconditions.as_ref()?;
    match evaluate_block(pre, ctx) {
        Err(e) => Some(Verdict::new(
            Status::Error,
            format!("failed to evaluate preconditions: {e}"),
        )),
        Ok(r) if !r.holds => Some(Verdict::new(
            Status::Skip,
            if r.message.is_empty() {
                "preconditions not met".to_owned()
            } else {
                format!("preconditions not met; {}", r.message)
            },
        )),
        Ok(_) => None,
    }
}

/// A foreach entry's preconditions: false, or an error, skip the element (§9).
pub(crate) fn preconditions_block(pre: &Node, ctx: &mut Context) -> bool {
    evaluate_block(pre, ctx).is_ok_and(|r| r.holds)
}

/// The rule message with variables substituted; `Err` holds the substitution error.
pub(crate) fn rule_message<'m>(
    message: Option<&'m str>,
    ctx: Option<&mut Context>,
) -> Result<Option<Cow<'m, str>>, String> {
    // perf: a message without variables is borrowed (most rules pass, and a pass does not
    // show it).
    let (Some(m), Some(ctx)) = (message, ctx) else {
        return Ok(message.map(Cow::Borrowed));
    };
    if !m.contains("{{") {
        return Ok(Some(Cow::Borrowed(m)));
    }
    match substitute_str(m, ctx, "") {
        Ok(Node {
            value: Value::Str(s),
            ..
        }) => Ok(Some(Cow::Owned(s))),
        Ok(n) => Ok(Some(Cow::Owned(crate::jmespath::value::go_sprint(&n)))),
        Err(e) => Err(e.message),
    }
}

/// A rule's `pattern` (one entry) or `anyPattern`, with what scanning them found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Patterns<'a> {
    pub nodes: &'a [Node],
    /// Whether they hold `{{ }}` variables (substituted before matching).
    pub variables: bool,
    /// Whether they may hold `$(…)` references (resolved before matching).
    pub references: bool,
    /// Their walk plans (one each), when planned at load.
    pub plans: Option<&'a [pattern::Plan]>,
}

/// What a rule's `pattern` / `anyPattern` (or a foreach entry's) hold, found once at load:
/// whether they have variables or references, and their walk plans.
#[derive(Clone, Debug, Default)]
pub struct PatternScan {
    /// Whether they hold `{{ }}` variables (keys included): a rule without any builds no
    /// variable context for them.
    pub variables: bool,
    /// Whether they may hold `$(…)` references: a pattern without one is not scanned for them
    /// per resource.
    pub references: bool,
    /// One plan each; none when they hold variables (what the walk sees is only known after
    /// substitution).
    pub(crate) plans: Vec<pattern::Plan>,
}

impl PatternScan {
    pub fn of(nodes: &[Node]) -> Self {
        let variables = nodes.iter().any(has_variables);
        let plans = if variables {
            Vec::new()
        } else {
            nodes.iter().map(|n| pattern::Plan::of(&n.value)).collect()
        };
        Self {
            variables,
            references: nodes.iter().any(|n| pattern::has_references(&n.value)),
            plans,
        }
    }

    /// The patterns `nodes` (those this scan was made of) with what it found.
    pub(crate) fn patterns<'a>(&'a self, nodes: &'a [Node]) -> Patterns<'a> {
        Patterns {
            nodes,
            variables: self.variables,
            references: self.references,
            plans: Some(&self.plans),
        }
    }
}

/// `pattern` or `anyPattern` (one entry in `patterns` for `pattern`), against `scope`, with
/// variables substituted first when the patterns hold any (§7: all alternatives before any
/// is tried).
pub(crate) fn pattern_check(
    rule_name: &str,
    message: Option<&str>,
    any: bool,
    patterns: Patterns<'_>,
    scope: &Node,
    ctx: Option<&mut Context>,
) -> Verdict {
    let mut ctx = ctx;
    let substituted: Vec<Node>;
    let mut references = patterns.references;
    let mut plans = patterns.plans;
    let patterns = match ctx.as_deref_mut() {
        Some(c) if patterns.variables => {
            let mut out = Vec::with_capacity(patterns.nodes.len());
            for p in patterns.nodes {
                match substitute_at(p, c, "") {
                    Ok(n) => out.push(n),
                    Err(e) => {
                        return Verdict::new(
                            Status::Error,
                            format!("variable substitution failed: {e}"),
                        );
                    }
                }
            }
            substituted = out;
            // A variable's value may bring a reference in.
            references = substituted
                .iter()
                .any(|n| pattern::has_references(&n.value));
            plans = None;
            &substituted[..]
        }
        _ => patterns.nodes,
    };
    let msg = rule_message(message, ctx);
    let text = msg.as_ref().ok().and_then(|m| m.as_deref());
    let mut verdict: Verdict = if any {
        pattern::check_any_pattern(rule_name, text, scope, patterns, references, plans).into()
    } else {
        match patterns.first() {
            Some(p) => {
                let plan = plans.and_then(|ps| ps.first());
                pattern::check_pattern(rule_name, text, scope, p, references, plan).into()
            }
            None => Verdict::new(Status::Error, "empty pattern"),
        }
    };
    if let Err(e) = msg
        && matches!(verdict.status, Status::Fail | Status::Error)
    {
        verdict.message = format!(
            "validation error: variables substitution error in rule {rule_name} execution error: {e}"
        );
    }
    verdict
}

/// `deny` (§8, §14).
pub(crate) fn deny_check(
    rule_name: &str,
    message: Option<&str>,
    deny: &Node,
    ctx: &mut Context,
) -> Verdict {
    let (status, message) = deny_verdict(rule_name, message, deny, ctx);
    Verdict::new(status, message)
}

/// The variable context a rule of `policy` is evaluated with on `resource` (request, values,
/// then the rule's `context` entries), for `kpol explain`, which evaluates a rule's deny
/// conditions one by one in it. `Err` holds the context's load error.
pub fn explain_context<'r>(
    policy: &Policy,
    rule: &Rule,
    resource: &'r Resource,
    request: &Request,
) -> Result<Context<'r>, String> {
    rule_context(policy, rule, resource, request).map_err(|v| v.message)
}
