//! `kpol explain`: one finding told in terms of the policy's own YAML (docs/EXPLAIN.md). The
//! finding is chosen by `FILE:LINE` (as `kpol check` shows it) or by its fingerprint
//! (`--finding ID`, the `fingerprint` of `kpol check --format json`); the resources are
//! evaluated as `kpol check` evaluates them (same session: `-p`, `.kpol.yaml`, mutate rules
//! first), then the failing rule is evaluated once more, piece by piece ([`body`]).
//!
//! `--why-pass` lists, for the resource at `FILE:LINE`, every policy's rules and why each
//! passed or was left out ([`why_pass`]); `--exception` prints a PolicyException that exempts
//! the resource from the finding's rule ([`exception`]).
//!
//! Exit codes: 0 something was explained; 1 no finding (or resource) at that place or with
//! that fingerprint; 2 the run could not be set up (bad target, unreadable file, no policy).

mod body;
mod exception;
mod why_pass;

use std::path::PathBuf;
use std::sync::Arc;

use kpol::diagnostic::Severity;
use kpol::engine::Engine;
use kpol::manifest::read_manifests;
use kpol::report::Status;
use kpol::request::Request;
use kpol::resource::Resource;
use kpol::source::{Source, SourceFile};

use super::args::RequestArgs;
use super::check::Finding;
use super::config;
use super::discover::{Exclude, Input, discover};
use super::exit;
use super::session::{Fallback, Session, Spec};

const EXPLAIN_HELP: &str = "Exit codes: 0 a finding (or, with --why-pass, a resource) was \
                            explained; 1 none at FILE:LINE or with that fingerprint; 2 the run \
                            could not be set up (bad FILE:LINE, unreadable input, no policy). \
                            docs/EXPLAIN.md shows the output.";

/// `kpol explain`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXPLAIN_HELP)]
pub struct ExplainArgs {
    /// `FILE:LINE` of a finding, as `kpol check` prints it; with `--finding`, the files or
    /// directories to look for it in instead (default: `paths` of .kpol.yaml, else `.`).
    #[arg(value_name = "FILE:LINE|PATH")]
    pub targets: Vec<String>,

    /// The finding with this fingerprint (`fingerprint` in `kpol check --format json`, SARIF's
    /// `partialFingerprints`).
    #[arg(long, value_name = "ID")]
    pub finding: Option<String>,

    /// For the resource at FILE:LINE: every rule that matched it and its result, and why each
    /// other rule was left out (kind not selected, match, exclude, preconditions).
    #[arg(long, conflicts_with = "finding")]
    pub why_pass: bool,

    /// Print a PolicyException (kyverno.io/v2; policies.kyverno.io/v1 for a ValidatingPolicy)
    /// that exempts this resource from the finding's rule, instead of the explanation.
    #[arg(long, conflicts_with = "why_pass")]
    pub exception: bool,

    /// Policy file or directory (repeatable), as `kpol check -p`. Default: the `policies` of
    /// .kpol.yaml, else kpol's embedded default policies.
    #[arg(short, long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,

    /// PolicyException file to apply (repeatable), as `kpol check -e`.
    #[arg(short = 'e', long = "exceptions", value_name = "PATH")]
    pub exceptions: Vec<PathBuf>,

    /// Choose policies as a background scan does (as `kpol check --background`).
    #[arg(long)]
    pub background: bool,

    /// Use this config file instead of looking for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,

    #[command(flatten)]
    pub request: RequestArgs,
}

/// Where to look: a place in one file, or a fingerprint in the inputs.
enum Target {
    Line(PathBuf, u32),
    Fingerprint(String),
}

pub fn run(args: ExplainArgs) -> u8 {
    match explain(args) {
        Ok((text, code)) => {
            use std::io::Write as _;
            // A closed pipe is the reader's choice.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            code
        }
        Err(message) => {
            eprintln!("kpol explain: {message}");
            exit::INCOMPLETE
        }
    }
}

/// One evaluated resource: the resource the validate rules saw (after mutation) and every
/// result on it.
pub struct Evaluated {
    pub resource: Resource,
    pub findings: Vec<Finding>,
}

