//! cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`, in Kubernetes' base
//! environment since 1.32 and so in every Kyverno v1.19.0 environment): `all(i, v, p)`,
//! `exists(i, v, p)`, `existsOne(i, v, p)`, `transformList(i, v, [filter,] f)`,
//! `transformMap(k, v, [filter,] f)` and `transformMapEntry(k, v, [filter,] e)`. For a list
//! `i` is the index and `v` the element; for a map `k` is the key and `v` its value.
//!
//! The `cel` crate evaluates one iteration variable, so each macro iterates over
//! `__kpolPairs__(range)` (the `[i, v]` pairs) and binds `i` and `v` from the pair as
//! `cel.bind` does.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, ListExpr, LiteralValue, operators};
use cel::extractors::Arguments;
use cel::objects::{Key, Map};
use cel::parser::{Macro, MacroExprHelper};
use cel::{Context, ExecutionError, IdedExpr, ParseError, Value};

/// The function a two-variable range is rewritten to.
pub(crate) const PAIRS: &str = "__kpolPairs__";
/// The function `transformMap`/`transformMapEntry` insert with.
pub(crate) const MAP_INSERT: &str = "__kpolMapInsert__";

const PAIR: &str = "@kpol_pair";
const RESULT: &str = "@result";

#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

/// The macros, one per name and arity.
pub(crate) fn macros() -> Vec<Macro> {
    let mut out = Vec::new();
    for (name, kind, arities) in [
        ("all", Kind::All, &[3][..]),
        ("exists", Kind::Exists, &[3]),
        ("existsOne", Kind::ExistsOne, &[3]),
        ("transformList", Kind::TransformList, &[3, 4]),
        ("transformMap", Kind::TransformMap, &[3, 4]),
        ("transformMapEntry", Kind::TransformMapEntry, &[3, 4]),
    ] {
        for &n in arities {
            out.push(Macro::receiver(name, n, move |h, t, a| {
                expand(kind, h, t, a)
            }));
        }
    }
    out
}

fn call(h: &mut MacroExprHelper<'_>, f: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: f.to_owned(),
        target: None,
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_owned()))
}

fn boolean(h: &mut MacroExprHelper<'_>, b: bool) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
}

fn int(h: &mut MacroExprHelper<'_>, i: i64) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Int(i.into())))
}

/// `body` with `name` bound to `value` (an empty-range comprehension, as `cel.bind`).
fn bind(h: &mut MacroExprHelper<'_>, name: &str, value: IdedExpr, body: IdedExpr) -> IdedExpr {
    let range = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let cond = boolean(h, false);
    let step = ident(h, name);
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: name.to_owned(),
        accu_init: value,
        loop_cond: cond,
        loop_step: step,
        result: body,
    })))
}

/// `e` with the two variables bound from the current pair.
fn with_vars(h: &mut MacroExprHelper<'_>, first: &str, second: &str, e: IdedExpr) -> IdedExpr {
    let (p0, p1) = (ident(h, PAIR), ident(h, PAIR));
    let (i0, i1) = (int(h, 0), int(h, 1));
    let key = call(h, operators::INDEX, vec![p0, i0]);
    let value = call(h, operators::INDEX, vec![p1, i1]);
    let inner = bind(h, second, value, e);
    bind(h, first, key, inner)
}

