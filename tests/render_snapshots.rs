//! Snapshots of every `kpol check --format` over one set of findings (testdata/report): a
//! pattern failure, foreach failures (pattern, deny, nested), a ValidatingPolicy failure, an
//! exception skip, an input that is not YAML and an invalid policy. The snapshots are in
//! tests/snapshots/ and plain `cargo test` compares them (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test --test render_snapshots`, rewrites them after an intended
//! change).
//!
//! Every format reports the span the engine gave the response (`RuleResponse::span`): a
//! foreach failure is at the element's field or the element, not at the top of the file.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Output;

use serde_json::Value;

const FORMATS: &[&str] = &[
    "human",
    "concise",
    "json",
    "sarif",
    "junit",
    "github",
    "policy-report",
    "policy-report-v1alpha2",
    "html",
];

fn check(more: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "--no-config",
        "testdata/report/resources",
        "-p",
        "testdata/report/policies",
    ];
    args.extend_from_slice(more);
    common::kpol_for_snapshot(&args)
}

fn snapshot(name: &str, more: &[&str]) {
    let o = check(more);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings.set_description(format!(
        "kpol check --no-config testdata/report/resources -p testdata/report/policies {}",
        more.join(" ")
    ));
    settings.bind(|| insta::assert_snapshot!(name, common::shown(&o)));
}

#[test]
fn human() {
    snapshot("render-human", &["--format", "human"]);
}

#[test]
fn concise() {
    snapshot("render-concise", &["--format", "concise"]);
}

#[test]
fn human_verbose() {
    // Lists the passes and the exception's skip too.
    snapshot("render-human-verbose", &["--format", "human", "--verbose"]);
}

#[test]
fn json() {
    snapshot("render-json", &["--format", "json"]);
}

#[test]
fn sarif() {
    snapshot("render-sarif", &["--format", "sarif"]);
}

#[test]
fn junit() {
    snapshot("render-junit", &["--format", "junit"]);
}

#[test]
fn github() {
    snapshot("render-github", &["--format", "github"]);
}

#[test]
fn policy_report() {
    snapshot("render-policy-report", &["--format", "policy-report"]);
}

#[test]
fn policy_report_v1alpha2() {
    snapshot(
        "render-policy-report-v1alpha2",
        &["--format", "policy-report-v1alpha2"],
    );
}

#[test]
fn html() {
    snapshot("render-html", &["--format", "html"]);
}

#[test]
fn every_format_has_a_snapshot() {
    // A format added to `kpol check --format` gets a snapshot here too.
    let help = common::kpol(&["check", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.contains("--format"))
        .skip_while(|l| !l.contains("Possible values"))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("- "))
        .filter_map(|l| l.trim_start().strip_prefix("- ")?.split(':').next())
        .collect();
    assert_eq!(listed, FORMATS);
}

/// Where each finding of the JSON report starts: `(rule id, line, column)`.
fn starts() -> Vec<(String, u64, u64)> {
    let o = check(&["--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let mut out = Vec::new();
    for f in doc["results"].as_array().unwrap() {
        if f["result"] == "pass" || f["result"] == "skip" {
            continue;
        }
        let start = &f["start"];
        out.push((
            format!(
                "{}/{}",
                f["policy"].as_str().unwrap(),
                f["rule"].as_str().unwrap_or("")
            ),
            start["line"].as_u64().unwrap_or(0),
            start["column"].as_u64().unwrap_or(0),
        ));
    }
    out
}

#[test]
fn foreach_failures_are_at_the_element() {
    let starts = starts();
    let at = |rule: &str| {
        starts
            .iter()
            .find(|(r, ..)| r == rule)
            .map(|(_, l, c)| (*l, *c))
            .unwrap_or_else(|| panic!("no finding of {rule}: {starts:?}"))
    };
    // pattern: the element's failing field (`image: "nginx:latest"`).
    assert_eq!(at("container-checks/no-latest"), (13, 14));
    // deny: the element (the `debug` container).
    assert_eq!(at("container-checks/no-debug-container"), (18, 7));
    // nested foreach: the inner element's failing field (`hostPort: 8080`).
    assert_eq!(at("container-checks/no-host-port"), (17, 21));
    // A pattern outside foreach: the deepest field the path reaches, as before.
    assert_eq!(at("require-team-label/team-label"), (3, 1));
}
