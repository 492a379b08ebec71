//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts and ranks it
//! (docs/OUTPUT.md).
//!
//! Always one run with a `results` array (empty when clean); one reporting descriptor per
//! policy rule that produced a result, with help text, `security-severity` from the policy's
//! `policies.kyverno.io/severity` and a `helpUri` to the policy; regions only with positive
//! lines; `partialFingerprints` stable across line moves; error diagnostics with a location as
//! results of their own rules (`kpol/input-error`, `kpol/invalid-policy`), every diagnostic as
//! a tool notification.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use kpol::diagnostic::{Code, Diagnostic, Severity};
use kpol::report::Status;

use crate::cli::check::{CheckReport, Finding, PolicyInfo};

/// `--format sarif`.
pub struct Sarif;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The results GitHub code scanning shows of one run; past it a warning says some are not
/// shown (a notification in the run, a line on standard error).
pub const GITHUB_RESULT_LIMIT: usize = 5000;

/// The rule of an input that could not be read or parsed (I/O, encoding, YAML, limits).
pub(crate) const INPUT_ERROR: &str = "kpol/input-error";
/// The rule of a policy that is not valid or not supported.
pub(crate) const INVALID_POLICY: &str = "kpol/invalid-policy";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: [Invocation; 1],
    results: Vec<SarifResult>,
    column_kind: &'static str,
    /// `--shard I/N` only: which part of the inputs this log covers and its summary counts,
    /// for `kpol merge` (which leaves it out: the unsharded log has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<RunProps>,
}

#[derive(Serialize)]
struct RunProps {
    #[serde(rename = "kpolShard")]
    shard: ShardProps,
}

#[derive(Serialize)]
struct ShardProps {
    index: usize,
    count: usize,
    summary: crate::cli::check::Summary,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<Descriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    id: String,
    name: String,
    short_description: Text,
    full_description: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    help: Help,
    default_configuration: Config,
    properties: Props,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Props {
    tags: Vec<String>,
    #[serde(rename = "security-severity", skip_serializing_if = "Option::is_none")]
    security_severity: Option<&'static str>,
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
    /// An inline suppression (`kpol:ignore`, `kpol.io/ignore`) accepted this result.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
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

/// What the document depends on besides the report: where kpol runs, and the repository on
/// GitHub Actions.
struct Context {
    /// The working directory: absolute paths under it are written relative.
    cwd: Option<PathBuf>,
    /// `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA` on GitHub Actions: a policy
    /// file's `helpUri` is its page there.
    blob: Option<String>,
    /// [`GITHUB_RESULT_LIMIT`] (smaller in tests).
    limit: usize,
}

impl Context {
    fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let blob = match (
            var("GITHUB_SERVER_URL"),
            var("GITHUB_REPOSITORY"),
            var("GITHUB_SHA"),
        ) {
            (Some(server), Some(repo), Some(sha)) => Some(format!(
                "{}/{}/blob/{}",
                server.trim_end_matches('/'),
                encode(&repo),
                encode(&sha)
            )),
            _ => None,
        };
        Self {
            cwd: std::env::current_dir().ok(),
            blob,
            limit: GITHUB_RESULT_LIMIT,
        }
    }
}

impl super::Render for Sarif {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let cx = Context::from_env();
        let log = log(report, &cx);
        let shown = log.runs[0].results.len();
        if shown > cx.limit {
            eprintln!("{}", over_limit(shown, cx.limit));
        }
        serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::other)?;
        writeln!(out)
    }
}

pub(crate) fn over_limit(results: usize, limit: usize) -> String {
    format!(
        "kpol: warning: the SARIF report has {results} results; GitHub code scanning shows at \
         most {limit} of a run"
    )
}

/// Failures, warnings and errors, and the suppressed ones (with their suppression).
fn shown(f: &Finding) -> bool {
    matches!(f.status, Status::Fail | Status::Warn | Status::Error) || f.suppressed.is_some()
}

