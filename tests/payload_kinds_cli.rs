//! JSON payloads for the kinds besides ValidatingPolicy (testdata/json-payload-deleting/,
//! testdata/json-payload-image/):
//! the Kyverno v1.19 CLI hands every `jsonPayloads` document to each DeletingPolicy too
//! (`test.go` `applyDeletingPolicies`), unmatched, with `namespaceObject` null.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

// A payload the conditions hold for is a pass ("resource matched"), another a fail: rows
// that were `Not found` when payloads reached only ValidatingPolicies.
#[test]
fn deleting_policies_evaluate_json_payloads() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", "testdata/json-payload-deleting", "--format", "json"])
        .output()
        .expect("run kpol");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    // (resource, actual, expected)
    let rows: Vec<(String, String, String)> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["resource"].as_str().unwrap().to_owned(),
                r["actual"].as_str().unwrap().to_owned(),
                r["expected"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "sandbox.json".to_owned(),
                "pass".to_owned(),
                "pass".to_owned()
            ),
            ("prod.json".to_owned(), "fail".to_owned(), "fail".to_owned()),
        ],
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

// A JSON-mode ImageValidatingPolicy answers for payloads (testdata/json-payload-image/):
// validations, the digest check, and an error where registry data would be needed; the Pod
// among the resources gets no row.
#[test]
fn image_validating_policies_evaluate_json_payloads() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", "testdata/json-payload-image", "--format", "json"])
        .output()
        .expect("run kpol");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    // (resource, rule, actual)
    let rows: Vec<(String, String, String)> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["resource"].as_str().unwrap().to_owned(),
                r["rule"].as_str().unwrap().to_owned(),
                r["actual"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want = [
        ("unmatched.json", "payload-images", "pass"),
        ("dev.json", "payload-images", "fail"),
        ("no-digest.json", "payload-images", "fail"),
        ("digest.json", "evaluation", "error"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| ((*a).into(), (*b).into(), (*c).into()))
        .collect();
    assert_eq!(rows, want, "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}
