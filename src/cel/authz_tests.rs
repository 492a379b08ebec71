use super::*;
use crate::cel::eval_expr;

fn answer(expr: &str) -> Answer {
    match eval_expr(expr) {
        Ok(v) => Answer::of(&v).cloned().unwrap_or_else(|| panic!("{v:?}")),
        Err(e) => panic!("{expr}: {e}"),
    }
}

fn err(expr: &str) -> String {
    match eval_expr(expr) {
        Ok(v) => panic!("{expr} gave {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn http_answers() {
    assert_eq!(answer("http.Allowed()"), Answer::HttpOk);
    assert_eq!(
        answer("http.Allowed().Response()"),
        Answer::HttpResponse(Ok(()))
    );
    assert_eq!(
        answer("http.Denied('no').Response()"),
        Answer::HttpResponse(Err("no".to_owned()))
    );
    let e = err("http.Denied(1)");
    assert!(e.contains("Unexpected type"), "{e}");
    // A response is not answered again.
    assert!(err("http.Allowed().Response().Response()").contains("no such overload"));
}

#[test]
fn envoy_allowed_with_headers_and_params() {
    let a = answer(
        "envoy.Allowed().WithHeader('a', 'b').WithHeader(envoy.Header('c', '').KeepEmptyValue())\
         .WithoutHeader('x').WithResponseHeader('r', 's').WithQueryParam('q', '1')\
         .WithQueryParam(envoy.QueryParam('p', '2')).WithoutQueryParam('z')",
    );
    let Answer::EnvoyOk(ok) = a else {
        panic!("{a:?}")
    };
    assert_eq!(ok.headers.len(), 2);
    assert_eq!(ok.headers[0].key, "a");
    assert!(ok.headers[1].keep_empty_value);
    assert_eq!(ok.headers_to_remove, ["x"]);
    assert_eq!(ok.response_headers_to_add[0].value, "s");
    assert_eq!(
        ok.query_parameters_to_set,
        [
            ("q".to_owned(), "1".to_owned()),
            ("p".to_owned(), "2".to_owned())
        ]
    );
    assert_eq!(ok.query_parameters_to_remove, ["z"]);
    let Answer::EnvoyHeader(h) = answer("envoy.Header('k', 'v').KeepEmptyValue(false)") else {
        panic!()
    };
    assert!(!h.keep_empty_value);
}

#[test]
fn envoy_denied_and_responses() {
    let r = answer(
        "envoy.Denied(403).WithBody('nope').WithHeader('h', 'v').Response().WithMessage('m')",
    );
    let Answer::EnvoyResponse(r) = r else {
        panic!("{r:?}")
    };
    assert_eq!(r.status, 7);
    assert_eq!(r.message, "m");
    let Err(d) = &r.http else { panic!() };
    assert_eq!((d.code, d.body.as_str()), (403, "nope"));
    let Answer::EnvoyResponse(ok) = answer("envoy.Allowed().Response().WithMetadata({'k': 'v'})")
    else {
        panic!()
    };
    assert_eq!(ok.status, 0);
    assert_eq!(ok.metadata.as_deref(), Some(r#"{"k":"v"}"#));
}

#[test]
fn envoy_wrong_receivers_and_arguments_are_errors() {
    assert!(err("envoy.Allowed().WithBody('x')").contains("no such overload"));
    assert!(err("envoy.Denied(1).WithoutHeader('x')").contains("no such overload"));
    assert!(err("envoy.Allowed().WithHeader(1, 2)").contains("no such overload"));
    assert!(
        err("envoy.Allowed().WithHeader(envoy.QueryParam('a', 'b'))").contains("no such overload")
    );
    assert!(err("envoy.Allowed().Response().WithMetadata('x')").contains("no such overload"));
    assert!(err("envoy.Denied('x')").contains("Unexpected type"));
    assert!(err("'x'.Response()").contains("no such overload"));
}

#[test]
fn request_headers_and_query_params() {
    let attrs = "{'header': {'X-Token': ['a', 'b']}, 'query': {'page': ['2']}}";
    assert_eq!(
        eval_expr(&format!("{attrs}.Header('x-token')")),
        eval_expr("['a', 'b']")
    );
    // The key is canonicalised; the map is not: a lower-case header is not found.
    assert_eq!(
        eval_expr("{'header': {'x-token': ['a']}}.Header('x-token').size()"),
        Ok(Value::Int(0))
    );
    assert_eq!(
        eval_expr(&format!("{attrs}.QueryParam('page')")),
        eval_expr("['2']")
    );
    assert_eq!(
        eval_expr(&format!("{attrs}.QueryParam('Page').size()")),
        Ok(Value::Int(0))
    );
    assert!(err("'x'.Header('a')").contains("no such overload"));
}

#[test]
fn canonical_mime_keys_as_go() {
    assert_eq!(canonical_mime_key("x-forwarded-for"), "X-Forwarded-For");
    assert_eq!(canonical_mime_key("CONTENT-TYPE"), "Content-Type");
    assert_eq!(canonical_mime_key("bad key"), "bad key");
}
