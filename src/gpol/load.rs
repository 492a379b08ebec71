//! GeneratingPolicy / NamespacedGeneratingPolicy documents → a [`Policy`] whose body is the
//! compiled [`GeneratingPolicy`] (`gpol/compiler/compiler.go` `Compile`). Every expression
//! and template is compiled here, once; each problem is a diagnostic at its line:column, and
//! a policy with any is evaluated as an error (Kyverno's CLI stops the whole run on a compile
//! error, cel.md §11.2.8; kpol reports it and goes on, never passing).

use std::sync::Arc;

use super::template::{Template, TemplateError};
use super::{Entry, GeneratingPolicy};
use crate::cel::{Program, compile, syntax_diagnostic};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::policy::{Envelope, Policy, PolicyKind};
use crate::source::{Source, Span};
use crate::vpol::constraints::Constraints;
use crate::yaml::Node;

/// The loader of `GeneratingPolicy` and `NamespacedGeneratingPolicy` in
/// `crate::kinds::LOADERS`. A NamespacedGeneratingPolicy of `v1alpha1`, a version Kyverno
/// never served for it, is given back (reported as unsupported).
pub fn generating_policy(
    source: &Source,
    node: Node,
    _bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    let namespaced = node.get("kind").and_then(Node::as_str) == Some("NamespacedGeneratingPolicy");
    let v1alpha1 = node
        .get("apiVersion")
        .and_then(Node::as_str)
        .is_some_and(|v| v.ends_with("/v1alpha1"));
    if namespaced && v1alpha1 {
        return Err(node);
    }
    Ok(load(source, node, namespaced, diagnostics))
}

struct Loader<'a> {
    source: &'a Source,
    what: String,
    diagnostics: &'a mut Vec<Diagnostic>,
    /// The first problem: what every evaluation reports.
    broken: Option<String>,
    /// How many arguments `generator.Apply` takes here: 1 in a namespaced policy, else 2.
    apply_args: usize,
}

