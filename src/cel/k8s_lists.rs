//! Kubernetes' CEL list library (`k8s.io/apiserver/pkg/cel/library/lists.go`), the members the
//! `cel` crate's lists extension lacks: `isSorted()`, `sum()`, `min()`, `max()`, and
//! `indexOf(x)`/`lastIndexOf(x)` on lists — those two as typed overloads on the environment,
//! next to the crate's string overloads of the same names.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::CowVal;
use cel::extractors::This;
use cel::{Context, DeclarationError, Env, ExecutionError, Value};

/// Declares the list overloads of `indexOf` and `lastIndexOf` on `env`.
pub(super) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )
}

/// The positions of the elements equal to `args[1]` in the list `args[0]`.
fn positions(args: &[CowVal<'_, '_>]) -> Result<Vec<i64>, ExecutionError> {
    let [list, wanted] = args else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let Some(items) = list.as_iterable() else {
        return Err(ExecutionError::function_error(
            "indexOf",
            "receiver is not a list",
        ));
    };
    let mut out = Vec::new();
    let mut it = items.iter();
    let mut i = 0i64;
    while let Some(v) = it.next() {
        if v.equals(wanted.as_ref()) {
            out.push(i);
        }
        i += 1;
    }
    Ok(out)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let found = positions(&args)?.first().copied().unwrap_or(-1);
    Ok(CowVal::Owned(Box::new(CelInt::from(found))))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let found = positions(&args)?.last().copied().unwrap_or(-1);
    Ok(CowVal::Owned(Box::new(CelInt::from(found))))
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function("min", min);
    let _ = ctx.add_function("max", max);
    let _ = ctx.add_function("sets.contains", sets_contains);
    let _ = ctx.add_function("sets.equivalent", sets_equivalent);
    let _ = ctx.add_function("sets.intersects", sets_intersects);
}

/// cel-go `ext.Sets` `sets.contains(a, b)`: every element of `b` is in `a` (CEL equality, so
/// `1 == 1.0`).
fn sets_contains(a: Arc<Vec<Value>>, b: Arc<Vec<Value>>) -> bool {
    b.iter().all(|x| a.contains(x))
}

/// `sets.equivalent(a, b)`: each contains the other (duplicates and order aside).
fn sets_equivalent(a: Arc<Vec<Value>>, b: Arc<Vec<Value>>) -> bool {
    b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x))
}

/// `sets.intersects(a, b)`: some element is in both.
fn sets_intersects(a: Arc<Vec<Value>>, b: Arc<Vec<Value>>) -> bool {
    b.iter().any(|x| a.contains(x))
}

/// Elements must compare (numbers across int/uint/double, or same-typed values).
fn compare(f: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b).ok_or_else(|| {
        ExecutionError::function_error(
            f,
            format!("cannot compare {} and {}", a.type_of(), b.type_of()),
        )
    })
}

fn is_sorted(This(list): This<Arc<Vec<Value>>>) -> Result<Value, ExecutionError> {
    for w in list.windows(2) {
        if compare("isSorted", &w[0], &w[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// The sum of ints, uints, doubles or durations; an empty list sums to `0` (the typed zero
/// is unknown without a type checker; Kubernetes gives the element type's zero).
fn sum(This(list): This<Arc<Vec<Value>>>) -> Result<Value, ExecutionError> {
    let overflow = || ExecutionError::function_error("sum", "integer overflow");
    let mut it = list.iter();
    let Some(first) = it.next() else {
        return Ok(Value::Int(0));
    };
    let mut acc = first.clone();
    for v in it {
        acc = match (&acc, v) {
            (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(*b).ok_or_else(overflow)?),
            (Value::UInt(a), Value::UInt(b)) => {
                Value::UInt(a.checked_add(*b).ok_or_else(overflow)?)
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => {
                Value::Duration(a.checked_add(b).ok_or_else(overflow)?)
            }
            (a, b) => {
                return Err(ExecutionError::function_error(
                    "sum",
                    format!("cannot add {} and {}", a.type_of(), b.type_of()),
                ));
            }
        };
    }
    match acc {
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Duration(_) => Ok(acc),
        other => Err(ExecutionError::function_error(
            "sum",
            format!("cannot sum a list of {}", other.type_of()),
        )),
    }
}

fn extreme(f: &str, list: &[Value], keep: Ordering) -> Result<Value, ExecutionError> {
    let mut it = list.iter();
    let Some(mut best) = it.next() else {
        return Err(ExecutionError::function_error(
            f,
            format!("{f} called on empty list"),
        ));
    };
    for v in it {
        if compare(f, v, best)? == keep {
            best = v;
        }
    }
    Ok(best.clone())
}

fn min(This(list): This<Arc<Vec<Value>>>) -> Result<Value, ExecutionError> {
    extreme("min", &list, Ordering::Less)
}

fn max(This(list): This<Arc<Vec<Value>>>) -> Result<Value, ExecutionError> {
    extreme("max", &list, Ordering::Greater)
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr as run;
    use cel::Value;

    #[test]
    fn is_sorted() {
        assert_eq!(run("[1, 2, 2, 3].isSorted()"), Ok(Value::Bool(true)));
        assert_eq!(run("['b', 'a'].isSorted()"), Ok(Value::Bool(false)));
        assert_eq!(run("[].isSorted()"), Ok(Value::Bool(true)));
        assert!(run("[1, 'a'].isSorted()").is_err());
    }

    #[test]
    fn sum() {
        assert_eq!(run("[1, 2, 3].sum()"), Ok(Value::Int(6)));
        assert_eq!(run("[1.5, 2.0].sum()"), Ok(Value::Float(3.5)));
        assert_eq!(run("[].sum()"), Ok(Value::Int(0)));
        assert_eq!(
            run("[duration('1s'), duration('2m')].sum() == duration('121s')"),
            Ok(Value::Bool(true))
        );
        assert!(run("[1, 2.0].sum()").is_err());
        assert!(run("['a'].sum()").is_err());
        assert!(run("[9223372036854775807, 1].sum()").is_err());
    }

    #[test]
    fn index_of_on_lists_and_strings() {
        assert_eq!(run("[1, 2, 3, 2].indexOf(2)"), Ok(Value::Int(1)));
        assert_eq!(run("[1, 2, 3, 2].lastIndexOf(2)"), Ok(Value::Int(3)));
        assert_eq!(run("['a'].indexOf('b')"), Ok(Value::Int(-1)));
        assert_eq!(
            run("[{'n': 'x'}, {'n': 'y'}].indexOf({'n': 'y'})"),
            Ok(Value::Int(1))
        );
        // The strings extension's overloads still apply to strings.
        assert_eq!(run("'abcb'.indexOf('b')"), Ok(Value::Int(1)));
        assert_eq!(run("'abcb'.lastIndexOf('b')"), Ok(Value::Int(3)));
    }

    #[test]
    fn min_max() {
        assert_eq!(run("[3, 1, 2].min()"), Ok(Value::Int(1)));
        assert_eq!(run("[3, 1, 2].max()"), Ok(Value::Int(3)));
        assert_eq!(run("['b', 'c', 'a'].max()"), Ok(Value::from("c")));
        assert!(run("[].min()").unwrap_err().contains("empty list"));
    }
}
