//! `kpol policies --coverage TESTDIR`: for every rule of the policies the `kyverno-test.yaml`
//! suites under TESTDIR load (and of `-p` policies, tested or not), how many of the suites'
//! result entries expect it to pass and how many expect it to fail, and how many of those kpol
//! confirms. A rule is covered when it has at least one of each; the others are listed. A
//! result for an autogen rule (`autogen-x`, `autogen-cronjob-x`) counts for the rule it was
//! made from; a CEL policy is one rule. The suites are run with `kpol test`'s machinery
//! ([`super::test::run_all`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use kpol::policy::Policy;

use super::args::Format;
use super::exit;
use super::test::{FileReport, LoadedRule};

/// One rule's cases.
#[derive(Clone, Debug, Default, Serialize)]
struct Cases {
    policy: String,
    rule: String,
    #[serde(rename = "type")]
    rule_type: String,
    file: String,
    line: u32,
    /// Result entries that expect `pass`, and how many of them kpol confirms.
    pass: usize,
    #[serde(rename = "passConfirmed")]
    pass_confirmed: usize,
    /// Result entries that expect `fail`.
    fail: usize,
    #[serde(rename = "failConfirmed")]
    fail_confirmed: usize,
    covered: bool,
}

#[derive(Serialize)]
struct Report {
    #[serde(rename = "testFiles")]
    test_files: usize,
    rules: Vec<Cases>,
    summary: Summary,
    /// Test files or tests that could not be run.
    errors: Vec<String>,
}

#[derive(Serialize)]
struct Summary {
    rules: usize,
    covered: usize,
    #[serde(rename = "withoutPass")]
    without_pass: usize,
    #[serde(rename = "withoutFail")]
    without_fail: usize,
    /// The validate rules and ValidatingPolicies among `rules`, and how many are covered
    /// (mutate and generate rules rarely have a fail case).
    validate: usize,
    #[serde(rename = "validateCovered")]
    validate_covered: usize,
}

pub fn run(dir: &Path, extra: &[Policy], format: Format) -> u8 {
    let (files, mut errors) = super::test::run_all(&[dir.to_path_buf()]);
    let mut rules = cases(&files, extra);
    // Files under TESTDIR are shown relative to it, the others as found (`..` resolved).
    let root = clean(Path::new(&file_key(&dir.display().to_string())));
    for c in &mut rules {
        let key = clean(Path::new(&file_key(&c.file)));
        c.file = match key.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => clean(Path::new(&c.file)).display().to_string(),
        };
    }
    for f in &files {
        if let Some(e) = &f.error {
            errors.push(format!("{}: {e}", f.path));
        }
        for t in &f.tests {
            if let Some(e) = &t.error {
                errors.push(format!("{} ({}): {e}", f.path, t.name));
            }
        }
    }
    for c in &mut rules {
        c.covered = c.pass > 0 && c.fail > 0;
    }
    let summary = Summary {
        rules: rules.len(),
        covered: rules.iter().filter(|c| c.covered).count(),
        without_pass: rules.iter().filter(|c| c.pass == 0).count(),
        without_fail: rules.iter().filter(|c| c.fail == 0).count(),
        validate: rules.iter().filter(|c| is_validate(c)).count(),
        validate_covered: rules.iter().filter(|c| is_validate(c) && c.covered).count(),
    };
    let report = Report {
        test_files: files.len(),
        rules,
        summary,
        errors,
    };
    let text = match format {
        Format::Json => {
            serde_json::to_string_pretty(&report).map_or_else(|e| e.to_string(), |t| t + "\n")
        }
        Format::Human => human(&report),
    };
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if !report.errors.is_empty() {
        return exit::INCOMPLETE;
    }
    if report.summary.covered < report.summary.rules {
        exit::FINDINGS
    } else {
        exit::CLEAN
    }
}

fn is_validate(c: &Cases) -> bool {
    matches!(
        c.rule_type.as_str(),
        "validate"
            | "ValidatingPolicy"
            | "NamespacedValidatingPolicy"
            | "ValidatingAdmissionPolicy"
            | "ImageValidatingPolicy"
            | "NamespacedImageValidatingPolicy"
    )
}

