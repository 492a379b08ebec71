//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

const EXIT_HELP: &str = "Exit codes: 0 nothing failed; 1 a rule failed or errored (kpol test: a \
                         row did not match); 2 the run was incomplete (bad flag, unreadable file, \
                         malformed YAML, invalid policy) — everything else was still checked \
                         and reported.";

/// Kyverno policies, evaluated offline on Kubernetes manifests.
#[derive(Debug, Parser)]
#[command(
    name = "kpol",
    version,
    about,
    long_about = None,
    after_help = EXIT_HELP
)]
pub struct Args {
    /// Worker threads (default: one per core). Output is identical for any value.
    #[arg(short = 'j', long, global = true)]
    pub jobs: Option<usize>,

    #[command(subcommand)]
    pub command: Command,
}

// One value per run, parsed once: the size of its largest variant (`check`'s flags) costs
// nothing, and boxing it would only add indirection at every use.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifests against Kyverno validate rules.
    ///
    /// As the Kyverno CLI does, the policies' mutate rules are applied first and validate rules
    /// are evaluated on each resource as the mutate rules leave it.
    Check(CheckArgs),
    /// Apply Kyverno mutate rules: print, diff or write the patched manifests.
    Mutate(MutateArgs),
    /// Run Kyverno CLI test files (kyverno-test.yaml).
    Test(TestArgs),
    /// Print the resources Kyverno generate rules would create for the manifests.
    Generate(GenerateArgs),
    /// Kyverno's JMESPath: evaluate expressions with Kyverno's functions, list the functions.
    Jp(JpArgs),
    /// `kyverno apply`'s argument order for `kpol check`: policies positional, resources with
    /// `-r`, `-p` for a policy report (docs/CI.md).
    Apply(ApplyArgs),
    /// Join the JSON reports (or SARIF logs) of `kpol check --shard I/N --format json|sarif`
    /// runs into the report, and the exit code, of the unsharded run.
    Merge(MergeArgs),
    /// Explain a finding in terms of the policy's YAML: the pattern node, deny condition or
    /// CEL expression that failed, the resource's value there, what would pass
    /// (docs/EXPLAIN.md).
    Explain(super::explain::ExplainArgs),
    /// List the loaded policies and rules (kind, action, severity, title, the kinds each rule
    /// selects after autogen); `--coverage TESTDIR`: which rules the kyverno-test suites test
    /// both ways.
    Policies(super::policies_cmd::PoliciesArgs),
    /// A Language Server on standard input and output: the findings of `kpol check` in the
    /// editor as you type, hovers and code actions (docs/EDITORS.md).
    Lsp(LspArgs),
    /// Write the HTML report (`--format html`) of a saved `kpol check --format json` result
    /// (or of `kpol merge`'s).
    Report(ReportArgs),
    /// Convert ClusterPolicy/Policy rules to the CEL kinds: validate to ValidatingPolicy,
    /// patchStrategicMerge mutations to MutatingPolicy; `--verify` compares both
    /// (docs/MIGRATE.md).
    Migrate(super::migrate::MigrateArgs),
}

#[derive(Debug, clap::Args)]
pub struct LspArgs {
    /// Accepted for clients that pass it: standard input and output is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The JSON result (`kpol check --format json`, `kpol merge`); `-` reads standard input.
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,

    /// Write the report to FILE instead of standard output (a symbolic link there is
    /// refused). Links to the inputs are relative to FILE's directory.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(after_help = CHECK_EXIT_HELP)]
pub struct MergeArgs {
    /// The shards' JSON reports (`kpol check --shard I/N --format json`) or SARIF logs
    /// (`--format sarif`; told apart by content, all of one format), every shard once, in
    /// any order.
    #[arg(required = true, value_name = "FILE")]
    pub reports: Vec<PathBuf>,

    /// Write the merged report to FILE instead of standard output (a symbolic link there is
    /// refused).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Exit with N when there were warnings but no failures or errors (as `kpol check`).
    #[arg(long, value_name = "N")]
    pub warn_exit_code: Option<u8>,