/// The level of a result: a suppressed one keeps the level it had.
fn level(f: &Finding) -> &'static str {
    match &f.suppressed {
        Some(s) => match (s.was, f.response.failure_action) {
            (Status::Fail, kpol::report::FailureAction::Enforce) | (Status::Error, _) => "error",
            _ => "warning",
        },
        None => super::ci_level(f).unwrap_or("error"),
    }
}

fn log(report: &CheckReport, cx: &Context) -> Log {
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
            rules.push(descriptor(report, f, id, cx));
        }
    }
    let mut results: Vec<SarifResult> = findings
        .iter()
        .map(|f| {
            let id = f.rule_id();
            SarifResult {
                rule_index: index.get(&id).copied().unwrap_or(0),
                rule_id: id,
                level: level(f),
                message: Text {
                    text: format!("{} ({})", f.response.message, f.resource),
                },
                locations: location(f, cx).into_iter().collect(),
                partial_fingerprints: BTreeMap::from([(FINGERPRINT, fingerprint(f))]),
                suppressions: f
                    .suppressed
                    .iter()
                    .map(|s| Suppression {
                        kind: "inSource",
                        justification: s.reason.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    let diagnostics: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .chain(report.files.iter().flat_map(|f| f.diagnostics.iter()))
        .filter(|d| d.severity != Severity::Info)
        .collect();
    // An error at a place in a file is a result too: code scanning shows results, not
    // notifications (it needs a location for each).
    for d in &diagnostics {
        let Some(loc) = diagnostic_location(d, cx) else {
            continue;
        };
        if d.severity != Severity::Error {
            continue;
        }
        let id = diagnostic_rule(d.code);
        let rule_index = *index.entry(id.to_owned()).or_insert_with(|| {
            rules.push(kpol_descriptor(id));
            rules.len() - 1
        });
        results.push(SarifResult {
            rule_id: id.to_owned(),
            rule_index,
            level: "error",
            message: Text {
                text: format!("{}: {}", d.code.as_str(), d.message),
            },
            locations: vec![loc],
            suppressions: Vec::new(),
            partial_fingerprints: BTreeMap::from([(
                FINGERPRINT,
                hash(&[
                    id,
                    d.code.as_str(),
                    &d.message,
                    d.location.as_ref().map_or("", |l| l.file.as_str()),
                ]),
            )]),
        });
    }
    let mut notifications: Vec<Notification> =
        diagnostics.iter().map(|d| notification(d, cx)).collect();
    if results.len() > cx.limit {
        notifications.push(Notification {
            level: "warning",
            message: Text {
                text: over_limit(results.len(), cx.limit)
                    .trim_start_matches("kpol: warning: ")
                    .to_owned(),
            },
            locations: Vec::new(),
        });
    }
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
            properties: report.shard.map(|sh| RunProps {
                shard: ShardProps {
                    index: sh.index,
                    count: sh.count,
                    summary: report.summary,
                },
            }),
        }],
    }
}

/// The rule of an error diagnostic shown as a result.
fn diagnostic_rule(code: Code) -> &'static str {
    match code {
        Code::InvalidPolicy | Code::UnsupportedPolicy => INVALID_POLICY,
        _ => INPUT_ERROR,
    }
}

fn kpol_descriptor(id: &'static str) -> Descriptor {
    let (title, about) = if id == INVALID_POLICY {
        (
            "Invalid Kyverno policy",
            "A policy is not a valid Kyverno policy, or one kpol does not evaluate: it was \
             not applied, so the check is incomplete.",
        )
    } else {
        (
            "Input kpol could not check",
            "An input could not be read or parsed (I/O, encoding, malformed YAML, a limit): \
             its resources were not checked, so the check is incomplete.",
        )
    };
    Descriptor {
        id: id.to_owned(),
        name: id.trim_start_matches("kpol/").to_owned(),
        short_description: Text {
            text: title.to_owned(),
        },
        full_description: Text {
            text: about.to_owned(),
        },
        help_uri: None,
        help: Help {
            text: about.to_owned(),
            markdown: format!("**{title}**\n\n{about}"),
        },
        default_configuration: Config { level: "error" },
        properties: Props {
            tags: vec!["kpol".to_owned()],
            security_severity: None,
        },
    }
}

