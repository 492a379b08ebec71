//! `kpol check`: every input file against the validate rules, in parallel, reported in input
//! order so that output is the same for any `-j`.

use rayon::prelude::*;

use kpol::cel::context::CelContext;
use kpol::diagnostic::{Code, Diagnostic, Location, Severity};
use kpol::engine::{Engine, phases};
use kpol::manifest::read_manifests;
use kpol::report::{RuleResponse, Status};
use kpol::request::Request;
use kpol::request::values::Values;
use kpol::resource::Resource;
use kpol::source::{LineCol, Source, SourceFile};
use kpol::vpol::authz::{self, AuthzMode};
use std::io::Write as _;
use std::sync::Arc;

use super::args::CheckArgs;
use super::config;
use super::discover::{Exclude, Input, discover};
use super::exit;
use super::ordered;
use super::policies;
use super::render;
use super::session::{Fallback, Session, Spec};

/// One rule result worth showing, with where it points.
pub struct Finding {
    pub policy: String,
    /// Index into [`CheckReport::policies`].
    pub policy_index: usize,
    /// False for a policy annotated `policies.kyverno.io/scored: "false"` (its failures are
    /// warnings).
    pub scored: bool,
    /// Names of the PolicyExceptions that turned this result into a skip.
    pub exceptions: Vec<String>,
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
    /// `--apiserver-defaults`: the defaults that changed this result.
    pub defaults: Vec<String>,
    /// The inline suppression that turned this result into a skip (src/cli/suppressions.rs).
    pub suppressed: Option<super::suppressions::Suppressed>,
}

impl Finding {
    /// `policy/rule`, or the policy name alone for a rule without a name (a
    /// ValidatingPolicy's result): what the headline and titles show.
    pub fn rule_id(&self) -> String {
        if self.rule.is_empty() {
            self.policy.clone()
        } else {
            format!("{}/{}", self.policy, self.rule)
        }
    }
}

/// What one input produced.
pub struct FileReport {
    pub diagnostics: Vec<Diagnostic>,
    pub findings: Vec<Finding>,
    /// Passing and skipped results not in `findings`, counted only (formats that do not list
    /// them, `Render::lists_passing`).
    pub unlisted: Summary,
}

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub error: usize,
    pub skip: usize,
    /// Inputs that could not be checked (read, parsed, or empty standard input; an error of the input or of
    /// finding it). Not rule results: `error` counts only those (docs/OUTPUT.md).
    #[serde(rename = "inputErrors")]
    pub input_errors: usize,
    /// Errors loading the policies and exceptions (an invalid policy, an unreadable `-p`).
    #[serde(rename = "policyErrors")]
    pub policy_errors: usize,
    /// The run's other errors: settings, values, `--old`, nothing to check.
    #[serde(rename = "otherErrors")]
    pub other_errors: usize,
    /// Of `skip`: the results an inline suppression turned into skips.
    #[serde(skip_serializing_if = "is_zero")]
    pub suppressed: usize,
    /// `--baseline`: the failures, warnings and errors the baseline records (not in
    /// `fail`, `warn` or `error`).
    #[serde(skip_serializing_if = "is_zero")]
    pub baselined: usize,
    /// `--baseline-strict`: recorded findings that are gone.
    #[serde(rename = "baselineStale", skip_serializing_if = "is_zero")]
    pub baseline_stale: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Kyverno's summary line, then (when there were any) the problems that are not rule
    /// results: `pass: 0, …, skip: 0; 2 inputs could not be checked, 1 policy error`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "pass: {}, fail: {}, warn: {}, error: {}, skip: {}",
            self.pass, self.fail, self.warn, self.error, self.skip
        );
        if self.suppressed > 0 {
            line.push_str(&format!(" ({} suppressed)", self.suppressed));
        }
        if self.baselined > 0 {
            line.push_str(&format!("; baselined: {}", self.baselined));
        }
        if self.baseline_stale > 0 {
            line.push_str(&format!(
                ", gone from the baseline: {}",
                self.baseline_stale
            ));
        }
        let problems = self.problems();
        if !problems.is_empty() {
            line.push_str("; ");
            line.push_str(&problems.join(", "));
        }
        line
    }

    /// One phrase per class of problem that is not a rule result, for those that occurred.
    pub fn problems(&self) -> Vec<String> {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let mut out = Vec::new();
        if self.input_errors > 0 {
            out.push(plural(
                self.input_errors,
                "input could not be checked",
                "inputs could not be checked",
            ));
        }
        if self.policy_errors > 0 {
            out.push(plural(self.policy_errors, "policy error", "policy errors"));
        }
        if self.other_errors > 0 {
            out.push(plural(self.other_errors, "other error", "other errors"));
        }
        out
    }
}

/// What a worker hands back for one input: the report, or its rendered text.
enum Checked {
    File(FileReport),
    Text(std::io::Result<render::cap::Parts>),
}

impl Summary {
    pub(super) fn merge(&mut self, other: Summary) {
        self.pass += other.pass;
        self.fail += other.fail;
        self.warn += other.warn;
        self.error += other.error;
        self.skip += other.skip;
        self.suppressed += other.suppressed;
        self.baselined += other.baselined;
    }

    pub(super) fn add(&mut self, s: Status) {
        match s {
            Status::Pass => self.pass += 1,
            Status::Fail => self.fail += 1,
            Status::Warn => self.warn += 1,
            Status::Error => self.error += 1,
            Status::Skip => self.skip += 1,
        }
    }
}

/// What renderers show of a policy (reports group by it, SARIF describes rules with it).
pub struct PolicyInfo {
    pub name: String,
    /// The namespace of a namespaced Policy; `None` for a ClusterPolicy.
    pub namespace: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    pub severity: Option<String>,
    pub background: bool,
    /// The file the policy came from (for an embedded default, its name in kpol's tree).
    pub file: String,
    /// The line of `file` where the policy document starts.
    pub line: u32,
    /// One of kpol's embedded default policies (no `-p`): `file` is not on disk.
    pub embedded: bool,
}

