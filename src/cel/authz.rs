//! The authorization libraries of a ValidatingPolicy in `evaluation.mode: HTTP` or `Envoy`
//! (kyverno-authz, the module Kyverno v1.19.0's CLI pins: `pkg/cel/libs/authz/{http,envoy}`):
//! the builders of an authorization answer and the request helpers.
//!
//! * HTTP: `http.Allowed()`, `http.Denied(reason)`, then `.Response()`; on the request's
//!   `object.attributes`, `.Header(name)` (the name canonicalised as a MIME header key) and
//!   `.QueryParam(name)`, each a list of strings (empty when absent).
//! * Envoy: `envoy.Allowed()` with `.WithHeader(h | k, v)`, `.WithoutHeader(k)`,
//!   `.WithResponseHeader(h | k, v)`, `.WithQueryParam(q | k, v)`, `.WithoutQueryParam(k)`;
//!   `envoy.Denied(code)` with `.WithBody(s)` and `.WithHeader(h | k, v)`;
//!   `envoy.Header(k, v)` with `.KeepEmptyValue([bool])`, `envoy.QueryParam(k, v)`; then
//!   `.Response()`, with `.WithMessage(s)` and `.WithMetadata(map)`.
//!
//! The answers are opaque values ([`Answer`]): kpol's CEL is dynamically typed, so where
//! kyverno-authz's type checker refuses a wrong receiver when the policy compiles, kpol's
//! functions refuse it when they run (`no such overload`). Envoy's protobuf message literals
//! (`envoy.service.auth.v3.CheckResponse{...}`) and field selection on answers are not
//! provided.

use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

/// One Envoy header (`envoy.config.core.v3.HeaderValueOption`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub key: String,
    pub value: String,
    pub keep_empty_value: bool,
}

/// What a rule's expression may build, as kyverno-authz's types name them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `http.CheckResponseOk`.
    HttpOk,
    /// `http.CheckResponseDenied`.
    HttpDenied {
        reason: String,
    },
    /// `http.CheckResponse`: `Ok(())` allowed, `Err(reason)` denied.
    HttpResponse(Result<(), String>),
    /// `envoy.service.auth.v3.OkHttpResponse`.
    EnvoyOk(EnvoyOk),
    /// `envoy.service.auth.v3.DeniedHttpResponse`.
    EnvoyDenied(EnvoyDenied),
    EnvoyHeader(Header),
    /// `envoy.config.core.v3.QueryParameter`.
    EnvoyQueryParam {
        key: String,
        value: String,
    },
    /// `envoy.service.auth.v3.CheckResponse`.
    EnvoyResponse(EnvoyResponse),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EnvoyOk {
    pub headers: Vec<Header>,
    pub headers_to_remove: Vec<String>,
    pub response_headers_to_add: Vec<Header>,
    pub query_parameters_to_set: Vec<(String, String)>,
    pub query_parameters_to_remove: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EnvoyDenied {
    /// The HTTP status code (`envoy.type.v3.StatusCode`).
    pub code: i64,
    pub body: String,
    pub headers: Vec<Header>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvoyResponse {
    /// The gRPC status: 0 (OK) for an allowed answer, 7 (PERMISSION_DENIED) for a denied one.
    pub status: i32,
    pub message: String,
    /// `Ok` or `Err` (denied).
    pub http: Result<EnvoyOk, EnvoyDenied>,
    /// `dynamic_metadata`, as JSON text.
    pub metadata: Option<String>,
}

impl Opaque for Answer {
    fn runtime_type_name(&self) -> &str {
        match self {
            Self::HttpOk => "http.CheckResponseOk",
            Self::HttpDenied { .. } => "http.CheckResponseDenied",
            Self::HttpResponse(_) => "http.CheckResponse",
            Self::EnvoyOk(_) => "envoy.service.auth.v3.OkHttpResponse",
            Self::EnvoyDenied(_) => "envoy.service.auth.v3.DeniedHttpResponse",
            Self::EnvoyHeader(_) => "envoy.config.core.v3.HeaderValueOption",
            Self::EnvoyQueryParam { .. } => "envoy.config.core.v3.QueryParameter",
            Self::EnvoyResponse(_) => "envoy.service.auth.v3.CheckResponse",
        }
    }
}

impl Answer {
    fn value(self) -> Value {
        Value::Opaque(Arc::new(self))
    }

    /// The answer a value holds, if it is one.
    pub fn of(v: &Value) -> Option<&Answer> {
        match v {
            Value::Opaque(o) => o.downcast_ref::<Answer>(),
            _ => None,
        }
    }
}

fn no_overload(function: &str, args: &[&Value]) -> ExecutionError {
    let types: Vec<String> = args
        .iter()
        .map(|v| match Answer::of(v) {
            Some(a) => a.runtime_type_name().to_owned(),
            None => v.type_of().to_string(),
        })
        .collect();
    ExecutionError::function_error(
        function,
        format!("no such overload: {function}({})", types.join(", ")),
    )
}

fn text<'v>(function: &str, v: &'v Value, this: &Value) -> Result<&'v str, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.as_str()),
        _ => Err(no_overload(function, &[this, v])),
    }
}