fn explain(args: ExplainArgs) -> Result<(String, u8), String> {
    let target = match &args.finding {
        Some(id) => Target::Fingerprint(id.trim().to_owned()),
        None => match args.targets.as_slice() {
            [one] => parse_line_target(one)?,
            [] => return Err("name a finding: FILE:LINE or --finding ID".to_owned()),
            _ => return Err("one FILE:LINE at a time (or --finding ID with paths)".to_owned()),
        },
    };
    let config =
        config::locate(args.config.as_deref(), args.no_config).map_err(|d| d.message.clone())?;
    let or = |flag: Vec<PathBuf>, conf: Vec<PathBuf>| if flag.is_empty() { conf } else { flag };
    let (paths, exclude, exclude_base) = match &target {
        Target::Line(file, _) => (vec![file.clone()], Vec::new(), None),
        Target::Fingerprint(_) => {
            let mut paths: Vec<PathBuf> = args.targets.iter().map(PathBuf::from).collect();
            paths = or(paths, config.paths.clone());
            if paths.is_empty() {
                paths.push(PathBuf::from("."));
            }
            let base = (!config.exclude.is_empty()).then(|| config.base.clone());
            (paths, config.exclude.clone(), base)
        }
    };
    let spec = Spec {
        command: "explain",
        paths,
        policies: or(args.policies.clone(), config.policies),
        exceptions: or(args.exceptions.clone(), config.exceptions),
        exclude,
        exclude_base,
        values: args.request.values_file.clone().or(config.values),
        set: args.request.set.clone(),
        userinfo: args.request.userinfo.clone(),
        cluster_resources: args.request.cluster_resources.clone(),
        max_bytes: super::policies::DEFAULT_MAX_FILE_MIB * 1024 * 1024,
        fallback: Fallback::Embedded,
    };
    let background = args.background;
    let session = Session::new(spec, |p, notes| super::check::runs(p, background, notes))
        .map_err(|d| d.message.clone())?;
    let problems: Vec<String> = session
        .discovery
        .iter()
        .chain(&session.policy_diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .map(render_problem)
        .collect();
    // A policy that does not load is left out (as in `kpol check`); the others still explain.
    for p in &problems {
        eprintln!("kpol explain: {p}");
    }
    if session.engine.policies().is_empty() {
        return Err("no policy to explain with".to_owned());
    }
    let (mut request, _warnings) = session.request.map_err(|d| d.message.clone())?;
    if session
        .engine
        .policies()
        .iter()
        .any(|p| p.source.text().contains("namespaceObject"))
    {
        let all = discover(&session_paths(&session.inputs), &Exclude::none()).0;
        request.namespaces = Arc::new(super::namespaces::collect(
            &all,
            session.max_bytes,
            &request.values,
        ));
    }
    let engine = &session.engine;
    let cel = super::check::cel_data(&request, None);
    kpol::cel::context::with_context(cel, || {
        let cx = Cx {
            engine,
            request: &request,
        };
        match &target {
            Target::Line(file, line) => {
                // `-` is standard input, as in `kpol check -`.
                let input = if file.as_os_str() == "-" {
                    Input::Stdin
                } else {
                    Input::File(file.clone())
                };
                let evaluated = cx.evaluate(&input, session.max_bytes)?;
                Ok(cx.at_line(&evaluated, &input.display(), *line, &args))
            }
            Target::Fingerprint(id) => {
                for input in &session.inputs {
                    let evaluated = cx.evaluate(input, session.max_bytes)?;
                    for e in &evaluated {
                        if let Some(f) = e
                            .findings
                            .iter()
                            .find(|f| super::baseline::fingerprint(f) == *id)
                        {
                            return Ok((cx.one(e, f, args.exception), exit::CLEAN));
                        }
                    }
                }
                Ok((
                    format!("no finding with fingerprint {id}\n"),
                    exit::FINDINGS,
                ))
            }
        }
    })
}

/// The inputs' paths, to collect the Namespaces among them (as `kpol check` does).
fn session_paths(inputs: &[Input]) -> Vec<PathBuf> {
    inputs
        .iter()
        .filter_map(|i| match i {
            Input::File(p) => Some(p.clone()),
            Input::Stdin => None,
        })
        .collect()
}

fn render_problem(d: &kpol::diagnostic::Diagnostic) -> String {
    match &d.location {
        Some(l) => match l.start {
            Some(at) => format!("{}:{}:{}: {}", l.file, at.line, at.column, d.message),
            None => format!("{}: {}", l.file, d.message),
        },
        None => d.message.clone(),
    }
}

/// `FILE:LINE` (the last `:` splits; `FILE:LINE:COL` is accepted and the column ignored).
fn parse_line_target(s: &str) -> Result<Target, String> {
    let bad = || format!("{s}: expected FILE:LINE (as kpol check prints it)");
    let mut parts: Vec<&str> = s.rsplitn(3, ':').collect();
    parts.reverse();
    let (file, line) = match parts.as_slice() {
        [file, line, col] if col.parse::<u32>().is_ok() && line.parse::<u32>().is_ok() => {
            (*file, *line)
        }
        [a, b, line] => {
            // A file name with a colon in it.
            return match line.parse::<u32>() {
                Ok(n) if n > 0 => Ok(Target::Line(PathBuf::from(format!("{a}:{b}")), n)),
                _ => Err(bad()),
            };
        }
        [file, line] => (*file, *line),
        _ => return Err(bad()),
    };
    match line.parse::<u32>() {
        Ok(n) if n > 0 && !file.is_empty() => Ok(Target::Line(PathBuf::from(file), n)),
        _ => Err(bad()),
    }
}

/// What the explanation needs of the run.
pub struct Cx<'a> {
    pub engine: &'a Engine,
    pub request: &'a Request,
}

