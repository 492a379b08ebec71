//! A ValidatingPolicy in `evaluation.mode: HTTP` or `Envoy` (kyverno-authz) against one
//! authorization request ([`super::authz_request`]), as Kyverno v1.19.0's CLI evaluates it
//! (`processor/authz_processor.go` over kyverno-authz's `engine/compiler`): such a policy
//! never sees resources or JSON payloads, only the requests of its own mode.
//!
//! `matchConditions` first (one false: not matched; errors: an error), then the `variables`,
//! then the `validations` in order: the first that is not null is the answer. No answer is a
//! `skip` ("request does not match"); an allowed answer a `pass` ("request allowed"); a
//! denied one a `fail` ("request denied, reason: …" for HTTP, "request denied with status
//! code …" for Envoy); an evaluation error an `error`, or a `skip` with `failurePolicy:
//! Ignore`. Matching constraints, autogen and PolicyExceptions do not apply (the CLI passes
//! none). The rule is named after the policy.
//!
//! kyverno-authz refuses, when the policy compiles, a validation whose type is neither the
//! mode's `CheckResponse` nor null; kpol's CEL is dynamically typed, so such a value is an
//! `error` row naming the expected type when it is met.

use cel::Value;

use super::CelPolicy;
use crate::cel::Activation;
use crate::cel::authz::Answer;
use crate::report::{RuleResponse, Status};

/// The two authorization modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthzMode {
    Http,
    Envoy,
}

impl AuthzMode {
    /// `spec.evaluation.mode` as written.
    pub fn from_mode(mode: &str) -> Option<Self> {
        match mode {
            "HTTP" => Some(Self::Http),
            "Envoy" => Some(Self::Envoy),
            _ => None,
        }
    }

    fn response_type(self) -> &'static str {
        match self {
            Self::Http => "http.CheckResponse",
            Self::Envoy => "envoy.service.auth.v3.CheckResponse",
        }
    }
}

const NO_MATCH: &str = "request does not match";

/// The response of `policy` for one request (`object`); `None` when the policy is not in
/// `mode`.
pub fn evaluate(policy: &CelPolicy, mode: AuthzMode, object: Value) -> Option<RuleResponse> {
    if policy.authz != Some(mode) {
        return None;
    }
    let _budget = crate::base::budget::Scope::enter();
    let respond = |status: Status, message: String| {
        let mut r = RuleResponse::new(&policy.name, status, message);
        r.failure_action = policy.action;
        Some(r)
    };
    if let Some(why) = &policy.broken {
        return respond(Status::Error, why.clone());
    }
    match answer(policy, mode, object) {
        Ok(None) => respond(Status::Skip, NO_MATCH.to_owned()),
        Ok(Some(verdict)) => match verdict {
            Verdict::Allowed => respond(Status::Pass, "request allowed".to_owned()),
            Verdict::Denied(why) => respond(Status::Fail, why),
        },
        Err(_) if policy.ignore_failures => respond(Status::Skip, NO_MATCH.to_owned()),
        Err(e) => respond(Status::Error, e),
    }
}

enum Verdict {
    Allowed,
    /// The row's message.
    Denied(String),
}

