//! ValidatingPolicy / ValidatingAdmissionPolicy documents → a [`Policy`] whose body is the
//! compiled [`CelPolicy`]. Every expression is compiled
//! here, once; a syntax error is a diagnostic at its line:column and makes every evaluation of
//! the policy an error (as Kyverno's compiler does).

use std::sync::Arc;

use super::autogen;
use super::constraints::Constraints;
use super::{Binding, CelKind, CelPolicy, Validation, Variant};
use crate::cel::{Program, compile, syntax_diagnostic};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::policy::{Envelope, Policy, PolicyKind};
use crate::report::FailureAction;
use crate::source::{Source, Span};
use crate::yaml::Node;

/// Compiles expressions, collecting syntax-error diagnostics (for the policy as written only).
struct Compiler<'a> {
    source: &'a Source,
    diagnostics: &'a mut Vec<Diagnostic>,
    what: String,
    /// `Some` while compiling an autogen copy: the rewrite to apply.
    rewrite: Option<autogen::Target>,
    errors: Vec<String>,
    /// The errors of [`Compiler::errors`] that cel-go gives too (not kpol's parser limits).
    language_errors: Vec<String>,
    /// A ValidatingPolicy: validations and matchConditions must have the static type bool.
    boolean: bool,
}

impl Compiler<'_> {
    fn program(&mut self, node: &Node, field: &str) -> Program {
        let written = node.as_str().unwrap_or("");
        let text = match self.rewrite {
            Some(t) => autogen::rewrite(written, t),
            None => written.to_owned(),
        };
        let (program, err) = compile(&text, node.span);
        if let Some(e) = err {
            self.errors.push(format!("{field}: {}", e.message));
            if !e.limit {
                self.language_errors.push(format!("{field}: {}", e.message));
            }
            // A field that is not a string is reported by its type ([`shape_errors`]).
            if self.rewrite.is_none() && node.as_str().is_some() {
                let what = format!("{} {field}", self.what);
                self.diagnostics
                    .push(syntax_diagnostic(self.source, node.span, &what, &text, &e));
            }
        }
        program
    }

    /// [`Compiler::program`] for an expression Kyverno's ValidatingPolicy compiler requires
    /// to be of type bool: one whose static type is surely another
    /// ([`surely_not_bool`]) is a compile error there.
    fn bool_program(&mut self, node: &Node, field: &str) -> Program {
        let program = self.program(node, field);
        if self.boolean
            && let Ok(e) = &program.expr
            && surely_not_bool(&e.expr)
        {
            let e = format!("{field}: output is expected to be of type bool");
            self.errors.push(e.clone());
            self.language_errors.push(e);
        }
        program
    }

    fn named(&mut self, spec: &Node, key: &str) -> Vec<(String, Program)> {
        seq(spec.get(key))
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let name = n
                    .get("name")
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_owned();
                let expr = n.get("expression").cloned().unwrap_or_else(Node::null);
                let field = format!("{key}[{i}].expression");
                let program = if key == "matchConditions" {
                    self.bool_program(&expr, &field)
                } else {
                    self.program(&expr, &field)
                };
                (name, program)
            })
            .collect()
    }

    fn variant(&mut self, spec: &Node, constraints: Option<Constraints>) -> Variant {
        let match_conditions = self.named(spec, "matchConditions");
        let variables = self.named(spec, "variables");
        let mut validations = Vec::new();
        for (i, v) in seq(spec.get("validations")).iter().enumerate() {
            let expr = v.get("expression").cloned().unwrap_or_else(Node::null);
            let expression = self.bool_program(&expr, &format!("validations[{i}].expression"));
            let message = v
                .get("message")
                .and_then(Node::as_str)
                .map(|m| match self.rewrite {
                    Some(t) => autogen::rewrite(m, t),
                    None => m.to_owned(),
                });
            let message_expression = v
                .get("messageExpression")
                .map(|m| self.program(m, &format!("validations[{i}].messageExpression")));
            validations.push(Validation {
                expression,
                message,
                message_expression,
            });
        }
        let audit_annotations = seq(spec.get("auditAnnotations"))
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let key = a.get("key").and_then(Node::as_str).unwrap_or_default();
                a.get("valueExpression").map(|e| {
                    let p = self.program(e, &format!("auditAnnotations[{i}].valueExpression"));
                    (key.to_owned(), p)
                })
            })
            .collect();
        Variant {
            constraints,
            match_conditions,
            variables,
            validations,
            audit_annotations,
        }
    }
}

