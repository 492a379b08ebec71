//! For `kpol explain`: which validation of a ValidatingPolicy fails on a resource, with the
//! values of its top-level operands and of the `object.…` fields it reads. It binds what
//! [`super::evaluate`] binds for the matching variant (PolicyExceptions aside: an explained
//! failure was not excepted), then evaluates the validations in order until one is false.

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

use super::CelPolicy;
use super::evaluate::namespace_object;
use crate::cel::admission::bind_admission;
use crate::cel::convert::{map_of, string, strings, to_cel};
use crate::cel::{Activation, Program, ResourceValues};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::source::Span;

/// The failing validation of a ValidatingPolicy.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedValidation {
    /// Its position in `spec.validations` (of the variant that matched: an autogen copy for a
    /// pod controller).
    pub index: usize,
    /// The expression as written (an autogen copy's rewritten text).
    pub expression: String,
    /// Where the expression is written in the policy file.
    pub span: Span,
    /// The expression's top-level operands (the conjuncts of `a && b`, both sides of a
    /// comparison, the operand of `!`), each as kpol writes it back and its value (or the
    /// evaluation error).
    pub operands: Vec<(String, String)>,
    /// Every `object.a.b…` chain the expression reads, as a path.
    pub reads: Vec<Vec<String>>,
}

/// The first validation of `policy` that is false (or errors) on `resource`; `None` when the
/// policy is not a ValidatingPolicy that matches the resource, or every validation holds.
pub fn failed_validation(
    policy: &CelPolicy,
    resource: &Resource,
    request: &Request,
) -> Option<FailedValidation> {
    let _budget = crate::base::budget::Scope::enter();
    let values = ResourceValues::new();
    let variant = policy.variants.iter().find(|v| {
        v.constraints
            .as_ref()
            .is_some_and(|c| c.matches(resource, request))
    })?;
    let mut act = Activation::new();
    bind_admission(
        &mut act,
        resource,
        request,
        &values,
        request.operation,
        true,
    );
    act.set("namespaceObject", namespace_object(resource, request));
    let none = || strings(std::iter::empty::<&str>());
    act.set(
        "exceptions",
        map_of([("allowedImages", none()), ("allowedValues", none())]),
    );
    act.bind_variables(variant.variables.iter().map(|(n, p)| (n.as_str(), p)));
    first_false(&act, &variant.validations)
}

/// [`failed_validation`] for a ClusterPolicy `validate.cel` rule: `object`, `oldObject`,
/// `request` and `namespaceObject` bound as [`super::cel_rule::evaluate`] binds them (for the
/// request's operation), then its variables.
pub fn failed_cel_rule(
    rule: &crate::policy::CelRule,
    resource: &Resource,
    request: &Request,
) -> Option<FailedValidation> {
    let _budget = crate::base::budget::Scope::enter();
    let mut act = Activation::new();
    let op = request.operation;
    let object = to_cel(&resource.root);
    let (object, old) = match op {
        Operation::Update => (object.clone(), object),
        Operation::Delete => (cel::Value::Null, object),
        _ => (object, cel::Value::Null),
    };
    act.set("object", object);
    act.set("oldObject", old);
    act.set(
        "request",
        super::evaluate::request_value(resource, request, op, None, false),
    );
    let ns = if resource.namespace.is_empty() || resource.kind == "Namespace" {
        cel::Value::Null
    } else if let Some(ns) = request.namespaces.get(&resource.namespace) {
        to_cel(ns)
    } else {
        map_of([("metadata", map_of([("name", string(&resource.namespace))]))])
    };
    act.set("namespaceObject", ns);
    act.bind_variables(rule.variables.iter().map(|(n, p)| (n.as_str(), p)));
    first_false(&act, &rule.validations)
}