/// GitHub's `security-severity` of a `policies.kyverno.io/severity`: a score inside the band
/// GitHub ranks by (over 9.0 critical, 7.0–8.9 high, 4.0–6.9 medium, 0.1–3.9 low). Other
/// values (`info`, none) give no score.
pub fn security_severity(severity: &str) -> Option<&'static str> {
    match severity.trim().to_ascii_lowercase().as_str() {
        "critical" => Some("9.5"),
        "high" => Some("8.0"),
        "medium" => Some("5.5"),
        "low" => Some("3.0"),
        _ => None,
    }
}

fn descriptor(report: &CheckReport, f: &Finding, id: String, cx: &Context) -> Descriptor {
    let info = report.policies.get(f.policy_index);
    let title = info.and_then(|p| p.title.clone());
    let description = info.and_then(|p| p.description.clone());
    let which = match f.rule.as_str() {
        "" => format!("Kyverno policy {}", f.policy),
        rule => format!("Kyverno policy {}, rule {rule}", f.policy),
    };
    let full = description
        .clone()
        .or_else(|| title.clone())
        .unwrap_or_else(|| which.clone());
    let help_uri = info.and_then(|p| policy_uri(p, cx));
    let mut text = Vec::new();
    let mut markdown = Vec::new();
    if let Some(t) = &title {
        text.push(t.trim().to_owned());
        markdown.push(format!("**{}**", t.trim()));
    }
    if let Some(d) = &description {
        text.push(d.trim().to_owned());
        markdown.push(d.trim().to_owned());
    }
    text.push(format!("{which}."));
    markdown.push(match f.rule.as_str() {
        "" => format!("Kyverno policy `{}`.", f.policy),
        rule => format!("Kyverno policy `{}`, rule `{rule}`.", f.policy),
    });
    if let Some(p) = info {
        let what = if p.embedded {
            "kpol default policy"
        } else {
            "Policy file"
        };
        text.push(format!("{what}: {}", p.file));
        markdown.push(match &help_uri {
            Some(uri) => format!("{what}: [`{}`]({uri})", p.file),
            None => format!("{what}: `{}`", p.file),
        });
    }
    let mut tags = vec!["security".to_owned(), "kyverno".to_owned()];
    tags.extend(info.and_then(|p| p.category.clone()));
    Descriptor {
        name: f.rule.clone(),
        short_description: Text {
            text: title.unwrap_or_else(|| f.rule_id()),
        },
        full_description: Text { text: full },
        help_uri,
        help: Help {
            text: text.join("\n\n"),
            markdown: markdown.join("\n\n"),
        },
        default_configuration: Config { level: level(f) },
        properties: Props {
            tags,
            security_severity: info
                .and_then(|p| p.severity.as_deref())
                .and_then(security_severity),
        },
        id,
    }
}

/// Where a policy file is, for `helpUri` (an absolute URI): its page on GitHub when the run
/// is on GitHub Actions and the file is under the working directory, else a `file://` URI;
/// with `#L<line>`. None for an embedded default policy.
fn policy_uri(p: &PolicyInfo, cx: &Context) -> Option<String> {
    if p.embedded {
        return None;
    }
    let name = p.file.replace('\\', "/");
    let path = Path::new(&name);
    let fragment = format!("#L{}", p.line.max(1));
    if let Some(blob) = &cx.blob {
        let rel = if path.is_absolute() {
            under(path, cx.cwd.as_deref())
        } else {
            normal(path)
        };
        if let Some(rel) = rel {
            return Some(format!("{blob}/{}{fragment}", encode(&rel)));
        }
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cx.cwd.as_deref()?.join(name.trim_start_matches("./"))
    };
    let abs = abs.to_string_lossy().replace('\\', "/");
    let abs = abs.trim_start_matches('/');
    Some(format!("file:///{}{fragment}", encode(abs)))
}

