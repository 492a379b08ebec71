//! JSON payloads for the kinds besides ValidatingPolicy (testdata/json-payload-deleting/):
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
