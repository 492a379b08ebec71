//! Policy fields against Kyverno v1.19's CRD schemas, end to end: an unknown field in a policy
//! or an exception is an error at its line:column and the run exits 2, though the findings of
//! the policy are still reported.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

/// `mesage:` in a validate rule (the Kyverno CLI refuses the file): exit 2, the error at the
/// key, and the rule still evaluated.
#[test]
fn an_unknown_policy_field_fails_the_run_at_its_place() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/schema/typo-policy.yaml",
        "testdata/check/invalid/pod.yaml",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        out.contains("error[schema]: ClusterPolicy require-team: spec.rules[0].validate: unknown field \"mesage\""),
        "{out}"
    );
    assert!(
        out.contains("--> testdata/check/schema/typo-policy.yaml:14:7"),
        "{out}"
    );
}

/// A misspelt field in a PolicyException given with `-e`, in the concise JSON view.
#[test]
fn an_unknown_exception_field_is_a_json_diagnostic() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/schema/typo-policy.yaml",
        "-e",
        "testdata/check/schema/typo-exception.yaml",
        "--format",
        "json",
        "testdata/check/invalid/pod.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags: Vec<_> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "schema")
        .map(|d| {
            format!(
                "{}:{}:{} {}",
                d["location"]["file"].as_str().unwrap(),
                d["location"]["start"]["line"],
                d["location"]["start"]["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        diags,
        [
            "testdata/check/schema/typo-policy.yaml:14:7 ClusterPolicy require-team: spec.rules[0].validate: unknown field \"mesage\"",
            "testdata/check/schema/typo-exception.yaml:14:9 PolicyException allow-legacy: spec.match.any[0].resources: unknown field \"namez\"",
        ]
    );
}

fn unknown_kind_warnings(o: &std::process::Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "unknown-kind")
        .map(|d| {
            assert_eq!(d["severity"], "warning");
            format!(
                "{}:{} {}",
                d["location"]["start"]["line"],
                d["location"]["start"]["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// `kinds: [Podd]` never matches anything: a warning at the entry, with the likely kind; a
/// kind that a CRD among the inputs defines (`Widget`) is not warned about.
#[test]
fn a_kind_no_cluster_has_is_a_warning() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/schema/podd-policy.yaml",
        "--format",
        "json",
        "testdata/check/invalid/pod.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let podd = "11:19 policy require-team rule team-label: kind Podd is neither a built-in kind nor defined by a CRD among the inputs; it never matches (did you mean Pod?)";
    let widget = "11:45 policy require-team rule team-label: kind Widget is neither a built-in kind nor defined by a CRD among the inputs; it never matches";
    assert_eq!(unknown_kind_warnings(&o), [podd, widget]);

    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/schema/podd-policy.yaml",
        "--format",
        "json",
        "testdata/check/invalid/pod.yaml",
        "testdata/check/schema/widget-crd.yaml",
    ]);
    assert_eq!(unknown_kind_warnings(&o), [podd]);
}

/// An exception's `kinds` are checked too: `Deploymnet` never matches.
#[test]
fn an_exception_kind_no_cluster_has_is_a_warning() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/schema/typo-policy.yaml",
        "-e",
        "testdata/check/schema/deploymnet-exception.yaml",
        "--format",
        "json",
        "testdata/check/invalid/pod.yaml",
    ]);
    assert_eq!(
        unknown_kind_warnings(&o),
        [
            "12:17 PolicyException ex: kind Deploymnet is neither a built-in kind nor defined by a CRD among the inputs; it never matches (did you mean Deployment?)"
        ]
    );
}
