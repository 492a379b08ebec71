//! `kpol test testdata/cel-errors`: CEL that fails at run time (a library function's error,
//! cel-go's own errors, failed variables, match conditions) in ValidatingPolicy,
//! MutatingPolicy, ClusterPolicy `validate.cel` and ValidatingAdmissionPolicy rows. Every
//! row's message must be the one the Kyverno v1.19.0 CLI prints for the same dir
//! (`v1.19.0-messages.txt`, recorded from its `test --detailed-results`).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn run_time_cel_errors_read_as_kyverno_v1_19_0_prints_them() {
    let dir = "testdata/cel-errors";
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", dir, "--format", "json", "--detailed-results"])
        .output()
        .expect("run kpol");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = json["rows"].as_array().expect("rows");
    let want = std::fs::read_to_string(format!("{dir}/v1.19.0-messages.txt")).expect("read");
    let want: Vec<(&str, &str, &str)> = want
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            (f.next().unwrap(), f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), want.len(), "{rows:#?}");
    for (policy, rule, message) in want {
        let row = rows
            .iter()
            .find(|r| r["policy"] == policy && r["rule"] == rule)
            .unwrap_or_else(|| panic!("no row for {policy}/{rule}: {rows:#?}"));
        assert_eq!(row["message"], message, "{policy}/{rule}");
        assert_eq!(row["ok"], true, "{row}");
    }
    assert_eq!(out.status.code(), Some(0));
}
