//! `kpol test` on kpol's own CEL fixtures (`testdata/cel/`): ValidatingPolicy (autogen copy
//! included), ClusterPolicy `validate.cel`, a ValidatingAdmissionPolicy with a binding, and
//! ValidatingPolicies served by a `context:` file (`testdata/cel/context/`).

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
    assert_eq!(rows.len(), 19);
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
