//! Kubernetes' object literals for mutating expressions (cel.md §6.2): `Object{…}`,
//! `Object.spec{…}`, `JSONPatch{…}` — CEL message construction whose type names are dotted field
//! paths rather than declared types.
//!
//! The `cel` crate resolves a struct literal through a registered type of exactly that name,
//! and the names here are open-ended. So a mutating expression is lowered once, when compiled
//! ([`lower_struct_literals`]): every `Name{f: v}` becomes a call building a map of its fields
//! that remembers its type name under [`TYPE_KEY`]. That name is what Kubernetes' run-time check
//! reads (k8s `apiserver/pkg/cel/mutation/dynamic/objects.go`,
//! `CheckTypeNamesMatchFieldPathNames`): a literal under field `f` of a literal named `N` must be
//! named `N.f`, through lists and maps in between ([`check_type_names`]). [`to_plain_node`]
//! turns a result back into data, without the names.

use std::sync::Arc;

use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedEntryExpr, LiteralValue, MapEntryExpr};
use cel::objects::{Key, Map};
use cel::{IdedExpr, Value};

use crate::yaml::{Node, Value as Y};

/// The function a lowered literal calls: `__kpolObject__(typeName, {fields})`.
pub(crate) const OBJECT: &str = "__kpolObject__";
/// The key a lowered literal keeps its type name under. Never written out as data.
pub(crate) const TYPE_KEY: &str = "__kpolObjectType__";

/// Rewrites every struct literal of `expr` into a call of [`OBJECT`] (see the module doc).
pub(crate) fn lower_struct_literals(expr: &mut IdedExpr) {
    // Fresh ids above those compiling hands out (crate::cel::compile::instrument).
    let mut next_id = u64::MAX / 4 * 3;
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if let Expr::Struct(s) = &mut e.expr {
            let name = std::mem::take(&mut s.type_name);
            let entries = std::mem::take(&mut s.entries)
                .into_iter()
                .filter_map(|entry| match entry.expr {
                    EntryExpr::StructField(f) => {
                        next_id += 1;
                        let key = IdedExpr {
                            id: next_id,
                            expr: Expr::Literal(LiteralValue::String(f.field.into())),
                        };
                        Some(IdedEntryExpr {
                            id: entry.id,
                            expr: EntryExpr::MapEntry(MapEntryExpr {
                                key,
                                value: f.value,
                                optional: f.optional,
                            }),
                        })
                    }
                    // The parser builds struct literals from fields only.
                    EntryExpr::MapEntry(_) => None,
                })
                .collect();
            next_id += 1;
            let name_arg = IdedExpr {
                id: next_id,
                expr: Expr::Literal(LiteralValue::String(name.into())),
            };
            next_id += 1;
            let fields = IdedExpr {
                id: next_id,
                expr: Expr::Map(cel::common::ast::MapExpr { entries }),
            };
            e.expr = Expr::Call(CallExpr {
                func_name: OBJECT.to_owned(),
                target: None,
                args: vec![name_arg, fields],
            });
        }
        match &mut e.expr {
            Expr::Call(c) => {
                if let Some(t) = c.target.as_deref_mut() {
                    stack.push(t);
                }
                stack.extend(c.args.iter_mut());
            }
            Expr::Comprehension(c) => {
                let c = &mut **c;
                stack.push(&mut c.iter_range);
                stack.push(&mut c.accu_init);
                stack.push(&mut c.loop_cond);
                stack.push(&mut c.loop_step);
                stack.push(&mut c.result);
            }
            Expr::List(l) => stack.extend(l.elements.iter_mut()),
            Expr::Map(m) => {
                for entry in &mut m.entries {
                    if let EntryExpr::MapEntry(me) = &mut entry.expr {
                        stack.push(&mut me.key);
                        stack.push(&mut me.value);
                    }
                }
            }
            Expr::Select(s) => stack.push(&mut s.operand),
            _ => {}
        }
    }
}

/// `__kpolObject__(name, fields)`: the fields with the type name beside them.
pub(super) fn object(
    cel::extractors::Arguments(args): cel::extractors::Arguments,
) -> Result<Value, cel::ExecutionError> {
    let [Value::String(name), Value::Map(fields)] = args.as_slice() else {
        return Err(cel::ExecutionError::function_error(
            OBJECT,
            "expects a type name and a map of fields",
        ));
    };
    let mut map = (*fields.map).clone();
    map.insert(
        Key::String(Arc::new(TYPE_KEY.to_owned())),
        Value::String(name.clone()),
    );
    Ok(Value::Map(Map { map: Arc::new(map) }))
}

