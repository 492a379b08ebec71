//! `--format junit`: JUnit XML, one test suite per input file, one test case per
//! (resource, rule) result; `fail` is a failure, `error` an error, `skip` skipped, `pass` and
//! `warn` pass (a warning keeps its message in `system-out`). Problems with inputs are test
//! cases with an error, so a CI dashboard shows an incomplete run. Text from files and policies
//! is [printable](super::printable): control characters, which XML 1.0 cannot hold, and line
//! breaks are shown escaped (`\u{1b}`, `\n`), so a name starts no line of the report either.

use std::io::{self, Write};

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::report::Status;

use crate::cli::check::{CheckReport, Finding};

use super::printable;

/// `--format junit`.
pub struct Junit;

impl super::Render for Junit {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let mut junit = Report::new("kpol");
        if !report.diagnostics.is_empty() {
            let mut suite = TestSuite::new("kpol");
            suite.add_test_cases(report.diagnostics.iter().filter_map(diagnostic));
            junit.add_test_suite(suite);
        }
        for file in &report.files {
            let name = file
                .findings
                .first()
                .and_then(|f| f.source.as_deref().map(|s| s.name().to_owned()))
                .or_else(|| {
                    file.diagnostics
                        .iter()
                        .find_map(|d| d.location.as_ref().map(|l| l.file.clone()))
                });
            let Some(name) = name else {
                continue;
            };
            let mut suite = TestSuite::new(printable(&name));
            suite.add_test_cases(file.diagnostics.iter().filter_map(diagnostic));
            suite.add_test_cases(file.findings.iter().map(|f| case(f, &name)));
            junit.add_test_suite(suite);
        }
        junit.serialize(&mut *out).map_err(io::Error::other)?;
        writeln!(out)
    }
}

fn case(f: &Finding, file: &str) -> TestCase {
    let status = match f.status {
        Status::Pass | Status::Warn => TestCaseStatus::success(),
        Status::Skip => {
            let mut s = TestCaseStatus::skipped();
            match &f.suppressed {
                Some(why) => {
                    s.set_message(printable(&why.describe()));
                    s.set_description(printable(&format!(
                        "{}: {}",
                        description(f, file),
                        f.response.message
                    )));
                }
                None => {
                    s.set_message(printable(&f.response.message));
                }
            }
            s
        }
        Status::Fail | Status::Error => {
            let kind = if f.status == Status::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let mut s = TestCaseStatus::non_success(kind);
            s.set_message(printable(&f.response.message));
            s.set_type(f.response.failure_action.as_str());
            s.set_description(printable(&description(f, file)));
            s
        }
    };
    let name = format!("{} {}", f.rule_id(), f.resource);
    let mut case = TestCase::new(printable(&name), status);
    case.set_classname(printable(file));
    if f.status == Status::Warn {
        case.set_system_out(format!(
            "warn: {}\n{}",
            printable(&f.response.message),
            printable(&description(f, file))
        ));
    }
    case
}

fn description(f: &Finding, file: &str) -> String {
    let at = match f.start {
        Some(s) => format!("{file}:{}:{}", s.line, s.column),
        None => file.to_owned(),
    };
    let path = f.response.kyverno_path().unwrap_or_default();
    format!("{at}: {} {path}", f.resource).trim_end().to_owned()
}

fn diagnostic(d: &Diagnostic) -> Option<TestCase> {
    if d.severity != Severity::Error {
        return None;
    }
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(printable(&d.message));
    status.set_type(d.code.as_str());
    let pos = d.position();
    status.set_description(printable(&format!("{pos}: {}", d.message)));
    let mut case = TestCase::new(
        printable(&format!("kpol/{} {pos}", d.code.as_str())),
        status,
    );
    case.set_classname(printable(
        d.location.as_ref().map_or("kpol", |l| l.file.as_str()),
    ));
    Some(case)
}
