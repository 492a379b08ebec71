//! Functions kpol adds to the CEL environment (cel.md §4.5–4.6): Kyverno's `orValue`
//! compatibility, a bounded `lists.range`, Kubernetes' `jsonpatch.escapeKey` and regex
//! `find`/`findAll`, its quantity, ip/cidr, url, semver and format libraries
//! ([`super::k8s_types`], [`super::k8s_format`]), Kyverno's `parseServiceAccount`, its
//! image, hash, json, yaml, x509, math, transform, gzip and random libraries ([`super::image`], [`super::data`], [`super::transform`],
//! [`super::gzip`], [`super::random`]), and, for Kyverno library calls that need a
//! cluster, a registry or the network, an `unsupported offline` error — never a silent pass.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::CelOptional;
use cel::common::value::{Builtin, CowVal, Val};
use cel::extractors::{Arguments, This};
use cel::objects::{Key, Map, OptionalValue};
use cel::{Context, ExecutionError, Value};

use super::env::{BOUNDED_RANGE, OR_VALUE_COMPAT};
use super::eval::{BorrowedFunction, round_trips};

/// The largest `lists.range(n)` kpol builds.
pub(crate) const MAX_RANGE: i64 = 100_000;

/// The Kyverno library calls that read a cluster, a registry or the network (cel.md §4.6);
/// those a test's context file or mocks can serve (`resource.Get/List`, `http.Get/Post`,
/// `globalContext.Get`) are in [`super::context`].
pub(crate) const OFFLINE_UNSUPPORTED: &[&str] = &[
    "resource.Post",
    "resource.post",
    "http.Client",
    "http.client",
    "imagedata.Get",
    "verifyImageSignatures",
    "verifyAttestationSignatures",
    "extractPayload",
    "getImageData",
    "jwks.Fetch",
];

/// The error an offline-unsupported call evaluates to.
pub(crate) fn unsupported_offline(function: &str) -> ExecutionError {
    // The function is named in the message: errors are shown without the crate's prefix.
    ExecutionError::function_error(
        function,
        format!("{function}: unsupported offline: needs a cluster, a registry or the network"),
    )
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    // A name already declared by the environment cannot be re-declared; kpol's names are
    // chosen not to collide, and a collision only leaves the crate's own function in place.
    let _ = ctx.add_function(OR_VALUE_COMPAT, or_value());
    let _ = ctx.add_function(BOUNDED_RANGE, bounded_range);
    let _ = ctx.add_function(super::compile::BUDGET, super::eval::charge());
    let _ = ctx.add_function(super::compile::SIZE, super::eval::charge_size());
    let _ = ctx.add_function("jsonpatch.escapeKey", escape_key);
    let _ = ctx.add_function(super::objects::OBJECT, super::objects::object);
    let _ = ctx.add_function("parseServiceAccount", parse_service_account);
    let _ = ctx.add_function("user.parseServiceAccount", parse_service_account);
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
    super::context::register(ctx);
    super::time::register(ctx);
    super::k8s_lists::register(ctx);
    super::k8s_types::register(ctx);
    super::k8s_format::register(ctx);
    super::two_var::register(ctx);
    super::image::register(ctx);
    super::data::register(ctx);
    super::regex_ext::register(ctx);
    super::generator::register(ctx);
    super::transform::register(ctx);
    super::gzip::register(ctx);
    super::random::register(ctx);
    super::authz::register(ctx);
    super::k8s_authz::register(ctx);
    super::jwt::register(ctx);
    for name in OFFLINE_UNSUPPORTED {
        let name: &'static str = name;
        let _ = ctx.add_function(name, move |_: Arguments| -> Result<Value, ExecutionError> {
            Err(unsupported_offline(name))
        });
    }
}

/// `__orValueCompat__(x, default)`, what `x.orValue(default)` is rewritten to: an optional
/// with a value → the value; an empty optional → the default; anything else → itself. perf:
/// the arguments are taken as the interpreter hands them over and the one chosen is handed back
/// as it is (crate::cel::eval::BorrowedFunction); the `Value` form copied both arguments out of
/// the interpreter's tree and its result back in (docs/PERFORMANCE.md, round 8). Arguments
/// that a trip through a `cel::Value` would change or refuse (a `type` becomes a string) still
/// take that form, [`or_value_compat`].
fn or_value() -> BorrowedFunction {
    Box::new(
        |ftx| match <[CowVal; 2]>::try_from(std::mem::take(&mut ftx.args)) {
            Ok([x, default]) if round_trips(x.as_ref()) && round_trips(default.as_ref()) => {
                Ok(or_value_of(x, default))
            }
            Ok(args) => or_value_through_values(&args),
            Err(args) => or_value_through_values(&args),
        },
    )
}