fn answer(policy: &CelPolicy, mode: AuthzMode, object: Value) -> Result<Option<Verdict>, String> {
    let Some(v) = policy.variants.first() else {
        return Ok(None);
    };
    let mut act = Activation::new();
    act.set("object", object);
    let mut errors = Vec::new();
    for (_, cond) in &v.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => return Ok(None),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    for val in &v.validations {
        let out = act.eval(&val.expression)?;
        if matches!(out, Value::Null) {
            continue;
        }
        return match (mode, Answer::of(&out)) {
            (AuthzMode::Http, Some(Answer::HttpResponse(Ok(())))) => Ok(Some(Verdict::Allowed)),
            (AuthzMode::Http, Some(Answer::HttpResponse(Err(reason)))) => Ok(Some(
                Verdict::Denied(format!("request denied, reason: {reason}")),
            )),
            (AuthzMode::Envoy, Some(Answer::EnvoyResponse(r))) => Ok(Some(match &r.http {
                Ok(_) => Verdict::Allowed,
                Err(d) => Verdict::Denied(format!("request denied with status code {}", d.code)),
            })),
            _ => Err(format!(
                "rule response output is expected to be of type {}",
                mode.response_type()
            )),
        };
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: &str, spec: &str) -> crate::policy::Policy {
        let text = format!(
            "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata:\n  name: p\nspec:\n  evaluation:\n    mode: {mode}\n{spec}"
        );
        let source = std::sync::Arc::new(crate::source::SourceFile::new("p.yaml", &text));
        let docs = crate::yaml::parse_documents(&text, crate::yaml::Limits::default()).unwrap();
        let mut l = crate::kinds::load_policies(&source, docs);
        assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
        l.policies.remove(0)
    }

    fn run(mode: AuthzMode, spec: &str, object: Value) -> RuleResponse {
        let name = match mode {
            AuthzMode::Http => "HTTP",
            AuthzMode::Envoy => "Envoy",
        };
        let p = policy(name, spec);
        let cel = super::super::cel_policy(&p).unwrap();
        evaluate(cel, mode, object).unwrap()
    }

    fn envoy(headers: &str) -> Value {
        super::super::authz_request::envoy_request(&format!(
            r#"{{"attributes": {{"request": {{"http": {{"headers": {headers}}}}}}}}}"#
        ))
        .unwrap()
    }

    const ROLE: &str = "  variables:\n  - name: role\n    expression: object.attributes.request.http.headers[?'role'].orValue('')\n  validations:\n  - expression: \"variables.role == 'admin' ? null : envoy.Denied(403).Response()\"\n  - expression: envoy.Allowed().Response()\n";

    #[test]
    fn the_first_answer_decides() {
        let r = run(AuthzMode::Envoy, ROLE, envoy(r#"{"role": "admin"}"#));
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Pass, "request allowed")
        );
        assert_eq!(r.rule, "p");
        let r = run(AuthzMode::Envoy, ROLE, envoy("{}"));
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Fail, "request denied with status code 403")
        );
    }

    #[test]
    fn http_denied_names_the_reason_and_no_answer_skips() {
        let req =
            super::super::authz_request::http_request(r#"{"attributes": {"path": "/x"}}"#).unwrap();
        let spec = "  validations:\n  - expression: \"object.attributes.path == '/x' ? http.Denied('nope').Response() : null\"\n";
        let r = run(AuthzMode::Http, spec, req.clone());
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Fail, "request denied, reason: nope")
        );
        let spec = "  validations:\n  - expression: 'null'\n";
        let r = run(AuthzMode::Http, spec, req.clone());
        assert_eq!((r.status, r.message.as_str()), (Status::Skip, NO_MATCH));
        let spec = "  matchConditions:\n  - name: m\n    expression: object.attributes.path == '/y'\n  validations:\n  - expression: http.Allowed().Response()\n";
        assert_eq!(run(AuthzMode::Http, spec, req).status, Status::Skip);
    }

    #[test]
    fn errors_and_wrong_answers() {
        let req = envoy("{}");
        let spec = "  validations:\n  - expression: object.attributes.missing.x\n";
        assert_eq!(
            run(AuthzMode::Envoy, spec, req.clone()).status,
            Status::Error
        );
        let ignore = format!("  failurePolicy: Ignore\n{spec}");
        assert_eq!(
            run(AuthzMode::Envoy, &ignore, req.clone()).status,
            Status::Skip
        );
        // An HTTP answer in an Envoy policy, or a boolean, is not a CheckResponse.
        for wrong in ["http.Allowed().Response()", "'true' == 'true'"] {
            let spec = format!("  validations:\n  - expression: \"{wrong}\"\n");
            let r = run(AuthzMode::Envoy, &spec, req.clone());
            assert_eq!(r.status, Status::Error);
            assert!(
                r.message.contains("envoy.service.auth.v3.CheckResponse"),
                "{}",
                r.message
            );
        }
        // A policy of one mode does not answer requests of the other.
        let p = policy(
            "HTTP",
            "  validations:\n  - expression: http.Allowed().Response()\n",
        );
        let cel = super::super::cel_policy(&p).unwrap();
        assert!(evaluate(cel, AuthzMode::Envoy, req).is_none());
    }
}
