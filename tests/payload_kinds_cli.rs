//! JSON payloads for the kinds besides ValidatingPolicy (testdata/json-payload-deleting/,
//! testdata/json-payload-image/):
//! the Kyverno v1.19 CLI hands every `jsonPayloads` document to each DeletingPolicy too
//! (`test.go` `applyDeletingPolicies`), unmatched, with `namespaceObject` null.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

// A payload the conditions hold for is a pass ("resource matched"), another a fail: rows
// that were `Not found` when payloads reached only ValidatingPolicies.
#[test]
fn deleting_policies_evaluate_json_payloads() {
    let run = common::kpol_test(&["testdata/json-payload-deleting"]);
    let stdout = &run.stdout;
    // (resource, actual, expected)
    let rows: Vec<(String, String, String)> = run
        .rows()
        .into_iter()
        .map(|r| (r.resource, r.actual, r.expected))
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
    assert_eq!(run.code, Some(0), "{stdout}");
}

// A JSON-mode ImageValidatingPolicy answers for payloads (testdata/json-payload-image/):
// validations, the digest check, and an error where registry data would be needed; the Pod
// among the resources gets no row.
#[test]
fn image_validating_policies_evaluate_json_payloads() {
    let run = common::kpol_test(&["testdata/json-payload-image"]);
    let stdout = &run.stdout;
    // (resource, rule, actual)
    let rows: Vec<(String, String, String)> = run
        .rows()
        .into_iter()
        .map(|r| (r.resource, r.rule, r.actual))
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
    assert_eq!(run.code, Some(0), "{stdout}");
}
