//! `kpol test` on kpol's own CEL fixtures (`testdata/cel/`): ValidatingPolicy (autogen copy
//! included), ClusterPolicy `validate.cel`, a ValidatingAdmissionPolicy with a binding, and
//! ValidatingPolicies served by a `context:` file (`testdata/cel/context/`), and CEL
//! PolicyExceptions (`testdata/cel/exceptions/`).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn cel_fixtures_pass() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", "testdata/cel", "--format", "json"])
        .output()
        .expect("run kpol");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 23);
    for r in rows {
        assert_eq!(r["ok"], true, "{r}");
    }
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn check_reports_cel_syntax_error_at_its_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args([
            "check",
            "--policy",
            "testdata/cel/syntax-error.yaml",
            "testdata/cel/resources.yaml",
        ])
        .output()
        .expect("run kpol");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("syntax-error.yaml:13:42"), "{all}");
}

/// A `policies.kyverno.io` PolicyException naming the ValidatingPolicy in `policyRefs` makes
/// the `kpol test` row `skip`; a false match condition leaves the `fail`.
#[test]
fn cel_exception_rows_in_kpol_test() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", "testdata/cel/exceptions", "--format", "json"])
        .output()
        .expect("run kpol");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows: Vec<(String, String, String, bool)> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["resource"].as_str().unwrap_or("").to_owned(),
                r["rule"].as_str().unwrap_or("").to_owned(),
                r["actual"].as_str().unwrap_or("").to_owned(),
                r["ok"] == true,
            )
        })
        .collect();
    let row = |resource: &str| rows.iter().find(|r| r.0 == resource).expect(resource);
    assert_eq!(row("v1/Pod/ops/legacy").1, "exception");
    assert_eq!(row("v1/Pod/ops/legacy").2, "skip");
    assert_eq!(row("v1/Pod/dev/legacy-elsewhere").2, "fail");
    assert_eq!(row("v1/Pod/ops/unlabelled").2, "fail");
    assert_eq!(row("v1/Pod/ops/owned").2, "pass");
    assert!(rows.iter().all(|r| r.3), "{rows:?}");
    assert_eq!(out.status.code(), Some(0));
}

