//! `kpol generate`: what the generate rules of the given policies, and their
//! GeneratingPolicies, would create for each input manifest (crate::generate, crate::gpol).
//! Every input manifest is also a clone source and counts as already present in the cluster:
//! GeneratingPolicies read it with `resource.Get` / `resource.List`.
//!
//! PolicyExceptions (`-e`, or found among the policies) skip the rules they cover: nothing is
//! generated for them.
//!
//! Output: one YAML document per generated resource on stdout, each after a comment naming
//! the policy, rule and trigger (with its file:line); or `-o DIR`, one file per resource at
//! `DIR/<namespace or _cluster>/<kind>[.<group>]/<name>.yaml`; or `--format json`. Problems
//! (a clone source not given, a substitution error, a rule error) go to stderr (JSON: the
//! `findings` list) and exit 1; unreadable inputs and invalid policies exit 2.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::engine::Engine;
use kpol::generate::SourcePool;
use kpol::manifest::read_manifests;
use kpol::report::{RuleResponse, RuleType, Status};
use kpol::request::Request;
use kpol::resource::Resource;
use kpol::source::{Source, SourceFile};

use super::args::{GenerateArgs, GenerateFormat};
use super::exit;
use super::policies;
use super::render::generate as render;
use super::render::print_diagnostic_line;
use super::session::{Applying, Spec, open_applying};

/// The trigger of a generated resource or finding.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Trigger {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) file: String,
    pub(crate) line: u32,
}

#[derive(Debug, Serialize)]
pub(crate) struct Item {
    pub(crate) policy: String,
    pub(crate) rule: String,
    pub(crate) trigger: Trigger,
    pub(crate) synchronize: bool,
    pub(crate) mode: &'static str,
    pub(crate) resource: serde_json::Value,
}

#[derive(Debug, Serialize)]
pub(crate) struct Finding {
    pub(crate) policy: String,
    pub(crate) rule: String,
    pub(crate) trigger: Trigger,
    pub(crate) message: String,
}

#[derive(Default, Serialize)]
pub(crate) struct Output {
    pub(crate) generated: Vec<Item>,
    pub(crate) findings: Vec<Finding>,
    /// The findings as `kpol check`'s report model, each at its trigger, for the lines on
    /// standard error (src/cli/command_report.rs).
    #[serde(skip)]
    pub(crate) reported: Vec<super::check::Finding>,
}

pub fn run(args: GenerateArgs) -> u8 {
    let spec = super::config::locate(args.config.as_deref(), args.no_config).map(|config| {
        Spec::from_flags(
            "generate",
            config,
            args.paths.clone(),
            args.policies.clone(),
            args.exceptions.clone(),
            args.exclude.clone(),
            args.request.clone(),
            args.max_file_size,
        )
    });
    let Applying {
        inputs,
        mut diagnostics,
        engine,
        request,
        max_bytes,
    } = match open_applying(spec, |engine| {
        if !engine.policies().iter().any(kpol::generate::has_generate) {
            eprintln!("warning: none of the given policies has a generate rule");
        }
    }) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let read: Vec<(Vec<Resource>, Vec<Diagnostic>)> = inputs
        .par_iter()
        .map(|input| match policies::read(input, max_bytes) {
            Ok(text) => {
                let source: Source = Arc::new(SourceFile::new(input.display(), text));
                let m = read_manifests(&source, super::discover::input_limits());
                (m.resources, m.diagnostics)
            }
            Err(d) => (Vec::new(), vec![d]),
        })
        .collect();
    let mut resources = Vec::new();
    for (rs, ds) in read {
        resources.extend(rs);
        diagnostics.extend(ds);
    }
    let pool = SourcePool::new(resources.iter().collect());
    let cluster = cluster_data(&resources);
    let per_trigger: Vec<Output> = resources
        .par_iter()
        .map(|r| {
            kpol::cel::context::with_context(cluster.clone(), || {
                generate_for(&engine, r, &request, &pool)
            })
        })
        .collect();
    let mut out = Output::default();
    for o in per_trigger {
        out.generated.extend(o.generated);
        out.findings.extend(o.findings);
        out.reported.extend(o.reported);
    }
    for d in &diagnostics {
        print_diagnostic_line(d);
    }
    let written = match (&args.output_dir, args.format) {
        (Some(dir), _) => write_dir(
            dir,
            &out,
            super::write::Links {
                follow: args.follow_symlinks,
            },
        ),
        (None, GenerateFormat::Json) => render::json(&out).and_then(|t| write_stdout(&t)),
        (None, GenerateFormat::Yaml) => write_stdout(&render::yaml(&out)),
    };
    if let Err(e) = written {
        eprintln!("kpol: cannot write output: {e}");
        return exit::INCOMPLETE;
    }
    if args.format != GenerateFormat::Json || args.output_dir.is_some() {
        eprint!(
            "{}",
            super::command_report::stderr_lines(std::mem::take(&mut out.reported))
        );
    }
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        exit::INCOMPLETE
    } else if !out.findings.is_empty() {
        exit::FINDINGS
    } else {
        exit::CLEAN
    }
}

