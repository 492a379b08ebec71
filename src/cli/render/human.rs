//! Human output: one diagnostic per failing (resource, rule) with a source snippet, then
//! Kyverno's summary line. Headlines longer than the line are [wrapped](super::wrap) (the
//! terminal's width, else a fixed 100 columns: the same bytes in every log); with more
//! findings than `--max-findings`, the worst are shown and the rest counted
//! ([`super::cap`]). Colour (the level tag of each headline) only when asked for or on a
//! terminal (`--color`, `super::super::color`). Text from files and policies (names,
//! messages, source lines) is [printable](super::printable): it starts no line and sends no
//! control sequence to a terminal or a CI log.

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::report::Status;
use kpol::source::{LineCol, SourceFile};

use crate::cli::check::{CheckReport, FileReport, Finding};

use super::cap::{Parts, Piece, Rank};
use super::wrap::write_wrapped;
use super::{printable, push_printable};
use crate::cli::color::paint;

/// `--format human`.
pub struct Human {
    /// Colour the level tag of each headline.
    pub color: bool,
    /// The line width headlines wrap at (`None`: never wrap).
    pub width: Option<usize>,
    /// `--max-findings`: the most findings shown in detail (`None`: all).
    pub max_findings: Option<usize>,
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
            diagnostic(d, report.verbose, self.color, self.width, out)?;
        }
        Ok(())
    }

    fn file(&self, report: &CheckReport, file: &FileReport, out: &mut dyn Write) -> io::Result<()> {
        for piece in self.parts(report, file)?.pieces {
            out.write_all(&piece.text)?;
        }
        Ok(())
    }

    fn cap(&self) -> Option<usize> {
        self.max_findings
    }

    fn parts(&self, report: &CheckReport, file: &FileReport) -> io::Result<Parts> {
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        for d in &file.diagnostics {
            diagnostic(d, report.verbose, self.color, self.width, &mut text)?;
        }
        for f in &file.findings {
            // A suppressed result is listed, never dropped by the cap.
            let rank = Rank::of(report, f).filter(|_| f.suppressed.is_none());
            if rank.is_some() && !text.is_empty() {
                pieces.push(Piece {
                    rank: None,
                    text: std::mem::take(&mut text),
                });
            }
            finding(f, report.verbose, self.color, self.width, &mut text)?;
            if rank.is_some() {
                pieces.push(Piece {
                    rank,
                    text: std::mem::take(&mut text),
                });
            }
        }
        if !text.is_empty() {
            pieces.push(Piece { rank: None, text });
        }
        Ok(Parts { pieces })
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

/// `level[id]: text`, wrapped at `width` under the start of `text`.
fn headline(
    out: &mut dyn Write,
    color: bool,
    level: &str,
    id: &str,
    text: &str,
    width: Option<usize>,
) -> io::Result<()> {
    let prefix = format!("{}[{id}]: ", paint(color, style(level), level));
    let prefix_width = level.chars().count() + id.chars().count() + 4;
    write_wrapped(out, &prefix, prefix_width, text, width)
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

fn diagnostic(
    d: &Diagnostic,
    verbose: bool,
    color: bool,
    width: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        // A deletion verdict is shown without -v: it is about the inputs, not the run.
        Severity::Info if verbose || d.code == kpol::diagnostic::Code::WouldBeDeleted => "info",
        Severity::Info => return Ok(()),
    };
    headline(
        out,
        color,
        level,
        d.code.as_str(),
        &printable(&d.message),
        width,
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

fn finding(
    f: &Finding,
    verbose: bool,
    color: bool,
    width: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let level = f.status.as_str();
    let shown = matches!(f.status, Status::Fail | Status::Warn | Status::Error);
    // A suppressed result is listed with its reason, -v or not: suppressions stay visible.
    let id = printable(&f.rule_id()).into_owned();
    if let Some(s) = &f.suppressed {
        let text = format!("{} ({})", printable(&s.describe()), printable(&f.resource));
        headline(out, color, level, &id, &text, width)?;
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
            let text = format!(
                "{} ({})",
                printable(&f.response.message),
                printable(&f.resource)
            );
            headline(out, color, level, &id, &text, width)?;
        }
        return Ok(());
    }
    headline(
        out,
        color,
        level,
        &id,
        &printable(&f.response.message),
        width,
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