fn name_of(h: &mut MacroExprHelper<'_>, e: &IdedExpr) -> Result<String, ParseError> {
    match &e.expr {
        Expr::Ident(n) => Ok(n.clone()),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

fn expand(
    kind: Kind,
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, ParseError> {
    let Some(range) = target.take() else {
        return Ok(None);
    };
    let mut rest = std::mem::take(args);
    let last = rest.pop();
    let (Some(last), first, second) = (last, rest.first().cloned(), rest.get(1).cloned()) else {
        return Ok(None);
    };
    let (Some(first), Some(second)) = (first, second) else {
        return Ok(None);
    };
    let a = name_of(h, &first)?;
    let b = name_of(h, &second)?;
    if a == b {
        return Err(h.new_error(second.id, format!("duplicate variable name: {b}")));
    }
    let filter = rest.get(2).cloned().map(|f| with_vars(h, &a, &b, f));
    let body = with_vars(h, &a, &b, last);
    let iter_range = call(h, PAIRS, vec![range]);
    let accu = |h: &mut MacroExprHelper<'_>| ident(h, RESULT);
    let (init, cond, step, result) = match kind {
        Kind::All => {
            let init = boolean(h, true);
            let c = accu(h);
            let cond = call(h, operators::NOT_STRICTLY_FALSE, vec![c]);
            let r = accu(h);
            let step = call(h, operators::LOGICAL_AND, vec![r, body]);
            (init, cond, step, accu(h))
        }
        Kind::Exists => {
            let init = boolean(h, false);
            let c = accu(h);
            let not = call(h, operators::LOGICAL_NOT, vec![c]);
            let cond = call(h, operators::NOT_STRICTLY_FALSE, vec![not]);
            let r = accu(h);
            let step = call(h, operators::LOGICAL_OR, vec![r, body]);
            (init, cond, step, accu(h))
        }
        Kind::ExistsOne => {
            let init = int(h, 0);
            let cond = boolean(h, true);
            let (r, one) = (accu(h), int(h, 1));
            let plus = call(h, operators::ADD, vec![r, one]);
            let same = accu(h);
            let step = call(h, operators::CONDITIONAL, vec![body, plus, same]);
            let (r, one) = (accu(h), int(h, 1));
            let result = call(h, operators::EQUALS, vec![r, one]);
            (init, cond, step, result)
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let init = match kind {
                Kind::TransformList => h.next_expr(Expr::List(ListExpr::new(Vec::new()))),
                _ => call(h, MAP_INSERT, Vec::new()),
            };
            let cond = boolean(h, true);
            let r = accu(h);
            let add = match kind {
                Kind::TransformList => {
                    let one = h.next_expr(Expr::List(ListExpr::new(vec![body])));
                    call(h, operators::ADD, vec![r, one])
                }
                Kind::TransformMap => {
                    let key = with_vars(h, &a, &b, first.clone());
                    call(h, MAP_INSERT, vec![r, key, body])
                }
                _ => call(h, MAP_INSERT, vec![r, body]),
            };
            let step = match filter {
                Some(f) => {
                    let same = accu(h);
                    call(h, operators::CONDITIONAL, vec![f, add, same])
                }
                None => add,
            };
            (init, cond, step, accu(h))
        }
    };
    Ok(Some(h.next_expr(Expr::Comprehension(Box::new(
        ComprehensionExpr {
            iter_range,
            iter_var: PAIR.to_owned(),
            iter_var2: None,
            accu_var: RESULT.to_owned(),
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        },
    )))))
}

/// A list's `[index, element]` pairs, a map's `[key, value]` pairs.
fn pairs(Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    let pair = |a: Value, b: Value| Value::List(Arc::new(vec![a, b]));
    match args.as_slice() {
        [Value::List(l)] => Ok(Value::List(Arc::new(
            l.iter()
                .enumerate()
                .map(|(i, v)| pair(Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), v.clone()))
                .collect(),
        ))),
        [Value::Map(m)] => Ok(Value::List(Arc::new(
            m.map
                .iter()
                .map(|(k, v)| pair(Value::from(k.clone()), v.clone()))
                .collect(),
        ))),
        [other] => Err(ExecutionError::function_error(
            "comprehension",
            format!("cannot iterate over {}", other.type_of()),
        )),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
    }
}

/// `()` → an empty map; `(m, k, v)` → `m` with `k: v`; `(m, entry)` → `m` with the entry
/// map's keys. A key already there is cel-go's `insert failed: key … already exists`.
fn map_insert(Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    let entries: Vec<(Key, Value)> = match args.as_slice() {
        [] => {
            return Ok(Value::Map(Map {
                map: Arc::new(HashMap::new()),
            }));
        }
        [Value::Map(_), k, v] => vec![(key(k)?, v.clone())],
        [Value::Map(_), Value::Map(e)] => {
            e.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        [_, other] => {
            return Err(ExecutionError::function_error(
                "transformMapEntry",
                format!("no such overload: map.insert({})", other.type_of()),
            ));
        }
        _ => return Err(ExecutionError::invalid_argument_count(3, args.len())),
    };
    let Some(Value::Map(m)) = args.first() else {
        return Err(ExecutionError::invalid_argument_count(3, args.len()));
    };
    let mut out = (*m.map).clone();
    for (k, v) in entries {
        if out.contains_key(&k) {
            return Err(ExecutionError::function_error(
                "transformMap",
                format!("insert failed: key {} already exists", key_text(&k)),
            ));
        }
        out.insert(k, v);
    }
    Ok(Value::Map(Map { map: Arc::new(out) }))
}

/// A key as Go's `%v` prints it.
fn key_text(k: &Key) -> String {
    match k {
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
        Key::String(s) => s.to_string(),
    }
}

fn key(v: &Value) -> Result<Key, ExecutionError> {
    let k: Result<Key, _> = v.clone().try_into();
    k.map_err(|_| {
        ExecutionError::function_error(
            "transformMap",
            format!("unsupported key type: {}", v.type_of()),
        )
    })
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function(PAIRS, pairs);
    let _ = ctx.add_function(MAP_INSERT, map_insert);
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr;
    use cel::Value;

    fn t(expr: &str) {
        assert_eq!(eval_expr(expr), Ok(Value::Bool(true)), "{expr}");
    }

    #[test]
    fn lists_and_maps() {
        t("[1, 2, 3].all(i, v, v > i)");
        t("![1, 2, 3].all(i, v, v > 1)");
        t("[1, 2, 3].exists(i, v, i == 2 && v == 3)");
        t("[1, 2, 3].existsOne(i, v, v == 2) && ![2, 2].existsOne(i, v, v == 2)");
        t("[1, 2, 3].transformList(i, v, v * 2) == [2, 4, 6]");
        t("[1, 2, 3].transformList(i, v, i > 0, v * 2) == [4, 6]");
        t("{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}");
        t("{'a': 1, 'b': 2}.transformMap(k, v, k == 'b', v) == {'b': 2}");
        t("{'a': 1}.all(k, v, k == 'a' && v == 1)");
        t("{'a': 1}.transformMapEntry(k, v, {v: k}) == {1: 'a'}");
        // The one-variable macros are untouched; the variables do not leak.
        t("[1, 2].all(x, x > 0) && [1].exists(i, v, v == 1) && [5].map(x, x) == [5]");
    }

    #[test]
    fn errors() {
        let dup = eval_expr("{'a': 1, 'b': 1}.transformMapEntry(k, v, {'x': v})");
        assert_eq!(dup, Err("insert failed: key x already exists".to_owned()));
        assert!(eval_expr("[1].all(i, v, v / 0 == 1)").is_err());
    }
}
