//! Authorization payloads (`httpPayloads`, `envoyPayloads`) for ValidatingPolicies in
//! `evaluation.mode: HTTP` / `Envoy`, through `kpol test` (testdata/authz/; the rows are those
//! the Kyverno v1.19.0 CLI gives for the same directory).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn kpol(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .output()
        .expect("run kpol");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rows_for_http_and_envoy_requests() {
    let (code, out, err) = kpol(&[
        "test",
        "testdata/authz",
        "--format",
        "json",
        "--detailed-results",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows: Vec<(String, String, String, String)> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (s("policy"), s("resource"), s("actual"), s("message"))
        })
        .collect();
    let d = "testdata/authz/";
    let want = [
        ("http-token", "http-ok.json", "pass", "request allowed"),
        (
            "http-token",
            "http-bad.json",
            "fail",
            "request denied, reason: bad token",
        ),
        ("envoy-admin", "envoy-admin.json", "pass", "request allowed"),
        (
            "envoy-ignored-errors",
            "envoy-admin.json",
            "skip",
            "request does not match",
        ),
        (
            "kubernetes-mode",
            "envoy-admin.json",
            "not found",
            "Not found",
        ),
        (
            "envoy-admin",
            "envoy-guest.json",
            "fail",
            "request denied with status code 403",
        ),
        (
            "envoy-admin",
            "envoy-expired.json",
            "fail",
            "request denied with status code 401",
        ),
        ("envoy-admin", "envoy-wrong-key.json", "error", ""),
        (
            "http-token",
            "envoy-wrong-key.json",
            "not found",
            "Not found",
        ),
    ];
    assert_eq!(rows.len(), want.len(), "{rows:#?}\n{err}");
    for (got, (p, file, actual, message)) in rows.iter().zip(want) {
        assert_eq!((got.0.as_str(), got.2.as_str()), (p, actual), "{got:?}");
        assert_eq!(got.1, format!("{d}{file}"));
        if actual == "error" {
            assert!(got.3.ends_with("invalid HMAC signature"), "{}", got.3);
        } else {
            assert_eq!(got.3, message);
        }
    }
    assert_eq!(code, Some(1));
}

/// A request file that does not read as an Envoy `CheckRequest` stops its test.
#[test]
fn an_unreadable_request_stops_the_test() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"attributes": {"reqest": {}}}"#,
    )
    .unwrap();
    std::fs::copy(
        "testdata/authz/policies.yaml",
        dir.path().join("policies.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("kyverno-test.yaml"),
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n\
         policies: [policies.yaml]\nenvoyPayloads: [bad.json]\n\
         results: [{policy: envoy-admin, kind: '', result: pass}]\n",
    )
    .unwrap();
    let (code, out, err) = kpol(&["test", dir.path().to_str().unwrap()]);
    let all = format!("{out}{err}");
    assert!(
        all.contains("failed to load Envoy payloads from path")
            && all.contains("unknown field \"reqest\""),
        "{all}"
    );
    assert_ne!(code, Some(0));
}

/// `kpol check --http-payload / --envoy-payload`: the same requests as findings at their file;
/// an allowed request alone exits 0, a denial 1, an unreadable request 2.
#[test]
fn check_answers_http_and_envoy_payloads() {
    let p = "testdata/authz/policies.yaml";
    let (code, out, err) = kpol(&[
        "check",
        "--policy",
        p,
        "--http-payload",
        "testdata/authz/http-ok.json",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, err) = kpol(&[
        "check",
        "--policy",
        p,
        "--http-payload",
        "testdata/authz/http-bad.json",
        "--envoy-payload",
        "testdata/authz/envoy-guest.json",
        "--envoy-payload",
        "testdata/authz/envoy-admin.json",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    // JSON lists every answer; the findings are the denials.
    let denials: Vec<&serde_json::Value> = json["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["result"] == "fail")
        .collect();
    let passes = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "pass")
        .count();
    assert_eq!(passes, 1, "{out}");
    let got: Vec<(String, String, String, u64)> = denials
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (
                s("policy"),
                s("result"),
                s("file"),
                r["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let row = |policy: &str, file: &str| {
        (
            policy.to_owned(),
            "fail".to_owned(),
            format!("testdata/authz/{file}"),
            1,
        )
    };
    assert_eq!(
        got,
        [
            row("http-token", "http-bad.json"),
            row("envoy-admin", "envoy-guest.json")
        ]
    );
    let messages: Vec<&str> = denials
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "request denied, reason: bad token",
            "request denied with status code 403"
        ]
    );
    // Human and SARIF output carry the same findings.
    let (code, out, _) = kpol(&[
        "check",
        "--policy",
        p,
        "--envoy-payload",
        "testdata/authz/envoy-wrong-key.json",
    ]);
    assert_eq!(code, Some(1));
    assert!(out.contains("error[envoy-admin/envoy-admin]"), "{out}");
    assert!(out.contains("envoy-wrong-key.json:1:1"), "{out}");
    assert!(
        out.contains("Envoy payload testdata/authz/envoy-wrong-key.json"),
        "{out}"
    );
    let (_, out, _) = kpol(&[
        "check",
        "--policy",
        p,
        "--http-payload",
        "testdata/authz/http-bad.json",
        "--format",
        "sarif",
    ]);
    let sarif: serde_json::Value = serde_json::from_str(&out).expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{out}");
    assert!(out.contains("http-bad.json"), "{out}");
    // A file that is not a request: an input error at the file, exit 2.
    let (code, out, err) = kpol(&[
        "check",
        "--policy",
        p,
        "--http-payload",
        "testdata/authz/kyverno-test.yaml",
    ]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        format!("{out}{err}").contains("invalid HTTP payload"),
        "{out}{err}"
    );
}
