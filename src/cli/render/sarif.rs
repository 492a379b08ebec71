//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it (docs/OUTPUT.md).
//!
//! Always one run with a `results` array (empty when clean); one reporting descriptor per
//! policy rule that produced a result, with help text; regions only with positive lines;
//! `partialFingerprints` stable across line moves; diagnostics as tool notifications.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::report::Status;

use crate::cli::check::{CheckReport, Finding};

/// `--format sarif`.
pub struct Sarif;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    invocations: [Invocation; 1],
    results: Vec<SarifResult>,
    column_kind: &'static str,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<Descriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    id: String,
    name: &'a str,
    short_description: Text,
    full_description: Text,
    help: Text,
    default_configuration: Config,
    properties: Props,
}

#[derive(Serialize)]
struct Props {
    tags: Vec<String>,
}

#[derive(Serialize)]
struct Config {
    level: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: Physical,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical {
    artifact_location: Artifact,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<u32>,
}

impl super::Render for Sarif {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &log(report)).map_err(io::Error::other)?;
        writeln!(out)
    }
}

fn shown(f: &Finding) -> bool {
    matches!(f.status, Status::Fail | Status::Warn | Status::Error)
}

fn log(report: &CheckReport) -> Log<'_> {
    let findings: Vec<&Finding> = report
        .files
        .iter()
        .flat_map(|f| f.findings.iter())
        .filter(|f| shown(f))
        .collect();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut rules = Vec::new();
    for f in &findings {
        let id = f.rule_id();
        if !index.contains_key(&id) {
            index.insert(id.clone(), rules.len());
            rules.push(descriptor(report, f, id));
        }
    }
    let results = findings
        .iter()
        .map(|f| {
            let id = f.rule_id();
            SarifResult {
                rule_index: index.get(&id).copied().unwrap_or(0),
                rule_id: id,
                level: level(f.status),
                message: Text {
                    text: format!("{} ({})", f.response.message, f.resource),
                },
                locations: location(f).into_iter().collect(),
                partial_fingerprints: BTreeMap::from([("kpolFinding/v1", fingerprint(f))]),
            }
        })
        .collect();
    let notifications = report
        .diagnostics
        .iter()
        .chain(report.files.iter().flat_map(|f| f.diagnostics.iter()))
        .filter(|d| d.severity != Severity::Info)
        .map(notification)
        .collect();
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "kpol",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules,
                },
            },
            invocations: [Invocation {
                execution_successful: !report.incomplete,
                tool_execution_notifications: notifications,
            }],
            results,
            column_kind: "unicodeCodePoints",
        }],
    }
}

fn level(s: Status) -> &'static str {
    match s {
        Status::Warn => "warning",
        Status::Pass | Status::Skip => "none",
        Status::Fail | Status::Error => "error",
    }
}

fn descriptor<'a>(report: &'a CheckReport, f: &'a Finding, id: String) -> Descriptor<'a> {
    let info = report.policies.get(f.policy_index);
    let title = info.and_then(|p| p.title.clone());
    let description = info.and_then(|p| p.description.clone());
    let full = description
        .clone()
        .or_else(|| title.clone())
        .unwrap_or_else(|| match f.rule.as_str() {
            "" => format!("Kyverno policy {}", f.policy),
            rule => format!("Kyverno policy {}, rule {rule}", f.policy),
        });
    let mut help = match f.rule.as_str() {
        "" => format!("Kyverno policy `{}`.", f.policy),
        rule => format!("Kyverno policy `{}`, rule `{rule}`.", f.policy),
    };
    if let Some(d) = &description {
        help.push_str("\n\n");
        help.push_str(d.trim());
    }
    if let Some(file) = info.map(|p| p.file.as_str()) {
        help.push_str(&format!("\n\nPolicy file: {file}"));
    }
    let mut tags = vec!["kyverno".to_owned()];
    tags.extend(info.and_then(|p| p.category.clone()));
    Descriptor {
        name: &f.rule,
        short_description: Text {
            text: title.unwrap_or_else(|| f.rule_id()),
        },
        full_description: Text { text: full },
        help: Text { text: help },
        default_configuration: Config {
            level: if f.status == Status::Warn {
                "warning"
            } else {
                "error"
            },
        },
        properties: Props { tags },
        id,
    }
}

fn location(f: &Finding) -> Option<Location> {
    let src = f.source.as_deref()?;
    let region = f.start.filter(|s| s.line > 0).map(|s| {
        let end = f.end.filter(|e| e.line >= s.line && e.line > 0);
        Region {
            start_line: s.line,
            start_column: s.column.max(1),
            end_line: end.map(|e| e.line),
            end_column: end.map(|e| e.column.max(1)),
        }
    });
    Some(Location {
        physical_location: Physical {
            artifact_location: artifact(src.name()),
            region,
        },
    })
}

fn notification(d: &Diagnostic) -> Notification {
    let locations = d
        .location
        .as_ref()
        .map(|l| Location {
            physical_location: Physical {
                artifact_location: artifact(&l.file),
                region: l.start.filter(|s| s.line > 0).map(|s| Region {
                    start_line: s.line,
                    start_column: s.column.max(1),
                    end_line: None,
                    end_column: None,
                }),
            },
        })
        .into_iter()
        .collect();
    Notification {
        level: if d.severity == Severity::Error {
            "error"
        } else {
            "warning"
        },
        message: Text {
            text: format!("{}: {}", d.code.as_str(), d.message),
        },
        locations,
    }
}

/// A file name as a URI reference: relative to the checkout (`%SRCROOT%`) when relative,
/// `file://` when absolute; reserved characters percent-encoded.
fn artifact(name: &str) -> Artifact {
    let name = name.replace('\\', "/");
    let rel = name.trim_start_matches("./");
    if rel.starts_with('/') {
        Artifact {
            uri: format!("file://{}", encode(rel)),
            uri_base_id: None,
        }
    } else {
        Artifact {
            uri: encode(rel),
            uri_base_id: Some("%SRCROOT%"),
        }
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// FNV-1a over what identifies a finding apart from its line: stable when lines move.
fn fingerprint(f: &Finding) -> String {
    let file = f.source.as_deref().map_or("", |s| s.name());
    let key = [
        f.policy.as_str(),
        f.rule.as_str(),
        f.api_version.as_str(),
        f.kind.as_str(),
        f.namespace.as_str(),
        f.name.as_str(),
        file,
    ]
    .join("\u{0}");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