    /// Exit with the warn exit code (0 unless set) when no rule passed (as `kpol check`).
    #[arg(long)]
    pub warn_no_pass: bool,
}

/// `kpol apply POLICY... -r RESOURCE...`: `kpol check` spelt as `kyverno apply`.
#[derive(Debug, clap::Args)]
#[command(after_help = CHECK_EXIT_HELP)]
pub struct ApplyArgs {
    /// Policy files or directories (`kyverno apply`'s positional arguments).
    #[arg(required = true, value_name = "POLICY")]
    pub policies: Vec<PathBuf>,

    /// Resource file or directory to check (repeatable). Default: `paths` of .kpol.yaml, else
    /// `.`.
    #[arg(
        short = 'r',
        long = "resource",
        visible_alias = "resources",
        value_name = "PATH"
    )]
    pub resources: Vec<PathBuf>,

    /// JSON payload file for the ValidatingPolicies in `evaluation.mode: JSON` (repeatable;
    /// `kpol check --json-payload`).
    #[arg(long = "json", value_name = "PATH")]
    pub json: Vec<PathBuf>,

    /// Kyverno CLI context file: data for CEL `resource.Get/List` and `image.GetMetadata`
    /// (`kpol check --context-file`).
    #[arg(long, value_name = "FILE", conflicts_with = "cluster_resources")]
    pub context_file: Option<PathBuf>,

    /// Print Kyverno's policy report (`openreports.io/v1alpha1`) instead of kpol's output.
    #[arg(short = 'p', long, conflicts_with = "format")]
    pub policy_report: bool,

    /// PolicyException file (repeatable).
    #[arg(
        short = 'e',
        long = "exception",
        visible_alias = "exceptions",
        value_name = "PATH"
    )]
    pub exceptions: Vec<PathBuf>,

    /// Output format [default: human] (kpol's; `kyverno apply` has no such flag).
    #[arg(long, value_enum)]
    pub format: Option<CheckFormat>,

    /// Report Audit failures as warnings that do not fail the run.
    #[arg(long)]
    pub audit_warn: bool,

    /// Exit with N when there were warnings but no failures or errors.
    #[arg(long, value_name = "N")]
    pub warn_exit_code: Option<u8>,

    /// Exit with the warn exit code (0 unless set) when no rule passed.
    #[arg(long)]
    pub warn_no_pass: bool,

    /// End the human output with tables of the failures of each policy and each file.
    #[arg(short = 't', long)]
    pub table: bool,

    /// Colour in the human output (`auto`: on a terminal, unless `NO_COLOR` is set).
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    /// Same as `--color never`.
    #[arg(long)]
    pub remove_color: bool,

    /// Skip input paths matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Read settings from this file instead of searching for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore any .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,

    /// Also print passing and skipped results, and skipped documents.
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub request: RequestArgs,
}

impl From<ApplyArgs> for CheckArgs {
    fn from(a: ApplyArgs) -> Self {
        CheckArgs {
            paths: Vec::new(),
            policies: a.policies,
            exceptions: a.exceptions,
            resources: a.resources,
            json_payloads: a.json,
            http_payloads: Vec::new(),
            envoy_payloads: Vec::new(),
            context_file: a.context_file,
            exclude: a.exclude,
            format: a.format,
            policy_report: a.policy_report,
            table: a.table,
            remove_color: a.remove_color,
            color: a.color,
            output: None,
            audit_warn: a.audit_warn,
            background: false,
            apiserver_defaults: false,
            warn_exit_code: a.warn_exit_code,
            warn_no_pass: a.warn_no_pass,
            allow_empty: false,
            follow_symlinks: false,
            config: a.config,
            no_config: a.no_config,
            verbose: a.verbose,
            max_findings: DEFAULT_MAX_FINDINGS,
            width: None,
            request: a.request,
            old: Vec::new(),
            diff_base: None,
            max_file_size: super::policies::DEFAULT_MAX_FILE_MIB,
            shard: None,
            // `kyverno apply` knows no kpol suppressions: every result is reported.
            no_inline_ignores: true,
            baseline: None,
            baseline_strict: false,
            write_baseline: None,
        }
    }
}

