//! Where a failing CEL validation points in the resource. Kyverno reports no field for a CEL
//! failure; kpol shows the field the expression reads: the first `object.a.b…` chain written in
//! it, at its deepest step the resource has (`has(object.metadata.labels) && …` on a resource
//! without labels points at `metadata:`). An expression that reads no field of `object` points
//! at the resource, as before.

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr};

use crate::source::Span;
use crate::yaml::Node;

/// The first chain of field selections on `object` that `expr` writes, outermost field last
/// (`object.spec.containers` → `["spec", "containers"]`); `None` when it reads none.
pub(crate) fn first_object_path(expr: &IdedExpr) -> Option<Vec<&str>> {
    // Depth-first, receiver and arguments in the order they are written; explicit stack so
    // that a deeply nested expression cannot exhaust the thread's stack.
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        let mut children: Vec<&IdedExpr> = Vec::new();
        match &e.expr {
            Expr::Select(s) => {
                if let Some(path) = object_chain(e) {
                    return Some(path);
                }
                children.push(&s.operand);
            }
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
            Expr::Struct(s) => {
                for entry in &s.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => children.push(&f.value),
                        EntryExpr::MapEntry(me) => children.extend([&me.key, &me.value]),
                    }
                }
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
        stack.extend(children.into_iter().rev());
    }
    None
}

/// `object.a.b` (also under `has()`) as `["a", "b"]`.
fn object_chain(e: &IdedExpr) -> Option<Vec<&str>> {
    let mut fields = Vec::new();
    let mut at = e;
    loop {
        match &at.expr {
            Expr::Select(s) => {
                fields.push(s.field.as_str());
                at = &s.operand;
            }
            Expr::Ident(name) if name == "object" => break,
            _ => return None,
        }
    }
    fields.reverse();
    Some(fields)
}

/// The place in `root` a failure of `expr` points at (see the module doc); `None` when the
/// expression reads no field of `object` that the resource has.
pub(crate) fn failure_span(expr: &IdedExpr, root: &Node) -> Option<Span> {
    let path = first_object_path(expr)?;
    let (span, depth) = root.locate(&path);
    (depth > 0).then_some(span)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    use crate::test_support::parse_cel as parse;

    #[test]
    fn the_first_chain_written_is_taken() {
        let e = parse("has(object.metadata.labels) && 'team' in object.metadata.labels");
        assert_eq!(first_object_path(&e), Some(vec!["metadata", "labels"]));
        let e = parse("object.spec.containers.all(c, has(c.securityContext))");
        assert_eq!(first_object_path(&e), Some(vec!["spec", "containers"]));
        let e = parse("size(variables.images) < 3 || object.spec.replicas > 1");
        assert_eq!(first_object_path(&e), Some(vec!["spec", "replicas"]));
        assert_eq!(
            first_object_path(&parse("request.operation == 'CREATE'")),
            None
        );
    }

    #[test]
    fn the_deepest_existing_step_is_shown() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: []\n";
        let root = crate::yaml::parse_documents(text, Default::default())
            .unwrap()
            .remove(0)
            .root;
        let e = parse("has(object.metadata.labels) && 'team' in object.metadata.labels");
        let span = failure_span(&e, &root).unwrap();
        assert_eq!(&text[span.start as usize..span.end as usize], "metadata");
        assert_eq!(
            failure_span(&parse("object.status.phase == 'x'"), &root),
            None
        );
    }
}
