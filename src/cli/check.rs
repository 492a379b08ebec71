//! `kpol check`: every input file against the validate rules, in parallel, reported in input
//! order so that output is the same for any `-j`.

use rayon::prelude::*;

use kpol::diagnostic::{Code, Diagnostic, Location, Severity};
use kpol::engine::Engine;
use kpol::manifest::read_manifests;
use kpol::report::{RuleResponse, Status};
use kpol::request::Request;
use kpol::resource::Resource;
use kpol::source::{LineCol, Source, SourceFile};
use kpol::values::Values;
use kpol::yaml::Limits;
use std::sync::Arc;

use super::args::{CheckArgs, Format};
use super::discover::{Input, discover, exclude_set};
use super::exit;
use super::policies;
use super::render;

/// One rule result worth showing, with where it points.
pub struct Finding {
    pub policy: String,
    pub rule: String,
    /// After `--audit-warn`: an Audit failure becomes `Warn`.
    pub status: Status,
    pub response: RuleResponse,
    pub resource: String,
    pub kind: String,
    pub api_version: String,
    pub name: String,
    pub namespace: String,
    pub source: Option<Source>,
    pub start: Option<LineCol>,
    pub end: Option<LineCol>,
}

/// What one input produced.
pub struct FileReport {
    pub diagnostics: Vec<Diagnostic>,
    pub findings: Vec<Finding>,
}

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub error: usize,
    pub skip: usize,
}

impl Summary {
    fn add(&mut self, s: Status) {
        match s {
            Status::Pass => self.pass += 1,
            Status::Fail => self.fail += 1,
            Status::Warn => self.warn += 1,
            Status::Error => self.error += 1,
            Status::Skip => self.skip += 1,
        }
    }
}

/// Everything a renderer needs.
pub struct CheckReport {
    /// Problems not tied to one input (policies, discovery).
    pub diagnostics: Vec<Diagnostic>,
    pub files: Vec<FileReport>,
    pub summary: Summary,
    pub verbose: bool,
}

pub fn run(args: CheckArgs) -> u8 {
    let mut diagnostics = Vec::new();
    let exclude = match exclude_set(&args.exclude) {
        Ok(e) => e,
        Err(d) => {
            render::print_diagnostic_line(&d);
            return exit::INCOMPLETE;
        }
    };
    let (inputs, diags) = discover(&args.paths, &exclude);
    diagnostics.extend(diags);
    let set = policies::load(&args.policies);
    diagnostics.extend(set.diagnostics);
    let engine = Engine::new(set.policies);
    let max_bytes = args.max_file_size.saturating_mul(1024 * 1024);
    let request = match request_from_args(&args) {
        Ok((r, warnings)) => {
            for w in warnings {
                diagnostics.push(Diagnostic::warning(Code::InvalidTest, w, None));
            }
            r
        }
        Err(d) => {
            diagnostics.push(d);
            Request::default()
        }
    };

    let files: Vec<FileReport> = inputs
        .par_iter()
        .map(|input| check_input(&engine, &request, input, args.audit_warn, max_bytes))
        .collect();

    let mut summary = Summary::default();
    for f in &files {
        for finding in &f.findings {
            summary.add(finding.status);
        }
    }
    let incomplete = diagnostics
        .iter()
        .chain(files.iter().flat_map(|f| f.diagnostics.iter()))
        .any(|d| d.severity == Severity::Error);
    let report = CheckReport {
        diagnostics,
        files,
        summary,
        verbose: args.verbose,
    };
    let written = match args.format {
        Format::Human => render::human::write(&report),
        Format::Json => render::json::write(&report),
    };
    // A closed pipe (`kpol check … | head`) is the reader's choice, not a failure.
    if let Err(e) = written.or_else(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(e),
    }) {
        eprintln!("kpol: cannot write output: {e}");
        return exit::INCOMPLETE;
    }
    if incomplete {
        exit::INCOMPLETE
    } else if summary.fail > 0 || summary.error > 0 {
        exit::FINDINGS
    } else {
        exit::CLEAN
    }
}