impl CheckArgs {
    /// Folds `kyverno apply`'s spellings into kpol's: `-r` paths join PATHS, `--policy-report`
    /// is `--format policy-report`.
    pub fn kyverno_spellings(mut self) -> Self {
        self.paths.append(&mut self.resources);
        if self.policy_report {
            self.format = Some(CheckFormat::PolicyReport);
        }
        self
    }
}

/// `--max-findings` unless given.
pub const DEFAULT_MAX_FINDINGS: u32 = 50;

const CHECK_EXIT_HELP: &str = "Exit codes (Kyverno's order): 2 the run was incomplete (bad flag, \
                               unreadable file, malformed YAML, invalid policy, or nothing checked: no policy from -p, no \
                               input, empty stdin, unless --allow-empty); else 1 a rule \
                               failed or errored; else N with --warn-exit-code N when there were \
                               warnings; else the warn exit code (0 unless set) with --warn-no-pass \
                               when nothing passed; else 0. Settings may come from .kpol.yaml in \
                               the working directory or above (its excludes are relative to its \
                               directory); flags override it.";

#[derive(Debug, clap::Args)]
#[command(after_help = CHECK_EXIT_HELP)]
pub struct CheckArgs {
    /// Files or directories to check (`.yaml`, `.yml`, `.json`; directories recursively);
    /// `-` reads standard input. Default: `paths` of .kpol.yaml, else `.`.
    pub paths: Vec<PathBuf>,

    /// Policy file or directory (repeatable). Without it, kpol's embedded default policies.
    #[arg(short, long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,

