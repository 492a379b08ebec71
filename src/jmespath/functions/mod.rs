//! The function table: standard JMESPath functions (go-jmespath `functions.go`) and
//! Kyverno's (`kyverno/kyverno:pkg/engine/jmespath/functions.go`, `time.go`), with
//! go-jmespath's argument checking in front of every call:
//! * wrong count → `incorrect number of args` (variadic: `Invalid arity.`);
//! * wrong type → `Invalid type for: <%v>, expected: []jmespath.JpType{"string"}`
//!   (a JSON number must be a float64: `Int` values such as `elementIndex` fail).
//!
//! Handlers then apply Kyverno's own checks and messages
//! (`JMESPath function '<name>': argument #<n> is not of type <T>`, validate.md §12.2).

mod arith;
mod builtin;
mod data;
mod strings;
mod timefn;

use std::borrow::Cow;

use super::Error;
use super::interp::Val;
use super::ir::Ir;
use super::value::go_sprint;
use crate::yaml::{Node, Value};

/// go-jmespath argument types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Jp {
    Number,
    String,
    Array,
    Object,
    ArrayNumber,
    ArrayString,
    Any,
    Expref,
}

impl Jp {
    fn name(self) -> &'static str {
        match self {
            Jp::Number => "number",
            Jp::String => "string",
            Jp::Array => "array",
            Jp::Object => "object",
            Jp::ArrayNumber => "array[number]",
            Jp::ArrayString => "array[string]",
            Jp::Any => "any",
            Jp::Expref => "expref",
        }
    }

    fn accepts(self, arg: &Arg<'_, '_>) -> bool {
        match (self, arg) {
            (Jp::Any, _) => true,
            (Jp::Expref, Arg::Ref(_)) => true,
            (_, Arg::Ref(_)) | (Jp::Expref, _) => false,
            (t, Arg::Val(v)) => match (t, &v.value) {
                (Jp::Number, Value::Float(_)) => true,
                (Jp::String, Value::Str(_)) => true,
                (Jp::Array, Value::Seq(_)) => true,
                (Jp::Object, Value::Map(_)) => true,
                (Jp::ArrayNumber, Value::Seq(s)) => {
                    s.iter().all(|n| matches!(n.value, Value::Float(_)))
                }
                (Jp::ArrayString, Value::Seq(s)) => {
                    s.iter().all(|n| matches!(n.value, Value::Str(_)))
                }
                _ => false,
            },
        }
    }
}

/// An evaluated argument, or an expression reference (`&expr`).
pub(crate) enum Arg<'a, 'e> {
    Val(Val<'a>),
    Ref(&'e Ir),
}

impl Arg<'_, '_> {
    pub(crate) fn node(&self) -> &Node {
        match self {
            Arg::Val(v) => v,
            Arg::Ref(_) => &NULL,
        }
    }

    pub(crate) fn str(&self) -> Option<&str> {
        self.node().as_str()
    }

    pub(crate) fn float(&self) -> Option<f64> {
        match self.node().value {
            Value::Float(f) => Some(f),
            _ => None,
        }
    }
}

static NULL: Node = Node {
    value: Value::Null,
    span: crate::source::Span::EMPTY,
};

type Handler = fn(&str, &[Arg<'_, '_>], u32) -> Result<Node, Error>;

#[derive(Debug)]
pub(crate) struct Func {
    pub name: &'static str,
    args: &'static [&'static [Jp]],
    variadic: bool,
    handler: Handler,
}

impl std::fmt::Debug for Arg<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Val(v) => write!(f, "{}", go_sprint(v)),
            Arg::Ref(_) => f.write_str("&expr"),
        }
    }
}

