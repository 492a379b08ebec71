//! `--format github`: GitHub Actions workflow commands, one annotation per result that failed,
//! warned or errored, then the summary line. Audit failures are warnings, Enforce failures and
//! errors are errors. Escaping follows the runner's rules: in the message `%`, CR and LF are
//! percent-encoded; in properties also `:` and `,`. Other control characters are shown
//! escaped, so that nothing a file holds starts a line or a control sequence in the log.

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};

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
        writeln!(out, "{}", report.summary.line())
    }
}

fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    // A suppressed result is a notice with its reason (notices do not count against the
    // errors and warnings GitHub shows).
    let command = match (&f.suppressed, super::ci_level(f)) {
        (Some(_), _) => "notice",
        (None, Some(level)) => level,
        (None, None) => return Ok(()),
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
    props.push(format!("title={}", property(&f.rule_id())));
    let message = match &f.suppressed {
        Some(s) => format!("{} ({}): {}", s.describe(), f.resource, f.response.message),
        None => format!("{} ({})", f.response.message, f.resource),
    };
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

/// Escapes a command's message: `%`, CR and LF percent-encoded as the runner decodes them;
/// other control characters (ESC, BEL, DEL, C1, separators) shown as `\u{…}` escapes
/// ([`super::printable`]) so that no control sequence reaches the log.
pub fn data(s: &str) -> String {
    escape(s, false)
}

/// Escapes a command property value: as [`data`], and `:` and `,` too.
pub fn property(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => super::push_printable(c, &mut out),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_reads() {
        assert_eq!(data("50% a\r\nb: c,d"), "50%25 a%0D%0Ab: c,d");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(
            data("x\n::stop-commands::tok\u{1b}[31m\u{7}"),
            "x%0A::stop-commands::tok\\u{1b}[31m\\u{7}"
        );
    }
}