/// The simulated request: values (`--values-file` or `--set`) and the user (`--userinfo`).
/// `request.operation` comes from the global values (per-resource operations of a values file
/// apply in `kpol test`, where each policy is evaluated on its own).
fn request_from_args(args: &CheckArgs) -> Result<(Request, Vec<String>), Diagnostic> {
    let mut warnings = Vec::new();
    let as_diag = |e: super::test::LoadError| {
        Diagnostic::error(
            Code::InvalidTest,
            format!("{}: {}", e.position, e.message),
            Some(Location::file(e.position.clone())),
        )
    };
    let mut values = match &args.values_file {
        Some(p) => {
            let (v, w) = super::test::read_values_file(p).map_err(as_diag)?;
            warnings.extend(w);
            v
        }
        None => Values::default(),
    };
    values.global.extend(set_values(&args.set));
    let user_info = match &args.userinfo {
        Some(p) => {
            let (u, w) = super::test::read_user_info(p).map_err(as_diag)?;
            warnings.extend(w);
            Some(u)
        }
        None => None,
    };
    let operation = values
        .operation("", "")
        .map_err(|e| Diagnostic::error(Code::InvalidTest, format!("values: {e}"), None))?;
    Ok((
        Request {
            operation,
            namespace_labels: values.namespace_labels.clone(),
            user_info,
            values: Arc::new(values),
        },
        warnings,
    ))
}

/// `--set k=v,…` as `kyverno apply` reads it (cli-compat.md §5.3): items without exactly one
/// `=`, with an empty side, naming `request.object.`, or repeating a key are ignored; values
/// are strings.
fn set_values(items: &[String]) -> Vec<(String, kpol::yaml::Node)> {
    let mut out: Vec<(String, kpol::yaml::Node)> = Vec::new();
    for item in items {
        let mut parts = item.split('=');
        let (Some(k), Some(v), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() || k.contains("request.object.") {
            continue;
        }
        if out.iter().any(|(key, _)| key == k) {
            continue;
        }
        out.push((
            k.to_owned(),
            kpol::yaml::Node::synthetic(kpol::yaml::Value::Str(v.to_owned())),
        ));
    }
    out
}

fn check_input(
    engine: &Engine,
    request: &Request,
    input: &Input,
    audit_warn: bool,
    max_bytes: u64,
) -> FileReport {
    let text = match policies::read(input, max_bytes) {
        Ok(t) => t,
        Err(d) => {
            return FileReport {
                diagnostics: vec![d],
                findings: Vec::new(),
            };
        }
    };
    let source: Source = Arc::new(SourceFile::new(input.display(), text));
    let manifests = read_manifests(&source, Limits::default());
    let mut findings = Vec::new();
    for resource in &manifests.resources {
        for pr in engine.validate(resource, request) {
            let policy = &engine.policies()[pr.policy];
            for resp in pr.rules {
                findings.push(finding(&policy.key(), resource, resp, audit_warn));
            }
        }
    }
    FileReport {
        diagnostics: manifests.diagnostics,
        findings,
    }
}

fn finding(policy: &str, resource: &Resource, response: RuleResponse, audit_warn: bool) -> Finding {
    let status = match response.status {
        Status::Fail
            if audit_warn && response.failure_action == kpol::policy::FailureAction::Audit =>
        {
            Status::Warn
        }
        s => s,
    };
    let span = match &response.path {
        Some(path) => resource.root.locate(path).0,
        None => resource.root.span,
    };
    let (start, end) = match &resource.source {
        Some(src) if !span.is_empty() || span.start > 0 => {
            (Some(src.line_col(span.start)), Some(src.line_col(span.end)))
        }
        Some(src) => (Some(src.line_col(resource.root.span.start)), None),
        None => (None, None),
    };
    Finding {
        policy: policy.to_owned(),
        rule: response.rule.clone(),
        status,
        resource: resource.display_name(),
        kind: resource.kind.clone(),
        api_version: resource.api_version.clone(),
        name: resource.name.clone(),
        namespace: resource.namespace.clone(),
        source: resource.source.clone(),
        start,
        end,
        response,
    }
}
