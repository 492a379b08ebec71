//! `kpol policies`: the loaded policies and their rules — kind, action, severity
//! (`policies.kyverno.io/severity`), title, and the kinds each rule selects once autogen has
//! copied it to the pod controllers — as a table or `--format json` (docs/EXPLAIN.md).
//! `--coverage TESTDIR` reports instead which rules the `kyverno test` suites there test both
//! ways ([`super::coverage`]).
//!
//! Exit codes: 0 listed (with `--coverage`: every rule has a pass and a fail case); 1 with
//! `--coverage`, some rule lacks one; 2 a policy or test file could not be loaded.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use kpol::diagnostic::Severity;
use kpol::policy::{Policy, PolicyBody, Rule, RuleBody, ValidateCheck};

use super::args::Format;
use super::config;
use super::exit;
use super::session::{Fallback, Spec};

const POLICIES_HELP: &str = "Exit codes: 0 listed (with --coverage: every rule has a pass and a \
                             fail case); 1 with --coverage, some rule lacks one; 2 a policy or \
                             test file could not be loaded (the rest is still listed).";

/// `kpol policies`.
#[derive(Debug, clap::Args)]
#[command(after_help = POLICIES_HELP)]
pub struct PoliciesArgs {
    /// Policy file or directory (repeatable). Default: the `policies` of .kpol.yaml, else
    /// kpol's embedded default policies. With `--coverage`: policies whose rules are listed
    /// even when no test loads them.
    #[arg(short, long = "policy", value_name = "PATH")]
    pub policies: Vec<PathBuf>,

    /// Report, per rule, whether the `kyverno-test.yaml` suites under TESTDIR have at least
    /// one pass and one fail case (the suites are run as `kpol test` runs them).
    #[arg(long, value_name = "TESTDIR")]
    pub coverage: Option<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Use this config file instead of looking for .kpol.yaml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore .kpol.yaml.
    #[arg(long)]
    pub no_config: bool,
}

/// One policy as listed.
#[derive(Serialize)]
struct Listed {
    name: String,
    kind: String,
    file: String,
    line: u32,
    action: String,
    severity: Option<String>,
    title: Option<String>,
    rules: Vec<ListedRule>,
    /// CEL policies: the resources (plural names) their `matchConstraints` select, autogen
    /// copies included.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resources: Vec<String>,
}

#[derive(Serialize)]
struct ListedRule {
    name: String,
    /// `validate.pattern`, `validate.deny`, `mutate`, …
    #[serde(rename = "type")]
    rule_type: String,
    action: String,
    /// The kinds `match` names, then those of the rules autogen made from it.
    kinds: Vec<String>,
    /// The names of the rules autogen made from it.
    #[serde(rename = "autogenRules", skip_serializing_if = "Vec::is_empty")]
    autogen_rules: Vec<String>,
    line: u32,
}

pub fn run(args: PoliciesArgs) -> u8 {
    // `--coverage` without policies lists only the rules its suites load.
    let fallback = match args.coverage {
        Some(_) => Fallback::Empty,
        None => Fallback::Embedded,
    };
    let spec = config::locate(args.config.as_deref(), args.no_config)
        .map(|config| Spec::listing("policies", config, args.policies.clone(), fallback));
    let set = match super::session::open_listing(spec) {
        Ok(set) => set,
        Err(code) => return code,
    };
    if let Some(dir) = &args.coverage {
        for d in &set.diagnostics {
            super::render::print_diagnostic_line(d);
        }
        return super::coverage::run(dir, &set.policies, args.format);
    }
    let incomplete = set
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    for d in &set.diagnostics {
        super::render::print_diagnostic_line(d);
    }
    let listed: Vec<Listed> = set.policies.iter().map(listed).collect();
    let text = match args.format {
        Format::Json => {
            serde_json::to_string_pretty(&listed).map_or_else(|e| e.to_string(), |t| t + "\n")
        }
        Format::Human => human(&listed),
    };
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if incomplete {
        exit::INCOMPLETE
    } else {
        exit::CLEAN
    }
}

