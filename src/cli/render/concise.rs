//! `--format concise`: one line per finding, `file:line:col: level policy/rule: message`, the
//! shape compilers and linters print, so editors and `grep` take it. `level` is the one the CI
//! formats use (`error` for an Enforce failure or a rule error, `warning` for an Audit or Warn
//! failure); input problems are `file:line:col: error[code]: message`. The summary line closes
//! the output. Streams, as the human format does.

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};

use crate::cli::check::{CheckReport, FileReport, Finding};

use super::printable;

/// `--format concise`.
pub struct Concise;

impl super::Render for Concise {
    fn streams(&self) -> bool {
        true
    }

    fn lists_passing(&self, _verbose: bool) -> bool {
        false
    }

    fn head(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        for d in &report.diagnostics {
            diagnostic(d, report.verbose, out)?;
        }
        Ok(())
    }

    fn file(&self, report: &CheckReport, file: &FileReport, out: &mut dyn Write) -> io::Result<()> {
        for d in &file.diagnostics {
            diagnostic(d, report.verbose, out)?;
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

fn diagnostic(d: &Diagnostic, verbose: bool, out: &mut dyn Write) -> io::Result<()> {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info if verbose => "info",
        Severity::Info => return Ok(()),
    };
    let at = printable(&d.position()).into_owned();
    let at = if at.is_empty() { "kpol".to_owned() } else { at };
    writeln!(
        out,
        "{at}: {level}[{}]: {}",
        d.code.as_str(),
        one_line(&d.message)
    )
}

fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    let file = f.source.as_deref().map_or("", |s| s.name());
    let at = match f.start {
        Some(s) => format!("{}:{}:{}", printable(file), s.line, s.column),
        None => printable(file).into_owned(),
    };
    // A suppressed result: one `skip` line with the reason.
    if let Some(s) = &f.suppressed {
        return writeln!(
            out,
            "{at}: skip {}: {}",
            printable(&f.rule_id()),
            one_line(&s.describe())
        );
    }
    let Some(level) = super::ci_level(f) else {
        return Ok(());
    };
    writeln!(
        out,
        "{at}: {level} {}: {}",
        printable(&f.rule_id()),
        one_line(&f.response.message)
    )
}

/// A message on one line: line breaks become spaces (then made printable).
fn one_line(text: &str) -> String {
    let joined: String = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    printable(&joined).into_owned()
}
