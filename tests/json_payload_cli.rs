//! JSON payloads for ValidatingPolicies in `evaluation.mode: JSON` (cel.md §3.5), through
//! `kpol test` (`jsonPayloads` / `jsonPayload`, testdata/json-payload/) and `kpol check
//! --json-payload`.

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
