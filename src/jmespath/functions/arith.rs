//! Kyverno's arithmetic (`pkg/engine/jmespath/arithmetic.go`, validate.md §12.3): operands
//! are numbers (scalars), quantity strings (tried first, so `'10'` and `'5m'` are
//! quantities) or Go duration strings; mixing kinds is `Types mismatch`.

use super::{Arg, arg_f64, generic};
use crate::base::duration;
use crate::base::quantity::Quantity;
use crate::jmespath::{Error, value};
use crate::number::format_go_g;
use crate::yaml::{Node, Value};

type R = Result<Node, Error>;

#[derive(Clone, Copy)]
enum Operand {
    Scalar(f64),
    Quantity(Quantity),
    Duration(i64),
}

fn operand(n: &str, v: &Node) -> Result<Operand, Error> {
    match &v.value {
        Value::Float(f) => Ok(Operand::Scalar(*f)),
        Value::Str(s) => {
            if let Some(q) = Quantity::parse(s) {
                Ok(Operand::Quantity(q))
            } else if let Some(d) = duration::parse(s) {
                Ok(Operand::Duration(d))
            } else {
                Err(generic(n, "invalid operand"))
            }
        }
        _ => Err(generic(n, "invalid operand")),
    }
}

fn operands(n: &str, a: &[Arg<'_, '_>]) -> Result<(Operand, Operand), Error> {
    Ok((operand(n, a[0].node())?, operand(n, a[1].node())?))
}

fn mismatch(n: &str) -> Error {
    Error::Eval(format!("JMESPath function '{n}': Types mismatch"))
}

fn zero_div(n: &str) -> Error {
    Error::Eval(format!("JMESPath function '{n}': Zero divisor passed"))
}

fn overflow(n: &str) -> Error {
    generic(n, "arithmetic overflow")
}

fn qstr(q: Option<Quantity>, n: &str) -> R {
    q.map(|q| value::string(q.canonical()))
        .ok_or_else(|| overflow(n))
}

/// `add` (also the step of `sum`, which reports errors under its own name).
fn add_ops(n: &str, l: Operand, r: Operand, negate: bool) -> R {
    match (l, r) {
        (Operand::Scalar(x), Operand::Scalar(y)) => {
            Ok(value::float(if negate { x - y } else { x + y }))
        }
        (Operand::Quantity(x), Operand::Quantity(y)) => qstr(x.add(&y, negate), n),
        (Operand::Duration(x), Operand::Duration(y)) => {
            let d = if negate {
                x.wrapping_sub(y)
            } else {
                x.wrapping_add(y)
            };
            Ok(value::string(duration::format(d)))
        }
        _ => Err(mismatch(n)),
    }
}

pub(super) fn add(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (l, r) = operands(n, a)?;
    add_ops(n, l, r, false)
}

pub(super) fn subtract(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (l, r) = operands(n, a)?;
    add_ops(n, l, r, true)
}

pub(super) fn sum(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let items = a[0].node().as_seq().ok_or_else(|| mismatch(n))?;
    let Some((first, rest)) = items.split_first() else {
        return Err(generic(n, "at least one element in the array is required"));
    };
    let mut acc = first.clone();
    for item in rest {
        let (l, r) = (operand(n, &acc)?, operand(n, item)?);
        acc = add_ops(n, l, r, false)?;
    }
    Ok(acc)
}

/// The scalar as a quantity, the way upstream builds it: `ParseQuantity(fmt.Sprintf("%v"))`.
fn scalar_quantity(f: f64) -> Result<Quantity, Error> {
    let s = format_go_g(f);
    Quantity::parse(&s).ok_or_else(|| {
        Error::Eval("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'".to_owned())
    })
}

fn mul_quantity(n: &str, q: Quantity, f: f64) -> R {
    let s = scalar_quantity(f)?;
    let mut p = q.mul(&s).ok_or_else(|| overflow(n))?;
    p.format = q.format;
    Ok(value::string(p.canonical()))
}

