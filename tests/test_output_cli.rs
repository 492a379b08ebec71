//! `kpol test`'s output flags as `kyverno test` spells them: `-o/--output-format
//! json|yaml|markdown|junit`, `--remove-color`, `--detailed-results`, `--fail-only`, over
//! testdata/test/rows (8 rows: one fails with `Not found`, one is a `Skip`, six pass).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use quick_xml::Reader;
use quick_xml::XmlVersion;
use quick_xml::events::Event;
use serde_json::Value;

const DIR: &str = "testdata/test/rows";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An element of a JUnit report with its attributes.
#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
}

impl Element {
    fn attr(&self, key: &str) -> &str {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// The elements of an XML document, read by an XML parser (a malformed document fails).
fn elements(xml: &str) -> Vec<Element> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => out.push(Element {
                name: e.name().as_ref().to_owned(),
                attrs: e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (
                            a.key.as_ref().to_owned(),
                            a.normalized_value(XmlVersion::Implicit1_0)
                                .unwrap()
                                .into_owned(),
                        )
                    })
                    .collect(),
            }),
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

#[test]
fn junit_is_one_valid_report_with_a_suite_per_policy() {
    let o = kpol(&["test", DIR, "-o", "junit"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let xml = stdout(&o);
    assert!(xml.starts_with("<?xml"), "only the report on stdout: {xml}");
    let all = elements(&xml);
    let root = &all[0];
    assert_eq!(root.name, "testsuites");
    assert_eq!((root.attr("tests"), root.attr("failures")), ("8", "1"));
    let suites: Vec<&str> = all
        .iter()
        .filter(|e| e.name == "testsuite")
        .map(|e| e.attr("name"))
        .collect();
    assert_eq!(
        suites,
        [
            "require-team",
            "no-such-policy",
            "broken-policy",
            "cel-team",
            "add-owner"
        ]
    );
    let cases = all.iter().filter(|e| e.name == "testcase").count();
    assert_eq!(cases, 8);
    let failures: Vec<&Element> = all.iter().filter(|e| e.name == "failure").collect();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].attr("message"), "Not found");
    // The failing case: class name the rule, name the resource.
    let i = all.iter().position(|e| e.name == "failure").unwrap();
    assert_eq!(all[i - 1].attr("classname"), "check-team");
    assert_eq!(all[i - 1].attr("name"), "v1/Pod/apps/labelled");
    // The summary is on stderr.
    assert!(
        stderr(&o).contains("Test Summary: 7 tests passed and 1 tests failed"),
        "{}",
        stderr(&o)
    );

    // --detailed-results adds the message, --fail-only keeps the failing row: still valid.
    let o = kpol(&[
        "test",
        DIR,
        "--output-format",
        "junit",
        "--detailed-results",
        "--fail-only",
    ]);
    let xml = stdout(&o);
    let all = elements(&xml);
    assert_eq!(all.iter().filter(|e| e.name == "testcase").count(), 1);
    assert!(xml.contains("Message: Not found"), "{xml}");
    assert!(stderr(&o).contains("Test Summary: 1 out of 8 tests failed"));
}

#[test]
fn json_rows_carry_the_table_columns() {
    let o = kpol(&["test", DIR, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[1]["ID"], 2);
    assert_eq!(rows[1]["POLICY"], "no-such-policy");
    assert_eq!(rows[1]["RULE"], "check-team");
    assert_eq!(rows[1]["RESOURCE"], "v1/Pod/apps/labelled");
    assert_eq!(rows[1]["RESULT"], "Fail");
    assert_eq!(rows[1]["REASON"], "Not found");
    assert_eq!(rows[2]["RESULT"], "Skip");
    assert!(rows[0].get("Message").is_none());

    let o = kpol(&[
        "test",
        DIR,
        "-o",
        "json",
        "--detailed-results",
        "--fail-only",
    ]);
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["ID"], 1, "failing rows are renumbered");
    assert_eq!(rows[0]["Message"], "Not found");
}

#[test]
fn yaml_and_markdown_hold_the_same_rows() {
    let yaml = stdout(&kpol(&["test", DIR, "-o", "yaml"]));
    assert!(
        yaml.contains(
            "- ID: 2\n  POLICY: no-such-policy\n  REASON: Not found\n  RESOURCE: v1/Pod/apps/labelled\n  RESULT: Fail\n  RULE: check-team\n"
        ),
        "{yaml}"
    );
    assert_eq!(yaml.matches("- ID: ").count(), 8);

    let md = stdout(&kpol(&[
        "test",
        DIR,
        "-o",
        "markdown",
        "--detailed-results",
    ]));
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| ID | POLICY | RULE | RESOURCE | RESULT | REASON | MESSAGE |"
    );
    assert_eq!(lines.len(), 2 + 8, "{md}");
    assert_eq!(
        lines[3],
        "| 2 | no-such-policy | check-team | v1/Pod/apps/labelled | Fail | Not found | Not found |"
    );
}

#[test]
fn remove_color_is_accepted_and_changes_nothing() {
    let plain = kpol(&["test", DIR]);
    let removed = kpol(&["test", DIR, "--remove-color"]);
    assert_eq!(removed.status.code(), plain.status.code());
    assert_eq!(stdout(&removed), stdout(&plain));
    assert!(stdout(&plain).contains("Test Summary: 7 tests passed and 1 tests failed"));
}

#[test]
fn unknown_output_formats_and_two_formats_are_refused() {
    let o = kpol(&["test", DIR, "-o", "table"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("json, yaml, markdown, junit"),
        "{}",
        stderr(&o)
    );
    let o = kpol(&["test", DIR, "-o", "json", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
}
