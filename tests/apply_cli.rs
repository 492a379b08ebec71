//! `kyverno apply`'s spellings: `kpol apply POLICY… -r RESOURCE…`, and the same flags on
//! `kpol check` where they do not clash with kpol's own (`-r`, `--policy-report`, `-t`,
//! `--remove-color`, `--exceptions`).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{kpol, kpol_env};

/// Report timestamps fixed, so that runs a second apart print the same report.
const EPOCH: &[(&str, &str)] = &[("SOURCE_DATE_EPOCH", "1700000000")];

const POD: &str = "testdata/check/invalid/pod.yaml";

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A `kyverno apply` CI line with the binary name swapped: the same result as `kpol check`,
/// and `-t` closes with the per-policy and per-file tables.
#[test]
fn apply_takes_kyverno_apply_argument_order() {
    let apply = kpol(&[
        "apply",
        "policies/disallow-latest-tag.yaml",
        "policies/require-probes.yaml",
        "-r",
        POD,
        "--remove-color",
        "-t",
    ]);
    let check = kpol(&[
        "check",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "-p",
        "policies/require-probes.yaml",
        "--resource",
        POD,
        "--table",
    ]);
    assert_eq!(apply.status.code(), Some(1));
    assert_eq!(text(&apply), text(&check));
    let out = text(&apply);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("POLICY"))
        .collect();
    assert_eq!(
        table,
        [
            "POLICY                FAIL   WARN  ERROR",
            "disallow-latest-tag      1      0      0",
            "require-probes           1      0      0",
            "FILE                              FAIL   WARN  ERROR",
            "testdata/check/invalid/pod.yaml      2      0      0",
            "pass: 1, fail: 2, warn: 0, error: 0, skip: 0",
        ],
        "{out}"
    );
}

/// `kpol apply … -p` and `kpol check --policy-report` print Kyverno's policy report.
#[test]
fn policy_report_spellings() {
    let apply = kpol_env(
        &[
            "apply",
            "policies/disallow-latest-tag.yaml",
            "--resources",
            POD,
            "-p",
        ],
        EPOCH,
    );
    let check = kpol_env(
        &[
            "check",
            "-p",
            "policies/disallow-latest-tag.yaml",
            POD,
            "--policy-report",
        ],
        EPOCH,
    );
    let format = kpol_env(
        &[
            "check",
            "-p",
            "policies/disallow-latest-tag.yaml",
            POD,
            "--format",
            "policy-report",
        ],
        EPOCH,
    );
    assert!(
        text(&apply).starts_with("apiVersion: openreports.io/v1alpha1"),
        "{}",
        text(&apply)
    );
    assert_eq!(text(&apply), text(&check));
    assert_eq!(text(&check), text(&format));
    // `--policy-report` and `--format` name the same thing twice: refused.
    let both = kpol(&["check", POD, "--policy-report", "--format", "json"]);
    assert_eq!(both.status.code(), Some(2));
}

/// `kyverno apply` needs its policies; so does `kpol apply` (exit 2, a usage error). A flag
/// kpol does not take (`--cluster`) is an error, never ignored.
#[test]
fn apply_refuses_what_it_cannot_do() {
    let none = kpol(&["apply", "-r", POD]);
    assert_eq!(none.status.code(), Some(2));
    let cluster = kpol(&["apply", "policies/", "-r", POD, "--cluster"]);
    assert_eq!(cluster.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cluster.stderr).contains("--cluster"));
}