/// The rules and their cases, in policy, rule, then file order (one policy name may be
/// written in several files: the library has a ClusterPolicy and a ValidatingPolicy of the same
/// name).
fn cases(files: &[FileReport], extra: &[Policy]) -> Vec<Cases> {
    let mut by_rule: BTreeMap<(String, String, String), Cases> = BTreeMap::new();
    let mut add = |r: &LoadedRule| {
        by_rule
            .entry((r.policy.clone(), r.rule.clone(), file_key(&r.file)))
            .or_insert_with(|| Cases {
                policy: r.policy.clone(),
                rule: r.rule.clone(),
                rule_type: r.kind.clone(),
                file: r.file.clone(),
                line: r.line,
                ..Cases::default()
            });
    };
    for r in extra_rules(extra) {
        add(&r);
    }
    for t in files.iter().flat_map(|f| &f.tests) {
        for r in &t.rules {
            add(r);
        }
    }
    for t in files.iter().flat_map(|f| &f.tests) {
        for row in &t.rows {
            let Some(c) = case_of(&mut by_rule, t.rules.as_slice(), &row.policy, &row.rule) else {
                continue;
            };
            match row.expected.as_str() {
                "pass" => {
                    c.pass += 1;
                    c.pass_confirmed += usize::from(row.ok);
                }
                "fail" => {
                    c.fail += 1;
                    c.fail_confirmed += usize::from(row.ok);
                }
                _ => {}
            }
        }
    }
    by_rule.into_values().collect()
}

/// The rule a row counts for: its policy among the test's (by key, or by name for a
/// namespaced one written without namespace), the rule as written (an autogen rule's source),
/// or the CEL policy's one rule.
fn case_of<'a>(
    by_rule: &'a mut BTreeMap<(String, String, String), Cases>,
    loaded: &[LoadedRule],
    policy: &str,
    rule: &str,
) -> Option<&'a mut Cases> {
    let of_policy: Vec<&LoadedRule> = loaded
        .iter()
        .filter(|r| r.policy == policy || r.policy.rsplit('/').next() == Some(policy))
        .collect();
    let written = of_policy
        .iter()
        .find(|r| r.rule == rule)
        .or_else(|| {
            let source = super::policies_cmd::autogen_source(rule)?;
            of_policy.iter().find(|r| r.rule == source)
        })
        .or_else(|| of_policy.iter().find(|r| r.rule.is_empty()))?;
    by_rule.get_mut(&(
        written.policy.clone(),
        written.rule.clone(),
        file_key(&written.file),
    ))
}

/// `a/b/../c` → `a/c`, without asking the file system.
fn clean(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A policy file as a key: the same file named by `-p` and by a test is one.
fn file_key(file: &str) -> String {
    std::fs::canonicalize(file).map_or_else(|_| file.to_owned(), |p| p.display().to_string())
}

/// The rules of `-p` policies, listed whether or not a test loads them.
fn extra_rules(extra: &[Policy]) -> Vec<LoadedRule> {
    let mut out = Vec::new();
    for p in extra {
        let line = |span: kpol::source::Span| p.source.line_col(span.start).line;
        if p.rule_set().is_none() {
            out.push(LoadedRule {
                policy: p.key(),
                rule: String::new(),
                kind: format!("{:?}", p.kind),
                file: p.source.name().to_owned(),
                line: line(p.raw.span),
            });
        }
        for r in p.rule_set().map_or(&[][..], |s| &s.autogen.spec_rules) {
            out.push(LoadedRule {
                policy: p.key(),
                rule: r.name.clone(),
                kind: match &r.body {
                    kpol::policy::RuleBody::Validate(_) => "validate",
                    kpol::policy::RuleBody::Mutate(_) => "mutate",
                    kpol::policy::RuleBody::Generate(_) => "generate",
                    kpol::policy::RuleBody::VerifyImages(_) => "verifyImages",
                }
                .to_owned(),
                file: p.source.name().to_owned(),
                line: line(r.raw.span),
            });
        }
    }
    out
}

fn human(report: &Report) -> String {
    let mut out = String::new();
    let name = |c: &Cases| {
        if c.rule.is_empty() {
            c.policy.clone()
        } else {
            format!("{}/{}", c.policy, c.rule)
        }
    };
    let width = report
        .rules
        .iter()
        .map(|c| name(c).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 72);
    let _ = writeln!(out, "{:<width$}  {:<26}  PASS  FAIL  FILE", "RULE", "TYPE");
    for c in &report.rules {
        let _ = writeln!(
            out,
            "{:<width$}  {:<26}  {:>4}  {:>4}  {}:{}{}",
            name(c),
            c.rule_type,
            c.pass,
            c.fail,
            c.file,
            c.line,
            if c.covered { "" } else { "  !" }
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\n{} test files, {} rules: {} with a pass and a fail case, {} without a pass case, {} \
         without a fail case",
        report.test_files, s.rules, s.covered, s.without_pass, s.without_fail
    );
    let _ = writeln!(
        out,
        "validate rules and validating policies: {} of {} with a pass and a fail case",
        s.validate_covered, s.validate
    );
    let missing: Vec<&Cases> = report.rules.iter().filter(|c| !c.covered).collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "\nRules without both a pass and a fail case:");
        for c in missing {
            let lacks = match (c.pass, c.fail) {
                (0, 0) => "no case",
                (0, _) => "no pass case",
                _ => "no fail case",
            };
            let _ = writeln!(out, "  {} ({}:{}): {lacks}", name(c), c.file, c.line);
        }
    }
    for e in &report.errors {
        let _ = writeln!(out, "error: {e}");
    }
    out
}