/// [`or_value_compat`] on borrowed arguments: `x`'s value, `default`, or `x` itself.
fn or_value_of<'c, 'l>(x: CowVal<'c, 'l>, default: CowVal<'c, 'l>) -> CowVal<'c, 'l> {
    match x {
        CowVal::Borrowed(b) => match b.downcast_ref::<CelOptional>() {
            Some(o) => o.option().map_or(default, CowVal::Borrowed),
            None => x,
        },
        CowVal::Owned(o) if o.downcast_ref::<CelOptional>().is_some() => match o.into_builtin() {
            Some(Builtin::Optional(o)) => {
                Option::<Box<dyn Val>>::from(o).map_or(default, CowVal::Owned)
            }
            // Not reached: `o` is an optional.
            _ => default,
        },
        CowVal::Owned(_) => x,
    }
}

/// [`or_value_compat`] as a function taking `Value`s: each argument converted to one, the
/// result converted back.
fn or_value_through_values<'c, 'l>(
    args: &[CowVal<'c, 'l>],
) -> Result<CowVal<'c, 'l>, ExecutionError> {
    let args = args.iter().map(|a| Value::try_from(a.as_ref()));
    let args = Arguments(Arc::new(args.collect::<Result<Vec<_>, _>>()?));
    Ok(CowVal::Owned(or_value_compat(args)?.try_into()?))
}

/// Optional with a value → the value; empty optional → the default; anything else → itself.
fn or_value_compat(Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    let [x, default] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    if let Value::Opaque(o) = x
        && let Some(opt) = o.downcast_ref::<OptionalValue>()
    {
        return Ok(opt.value().cloned().unwrap_or_else(|| default.clone()));
    }
    Ok(x.clone())
}

fn bounded_range(n: i64) -> Result<Value, ExecutionError> {
    if !(0..=MAX_RANGE).contains(&n) {
        return Err(ExecutionError::function_error(
            "lists.range",
            format!("range {n} outside 0..={MAX_RANGE}"),
        ));
    }
    Ok(Value::List(Arc::new((0..n).map(Value::Int).collect())))
}

/// RFC 6901 escaping of one path segment (`~` → `~0`, `/` → `~1`).
fn escape_key(s: Arc<String>) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// `system:serviceaccount:<ns>:<name>` → `{Namespace, Name}` (Kyverno's user library); other
/// strings give empty fields.
fn parse_service_account(s: Arc<String>) -> Value {
    let mut parts = s.splitn(4, ':');
    let (ns, name) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("system"), Some("serviceaccount"), Some(ns), Some(name)) => (ns, name),
        _ => ("", ""),
    };
    let mut m = HashMap::new();
    m.insert(Key::from("Namespace"), Value::from(ns));
    m.insert(Key::from("Name"), Value::from(name));
    Value::Map(Map { map: Arc::new(m) })
}

fn compile_regex(function: &str, re: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(re).map_err(|e| ExecutionError::function_error(function, e))
}

/// Kubernetes `s.find(re)`: the first match, or `""`.
fn find(This(s): This<Arc<String>>, re: Arc<String>) -> Result<Value, ExecutionError> {
    let r = compile_regex("find", &re)?;
    Ok(Value::from(r.find(&s).map_or("", |m| m.as_str())))
}

/// Kubernetes `s.findAll(re)` and `s.findAll(re, limit)`: every match, or the first `limit`
/// (a negative limit: all).
fn find_all(
    This(s): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let (re, limit) = match args.as_slice() {
        [Value::String(re)] => (re, -1),
        [Value::String(re), Value::Int(n)] => (re, *n),
        _ => {
            return Err(ExecutionError::no_such_member_overload(
                "findAll",
                std::iter::once("string".to_owned())
                    .chain(args.iter().map(|a| a.type_of().to_string()))
                    .collect(),
            ));
        }
    };
    let r = compile_regex("findAll", re)?;
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    let found: Vec<Value> = r
        .find_iter(&s)
        .take(take)
        .map(|m| Value::from(m.as_str()))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
