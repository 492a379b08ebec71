//! MutatingPolicy / NamespacedMutatingPolicy documents → a [`Policy`] whose body is the
//! compiled [`MutatingPolicy`]. Every expression is compiled here, once, with its object
//! literals lowered ([`crate::cel::objects`]); every problem (a syntax error, a field of the
//! wrong type, an unknown patch type) is a diagnostic at its line:column, and makes every
//! evaluation of the policy an error, as Kyverno's compiler refuses the policy.

use std::sync::Arc;

use super::autogen::{self, Target};
use super::{Existing, MutatingPolicy, Mutation, Variant};
use crate::cel::{Program, compile, syntax_diagnostic};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::policy::{Envelope, Opened, Policy, PolicyKind};
use crate::source::{Source, Span};
use crate::vpol::constraints::Constraints;
use crate::yaml::Node;

/// The loader of `MutatingPolicy` / `NamespacedMutatingPolicy` in `crate::kinds::LOADERS`.
pub fn mutating_policy(
    source: &Source,
    node: Node,
    _bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    Ok(load(source, node, diagnostics))
}

/// Compiles expressions; problems of the policy as written become diagnostics, those of an
/// autogen copy only its errors (the copy is not written anywhere). Shared with the other
/// CEL kinds written like a MutatingPolicy (`crate::dpol`, `crate::ivpol`, `crate::map`).
pub(crate) struct Compiler<'a> {
    source: &'a Source,
    diagnostics: &'a mut Vec<Diagnostic>,
    what: String,
    rewrite: Option<Target>,
    /// How an autogen copy's expressions are rewritten (MutatingPolicy's regexes by default).
    rewrite_with: fn(&str, Target) -> String,
    /// Every problem's message, in order (the first makes the policy broken).
    pub(crate) errors: Vec<String>,
}

impl<'a> Compiler<'a> {
    /// A compiler for the policy `what` (`<Kind> <name>`) written in `source`.
    pub(crate) fn new(
        source: &'a Source,
        diagnostics: &'a mut Vec<Diagnostic>,
        what: String,
    ) -> Self {
        Compiler {
            source,
            diagnostics,
            what,
            rewrite: None,
            rewrite_with: autogen::rewrite,
            errors: Vec::new(),
        }
    }

    /// A compiler for the policy a CEL loader opened ([`Envelope::open`]), with the problem
    /// of a `spec` that is not a map already recorded.
    pub(crate) fn open(
        source: &'a Source,
        diagnostics: &'a mut Vec<Diagnostic>,
        opened: &Opened,
    ) -> Self {
        let mut c = Compiler::new(source, diagnostics, opened.what());
        if let Some((message, span)) = opened.spec_problem() {
            c.problem(message, span);
        }
        c
    }

    /// Compiles what follows as the autogen copy for `target` (`None`: the policy as
    /// written), rewritten by `with`; a copy's problems are errors only, not diagnostics.
    pub(crate) fn rewriting(&mut self, target: Option<Target>, with: fn(&str, Target) -> String) {
        self.rewrite = target;
        self.rewrite_with = with;
    }
}