/// `path` as `a/b/c` when it has only normal components (no `..`, no root).
fn normal(path: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join("/"))
}

/// An absolute `path` relative to `cwd` when it is under it (as given, else both resolved).
fn under(path: &Path, cwd: Option<&Path>) -> Option<String> {
    let cwd = cwd?;
    let strip = |p: &Path, base: &Path| p.strip_prefix(base).ok().and_then(normal);
    strip(path, cwd).or_else(|| strip(&path.canonicalize().ok()?, &cwd.canonicalize().ok()?))
}

fn location(f: &Finding, cx: &Context) -> Option<Location> {
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
            artifact_location: artifact(src.name(), cx),
            region,
        },
    })
}

fn diagnostic_location(d: &Diagnostic, cx: &Context) -> Option<Location> {
    let l = d.location.as_ref()?;
    Some(Location {
        physical_location: Physical {
            artifact_location: artifact(&l.file, cx),
            region: l.start.filter(|s| s.line > 0).map(|s| Region {
                start_line: s.line,
                start_column: s.column.max(1),
                end_line: None,
                end_column: None,
            }),
        },
    })
}

fn notification(d: &Diagnostic, cx: &Context) -> Notification {
    Notification {
        level: if d.severity == Severity::Error {
            "error"
        } else {
            "warning"
        },
        message: Text {
            text: format!("{}: {}", d.code.as_str(), d.message),
        },
        locations: diagnostic_location(d, cx).into_iter().collect(),
    }
}

