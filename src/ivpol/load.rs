//! ImageValidatingPolicy / NamespacedImageValidatingPolicy documents → a [`Policy`] whose body
//! is the compiled [`ImageValidatingPolicy`]: every expression compiled once, for the policy as
//! written and for each autogen copy (the whole spec rewritten by the ValidatingPolicy
//! replacements, `ivpol/autogen/autogen.go`); each problem a diagnostic at its line:column,
//! and a compile error makes every evaluation an error ("failed to compile policy").

use std::sync::Arc;

use super::{ImageMatch, ImageValidatingPolicy, Variant};
use crate::base::glob::Glob;
use crate::diagnostic::Diagnostic;
use crate::mpol::load::Compiler;
use crate::policy::Envelope;
use crate::policy::{CelValidation, Policy, PolicyKind};
use crate::report::FailureAction;
use crate::source::Source;
use crate::vpol::autogen;
use crate::vpol::constraints::Constraints;
use crate::yaml::{Node, Value};

/// The loader of `ImageValidatingPolicy` / `NamespacedImageValidatingPolicy` in
/// `crate::kinds::LOADERS`.
pub fn image_validating_policy(
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
        PolicyKind::ImageValidatingPolicy,
        Some(PolicyKind::NamespacedImageValidatingPolicy),
    );
    let kind = opened.kind.name();
    let spec = opened.spec.clone();
    let mut c = Compiler::open(source, diagnostics, &opened);
    let constraints = c.constraints(opened.match_constraints(), "matchConstraints");
    let mut variants = vec![variant(&mut c, &spec, constraints.clone(), true)];
    let mut broken = c
        .errors
        .first()
        .map(|e| format!("failed to compile policy: {e}"));
    if let Some(cons) = constraints.as_ref().filter(|c| autogen::eligible(c)) {
        let controllers: Option<Vec<String>> = spec
            .get_path(&["autogen", "podControllers", "controllers"])
            .map(Node::str_items);
        for (target, cons) in autogen::copies(cons, controllers.as_deref()) {
            c.rewriting(Some(target), autogen::rewrite);
            let before = c.errors.len();
            let v = variant(&mut c, &spec, Some(cons), false);
            if broken.is_none()
                && let Some(e) = c.errors.get(before)
            {
                broken = Some(format!("failed to compile policy: {e}"));
            }
            variants.push(v);
        }
    }
    let flag = |path: &[&str]| match spec.get_path(path).map(|n| &n.value) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    let actions = spec
        .get("validationActions")
        .map(Node::str_items)
        .unwrap_or_default();
    let body = ImageValidatingPolicy {
        kind,
        name: opened.envelope.name.clone(),
        variants,
        ignore_failures: spec.get("failurePolicy").and_then(Node::as_str) == Some("Ignore"),
        verify_digest: flag(&["validationConfigurations", "verifyDigest"]).unwrap_or(true),
        json_mode: spec
            .get_path(&["evaluation", "mode"])
            .and_then(Node::as_str)
            == Some("JSON"),
        action: FailureAction::from_validation_actions(actions.iter().map(String::as_str)),
        broken,
    };
    opened.policy(source, node, Arc::new(body))
}

/// One variant: the spec's expressions compiled (rewritten for an autogen copy).
fn variant(
    c: &mut Compiler<'_>,
    spec: &Node,
    constraints: Option<Constraints>,
    as_written: bool,
) -> Variant {
    let match_conditions = c.named(spec, "matchConditions", true);
    let variables = c.named(spec, "variables", true);
    let images = c.named(spec, "images", true);
    let mut match_images = Vec::new();
    for (i, m) in c.list(spec, "matchImageReferences").iter().enumerate() {
        if let Some(g) = m
            .get("glob")
            .and_then(Node::as_str)
            .filter(|g| !g.is_empty())
        {
            match Glob::new(g) {
                Ok(glob) => match_images.push(ImageMatch::Glob(glob)),
                Err(e) => c.problem(format!("matchImageReferences[{i}].glob: {e}"), m.span),
            }
        } else if m.get("expression").is_some() {
            let field = format!("matchImageReferences[{i}].expression");
            let p = c.program(m.get("expression"), &field, true, m.span);
            match_images.push(ImageMatch::Expression(p));
        } else {
            c.problem(
                format!("matchImageReferences[{i}]: either glob or expression must be set"),
                m.span,
            );
        }
    }
    let mut validations = Vec::new();
    for (i, v) in c.list(spec, "validations").iter().enumerate() {
        let field = format!("validations[{i}].expression");
        let expression = c.program(v.get("expression"), &field, true, v.span);
        let message_expression = v.get("messageExpression").map(|m| {
            let field = format!("validations[{i}].messageExpression");
            c.program(Some(m), &field, true, v.span)
        });
        validations.push(CelValidation {
            expression,
            message: v.get("message").and_then(Node::as_str).map(str::to_owned),
            message_expression,
        });
    }
    let mut audit_annotations = Vec::new();
    for (i, a) in c.list(spec, "auditAnnotations").iter().enumerate() {
        let key = a.get("key").and_then(Node::as_str).unwrap_or("").to_owned();
        let field = format!("auditAnnotations[{i}].valueExpression");
        let p = c.program(a.get("valueExpression"), &field, true, a.span);
        audit_annotations.push((key, p));
    }
    let attestors = c
        .list(spec, "attestors")
        .iter()
        .map(|a| {
            let name = a
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned();
            (name, a.clone())
        })
        .collect();
    let attestations = c
        .list(spec, "attestations")
        .iter()
        .filter_map(|a| a.get("name").and_then(Node::as_str).map(str::to_owned))
        .collect();
    Variant {
        constraints,
        match_conditions,
        variables,
        images,
        match_images,
        validations,
        audit_annotations,
        attestors,
        attestations,
        exceptions_apply: as_written,
    }
}