/// A header from `(h)` (a `envoy.Header(...)` value) or `(k, v)`.
fn header_arg(function: &str, this: &Value, args: &[Value]) -> Result<Header, ExecutionError> {
    match args {
        [h] => match Answer::of(h) {
            Some(Answer::EnvoyHeader(h)) => Ok(h.clone()),
            _ => Err(no_overload(function, &[this, h])),
        },
        [k, v] => Ok(Header {
            key: text(function, k, this)?.to_owned(),
            value: text(function, v, this)?.to_owned(),
            keep_empty_value: false,
        }),
        _ => Err(ExecutionError::invalid_argument_count(2, args.len())),
    }
}

fn http_allowed() -> Value {
    Answer::HttpOk.value()
}

fn http_denied(reason: Arc<String>) -> Value {
    Answer::HttpDenied {
        reason: reason.to_string(),
    }
    .value()
}

fn envoy_allowed() -> Value {
    Answer::EnvoyOk(EnvoyOk::default()).value()
}

fn envoy_denied(code: i64) -> Value {
    Answer::EnvoyDenied(EnvoyDenied {
        code,
        ..EnvoyDenied::default()
    })
    .value()
}

fn envoy_header(key: Arc<String>, value: Arc<String>) -> Value {
    Answer::EnvoyHeader(Header {
        key: key.to_string(),
        value: value.to_string(),
        keep_empty_value: false,
    })
    .value()
}

fn envoy_query_param(key: Arc<String>, value: Arc<String>) -> Value {
    Answer::EnvoyQueryParam {
        key: key.to_string(),
        value: value.to_string(),
    }
    .value()
}

/// `.Response()` of an allowed or denied answer (HTTP or Envoy).
fn response(This(this): This<Value>) -> Result<Value, ExecutionError> {
    let out = match Answer::of(&this) {
        Some(Answer::HttpOk) => Answer::HttpResponse(Ok(())),
        Some(Answer::HttpDenied { reason }) => Answer::HttpResponse(Err(reason.clone())),
        Some(Answer::EnvoyOk(ok)) => Answer::EnvoyResponse(EnvoyResponse {
            status: 0,
            message: String::new(),
            http: Ok(ok.clone()),
            metadata: None,
        }),
        Some(Answer::EnvoyDenied(d)) => Answer::EnvoyResponse(EnvoyResponse {
            status: 7,
            message: String::new(),
            http: Err(d.clone()),
            metadata: None,
        }),
        _ => return Err(no_overload("Response", &[&this])),
    };
    Ok(out.value())
}