/// Everything a renderer needs.
pub struct CheckReport {
    /// Problems not tied to one input (policies, discovery).
    pub diagnostics: Vec<Diagnostic>,
    pub files: Vec<FileReport>,
    pub policies: Vec<PolicyInfo>,
    pub summary: Summary,
    pub verbose: bool,
    /// An error diagnostic made the run incomplete (exit 2).
    pub incomplete: bool,
    /// Seconds since the epoch stamped on policy reports (`SOURCE_DATE_EPOCH` when set).
    pub timestamp: u64,
    /// `-t`: the failures, warnings and errors of each policy and of each file, for the
    /// closing tables.
    pub table: Option<(Tally, Tally)>,
    /// `--shard I/N`: the part of the inputs this run checked.
    pub shard: Option<super::args::Shard>,
}

impl CheckReport {
    /// A report with nothing in it: no policies, inputs or problems.
    pub fn empty() -> Self {
        CheckReport {
            diagnostics: Vec::new(),
            files: Vec::new(),
            policies: Vec::new(),
            summary: Summary::default(),
            verbose: false,
            incomplete: false,
            timestamp: 0,
            table: None,
            shard: None,
        }
    }
}

/// Per policy name (or file): [fail, warn, error] results.
pub type Tally = std::collections::BTreeMap<String, [usize; 3]>;

fn tally(findings: &[Finding]) -> Tally {
    let mut t = Tally::new();
    for f in findings {
        let i = match f.status {
            Status::Fail => 0,
            Status::Warn => 1,
            Status::Error => 2,
            Status::Pass | Status::Skip => continue,
        };
        if let Some(n) = t.entry(f.policy.clone()).or_default().get_mut(i) {
            *n += 1;
        }
    }
    t
}

