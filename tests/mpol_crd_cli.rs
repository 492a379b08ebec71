//! A MutatingPolicy's ApplyConfiguration on a custom kind, typed by the CRD of a test's
//! `clusterResources` (testdata/mpol-crd/; the Kyverno v1.19.0 CLI passes it too).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn a_crd_types_the_merge_of_a_custom_kind() {
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", "testdata/mpol-crd", "--format", "json"])
        .output()
        .expect("run kpol");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{stdout}");
    assert_eq!(rows[0]["actual"], "pass", "{stdout}");
    assert_eq!(rows[0]["ok"], true, "{stdout}");
    assert_eq!(out.status.code(), Some(0));
}
