use super::*;
use crate::cel::{Activation, compile};
use crate::source::Span;

/// `expr` evaluated with `authorizer` bound for `user`.
fn eval(user: &str, expr: &str) -> Result<Value, String> {
    let (p, err) = compile(expr, Span::EMPTY);
    assert!(err.is_none(), "{err:?}");
    let mut act = Activation::new();
    act.set("authorizer", authorizer(user));
    act.eval(&p)
}

fn string(user: &str, expr: &str) -> String {
    match eval(user, expr) {
        Ok(Value::String(s)) => s.to_string(),
        other => panic!("{expr}: {other:?}"),
    }
}

#[test]
fn without_a_user_every_check_errs() {
    for check in [
        "authorizer.path('/healthz').check('get')",
        "authorizer.group('apps').resource('deployments').subresource('scale').namespace('a').name('b').check('update')",
        "authorizer.group('').resource('pods').fieldSelector('a=b').labelSelector('x').check('list')",
    ] {
        assert_eq!(
            string("", &format!("{check}.error()")),
            "no service account provided"
        );
        assert_eq!(string("", &format!("{check}.reason()")), "");
        assert_eq!(
            eval("", &format!("{check}.errored()")),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            eval("", &format!("{check}.allowed()")),
            Ok(Value::Bool(false))
        );
    }
}

#[test]
fn with_a_user_the_review_is_refused() {
    let refused = "subjectaccessreviews.authorization.k8s.io \"\" already exists";
    assert_eq!(
        string("alice", "authorizer.path('/x').check('get').error()"),
        refused
    );
    assert_eq!(
        string(
            "",
            "authorizer.serviceAccount('default', 'builder').group('').resource('pods').check('get').error()"
        ),
        refused
    );
    assert_eq!(
        eval("alice", "authorizer.path('/x').check('get').allowed()"),
        Ok(Value::Bool(false))
    );
}

#[test]
fn builders_check_their_arguments() {
    let err = |e: &str| eval("", e).expect_err(e);
    assert_eq!(err("authorizer.path(' ')"), "path must not be empty");
    assert_eq!(
        err("authorizer.group('').resource('')"),
        "resource must not be empty"
    );
    assert_eq!(
        err("authorizer.serviceAccount('default', 'Bad_Name')"),
        "Invalid service account name"
    );
    // A subdomain name is valid; a namespace must be a label.
    assert!(eval("", "authorizer.serviceAccount('default', 'a.b')").is_ok());
    assert_eq!(
        err("authorizer.serviceAccount('a.b', 'sa')"),
        "Invalid service account namespace"
    );
    // A path check has no resource; a group check is not a decision.
    assert!(err("authorizer.path('/x').resource('pods')").contains("no such overload"));
    assert!(err("authorizer.group('').allowed()").contains("no such overload"));
    assert!(err("'x'.check('get')").contains("no such overload"));
}

#[test]
fn two_checks_an_expression() {
    let two = "authorizer.path('/a').check('get').errored() && authorizer.path('/b').check('get').errored()";
    assert_eq!(eval("", two), Ok(Value::Bool(true)));
    let three = format!("{two} && authorizer.path('/c').check('get').errored()");
    assert_eq!(
        eval("", &three),
        Err("operation cancelled: actual cost limit exceeded".to_owned())
    );
    // Each expression counts its own.
    assert_eq!(eval("", two), Ok(Value::Bool(true)));
}