/// The first of `validations` that is not true in `act`, with its operands and reads.
fn first_false(act: &Activation, validations: &[super::Validation]) -> Option<FailedValidation> {
    let (index, val) = validations
        .iter()
        .enumerate()
        .find(|(_, v)| act.eval_bool(&v.expression) != Ok(true))?;
    let program = &val.expression;
    let (operands, reads) = match &program.expr {
        Ok(expr) => (
            top_operands(expr)
                .into_iter()
                // A literal's value is what it says.
                .filter(|e| !matches!(e.expr, Expr::Literal(_)))
                .map(|e| (written(e), value_of(act, program, e)))
                .collect(),
            object_reads(expr),
        ),
        Err(_) => (Vec::new(), Vec::new()),
    };
    Some(FailedValidation {
        index,
        expression: program.text.clone(),
        span: program.span,
        operands,
        reads,
    })
}

/// The operands worth a value: a conjunction or disjunction split into its parts, a
/// negation or comparison into its operands; else the expression itself.
fn top_operands(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(c) if c.target.is_none() && matches!(c.func_name.as_str(), "_&&_" | "_||_") => {
            let mut out = Vec::new();
            for a in &c.args {
                match &a.expr {
                    Expr::Call(inner) if inner.func_name == c.func_name => {
                        out.extend(top_operands(a));
                    }
                    _ => out.push(a),
                }
            }
            out
        }
        Expr::Call(c) if c.target.is_none() && infix(&c.func_name).is_some() => {
            c.args.iter().collect()
        }
        Expr::Call(c) if c.target.is_none() && c.func_name == "!_" => c.args.iter().collect(),
        _ => vec![expr],
    }
}

fn value_of(act: &Activation, program: &Program, e: &IdedExpr) -> String {
    let sub = Program {
        text: written(e),
        span: program.span,
        expr: Ok(e.clone()),
    };
    match act.eval(&sub) {
        Ok(v) => crate::cel::convert::to_node(&v).to_json().to_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// Every chain of field selections on `object` the expression writes, in writing order,
/// each once.
fn object_reads(expr: &IdedExpr) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if let Some(path) = object_chain(e) {
            if !out.contains(&path) {
                out.push(path);
            }
            continue;
        }
        let mut children: Vec<&IdedExpr> = Vec::new();
        match &e.expr {
            Expr::Select(s) => children.push(&s.operand),
            Expr::Call(c) => {
                children.extend(c.target.as_deref());
                children.extend(c.args.iter());
            }
            Expr::Comprehension(c) => {
                children.extend([&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step]);
                children.push(&c.result);
            }
            Expr::List(l) => children.extend(l.elements.iter()),
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        children.extend([&me.key, &me.value]);
                    }
                }
            }
            Expr::Struct(_) | Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
        stack.extend(children.into_iter().rev());
    }
    out
}

/// `object.a.b` (optional selections `object.?a` too) as `["a", "b"]`.
fn object_chain(e: &IdedExpr) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut at = e;
    loop {
        match &at.expr {
            Expr::Select(s) => {
                fields.push(s.field.clone());
                at = &s.operand;
            }
            Expr::Call(c) if c.func_name == "_?._" && c.args.len() == 2 => {
                let Some(Expr::Literal(LiteralValue::String(f))) = c.args.get(1).map(|a| &a.expr)
                else {
                    return None;
                };
                fields.push(f.inner().to_owned());
                at = c.args.first()?;
            }
            Expr::Ident(name) if name == "object" && !fields.is_empty() => break,
            _ => return None,
        }
    }
    fields.reverse();
    Some(fields)
}

/// The infix spelling of an operator function.
fn infix(func: &str) -> Option<&'static str> {
    Some(match func {
        "_==_" => "==",
        "_!=_" => "!=",
        "_<_" => "<",
        "_<=_" => "<=",
        "_>_" => ">",
        "_>=_" => ">=",
        "_+_" => "+",
        "_-_" => "-",
        "_*_" => "*",
        "_/_" => "/",
        "_%_" => "%",
        "@in" => "in",
        "_&&_" => "&&",
        "_||_" => "||",
        _ => return None,
    })
}