    /// PolicyException file (repeatable; `kyverno.io/v2` or `v2beta1`, `policies.kyverno.io`
    /// for CEL policies). Exceptions among the policy files are used too.
    #[arg(
        short = 'e',
        long = "exception",
        visible_alias = "exceptions",
        value_name = "PATH"
    )]
    pub exceptions: Vec<PathBuf>,

    /// Resource file or directory to check (repeatable), as `kyverno apply --resource`:
    /// added to PATHS.
    #[arg(
        short = 'r',
        long = "resource",
        visible_alias = "resources",
        value_name = "PATH"
    )]
    pub resources: Vec<PathBuf>,

    /// A JSON or YAML document to check with the ValidatingPolicies in `evaluation.mode: JSON`
    /// (repeatable; `kyverno apply --json`): `.json` (one object, numbers as doubles) or
    /// `.yaml`/`.yml` (each document an object). Only JSON-mode policies see payloads. With
    /// payloads and no PATHS, no manifests are checked.
    #[arg(long = "json-payload", value_name = "PATH")]
    pub json_payloads: Vec<PathBuf>,

    /// An HTTP authorization request (a JSON file: kyverno-authz's `CheckRequest`) to answer
    /// with the ValidatingPolicies in `evaluation.mode: HTTP` (repeatable; a test's
    /// `httpPayloads`). A denial or an error is a finding at the file. With payloads and no
    /// PATHS, no manifests are checked.
    #[arg(long = "http-payload", value_name = "PATH")]
    pub http_payloads: Vec<PathBuf>,

    /// An Envoy authorization request (a JSON file: Envoy's `CheckRequest`) to answer with
    /// the ValidatingPolicies in `evaluation.mode: Envoy` (repeatable; a test's
    /// `envoyPayloads`). A denial or an error is a finding at the file.
    #[arg(long = "envoy-payload", value_name = "PATH")]
    pub envoy_payloads: Vec<PathBuf>,

    /// A Kyverno CLI context file (`cli.kyverno.io/v1alpha1` Context, as `kyverno apply
    /// --context-file` and a test's `context:`): its `spec.resources` answer CEL
    /// `resource.Get`/`resource.List`, its `spec.images` `image.GetMetadata`
    /// (docs/TEST-FORMAT.md). Read strictly: an unknown field is an error at its line:column
    /// and the run is incomplete (exit 2).
    #[arg(long, value_name = "FILE", conflicts_with = "cluster_resources")]
    pub context_file: Option<PathBuf>,

    /// Skip input paths matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Output format [default: human].
    #[arg(long, value_enum)]
    pub format: Option<CheckFormat>,

    /// Same as `--format policy-report` (`kyverno apply --policy-report`).
    #[arg(long, conflicts_with = "format")]
    pub policy_report: bool,

    /// End the human output with tables of the failures, warnings and errors of each policy
    /// and of each file (`kyverno apply -t/--table`).
    #[arg(short = 't', long)]
    pub table: bool,

    /// Colour in the human output: `auto` when standard output is a terminal and `NO_COLOR`
    /// is unset or empty.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    /// Same as `--color never` (`kyverno apply --remove-color`).
    #[arg(long)]
    pub remove_color: bool,

    /// Show at most N findings in detail in the human output: with more, the worst come first
    /// (Enforce failures and errors, then by policy severity) and one line counts the rest.
    /// 0 shows all, as does -v. The summary, the tables and the exit code count every one.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FINDINGS)]
    pub max_findings: u32,

    /// Wrap the human output's messages at N columns (0: never). Default: the terminal's
    /// width (`COLUMNS`, else its size) on a terminal, else 100.
    #[arg(long, value_name = "N")]
    pub width: Option<u16>,

    /// Write the output to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Report Audit failures as warnings that do not fail the run.
    #[arg(long)]
    pub audit_warn: bool,

    /// Evaluate policies as a background scan would: those with `spec.background` true,
    /// including `spec.admission: false` ones (by default those are skipped, as at admission).
    #[arg(long)]
    pub background: bool,

    /// Apply the API server's defaulting to built-in kinds before evaluation (Kubernetes
    /// v1.34: imagePullPolicy, restartPolicy, the service account token, ...), and say which
    /// defaults changed a result (docs/DEFAULTS.md).
    #[arg(long)]
    pub apiserver_defaults: bool,

    /// Exit with N when there were warnings but no failures or errors.
    #[arg(long, value_name = "N")]
    pub warn_exit_code: Option<u8>,

    /// Exit with the warn exit code (0 unless set) when no rule passed.
    #[arg(long)]
    pub warn_no_pass: bool,

    /// Exit 0 (with an info note) when there was nothing to check: no policy loaded from
    /// `-p`, every input excluded or without a manifest, or no resource on standard input.
    /// By default each of these is an error (exit 2): a gate that checked nothing did not pass.
    #[arg(long)]
    pub allow_empty: bool,

    /// Write `-o FILE` even when it is a symbolic link (by default a link there is refused).
    #[arg(long)]
    pub follow_symlinks: bool,

    /// Read settings from this file instead of searching for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore any .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,

    /// Also print passing and skipped results, and skipped documents.
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub request: RequestArgs,

    /// Previous revision of the resources (file or directory, repeatable; e.g. from `git show
    /// HEAD~1:path`). A resource with a previous revision (same API group, kind, namespace and
    /// name) is checked as an UPDATE against it: an Enforce failure it already had is skipped,
    /// one the change brings in fails. Others are checked as CREATE. An operation set by the
    /// values file wins (UPDATE without a previous revision: the resource is its own).
    #[arg(long = "old", value_name = "PATH")]
    pub old: Vec<PathBuf>,

    /// Compare with git revision REV (not a Kyverno feature): each input file that changed
    /// since REV is checked as an UPDATE against its version at REV, as with --old. Files new
    /// since REV, and unchanged files, are checked as CREATE, so that violations already in
    /// unchanged files still fail a CI gate. Not a git repository or an unknown REV: exit 2.
    #[arg(long, value_name = "REV")]
    pub diff_base: Option<String>,

    /// Refuse input files larger than this many MiB (exit 2 for that file; the rest is checked).
    #[arg(long, value_name = "MIB", default_value_t = super::policies::DEFAULT_MAX_FILE_MIB)]
    pub max_file_size: u64,

    /// Check only the I-th of N parts of the inputs (a CI matrix job; `1/3` … `3/3`): the
    /// sorted input paths are cut into N runs of consecutive paths. `kpol merge` joins the
    /// shards' JSON into the unsharded run's report and exit code (docs/CI.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,

    /// Ignore the inline suppressions of the inputs (`kpol.io/ignore` annotations,
    /// `# kpol:ignore` comments): every finding is reported, for an audit (docs/SUPPRESSIONS.md).
    #[arg(long)]
    pub no_inline_ignores: bool,

    /// Report only findings not recorded in this baseline file (written by
    /// --write-baseline); the others are counted as `baselined` and fail nothing. Default:
    /// `baseline` of .kpol.yaml (docs/SUPPRESSIONS.md).
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,

    /// With a baseline: also fail (exit 1) when a recorded finding is gone, so that the
    /// baseline only shrinks (rewrite it with --write-baseline).
    #[arg(long)]
    pub baseline_strict: bool,

    /// Record the run's failures, warnings and errors in FILE (JSON, by fingerprint) and exit
    /// 0 unless the run was incomplete: the findings a later --baseline FILE accepts.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
}

