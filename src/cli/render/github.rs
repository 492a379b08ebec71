//! `--format github`: GitHub Actions workflow commands, one annotation per result that failed,
//! warned or errored, then the summary line. Audit failures are warnings, Enforce failures and
//! errors are errors. Escaping follows the runner's rules: in the message `%`, CR and LF are
//! percent-encoded; in properties also `:` and `,`.

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::policy::FailureAction;
use kpol::report::Status;

use crate::cli::check::{CheckReport, FileReport, Finding};

/// `--format github`.
pub struct Github;

impl super::Render for Github {
    fn streams(&self) -> bool {
        true
    }

    fn lists_passing(&self, _verbose: bool) -> bool {
        false
    }

    fn head(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        for d in &report.diagnostics {
            diagnostic(d, out)?;
        }
        Ok(())
    }

    fn file(
        &self,
        _report: &CheckReport,
        file: &FileReport,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        for d in &file.diagnostics {
            diagnostic(d, out)?;
        }
        for f in &file.findings {
            finding(f, out)?;
        }
        Ok(())
    }

    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let s = &report.summary;
        writeln!(
            out,
            "pass: {}, fail: {}, warn: {}, error: {}, skip: {}",
            s.pass, s.fail, s.warn, s.error, s.skip
        )
    }
}

fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    let command = match (f.status, f.response.failure_action) {
        (Status::Fail, FailureAction::Enforce) | (Status::Error, _) => "error",
        (Status::Fail, FailureAction::Audit) | (Status::Warn, _) => "warning",
        (Status::Pass | Status::Skip, _) => return Ok(()),
    };
    let mut props = Vec::new();
    if let Some(src) = f.source.as_deref() {
        props.push(format!("file={}", property(src.name())));
        if let Some(s) = f.start {
            props.push(format!("line={}", s.line.max(1)));
            props.push(format!("col={}", s.column.max(1)));
            if let Some(e) = f.end.filter(|e| e.line >= s.line) {
                props.push(format!("endLine={}", e.line.max(1)));
                if e.line == s.line {
                    props.push(format!("endColumn={}", e.column.max(1)));
                }
            }
        }
    }
    props.push(format!(
        "title={}",
        property(&format!("{}/{}", f.policy, f.rule))
    ));
    let message = format!("{} ({})", f.response.message, f.resource);
    writeln!(out, "::{command} {}::{}", props.join(","), data(&message))
}

fn diagnostic(d: &Diagnostic, out: &mut dyn Write) -> io::Result<()> {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => return Ok(()),
    };
    let mut props = Vec::new();
    if let Some(l) = &d.location {
        props.push(format!("file={}", property(&l.file)));
        if let Some(s) = l.start {
            props.push(format!("line={}", s.line.max(1)));
            props.push(format!("col={}", s.column.max(1)));
        }
    }
    props.push(format!(
        "title={}",
        property(&format!("kpol {}", d.code.as_str()))
    ));
    writeln!(out, "::{command} {}::{}", props.join(","), data(&d.message))
}

/// Escapes a command's message.
pub fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property value.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_reads() {
        assert_eq!(data("50% a\r\nb: c,d"), "50%25 a%0D%0Ab: c,d");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