/// The inputs as the cluster a GeneratingPolicy's `resource.Get` / `resource.List` read (the
/// clone sources of classic rules come from the same inputs, [`SourcePool`]).
fn cluster_data(resources: &[Resource]) -> Option<Arc<kpol::cel::context::CelContext>> {
    let mut cx = kpol::cel::context::CelContext::default();
    for r in resources {
        // Every input has a kind (it was read as a resource), so none is refused.
        let _ = cx.add_resource(&r.root);
    }
    Some(Arc::new(cx))
}

/// The generate phase for one trigger, flattened into items and findings.
fn generate_for(
    engine: &Engine,
    resource: &Resource,
    request: &Request,
    pool: &SourcePool<'_>,
) -> Output {
    let trigger = Trigger {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
        namespace: resource.namespace.clone(),
        name: resource.name.clone(),
        file: resource
            .source
            .as_ref()
            .map_or_else(String::new, |s| s.name().to_owned()),
        line: resource
            .source
            .as_ref()
            .map_or(0, |s| s.line_col(resource.root.span.start).line),
    };
    let mut out = Output::default();
    for pr in engine.generate(resource, request, pool) {
        let Some(policy) = engine.policies().get(pr.policy) else {
            continue;
        };
        for g in pr.rules {
            let mut messages = Vec::new();
            if g.status == Status::Error {
                messages.push(g.message.clone());
            }
            for m in &g.missing {
                messages.push(format!(
                    "clone source not provided: {}; add a manifest for it to the inputs",
                    m.what
                ));
            }
            messages.extend(g.problems.iter().cloned());
            for message in messages {
                // A CEL policy's result has no rule name of its own, as in `kpol check`.
                let rule = if policy.rules().is_empty() {
                    ""
                } else {
                    &g.rule
                };
                let mut response = RuleResponse::new(rule, Status::Error, message.clone());
                response.rule_type = RuleType::Generation;
                out.reported.push(super::check::finding(
                    policy, pr.policy, resource, response, false,
                ));
                out.findings.push(Finding {
                    policy: policy.key(),
                    rule: g.rule.clone(),
                    trigger: trigger.clone(),
                    message,
                });
            }
            for r in g.generated {
                out.generated.push(Item {
                    policy: policy.key(),
                    rule: g.rule.clone(),
                    trigger: trigger.clone(),
                    synchronize: r.synchronize,
                    mode: r.mode,
                    resource: r.resource,
                });
            }
        }
    }
    out
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// A path segment from resource data: characters outside `[A-Za-z0-9._-]` become `_`, and
/// `.`/`..`/empty are never produced.
fn segment(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.chars().all(|c| c == '.') {
        format!("_{clean}")
    } else {
        clean
    }
}

/// `DIR/<namespace or _cluster>/<kind>[.<group>]/<name>.yaml`; the first resource of an
/// identity wins, a later one is reported.
fn write_dir(dir: &Path, out: &Output, links: super::write::Links) -> std::io::Result<()> {
    let mut seen: Vec<std::path::PathBuf> = Vec::new();
    for item in &out.generated {
        let r = &item.resource;
        let s = |p: &str| r.pointer(p).and_then(|v| v.as_str()).unwrap_or("");
        let ns = match s("/metadata/namespace") {
            "" => "_cluster".to_owned(),
            n => segment(n),
        };
        let kind = s("/kind").to_ascii_lowercase();
        let kind = match s("/apiVersion").split_once('/') {
            Some((group, _)) => format!("{kind}.{group}"),
            None => kind,
        };
        let path = dir
            .join(ns)
            .join(segment(&kind))
            .join(format!("{}.yaml", segment(s("/metadata/name"))));
        if seen.contains(&path) {
            eprintln!(
                "warning: {} generated again by {}; kept the first",
                path.display(),
                render::header(item).trim_start_matches("# ").trim_end()
            );
            continue;
        }
        // A link planted inside DIR is not written through (unless --follow-symlinks).
        let text = render::header(item) + &render::resource_yaml(r);
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        super::write::confined_path(dir, rel, links)
            .and_then(|p| super::write::replace(&p, text.as_bytes(), None, links))
            .map_err(|d| std::io::Error::other(d.message))?;
        println!("{}", path.display());
        seen.push(path);
    }
    Ok(())
}
