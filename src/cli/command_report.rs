//! The findings of `kpol mutate` and `kpol generate` in `kpol check`'s report model
//! ([`CheckReport`]): one model, so every format of `kpol check` (`--format`) writes them,
//! and the lines the three commands print on standard error have one shape, the concise
//! format's (`file:line:col: level policy/rule: message`).

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::engine::Engine;
use kpol::report::Status;

use super::check::{CheckReport, FileReport, Finding, Summary};
use super::render::Render;

/// A report over `files`, with the run-wide `diagnostics`, for `engine`'s policies (named
/// from files: these commands have no embedded policies).
pub(super) fn report(
    engine: &Engine,
    diagnostics: Vec<Diagnostic>,
    files: Vec<FileReport>,
) -> CheckReport {
    let mut summary = Summary::default();
    for file in &files {
        summary.merge(file.unlisted);
        for f in &file.findings {
            summary.add(f.status);
        }
        summary.input_errors += usize::from(file.diagnostics.iter().any(is_error));
    }
    summary.other_errors = diagnostics.iter().filter(|d| is_error(d)).count();
    CheckReport {
        incomplete: summary.input_errors + summary.other_errors > 0,
        diagnostics,
        files,
        policies: engine
            .policies()
            .iter()
            .map(|p| super::check::policy_info(p, false))
            .collect(),
        summary,
        verbose: false,
        timestamp: super::check::timestamp(),
        table: None,
        shard: None,
    }
}

/// One input's report: the findings a format lists (`list_passing`: passes and skips too),
/// the others counted.
pub(super) fn file_report(
    diagnostics: Vec<Diagnostic>,
    findings: impl IntoIterator<Item = Finding>,
    list_passing: bool,
) -> FileReport {
    let mut unlisted = Summary::default();
    let findings = findings
        .into_iter()
        .filter(|f| {
            let listed = list_passing || !matches!(f.status, Status::Pass | Status::Skip);
            if !listed {
                unlisted.add(f.status);
            }
            listed
        })
        .collect();
    FileReport {
        diagnostics,
        findings,
        unlisted,
    }
}

/// Writes `report` in `renderer`'s format: a streaming format as `kpol check` streams it
/// (head, each input, the close), the others whole.
pub(super) fn write(
    renderer: &dyn Render,
    report: &CheckReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    if renderer.streams() {
        renderer.head(report, out)?;
        for file in &report.files {
            renderer.file(report, file, out)?;
        }
    }
    renderer.render(report, out)
}

/// The lines of `findings` for standard error, as the concise format writes them: one for
/// each that a CI format flags (a rule error, a failure), none for a pass or a skip.
pub(super) fn stderr_lines(findings: Vec<Finding>) -> String {
    let file = FileReport {
        diagnostics: Vec::new(),
        findings,
        unlisted: Summary::default(),
    };
    let report = CheckReport::empty();
    let mut text = Vec::new();
    // Writing into memory does not fail.
    let _ = super::render::concise::Concise.file(&report, &file, &mut text);
    String::from_utf8_lossy(&text).into_owned()
}

fn is_error(d: &Diagnostic) -> bool {
    d.severity == Severity::Error
}