/// The type name of an object literal's value; `None` for any other value.
pub(crate) fn type_name(value: &Value) -> Option<&str> {
    match value {
        Value::Map(m) => match m.map.get(&Key::String(Arc::new(TYPE_KEY.to_owned()))) {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// Kubernetes' check of an object literal: every literal nested in `value` is named after its
/// field path from `value`'s own name. Every mismatch is reported, joined by newlines.
pub(crate) fn check_type_names(value: &Value) -> Result<(), String> {
    let Some(root) = type_name(value) else {
        return Ok(());
    };
    let mut errors = Vec::new();
    let mut stack: Vec<(&Value, String)> = vec![(value, root.to_owned())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Map(m) => {
                let named = type_name(v);
                if let Some(tn) = named
                    && tn != path
                {
                    errors.push(format!(
                        "unexpected type name \"{tn}\", expected \"{path}\", which matches field name path from root Object type"
                    ));
                }
                for (k, child) in m.map.iter() {
                    match (named, k) {
                        (_, Key::String(s)) if s.as_str() == TYPE_KEY => {}
                        (Some(_), Key::String(s)) => stack.push((child, format!("{path}.{s}"))),
                        // A plain map: its values sit at the map's own path.
                        _ => stack.push((child, path.clone())),
                    }
                }
            }
            Value::List(l) => stack.extend(l.iter().map(|c| (c, path.clone()))),
            _ => {}
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        errors.sort();
        Err(errors.join("\n"))
    }
}

/// A CEL result as a YAML node, object literals as the maps of their fields (keys sorted).
pub(crate) fn to_plain_node(value: &Value) -> Node {
    Node::synthetic(match value {
        Value::List(l) => Y::Seq(l.iter().map(to_plain_node).collect()),
        Value::Map(m) => {
            let mut entries: Vec<(String, &Value)> = m
                .map
                .iter()
                .filter_map(|(k, v)| match k {
                    Key::String(s) if s.as_str() == TYPE_KEY => None,
                    Key::String(s) => Some((s.to_string(), v)),
                    Key::Int(i) => Some((i.to_string(), v)),
                    Key::Uint(u) => Some((u.to_string(), v)),
                    Key::Bool(b) => Some((b.to_string(), v)),
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = crate::yaml::Map::with_capacity(entries.len());
            for (k, v) in entries {
                out.insert(k, crate::source::Span::EMPTY, to_plain_node(v));
            }
            Y::Map(out)
        }
        other => return super::convert::to_node(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::{Activation, compile};
    use crate::source::Span;

    fn eval(text: &str) -> Result<Value, String> {
        let (mut p, err) = compile(text, Span::EMPTY);
        assert!(err.is_none(), "{err:?}");
        if let Ok(e) = p.expr.as_mut() {
            lower_struct_literals(e);
        }
        let mut a = Activation::new();
        a.set(
            "object",
            crate::cel::convert::map_of([("x", Value::Int(1))]),
        );
        a.eval(&p)
    }

    #[test]
    fn object_literals_build_named_maps() {
        let v = eval("Object{metadata: Object.metadata{labels: {'a': 'b'}}}").unwrap();
        assert_eq!(type_name(&v), Some("Object"));
        assert_eq!(check_type_names(&v), Ok(()));
        assert_eq!(
            to_plain_node(&v).to_json(),
            serde_json::json!({"metadata": {"labels": {"a": "b"}}})
        );
        // Fields read back like any map's, and see the activation.
        let v = eval("Object.spec{replicas: object.x + 1}.replicas").unwrap();
        assert_eq!(v, Value::Int(2));
    }

    #[test]
    fn names_must_follow_the_field_path() {
        let ok = eval(
            "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'c'}], m: {'k': Object.spec.m{}}}}",
        )
        .unwrap();
        assert_eq!(check_type_names(&ok), Ok(()));
        let bad = eval("Object{spec: Object.spec{template: Object.spec.template{metadata: Object.metadata{}}}}")
            .unwrap();
        let e = check_type_names(&bad).unwrap_err();
        assert!(
            e.contains(
                "unexpected type name \"Object.metadata\", expected \"Object.spec.template.metadata\""
            ),
            "{e}"
        );
        // A literal's own root is its name: a JSONPatch value checks from there.
        let v = eval("JSONPatch{op: 'add', path: '/a', value: Object.spec{x: Object.spec.x{}}}")
            .unwrap();
        assert_eq!(type_name(&v), Some("JSONPatch"));
        let Value::Map(m) = &v else { panic!() };
        let value = m.map.get(&Key::from("value")).unwrap();
        assert_eq!(check_type_names(value), Ok(()));
    }

    #[test]
    fn escape_key_escapes_pointer_characters() {
        assert_eq!(
            eval("jsonpatch.escapeKey('k8s.io/a~b')"),
            Ok(Value::from("k8s.io~1a~0b"))
        );
    }
}