fn duration_times(d: i64, f: f64) -> Node {
    let secs = duration::seconds(d) * f;
    value::string(duration::format((secs * 1e9) as i64))
}

pub(super) fn multiply(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    match operands(n, a)? {
        (Operand::Scalar(x), Operand::Scalar(y)) => Ok(value::float(x * y)),
        (Operand::Quantity(q), Operand::Scalar(f)) | (Operand::Scalar(f), Operand::Quantity(q)) => {
            mul_quantity(n, q, f)
        }
        (Operand::Duration(d), Operand::Scalar(f)) | (Operand::Scalar(f), Operand::Duration(d)) => {
            Ok(duration_times(d, f))
        }
        _ => Err(mismatch(n)),
    }
}

pub(super) fn divide(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    match operands(n, a)? {
        (Operand::Scalar(x), Operand::Scalar(y)) => {
            if y == 0.0 {
                return Err(zero_div(n));
            }
            Ok(value::float(x / y))
        }
        (Operand::Quantity(x), Operand::Quantity(y)) => {
            let divisor = y.as_f64();
            if divisor == 0.0 {
                return Err(zero_div(n));
            }
            Ok(value::float(x.as_f64() / divisor))
        }
        (Operand::Quantity(q), Operand::Scalar(f)) => {
            if f == 0.0 {
                return Err(zero_div(n));
            }
            let s = scalar_quantity(f)?;
            let mut r = q.quo_round_down(&s).ok_or_else(|| overflow(n))?;
            r.format = q.format;
            Ok(value::string(r.canonical()))
        }
        (Operand::Duration(x), Operand::Duration(y)) => {
            if duration::seconds(y) == 0.0 {
                return Err(zero_div(n));
            }
            Ok(value::float(duration::seconds(x) / duration::seconds(y)))
        }
        (Operand::Duration(d), Operand::Scalar(f)) => {
            if f == 0.0 {
                return Err(zero_div(n));
            }
            Ok(duration_times(d, 1.0 / f))
        }
        _ => Err(mismatch(n)),
    }
}

pub(super) fn modulo(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let non_int = || {
        Error::Eval(format!(
            "JMESPath function '{n}': Non-integer argument(s) passed for modulo"
        ))
    };
    match operands(n, a)? {
        (Operand::Scalar(x), Operand::Scalar(y)) => {
            let (i, j) = (x as i64, y as i64);
            if x != i as f64 || y != j as f64 {
                return Err(non_int());
            }
            if j == 0 {
                return Err(zero_div(n));
            }
            Ok(value::float(i.wrapping_rem(j) as f64))
        }
        (Operand::Quantity(x), Operand::Quantity(y)) => {
            let (f1, f2) = (x.as_f64(), y.as_f64());
            let (i, j) = (f1 as i64, f2 as i64);
            if f1 != i as f64 || f2 != j as f64 {
                return Err(non_int());
            }
            if j == 0 {
                return Err(zero_div(n));
            }
            let q = Quantity::new(i128::from(i.wrapping_rem(j)), 0, x.format);
            Ok(value::string(q.canonical()))
        }
        (Operand::Duration(x), Operand::Duration(y)) => {
            if y == 0 {
                return Err(zero_div(n));
            }
            Ok(value::string(duration::format(x.wrapping_rem(y))))
        }
        _ => Err(mismatch(n)),
    }
}

pub(super) fn round(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let x = arg_f64(n, a, 0)?;
    let digits = arg_f64(n, a, 1)?;
    if !digits.is_finite() || digits.trunc() != digits {
        return Err(Error::Eval(format!(
            "JMESPath function '{n}': Non-integer argument(s) passed for round off"
        )));
    }
    if digits < 0.0 {
        // Upstream formats this message with a missing argument (Go's %!d(MISSING)).
        return Err(Error::Eval(format!(
            "JMESPath function '{n}': %!d(MISSING) argument is out of bounds (%!d(MISSING))"
        )));
    }
    let shift = 10f64.powf(digits);
    Ok(value::float((x * shift).round() / shift))
}