fn listed(p: &Policy) -> Listed {
    let ann = |k: &str| {
        p.annotations
            .get(&format!("policies.kyverno.io/{k}"))
            .cloned()
    };
    let none = std::collections::BTreeMap::new();
    let line = |span: kpol::source::Span| p.source.line_col(span.start).line;
    let (action, rules, resources) = match &p.body {
        PolicyBody::Rules(set) => {
            let rules = set
                .autogen
                .spec_rules
                .iter()
                .map(|r| {
                    let copies: Vec<&Rule> = set
                        .rules
                        .iter()
                        .filter(|c| c.autogen && autogen_source(&c.name) == Some(r.name.as_str()))
                        .collect();
                    let mut kinds: Vec<String> =
                        r.match_.kinds().into_iter().map(str::to_owned).collect();
                    for c in &copies {
                        for k in c.match_.kinds() {
                            if !kinds.iter().any(|have| have == k) {
                                kinds.push(k.to_owned());
                            }
                        }
                    }
                    ListedRule {
                        name: r.name.clone(),
                        rule_type: rule_type(r).to_owned(),
                        action: p.rule_action(r, "", &none).as_str().to_owned(),
                        kinds,
                        autogen_rules: copies.iter().map(|c| c.name.clone()).collect(),
                        line: line(r.raw.span),
                    }
                })
                .collect();
            (set.validation_failure_action.as_str(), rules, Vec::new())
        }
        PolicyBody::Cel(body) => (body.failure_action().as_str(), Vec::new(), cel_resources(p)),
    };
    Listed {
        name: p.key(),
        kind: format!("{:?}", p.kind),
        file: p.source.name().to_owned(),
        line: line(p.raw.span),
        action: action.to_owned(),
        severity: ann("severity"),
        title: ann("title"),
        rules,
        resources,
    }
}

/// The rule an autogen rule was made from: `autogen-x` and `autogen-cronjob-x` → `x`.
pub fn autogen_source(name: &str) -> Option<&str> {
    name.strip_prefix("autogen-cronjob-")
        .or_else(|| name.strip_prefix("autogen-"))
}

fn rule_type(r: &Rule) -> &'static str {
    match &r.body {
        RuleBody::Validate(v) => match &v.check {
            ValidateCheck::Pattern(_) => "validate.pattern",
            ValidateCheck::AnyPattern(_) => "validate.anyPattern",
            ValidateCheck::Deny(_) => "validate.deny",
            ValidateCheck::Foreach(_) => "validate.foreach",
            ValidateCheck::PodSecurity(..) => "validate.podSecurity",
            ValidateCheck::Cel(_) => "validate.cel",
            ValidateCheck::Manifests(_) => "validate.manifests",
        },
        RuleBody::Mutate(_) => "mutate",
        RuleBody::Generate(_) => "generate",
        RuleBody::VerifyImages(_) => "verifyImages",
    }
}

/// What a CEL policy's `matchConstraints.resourceRules` select (the plural resource names),
/// with the pod controllers autogen adds for a ValidatingPolicy.
fn cel_resources(p: &Policy) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |r: &str| {
        if !out.iter().any(|have| have == r) {
            out.push(r.to_owned());
        }
    };
    match kpol::vpol::cel_policy(p) {
        Some(cel) => {
            for v in &cel.variants {
                for rule in v.constraints.iter().flat_map(|c| &c.resource_rules) {
                    rule.resources.iter().for_each(|r| add(r));
                }
            }
        }
        None => {
            let rules = p
                .raw
                .get_path(&["spec", "matchConstraints", "resourceRules"])
                .and_then(kpol::yaml::Node::as_seq)
                .unwrap_or(&[]);
            for rule in rules {
                if let Some(rs) = rule.get("resources") {
                    rs.str_items().iter().for_each(|r| add(r));
                }
            }
        }
    }
    out
}

fn human(listed: &[Listed]) -> String {
    let mut out = String::new();
    let rules: usize = listed.iter().map(|p| p.rules.len().max(1)).sum();
    for p in listed {
        let _ = writeln!(
            out,
            "{} {} ({}:{}) action={} severity={}{}",
            p.kind,
            p.name,
            p.file,
            p.line,
            p.action,
            p.severity.as_deref().unwrap_or("-"),
            p.title
                .as_deref()
                .map_or(String::new(), |t| format!(" — {t}")),
        );
        if !p.resources.is_empty() {
            let _ = writeln!(out, "  selects resources: {}", p.resources.join(", "));
        }
        for r in &p.rules {
            let _ = writeln!(
                out,
                "  - {} [{}] action={} kinds: {}",
                r.name,
                r.rule_type,
                r.action,
                if r.kinds.is_empty() {
                    "-".to_owned()
                } else {
                    r.kinds.join(", ")
                }
            );
        }
    }
    let _ = writeln!(out, "{} policies, {rules} rules", listed.len());
    out
}