pub fn run(args: CheckArgs) -> u8 {
    let args = args.kyverno_spellings();
    let table = args.table;
    let shard = args.shard;
    let color_when = if args.remove_color {
        super::args::ColorWhen::Never
    } else {
        args.color
    };
    let settings = match config::locate(args.config.as_deref(), args.no_config)
        .and_then(|config| config::settings(args, config))
    {
        Ok(s) => s,
        Err(d) => {
            render::print_diagnostic_line(&d);
            return exit::INCOMPLETE;
        }
    };
    let background = settings.background;
    let session = match Session::new(spec(&settings), |p, notes| runs(p, background, notes)) {
        Ok(s) => s,
        Err(d) => {
            render::print_diagnostic_line(&d);
            return exit::INCOMPLETE;
        }
    };
    let mut diagnostics = settings.diagnostics.clone();
    let Session {
        loaded,
        inputs,
        discovery,
        policy_diagnostics,
        engine,
        request,
        max_bytes,
        ..
    } = session;
    // perf: start-up (docs/PERFORMANCE.md): the compiled policies live until the process
    // exits, which frees them at once; dropping them one by one cost ~5 % of a one-file run
    // with the library. Nothing of the engine's is written or flushed on drop.
    let engine = std::mem::ManuallyDrop::new(engine);
    let is_error = |d: &&Diagnostic| d.severity == Severity::Error;
    let discovery_errors = discovery.iter().filter(is_error).count();
    let policy_errors = policy_diagnostics.iter().filter(is_error).count();
    let failed = discovery_errors > 0;
    diagnostics.extend(discovery);
    let no_payloads = settings.json_payloads.is_empty()
        && settings.http_payloads.is_empty()
        && settings.envoy_payloads.is_empty();
    if inputs.is_empty() && no_payloads && !failed {
        diagnostics.push(nothing_to_check(&settings));
    }
    diagnostics.extend(policy_diagnostics);
    // `--shard I/N`: this run's part of the sorted inputs (after the nothing-to-check test,
    // which is about the whole run: an empty shard of a non-empty run is no error).
    // The Namespaces of the whole run are read, so a shard sees the same namespace labels.
    let all_inputs = inputs;
    let inputs: Vec<Input> = match shard {
        Some(s) => all_inputs
            .get(s.range(all_inputs.len()))
            .unwrap_or(&[])
            .to_vec(),
        None => all_inputs.clone(),
    };
    // `--json-payload`, then `--http-payload` and `--envoy-payload` files after the manifests,
    // in the order given (checked by the first shard only, so that shards add up to the
    // whole run).
    let payloads: Vec<(Input, Feed)> = match shard {
        Some(s) if s.index != 1 => Vec::new(),
        _ => {
            let of = |files: &[std::path::PathBuf], feed: Feed| {
                files
                    .iter()
                    .map(move |p| (Input::File(p.clone()), feed))
                    .collect::<Vec<_>>()
            };
            let mut all = of(&settings.json_payloads, Feed::Json);
            all.extend(of(&settings.http_payloads, Feed::Authz(AuthzMode::Http)));
            all.extend(of(&settings.envoy_payloads, Feed::Authz(AuthzMode::Envoy)));
            all
        }
    };
    let inputs: Vec<(Input, Feed)> = inputs
        .into_iter()
        .map(|i| (i, Feed::Manifest))
        .chain(payloads)
        .collect();
    if !settings.policies.is_empty() && engine.policies().is_empty() {
        diagnostics.push(no_policies(&settings, loaded));
    }
    let embedded = settings.policies.is_empty();
    let infos = engine
        .policies()
        .iter()
        .map(|p| policy_info(p, embedded))
        .collect();
    // perf: the Namespaces among the inputs are collected (a second read of every input) only
    // when a policy's text names `namespaceObject`.
    let reads_namespaces = engine
        .policies()
        .iter()
        .any(|p| p.source.text().contains("namespaceObject"));
    let mut request = match request {
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
    if reads_namespaces {
        let namespaces = super::namespaces::collect(&all_inputs, max_bytes, &request.values);
        request.namespaces = Arc::new(namespaces);
    }
    let old = Previous::new(&settings, &request, &mut diagnostics);
    let cel = cel_data(
        &request,
        context_file(settings.context_file.as_deref(), &mut diagnostics),
    );
    // Inline suppressions are judged on today's date (`KPOL_TODAY` fixes it).
    let today = if settings.inline_ignores {
        super::suppressions::today()
            .map_err(|d| diagnostics.push(d))
            .ok()
    } else {
        None
    };
    let baseline = settings.baseline.as_deref().and_then(|p| {
        super::baseline::Baseline::read(p)
            .map_err(|d| diagnostics.push(d))
            .ok()
    });
    if settings.baseline_strict && settings.baseline.is_none() {
        diagnostics.push(Diagnostic::error(
            Code::InvalidBaseline,
            "--baseline-strict needs a baseline (--baseline FILE, or baseline of .kpol.yaml)",
            None,
        ));
    }
    let writes_baseline = settings.write_baseline.is_some();

    let terminal =
        settings.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let layout = render::Layout {
        color: super::color::enabled(color_when, terminal),
        width: render::wrap::width(settings.width, terminal),
        // `-v` shows every result, so every finding too.
        max_findings: settings.max_findings.filter(|_| !settings.verbose),
    };
    let renderer = render::renderer(settings.format, layout, settings.output.as_deref());
    let mut out = match render::open(
        settings.output.as_deref(),
        super::write::Links {
            follow: settings.follow_symlinks,
        },
    ) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("kpol: cannot write output: {e}");
            return exit::INCOMPLETE;
        }
    };
    let mut report = CheckReport {
        incomplete: diagnostics.iter().any(|d| d.severity == Severity::Error),
        diagnostics,
        files: Vec::new(),
        policies: infos,
        summary: Summary::default(),
        verbose: settings.verbose,
        timestamp: timestamp(),
        table: None,
        shard,
    };
    // A streaming format writes each input once it and every earlier one are checked, so
    // memory does not grow with the number of inputs (docs/PERFORMANCE.md).
    let streams = renderer.streams();
    let mut written = if streams {
        renderer.head(&report, &mut out)
    } else {
        Ok(())
    };
    let (mut summary, mut incomplete, mut files) = (Summary::default(), false, Vec::new());
    let progress = render::progress::Progress::new(inputs.len());
    // Each worker checks an input and, for a streaming format, renders it too: the main
    // thread only writes the text in input order (perf: rendering in parallel, and every
    // report freed by the thread that built it).
    let list_passing = renderer.lists_passing(settings.verbose);
    let check = |(input, feed): &(Input, Feed)| {
        let options = CheckOptions {
            cel: cel.as_ref(),
            audit_warn: settings.audit_warn,
            max_bytes,
            list_passing,
            apiserver_defaults: settings.apiserver_defaults,
            allow_empty: settings.allow_empty,
            today,
        };
        let mut file = match feed {
            Feed::Json => check_payload(&engine, input, options),
            Feed::Authz(mode) => check_authz(&engine, input, *mode, options),
            Feed::Manifest => check_input(&engine, &request, &old, input, options),
        };
        progress.tick();
        // `--baseline`: the recorded findings leave the report (counted); which entries they
        // used matters only to `--baseline-strict`.
        let (baselined, mut used) = match &baseline {
            Some(b) => b.filter(&mut file.findings),
            None => (0, Vec::new()),
        };
        if !settings.baseline_strict {
            used.clear();
        }
        let recorded: Vec<super::baseline::Entry> = if writes_baseline {
            file.findings
                .iter()
                .filter(|f| super::baseline::recorded(f))
                .map(super::baseline::Entry::of)
                .collect()
        } else {
            Vec::new()
        };
        let checked_key = input_key(input);
        let mut counts = file.unlisted;
        counts.baselined = baselined;
        for finding in &file.findings {
            counts.add(finding.status);
            counts.suppressed += usize::from(finding.suppressed.is_some());
        }
        let file_tally = if table {
            (input.display(), tally(&file.findings))
        } else {
            (String::new(), Tally::new())
        };
        let failed = file
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error);
        let body = if streams {
            Checked::Text(renderer.parts(&report, &file))
        } else {
            Checked::File(file)
        };
        (
            counts,
            failed,
            body,
            file_tally,
            (used, recorded, checked_key),
        )
    };
    let (mut policy_tally, mut file_tallies) = (Tally::new(), Tally::new());
    // Discovery errors are the whole run's: counted by the first shard only, so that the
    // shards' counts add up to the unsharded run's (`kpol merge`).
    let mut input_errors = if shard.is_none_or(|s| s.index == 1) {
        discovery_errors
    } else {
        0
    };
    let (mut used, mut recorded, mut checked) =
        (Vec::new(), Vec::new(), std::collections::HashSet::new());
    // `--max-findings`: the worst findings are held back to the end, the others written.
    let mut cap = render::cap::Cap::new(renderer.cap());
    ordered::for_each(
        &inputs,
        check,
        |(counts, failed, body, file_tally, kept)| {
            summary.merge(counts);
            used.extend(kept.0);
            recorded.extend(kept.1);
            checked.extend(kept.2);
            let mut file_row = [0; 3];
            for (policy, n) in file_tally.1 {
                let row = policy_tally.entry(policy).or_default();
                for ((a, f), b) in row.iter_mut().zip(file_row.iter_mut()).zip(n) {
                    *a += b;
                    *f += b;
                }
            }
            if file_row.iter().any(|n| *n > 0) {
                file_tallies.insert(file_tally.0, file_row);
            }
            incomplete |= failed;
            input_errors += usize::from(failed);
            match body {
                Checked::File(file) => files.push(file),
                Checked::Text(text) if written.is_ok() => {
                    written = progress.suspend(|| {
                        cap.push(text?, &mut out)?;
                        // Lines under a progress bar are written before it is drawn again.
                        if progress.is_drawn() {
                            out.flush()?;
                        }
                        Ok(())
                    });
                }
                Checked::Text(_) => {}
            }
        },
    );
    progress.finish();
    // `--baseline-strict`: recorded findings that are gone fail the run (exit 1).
    if let (Some(b), true, Some(path)) = (&baseline, settings.baseline_strict, &settings.baseline) {
        let stale = b.stale(&used, shard.map(|_| &checked));
        summary.baseline_stale = stale.len();
        for e in stale {
            let d = super::baseline::stale_diagnostic(path, e);
            if streams {
                render::print_diagnostic_line(&d);
            }
            report.diagnostics.push(d);
        }
    }
    summary.input_errors = input_errors;
    summary.policy_errors = policy_errors;
    summary.other_errors = report
        .diagnostics
        .iter()
        .filter(is_error)
        .count()
        .saturating_sub(discovery_errors + policy_errors);
    report.summary = summary;
    report.table = table.then_some((policy_tally, file_tallies));
    report.incomplete |= incomplete;
    report.files = files;
    let written = written
        .and_then(|()| cap.finish(&mut out))
        .and_then(|()| renderer.render(&report, &mut out))
        .and_then(|()| out.flush());
    // A closed pipe (`kpol check … | head`) is the reader's choice, not a failure.
    if let Err(e) = written.or_else(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(e),
    }) {
        eprintln!("kpol: cannot write output: {e}");
        return exit::INCOMPLETE;
    }
    // When standard output is not the human report (`-o FILE`, a machine format), the
    // problems and the summary still reach the person or log reading stderr.
    let for_people = matches!(
        settings.format,
        super::args::CheckFormat::Human | super::args::CheckFormat::Concise
    );
    if settings.output.is_some() || !for_people {
        for problem in summary.problems() {
            eprintln!("kpol: {problem}");
        }
        let plain = Summary {
            input_errors: 0,
            policy_errors: 0,
            other_errors: 0,
            ..summary
        };
        eprintln!("{}", plain.line());
    }
    let incomplete = report.incomplete;
    // `--write-baseline`: written even from an incomplete run (what was not checked is not
    // recorded, so it can only come back as new findings); exit 0 unless incomplete.
    if let Some(path) = &settings.write_baseline {
        return match super::baseline::write(path, recorded) {
            Ok(n) if incomplete => {
                eprintln!(
                    "kpol: baseline {} written: {n} findings; the run was incomplete, so the \
                     findings of what could not be checked are not in it",
                    path.display()
                );
                exit::INCOMPLETE
            }
            Ok(n) => {
                eprintln!("kpol: baseline {} written: {n} findings", path.display());
                exit::CLEAN
            }
            Err(e) => {
                eprintln!("kpol: cannot write baseline {}: {e}", path.display());
                exit::INCOMPLETE
            }
        };
    }
    if incomplete {
        return exit::INCOMPLETE;
    }
    if summary.baseline_stale > 0 {
        return exit::FINDINGS;
    }
    let policy = exit::WarnPolicy {
        warn_exit_code: settings.warn_exit_code,
        warn_no_pass: settings.warn_no_pass,
    };
    let (code, note) = policy.code(summary.pass, summary.fail, summary.warn, summary.error);
    if let Some(note) = note {
        // Kyverno prints this on stdout; kpol keeps stdout for the report.
        eprintln!("{note}");
    }
    code
}

