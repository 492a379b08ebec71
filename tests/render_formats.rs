//! `kpol check --format …`: every format is a view of the same findings, and each is what its
//! consumer accepts — SARIF against the SARIF 2.1.0 schema (testdata/sarif), JUnit through an
//! XML parser, policy reports through kpol's YAML reader, GitHub commands escaped.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;

fn kpol(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env_remove("CI")
        .output()
        .expect("run kpol")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const DIRTY: &[&str] = &["check", "testdata/sample", "testdata/render"];
const CLEAN: &[&str] = &[
    "check",
    "testdata/check/mixed/a-good-pod.yaml",
    "-p",
    "policies/disallow-host-namespaces.yaml",
];

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| (*s).to_owned()).collect()
}

fn run(args: Vec<String>) -> Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    kpol(&refs)
}

fn sarif_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/sarif/sarif-schema-2.1.0.json"
    ))
    .unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid_sarif(doc: &Value) {
    let v = sarif_validator();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "SARIF schema errors: {errors:#?}");
}

#[test]
fn sarif_with_findings_validates_and_github_can_use_it() {
    let o = run(with(DIRTY, &["--format", "sarif"]));
    assert_eq!(o.status.code(), Some(1));
    // Standard output carries only the SARIF document.
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert_valid_sarif(&doc);
    let run = &doc["runs"][0];
    let results = run["results"].as_array().unwrap();
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(results.len() >= 5, "{results:#?}");
    for r in results {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
        assert!(!rules[idx]["help"]["text"].as_str().unwrap().is_empty());
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
        assert!(r["partialFingerprints"]["kpolFinding/v2"].is_string());
    }
    // A file name with a space is a percent-encoded URI reference.
    assert!(stdout(&o).contains("testdata/render/special%20chars.yaml"));
    // The same findings as the JSON view.
    let json: Value = serde_json::from_slice(&run_json(DIRTY).stdout).unwrap();
    let s = &json["summary"];
    let shown =
        s["fail"].as_u64().unwrap() + s["warn"].as_u64().unwrap() + s["error"].as_u64().unwrap();
    assert_eq!(results.len() as u64, shown);
    // The schema check has teeth: a zero line is rejected.
    let mut broken = doc.clone();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        Value::from(0);
    assert!(!sarif_validator().is_valid(&broken));
}

/// A shard's log (`--shard`, its `properties.kpolShard` for `kpol merge`) validates too.
#[test]
fn sarif_of_a_shard_validates() {
    let o = run(with(DIRTY, &["--format", "sarif", "--shard", "1/2"]));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert_valid_sarif(&doc);
    let shard = &doc["runs"][0]["properties"]["kpolShard"];
    assert_eq!(
        (&shard["index"], &shard["count"]),
        (&Value::from(1), &Value::from(2))
    );
    assert!(shard["summary"]["pass"].is_u64(), "{shard}");
}