/// Whether cel-go's checker surely gives `expr` a static type other than bool in Kyverno's
/// ValidatingPolicy environment, where `object` and `oldObject` are `dyn`: a field or index
/// selection rooted at them (dyn), an optional selection (an optional), a literal that is
/// not a bool, a list or map literal, a `dyn(…)` call, a conditional whose branches are
/// both such. Anything else
/// (operators, macros, functions, `variables`, `request`) is left to evaluation.
fn surely_not_bool(expr: &cel::common::ast::Expr) -> bool {
    use cel::common::ast::{Expr, LiteralValue};
    match expr {
        Expr::Ident(name) => name == "object" || name == "oldObject",
        Expr::Select(s) => !s.test && surely_not_bool(&s.operand.expr),
        Expr::Literal(l) => !matches!(l, LiteralValue::Boolean(_)),
        Expr::List(_) | Expr::Map(_) => true,
        Expr::Call(c) => match (c.func_name.as_str(), c.args.as_slice()) {
            ("_[_]", [target, _]) => surely_not_bool(&target.expr),
            // An optional selection is an optional, whatever it selects.
            ("_?._" | "_[?_]", [_, _]) => true,
            ("dyn", [_]) => c.target.is_none(),
            ("_?_:_", [_, a, b]) => surely_not_bool(&a.expr) && surely_not_bool(&b.expr),
            _ => false,
        },
        _ => false,
    }
}

