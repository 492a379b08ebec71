//! `--format json`: one JSON document, schema version 1 (docs/OUTPUT.md).

use std::io::{self, Write};

use serde::Serialize;

use kpol::diagnostic::Diagnostic;
use kpol::source::LineCol;

use crate::cli::check::{CheckReport, Summary};

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    results: Vec<Result<'a>>,
    diagnostics: Vec<&'a Diagnostic>,
    summary: Summary,
    /// The policies of the run, with the annotations reports group by.
    policies: Vec<Policy<'a>>,
    /// `--shard I/N` only: which part of the inputs this report covers (`kpol merge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<crate::cli::args::Shard>,
}

#[derive(Serialize)]
struct Result<'a> {
    policy: &'a str,
    rule: &'a str,
    result: &'a str,
    action: &'a str,
    message: &'a str,
    resource: Resource<'a>,
    file: Option<&'a str>,
    start: Option<LineCol>,
    end: Option<LineCol>,
    path: Option<String>,
    /// The finding's stable identity (SARIF's `partialFingerprints`, `kpol explain --finding`).
    fingerprint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    unsupported: Option<&'a str>,
    /// `--apiserver-defaults`: the defaults that changed this result.
    #[serde(
        rename = "apiserverDefaults",
        skip_serializing_if = "<[String]>::is_empty"
    )]
    apiserver_defaults: &'a [String],
    /// The PolicyExceptions that made this result a skip.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    exceptions: &'a [String],
    /// An inline suppression made this result a skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    suppression: Option<Suppression<'a>>,
}

#[derive(Serialize)]
struct Suppression<'a> {
    reason: &'a str,
    entry: &'a str,
    origin: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    /// The result it would have been.
    was: &'a str,
}

#[derive(Serialize)]
struct Policy<'a> {
    /// As `results[].policy`: `name`, or `namespace/name` for a namespaced Policy.
    policy: String,
    title: Option<&'a str>,
    description: Option<&'a str>,
    category: Option<&'a str>,
    severity: Option<&'a str>,
    file: &'a str,
    line: u32,
}

#[derive(Serialize)]
struct Resource<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
}

/// `--format json`.
pub struct Json;

impl super::Render for Json {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let doc = document(report);
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::other)?;
        writeln!(out)
    }
}

fn document(report: &CheckReport) -> Document<'_> {
    Document {
        version: 1,
        results: report
            .files
            .iter()
            .flat_map(|f| f.findings.iter())
            .map(|f| Result {
                policy: &f.policy,
                rule: &f.rule,
                result: f.status.as_str(),
                action: f.response.failure_action.as_str(),
                message: &f.response.message,
                resource: Resource {
                    api_version: &f.api_version,
                    kind: &f.kind,
                    namespace: &f.namespace,
                    name: &f.name,
                },
                file: f.source.as_deref().map(|s| s.name()),
                start: f.start,
                end: f.end,
                path: f.response.kyverno_path(),
                fingerprint: crate::cli::baseline::fingerprint(f),
                unsupported: f.response.unsupported.as_deref(),
                apiserver_defaults: &f.defaults,
                suppression: f.suppressed.as_ref().map(|s| Suppression {
                    reason: &s.reason,
                    entry: &s.entry,
                    origin: s.origin.as_str(),
                    until: s.until.map(|u| u.to_string()),
                    line: s.at.map(|a| a.line),
                    was: s.was.as_str(),
                }),
                exceptions: &f.exceptions,
            })
            .collect(),
        diagnostics: report
            .diagnostics
            .iter()
            .chain(report.files.iter().flat_map(|f| f.diagnostics.iter()))
            .collect(),
        summary: report.summary,
        policies: report
            .policies
            .iter()
            .map(|p| Policy {
                policy: match &p.namespace {
                    Some(ns) => format!("{ns}/{}", p.name),
                    None => p.name.clone(),
                },
                title: p.title.as_deref(),
                description: p.description.as_deref(),
                category: p.category.as_deref(),
                severity: p.severity.as_deref(),
                file: &p.file,
                line: p.line,
            })
            .collect(),
        shard: report.shard,
    }
}
