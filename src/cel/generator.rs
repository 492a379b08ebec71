//! Kyverno's `generator` library (`kyverno/sdk:extensions/cel/libs/generator`), as the Kyverno
//! CLI runs it offline: `generator.Apply(namespace, [objects])` (and `generator.apply`) records
//! the objects to create in `namespace` and returns `true`. In a namespaced policy the call is
//! `generator.Apply([objects])` and the namespace is the policy's own.
//!
//! What is recorded follows the CLI's fake provider (`kyverno/kyverno:pkg/cel/libs/
//! fake_context.go` `GenerateResources`): each object gets `metadata.namespace` set to the
//! namespace (removed when it is empty), and an object with an `items` list stands for its
//! items, each recorded alone. Objects are converted the way a `structpb.Struct` reads them:
//! every number a double, map keys strings.
//!
//! The recorder is installed for the current thread with [`collect`] around one policy's
//! evaluation (crate::gpol); outside it the calls are errors, never a silent no-op.

use std::cell::RefCell;

use cel::extractors::Arguments;
use cel::objects::Key;
use cel::{Context, ExecutionError, Value};
use serde_json::{Map, Value as Json};

/// What one evaluation recorded.
#[derive(Debug, Default)]
struct Recorder {
    /// `Some(ns)` in a namespaced policy: the one-argument form, into `ns`.
    policy_namespace: Option<String>,
    generated: Vec<Json>,
}

thread_local! {
    static CURRENT: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// Runs `f` with a recorder for this thread and returns what `generator.Apply` (and
/// [`generate_resources`]) recorded meanwhile, in call order. `policy_namespace` is the
/// namespace of a namespaced policy. The previous recorder is restored afterwards, on
/// unwinding too.
pub fn collect<R>(policy_namespace: Option<&str>, f: impl FnOnce() -> R) -> (R, Vec<Json>) {
    struct Restore(Option<Recorder>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| c.replace(previous));
        }
    }
    let recorder = Recorder {
        policy_namespace: policy_namespace.map(str::to_owned),
        generated: Vec::new(),
    };
    let restore = Restore(CURRENT.with(|c| c.replace(Some(recorder))));
    let out = f();
    let generated = CURRENT
        .with(|c| {
            c.borrow_mut()
                .as_mut()
                .map(|r| std::mem::take(&mut r.generated))
        })
        .unwrap_or_default();
    drop(restore);
    (out, generated)
}

/// How many objects the current recorder holds (0 without one).
pub fn recorded() -> usize {
    CURRENT.with(|c| c.borrow().as_ref().map_or(0, |r| r.generated.len()))
}

/// `GenerateResources(namespace, objects)` of the fake provider: records `objects` (JSON
/// objects) in `namespace`. An error when no recorder is installed or an `items` entry is not
/// an object.
pub(crate) fn generate_resources(namespace: &str, objects: Vec<Json>) -> Result<(), String> {
    let mut out = Vec::new();
    for object in objects {
        match object.get("items").and_then(Json::as_array) {
            Some(items) => {
                for item in items {
                    if !item.is_object() {
                        return Err(format!(
                            "items member is not an object: {}",
                            type_name(item)
                        ));
                    }
                    out.push(with_namespace(item.clone(), namespace));
                }
            }
            None => out.push(with_namespace(object, namespace)),
        }
    }
    CURRENT.with(|c| match c.borrow_mut().as_mut() {
        Some(r) => {
            r.generated.extend(out);
            Ok(())
        }
        None => Err("generator is only available in a GeneratingPolicy".to_owned()),
    })
}

fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "map",
    }
}

/// `SetNamespace`: set, or removed when empty.
fn with_namespace(mut object: Json, namespace: &str) -> Json {
    if let Some(root) = object.as_object_mut() {
        let meta = root
            .entry("metadata")
            .or_insert_with(|| Json::Object(Map::new()));
        if !meta.is_object() {
            *meta = Json::Object(Map::new());
        }
        if let Some(meta) = meta.as_object_mut() {
            if namespace.is_empty() {
                meta.remove("namespace");
            } else {
                meta.insert("namespace".to_owned(), Json::String(namespace.to_owned()));
            }
        }
    }
    object
}

