//! Kubernetes' CEL `authorizer` library (`k8s.io/apiserver/pkg/cel/library/authz.go`), bound in
//! ClusterPolicy `validate.cel` validations. Offline, the Kyverno v1.19.0 CLI answers every
//! check through its fake client, so the decision never allows (measured with the CLI,
//! testdata/cel-authorizer):
//!
//! * without a user (no `userInfo.username`, no `serviceAccount(ns, name)`): `allowed()` false,
//!   `errored()` true, `error()` `no service account provided`, `reason()` empty;
//! * with one, the CLI's fake SubjectAccessReview store refuses the review:
//!   `error()` `subjectaccessreviews.authorization.k8s.io "" already exists` (the very first
//!   review of a CLI run is accepted instead, with no error; kpol does not model that).
//!
//! The builders check their arguments as Kubernetes does: `path must not be empty`,
//! `resource must not be empty`, `Invalid service account name` / `namespace`.

use std::cell::Cell;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

/// One value of the library: the authorizer, a check being built, or a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authz {
    /// The authorizer, with the user it asks for (empty: the request's user is none).
    Authorizer { user: String },
    /// A path or group/resource check for `user`.
    Check { user: String, path: bool },
    /// The decision of a check.
    Decision { error: String },
}

impl Opaque for Authz {
    fn runtime_type_name(&self) -> &str {
        match self {
            Self::Authorizer { .. } => "kubernetes.authorization.Authorizer",
            Self::Check { path: true, .. } => "kubernetes.authorization.PathCheck",
            Self::Check { path: false, .. } => "kubernetes.authorization.ResourceCheck",
            Self::Decision { .. } => "kubernetes.authorization.Decision",
        }
    }
}

impl Authz {
    fn value(self) -> Value {
        Value::Opaque(Arc::new(self))
    }

    fn of(v: &Value) -> Option<&Authz> {
        match v {
            Value::Opaque(o) => o.downcast_ref::<Authz>(),
            _ => None,
        }
    }
}

/// The `authorizer` variable for a request by `username` (empty: none).
pub fn authorizer(username: &str) -> Value {
    Authz::Authorizer {
        user: username.to_owned(),
    }
    .value()
}

fn no_overload(function: &str, v: &Value) -> ExecutionError {
    let t = match Authz::of(v) {
        Some(a) => a.runtime_type_name().to_owned(),
        None => v.type_of().to_string(),
    };
    ExecutionError::function_error(function, format!("no such overload: {function}({t})"))
}

fn user_of(function: &str, this: &Value) -> Result<String, ExecutionError> {
    match Authz::of(this) {
        Some(Authz::Authorizer { user }) => Ok(user.clone()),
        _ => Err(no_overload(function, this)),
    }
}

fn check_of(function: &str, this: &Value) -> Result<(String, bool), ExecutionError> {
    match Authz::of(this) {
        Some(Authz::Check { user, path }) => Ok((user.clone(), *path)),
        _ => Err(no_overload(function, this)),
    }
}

fn decision_of<'a>(function: &str, this: &'a Value) -> Result<&'a str, ExecutionError> {
    match Authz::of(this) {
        Some(Authz::Decision { error }) => Ok(error),
        _ => Err(no_overload(function, this)),
    }
}

/// Kubernetes' error, worded as cel-go words `types.NewErr` (the text alone).
fn plain(function: &str, text: &str) -> ExecutionError {
    ExecutionError::function_error(function, text)
}

fn path(This(this): This<Value>, p: Arc<String>) -> Result<Value, ExecutionError> {
    let user = user_of("path", &this)?;
    if p.trim().is_empty() {
        return Err(plain("path", "path must not be empty"));
    }
    Ok(Authz::Check { user, path: true }.value())
}

fn group(This(this): This<Value>, _g: Arc<String>) -> Result<Value, ExecutionError> {
    let user = user_of("group", &this)?;
    // A group check becomes a resource check with `resource(r)`; until then it is one with
    // no resource, which only `resource` accepts.
    Ok(Authz::Check { user, path: false }.value())
}