/// The fingerprints' name of an input's file (`--baseline-strict` under `--shard`).
fn input_key(input: &Input) -> Option<String> {
    match input {
        Input::Stdin => None,
        other => Some(super::baseline::file_key(&other.display())),
    }
}

/// Whether `policy` is evaluated: at admission (the default) Kyverno's policy cache leaves out
/// a policy with `spec.admission: false`; a background scan (`--background`) evaluates the
/// policies with `spec.background` true. A policy left out is an info note.
pub(super) fn runs(
    policy: &kpol::policy::Policy,
    background: bool,
    notes: &mut Vec<Diagnostic>,
) -> bool {
    let (field, why) = match (background, policy.admission, policy.background) {
        (false, false, _) => ("admission", "not evaluated (use --background)"),
        (true, _, false) => ("background", "not evaluated in a background scan"),
        _ => return true,
    };
    let span = policy
        .raw
        .get("spec")
        .and_then(|s| s.get(field))
        .map_or(policy.raw.span, |n| n.span);
    notes.push(Diagnostic::info(
        Code::NotEvaluated,
        format!("policy {} has spec.{field}: false; {why}", policy.key()),
        Some(kpol::diagnostic::Location::at(&policy.source, span)),
    ));
    false
}

/// The session settings of a `kpol check` run.
fn spec(settings: &config::Settings) -> Spec {
    Spec {
        command: "check",
        paths: settings.paths.clone(),
        policies: settings.policies.clone(),
        exceptions: settings.exceptions.clone(),
        exclude: settings.exclude.clone(),
        exclude_base: settings.exclude_base.clone(),
        values: settings.values.clone(),
        set: settings.set.clone(),
        userinfo: settings.userinfo.clone(),
        cluster_resources: settings.cluster_resources.clone(),
        max_bytes: settings.max_bytes,
        fallback: Fallback::Embedded,
    }
}

/// The error of a run that found no input: excludes that removed every file, or paths
/// without a manifest, are not a clean check.
fn nothing_to_check(settings: &config::Settings) -> Diagnostic {
    let paths: Vec<String> = settings
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let excluded =
        !settings.exclude.is_empty() && !discover(&settings.paths, &Exclude::none()).0.is_empty();
    let why = if excluded {
        "every file found matches an exclude (--exclude, or exclude of .kpol.yaml)"
    } else {
        "no .yaml, .yml or .json file found"
    };
    empty(
        settings.allow_empty,
        format!("nothing to check in {}: {why}", paths.join(", ")),
        None,
    )
}

/// The error of a run whose `-p` paths gave no policy to evaluate: a path holding only
/// manifests (or exceptions) checks nothing, which is not a pass.
fn no_policies(settings: &config::Settings, loaded: usize) -> Diagnostic {
    let paths: Vec<String> = settings
        .policies
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let why = if loaded == 0 {
        "no ClusterPolicy, Policy or other supported policy found".to_owned()
    } else {
        format!("all {loaded} are left out of this run (see the not-evaluated notes, -v)")
    };
    empty(
        settings.allow_empty,
        format!("no policies loaded from {}: {why}", paths.join(", ")),
        None,
    )
}

