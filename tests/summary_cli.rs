//! Errors are counted and visible (issue #24): the summary counts unreadable inputs and
//! policy errors, and reaches stderr when standard output is not the human report.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const LIMITS: &str = "policies/require-resource-limits.yaml";

/// The human summary line names the inputs that could not be checked, after Kyverno's counts.
#[test]
fn the_human_summary_counts_unreadable_inputs() {
    let o = kpol(&["check", "--no-config", "-p", LIMITS, "testdata/check/mixed"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.ends_with("skip: 0; 2 inputs could not be checked\n"),
        "{text}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// `--format json` adds `inputErrors`, `policyErrors` and `otherErrors` to `summary`, and
/// prints the problems and Kyverno's summary line on stderr.
#[test]
fn json_counts_errors_and_stderr_has_the_summary() {
    let o = kpol(&[
        "check",
        "--no-config",
        "--format",
        "json",
        "-p",
        LIMITS,
        "-p",
        "testdata/does-not-exist.yaml",
        "testdata/check/mixed",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["inputErrors"], 2, "{summary}");
    assert_eq!(summary["policyErrors"], 1, "{summary}");
    assert_eq!(summary["otherErrors"], 0, "{summary}");
    assert_eq!(summary["error"], 0, "{summary}");
    let err = stderr(&o);
    assert!(
        err.contains("kpol: 2 inputs could not be checked\nkpol: 1 policy error\npass: "),
        "{err}"
    );
}

/// `-o FILE` with the human format: the summary still reaches stderr, and so does the error
/// of a run that checked nothing.
#[test]
fn output_to_a_file_keeps_the_summary_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.txt");
    let out = out.to_str().unwrap();
    let o = kpol(&[
        "check",
        "--no-config",
        "-o",
        out,
        "-p",
        LIMITS,
        "testdata/check/mixed/a-good-pod.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "pass: 1, fail: 0, warn: 0, error: 0, skip: 0\n");
    let o = kpol(&[
        "check",
        "--no-config",
        "-o",
        out,
        "-p",
        "testdata/check/mixed/a-good-pod.yaml",
        "testdata/check/mixed/a-good-pod.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("kpol: 1 other error\n"),
        "{}",
        stderr(&o)
    );
    let report = std::fs::read_to_string(out).unwrap();
    assert!(report.contains("no policies loaded from"), "{report}");
}