/// The member builders that take the receiver and arguments.
fn member(name: &'static str, this: &Value, args: &[Value]) -> Result<Value, ExecutionError> {
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    let one = || -> Result<&str, ExecutionError> {
        match args {
            [v] => text(name, v, this),
            _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
        }
    };
    let out = match (name, Answer::of(this)) {
        ("WithBody", Some(Answer::EnvoyDenied(d))) => {
            let mut d = d.clone();
            d.body = one()?.to_owned();
            Answer::EnvoyDenied(d)
        }
        ("WithHeader", Some(Answer::EnvoyDenied(d))) => {
            let mut d = d.clone();
            d.headers.push(header_arg(name, this, args)?);
            Answer::EnvoyDenied(d)
        }
        ("WithHeader", Some(Answer::EnvoyOk(ok))) => {
            let mut ok = ok.clone();
            ok.headers.push(header_arg(name, this, args)?);
            Answer::EnvoyOk(ok)
        }
        ("WithResponseHeader", Some(Answer::EnvoyOk(ok))) => {
            let mut ok = ok.clone();
            ok.response_headers_to_add
                .push(header_arg(name, this, args)?);
            Answer::EnvoyOk(ok)
        }
        ("WithoutHeader", Some(Answer::EnvoyOk(ok))) => {
            let mut ok = ok.clone();
            ok.headers_to_remove.push(one()?.to_owned());
            Answer::EnvoyOk(ok)
        }
        ("WithQueryParam", Some(Answer::EnvoyOk(ok))) => {
            let mut ok = ok.clone();
            let param = match args {
                [q] => match Answer::of(q) {
                    Some(Answer::EnvoyQueryParam { key, value }) => (key.clone(), value.clone()),
                    _ => return Err(no_overload(name, &[this, q])),
                },
                [k, v] => (
                    text(name, k, this)?.to_owned(),
                    text(name, v, this)?.to_owned(),
                ),
                _ => return Err(ExecutionError::invalid_argument_count(2, args.len())),
            };
            ok.query_parameters_to_set.push(param);
            Answer::EnvoyOk(ok)
        }
        ("WithoutQueryParam", Some(Answer::EnvoyOk(ok))) => {
            let mut ok = ok.clone();
            ok.query_parameters_to_remove.push(one()?.to_owned());
            Answer::EnvoyOk(ok)
        }
        ("KeepEmptyValue", Some(Answer::EnvoyHeader(h))) => {
            let mut h = h.clone();
            h.keep_empty_value = match args {
                [] => true,
                [Value::Bool(b)] => *b,
                [other] => return Err(no_overload(name, &[this, other])),
                _ => return Err(ExecutionError::invalid_argument_count(1, args.len())),
            };
            Answer::EnvoyHeader(h)
        }
        ("WithMessage", Some(Answer::EnvoyResponse(r))) => {
            let mut r = r.clone();
            r.message = one()?.to_owned();
            Answer::EnvoyResponse(r)
        }
        ("WithMetadata", Some(Answer::EnvoyResponse(r))) => {
            let mut r = r.clone();
            let m = arg(0);
            let Value::Map(_) = m else {
                return Err(no_overload(name, &[this, m]));
            };
            let json = super::generator::to_struct_json(m)
                .map_err(|e| ExecutionError::function_error(name, e))?;
            r.metadata = Some(json.to_string());
            Answer::EnvoyResponse(r)
        }
        _ => {
            let mut all = vec![this];
            all.extend(args);
            return Err(no_overload(name, &all));
        }
    };
    Ok(out.value())
}

/// `object.attributes.Header(name)`: the values of the header, its name canonicalised as Go's
/// `textproto.MIMEHeader.Values` does; empty when absent.
fn request_header(This(this): This<Value>, key: Arc<String>) -> Result<Value, ExecutionError> {
    lookup("Header", &this, "header", &canonical_mime_key(&key))
}

/// `object.attributes.QueryParam(name)`: the values of the query parameter, looked up as
/// written; empty when absent.
fn request_query(This(this): This<Value>, key: Arc<String>) -> Result<Value, ExecutionError> {
    lookup("QueryParam", &this, "query", &key)
}

fn lookup(function: &str, this: &Value, field: &str, key: &str) -> Result<Value, ExecutionError> {
    let Value::Map(attrs) = this else {
        return Err(no_overload(function, &[this]));
    };
    let empty = || Value::List(Arc::new(Vec::new()));
    Ok(match attrs.get(&cel::objects::Key::from(field)) {
        Some(Value::Map(m)) => m
            .get(&cel::objects::Key::from(key))
            .cloned()
            .unwrap_or_else(empty),
        Some(Value::Null) | None => empty(),
        Some(other) => return Err(no_overload(function, &[other])),
    })
}

/// Go's `textproto.CanonicalMIMEHeaderKey`: the first letter and every letter after a hyphen
/// upper case, the rest lower case; a key with a byte that is not a token character (a
/// space, a colon, …) is returned unchanged.
pub(crate) fn canonical_mime_key(key: &str) -> String {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !key.bytes().all(token) {
        return key.to_owned();
    }
    let mut upper = true;
    key.chars()
        .map(|c| {
            let out = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            upper = c == '-';
            out
        })
        .collect()
}

const MEMBERS: &[&str] = &[
    "WithBody",
    "WithHeader",
    "WithoutHeader",
    "WithResponseHeader",
    "WithQueryParam",
    "WithoutQueryParam",
    "KeepEmptyValue",
    "WithMessage",
    "WithMetadata",
];

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("http.Allowed", http_allowed);
    let _ = ctx.add_function("http.Denied", http_denied);
    let _ = ctx.add_function("envoy.Allowed", envoy_allowed);
    let _ = ctx.add_function("envoy.Denied", envoy_denied);
    let _ = ctx.add_function("envoy.Header", envoy_header);
    let _ = ctx.add_function("envoy.QueryParam", envoy_query_param);
    let _ = ctx.add_function("Response", response);
    let _ = ctx.add_function("Header", request_header);
    let _ = ctx.add_function("QueryParam", request_query);
    for name in MEMBERS {
        let name: &'static str = name;
        let _ = ctx.add_function(
            name,
            move |This(this): This<Value>,
                  Arguments(args): Arguments|
                  -> Result<Value, ExecutionError> { member(name, &this, &args) },
        );
    }
}

#[cfg(test)]
#[path = "authz_tests.rs"]
mod tests;
