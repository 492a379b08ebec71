//! Human output: one diagnostic per failing (resource, rule) with a source snippet, then
//! Kyverno's summary line. No terminal width: the same bytes everywhere; colour (the level
//! tag of each headline) only when asked for or on a terminal (`--color`, `super::super::color`). Text from
//! files and policies (names, messages, source lines) is [printable](super::printable): it
//! starts no line and sends no control sequence to a terminal or a CI log.

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::report::Status;
use kpol::source::{LineCol, SourceFile};

use crate::cli::check::{CheckReport, FileReport, Finding};

use super::{printable, push_printable};
use crate::cli::color::paint;

/// `--format human`.
pub struct Human {
    /// Colour the level tag of each headline.
    pub color: bool,
}

/// The SGR style of a level tag.
fn style(level: &str) -> &'static str {
    match level {
        "error" | "fail" => "1;31",
        "warning" | "warn" => "1;33",
        "pass" => "1;32",
        _ => "1;36",
    }
}

impl super::Render for Human {
    fn streams(&self) -> bool {
        true
    }

    fn lists_passing(&self, verbose: bool) -> bool {
        verbose
    }

    fn head(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        for d in &report.diagnostics {
            diagnostic(d, report.verbose, self.color, out)?;
        }
        Ok(())
    }

    fn file(&self, report: &CheckReport, file: &FileReport, out: &mut dyn Write) -> io::Result<()> {
        for d in &file.diagnostics {
            diagnostic(d, report.verbose, self.color, out)?;
        }
        for f in &file.findings {
            finding(f, report.verbose, self.color, out)?;
        }
        Ok(())
    }

    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        summary(report, out)
    }
}

fn summary(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    if let Some((policies, files)) = &report.table {
        tally_table("POLICY", policies, out)?;
        tally_table("FILE", files, out)?;
    }
    writeln!(out, "{}", report.summary.line())
}

/// `-t`: one row per policy (or file) with a failure, warning or error, most failures first.
fn tally_table(
    head: &str,
    table: &crate::cli::check::Tally,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut rows: Vec<(&String, &[usize; 3])> = table.iter().collect();
    if rows.is_empty() {
        return Ok(());
    }
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let width = rows
        .iter()
        .map(|(p, _)| printable(p).chars().count())
        .max()
        .unwrap_or(0)
        .max(head.len());
    writeln!(
        out,
        "{head:<width$}  {:>5}  {:>5}  {:>5}",
        "FAIL", "WARN", "ERROR"
    )?;
    for (name, [fail, warn, error]) in rows {
        writeln!(
            out,
            "{:<width$}  {fail:>5}  {warn:>5}  {error:>5}",
            printable(name)
        )?;
    }
    Ok(())
}

fn diagnostic(d: &Diagnostic, verbose: bool, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        // A deletion verdict is shown without -v: it is about the inputs, not the run.
        Severity::Info if verbose || d.code == kpol::diagnostic::Code::WouldBeDeleted => "info",
        Severity::Info => return Ok(()),
    };
    writeln!(
        out,
        "{}[{}]: {}",
        paint(color, style(level), level),
        d.code.as_str(),
        printable(&d.message)
    )?;
    if let Some(loc) = &d.location {
        let file = printable(&loc.file);
        match loc.start {
            Some(lc) => writeln!(out, " --> {file}:{}:{}", lc.line, lc.column)?,
            None => writeln!(out, " --> {file}")?,
        }
    }
    writeln!(out)
}

fn finding(f: &Finding, verbose: bool, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let level = f.status.as_str();
    let shown = matches!(f.status, Status::Fail | Status::Warn | Status::Error);
    // A suppressed result is listed with its reason, -v or not: suppressions stay visible.
    if let Some(s) = &f.suppressed {
        writeln!(
            out,
            "{}[{}]: {} ({})",
            paint(color, style(level), level),
            printable(&f.rule_id()),
            printable(&s.describe()),
            printable(&f.resource)
        )?;
        if let (Some(src), Some(start)) = (f.source.as_deref(), f.start) {
            writeln!(
                out,
                " --> {}:{}:{}",
                printable(src.name()),
                start.line,
                start.column
            )?;
        }
        return writeln!(out);
    }
    if !shown {
        if verbose {
            writeln!(
                out,
                "{}[{}]: {} ({})",
                paint(color, style(level), level),
                printable(&f.rule_id()),
                printable(&f.response.message),
                printable(&f.resource)
            )?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{}[{}]: {}",
        paint(color, style(level), level),
        printable(&f.rule_id()),
        printable(&f.response.message)
    )?;
    let file = f.source.as_deref();
    // The gutter is as wide as the line number plus one, as rustc draws it.
    let pad = " ".repeat(f.start.map_or(1, |s| s.line.to_string().len() + 1));
    if let (Some(src), Some(start)) = (file, f.start) {
        writeln!(
            out,
            "{pad}--> {}:{}:{}",
            printable(src.name()),
            start.line,
            start.column
        )?;
        snippet(
            src,
            start,
            f.end,
            f.response.kyverno_path().as_deref(),
            &pad,
            out,
        )?;
    }
    writeln!(
        out,
        "{pad}= resource: {} ({})",
        printable(&f.resource),
        f.response.failure_action.as_str()
    )?;
    writeln!(out)
}

fn snippet(
    src: &SourceFile,
    start: LineCol,
    end: Option<LineCol>,
    label: Option<&str>,
    pad: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let line: Vec<char> = src.line_text(start.line).chars().collect();
    let col = (start.column.saturating_sub(1) as usize).min(line.len());
    let width = match end {
        Some(e) if e.line == start.line && e.column > start.column => e.column - start.column,
        _ => {
            let rest = line.len() + 1;
            (rest as u32).saturating_sub(start.column).max(1)
        }
    } as usize;
    // The line as printed: control characters escaped, so the carets go under the escapes.
    let shown = |chars: &[char]| {
        let mut s = String::new();
        chars.iter().for_each(|&c| push_printable(c, &mut s));
        s
    };
    let under_end = (col + width).min(line.len());
    let (before, under, after) = (
        shown(&line[..col]),
        shown(&line[col..under_end]),
        shown(&line[under_end..]),
    );
    let carets = under.chars().count() + (col + width - under_end);
    let indent: String = before
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    writeln!(out, "{pad}|")?;
    writeln!(
        out,
        "{:>w$} | {before}{under}{after}",
        start.line,
        w = pad.len() - 1
    )?;
    write!(out, "{pad}| {indent}{}", "^".repeat(carets))?;
    match label {
        Some(l) => writeln!(out, " {}", printable(l))?,
        None => writeln!(out)?,
    }
    writeln!(out, "{pad}|")
}
