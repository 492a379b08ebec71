//! PolicyExceptions end to end (exceptions.md): `kpol check --exception` skips excepted rules
//! with Kyverno's message and names them in policy reports; `kpol test` evaluates rows whose
//! rules an exception names (the upstream example of exceptions.md §7).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::Value;

fn kpol(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CI")
        .output()
        .expect("run kpol")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run(args: Vec<&str>) -> Output {
    kpol(&args)
}

fn with<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<&'a str> {
    a.iter().chain(b).copied().collect()
}

#[test]
fn exceptions_skip_rules_with_kyvernos_message() {
    let o = run(with(
        &[
            "check",
            "testdata/sample",
            "-e",
            "testdata/exceptions/debug-pod-exception.yaml",
        ],
        &["--format", "json"],
    ));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let find = |rule: &str, name: &str| {
        results
            .iter()
            .find(|r| r["rule"] == rule && r["resource"]["name"] == name)
            .unwrap_or_else(|| panic!("{rule} {name}"))
    };
    let host = find("host-namespaces", "debug");
    assert_eq!(host["result"], "skip");
    assert_eq!(
        host["message"],
        "rule is skipped due to policy exceptionsplatform/debug-host-network"
    );
    assert_eq!(
        find("autogen-privileged-containers", "worker")["result"],
        "skip"
    );
    // Not covered: the latest tag of the debug Pod still counts.
    assert_eq!(find("validate-image-tag", "debug")["result"], "fail");
    // The report property names the exception.
    let report = stdout(&run(with(
        &[
            "check",
            "testdata/sample",
            "-e",
            "testdata/exceptions/debug-pod-exception.yaml",
        ],
        &["--format", "policy-report"],
    )));
    assert!(
        report.contains("exceptions: debug-host-network"),
        "{report}"
    );
}

#[test]
fn kpol_test_evaluates_rows_named_by_exceptions() {
    let o = kpol(&[
        "test",
        "testdata/exceptions/kyverno-test",
        "--format",
        "json",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let text = doc.to_string();
    assert!(!text.contains("unsupported\":\"exceptions"), "{out}");
    let human = stdout(&kpol(&["test", "testdata/exceptions/kyverno-test"]));
    assert!(human.contains("with 1 exception"), "{human}");
    assert!(
        human.contains("3 tests passed and 0 tests failed"),
        "{human}"
    );
}

#[test]
fn exceptions_among_policy_files_are_used() {
    let o = kpol(&[
        "check",
        "testdata/exceptions/kyverno-test/resources.yaml",
        "-p",
        "testdata/exceptions/kyverno-test/policy.yaml",
        "-p",
        "testdata/exceptions/kyverno-test/exception.yaml",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &doc["summary"];
    assert_eq!(
        (s["skip"].as_u64(), s["fail"].as_u64()),
        (Some(2), Some(1)),
        "{doc}"
    );
    assert_eq!(o.status.code(), Some(1));
}