/// A run that checks nothing: an error (exit 2), or with `--allow-empty` an info note.
fn empty(allow: bool, message: String, location: Option<Location>) -> Diagnostic {
    if allow {
        Diagnostic::info(Code::Io, format!("{message} (--allow-empty)"), location)
    } else {
        Diagnostic::error(
            Code::Io,
            format!("{message}; pass --allow-empty if that is expected"),
            location,
        )
    }
}

pub(super) fn policy_info(p: &kpol::policy::Policy, embedded: bool) -> PolicyInfo {
    let ann = |k: &str| {
        p.annotations
            .get(&format!("policies.kyverno.io/{k}"))
            .cloned()
    };
    PolicyInfo {
        name: p.name.clone(),
        namespace: p.namespace.clone(),
        title: ann("title"),
        description: ann("description"),
        category: ann("category"),
        severity: ann("severity"),
        background: p.background,
        file: p.source.name().to_owned(),
        line: p.source.line_col(p.raw.span.start).line,
        embedded,
    }
}

/// Policy reports carry a timestamp; `SOURCE_DATE_EPOCH` makes it reproducible.
pub(super) fn timestamp() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
}

/// The simulated request from a values file (`-f`), `--set` variables and a userinfo file
/// (`-u`), with the warnings reading them gave; built by the session (src/cli/session.rs).
/// `request.operation` comes from the global values (per-resource operations of a values file
/// apply in `kpol test`, where each policy is evaluated on its own).
pub(super) fn build_request(
    values_file: Option<&std::path::Path>,
    set: &[String],
    userinfo: Option<&std::path::Path>,
    cluster_resources: &[std::path::PathBuf],
) -> Result<(Request, Vec<String>), Diagnostic> {
    let mut warnings = Vec::new();
    let as_diag = |e: super::test::LoadError| {
        Diagnostic::error(
            Code::InvalidTest,
            format!("{}: {}", e.position, e.message),
            Some(Location::file(e.position.clone())),
        )
    };
    let mut values = match values_file {
        Some(p) => {
            let (v, w) = super::test::read_values_file(p).map_err(as_diag)?;
            warnings.extend(w);
            v
        }
        None => Values::default(),
    };
    values.global.extend(set_values(set));
    warnings.extend(unapplied_resource_keys(&values));
    let user_info = match userinfo {
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
    // Global `request.object…` values are merged into every checked resource
    // ([`with_object_values`]); a key upstream's context refuses stops the run, as there.
    kpol::engine::global_object_parts(&values, operation)
        .map_err(|e| Diagnostic::error(Code::InvalidTest, format!("values: {e}"), None))?;
    Ok((
        Request {
            operation,
            namespace_labels: values.namespace_labels.clone(),
            user_info,
            values: Arc::new(values),
            namespaces: Default::default(),
            old_object: None,
            offline: Arc::new(kpol::cluster::Offline {
                cluster: match cluster_resources {
                    [] => None,
                    files => Some(Arc::new(
                        super::test::read_cluster_files(files).map_err(as_diag)?,
                    )),
                },
                ..Default::default()
            }),
            params: Default::default(),
        },
        warnings,
    ))
}

/// A warning for each per-resource `request.operation` or `request.object…` key of the
/// values file (`policies[].resources[].values`): `kyverno apply` sets that policy's
/// operation on that resource, or merges the keys into the resource before matching, but
/// `kpol check` evaluates every policy with one request: it uses the global operation, and
/// reads such object keys in the rule's context only (`kpol test` applies both).
fn unapplied_resource_keys(values: &Values) -> Vec<String> {
    let mut out = Vec::new();
    for p in &values.policies {
        for (resource, kv) in &p.resources {
            for (k, _) in kv {
                let what = if k == "request.operation" {
                    "does not apply it: every policy runs with the global operation"
                } else if k == "request.object" || k.starts_with("request.object.") {
                    "reads it in the rule's context only, not in the resource it matches"
                } else {
                    continue;
                };
                out.push(format!(
                    "values: policy {} resource {resource}: per-resource key {k}: kpol check \
                     {what} (kpol test applies it)",
                    p.name
                ));
            }
        }
    }
    out
}

/// The resource with the global `request.object…` values (`request.oldObject…` for a
/// DELETE) merged in, as `kyverno apply --values-file` merges them into each policy's
/// context before matching (src/engine/overlay.rs); `None` when there are none.
fn with_object_values(request: &Request, resource: &Resource) -> Option<Resource> {
    let parts = kpol::engine::global_object_parts(&request.values, request.operation).ok()?;
    if parts.is_empty() {
        return None;
    }
    let mut root = resource.root.clone();
    for p in parts {
        kpol::request::values::merge_into(&mut root, p);
    }
    Some(resource.with_root(root))
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

/// The data CEL library calls (`resource.Get/List`, `image.GetMetadata`) read in a run: the
/// `--context-file` (`file`, as `kyverno apply --context-file` gives it), else the virtual
/// cluster of `--cluster-resources` (as a test's `clusterResources` mode reads it); `None`
/// when there is neither, and those calls are unsupported offline.
pub(super) fn cel_data(request: &Request, file: Option<CelContext>) -> Option<Arc<CelContext>> {
    match file {
        Some(cx) => Some(Arc::new(cx)),
        None => request
            .offline
            .cluster
            .clone()
            .map(|c| Arc::new(CelContext::with_cluster(c))),
    }
}

/// A context file's problem: the run is incomplete (exit 2), as the Kyverno CLI stops.
pub(super) fn context_file(
    path: Option<&std::path::Path>,
    diags: &mut Vec<Diagnostic>,
) -> Option<CelContext> {
    let e = match super::test::read_context(path?) {
        Ok(cx) => return Some(cx),
        Err(e) => e,
    };
    diags.push(Diagnostic::error(
        Code::InvalidTest,
        format!("invalid context file: {}", e.message),
        Some(Location::file(e.position.clone())),
    ));
    None
}

/// Files with this many resources or more are checked in parallel within the file.
const SPLIT_AT_RESOURCES: usize = 16;

/// How [`check_input`] works and what it keeps.
#[derive(Clone, Copy)]
struct CheckOptions<'a> {
    /// The data CEL library calls read ([`cel_data`]).
    cel: Option<&'a Arc<CelContext>>,
    audit_warn: bool,
    max_bytes: u64,
    /// Whether passing and skipped results become findings (else they are only counted).
    list_passing: bool,
    /// `--apiserver-defaults` (src/cli/apiserver.rs).
    apiserver_defaults: bool,
    /// `--allow-empty`: standard input without a resource is a note, not an error.
    allow_empty: bool,
    /// The day inline suppressions are judged on; `None` with `--no-inline-ignores`.
    today: Option<chrono::NaiveDate>,
}

/// The previous revisions of `--old` and `--diff-base` (cli/old.rs).
struct Previous {
    objects: super::old::OldObjects,
    diff_base: Option<super::old::DiffBase>,
    /// The values file sets `request.operation`: it wins over the pairing.
    forced: bool,
}

impl Previous {
    fn new(settings: &config::Settings, request: &Request, diags: &mut Vec<Diagnostic>) -> Self {
        let (objects, d) = super::old::OldObjects::read(&settings.old, settings.max_bytes);
        diags.extend(d);
        let diff_base = settings.diff_base.as_deref().and_then(|rev| {
            let first = settings.paths.first().map(std::path::PathBuf::as_path);
            super::old::DiffBase::open(rev, first)
                .map_err(|d| diags.push(d))
                .ok()
        });
        let forced = request
            .values
            .global
            .iter()
            .any(|(k, _)| k == "request.operation");
        Self {
            objects,
            diff_base,
            forced,
        }
    }

    /// The request for `resource`: an UPDATE against its previous revision when it has one
    /// (in its file at the diff base, else among `--old`) and no other operation is set.
    fn request<'a>(
        &self,
        request: &'a Request,
        file: Option<&super::old::OldObjects>,
        resource: &Resource,
    ) -> std::borrow::Cow<'a, Request> {
        use kpol::request::Operation;
        let prev = file
            .and_then(|o| o.get(resource))
            .or_else(|| self.objects.get(resource));
        match prev {
            Some(p) if !self.forced || request.operation == Operation::Update => {
                std::borrow::Cow::Owned(Request {
                    operation: Operation::Update,
                    old_object: Some(p),
                    ..request.clone()
                })
            }
            _ => std::borrow::Cow::Borrowed(request),
        }
    }
}