/// The same exception given to `kpol check -e`: the excepted pod is `skip` with Kyverno's
/// message, the others keep their verdicts.
#[test]
fn cel_exception_in_kpol_check() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args([
            "check",
            "--policy",
            "testdata/cel/exceptions/policy.yaml",
            "-e",
            "testdata/cel/exceptions/exception.yaml",
            "testdata/cel/exceptions/resources.yaml",
            "--format",
            "json",
        ])
        .output()
        .expect("run kpol");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let results = json["results"].as_array().expect("results");
    let by_name = |name: &str| {
        results
            .iter()
            .find(|r| r["resource"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {json}"))
    };
    let legacy = by_name("legacy");
    assert_eq!(legacy["result"], "skip");
    assert_eq!(legacy["rule"], "exception");
    assert_eq!(
        legacy["message"],
        "rule is skipped due to policy exception: ops/legacy-pods"
    );
    assert_eq!(by_name("legacy-elsewhere")["result"], "fail");
    assert_eq!(by_name("unlabelled")["result"], "fail");
    assert_eq!(by_name("owned")["result"], "pass");
    assert_eq!(results.len(), 4);
    // The failures fail the run; the skip does not.
    assert_eq!(out.status.code(), Some(1));
}

/// Kubernetes' CEL libraries (`testdata/cel-k8s-libs`): quantity, ip/cidr, url, semver, sets,
/// findAll with a limit and two-variable comprehensions in a ValidatingPolicy and a
/// ClusterPolicy `validate.cel` rule. The rows and messages are the Kyverno v1.19.0 CLI's.
#[test]
fn kubernetes_cel_libraries() {
    let (json, code) = test_json("testdata/cel-k8s-libs");
    let rows = json["rows"].as_array().expect("rows");
    let actual: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["resource"].as_str().unwrap_or(""),
                r["actual"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let ns = |n: &str| format!("v1/ConfigMap/default/{n}");
    let want = [
        ("good", "pass"),
        ("too-big", "fail"),
        ("outside", "fail"),
        ("bad-quantity", "error"),
        ("bad-url", "error"),
        ("good", "pass"),
        ("too-big", "pass"),
        ("bad-quantity", "pass"),
        ("outside", "fail"),
        ("bad-url", "fail"),
    ];
    let want: Vec<(String, &str)> = want.iter().map(|(n, r)| (ns(n), *r)).collect();
    let got: Vec<(String, &str)> = actual.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect();
    assert_eq!(got, want);
    assert!(rows.iter().all(|r| r["ok"] == true), "{json}");
    assert_eq!(code, Some(0));

    let text = detailed("testdata/cel-k8s-libs");
    for message in [
        "memory must be under 1Gi",
        "address must be in 10.0.0.0/8",
        "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        "error: URL parse error during conversion from string: parse \"api.example.com\": invalid URI for request",
        "address must be a non-loopback IP",
        "endpoint and version must parse",
    ] {
        assert!(text.contains(message), "{message}\n{text}");
    }
}

/// Kubernetes' `format` library's CRD formats (`uuid`, `byte`, `date`, `datetime`), checked as
/// kube-openapi's strfmt checks them: testdata/cel-k8s-formats holds 30 values whose expected
/// results and messages are those of the Kyverno v1.19.0 CLI (`kyverno test`).
#[test]
fn kubernetes_crd_formats() {
    let (json, code) = test_json("testdata/cel-k8s-formats");
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 30, "{json}");
    assert!(rows.iter().all(|r| r["ok"] == true), "{json}");
    let failed = rows.iter().filter(|r| r["actual"] == "fail").count();
    assert_eq!(failed, 19, "{json}");
    assert_eq!(code, Some(0));

    let text = detailed("testdata/cel-k8s-formats");
    for message in [
        "does not match the UUID format",
        "invalid base64",
        "invalid date",
        "invalid datetime",
    ] {
        assert!(text.contains(message), "{message}: {text}");
    }
}

/// Kubernetes' CEL `authorizer` library in ClusterPolicy `validate.cel` (testdata/cel-authorizer):
/// offline every decision denies, `errored()` with `no service account provided` when the
/// request has no user, and the builders refuse empty paths and resources and invalid service
/// accounts; a messageExpression does not see `authorizer`, preconditions do, and a third check
/// in one expression exceeds its cost limit. The rows and messages are the Kyverno v1.19.0 CLI's.
#[test]
fn kubernetes_authorizer_library() {
    let (json, code) = test_json("testdata/cel-authorizer");
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 24, "{json}");
    assert!(rows.iter().all(|r| r["ok"] == true), "{json}");
    let passed = rows.iter().filter(|r| r["actual"] == "pass").count();
    assert_eq!(passed, 7, "{json}");
    assert_eq!(code, Some(0));

    let text = detailed("testdata/cel-authorizer");
    assert!(!text.contains("checked: "), "{text}");
    for message in [
        "no-user-allowed denied",
        "service-account-allowed denied",
        "Validation rule 'no-user-errored' passed.",
        "resulted in error: Invalid service account namespace",
        "resulted in error: Invalid service account name",
        "resulted in error: path must not be empty",
        "resulted in error: resource must not be empty",
        "resulted in error: operation cancelled: actual cost limit exceeded",
        "precondition ran",
        "Validation rule 'three-variables' passed.",
    ] {
        assert!(text.contains(message), "{message}: {text}");
    }
}

/// `kpol test DIR --format json`: the report and the exit code.
fn test_json(dir: &str) -> (serde_json::Value, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", dir, "--format", "json"])
        .output()
        .expect("run kpol");
    let json = serde_json::from_slice(&out.stdout).expect("json");
    (json, out.status.code())
}

/// `kpol test DIR --detailed-results`: its standard output.
fn detailed(dir: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", dir, "--detailed-results"])
        .output()
        .expect("run kpol");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