impl Loader<'_> {
    fn problem(&mut self, message: String, span: Span) {
        self.diagnostics.push(Diagnostic::error(
            Code::InvalidPolicy,
            format!("{}: {message}", self.what),
            Some(Location::at(self.source, span)),
        ));
        self.broken
            .get_or_insert_with(|| format!("failed to compile policy: {message}"));
    }

    /// A string field compiled as CEL; a missing or non-string one is a problem.
    fn program(&mut self, parent: &Node, key: &str, field: &str) -> Program {
        let node = parent.get(key);
        let Some(text) = node.and_then(Node::as_str) else {
            let (msg, span) = match node {
                None => (format!("{field} is required"), parent.span),
                Some(n) => (
                    format!("{field} must be a string, not {}", n.value.type_name()),
                    n.span,
                ),
            };
            self.problem(msg, span);
            return compile("", parent.span).0;
        };
        let span = node.map_or(parent.span, |n| n.span);
        let (program, err) = compile(text, span);
        if let Ok(expr) = &program.expr
            && let Some(found) = apply_arity(expr).filter(|n| *n != self.apply_args)
        {
            // Kyverno's type check: the overload does not exist, the policy does not compile.
            let form = if self.apply_args == 1 {
                "generator.Apply([objects]) in a namespaced policy"
            } else {
                "generator.Apply(namespace, [objects])"
            };
            self.problem(
                format!("{field}: generator.Apply takes {form}, not {found} argument(s)"),
                span,
            );
        }
        if let Some(e) = err {
            let what = format!("{} {field}", self.what);
            self.diagnostics
                .push(syntax_diagnostic(self.source, span, &what, text, &e));
            self.broken
                .get_or_insert_with(|| format!("failed to compile policy: {field}: {}", e.message));
        }
        program
    }

    /// The items of a list field (absent or null: none).
    fn list<'n>(&mut self, spec: &'n Node, key: &str) -> &'n [Node] {
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

    /// `[{name, expression}]` lists (matchConditions, variables), or `[{key, valueExpression}]`.
    fn named(&mut self, spec: &Node, key: &str, name: &str, expr: &str) -> Vec<(String, Program)> {
        let mut out = Vec::new();
        for (i, item) in self.list(spec, key).iter().enumerate() {
            let field = format!("{key}[{i}]");
            if item.as_map().is_none() {
                self.problem(
                    format!("{field} must be a map, not {}", item.value.type_name()),
                    item.span,
                );
                continue;
            }
            let n = match item.get(name).and_then(Node::as_str) {
                Some(n) => n.to_owned(),
                None => {
                    self.problem(format!("{field}.{name} must be a string"), item.span);
                    String::new()
                }
            };
            let p = self.program(item, expr, &format!("{field}.{expr}"));
            out.push((n, p));
        }
        out
    }

    fn entries(&mut self, spec: &Node) -> Vec<Entry> {
        let Some(list) = spec.get("generate").filter(|n| !n.is_null()) else {
            self.problem("generate is required".to_owned(), spec.span);
            return Vec::new();
        };
        let items = self.list(spec, "generate");
        if list.as_seq().is_some_and(<[Node]>::is_empty) {
            self.problem(
                "generate must have at least one entry".to_owned(),
                list.span,
            );
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = format!("generate[{i}]");
            let expression = item
                .get("expression")
                .filter(|e| e.as_str() != Some("") && !e.is_null());
            let template = item.get("template").filter(|t| !t.is_null());
            match (expression, template) {
                (Some(_), Some(_)) => self.problem(
                    format!("{field}: only one of expression or template may be set"),
                    item.span,
                ),
                (None, None) => self.problem(
                    format!("{field}: one of expression or template must be set"),
                    item.span,
                ),
                (Some(_), None) => {
                    let p = self.program(item, "expression", &format!("{field}.expression"));
                    out.push(Entry::Expression(p));
                }
                (None, Some(t)) => {
                    if let Some(tpl) = self.template(t, &format!("{field}.template")) {
                        out.push(Entry::Template(tpl));
                    }
                }
            }
        }
        out
    }

    fn template(&mut self, t: &Node, field: &str) -> Option<Template> {
        let Some(value) = t.get("value") else {
            self.problem(format!("{field}.value is required"), t.span);
            return None;
        };
        let Some(text) = value.as_str().filter(|s| !s.is_empty()) else {
            self.problem(
                format!("{field}.value must be a non-empty string"),
                value.span,
            );
            return None;
        };
        let interpolate = match t.get("interpolate").filter(|n| !n.is_null()) {
            None => false,
            Some(n) => match n.as_str() {
                Some("none") => false,
                Some("cel") => true,
                _ => {
                    self.problem(format!("{field}.interpolate must be none or cel"), n.span);
                    return None;
                }
            },
        };
        match Template::compile(text, interpolate) {
            Ok(tpl) => Some(tpl),
            Err(TemplateError { line, message }) => {
                let (message, span) = self.in_template(value, text, line, message, field);
                self.problem(message, span);
                None
            }
        }
    }

    /// Where template line `line` is in the policy file: for a block scalar (`|`, `>`), whose
    /// lines are the file's (indented), that line; elsewhere the value itself.
    fn in_template(
        &self,
        value: &Node,
        template: &str,
        line: Option<u32>,
        message: String,
        field: &str,
    ) -> (String, Span) {
        let message = match line {
            Some(l) => format!("{field}.value line {l}: {message}"),
            None => format!("{field}.value: {message}"),
        };
        let Some(l) = line.filter(|l| *l >= 1) else {
            return (message, value.span);
        };
        let all = self.source.text();
        let start = value.span.start as usize;
        let mut offset = all[..start.min(all.len())].rfind('\n').map_or(0, |i| i + 1);
        for _ in 1..l {
            match all[offset..].find('\n') {
                Some(nl) => offset += nl + 1,
                None => return (message, value.span),
            }
        }
        let file_line = all[offset..].split('\n').next().unwrap_or("");
        let wanted = template.lines().nth(l as usize - 1).unwrap_or("");
        // Only where the file holds the template's line as written (a block scalar).
        if file_line.trim() != wanted.trim() || wanted.trim().is_empty() {
            return (message, value.span);
        }
        let indent = file_line.len() - file_line.trim_start().len();
        let span = Span {
            start: (offset + indent) as u32,
            end: (offset + file_line.len()) as u32,
        };
        (message, span)
    }
}