fn check_input(
    engine: &Engine,
    request: &Request,
    old: &Previous,
    input: &Input,
    opts: CheckOptions<'_>,
) -> FileReport {
    let text = match policies::read(input, opts.max_bytes) {
        Ok(t) => t,
        Err(d) => {
            return FileReport {
                diagnostics: vec![d],
                findings: Vec::new(),
                unlisted: Summary::default(),
            };
        }
    };
    let mut base_diagnostics = Vec::new();
    let at_base = match &old.diff_base {
        Some(base) => base
            .at_base(input, &text)
            .map_err(|d| base_diagnostics.push(d))
            .ok(),
        None => None,
    };
    let file_old = match &at_base {
        Some(super::old::AtBase::Changed(o)) => Some(o),
        _ => None,
    };
    let source: Source = Arc::new(SourceFile::new(input.display(), text));
    let mut manifests = read_manifests(&source, super::discover::input_limits());
    manifests.diagnostics.extend(base_diagnostics);
    // An empty stdin is most often a generator that failed (`helm template … | kpol check -`).
    let failed = manifests
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    if matches!(input, Input::Stdin) && manifests.resources.is_empty() && !failed {
        manifests.diagnostics.push(empty(
            opts.allow_empty,
            "no resources on standard input".to_owned(),
            Some(Location::file(input.display())),
        ));
    }
    check_manifests(engine, request, old, file_old, &source, manifests, opts)
}

/// An editor's unsaved buffer (`kpol lsp`), checked as [`check_input`] checks a file: mutate
/// rules first, then every validate rule on the result; with no previous revision. Only
/// failures, warnings and errors become findings (passes and skips are counted). Reads within
/// `limits` (a long-running server passes per-file limits, not the run's shared budget).
pub(super) fn check_text(
    engine: &Engine,
    request: &Request,
    source: &Source,
    limits: kpol::yaml::Limits,
) -> FileReport {
    let manifests = read_manifests(source, limits);
    let old = Previous {
        objects: super::old::OldObjects::default(),
        diff_base: None,
        forced: false,
    };
    let cel = cel_data(request, None);
    let opts = CheckOptions {
        cel: cel.as_ref(),
        audit_warn: false,
        max_bytes: u64::MAX,
        list_passing: false,
        apiserver_defaults: false,
        allow_empty: true,
        // An editor honours the suppressions written in the buffer, judged on today's date.
        today: super::suppressions::today().ok(),
    };
    check_manifests(engine, request, &old, None, source, manifests, opts)
}