// Suppressed results (docs/SUPPRESSIONS.md) keep their place in SARIF with `suppressions`,
// and the document still validates.
#[test]
fn sarif_with_suppressions_validates() {
    let o = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args([
            "check",
            "--no-config",
            "testdata/suppress/forms.yaml",
            "--format",
            "sarif",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KPOL_TODAY", "2026-12-01")
        .env_remove("CI")
        .output()
        .expect("run kpol");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let suppressed = results
        .iter()
        .filter(|r| r["suppressions"][0]["kind"] == "inSource")
        .count();
    assert_eq!(suppressed, 3);
}

fn run_json(base: &[&str]) -> Output {
    run(with(base, &["--format", "json"]))
}

#[test]
fn clean_sarif_validates_with_an_empty_results_array() {
    let o = run(with(CLEAN, &["--format", "sarif"]));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    assert_eq!(doc["runs"][0]["results"], Value::Array(Vec::new()));
    assert_eq!(
        doc["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn incomplete_run_sarif_validates_and_carries_notifications() {
    let o = run(with(
        &["check", "testdata/check/mixed"],
        &["--format", "sarif"],
    ));
    assert_eq!(o.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let inv = &doc["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert!(
        !inv["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// (tests, failures, errors) from the root element, and failures counted element by element.
fn junit_counts(xml: &str) -> (u64, u64, u64, u64) {
    let mut reader = Reader::from_str(xml);
    let (mut tests, mut failures, mut errors, mut seen) = (0, 0, 0, 0);
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                if e.name().as_ref() == "testsuites" {
                    for a in e.attributes() {
                        let a = a.unwrap();
                        let v: u64 = a.value.parse().unwrap_or(0);
                        match a.key.as_ref() {
                            "tests" => tests = v,
                            "failures" => failures = v,
                            "errors" => errors = v,
                            _ => {}
                        }
                    }
                }
                if e.name().as_ref() == "failure" {
                    seen += 1;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (tests, failures, errors, seen)
}

#[test]
fn junit_parses_with_a_failure_per_failed_rule() {
    let o = run(with(DIRTY, &["--format", "junit"]));
    assert_eq!(o.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&run_json(DIRTY).stdout).unwrap();
    let s = &json["summary"];
    let total: u64 = ["pass", "fail", "warn", "error", "skip"]
        .iter()
        .map(|k| s[*k].as_u64().unwrap())
        .sum();
    let (tests, failures, errors, seen) = junit_counts(&stdout(&o));
    assert_eq!(tests, total);
    assert_eq!(failures, s["fail"].as_u64().unwrap());
    assert_eq!(seen, failures);
    assert_eq!(errors, 0);
    let clean = run(with(CLEAN, &["--format", "junit"]));
    assert_eq!(junit_counts(&stdout(&clean)).1, 0);
}

#[test]
fn github_commands_are_escaped_and_audit_is_a_warning() {
    let o = run(with(DIRTY, &["--format", "github"]));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("::")).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("::error file=testdata/sample/debug-pod.yaml,line=7,col=16")),
        "{text}"
    );
    // disallow-latest-tag is an Audit policy.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("::warning ") && l.contains("title=disallow-latest-tag/")),
        "{text}"
    );
    for l in &lines {
        let (_, message) = l.split_once("::").unwrap().1.split_once("::").unwrap();
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
}

#[test]
fn policy_reports_in_both_api_versions_read_back_as_yaml() {
    for (format, api, kind) in [
        ("policy-report", "openreports.io/v1alpha1", "ClusterReport"),
        (
            "policy-report-v1alpha2",
            "wgpolicyk8s.io/v1alpha2",
            "ClusterPolicyReport",
        ),
    ] {
        let o = run(with(DIRTY, &["--format", format]));
        let text = stdout(&o);
        let docs = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()).expect("YAML");
        let root = docs[0].root.to_json();
        assert_eq!(root["apiVersion"], api, "{text}");
        assert_eq!(root["kind"], kind);
        assert_eq!(root["metadata"]["name"], "merged");
        let fails = root["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["result"] == "fail")
            .count();
        assert_eq!(root["summary"]["fail"].as_u64().unwrap() as usize, fails);
        assert_eq!(root["results"][0]["timestamp"]["seconds"], 1767225600);
    }
}

#[test]
fn output_file_takes_the_report_and_stdout_stays_empty() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.sarif");
    let o = run(with(
        DIRTY,
        &["--format", "sarif", "-o", file.to_str().unwrap()],
    ));
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_valid_sarif(&doc);
}

#[test]
fn warn_exit_code_and_warn_no_pass_follow_kyverno() {
    // Only Audit failures, turned into warnings: 0, or N with --warn-exit-code N.
    let audit = [
        "check",
        "testdata/sample/debug-pod.yaml",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "--audit-warn",
    ];
    assert_eq!(kpol(&audit).status.code(), Some(0));
    let o = run(with(&audit, &["--warn-exit-code", "3"]));
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exit as warnExitCode is 3"));
    // Nothing passed (no rule matched a Service): --warn-no-pass uses the warn exit code.
    let none = [
        "check",
        "testdata/mutate/json6902/resource.yaml",
        "-p",
        "policies/disallow-latest-tag.yaml",
    ];
    assert_eq!(
        run(with(&none, &["--warn-no-pass", "--warn-exit-code", "4"]))
            .status
            .code(),
        Some(4)
    );
    assert_eq!(run(with(&none, &["--warn-no-pass"])).status.code(), Some(0));
}

/// GitHub ranks alerts by `security-severity` (with the `security` tag): kpol's default
/// policies carry `policies.kyverno.io/severity`, so their rules score; an embedded policy
/// has no file, so no `helpUri`. Audit failures are warnings, as in `--format github`.
#[test]
fn sarif_rules_carry_security_severity_and_audit_results_are_warnings() {
    let o = run(with(DIRTY, &["--format", "sarif"]));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for rule in rules {
        let props = &rule["properties"];
        let score: f64 = props["security-severity"]
            .as_str()
            .unwrap_or_else(|| panic!("{rule:#}"))
            .parse()
            .unwrap();
        assert!((0.1..=10.0).contains(&score), "{rule:#}");
        assert!(
            props["tags"]
                .as_array()
                .unwrap()
                .contains(&Value::from("security"))
        );
        assert!(rule.get("helpUri").is_none(), "{rule:#}");
        assert!(!rule["help"]["markdown"].as_str().unwrap().is_empty());
    }
    // disallow-latest-tag is an Audit policy: its results are warnings.
    let results = run["results"].as_array().unwrap();
    let audit: Vec<&Value> = results
        .iter()
        .filter(|r| {
            r["ruleId"]
                .as_str()
                .unwrap()
                .starts_with("disallow-latest-tag/")
        })
        .collect();
    assert!(!audit.is_empty());
    assert!(audit.iter().all(|r| r["level"] == "warning"), "{audit:#?}");
}

#[test]
fn sarif_help_uri_points_at_the_policy_file() {
    let o = kpol_no_github(&[
        "check",
        "testdata/sample",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "--format",
        "sarif",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let rule = &doc["runs"][0]["tool"]["driver"]["rules"][0];
    let uri = rule["helpUri"].as_str().unwrap();
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(
        uri.ends_with("/policies/disallow-latest-tag.yaml#L2"),
        "{uri}"
    );
    let md = rule["help"]["markdown"].as_str().unwrap();
    assert!(
        md.starts_with("**Disallow latest tag**\n\nThe `latest` tag"),
        "{md}"
    );
}

fn kpol_no_github(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CI")
        .env_remove("GITHUB_SERVER_URL")
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("GITHUB_SHA")
        .output()
        .expect("run kpol")
}

/// An absolute input under the working directory is a `%SRCROOT%`-relative URI, as code
/// scanning needs to place it in the repository.
#[test]
fn sarif_absolute_input_under_the_cwd_is_relative() {
    let abs = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/sample");
    let o = run(with(&["check", abs], &["--format", "sarif"]));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let a = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert!(
            a["uri"].as_str().unwrap().starts_with("testdata/sample/"),
            "{a}"
        );
        assert_eq!(a["uriBaseId"], "%SRCROOT%");
    }
}

/// Malformed YAML is a result of `kpol/input-error` (code scanning shows results, not
/// notifications), and a notification too.
#[test]
fn sarif_input_errors_are_results() {
    let o = run(with(
        &["check", "testdata/check/mixed"],
        &["--format", "sarif"],
    ));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid_sarif(&doc);
    let run = &doc["runs"][0];
    let errors: Vec<&Value> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "kpol/input-error")
        .collect();
    assert!(!errors.is_empty(), "{run:#}");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in errors {
        assert_eq!(r["level"], "error");
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], "kpol/input-error");
        assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
    }
}
