//! Diagnostics: plain data about a problem in an input file (a policy, a manifest, a test file).
//!
//! Rule results are not diagnostics (see [`crate::report`]); these are the problems that make a
//! run incomplete: malformed YAML, invalid policies, unreadable files. Each has a code from a
//! fixed vocabulary ([`Code`]), a message, and where it is.

use serde::Serialize;

use crate::source::{LineCol, SourceFile, Span};

/// kpol's own diagnostic codes. Kebab-case, stable: scripts and docs refer to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// A file could not be read (missing, permissions, a directory loop).
    Io,
    /// A file is not valid UTF-8 text.
    Encoding,
    /// A YAML document could not be parsed.
    Yaml,
    /// A policy document is not a valid Kyverno policy; it is not evaluated.
    InvalidPolicy,
    /// A policy kind kpol does not evaluate (yet).
    UnsupportedPolicy,
    /// A document that is not a Kubernetes resource (no apiVersion/kind); skipped.
    NotAResource,
    /// A test file (kyverno-test.yaml) that could not be used.
    InvalidTest,
    /// An input beyond one of kpol's limits (file size, documents, nesting, aliases).
    Limit,
    /// A policy left out of the run: `spec.admission: false` at admission, `spec.background:
    /// false` in a background scan (`--background`).
    NotEvaluated,
    /// A policy field its kind's schema (Kyverno v1.19's CRDs) does not declare, a value of the
    /// wrong type, or a required field missing.
    Schema,
    /// A `kinds` entry that names neither a built-in kind nor one an input CRD defines.
    UnknownKind,
    /// A DeletingPolicy would delete the resource (or could not be evaluated on it).
    WouldBeDeleted,
    /// An inline suppression (`kpol.io/ignore`, `# kpol:ignore`) without a reason, or
    /// malformed: refused (docs/SUPPRESSIONS.md).
    InvalidSuppression,
    /// An inline suppression past its `until=` day: its findings are reported again.
    ExpiredSuppression,
    /// An inline suppression that covered no finding of its resource (info, `-v`).
    UnusedSuppression,
    /// A baseline file that could not be read or is not a kpol baseline.
    InvalidBaseline,
    /// `--baseline-strict`: a finding the baseline records is gone.
    StaleBaseline,
}

impl Code {
    #[cfg(test)]
    pub(crate) const ALL: &'static [Code] = &[
        Code::Io,
        Code::Encoding,
        Code::Yaml,
        Code::InvalidPolicy,
        Code::UnsupportedPolicy,
        Code::NotAResource,
        Code::InvalidTest,
        Code::Limit,
        Code::NotEvaluated,
        Code::Schema,
        Code::UnknownKind,
        Code::WouldBeDeleted,
        Code::InvalidSuppression,
        Code::ExpiredSuppression,
        Code::UnusedSuppression,
        Code::InvalidBaseline,
        Code::StaleBaseline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Io => "io",
            Code::Encoding => "encoding",
            Code::Yaml => "yaml",
            Code::InvalidPolicy => "invalid-policy",
            Code::UnsupportedPolicy => "unsupported-policy",
            Code::NotAResource => "not-a-resource",
            Code::InvalidTest => "invalid-test",
            Code::Limit => "limit",
            Code::NotEvaluated => "not-evaluated",
            Code::Schema => "schema",
            Code::UnknownKind => "unknown-kind",
            Code::WouldBeDeleted => "would-be-deleted",
            Code::InvalidSuppression => "invalid-suppression",
            Code::ExpiredSuppression => "expired-suppression",
            Code::UnusedSuppression => "unused-suppression",
            Code::InvalidBaseline => "invalid-baseline",
            Code::StaleBaseline => "stale-baseline",
        }
    }

    /// One line for `--help` and docs.
    pub fn description(self) -> &'static str {
        match self {
            Code::Io => "a file or directory could not be read",
            Code::Encoding => "a file is not UTF-8 text",
            Code::Yaml => "a YAML document could not be parsed",
            Code::InvalidPolicy => {
                "a policy failed Kyverno's policy validation and is not evaluated"
            }
            Code::UnsupportedPolicy => "a policy kind or rule type kpol does not evaluate",
            Code::NotAResource => "a document without apiVersion/kind was skipped",
            Code::InvalidTest => "a Kyverno test file could not be used",
            Code::Limit => {
                "an input is beyond one of kpol's limits (size, documents, nesting, aliases)"
            }
            Code::NotEvaluated => {
                "a policy not run at admission (spec.admission: false) or in a --background scan"
            }
            Code::Schema => {
                "a policy field its kind's schema (Kyverno v1.19 CRDs) does not declare, or of the wrong type"
            }
            Code::UnknownKind => {
                "a kinds entry names neither a built-in kind nor a kind an input CRD defines"
            }
            Code::WouldBeDeleted => {
                "a DeletingPolicy's conditions hold for a resource: Kyverno's cleanup would delete it"
            }
            Code::InvalidSuppression => {
                "an inline suppression without a reason, or malformed, was refused"
            }
            Code::ExpiredSuppression => {
                "an inline suppression is past its until= day: its findings are reported again"
            }
            Code::UnusedSuppression => "an inline suppression covered no finding of its resource",
            Code::InvalidBaseline => "a baseline file could not be read or is not a kpol baseline",
            Code::StaleBaseline => {
                "--baseline-strict: a finding the baseline records is gone (shrink the baseline)"
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The run is incomplete (exit 2).
    Error,
    /// Worth reading; does not change the exit code.
    Warning,
    /// Shown with `-v` only.
    Info,
}

/// Where a diagnostic points: a file and, when known, a span resolved to line/column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    #[serde(skip)]
    pub span: Span,
    pub start: Option<LineCol>,
    pub end: Option<LineCol>,
}

impl Location {
    /// A whole file, no position.
    pub fn file(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            span: Span::EMPTY,
            start: None,
            end: None,
        }
    }

    /// A span in a source file.
    pub fn at(source: &SourceFile, span: Span) -> Self {
        Self {
            file: source.name().to_owned(),
            span,
            start: Some(source.line_col(span.start)),
            end: Some(source.line_col(span.end)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub location: Option<Location>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>, location: Option<Location>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            location,
        }
    }

    pub fn warning(code: Code, message: impl Into<String>, location: Option<Location>) -> Self {
        Self {
            code,
            severity: Severity::Warning,
            message: message.into(),
            location,
        }
    }

    pub fn info(code: Code, message: impl Into<String>, location: Option<Location>) -> Self {
        Self {
            code,
            severity: Severity::Info,
            message: message.into(),
            location,
        }
    }

    /// `file:line:column: ` prefix for one-line renderings.
    pub fn position(&self) -> String {
        match &self.location {
            Some(Location {
                file,
                start: Some(lc),
                ..
            }) => format!("{file}:{}:{}", lc.line, lc.column),
            Some(loc) => loc.file.clone(),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_described() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {}", c.as_str());
            assert!(!c.description().is_empty());
            assert_eq!(
                serde_json::to_value(c).ok(),
                Some(serde_json::Value::String(c.as_str().to_owned()))
            );
        }
    }
}
