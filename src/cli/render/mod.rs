//! Renderers: views of one [`CheckReport`](super::check::CheckReport); none computes anything.
//! `kpol mutate` and `kpol generate` report their findings in it too
//! (super::command_report). `kpol generate`'s generated resources ([`generate`], a view of
//! its own model), `kpol mutate --check`'s file line ([`mutate`]) and `kpol test`'s outputs
//! ([`test`]) are written here as well.
//!
//! Every output format implements [`Render`] over the same report, so the formats cannot
//! disagree about what was found: they differ only in how they write it (docs/OUTPUT.md).

pub mod cap;
pub mod concise;
pub mod generate;
pub mod github;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod mutate;
pub mod policy_report;
pub mod progress;
pub mod sarif;
pub mod test;
pub mod wrap;
pub mod yaml_out;

use std::io::{self, Write};

use kpol::diagnostic::{Diagnostic, Severity};

use super::args::CheckFormat as Format;
use super::check::{CheckReport, FileReport, Finding};

/// One output format.
///
/// A format that [streams](Render::streams) is written as the inputs are checked: [`head`]
/// with the run-wide diagnostics (the report has no files yet), [`file`] for each input in
/// input order, then [`render`] with the summary (the files are not kept). The others get
/// only [`render`], with every file.
///
/// [`head`]: Render::head
/// [`file`]: Render::file
/// [`render`]: Render::render
pub trait Render: Sync {
    /// Whether the format is written input by input.
    fn streams(&self) -> bool {
        false
    }

    /// Whether the format shows passing and skipped results one by one (else only their
    /// number reaches it: `FileReport::unlisted`).
    fn lists_passing(&self, _verbose: bool) -> bool {
        true
    }

    /// Writes what comes before the first input (streaming formats).
    fn head(&self, _report: &CheckReport, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Writes what one input found (streaming formats).
    fn file(
        &self,
        _report: &CheckReport,
        _file: &FileReport,
        _out: &mut dyn Write,
    ) -> io::Result<()> {
        Ok(())
    }

    /// The most findings a streaming format shows in detail (`--max-findings`, human only):
    /// the run feeds [`parts`](Render::parts) through a [`cap::Cap`]. `None`: all.
    fn cap(&self) -> Option<usize> {
        None
    }

    /// What one input found, piece by piece, each finding the cap may drop apart with its
    /// rank (streaming formats); by default the whole of [`file`](Render::file), kept.
    fn parts(&self, report: &CheckReport, file: &FileReport) -> io::Result<cap::Parts> {
        let mut text = Vec::new();
        self.file(report, file, &mut text)?;
        Ok(cap::Parts::whole(text))
    }

    /// Writes the report: the whole of it, or what follows the inputs of a streaming format.
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()>;
}

/// How the CI formats (`github`, `sarif`) flag a result: `error` for an Enforce failure and
/// an error, `warning` for an Audit (or `Warn`) failure and a warning; `None` for a pass or
/// a skip. One function, so that both formats agree.
pub fn ci_level(f: &Finding) -> Option<&'static str> {
    use kpol::report::{FailureAction, Status};
    match (f.status, f.response.failure_action) {
        (Status::Fail, FailureAction::Enforce) | (Status::Error, _) => Some("error"),
        (Status::Fail, FailureAction::Audit | FailureAction::Warn) | (Status::Warn, _) => {
            Some("warning")
        }
        (Status::Pass | Status::Skip, _) => None,
    }
}

/// How the human format lays out its findings.
#[derive(Clone, Copy, Default)]
pub struct Layout {
    /// Colour the level tags.
    pub color: bool,
    /// The width headlines wrap at ([`wrap::width`]; `None`: never).
    pub width: Option<usize>,
    /// `--max-findings` (`None`: all).
    pub max_findings: Option<usize>,
}

