//! CEL for kpol: one environment on the `cel` crate ([`env`]), kpol's own value conversions
//! ([`convert`]), the extra libraries ([`libs`]) and the offline
//! context data they serve ([`context`]), Kyverno's `time` library ([`time`]),
//! Kubernetes' list library extras and cel-go's sets ([`k8s_lists`]), Kubernetes' quantity,
//! ip/cidr, url and semver values ([`k8s_types`]) and its `format` library ([`k8s_format`]),
//! cel-go's two-variable comprehensions ([`two_var`]), Kyverno's image
//! references ([`image`]), its hash, json, yaml and x509 functions ([`data`]), `math.round`
//! and `listObjToMap` ([`transform`]), `gzip` ([`gzip`]) and `random` ([`random`]), Kubernetes' object
//! literals for mutating expressions ([`objects`]), GeneratingPolicy's `generator` library
//! ([`generator`]), where a failing validation points ([`locate`]), compiling with located
//! syntax errors ([`compile`]) and bounded evaluation ([`eval`]: an [`Activation`] binds
//! [`Shared`] values, converted once per resource in its [`ResourceValues`]; [`admission`]
//! binds `object`, `oldObject` and `request` for every CEL kind). The policy kinds built on it
//! live in `crate::vpol`, `crate::mpol` and `crate::gpol`. The HTTP / Envoy authorization
//! libraries are [`authz`] and [`jwt`]. Run-time errors are worded as cel-go words them
//! ([`go_errors`]).

pub mod admission;
pub mod authz;
pub mod compile;
pub mod context;
pub(crate) mod convert;
pub mod data;
pub mod env;
pub mod eval;
pub mod generator;
pub(crate) mod go_errors;
pub(crate) mod gzip;
pub mod image;
pub(crate) mod jwt;
pub(crate) mod k8s_authz;
pub(crate) mod k8s_env;
pub(crate) mod k8s_format;
pub(crate) mod k8s_lists;
pub(crate) mod k8s_types;
pub mod libs;
pub mod locate;
pub mod objects;
pub mod random;
pub(crate) mod regex_ext;
pub mod time;
pub(crate) mod transform;
pub(crate) mod two_var;

pub use compile::compile;
pub(crate) use compile::{Program, SyntaxError, syntax_diagnostic};
pub(crate) use eval::{Activation, ResourceValues, Shared};

/// Compiles `expr`, which must be valid, and evaluates it with no variables (for tests).
#[cfg(test)]
pub(crate) fn eval_expr(expr: &str) -> Result<cel::Value, String> {
    let (p, err) = compile(expr, crate::source::Span::EMPTY);
    assert!(err.is_none(), "{err:?}");
    Activation::new().eval(&p)
}