/// A CEL value as a `structpb.Value` holds it: numbers as doubles, maps with string keys
/// (sorted: Kyverno prints generated objects with sorted keys), timestamps in RFC 3339. Other values are an error.
pub(crate) fn to_struct_json(v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => number(*i as f64)?,
        Value::UInt(u) => number(*u as f64)?,
        Value::Float(f) => number(*f)?,
        Value::String(s) => Json::String(s.to_string()),
        Value::Timestamp(t) => Json::String(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        Value::List(items) => Json::Array(
            items
                .iter()
                .map(to_struct_json)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Value::Map(m) => {
            let mut entries: Vec<(String, Json)> = Vec::with_capacity(m.map.len());
            for (k, v) in m.map.iter() {
                let Key::String(k) = k else {
                    return Err(format!("map key {k:?} is not a string"));
                };
                entries.push((k.to_string(), to_struct_json(v)?));
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
        other => return Err(format!("unsupported value type {}", other.type_of())),
    })
}

fn number(f: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| format!("{f} is not a JSON number"))
}

fn apply(name: &'static str, args: &[Value]) -> Result<Value, ExecutionError> {
    let namespaced = CURRENT.with(|c| c.borrow().as_ref().map(|r| r.policy_namespace.clone()));
    let Some(policy_namespace) = namespaced else {
        return Err(ExecutionError::function_error(
            name,
            "generator is only available in a GeneratingPolicy",
        ));
    };
    // The overloads Kyverno declares: (string, list) for cluster policies, (list) for
    // namespaced ones.
    let (namespace, list) = match (&policy_namespace, args) {
        (None, [Value::String(ns), Value::List(l)]) => (ns.to_string(), l),
        (Some(ns), [Value::List(l)]) => (ns.clone(), l),
        _ => {
            let want = if policy_namespace.is_some() {
                "(list(map(string, dyn))) in a namespaced policy"
            } else {
                "(string, list(map(string, dyn)))"
            };
            let got: Vec<String> = args.iter().map(|a| a.type_of().to_string()).collect();
            return Err(ExecutionError::function_error(
                name,
                format!(
                    "found no matching overload for ({}); it takes {want}",
                    got.join(", ")
                ),
            ));
        }
    };
    let mut objects = Vec::with_capacity(list.len());
    for item in list.iter() {
        if !matches!(item, Value::Map(_)) {
            return Err(ExecutionError::function_error(
                name,
                format!("list element must be a map, got {}", item.type_of()),
            ));
        }
        let json = to_struct_json(item).map_err(|e| ExecutionError::function_error(name, e))?;
        objects.push(json);
    }
    generate_resources(&namespace, objects).map_err(|e| {
        ExecutionError::function_error(name, format!("failed to generate resources: {e}"))
    })?;
    Ok(Value::Bool(true))
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    for name in ["generator.Apply", "generator.apply"] {
        let _ = ctx.add_function(
            name,
            move |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                apply(name, &args)
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(ns: Option<&str>, expr: &str) -> (Result<Value, String>, Vec<Json>) {
        collect(ns, || crate::cel::eval_expr(expr))
    }

    #[test]
    fn apply_records_objects_in_the_namespace_as_doubles() {
        let (r, out) = run(
            None,
            "generator.Apply('team', [{'kind': 'ConfigMap', 'metadata': {'name': 'a', 'namespace': 'x'}, 'data': {'n': dyn(1)}}])",
        );
        assert_eq!(r, Ok(Value::Bool(true)));
        assert_eq!(
            out,
            [
                json!({"data": {"n": 1.0}, "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "team"}})
            ]
        );
    }

    #[test]
    fn empty_namespace_removes_it_and_lists_stand_for_their_items() {
        let (r, out) = run(
            None,
            "generator.apply('', [{'kind': 'List', 'items': [{'kind': 'A', 'metadata': {'namespace': 'x'}}, {'kind': 'B'}]}])",
        );
        assert_eq!(r, Ok(Value::Bool(true)));
        assert_eq!(
            out,
            [
                json!({"kind": "A", "metadata": {}}),
                json!({"kind": "B", "metadata": {}})
            ]
        );
    }

    #[test]
    fn namespaced_policies_take_the_one_argument_form() {
        let (r, out) = run(Some("team"), "generator.Apply([{'kind': 'A'}])");
        assert_eq!(r, Ok(Value::Bool(true)));
        assert_eq!(
            out,
            [json!({"kind": "A", "metadata": {"namespace": "team"}})]
        );
        let (r, out) = run(Some("team"), "generator.Apply('other', [{'kind': 'A'}])");
        assert!(r.unwrap_err().contains("found no matching overload"));
        assert!(out.is_empty());
    }

    #[test]
    fn outside_a_generating_policy_apply_is_an_error() {
        let e = crate::cel::eval_expr("generator.Apply('ns', [])").unwrap_err();
        assert!(e.contains("only available in a GeneratingPolicy"), "{e}");
        let (r, _) = run(None, "generator.Apply('ns', ['x'])");
        assert!(r.unwrap_err().contains("must be a map"));
    }
}
