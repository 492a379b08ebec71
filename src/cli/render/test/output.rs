//! `kpol test -o/--output-format json|yaml|markdown|junit`: the result rows as `kyverno test
//! -o` shapes them (Kyverno v1.19 `cmd/cli/kubectl-kyverno/commands/test/output.go`), each row
//! with the columns of the table: `ID`, `POLICY`, `RULE`, `RESOURCE`, `RESULT`, `REASON`, and
//! with `--detailed-results` the rule message (`Message` in JSON and YAML, `MESSAGE` in
//! markdown, a `Message:` line in JUnit).
//!
//! Unlike Kyverno, which writes one document per test file among its progress lines, kpol
//! writes one document for the whole run on standard output, rows in test-file order with IDs
//! counted from 1 across it, so that `kpol test . -o junit > report.xml` is one valid file;
//! the progress lines are left out and the summary goes to standard error. `--fail-only`
//! keeps the failing rows only (Kyverno's aggregated failures, renumbered). JUnit is always
//! well-formed: the failure element is closed with or without `--detailed-results`, and text
//! from test files is [printable](crate::cli::render::printable).

use std::fmt::Write as _;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::{Map, Value};

use crate::cli::args::TestOutput;
use crate::cli::render::printable;
use crate::cli::render::yaml_out::to_yaml;
use crate::cli::test::report::FileReport;
use crate::cli::test::rows::Row;

/// The document of `-o FORMAT`: every row of `files` (with `fail_only`, the failing ones).
pub fn render(format: TestOutput, files: &[FileReport], fail_only: bool, detailed: bool) -> String {
    let rows: Vec<&Row> = files
        .iter()
        .flat_map(|f| f.tests.iter())
        .flat_map(|t| t.rows.iter())
        .filter(|r| !fail_only || !r.ok)
        .collect();
    match format {
        TestOutput::Json => {
            let doc = Value::Array(objects(&rows, detailed));
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            text
        }
        TestOutput::Yaml => to_yaml(&Value::Array(objects(&rows, detailed))),
        TestOutput::Markdown => markdown(&rows, detailed),
        TestOutput::Junit => junit(&rows, detailed),
    }
}

/// The rows as objects, keys in Kyverno's order (Go writes a map's keys sorted).
fn objects(rows: &[&Row], detailed: bool) -> Vec<Value> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut m = Map::new();
            m.insert("ID".into(), Value::from(i + 1));
            if detailed {
                m.insert("Message".into(), Value::from(r.message.as_str()));
            }
            m.insert("POLICY".into(), Value::from(r.policy.as_str()));
            m.insert("REASON".into(), Value::from(r.reason.as_str()));
            m.insert("RESOURCE".into(), Value::from(r.resource.as_str()));
            m.insert("RESULT".into(), Value::from(r.result_word()));
            m.insert("RULE".into(), Value::from(r.rule.as_str()));
            Value::Object(m)
        })
        .collect()
}

/// A GitHub-flavoured markdown table; a `|` in a cell is escaped and a line break shown as
/// `\n`, so each row stays one row.
fn markdown(rows: &[&Row], detailed: bool) -> String {
    let mut header = vec!["ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"];
    if detailed {
        header.push("MESSAGE");
    }
    let mut out = format!("| {} |\n|", header.join(" | "));
    out.push_str(&"----|".repeat(header.len()));
    out.push('\n');
    let cell = |s: &str| printable(s).replace('|', "\\|");
    for (i, r) in rows.iter().enumerate() {
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            i + 1,
            cell(&r.policy),
            cell(&r.rule),
            cell(&r.resource),
            r.result_word(),
            cell(&r.reason)
        );
        if detailed {
            let _ = write!(out, " {} |", cell(&r.message));
        }
        out.push('\n');
    }
    out
}

/// JUnit XML: one test suite per policy (in order of first appearance), one test case per row
/// (class name the rule, name the resource); a failing row is a failure whose message is the
/// reason, a passing (or skipped) row a success with its details in `system-out`.
fn junit(rows: &[&Row], detailed: bool) -> String {
    let mut suites: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in rows {
        match suites.iter_mut().find(|(p, _)| *p == r.policy) {
            Some((_, rs)) => rs.push(r),
            None => suites.push((&r.policy, vec![r])),
        }
    }
    let mut report = Report::new("kpol test");
    for (policy, rows) in suites {
        let mut suite = TestSuite::new(printable(policy));
        for r in rows {
            let mut details = if r.ok {
                format!("Reason: {}\n", r.reason)
            } else {
                String::new()
            };
            let _ = write!(
                details,
                "Policy: {}\nRule: {}\nResource: {}\n",
                r.policy, r.rule, r.resource
            );
            if !r.ok {
                let _ = writeln!(details, "Result: {}", r.result_word());
            }
            if detailed {
                let _ = writeln!(details, "Message: {}", r.message);
            }
            // Line breaks stay (they are the layout); other controls are escaped.
            let details: String = details
                .split('\n')
                .map(|l| printable(l).into_owned())
                .collect::<Vec<_>>()
                .join("\n");
            let status = if r.ok {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(printable(&r.reason));
                s.set_description(details.clone());
                s
            };
            let mut case = TestCase::new(printable(&r.resource), status);
            case.set_classname(printable(&r.rule));
            if r.ok {
                case.set_system_out(details);
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    let mut out = report.to_string().unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test::rows::Count;

    fn row(policy: &str, rule: &str, ok: bool, reason: &str) -> Row {
        Row {
            policy: policy.into(),
            rule: rule.into(),
            resource: "v1/Pod/apps/web".into(),
            kind: "Pod".into(),
            expected: "pass".into(),
            actual: if ok { "pass" } else { "fail" }.into(),
            ok,
            count: Count::Pass,
            reason: reason.into(),
            message: "a | b".into(),
            at: None,
        }
    }

    #[test]
    fn json_rows_have_kyvernos_keys_in_its_order() {
        let rows = [
            row("p", "r", true, "Ok"),
            row("q", "s", false, "Want pass, got fail"),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let v = Value::Array(objects(&refs, true));
        let keys: Vec<&String> = v[0].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "ID", "Message", "POLICY", "REASON", "RESOURCE", "RESULT", "RULE"
            ]
        );
        assert_eq!(v[1]["ID"], 2);
        assert_eq!(v[1]["RESULT"], "Fail");
        let plain = Value::Array(objects(&refs, false));
        assert!(plain[0].get("Message").is_none());
    }

    #[test]
    fn markdown_escapes_pipes_and_adds_the_message_column() {
        let rows = [row("p", "r", true, "Ok")];
        let refs: Vec<&Row> = rows.iter().collect();
        assert_eq!(
            markdown(&refs, true),
            "| ID | POLICY | RULE | RESOURCE | RESULT | REASON | MESSAGE |\n\
             |----|----|----|----|----|----|----|\n\
             | 1 | p | r | v1/Pod/apps/web | Pass | Ok | a \\| b |\n"
        );
    }
}