/// The renderer of a format; `output` is the report's file (`-o`), if any.
pub fn renderer(
    format: Format,
    layout: Layout,
    output: Option<&std::path::Path>,
) -> Box<dyn Render> {
    match format {
        Format::Human => Box::new(human::Human {
            color: layout.color,
            width: layout.width,
            max_findings: layout.max_findings,
        }),
        Format::Concise => Box::new(concise::Concise),
        Format::Json => Box::new(json::Json),
        Format::Sarif => Box::new(sarif::Sarif),
        Format::Junit => Box::new(junit::Junit),
        Format::Github => Box::new(github::Github),
        Format::PolicyReport => Box::new(policy_report::PolicyReport::OPENREPORTS),
        Format::PolicyReportV1alpha2 => Box::new(policy_report::PolicyReport::WGPOLICY),
        Format::Html => Box::new(html::Html {
            base: html::base_of(output),
        }),
    }
}

/// Where a report goes: a file (created before the run starts) or standard output.
pub fn open(
    output: Option<&std::path::Path>,
    links: super::write::Links,
) -> io::Result<Box<dyn Write>> {
    Ok(match output {
        // A symbolic link at FILE is refused unless the user follows links.
        Some(path) => Box::new(io::BufWriter::new(super::write::open_report(path, links)?)),
        None => Box::new(io::BufWriter::new(io::stdout().lock())),
    })
}

/// Whether a character must not reach a terminal or a CI log as it is: control characters
/// (C0 but the tab, DEL, C1 with NEL), the line and paragraph separators, and the
/// bidirectional controls that reorder what a reader sees.
pub fn is_unprintable(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'
                ..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Text from a file or a policy, to print on one line of a terminal or a CI log: each
/// [unprintable](is_unprintable) character is shown as an escape (`\n`, `\r`, else
/// `\u{1b}`), so the text starts no line and moves no cursor. Ordinary text, UTF-8 and tabs
/// included, comes back unchanged (and unallocated).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    // perf: printable ASCII and tabs, nearly every string printed, are decided byte by byte
    // (a loop the compiler vectorises) before any char is decoded.
    let plain_ascii = s.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    if plain_ascii || !s.chars().any(is_unprintable) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_printable(c, &mut out);
    }
    std::borrow::Cow::Owned(out)
}

/// Appends `c`, escaped when it is [unprintable](is_unprintable).
pub fn push_printable(c: char, out: &mut String) {
    use std::fmt::Write as _;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if is_unprintable(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// One diagnostic on one line of standard error, labelled by its severity (infos are not
/// shown), for commands without a report and failures before any report exists.
pub fn print_diagnostic_line(d: &Diagnostic) {
    let word = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => return,
    };
    let pos = d.position();
    let message = printable(&d.message);
    if pos.is_empty() {
        eprintln!("{word}[{}]: {message}", d.code.as_str());
    } else {
        eprintln!(
            "{word}[{}]: {}: {message}",
            d.code.as_str(),
            printable(&pos)
        );
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn printable_escapes_what_moves_the_cursor_and_keeps_text() {
        assert_eq!(
            printable(
                "a\n::error file=x::pwned\r\u{1b}[31m\u{1b}]0;t\u{7}\u{7f}\u{85}\u{2028}\u{202e}"
            ),
            "a\\n::error file=x::pwned\\r\\u{1b}[31m\\u{1b}]0;t\\u{7}\\u{7f}\\u{85}\\u{2028}\\u{202e}"
        );
        let plain = "naïve\tname — 名前 \\n";
        assert!(matches!(printable(plain), std::borrow::Cow::Borrowed(p) if p == plain));
    }

    /// Every format renders a clean, empty run without error, and the machine formats say
    /// "nothing found" in their own way.
    #[test]
    fn every_format_renders_an_empty_report() {
        let report = CheckReport::empty();
        for format in Format::value_variants() {
            let mut out = Vec::new();
            let rendered = renderer(*format, Layout::default(), None).render(&report, &mut out);
            assert!(rendered.is_ok(), "{format:?}");
            let text = String::from_utf8_lossy(&out);
            assert!(!text.is_empty(), "{format:?}");
            if *format == Format::Sarif {
                assert!(text.contains("\"results\": []"), "{text}");
            }
        }
    }
}
