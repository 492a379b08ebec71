//! The human output of `kpol test`, shaped like `kyverno test` (cli-compat.md §9): progress
//! lines and a table per test, then the summary line CI scripts parse. Names, paths and
//! messages are [printable](crate::cli::render::printable): none starts a line or sends a
//! control sequence.

use std::fmt::Write as _;

use crate::cli::render::printable;
use crate::cli::test::report::{FileReport, Totals};
use crate::cli::test::rows::Row;

/// Renders everything; `fail_only` and `detailed` are the flags of the same names.
pub fn render(files: &[FileReport], totals: &Totals, fail_only: bool, detailed: bool) -> String {
    let mut out = String::new();
    let mut failed: Vec<&Row> = Vec::new();
    for file in files {
        if let Some(e) = &file.error {
            if !fail_only {
                let _ = writeln!(out, "Loading test  ( {} ) ...", printable(&file.path));
                let _ = writeln!(out, "  ERROR: {}", printable(e));
            }
            continue;
        }
        for test in &file.tests {
            failed.extend(test.rows.iter().filter(|r| !r.ok));
            if fail_only {
                continue;
            }
            let _ = writeln!(out, "Loading test  ( {} ) ...", printable(&file.path));
            for w in &test.warnings {
                let _ = writeln!(out, "  warning: {}", printable(w));
            }
            for e in &test.errors {
                let _ = writeln!(out, "  ERROR: {}", printable(e));
            }
            if let Some(e) = &test.error {
                let _ = writeln!(out, "  ERROR: {}", printable(e));
                continue;
            }
            let (p, r, x) = test.applying;
            let _ = writeln!(
                out,
                "  Applying {p} {} to {r} {} with {x} {} ...",
                plural(p, "policy", "policies"),
                plural(r, "resource", "resources"),
                plural(x, "exception", "exceptions"),
            );
            let _ = writeln!(out, "  Checking results ...\n");
            out.push_str(&table(test.rows.iter(), detailed));
            out.push('\n');
        }
    }
    let errors: Vec<String> = files.iter().flat_map(FileReport::error_lines).collect();
    if !errors.is_empty() {
        out.push_str("\nTest errors:\n");
        for e in &errors {
            let _ = writeln!(out, "  {}", printable(e));
        }
    }
    let _ = writeln!(out, "\n{}\n", summary_line(totals, fail_only));
    if fail_only && !failed.is_empty() {
        out.push_str("Aggregated Failed Test Cases : \n");
        out.push_str(&table(failed.into_iter(), detailed));
    }
    out
}

/// `Test Summary: …`, as `kyverno test` words it with and without `--fail-only`.
pub fn summary_line(totals: &Totals, fail_only: bool) -> String {
    if fail_only {
        format!(
            "Test Summary: {} out of {} tests failed",
            totals.fail,
            totals.pass + totals.skip + totals.fail
        )
    } else {
        format!(
            "Test Summary: {} tests passed and {} tests failed",
            totals.pass + totals.skip,
            totals.fail
        )
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// A bordered table; IDs count from 1.
fn table<'a>(rows: impl Iterator<Item = &'a Row>, detailed: bool) -> String {
    let mut header = vec!["ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"];
    if detailed {
        header.push("MESSAGE");
    }
    let body: Vec<Vec<String>> = rows
        .enumerate()
        .map(|(i, r)| {
            let mut cells = vec![
                (i + 1).to_string(),
                printable(&r.policy).into_owned(),
                printable(&r.rule).into_owned(),
                printable(&r.resource).into_owned(),
                r.result_word().to_owned(),
                printable(&r.reason).into_owned(),
            ];
            if detailed {
                cells.push(printable(&r.message.replace('\n', " ")).into_owned());
            }
            cells
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for cells in &body {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let rule_line = {
        let mut s = String::from("│");
        for w in &widths {
            s.push_str(&"─".repeat(w + 2));
            s.push('│');
        }
        s.push('\n');
        s
    };
    let line = |cells: &[&str]| {
        let mut s = String::from("│");
        for (c, w) in cells.iter().zip(&widths) {
            let pad = w.saturating_sub(c.chars().count());
            let _ = write!(s, " {c}{} │", " ".repeat(pad));
        }
        s.push('\n');
        s
    };
    let mut out = rule_line.clone();
    out.push_str(&line(&header));
    out.push_str(&rule_line);
    for cells in &body {
        let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
        out.push_str(&line(&refs));
    }
    out.push_str(&rule_line);
    out
}