/// A file name as a URI reference: relative to the checkout (`%SRCROOT%`) when relative or
/// under the working directory, else an absolute `file://` URI; reserved characters
/// percent-encoded.
fn artifact(name: &str, cx: &Context) -> Artifact {
    let name = name.replace('\\', "/");
    let rel = name.trim_start_matches("./");
    if rel.starts_with('/') {
        if let Some(inside) = under(Path::new(rel), cx.cwd.as_deref()) {
            return Artifact {
                uri: encode(&inside),
                uri_base_id: Some("%SRCROOT%"),
            };
        }
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

/// The key of `partialFingerprints`: v2 adds the field path to v1's policy, rule, resource
/// and file, and is the fingerprint baselines record (src/cli/baseline.rs).
const FINGERPRINT: &str = "kpolFinding/v2";

use crate::cli::baseline::{fingerprint, hash};

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kpol::diagnostic::Location as DiagLocation;
    use kpol::report::{FailureAction, RuleResponse, RuleType};
    use kpol::source::{LineCol, SourceFile};
    use serde_json::Value;

    use super::*;
    use crate::cli::check::{FileReport, Summary};

    fn policy(file: &str, embedded: bool) -> PolicyInfo {
        PolicyInfo {
            name: "p".to_owned(),
            namespace: None,
            title: Some("Disallow latest tag".to_owned()),
            description: Some("Pin images.".to_owned()),
            category: Some("Best Practices".to_owned()),
            severity: Some("High".to_owned()),
            background: true,
            file: file.to_owned(),
            line: 3,
            embedded,
        }
    }

    fn finding(file: &str, rule: &str, action: FailureAction) -> Finding {
        Finding {
            policy: "p".to_owned(),
            policy_index: 0,
            scored: true,
            exceptions: Vec::new(),
            rule: rule.to_owned(),
            status: Status::Fail,
            response: RuleResponse {
                rule: rule.to_owned(),
                rule_type: RuleType::Validation,
                status: Status::Fail,
                message: "bad".to_owned(),
                failure_action: action,
                path: None,
                unsupported: None,
                span: None,
                exceptions: Vec::new(),
                target: None,
            },
            resource: "Pod default/web".to_owned(),
            kind: "Pod".to_owned(),
            api_version: "v1".to_owned(),
            name: "web".to_owned(),
            namespace: "default".to_owned(),
            source: Some(Arc::new(SourceFile::new(file, String::new()))),
            start: Some(LineCol { line: 2, column: 3 }),
            end: None,
            defaults: Vec::new(),
            suppressed: None,
        }
    }

    fn report(
        policies: Vec<PolicyInfo>,
        findings: Vec<Finding>,
        diags: Vec<Diagnostic>,
    ) -> CheckReport {
        CheckReport {
            files: vec![FileReport {
                diagnostics: diags,
                findings,
                unlisted: Summary::default(),
            }],
            policies,
            ..CheckReport::empty()
        }
    }

    fn cx() -> Context {
        Context {
            cwd: Some(PathBuf::from("/work/repo")),
            blob: None,
            limit: GITHUB_RESULT_LIMIT,
        }
    }

    fn doc(report: &CheckReport, cx: &Context) -> Value {
        serde_json::to_value(log(report, cx)).unwrap()
    }

    #[test]
    fn severity_maps_into_githubs_bands() {
        let score = |s| security_severity(s).map(|v| v.parse::<f64>().unwrap());
        assert!(score("critical").unwrap() > 9.0);
        assert!((7.0..9.0).contains(&score("HIGH").unwrap()));
        assert!((4.0..7.0).contains(&score("medium").unwrap()));
        assert!((0.1..4.0).contains(&score(" low ").unwrap()));
        assert_eq!(security_severity("info"), None);
        assert_eq!(security_severity(""), None);
    }

    #[test]
    fn rules_carry_security_severity_tags_and_help() {
        let r = report(
            vec![policy("policies/p.yaml", false)],
            vec![finding("pod.yaml", "r", FailureAction::Enforce)],
            Vec::new(),
        );
        let d = doc(&r, &cx());
        let rule = &d["runs"][0]["tool"]["driver"]["rules"][0];
        assert_eq!(rule["properties"]["security-severity"], "8.0");
        assert_eq!(
            rule["properties"]["tags"],
            serde_json::json!(["security", "kyverno", "Best Practices"])
        );
        assert_eq!(rule["helpUri"], "file:///work/repo/policies/p.yaml#L3");
        let md = rule["help"]["markdown"].as_str().unwrap();
        assert!(
            md.starts_with("**Disallow latest tag**\n\nPin images."),
            "{md}"
        );
        assert!(
            md.contains("(file:///work/repo/policies/p.yaml#L3)"),
            "{md}"
        );
        let text = rule["help"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Disallow latest tag\n\nPin images."),
            "{text}"
        );
    }

    #[test]
    fn help_uri_is_the_github_page_on_actions_and_absent_for_embedded_policies() {
        let on_actions = Context {
            blob: Some("https://github.com/o/r/blob/abc".to_owned()),
            ..cx()
        };
        for file in [
            "policies/p.yaml",
            "./policies/p.yaml",
            "/work/repo/policies/p.yaml",
        ] {
            let r = report(
                vec![policy(file, false)],
                vec![finding("pod.yaml", "r", FailureAction::Enforce)],
                Vec::new(),
            );
            let d = doc(&r, &on_actions);
            assert_eq!(
                d["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"],
                "https://github.com/o/r/blob/abc/policies/p.yaml#L3",
                "{file}"
            );
        }
        let r = report(
            vec![policy("policies/p.yaml", true)],
            vec![finding("pod.yaml", "r", FailureAction::Enforce)],
            Vec::new(),
        );
        let rule = &doc(&r, &on_actions)["runs"][0]["tool"]["driver"]["rules"][0];
        assert!(rule.get("helpUri").is_none(), "{rule:#}");
        assert!(!rule["help"]["markdown"].as_str().unwrap().contains("]("));
    }

    #[test]
    fn audit_failures_are_warnings_enforce_failures_errors() {
        let r = report(
            vec![policy("p.yaml", false)],
            vec![
                finding("pod.yaml", "audit", FailureAction::Audit),
                finding("pod.yaml", "enforce", FailureAction::Enforce),
            ],
            Vec::new(),
        );
        let d = doc(&r, &cx());
        let run = &d["runs"][0];
        assert_eq!(run["results"][0]["level"], "warning");
        assert_eq!(run["results"][1]["level"], "error");
        let rules = &run["tool"]["driver"]["rules"];
        assert_eq!(rules[0]["defaultConfiguration"]["level"], "warning");
        assert_eq!(rules[1]["defaultConfiguration"]["level"], "error");
        // The same as the github format.
        for f in &r.files[0].findings {
            let mut out = Vec::new();
            super::super::Render::file(&super::super::github::Github, &r, &r.files[0], &mut out)
                .unwrap();
            let text = String::from_utf8(out).unwrap();
            let line = text.lines().find(|l| l.contains(&f.rule_id())).unwrap();
            assert!(line.starts_with(&format!("::{} ", super::super::ci_level(f).unwrap())));
        }
    }

    #[test]
    fn absolute_inputs_under_the_working_directory_are_relative() {
        let c = cx();
        let a = artifact("/work/repo/deploy/pod.yaml", &c);
        assert_eq!(a.uri, "deploy/pod.yaml");
        assert_eq!(a.uri_base_id, Some("%SRCROOT%"));
        let a = artifact("/work/other/pod.yaml", &c);
        assert_eq!(a.uri, "file:///work/other/pod.yaml");
        assert_eq!(a.uri_base_id, None);
        let a = artifact("/work/repo/../other/pod.yaml", &c);
        assert_eq!(a.uri_base_id, None);
        assert_eq!(artifact("./a b.yaml", &c).uri, "a%20b.yaml");
    }

    #[test]
    fn more_results_than_github_shows_add_a_warning() {
        let findings = (0..3)
            .map(|i| finding("pod.yaml", &format!("r{i}"), FailureAction::Enforce))
            .collect();
        let r = report(vec![policy("p.yaml", false)], findings, Vec::new());
        let notes = |limit| {
            let c = Context { limit, ..cx() };
            doc(&r, &c)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
                .as_array()
                .unwrap()
                .clone()
        };
        assert!(notes(3).is_empty());
        let over = notes(2);
        assert_eq!(over.len(), 1);
        assert_eq!(over[0]["level"], "warning");
        assert!(
            over[0]["message"]["text"]
                .as_str()
                .unwrap()
                .contains("3 results")
        );
        assert_eq!(GITHUB_RESULT_LIMIT, 5000);
    }

    #[test]
    fn input_and_policy_errors_are_results_of_their_own_rules() {
        let src = SourceFile::new("broken.yaml", "a: b: c\n");
        let diags = vec![
            Diagnostic::error(
                Code::Yaml,
                "invalid YAML",
                Some(DiagLocation::at(&src, kpol::source::Span::new(3, 4))),
            ),
            Diagnostic::error(
                Code::InvalidPolicy,
                "ClusterPolicy x: spec.rules: Required value",
                Some(DiagLocation::file("policies/x.yaml")),
            ),
            // Without a place, a notification only.
            Diagnostic::error(Code::Io, "nothing to check", None),
            Diagnostic::warning(
                Code::NotAResource,
                "no kind",
                Some(DiagLocation::file("x.yaml")),
            ),
        ];
        let r = report(Vec::new(), Vec::new(), diags);
        let d = doc(&r, &cx());
        let run = &d["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{results:#?}");
        assert_eq!(results[0]["ruleId"], INPUT_ERROR);
        assert_eq!(results[0]["level"], "error");
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
            1
        );
        assert_eq!(results[1]["ruleId"], INVALID_POLICY);
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[i]["id"], r["ruleId"]);
        }
        assert_eq!(
            run["invocations"][0]["toolExecutionNotifications"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
    }
}