impl Compiler<'_> {
    /// The match constraints at `node` (when written and not null); one that does not read is
    /// the problem `invalid <what>: …`.
    pub(crate) fn constraints(&mut self, node: Option<&Node>, what: &str) -> Option<Constraints> {
        let m = node.filter(|n| !n.is_null())?;
        match Constraints::read(m) {
            Ok(cons) => Some(cons),
            Err(e) => {
                self.problem(format!("invalid {what}: {e}"), m.span);
                None
            }
        }
    }

    pub(crate) fn problem(&mut self, message: String, span: Span) {
        if self.rewrite.is_none() {
            self.diagnostics.push(Diagnostic::error(
                Code::InvalidPolicy,
                format!("{}: {message}", self.what),
                Some(Location::at(self.source, span)),
            ));
        }
        self.errors.push(message);
    }

    /// Compiles the string at `node`; `rewritten` says whether autogen rewrites this field.
    pub(crate) fn program(
        &mut self,
        node: Option<&Node>,
        field: &str,
        rewritten: bool,
        at: Span,
    ) -> Program {
        let Some(node) = node.filter(|n| !n.is_null()) else {
            self.problem(format!("{field} is required"), at);
            return compile("", at).0;
        };
        let Some(written) = node.as_str() else {
            self.problem(
                format!("{field} must be a string, not {}", node.value.type_name()),
                node.span,
            );
            return compile("", node.span).0;
        };
        let text = match self.rewrite {
            Some(t) if rewritten => (self.rewrite_with)(written, t),
            _ => written.to_owned(),
        };
        let (mut program, err) = compile(&text, node.span);
        if let Some(e) = err {
            if self.rewrite.is_none() {
                let what = format!("{} {field}", self.what);
                self.diagnostics
                    .push(syntax_diagnostic(self.source, node.span, &what, &text, &e));
            }
            self.errors.push(format!("{field}: {}", e.message));
        }
        if let Ok(expr) = program.expr.as_mut() {
            crate::cel::objects::lower_struct_literals(expr);
        }
        program
    }

    pub(crate) fn list<'n>(&mut self, spec: &'n Node, key: &str) -> &'n [Node] {
        match spec.get(key).filter(|n| !n.is_null()) {
            None => &[],
            Some(n) => match n.as_seq() {
                Some(items) => items,
                None => {
                    self.problem(
                        format!("{key} must be a list, not {}", n.value.type_name()),
                        n.span,
                    );
                    &[]
                }
            },
        }
    }

    pub(crate) fn named(
        &mut self,
        spec: &Node,
        key: &str,
        rewritten: bool,
    ) -> Vec<(String, Program)> {
        let items = self.list(spec, key);
        let mut out = Vec::with_capacity(items.len());
        for (i, n) in items.iter().enumerate() {
            if n.as_map().is_none() {
                self.problem(
                    format!("{key}[{i}] must be a map, not {}", n.value.type_name()),
                    n.span,
                );
                continue;
            }
            let name = match n.get("name") {
                Some(v) if v.as_str().is_some() => v.as_str().unwrap_or("").to_owned(),
                _ => {
                    self.problem(format!("{key}[{i}].name must be a string"), n.span);
                    String::new()
                }
            };
            let field = format!("{key}[{i}].expression");
            let program = self.program(n.get("expression"), &field, rewritten, n.span);
            out.push((name, program));
        }
        out
    }

    pub(crate) fn mutations(&mut self, spec: &Node) -> Vec<Mutation> {
        let items = self.list(spec, "mutations");
        let mut out = Vec::with_capacity(items.len());
        for (i, m) in items.iter().enumerate() {
            if m.as_map().is_none() {
                self.problem(
                    format!("mutations[{i}] must be a map, not {}", m.value.type_name()),
                    m.span,
                );
                continue;
            }
            let patch_type = m.get("patchType").and_then(Node::as_str);
            let (block, rewritten) = match patch_type {
                Some("ApplyConfiguration") => ("applyConfiguration", true),
                Some("JSONPatch") => ("jsonPatch", false),
                other => {
                    let at = m.get("patchType").map_or(m.span, |n| n.span);
                    self.problem(
                        format!(
                            "mutations[{i}].patchType must be ApplyConfiguration or JSONPatch, not {}",
                            other.map_or_else(|| "unset".to_owned(), |s| format!("{s:?}"))
                        ),
                        at,
                    );
                    continue;
                }
            };
            let expr = m.get(block).and_then(|b| b.get("expression"));
            let field = format!("mutations[{i}].{block}.expression");
            let program = self.program(expr, &field, rewritten, m.span);
            out.push(if rewritten {
                Mutation::ApplyConfiguration(program)
            } else {
                Mutation::JsonPatch(program)
            });
        }
        out
    }

    fn variant(&mut self, spec: &Node, constraints: Option<Constraints>) -> Variant {
        Variant {
            constraints,
            // Variables are not rewritten by autogen; match conditions are.
            variables: self.named(spec, "variables", false),
            match_conditions: self.named(spec, "matchConditions", true),
            mutations: self.mutations(spec),
        }
    }
}

