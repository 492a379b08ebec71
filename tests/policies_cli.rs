//! `kpol policies` as a user sees it: the listing of testdata/explain/policies (human and
//! JSON), and `--coverage` over testdata/explain/suite, whose test has a pass and a fail case
//! for every rule but one. Snapshots are in tests/snapshots/.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{kpol, shown};
use serde_json::Value;

fn snapshot(name: &str, args: &[&str]) {
    let o = kpol(args);
    common::snapshot(name, format!("kpol {}", args.join(" ")), &o);
}

#[test]
fn listing() {
    snapshot(
        "policies-list",
        &["policies", "--no-config", "-p", "testdata/explain/policies"],
    );
}

#[test]
fn listing_as_json_names_autogen_kinds_and_severity() {
    let o = kpol(&[
        "policies",
        "--no-config",
        "-p",
        "testdata/explain/policies",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let limits = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "require-limits")
        .unwrap();
    assert_eq!(limits["severity"], "medium");
    assert_eq!(limits["action"], "Enforce");
    let rule = &limits["rules"][0];
    assert_eq!(rule["type"], "validate.pattern");
    let kinds: Vec<&str> = rule["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    // The rule as written selects Pods; autogen adds the controllers and CronJobs.
    assert_eq!(kinds.first(), Some(&"Pod"));
    assert!(kinds.contains(&"apps/v1/Deployment") && kinds.contains(&"batch/v1/CronJob"));
    let vp = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "ValidatingPolicy")
        .unwrap();
    assert_eq!(vp["resources"], serde_json::json!(["deployments"]));
}

#[test]
fn coverage() {
    // run-as-non-root/non-root has a fail case only: listed, exit 1.
    snapshot(
        "policies-coverage",
        &["policies", "--coverage", "testdata/explain/suite"],
    );
}

#[test]
fn coverage_lists_untested_policy_rules_and_counts_autogen_rows() {
    let o = kpol(&[
        "policies",
        "--coverage",
        "testdata/explain/suite",
        "-p",
        "testdata/report/policies/pattern.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rule = |name: &str| {
        doc["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                format!(
                    "{}/{}",
                    r["policy"].as_str().unwrap(),
                    r["rule"].as_str().unwrap()
                ) == name
            })
            .unwrap_or_else(|| panic!("no {name}: {doc}"))
            .clone()
    };
    // A -p policy no test loads: no case at all.
    let untested = rule("require-team-label/team-label");
    assert_eq!(
        (untested["pass"].as_u64(), untested["fail"].as_u64()),
        (Some(0), Some(0))
    );
    // The autogen-memory-limit row counts for memory-limit: two passes, one fail, all confirmed.
    let limits = rule("require-limits/memory-limit");
    assert_eq!(limits["pass"], 2);
    assert_eq!(limits["passConfirmed"], 2);
    assert_eq!(limits["fail"], 1);
    assert_eq!(limits["covered"], true);
    assert_eq!(doc["summary"]["rules"], 5);
    assert_eq!(doc["summary"]["covered"], 3);
}

#[test]
fn coverage_of_a_directory_without_tests_or_a_missing_one() {
    let o = kpol(&["policies", "--coverage", "no-such-dir"]);
    assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
}
