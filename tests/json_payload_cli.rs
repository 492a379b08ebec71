//! JSON payloads for ValidatingPolicies in `evaluation.mode: JSON` (cel.md §3.5), through
//! `kpol test` (`jsonPayloads` / `jsonPayload`, testdata/json-payload/) and `kpol check
//! --json-payload`.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

fn kpol(args: &[&str]) -> (Option<i32>, String, String) {
    common::kpol_in(".", args)
}

/// Rows name payloads by their cleaned path; JSON-mode policies also see resources;
/// a Kubernetes-mode policy gives no response for a payload (`Not found`, as in Kyverno).
#[test]
fn test_rows_for_json_payloads() {
    let (code, out, err) = kpol(&["test", "testdata/json-payload", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows: Vec<(String, String, String, bool)> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["policy"].as_str().unwrap().to_owned(),
                r["resource"].as_str().unwrap().to_owned(),
                r["actual"].as_str().unwrap().to_owned(),
                r["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    let want = [
        ("deny-public-buckets", "plan-good.json", "pass", true),
        ("deny-public-buckets", "plan-bad.json", "fail", true),
        ("deny-public-buckets", "sandbox/plan.json", "skip", true),
        ("deny-public-buckets", "v1/Pod/default/web", "skip", true),
        ("numbers-as-read", "counts.json", "pass", true),
        ("numbers-as-read", "counts.yaml", "fail", true),
        ("require-team-label", "v1/Pod/default/web", "pass", true),
        ("require-team-label", "plan-good.json", "not found", false),
    ];
    let want: Vec<(String, String, String, bool)> = want
        .iter()
        .map(|(p, r, a, ok)| ((*p).into(), (*r).into(), (*a).into(), *ok))
        .collect();
    assert_eq!(rows, want, "{err}");
    assert_eq!(code, Some(1));
}

/// A payload file that is not an object stops its test with the CLI's message.
#[test]
fn test_refuses_a_payload_that_is_not_an_object() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.json"), "[1, 2]").unwrap();
    std::fs::copy(
        "testdata/json-payload/policies.yaml",
        dir.path().join("policies.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("kyverno-test.yaml"),
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n\
         policies: [policies.yaml]\njsonPayloads: [list.json]\n\
         results: [{policy: numbers-as-read, kind: '', result: pass}]\n",
    )
    .unwrap();
    let (code, out, err) = kpol(&["test", dir.path().to_str().unwrap()]);
    let all = format!("{out}{err}");
    assert!(
        all.contains("failed to load JSON payload list.json")
            && all.contains("must be a top-level object (map)"),
        "{all}"
    );
    assert_eq!(code, Some(2), "{all}");
}

/// `kpol check --json-payload`: findings at the payload's place in its file, exit 1 on a
/// failure; Kubernetes-mode policies give nothing for a payload; no manifests are read when
/// only payloads are given.
#[test]
fn check_reports_payload_findings_at_their_lines() {
    let (code, out, err) = kpol(&[
        "check",
        "--no-config",
        "-p",
        "testdata/json-payload/policies.yaml",
        "--json-payload",
        "testdata/json-payload/counts.yaml",
        "--json-payload",
        "testdata/json-payload/plan-good.json",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).expect(&err);
    let findings: Vec<String> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {} {}:{}",
                f["policy"].as_str().unwrap(),
                f["result"].as_str().unwrap(),
                f["file"].as_str().unwrap_or(""),
                f["start"]["line"]
            )
        })
        .collect();
    assert_eq!(
        findings,
        [
            "deny-public-buckets skip testdata/json-payload/counts.yaml:1",
            "numbers-as-read fail testdata/json-payload/counts.yaml:2",
            "deny-public-buckets pass testdata/json-payload/plan-good.json:1",
            "numbers-as-read skip testdata/json-payload/plan-good.json:1",
        ],
        "{out}"
    );
    assert_eq!(code, Some(1), "{out}{err}");

    let (code, out, err) = kpol(&[
        "check",
        "--no-config",
        "-p",
        "testdata/json-payload/policies.yaml",
        "--json-payload",
        "testdata/json-payload/plan-good.json",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("pass: 1, fail: 0"), "{out}");
}

/// A payload of neither format, or not an object, makes the run incomplete (exit 2).
#[test]
fn check_refuses_unusable_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.json");
    std::fs::write(&list, "[1]").unwrap();
    let (code, out, err) = kpol(&[
        "check",
        "--no-config",
        "-p",
        "testdata/json-payload/policies.yaml",
        "--json-payload",
        list.to_str().unwrap(),
        "--json-payload",
        "testdata/json-payload/kyverno-test.txt",
    ]);
    let all = format!("{out}{err}");
    assert!(all.contains("must be a top-level object (map)"), "{all}");
    assert!(all.contains("unrecognized payload format"), "{all}");
    assert_eq!(code, Some(2), "{all}");
}