/// The fields of `spec` a CEL policy is made of, checked for their type (Kyverno's and the
/// API server's schema): `(what is wrong, where)` for each one that is not what it must be.
/// A policy with any is invalid, never a pass (issue #19).
fn shape_errors(spec: &Node) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    if spec.is_null() {
        return out;
    }
    if spec.as_map().is_none() {
        out.push((
            format!("spec must be a map, not {}", spec.value.type_name()),
            spec.span,
        ));
        return out;
    }
    if let Some(m) = spec.get("matchConstraints")
        && !m.is_null()
        && m.as_map().is_none()
    {
        out.push((
            format!(
                "matchConstraints must be a map, not {}",
                m.value.type_name()
            ),
            m.span,
        ));
    }
    // Each list, and the string fields of its items (required ones first).
    let lists: [(&str, &[&str], &[&str]); 4] = [
        ("matchConditions", &["name", "expression"], &[]),
        ("variables", &["name", "expression"], &[]),
        (
            "validations",
            &["expression"],
            &["message", "messageExpression", "reason"],
        ),
        ("auditAnnotations", &["key", "valueExpression"], &[]),
    ];
    for (key, required, optional) in lists {
        let Some(list) = spec.get(key).filter(|n| !n.is_null()) else {
            continue;
        };
        let Some(items) = list.as_seq() else {
            out.push((
                format!("{key} must be a list, not {}", list.value.type_name()),
                list.span,
            ));
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if item.as_map().is_none() {
                out.push((
                    format!("{key}[{i}] must be a map, not {}", item.value.type_name()),
                    item.span,
                ));
                continue;
            }
            for field in required.iter().chain(optional) {
                match item.get(field) {
                    None if required.contains(field) => {
                        out.push((format!("{key}[{i}].{field} is required"), item.span))
                    }
                    Some(v)
                        if v.as_str().is_none() && (!v.is_null() || required.contains(field)) =>
                    {
                        out.push((
                            format!(
                                "{key}[{i}].{field} must be a string, not {}",
                                v.value.type_name()
                            ),
                            v.span,
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

fn seq(n: Option<&Node>) -> &[Node] {
    n.and_then(Node::as_seq).unwrap_or(&[])
}

/// The action of `spec.validationActions` (absent or empty: Kyverno's default `[Deny]`).
fn validation_actions(spec: Option<&Node>) -> FailureAction {
    FailureAction::from_validation_actions(
        seq(spec.and_then(|s| s.get("validationActions")))
            .iter()
            .filter_map(Node::as_str),
    )
}

/// The loader of `ValidatingPolicy` / `NamespacedValidatingPolicy` (policies.kyverno.io,
/// cel.md §1) in `crate::kinds::LOADERS`; the kyverno-authz modes HTTP and Envoy too (super::authz).
pub fn validating_policy(
    source: &Source,
    node: Node,
    bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    let kind = if node.get("kind").and_then(Node::as_str) == Some("ValidatingPolicy") {
        CelKind::ValidatingPolicy
    } else {
        CelKind::NamespacedValidatingPolicy
    };
    Ok(load(source, node, kind, bindings, diagnostics))
}

/// The loader of `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1) in
/// `crate::kinds::LOADERS`.
pub(crate) fn admission_policy(
    source: &Source,
    node: Node,
    bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    let kind = CelKind::ValidatingAdmissionPolicy;
    Ok(load(source, node, kind, bindings, diagnostics))
}

/// Builds the policy for a ValidatingPolicy / NamespacedValidatingPolicy / VAP document.
/// `bindings` are the VAP bindings found with it.
pub fn load(
    source: &Source,
    node: Node,
    kind: CelKind,
    bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Policy {
    let cluster = if kind == CelKind::ValidatingAdmissionPolicy {
        PolicyKind::ValidatingAdmissionPolicy
    } else {
        PolicyKind::ValidatingPolicy
    };
    let opened = Envelope::open(&node, cluster, Some(PolicyKind::NamespacedValidatingPolicy));
    let name = opened.envelope.name.clone();
    let spec = opened.spec.clone();
    let kind_str = match kind {
        CelKind::ValidatingPolicy => "ValidatingPolicy",
        CelKind::NamespacedValidatingPolicy => "NamespacedValidatingPolicy",
        CelKind::ValidatingAdmissionPolicy => "ValidatingAdmissionPolicy",
    };
    let mut c = Compiler {
        source,
        diagnostics,
        what: format!("{kind_str} {name}"),
        rewrite: None,
        errors: Vec::new(),
        language_errors: Vec::new(),
        boolean: false,
    };
    let mut broken = None;
    for (what, span) in shape_errors(&spec) {
        c.diagnostics.push(Diagnostic::error(
            Code::InvalidPolicy,
            format!("{kind_str} {name}: {what}"),
            Some(Location::at(source, span)),
        ));
        broken.get_or_insert_with(|| format!("invalid policy: {what}"));
    }
    let constraints = match spec.get("matchConstraints").map(Constraints::read) {
        Some(Ok(m)) => Some(m),
        Some(Err(e)) => {
            broken = Some(format!("invalid matchConstraints: {e}"));
            None
        }
        None => None,
    };
    let mode = spec
        .get_path(&["evaluation", "mode"])
        .and_then(Node::as_str)
        .unwrap_or("Kubernetes");
    // The authorization modes (kyverno-authz) answer requests, not resources (super::authz).
    let authz =
        super::authz::AuthzMode::from_mode(mode).filter(|_| kind == CelKind::ValidatingPolicy);
    if authz.is_none() && matches!(mode, "Envoy" | "HTTP") {
        // The Kyverno CLI hands only cluster-wide ValidatingPolicies to kyverno-authz.
        broken = Some(format!(
            "unsupported: evaluation mode {mode} in a {kind_str}"
        ));
    }
    let json_mode = mode == "JSON";
    // The authorization modes answer with responses, not booleans (kyverno-authz compiles
    // them).
    c.boolean = kind != CelKind::ValidatingAdmissionPolicy && !matches!(mode, "Envoy" | "HTTP");
    let mut variants = vec![c.variant(&spec, constraints.clone())];
    if kind == CelKind::ValidatingAdmissionPolicy {
        // Kubernetes' environment, as Kyverno compiles a VAP (`pkg/admissionpolicy`
        // `validate.go`): `params` with a paramKind, no `authorizer`.
        let declared = crate::cel::k8s_env::Optional {
            params: spec.get("paramKind").is_some_and(|k| !k.is_null()),
            authorizer: false,
        };
        for v in &mut variants {
            for val in &mut v.validations {
                crate::cel::k8s_env::in_kubernetes_env(&mut val.expression, declared);
            }
        }
    }
    if let Some(err) = c.errors.first() {
        broken.get_or_insert_with(|| format!("failed to compile policy: {err}"));
    }
    let compile_error = c.language_errors.first().cloned();
    if kind != CelKind::ValidatingAdmissionPolicy
        && !json_mode
        && authz.is_none()
        && let Some(cons) = constraints.as_ref().filter(|c| autogen::eligible(c))
    {
        let controllers: Option<Vec<String>> = spec
            .get_path(&["autogen", "podControllers", "controllers"])
            .map(|n| {
                seq(Some(n))
                    .iter()
                    .filter_map(Node::as_str)
                    .map(str::to_owned)
                    .collect()
            });
        for (target, cons) in autogen::copies(cons, controllers.as_deref()) {
            c.rewrite = Some(target);
            variants.push(c.variant(&spec, Some(cons)));
        }
    }
    let bindings = bindings
        .iter()
        .filter(|b| {
            b.get("kind").and_then(Node::as_str) == Some("ValidatingAdmissionPolicyBinding")
        })
        .filter(|b| b.get_path(&["spec", "policyName"]).and_then(Node::as_str) == Some(&name))
        .map(|b| Binding {
            match_resources: b
                .get_path(&["spec", "matchResources"])
                .and_then(|m| Constraints::read(m).ok()),
            param_ref: b
                .get_path(&["spec", "paramRef"])
                .filter(|p| !p.is_null())
                .map(super::params::ParamRef::read),
            param_kind: spec.get("paramKind").filter(|k| !k.is_null()).cloned(),
            action: validation_actions(b.get("spec")),
        })
        .collect::<Vec<_>>();
    // A ValidatingPolicy's own `validationActions`; a VAP acts through its bindings (one
    // with none is evaluated as if bound with `Deny`), the policy-wide action being the
    // strongest of theirs.
    let action = match kind {
        CelKind::ValidatingAdmissionPolicy => bindings
            .iter()
            .map(|b| b.action)
            .reduce(FailureAction::stronger)
            .unwrap_or(FailureAction::Enforce),
        _ => validation_actions(Some(&spec)),
    };
    let cel = CelPolicy {
        kind,
        name: name.clone(),
        variants,
        ignore_failures: spec.get("failurePolicy").and_then(Node::as_str) == Some("Ignore"),
        json_mode,
        authz,
        bindings,
        broken,
        compile_error,
        action,
    };
    opened.policy(source, node, Arc::new(cel))
}