/// The expression written back as CEL text (macros by their usual spelling; what kpol cannot
/// name is `…`). For display only.
pub fn written(e: &IdedExpr) -> String {
    match &e.expr {
        Expr::Ident(n) => n.clone(),
        Expr::Literal(l) => literal(l),
        Expr::Select(s) if s.test => format!("has({}.{})", written(&s.operand), s.field),
        Expr::Select(s) => format!("{}.{}", written(&s.operand), s.field),
        Expr::Call(c) => {
            let args: Vec<String> = c.args.iter().map(written).collect();
            match (c.target.as_deref(), c.func_name.as_str(), args.as_slice()) {
                // kpol's own budget wrappers (crate::cel::eval) are not part of the text.
                (None, "__kpolBudget__" | "__kpolSize__", [a]) => a.clone(),
                (None, "!_", [a]) => format!("!{a}"),
                (None, "-_", [a]) => format!("-{a}"),
                (None, "_?_:_", [a, b, c]) => format!("{a} ? {b} : {c}"),
                (None, "_[_]", [a, b]) => format!("{a}[{b}]"),
                (None, "_[?_]", [a, b]) => format!("{a}[?{b}]"),
                (None, "_?._", [a, _]) => match c.args.get(1).map(|x| &x.expr) {
                    Some(Expr::Literal(LiteralValue::String(f))) => format!("{a}.?{}", f.inner()),
                    _ => format!("{a}.?…"),
                },
                (None, f, [a, b]) if infix(f).is_some() => {
                    format!("{a} {} {b}", infix(f).unwrap_or(f))
                }
                (None, f, _) => format!("{f}({})", args.join(", ")),
                (Some(t), f, _) => format!("{}.{f}({})", written(t), args.join(", ")),
            }
        }
        Expr::List(l) => format!(
            "[{}]",
            l.elements
                .iter()
                .map(written)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Map(m) => {
            let entries: Vec<String> = m
                .entries
                .iter()
                .map(|en| match &en.expr {
                    EntryExpr::MapEntry(me) => {
                        format!("{}: {}", written(&me.key), written(&me.value))
                    }
                    EntryExpr::StructField(f) => format!("{}: {}", f.field, written(&f.value)),
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Expr::Comprehension(c) => {
            // The macros' accumulators tell them apart: `all` starts true, `exists` false.
            let name = match &c.accu_init.expr {
                Expr::Literal(LiteralValue::Boolean(b)) if **b => "all",
                Expr::Literal(LiteralValue::Boolean(_)) => "exists",
                Expr::Literal(LiteralValue::Int(_)) => "exists_one",
                _ => "map",
            };
            format!("{}.{name}({}, …)", written(&c.iter_range), c.iter_var)
        }
        Expr::Struct(s) => format!("{}{{…}}", s.type_name),
        Expr::Unspecified => "…".to_owned(),
    }
}

fn literal(l: &LiteralValue) -> String {
    match l {
        LiteralValue::Boolean(b) => b.to_string(),
        LiteralValue::Int(i) => i.to_string(),
        LiteralValue::UInt(u) => format!("{}u", **u),
        LiteralValue::Double(d) => d.to_string(),
        LiteralValue::String(s) => format!("{:?}", s.inner()),
        LiteralValue::Bytes(_) => "b\"…\"".to_owned(),
        LiteralValue::Null => "null".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    use crate::test_support::parse_cel as parse;

    #[test]
    fn operands_split_conjunctions_and_comparisons() {
        let e = parse("has(object.metadata.labels) && object.spec.replicas >= 2");
        let ops: Vec<String> = top_operands(&e).into_iter().map(written).collect();
        assert_eq!(
            ops,
            ["has(object.metadata.labels)", "object.spec.replicas >= 2"]
        );
        let e = parse("object.spec.replicas >= 2");
        let ops: Vec<String> = top_operands(&e).into_iter().map(written).collect();
        assert_eq!(ops, ["object.spec.replicas", "2"]);
        let e = parse("!(object.spec.hostNetwork == true)");
        let ops: Vec<String> = top_operands(&e).into_iter().map(written).collect();
        assert_eq!(ops, ["object.spec.hostNetwork == true"]);
    }

    #[test]
    fn reads_are_every_object_chain_once() {
        let e = parse(
            "object.spec.containers.all(c, c.image != '') && size(object.spec.containers) > 0 && object.?metadata.?labels.orValue({}) != {}",
        );
        assert_eq!(
            object_reads(&e),
            [vec!["spec", "containers"], vec!["metadata", "labels"]]
        );
    }
}