/// The resources of one read file through `kpol check`'s row of the phase table (mutate,
/// validate, delete).
fn check_manifests(
    engine: &Engine,
    request: &Request,
    old: &Previous,
    file_old: Option<&super::old::OldObjects>,
    source: &Source,
    mut manifests: kpol::manifest::Manifests,
    opts: CheckOptions<'_>,
) -> FileReport {
    // Inline suppressions (docs/SUPPRESSIONS.md), read from the file before its resources are
    // checked: refused entries are errors of the file, expired ones warnings.
    let directives = match opts.today {
        Some(today) => {
            let (d, diags) = super::suppressions::scan(source, &manifests.resources, today);
            manifests.diagnostics.extend(diags);
            d
        }
        _ => Vec::new(),
    };
    let check_one = |(resource, directives): (&Resource, &[kpol::suppress::scan::Directive])| {
        let request = &*old.request(request, file_old, resource);
        let (resource, defaulted) =
            super::apiserver::prepare(engine, request, resource, opts.apiserver_defaults);
        let with_values = with_object_values(request, &resource);
        let resource = with_values.as_ref().unwrap_or(resource.as_ref());
        // Validate rules see the resource as the mutate rules leave it (mutate.md §8), with
        // the values merged again (upstream's validate contexts merge them into the copy).
        // perf: no copy of the resource when no mutate rule matches it (docs/PERFORMANCE.md).
        let (changed, errors) = engine.mutated_with_errors(resource, request);
        let changed = changed.map(|c| with_object_values(request, &c).unwrap_or(c));
        let mutated = match changed {
            Some(changed) => std::borrow::Cow::Owned(changed),
            None => std::borrow::Cow::Borrowed(resource),
        };
        let mut findings = Vec::new();
        let mut unlisted = Summary::default();
        for (i, resp) in errors {
            findings.push(mutate_error(&engine.policies()[i], i, resource, resp));
        }
        let mut notes = Vec::new();
        // The phases after the mutate ones (which `Engine::mutated_with_errors` ran, from the
        // same row), in the row's order.
        for phase in phases::of(phases::Command::Check) {
            match phase {
                phases::Phase::Validate => {
                    for pr in engine.validate_selecting(&mutated, request) {
                        let policy = &engine.policies()[pr.policy];
                        for resp in pr.rules {
                            // perf: a result the format does not list is only counted (no
                            // message, names or position copied for it, docs/PERFORMANCE.md).
                            if !opts.list_passing
                                && matches!(resp.status, Status::Pass | Status::Skip)
                            {
                                unlisted.add(resp.status);
                                continue;
                            }
                            findings.push(finding(
                                policy,
                                pr.policy,
                                &mutated,
                                resp,
                                opts.audit_warn,
                            ));
                        }
                    }
                }
                phases::Phase::Delete => notes.extend(
                    engine
                        .deletions(&mutated, request)
                        .into_iter()
                        .filter_map(|(i, r)| deletion_note(&engine.policies()[i], &mutated, &r)),
                ),
                _ => {}
            }
        }
        super::apiserver::annotate(&mut findings, &defaulted);
        notes.extend(super::suppressions::apply(
            &mut findings,
            resource,
            directives,
        ));
        (findings, unlisted, notes)
    };
    let resources = &manifests.resources;
    let check_resource = |i: usize| {
        let directives = directives.get(i).map_or(&[][..], Vec::as_slice);
        kpol::cel::context::with_context(opts.cel.cloned(), || {
            resources.get(i).map(|r| check_one((r, directives)))
        })
    };
    // One large file (a rendered chart, a `kind: List`) is split by resources across the pool.
    let per_resource: Vec<(Vec<Finding>, Summary, Vec<Diagnostic>)> =
        if resources.len() >= SPLIT_AT_RESOURCES && rayon::current_num_threads() > 1 {
            (0..resources.len())
                .into_par_iter()
                .filter_map(check_resource)
                .collect()
        } else {
            (0..resources.len()).filter_map(check_resource).collect()
        };
    let mut findings = Vec::new();
    let mut unlisted = Summary::default();
    for (f, counts, notes) in per_resource {
        findings.extend(f);
        unlisted.merge(counts);
        manifests.diagnostics.extend(notes);
    }
    // perf: only shown results (fail, warn, error) print source lines; the others keep just
    // the file's name, so that a file without failures is freed once checked
    // (peak RSS, docs/PERFORMANCE.md).
    let name_only: Source = Arc::new(SourceFile::new(source.name(), String::new()));
    for f in &mut findings {
        if matches!(f.status, Status::Pass | Status::Skip) && f.source.is_some() {
            f.source = Some(name_only.clone());
        }
    }
    // Findings by line, then column, in every format (stable: at one place, in policy order).
    findings.sort_by_key(|f| f.start.map_or((u32::MAX, u32::MAX), |s| (s.line, s.column)));
    FileReport {
        diagnostics: manifests.diagnostics,
        findings,
        unlisted,
    }
}

/// A DeletingPolicy's verdict on a resource, at the resource: an info note when it would be
/// deleted (shown without `-v`, docs/OUTPUT.md), a warning when the policy could not be
/// evaluated, nothing when it would be kept. Neither changes the exit code: deletion is
/// cleanup on a schedule, not admission.
fn deletion_note(
    policy: &kpol::policy::Policy,
    resource: &Resource,
    response: &RuleResponse,
) -> Option<Diagnostic> {
    let span = response.span.unwrap_or(resource.root.span);
    let location = resource.source.as_ref().map(|src| Location::at(src, span));
    let what = resource.display_name();
    match response.status {
        Status::Pass => Some(Diagnostic::info(
            Code::WouldBeDeleted,
            format!(
                "{what} would be deleted by {} (schedule not evaluated)",
                policy.key()
            ),
            location,
        )),
        Status::Error => Some(Diagnostic::warning(
            Code::WouldBeDeleted,
            format!(
                "{what}: DeletingPolicy {} could not be evaluated: {}",
                policy.key(),
                response.message
            ),
            location,
        )),
        _ => None,
    }
}

/// What an input of `kpol check` is: a manifest, a `--json-payload` file, or an
/// authorization request (`--http-payload`, `--envoy-payload`).
#[derive(Clone, Copy)]
enum Feed {
    Manifest,
    Json,
    Authz(AuthzMode),
}