fn load(source: &Source, node: Node, diagnostics: &mut Vec<Diagnostic>) -> Policy {
    let opened = Envelope::open(
        &node,
        PolicyKind::MutatingPolicy,
        Some(PolicyKind::NamespacedMutatingPolicy),
    );
    let name = opened.envelope.name.clone();
    let kind = opened.kind.name();
    let spec = opened.spec.clone();
    // A missing spec is no problem of a MutatingPolicy (it mutates nothing).
    let mut c = Compiler::new(source, diagnostics, opened.what());
    if let Some((message, span)) = opened.spec_problem().filter(|_| !spec.is_null()) {
        c.problem(message, span);
    }
    let constraints = c.constraints(opened.match_constraints(), "matchConstraints");
    let mut variants = vec![c.variant(&spec, constraints.clone())];
    // Kyverno refuses MAP generation when match conditions read variables (cel.md §11.1.5).
    let map_autogen = spec
        .get_path(&["autogen", "mutatingAdmissionPolicy", "enabled"])
        .and_then(|n| match &n.value {
            crate::yaml::Value::Bool(b) => Some(*b),
            _ => None,
        })
        == Some(true);
    if map_autogen
        && variants[0]
            .match_conditions
            .iter()
            .any(|(_, p)| p.text.contains("variables"))
    {
        let at = spec.get("matchConditions").map_or(spec.span, |n| n.span);
        c.problem(
            "matchConditions may not reference variables when autogen.mutatingAdmissionPolicy is enabled".to_owned(),
            at,
        );
    }
    let mut broken = c
        .errors
        .first()
        .map(|e| format!("failed to compile policy: {e}"));
    if let Some(cons) = constraints.as_ref().filter(|c| autogen::eligible(c)) {
        let controllers: Option<Vec<String>> = spec
            .get_path(&["autogen", "podControllers", "controllers"])
            .map(|n| {
                n.as_seq()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(Node::as_str)
                    .map(str::to_owned)
                    .collect()
            });
        for (target, cons) in autogen::copies(cons, controllers.as_deref()) {
            c.rewrite = Some(target);
            let before = c.errors.len();
            let v = c.variant(&spec, Some(cons));
            if broken.is_none()
                && let Some(e) = c.errors.get(before)
            {
                broken = Some(format!("failed to compile policy: {e}"));
            }
            variants.push(v);
        }
    }
    let existing = spec
        .get_path(&["evaluation", "mutateExisting", "enabled"])
        .is_some_and(|n| matches!(n.value, crate::yaml::Value::Bool(true)))
        .then(|| existing(&mut c, &spec, constraints.as_ref()));
    if broken.is_none()
        && let Some(e) = c.errors.last().filter(|_| existing.is_some())
    {
        broken = Some(format!("failed to compile policy: {e}"));
    }
    let body = MutatingPolicy {
        existing,
        kind,
        name: name.clone(),
        variants,
        ignore_failures: spec.get("failurePolicy").and_then(Node::as_str) == Some("Ignore"),
        server_side_apply: spec
            .get_path(&["evaluation", "useServerSideApply"])
            .is_some_and(|n| matches!(n.value, crate::yaml::Value::Bool(true))),
        broken,
    };
    opened.policy(source, node, Arc::new(body))
}

/// The target selection of a mutate-existing policy (`compiler.go`): `targetMatchConstraints`
/// (its resource rules, else the policy's matchConstraints, with every operation), its
/// `expression`, and `targetMatchConditions`.
fn existing(
    c: &mut Compiler<'_>,
    spec: &Node,
    match_constraints: Option<&Constraints>,
) -> Existing {
    let tmc = spec.get("targetMatchConstraints").filter(|n| !n.is_null());
    let target = match tmc {
        Some(m) => match Constraints::read(m) {
            Ok(cons) => Some(cons),
            Err(e) => {
                c.problem(format!("invalid targetMatchConstraints: {e}"), m.span);
                None
            }
        },
        None => None,
    };
    let mut constraints = match target {
        Some(t) if !t.resource_rules.is_empty() => Some(t),
        _ => match_constraints.cloned(),
    };
    if let Some(cons) = constraints.as_mut() {
        for r in &mut cons.resource_rules {
            r.operations = vec!["*".to_owned()];
        }
    }
    let expression = tmc
        .and_then(|m| m.get("expression"))
        .filter(|e| e.as_str().is_some_and(|s| !s.is_empty()))
        .map(|e| c.program(Some(e), "targetMatchConstraints.expression", false, e.span));
    Existing {
        constraints,
        expression,
        match_conditions: c.named(spec, "targetMatchConditions", false),
    }
}
