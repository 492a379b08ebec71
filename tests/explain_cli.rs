//! `kpol explain` as a user sees it, over testdata/explain: snapshots of a pattern failure, an
//! anyPattern failure, a deny condition and a ValidatingPolicy (CEL) validation, and of
//! `--why-pass`; `--finding` with the fingerprint `kpol check --format json` prints (the same
//! as SARIF's); `--exception` documents that `kpol check -e` accepts and that exempt exactly
//! the finding. Snapshots are in tests/snapshots/ (`INSTA_UPDATE=always cargo test --test
//! explain_cli` rewrites them after an intended change).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Output;

use common::{kpol, shown};
use serde_json::Value;

const POLICIES: &str = "testdata/explain/policies";
const PODS: &str = "testdata/explain/resources/pods.yaml";
const DEPLOYMENTS: &str = "testdata/explain/resources/deployment.yaml";

fn explain(more: &[&str]) -> Output {
    let mut args = vec!["explain", "--no-config", "-p", POLICIES];
    args.extend_from_slice(more);
    kpol(&args)
}

fn snapshot(name: &str, more: &[&str]) {
    let o = explain(more);
    let description = format!("kpol explain --no-config -p {POLICIES} {}", more.join(" "));
    common::snapshot(name, description, &o);
}

#[test]
fn pattern_failure() {
    // The second container has no resources: the pattern's `resources` node is expected.
    snapshot("explain-pattern", &[&format!("{PODS}:15")]);
}

#[test]
fn any_pattern_failure() {
    // Both alternatives fail, each at its own path.
    snapshot("explain-any-pattern", &[&format!("{PODS}:8")]);
}

#[test]
fn deny_condition() {
    // The first `any` condition holds (1 < 2), the second does not.
    snapshot("explain-deny", &[&format!("{DEPLOYMENTS}:28")]);
}

#[test]
fn cel_validation() {
    // A ValidatingPolicy: the second validation is false, with its operands' values.
    snapshot("explain-cel", &[&format!("{DEPLOYMENTS}:10")]);
}

#[test]
fn validate_cel_rule() {
    // A ClusterPolicy `validate.cel` expression: `||` split into its operands.
    let o = kpol(&[
        "explain",
        "--no-config",
        "-p",
        "testdata/explain/cel-rule",
        &format!("{PODS}:3"),
    ]);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings.bind(|| insta::assert_snapshot!("explain-validate-cel", shown(&o)));
}

#[test]
fn foreach_pattern_failure() {
    // The element's pattern node and the element's field; the invalid policy among
    // testdata/report/policies is left out with a note on stderr, as kpol check leaves it out.
    let o = kpol(&[
        "explain",
        "--no-config",
        "-p",
        "testdata/report/policies",
        "testdata/report/resources/pod.yaml:13",
    ]);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings.bind(|| insta::assert_snapshot!("explain-foreach", shown(&o)));
}

#[test]
fn why_pass() {
    snapshot("explain-why-pass", &[&format!("{PODS}:25"), "--why-pass"]);
}

#[test]
fn why_pass_names_the_precondition_that_did_not_hold() {
    // batch-worker is `tier: backend`: minimum-replicas is skipped by its precondition.
    snapshot(
        "explain-why-pass-preconditions",
        &[&format!("{DEPLOYMENTS}:60"), "--why-pass"],
    );
}

#[test]
fn a_line_without_a_finding_exits_1() {
    let o = explain(&[&format!("{PODS}:25")]);
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no failing finding"));
    let o = explain(&["no-such-file.yaml:3"]);
    assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
    let o = explain(&[PODS]);
    assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
}

/// The JSON report's failing results: (policy/rule, file:line, fingerprint).
fn json_findings() -> Vec<(String, String, String)> {
    let o = kpol(&[
        "check",
        "--no-config",
        "testdata/explain/resources",
        "-p",
        POLICIES,
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "fail")
        .map(|r| {
            (
                format!(
                    "{}/{}",
                    r["policy"].as_str().unwrap(),
                    r["rule"].as_str().unwrap()
                ),
                format!("{}:{}", r["file"].as_str().unwrap(), r["start"]["line"]),
                r["fingerprint"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn json_fingerprints_are_sarifs() {
    let o = kpol(&[
        "check",
        "--no-config",
        "testdata/explain/resources",
        "-p",
        POLICIES,
        "--format",
        "sarif",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one SARIF document");
    let mut sarif: Vec<String> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["partialFingerprints"]["kpolFinding/v2"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut json: Vec<String> = json_findings().into_iter().map(|(.., f)| f).collect();
    sarif.sort();
    json.sort();
    assert_eq!(json.len(), 4);
    assert_eq!(json, sarif);
}

#[test]
fn finding_by_fingerprint_is_the_finding_at_its_line() {
    for (rule, at, id) in json_findings() {
        let by_id = explain(&["--finding", &id, "testdata/explain/resources"]);
        let by_line = explain(&[&at]);
        assert_eq!(by_id.status.code(), Some(0), "{rule}: {}", shown(&by_id));
        assert_eq!(
            String::from_utf8_lossy(&by_id.stdout),
            String::from_utf8_lossy(&by_line.stdout),
            "{rule} at {at}"
        );
        assert!(String::from_utf8_lossy(&by_id.stdout).contains(&id));
    }
    let o = explain(&[
        "--finding",
        "0000000000000000",
        "testdata/explain/resources",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
}

#[test]
fn printed_exceptions_load_and_exempt_exactly_their_finding() {
    let dir = std::env::temp_dir().join(format!("kpol-explain-exc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let before = json_findings();
    for (rule, at, id) in &before {
        let o = explain(&[at, "--exception"]);
        assert_eq!(o.status.code(), Some(0), "{rule}: {}", shown(&o));
        let file = dir.join(format!("{id}.yaml"));
        std::fs::write(&file, &o.stdout).unwrap();
        let o = kpol(&[
            "check",
            "--no-config",
            "testdata/explain/resources",
            "-p",
            POLICIES,
            "-e",
            file.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
        assert_eq!(doc["diagnostics"], Value::Array(vec![]), "{rule}: {doc}");
        let results = doc["results"].as_array().unwrap();
        let of = |result: &str| -> Vec<&str> {
            results
                .iter()
                .filter(|r| r["result"] == result)
                .map(|r| r["fingerprint"].as_str().unwrap())
                .collect()
        };
        // The excepted finding is now a skip; every other failure is still there.
        let mut still: Vec<&str> = before.iter().map(|(.., f)| f.as_str()).collect();
        still.retain(|f| f != id);
        assert_eq!(of("fail"), still, "{rule}");
        // One more skip, of the finding's policy on its resource (a ValidatingPolicy's skip is
        // rule `exception`); the other skip is batch-worker's precondition.
        let skips: Vec<&Value> = results.iter().filter(|r| r["result"] == "skip").collect();
        assert_eq!(skips.len(), 2, "{rule}: {doc}");
        let policy = rule.split('/').next().unwrap();
        assert!(
            skips
                .iter()
                .any(|r| r["policy"] == policy
                    && r["file"].as_str().is_some_and(|f| at.starts_with(f))),
            "{rule}: {doc}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