/// The argument count of the first `generator.Apply` / `generator.apply` call in `expr`.
fn apply_arity(expr: &cel::IdedExpr) -> Option<usize> {
    use cel::common::ast::{EntryExpr, Expr};
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match &e.expr {
            Expr::Call(c) => {
                let on_generator = c
                    .target
                    .as_deref()
                    .is_some_and(|t| matches!(&t.expr, Expr::Ident(i) if i == "generator"));
                if on_generator && matches!(c.func_name.as_str(), "Apply" | "apply") {
                    return Some(c.args.len());
                }
                stack.extend(c.target.as_deref());
                stack.extend(c.args.iter());
            }
            Expr::Comprehension(c) => {
                stack.extend([
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ]);
            }
            Expr::List(l) => stack.extend(l.elements.iter()),
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        stack.push(&me.key);
                        stack.push(&me.value);
                    }
                }
            }
            Expr::Select(sel) => stack.push(&sel.operand),
            _ => {}
        }
    }
    None
}

/// Builds the policy for a GeneratingPolicy / NamespacedGeneratingPolicy document.
fn load(
    source: &Source,
    node: Node,
    namespaced: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Policy {
    // The envelope's namespace (test-file keys `ns/name`) is `default` when unset.
    let opened = Envelope::open(
        &node,
        PolicyKind::GeneratingPolicy,
        Some(PolicyKind::NamespacedGeneratingPolicy),
    );
    let name = opened.envelope.name.clone();
    let written_ns = node
        .get_path(&["metadata", "namespace"])
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let spec = opened.spec.clone();
    let mut l = Loader {
        source,
        what: opened.what(),
        diagnostics,
        broken: None,
        apply_args: if namespaced && written_ns.is_some() {
            1
        } else {
            2
        },
    };
    if let Some((message, span)) = opened.spec_problem() {
        // A missing spec is reported at the document.
        l.problem(message, if spec.is_null() { node.span } else { span });
    }
    let constraints = match opened.match_constraints() {
        None => None,
        Some(m) if m.as_map().is_none() => {
            l.problem(
                format!(
                    "matchConstraints must be a map, not {}",
                    m.value.type_name()
                ),
                m.span,
            );
            None
        }
        Some(m) => match Constraints::read(m) {
            Ok(c) => Some(c),
            Err(e) => {
                l.problem(format!("invalid matchConstraints: {e}"), m.span);
                None
            }
        },
    };
    let match_conditions = l.named(&spec, "matchConditions", "name", "expression");
    let variables = l.named(&spec, "variables", "name", "expression");
    let generate = l.entries(&spec);
    let audit_annotations = l.named(&spec, "auditAnnotations", "key", "valueExpression");
    let synchronize = spec
        .get_path(&["evaluation", "synchronize", "enabled"])
        .and_then(Node::as_bool)
        == Some(true);
    let gpol = GeneratingPolicy {
        name: name.clone(),
        policy_namespace: written_ns.clone().filter(|_| namespaced),
        constraints,
        match_conditions,
        variables,
        generate,
        audit_annotations,
        synchronize,
        broken: l.broken,
    };
    // The CLI evaluates GeneratingPolicies whatever `evaluation.admission` says.
    opened.policy(source, node, Arc::new(gpol))
}