/// `--shard I/N`: which part of the sorted inputs a run checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not I/N with 1 <= I <= N (e.g. 2/3)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

impl Shard {
    /// The positions, among `n` sorted inputs, this shard checks: consecutive, so that the
    /// shards' reports joined in shard order are the unsharded report's order.
    pub fn range(self, n: usize) -> std::ops::Range<usize> {
        (self.index - 1) * n / self.count..self.index * n / self.count
    }
}

/// When the human output has colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set to a non-empty value.
    Auto,
    Always,
    Never,
}

/// Output formats of `kpol policies` and `kpol policies --coverage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

/// Output formats of `kpol test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// Kyverno's tables.
    Human,
    /// kpol's JSON document of the rows (docs/test-json.md).
    Json,
    /// As `kpol check --format concise`: a line per row that is not ok, at its result entry
    /// in the test file.
    Concise,
    /// As `kpol check --format github`: an annotation per row that is not ok.
    Github,
    /// As `kpol check --format sarif`: every row a result at its entry, those not ok errors.
    Sarif,
}

/// Output formats of `kpol check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// Diagnostics with source snippets.
    Human,
    /// One line per finding: `file:line:col: level policy/rule: message`.
    Concise,
    /// kpol's JSON document (schema version 1).
    Json,
    /// SARIF 2.1.0, as GitHub code scanning takes it.
    Sarif,
    /// JUnit XML: one test case per resource and rule.
    Junit,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// Kyverno's policy report (`openreports.io/v1alpha1`).
    PolicyReport,
    /// Kyverno's policy report before v1.15 (`wgpolicyk8s.io/v1alpha2`).
    #[value(name = "policy-report-v1alpha2")]
    PolicyReportV1alpha2,
    /// One self-contained HTML page: counts, charts, the findings table (docs/OUTPUT.md).
    Html,
}

#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_HELP)]
pub struct TestArgs {
    /// Directories (searched recursively) or test files.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Name of the test files to look for.
    #[arg(short = 'f', long, default_value = "kyverno-test.yaml")]
    pub file_name: String,