const fn f(name: &'static str, args: &'static [&'static [Jp]], handler: Handler) -> Func {
    Func {
        name,
        args,
        variadic: false,
        handler,
    }
}

const fn v(name: &'static str, args: &'static [&'static [Jp]], handler: Handler) -> Func {
    Func {
        name,
        args,
        variadic: true,
        handler,
    }
}

use Jp::{Any, Array, ArrayNumber, ArrayString, Expref, Number, Object};
const S: &[Jp] = &[Jp::String];
const N: &[Jp] = &[Number];
const A: &[Jp] = &[Any];
const ARR: &[Jp] = &[Array];
const OBJ: &[Jp] = &[Object];
const SN: &[Jp] = &[Jp::String, Number];
const E: &[Jp] = &[Expref];

static FUNCS: &[Func] = &[
    // Standard JMESPath (go-jmespath), minus `sum` which Kyverno replaces.
    f("abs", &[N], builtin::abs),
    f("avg", &[&[ArrayNumber]], builtin::avg),
    f("ceil", &[N], builtin::ceil),
    f("contains", &[&[Array, Jp::String], A], builtin::contains),
    f("ends_with", &[S, S], builtin::ends_with),
    f("floor", &[N], builtin::floor),
    f("join", &[S, &[ArrayString]], builtin::join),
    f("keys", &[OBJ], builtin::keys),
    f("length", &[&[Jp::String, Array, Object]], builtin::length),
    f("map", &[E, ARR], builtin::map),
    f("max", &[&[ArrayNumber, ArrayString]], builtin::max),
    f("max_by", &[ARR, E], builtin::max_by),
    v("merge", &[OBJ], builtin::merge),
    f("min", &[&[ArrayNumber, ArrayString]], builtin::min),
    f("min_by", &[ARR, E], builtin::min_by),
    v("not_null", &[A], builtin::not_null),
    f("reverse", &[&[Array, Jp::String]], builtin::reverse),
    f("sort", &[&[ArrayString, ArrayNumber]], builtin::sort),
    f("sort_by", &[ARR, E], builtin::sort_by),
    f("starts_with", &[S, S], builtin::starts_with),
    f("to_array", &[A], builtin::to_array),
    f("to_number", &[A], builtin::to_number),
    f("to_string", &[A], builtin::to_string),
    f("type", &[A], builtin::type_of),
    f("values", &[OBJ], builtin::values),
    // Kyverno: strings.
    f("compare", &[S, S], strings::compare),
    f("equal_fold", &[S, S], strings::equal_fold),
    f("replace", &[S, S, S, N], strings::replace),
    f("replace_all", &[S, S, S], strings::replace_all),
    f("to_upper", &[S], strings::to_upper),
    f("to_lower", &[S], strings::to_lower),
    f("trim", &[S, S], strings::trim),
    f("trim_prefix", &[S, S], strings::trim_prefix),
    f("split", &[S, S], strings::split),
    f(
        "regex_replace_all",
        &[S, SN, SN],
        strings::regex_replace_all,
    ),
    f(
        "regex_replace_all_literal",
        &[S, SN, SN],
        strings::regex_replace_all_literal,
    ),
    f("regex_match", &[S, SN], strings::regex_match),
    f("pattern_match", &[S, SN], strings::pattern_match),
    f("to_boolean", &[S], strings::to_boolean),
    f("base64_decode", &[S], strings::base64_decode),
    f("base64_encode", &[S], strings::base64_encode),
    f("path_canonicalize", &[S], strings::path_canonicalize),
    f("truncate", &[S, N], strings::truncate),
    f("semver_compare", &[S, S], strings::semver_compare),
    f("sha256", &[S], strings::sha256),
    f("sha1", &[S], strings::sha1),
    f("md5", &[S], strings::md5),
    f("image_normalize", &[S], strings::image_normalize),
    f("is_external_url", &[S], strings::is_external_url),
    f("random", &[S], strings::random),
    f("x509_decode", &[S], strings::x509_decode),
    // Kyverno: data.
    f("label_match", &[OBJ, OBJ], data::label_match),
    f("parse_json", &[S], data::parse_json),
    f("parse_yaml", &[S], data::parse_yaml),
    f("lookup", &[&[Object, Array], SN], data::lookup),
    f("items", &[&[Object, Array], S, S], data::items),
    f("object_from_lists", &[ARR, ARR], data::object_from_lists),
    // Kyverno: arithmetic.
    f("add", &[A, A], arith::add),
    f("sum", &[ARR], arith::sum),
    f("subtract", &[A, A], arith::subtract),
    f("multiply", &[A, A], arith::multiply),
    f("divide", &[A, A], arith::divide),
    f("modulo", &[A, A], arith::modulo),
    f("round", &[N, N], arith::round),
    // Kyverno: time.
    f("time_since", &[S, S, S], timefn::time_since),
    f("time_now", &[], timefn::time_now),
    f("time_now_utc", &[], timefn::time_now_utc),
    f("time_to_cron", &[S], timefn::time_to_cron),
    f("time_add", &[S, S], timefn::time_add),
    f("time_parse", &[S, S], timefn::time_parse),
    f("time_utc", &[S], timefn::time_utc),
    f("time_diff", &[S, S], timefn::time_diff),
    f("time_before", &[S, S], timefn::time_before),
    f("time_after", &[S, S], timefn::time_after),
    f("time_between", &[S, S, S], timefn::time_between),
    f("time_truncate", &[S, S], timefn::time_truncate),
];

pub(crate) fn lookup(name: &str) -> Option<&'static Func> {
    FUNCS.iter().find(|f| f.name == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    let mut n: Vec<_> = FUNCS.iter().map(|f| f.name).collect();
    n.sort_unstable();
    n
}

/// go-jmespath `resolveArgs` + `typeCheck`, then the handler.
pub(crate) fn call(func: &Func, args: &[Arg<'_, '_>], depth: u32) -> Result<Node, Error> {
    if !func.args.is_empty() {
        if func.variadic {
            if args.len() < func.args.len() {
                return Err(Error::Eval("Invalid arity.".to_owned()));
            }
        } else {
            if args.len() != func.args.len() {
                return Err(Error::Eval("incorrect number of args".to_owned()));
            }
            for (spec, arg) in func.args.iter().zip(args) {
                if !spec.iter().any(|t| t.accepts(arg)) {
                    let types: Vec<String> =
                        spec.iter().map(|t| format!("{:?}", t.name())).collect();
                    return Err(Error::Eval(format!(
                        "Invalid type for: {arg:?}, expected: []jmespath.JpType{{{}}}",
                        types.join(", ")
                    )));
                }
            }
        }
    }
    (func.handler)(func.name, args, depth)
}

/// Kyverno `validateArg` failure: `argument #<n> is not of type <T>`.
pub(crate) fn not_of_type(name: &str, n: usize, ty: &str) -> Error {
    Error::Eval(format!(
        "JMESPath function '{name}': argument #{n} is not of type {ty}"
    ))
}

/// Kyverno `genericError`.
pub(crate) fn generic(name: &str, msg: impl std::fmt::Display) -> Error {
    Error::Eval(format!("JMESPath function '{name}': {msg}"))
}

/// Kyverno `validateArg(..., reflect.String)`.
pub(crate) fn arg_str<'x>(name: &str, args: &'x [Arg<'_, '_>], i: usize) -> Result<&'x str, Error> {
    args.get(i)
        .and_then(Arg::str)
        .ok_or_else(|| not_of_type(name, i + 1, "string"))
}

/// Kyverno `validateArg(..., reflect.Float64)`.
pub(crate) fn arg_f64(name: &str, args: &[Arg<'_, '_>], i: usize) -> Result<f64, Error> {
    args.get(i)
        .and_then(Arg::float)
        .ok_or_else(|| not_of_type(name, i + 1, "float64"))
}

/// Kyverno `ifaceToString`: numbers with 32-bit `'f'` formatting (validate.md §5.6).
pub(crate) fn iface_to_string(v: &Node) -> Option<String> {
    match &v.value {
        Value::Str(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(format_f32(*f)),
        _ => None,
    }
}

/// Go `strconv.FormatFloat(f, 'f', -1, 32)`: shortest digits that round-trip as float32.
pub(crate) fn format_f32(f: f64) -> String {
    let x = f as f32;
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    // Rust's Display for f32 prints the shortest round-trip digits without exponent.
    let s = format!("{x}");
    if s == "-0" { "-0".to_owned() } else { s }
}

/// A borrowed-or-owned value as an owned node.
pub(crate) fn owned(v: &Val<'_>) -> Node {
    match v {
        Cow::Borrowed(b) => (*b).clone(),
        Cow::Owned(o) => o.clone(),
    }
}