fn resource(This(this): This<Value>, r: Arc<String>) -> Result<Value, ExecutionError> {
    let (_, is_path) = check_of("resource", &this)?;
    if is_path {
        return Err(no_overload("resource", &this));
    }
    if r.trim().is_empty() {
        return Err(plain("resource", "resource must not be empty"));
    }
    Ok(this)
}

/// `subresource`, `namespace`, `name`, `fieldSelector`, `labelSelector`: the check, refined
/// in ways the offline answer does not depend on.
fn refine(
    function: &'static str,
) -> impl Fn(This<Value>, Arc<String>) -> Result<Value, ExecutionError> {
    move |This(this): This<Value>, _s: Arc<String>| match check_of(function, &this)? {
        (_, false) => Ok(this),
        (_, true) => Err(no_overload(function, &this)),
    }
}

fn service_account(
    This(this): This<Value>,
    namespace: Arc<String>,
    name: Arc<String>,
) -> Result<Value, ExecutionError> {
    user_of("serviceAccount", &this)?;
    if !super::k8s_format::dns1123_subdomain(&name).is_empty() {
        return Err(plain("serviceAccount", "Invalid service account name"));
    }
    if !super::k8s_format::dns1123_label(&namespace).is_empty() {
        return Err(plain("serviceAccount", "Invalid service account namespace"));
    }
    Ok(Authz::Authorizer {
        user: format!("system:serviceaccount:{namespace}:{name}"),
    }
    .value())
}

/// The checks one expression may make: Kubernetes charges each 350000 against an
/// expression's limit of 1000000 (`PerCallLimit`), so a third exceeds it.
const CHECKS_PER_EXPRESSION: u32 = 2;

thread_local! {
    static CHECKS: Cell<u32> = const { Cell::new(0) };
}

/// The checks of one expression evaluation: counted from zero while it lives, the outer
/// count restored when it ends.
pub struct Checks(u32);

impl Checks {
    pub(crate) fn enter() -> Self {
        Self(CHECKS.with(|c| c.replace(0)))
    }
}

impl Drop for Checks {
    fn drop(&mut self) {
        CHECKS.with(|c| c.set(self.0));
    }
}

/// The CLI's answer to a check for `user`.
fn check(This(this): This<Value>, _verb: Arc<String>) -> Result<Value, ExecutionError> {
    let (user, _) = check_of("check", &this)?;
    let made = CHECKS.with(|c| {
        let n = c.get().saturating_add(1);
        c.set(n);
        n
    });
    if made > CHECKS_PER_EXPRESSION {
        return Err(plain(
            "check",
            "operation cancelled: actual cost limit exceeded",
        ));
    }
    let error = if user.is_empty() {
        "no service account provided".to_owned()
    } else {
        "subjectaccessreviews.authorization.k8s.io \"\" already exists".to_owned()
    };
    Ok(Authz::Decision { error }.value())
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("path", path);
    let _ = ctx.add_function("group", group);
    let _ = ctx.add_function("resource", resource);
    for f in [
        "subresource",
        "namespace",
        "name",
        "fieldSelector",
        "labelSelector",
    ] {
        let _ = ctx.add_function(f, refine(f));
    }
    let _ = ctx.add_function("serviceAccount", service_account);
    let _ = ctx.add_function("check", check);
    let _ = ctx.add_function("allowed", |This(this): This<Value>| {
        decision_of("allowed", &this).map(|_| false)
    });
    let _ = ctx.add_function("errored", |This(this): This<Value>| {
        decision_of("errored", &this).map(|e| !e.is_empty())
    });
    let _ = ctx.add_function("error", |This(this): This<Value>| {
        decision_of("error", &this).map(|e| Value::String(Arc::new(e.to_owned())))
    });
    let _ = ctx.add_function("reason", |This(this): This<Value>| {
        decision_of("reason", &this).map(|_| Value::String(Arc::new(String::new())))
    });
}

#[cfg(test)]
#[path = "k8s_authz_tests.rs"]
mod tests;