    /// Keep only matching result entries: `policy=<w>,rule=<w>,resource=<w>` (wildcards).
    #[arg(
        short = 't',
        long,
        value_name = "SELECTOR",
        default_value = "policy=*,rule=*,resource=*"
    )]
    pub test_case_selector: String,

    /// Show only the rows that failed, aggregated after the summary.
    #[arg(long)]
    pub fail_only: bool,

    /// Add the MESSAGE column (the rule message).
    #[arg(long)]
    pub detailed_results: bool,

    /// Fail (exit 2) when no test file is found.
    #[arg(long)]
    pub require_tests: bool,

    /// Beyond Kyverno: a row that passes only because the policy excluded the resource
    /// (expected fail, warn or error) fails instead (kyverno#11519).
    #[arg(long)]
    pub strict: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = TestFormat::Human)]
    pub format: TestFormat,

    /// `kyverno test -o`: the result rows as one JSON, YAML, markdown or JUnit document on
    /// standard output (the summary on standard error); with --fail-only the failing rows,
    /// with --detailed-results the messages too (docs/TEST-FORMAT.md).
    #[arg(
        short = 'o',
        long,
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "format"
    )]
    pub output_format: Option<TestOutput>,

    /// Accepted as `kyverno test` spells it: kpol test writes no colour.
    #[arg(long)]
    pub remove_color: bool,
}

/// `kpol test -o/--output-format`: Kyverno's shapes of the result rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestOutput {
    Json,
    Yaml,
    Markdown,
    Junit,
}

const MUTATE_HELP: &str = "Policies: -p, else `policies` of .kpol.yaml (in the working directory or \
                           above; its `exceptions`, `exclude` and `values` apply too, flags \
                           override them); with neither the run exits 2 (nothing to apply). \
                           kpol's embedded policies are used by kpol check only. Exit codes: 0 \
                           clean; 1 a rule errored, or with --check a file would change; 2 the \
                           run was incomplete.";

#[derive(Debug, clap::Args)]
#[command(after_help = MUTATE_HELP)]
pub struct MutateArgs {
    /// Files or directories (`.yaml`, `.yml`, `.json`; directories recursively); `-` reads
    /// standard input.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    /// Policy file or directory (repeatable). Default: `policies` of .kpol.yaml; with
    /// neither, nothing to apply (exit 2).
    #[arg(short, long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,

    /// Skip input paths matching this glob (repeatable). Default: `exclude` of .kpol.yaml.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Print a unified diff per changed file instead of the documents.
    #[arg(long, conflicts_with_all = ["write", "check", "output"])]
    pub diff: bool,

    /// Apply the patches to the files in place (only changed files are touched; comments and
    /// formatting outside the patched nodes are kept byte-for-byte; a read-only file, a symbolic
    /// link, a file with other hard links, or one changed since it was read, is left as it is
    /// and the run exits 2).
    #[arg(long, conflicts_with_all = ["check", "output"])]
    pub write: bool,

    /// Change nothing; exit 1 when any file would change.
    #[arg(long, conflicts_with = "output")]
    pub check: bool,

    /// Write the (patched) files into DIR, mirroring the input tree.
    #[arg(short, long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Write the run's findings on standard output in one of `kpol check`'s formats: every
    /// rule result (a format that lists passes shows the patches applied), rule errors, and
    /// with --check each resource a rule would change, as a failure at its line. Only with
    /// --check, --write or -o DIR, which leave standard output free.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<CheckFormat>,

    /// Write through symbolic links: a `--write` target that is a link (the file it points to
    /// is replaced) and links to directories inside `-o DIR`. By default they are refused
    /// (exit 2, the other files still written).
    #[arg(long)]
    pub follow_symlinks: bool,

    /// Refuse inputs larger than this many MiB.
    #[arg(long, value_name = "MIB", default_value_t = super::policies::DEFAULT_MAX_FILE_MIB)]
    pub max_file_size: u64,

    /// PolicyException file (repeatable). Exceptions among the policy files are used too.
    #[arg(short = 'e', long = "exception", value_name = "PATH")]
    pub exceptions: Vec<PathBuf>,

    /// Kyverno CLI context file: data for CEL `resource.Get/List` and `image.GetMetadata` in
    /// MutatingPolicies, as `kyverno apply --context-file` (`kpol check --context-file`).
    #[arg(long, value_name = "FILE", conflicts_with = "cluster_resources")]
    pub context_file: Option<PathBuf>,

    #[command(flatten)]
    pub request: RequestArgs,