/// One `--http-payload` / `--envoy-payload` file: one authorization request (as a test's
/// `httpPayloads` / `envoyPayloads`), answered by every ValidatingPolicy of its mode; each
/// answer is a finding at the file (a denial `fail`, an error `error`). A file that does not
/// read as a request is an error at the file.
fn check_authz(engine: &Engine, input: &Input, mode: AuthzMode, opts: CheckOptions) -> FileReport {
    let fail = |d: Diagnostic| FileReport {
        diagnostics: vec![d],
        findings: Vec::new(),
        unlisted: Summary::default(),
    };
    let name = input.display();
    let what = match mode {
        AuthzMode::Http => "HTTP",
        AuthzMode::Envoy => "Envoy",
    };
    let text = match policies::read(input, opts.max_bytes) {
        Ok(t) => t,
        Err(d) => return fail(d),
    };
    let object = match mode {
        AuthzMode::Http => kpol::vpol::authz_request::http_request(&text),
        AuthzMode::Envoy => kpol::vpol::authz_request::envoy_request(&text),
    };
    let source: Source = Arc::new(SourceFile::new(name.clone(), text));
    let object = match object {
        Ok(o) => o,
        Err(why) => {
            return fail(Diagnostic::error(
                Code::Yaml,
                format!("invalid {what} payload: {why}"),
                Some(Location::file(&name)),
            ));
        }
    };
    // The findings point at the request's first node (its document, when it reads as one).
    let root = kpol::payload::documents(&source, kpol::payload::Format::Json, &name)
        .ok()
        .and_then(|d| d.into_iter().next())
        .map_or_else(kpol::yaml::Node::null, |r| r.root);
    let at = Resource {
        root,
        api_version: String::new(),
        kind: String::new(),
        name: name.clone(),
        namespace: String::new(),
        source: Some(source),
        doc_index: 0,
    };
    let mut findings = Vec::new();
    let mut unlisted = Summary::default();
    for (i, policy) in engine.policies().iter().enumerate() {
        let Some(cel) = kpol::vpol::cel_policy(policy) else {
            continue;
        };
        let Some(resp) = authz::evaluate(cel, mode, object.clone()) else {
            continue;
        };
        if !opts.list_passing && matches!(resp.status, Status::Pass | Status::Skip) {
            unlisted.add(resp.status);
            continue;
        }
        let mut f = finding(policy, i, &at, resp, opts.audit_warn);
        f.resource = format!("{what} payload {name}");
        findings.push(f);
    }
    FileReport {
        diagnostics: Vec::new(),
        findings,
        unlisted,
    }
}

/// One `--json-payload` file (cel.md §3.5): each of its documents through the JSON-mode
/// ValidatingPolicies, findings at the document's place in the file.
fn check_payload(engine: &Engine, input: &Input, opts: CheckOptions) -> FileReport {
    let fail = |d: Diagnostic| FileReport {
        diagnostics: vec![d],
        findings: Vec::new(),
        unlisted: Summary::default(),
    };
    let name = input.display();
    let Some(format) = kpol::payload::Format::of(std::path::Path::new(&name)) else {
        return fail(Diagnostic::error(
            Code::Yaml,
            kpol::payload::unrecognized(&name),
            Some(Location::file(&name)),
        ));
    };
    let text = match policies::read(input, opts.max_bytes) {
        Ok(t) => t,
        Err(d) => return fail(d),
    };
    let source: Source = Arc::new(SourceFile::new(name.clone(), text));
    let payloads = match kpol::payload::documents(&source, format, &name) {
        Ok(p) => p,
        Err(e) => {
            let at = e.offset.unwrap_or(0);
            let span = kpol::source::Span::new(at, at);
            return fail(Diagnostic::error(
                Code::Yaml,
                format!("invalid JSON payload: {}", e.message),
                Some(Location::at(&source, span)),
            ));
        }
    };
    let mut findings = Vec::new();
    let mut unlisted = Summary::default();
    for payload in &payloads {
        for pr in engine.validate_payload(payload) {
            let policy = &engine.policies()[pr.policy];
            for resp in pr.rules {
                if !opts.list_passing && matches!(resp.status, Status::Pass | Status::Skip) {
                    unlisted.add(resp.status);
                    continue;
                }
                let mut f = finding(policy, pr.policy, payload, resp, opts.audit_warn);
                f.resource = format!("JSON payload {name}");
                findings.push(f);
            }
        }
    }
    findings.sort_by_key(|f| f.start.map_or((u32::MAX, u32::MAX), |s| (s.line, s.column)));
    FileReport {
        diagnostics: Vec::new(),
        findings,
        unlisted,
    }
}

/// A mutate rule that errored, at the resource as it was given. With `failurePolicy: Fail`
/// (the default) Kyverno blocks the request: an error. With `Ignore` it admits the request
/// unmutated: a warning, which fails the run only under `--warn-exit-code` (docs/OUTPUT.md).
fn mutate_error(
    policy: &kpol::policy::Policy,
    policy_index: usize,
    resource: &Resource,
    mut response: RuleResponse,
) -> Finding {
    let ignore = policy.ignores_failures();
    response.failure_action = if ignore {
        kpol::report::FailureAction::Audit
    } else {
        kpol::report::FailureAction::Enforce
    };
    let mut f = finding(policy, policy_index, resource, response, false);
    if ignore {
        f.status = Status::Warn;
    }
    f
}

pub(super) fn finding(
    policy: &kpol::policy::Policy,
    policy_index: usize,
    resource: &Resource,
    response: RuleResponse,
    audit_warn: bool,
) -> Finding {
    let scored = policy
        .annotations
        .get("policies.kyverno.io/scored")
        .is_none_or(|v| v != "false");
    // Kyverno's counting (cli-compat.md §11.3): an unscored policy's failure is a warning,
    // and so is an Audit failure under --audit-warn.
    let status = match response.status {
        Status::Fail if !scored => Status::Warn,
        Status::Fail
            if audit_warn && response.failure_action == kpol::report::FailureAction::Audit =>
        {
            Status::Warn
        }
        // A CEL policy acting with `Warn` and not `Deny` warns at admission (an error stays
        // an error: kpol could not tell whether the resource passes).
        Status::Fail if response.failure_action == kpol::report::FailureAction::Warn => {
            Status::Warn
        }
        s => s,
    };
    let exceptions = response.exceptions.clone();
    // The engine placed the response (RuleResponse::span); the path is not located again.
    let span = response.span.unwrap_or(resource.root.span);
    let (start, end) = match &resource.source {
        Some(src) if !span.is_empty() || span.start > 0 => {
            (Some(src.line_col(span.start)), Some(src.line_col(span.end)))
        }
        Some(src) => (Some(src.line_col(resource.root.span.start)), None),
        None => (None, None),
    };
    Finding {
        policy: policy.key(),
        policy_index,
        scored,
        exceptions,
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
        defaults: Vec::new(),
        suppressed: None,
    }
}
