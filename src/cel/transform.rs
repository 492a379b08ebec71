//! Kyverno's CEL `math` and `transform` libraries (`kyverno/sdk:extensions/cel/libs/math`,
//! `transform`), both pure:
//! * `math.round(double, int)`: rounds half away from zero at `int` decimal places (negative
//!   places round to tens, hundreds, …), as Go's `math.Round(v·10ᵖ)/10ᵖ`. It sits beside the
//!   one-argument `math.round(double)` of the math extension, as an overload of the
//!   environment;
//! * `listObjToMap(keys, values, keyField, valueField)` and `transform.listObjToMap`: the map
//!   from `keys[i][keyField]` to `values[i][valueField]` (a missing value field gives `null`).

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{CelDouble, CelInt};
use cel::objects::{Key, Map};
use cel::{Context, DeclarationError, Env, ExecutionError, Value};

/// Declares the two-argument `math.round` on `env`.
pub(super) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn round_places: (CelDouble, CelInt) -> CelDouble, name = "math.round")
}

fn round_places(x: &CelDouble, places: &CelInt) -> CelDouble {
    // Go's `math.Pow(10, p)` with an int exponent; `powi` takes an i32, so clamp first (10^±400
    // is already ±Inf or 0, as in Go).
    let p = (*places.inner()).clamp(-400, 400) as i32;
    let shift = 10f64.powi(p);
    ((x.inner() * shift).round() / shift).into()
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("listObjToMap", list_obj_to_map);
    let _ = ctx.add_function("transform.listObjToMap", list_obj_to_map);
}

const LIST_OBJ_TO_MAP: &str = "listObjToMap";

fn error(message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(LIST_OBJ_TO_MAP, message)
}

fn list_obj_to_map(
    keys: Arc<Vec<Value>>,
    values: Arc<Vec<Value>>,
    key_field: Arc<String>,
    value_field: Arc<String>,
) -> Result<Value, ExecutionError> {
    if keys.len() != values.len() {
        return Err(error(format!(
            "listObjToMap must take lists of equal length. list1: {}, list2: {}",
            keys.len(),
            values.len()
        )));
    }
    let key_field = Key::from(key_field.as_str());
    let value_field = Key::from(value_field.as_str());
    let mut out: HashMap<Key, Value> = HashMap::with_capacity(keys.len());
    for (k, v) in keys.iter().zip(values.iter()) {
        // Kyverno asserts both entries are maps (a non-map entry panics there); kpol names it.
        let Value::Map(k) = k else {
            return Err(error("an entry of the key object list is not an object"));
        };
        let Some(Value::String(name)) = k.map.get(&key_field) else {
            return Err(error(
                "the passed key name cannot be handled as a string in the key object list",
            ));
        };
        let Value::Map(v) = v else {
            return Err(error(
                "object cannot be handled as a map string to any in the value object list",
            ));
        };
        let value = v.map.get(&value_field).cloned().unwrap_or(Value::Null);
        out.insert(Key::from(name.as_str()), value);
    }
    Ok(Value::Map(Map { map: Arc::new(out) }))
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr as run;
    use cel::Value;

    #[test]
    fn round_at_places_like_go() {
        // kyverno/sdk's own cases.
        assert_eq!(run("math.round(10.125, 2)"), Ok(Value::Float(10.13)));
        assert_eq!(run("math.round(10.125, 0)"), Ok(Value::Float(10.0)));
        assert_eq!(run("math.round(12345.6789, -2)"), Ok(Value::Float(12300.0)));
        assert_eq!(run("math.round(-2.5, 0)"), Ok(Value::Float(-3.0)));
        // The math extension's one-argument overload is still there.
        assert_eq!(run("math.round(1.5)"), Ok(Value::Float(2.0)));
    }

    #[test]
    fn round_refuses_other_argument_types() {
        assert!(run("math.round('1.5', 1)").is_err());
        assert!(run("math.round(1.5, 1.0)").is_err());
    }

    #[test]
    fn list_obj_to_map_pairs_entries() {
        let expr = "transform.listObjToMap([{'name': 'kyverno', 'lfx': 'mentorship'}, \
                    {'name': 'kubernetes'}], [{'domain': 'security'}, {'domain': 'orchestration'}], \
                    'name', 'domain')";
        assert_eq!(
            run(&format!(
                "{expr} == {{'kyverno': 'security', 'kubernetes': 'orchestration'}}"
            )),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            run("listObjToMap([{'k': 'a'}], [{}], 'k', 'v')"),
            run("{'a': null}")
        );
    }

    #[test]
    fn list_obj_to_map_errors_are_kyvernos() {
        let e = run("listObjToMap([{'k': 'a'}], [], 'k', 'v')").unwrap_err();
        assert!(
            e.contains("lists of equal length. list1: 1, list2: 0"),
            "{e}"
        );
        let e = run("listObjToMap([{'k': 1}], [{}], 'k', 'v')").unwrap_err();
        assert!(e.contains("cannot be handled as a string"), "{e}");
        let e = run("listObjToMap([{'k': 'a'}], ['x'], 'k', 'v')").unwrap_err();
        assert!(e.contains("value object list"), "{e}");
        let e = run("listObjToMap(['x'], [{}], 'k', 'v')").unwrap_err();
        assert!(e.contains("not an object"), "{e}");
    }
}