    /// Read settings from this file instead of searching for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore any .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,
}
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Policies: -p, else `policies` of .kpol.yaml (its `exceptions`, `exclude` and \
                  `values` apply too; flags override them); with neither the run exits 2 \
                  (nothing to apply). Exit codes: 0 everything generated; 1 a rule could not \
                  generate (a clone source not given, a substitution error); 2 the run was \
                  incomplete (bad flag, unreadable file, invalid policy)."
)]
pub struct GenerateArgs {
    /// Manifest files or directories (triggers, and clone sources); `-` reads standard input.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Policy file or directory (repeatable). Default: `policies` of .kpol.yaml; with
    /// neither, nothing to apply (exit 2).
    #[arg(short, long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,

    /// PolicyException file (repeatable); exceptions found among the policies apply too.
    #[arg(short = 'e', long = "exception", value_name = "PATH")]
    pub exceptions: Vec<PathBuf>,

    /// Write one file per generated resource under this directory
    /// (`<namespace or _cluster>/<kind>[.<group>]/<name>.yaml`) instead of printing.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Write through symbolic links found inside the output directory (refused by default).
    #[arg(long)]
    pub follow_symlinks: bool,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = GenerateFormat::Yaml)]
    pub format: GenerateFormat,

    /// Skip input paths matching this glob (repeatable). Default: `exclude` of .kpol.yaml.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Refuse input files larger than this many MiB.
    #[arg(long, value_name = "MIB", default_value_t = super::policies::DEFAULT_MAX_FILE_MIB)]
    pub max_file_size: u64,

    #[command(flatten)]
    pub request: RequestArgs,

    /// Read settings from this file instead of searching for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore any .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GenerateFormat {
    Yaml,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct JpArgs {
    #[command(subcommand)]
    pub command: JpCommand,
}

#[derive(Debug, Subcommand)]
pub enum JpCommand {
    /// Evaluate JMESPath expressions against a YAML or JSON document (standard input by
    /// default); each result is printed as JSON.
    Query {
        /// Expressions to evaluate, in order.
        queries: Vec<String>,
        /// The document to query (YAML or JSON); `-` or absent reads standard input.
        #[arg(short, long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Files holding one expression each (repeatable).
        #[arg(short = 'q', long = "query", value_name = "FILE")]
        query_files: Vec<PathBuf>,
    },
    /// List the available functions (standard and Kyverno's), or check the named ones exist.
    Function {
        /// Function names to look for.
        names: Vec<String>,
    },
}

/// What a request is evaluated with besides the resource (`kpol check`, `kpol mutate`,
/// `kpol generate`).
#[derive(Clone, Debug, clap::Args)]
pub struct RequestArgs {
    /// Kyverno values file (cli.kyverno.io/v1alpha1 Values): variables for rules, namespace
    /// labels for namespaceSelector, `request.operation`, `subresources`; in `kpol check`
    /// global `request.object…` keys are merged into each resource, as `kyverno apply`
    /// (per-resource `request.operation` / `request.object…` keys are warned about, not
    /// applied).
    #[arg(short = 'f', long, value_name = "FILE", conflicts_with = "set")]
    pub values_file: Option<PathBuf>,

    /// Variables as `key=value` (comma-separated, repeatable), as `kyverno apply --set`.
    #[arg(short = 's', long, value_name = "KEY=VALUE", value_delimiter = ',')]
    pub set: Vec<String>,

    /// Kyverno userinfo file: the requesting user, roles and cluster roles.
    #[arg(short = 'u', long, value_name = "FILE")]
    pub userinfo: Option<PathBuf>,

    /// Objects of a virtual cluster (repeatable): manifests, CRDs, or `cli.kyverno.io`
    /// ClusterResource files. They answer ClusterPolicy `context.apiCall` (`urlPath`) and
    /// `context.configMap` entries and CEL `resource.Get`/`resource.List` (docs/TEST-FORMAT.md).
    #[arg(long = "cluster-resources", value_name = "PATH")]
    pub cluster_resources: Vec<PathBuf>,
}
