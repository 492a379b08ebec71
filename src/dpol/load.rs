//! DeletingPolicy / NamespacedDeletingPolicy documents → a [`Policy`] whose body is the
//! compiled [`DeletingPolicy`]. Expressions are compiled once; each problem is a diagnostic at
//! its line:column. A compile error makes every evaluation an error (Kyverno's compiler
//! refuses the policy); what only Kyverno's admission check refuses (`dpol/validate.go`: no
//! resource rule, a missing or malformed schedule) is a diagnostic, and the policy is still
//! evaluated as the CLI evaluates it.

use std::sync::Arc;

use super::DeletingPolicy;
use crate::diagnostic::Diagnostic;
use crate::mpol::load::Compiler;
use crate::policy::{Envelope, Policy, PolicyKind};
use crate::source::Source;
use crate::vpol::constraints::Constraints;
use crate::yaml::Node;

/// The loader of `DeletingPolicy` / `NamespacedDeletingPolicy` in `crate::kinds::LOADERS`.
pub fn deleting_policy(
    source: &Source,
    node: Node,
    _bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    Ok(load(source, node, diagnostics))
}

fn load(source: &Source, node: Node, diagnostics: &mut Vec<Diagnostic>) -> Policy {
    let opened = Envelope::open(
        &node,
        PolicyKind::DeletingPolicy,
        Some(PolicyKind::NamespacedDeletingPolicy),
    );
    let kind = opened.kind.name();
    let spec = opened.spec.clone();
    let mut c = Compiler::open(source, diagnostics, &opened);
    let mut broken = None;
    let constraints = match opened.match_constraints() {
        Some(m) => match Constraints::read(m) {
            Ok(mut cons) => {
                if cons.resource_rules.is_empty() {
                    admission_problem(
                        &mut c,
                        "a matchConstraints with at least one resource rule is required",
                        m,
                    );
                }
                // The controller lists resources whatever the operation (`engine.go`
                // `matchPolicy` sets every rule's operations to `*`).
                for r in &mut cons.resource_rules {
                    r.operations = vec!["*".to_owned()];
                }
                Some(cons)
            }
            Err(e) => {
                c.problem(format!("invalid matchConstraints: {e}"), m.span);
                broken = Some(format!("invalid matchConstraints: {e}"));
                None
            }
        },
        None => {
            admission_problem(
                &mut c,
                "a matchConstraints with at least one resource rule is required",
                &spec,
            );
            None
        }
    };
    // `spec.schedule` is checked, not kept: kpol runs no schedule.
    match spec.get("schedule") {
        Some(s) => match s.as_str() {
            Some(text) => {
                if let Err(why) = check_schedule(text) {
                    admission_problem(
                        &mut c,
                        &format!("schedule {text:?} is not in proper cron format: {why}"),
                        s,
                    );
                }
            }
            None => {
                c.problem(
                    format!("schedule must be a string, not {}", s.value.type_name()),
                    s.span,
                );
            }
        },
        None => admission_problem(&mut c, "schedule is required", &spec),
    }
    let variables = c.named(&spec, "variables", false);
    let conditions = c.named(&spec, "conditions", false);
    if broken.is_none()
        && let Some(e) = c.errors.first()
    {
        broken = Some(format!("failed to compile policy: {e}"));
    }
    let body = DeletingPolicy {
        kind,
        name: opened.envelope.name.clone(),
        constraints,
        variables,
        conditions,
        broken,
    };
    opened.policy(source, node, Arc::new(body))
}

/// A problem Kyverno's admission check reports (`dpol/validate.go`) but the CLI evaluates
/// past: a diagnostic, not a broken policy. (Recorded before the compile errors are read, so
/// it is removed from the compiler's errors again.)
fn admission_problem(c: &mut Compiler<'_>, message: &str, at: &Node) {
    let n = c.errors.len();
    c.problem(message.to_owned(), at.span);
    c.errors.truncate(n);
}

/// The shape of a cron schedule as Kyverno's parser (`aptible/supercronic/cronexpr`) takes it:
/// a predefined `@…` name, or 5 to 7 fields of digits, names, `*`, `?`, `L`, `W`, `#`, ranges,
/// lists and steps. The values are not range-checked.
pub(super) fn check_schedule(text: &str) -> Result<(), String> {
    const NAMED: &[&str] = &[
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    let t = text.trim();
    if t.starts_with('@') {
        return if NAMED.contains(&t) {
            Ok(())
        } else {
            Err(format!("unknown predefined schedule {t}"))
        };
    }
    let fields: Vec<&str> = t.split_whitespace().collect();
    if !(5..=7).contains(&fields.len()) {
        return Err(format!(
            "{} fields, expected 5 to 7 (seconds and year optional)",
            fields.len()
        ));
    }
    for f in &fields {
        if let Some(bad) = f
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "*?,/-#".contains(*c)))
        {
            return Err(format!("unexpected character {bad:?} in field {f:?}"));
        }
    }
    Ok(())
}