impl Cx<'_> {
    /// Every resource of `input`, mutated as `kpol check` mutates it, with all its validate
    /// results (passes and skips too).
    fn evaluate(&self, input: &Input, max_bytes: u64) -> Result<Vec<Evaluated>, String> {
        let text = super::policies::read(input, max_bytes).map_err(|d| render_problem(&d))?;
        let source: Source = Arc::new(SourceFile::new(input.display(), text));
        let manifests = read_manifests(&source, super::discover::input_limits());
        if let Some(d) = manifests
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
        {
            return Err(render_problem(d));
        }
        Ok(manifests
            .resources
            .iter()
            .map(|resource| {
                let mutated = self
                    .engine
                    .mutated(resource, self.request)
                    .unwrap_or_else(|| resource.clone());
                let mut findings = Vec::new();
                for pr in self.engine.validate(&mutated, self.request) {
                    let policy = &self.engine.policies()[pr.policy];
                    for resp in pr.rules {
                        findings.push(super::check::finding(
                            policy, pr.policy, &mutated, resp, false,
                        ));
                    }
                }
                Evaluated {
                    resource: mutated,
                    findings,
                }
            })
            .collect())
    }

    /// The findings at `line` of `file` (those starting there; else the narrowest that
    /// covers it), or with `--why-pass` the resource there.
    fn at_line(
        &self,
        evaluated: &[Evaluated],
        file: &str,
        line: u32,
        args: &ExplainArgs,
    ) -> (String, u8) {
        let Some(e) = evaluated.iter().find(|e| covers(&e.resource, line)) else {
            return (format!("no resource at {file}:{line}\n"), exit::FINDINGS);
        };
        if args.why_pass {
            return (why_pass::render(self, e), exit::CLEAN);
        }
        let shown = |f: &&Finding| matches!(f.status, Status::Fail | Status::Warn | Status::Error);
        let mut chosen: Vec<&Finding> = e
            .findings
            .iter()
            .filter(shown)
            .filter(|f| f.start.is_some_and(|s| s.line == line))
            .collect();
        if chosen.is_empty() {
            let spans = |f: &&Finding| match (f.start, f.end) {
                (Some(s), Some(end)) if s.line <= line && line <= end.line => {
                    Some(end.line - s.line)
                }
                _ => None,
            };
            let narrowest = e
                .findings
                .iter()
                .filter(shown)
                .filter_map(|f| spans(&f))
                .min();
            chosen = e
                .findings
                .iter()
                .filter(shown)
                .filter(|f| narrowest.is_some() && spans(f) == narrowest)
                .collect();
        }
        if chosen.is_empty() {
            return (
                format!(
                    "no failing finding at {file}:{line}: {} passes every rule there \
                     (--why-pass shows which rules matched)\n",
                    e.resource.display_name()
                ),
                exit::FINDINGS,
            );
        }
        let text = chosen
            .iter()
            .map(|f| self.one(e, f, args.exception))
            .collect::<Vec<_>>()
            .join("\n");
        (text, exit::CLEAN)
    }

    /// One finding: its explanation, or with `exception` the PolicyException for it.
    fn one(&self, e: &Evaluated, f: &Finding, exception: bool) -> String {
        let policy = &self.engine.policies()[f.policy_index];
        if exception {
            exception::render(policy, f)
        } else {
            body::render(self, policy, &e.resource, f)
        }
    }
}

/// Whether the resource's document spans `line`.
fn covers(resource: &Resource, line: u32) -> bool {
    let Some(src) = &resource.source else {
        return false;
    };
    let span = resource.root.span;
    let start = src.line_col(span.start).line;
    let end = src
        .line_col(span.end.saturating_sub(1).max(span.start))
        .line;
    start <= line && line <= end
}

/// `file:line:col` of a span in a source (the policy's or the resource's).
pub fn place(source: &Source, span: kpol::source::Span) -> String {
    let at = source.line_col(span.start);
    format!("{}:{}:{}", source.name(), at.line, at.column)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    #[test]
    fn line_targets_take_the_last_colon() {
        let line = |s: &str| match parse_line_target(s) {
            Ok(Target::Line(f, n)) => (f.display().to_string(), n),
            Ok(Target::Fingerprint(_)) => panic!("not a line"),
            Err(e) => (format!("error: {e}"), 0),
        };
        assert_eq!(line("a/b.yaml:12"), ("a/b.yaml".to_owned(), 12));
        assert_eq!(line("a/b.yaml:12:7"), ("a/b.yaml".to_owned(), 12));
        assert_eq!(line("c:d.yaml:3"), ("c:d.yaml".to_owned(), 3));
        assert_eq!(line("b.yaml").1, 0);
        assert_eq!(line("b.yaml:0").1, 0);
        assert_eq!(line("b.yaml:x").1, 0);
    }
}
