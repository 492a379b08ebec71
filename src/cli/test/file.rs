//! One test file, end to end: every YAML document is a test (cli-compat.md §2.1); each is
//! loaded, evaluated and matched against its expected results. A broken test stops only
//! itself.

use std::collections::BTreeSet;
use std::path::Path;

use super::generated;
use super::load::{self, joined, read_yaml};
use super::policies::unsupported_feature;
use super::report::{FileReport, TestReport};
use super::rows::{self, Context};
use super::select::Selector;
use kpol::engine::Engine;
use kpol::engine::test_run;
use kpol::request::Operation;
use kpol::testfile::LoadError;
use kpol::testfile::{self, TestSpec};

pub fn run_file(path: &Path, selector: &Selector) -> FileReport {
    let mut report = FileReport {
        path: path.display().to_string(),
        ..FileReport::default()
    };
    let (src, docs) = match read_yaml(path) {
        Ok(x) => x,
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    report.source = Some(src.clone());
    let dir = path.parent().unwrap_or(Path::new("."));
    for doc in docs {
        let test = match testfile::parse_test(&src, &doc.root) {
            Ok(mut t) => {
                t.results = selector.apply(&t.results);
                // A test with no (selected) result entries is skipped, as upstream does.
                if t.results.is_empty() {
                    continue;
                }
                run_test(dir, t)
            }
            Err(e) => TestReport::failed(&e, String::new()),
        };
        report.tests.push(test);
    }
    report
}

fn run_test(dir: &Path, spec: TestSpec) -> TestReport {
    let mut report = TestReport {
        name: spec.name.clone(),
        warnings: spec.warnings.clone(),
        ..TestReport::default()
    };
    let inputs = match load::load(dir, &spec) {
        Ok(i) => i,
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    let requests = match super::authz::load(dir, &spec) {
        Ok(r) => r,
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    let mut inputs = inputs;
    inputs.test.authz = requests;
    report.warnings.append(&mut inputs.warnings);
    report.errors = std::mem::take(&mut inputs.policies.errors);
    let policies = std::mem::take(&mut inputs.policies.policies);
    report.rules = loaded_rules(&policies);
    report.applying = (
        policies.len() + inputs.policies.invalid.len() + inputs.policies.unsupported.len(),
        inputs.test.resources.len(),
        inputs.policy_exceptions.len(),
    );
    let evaluated: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
    let engine = Engine::new(policies).with_exceptions(inputs.policy_exceptions.clone());
    let unsupported: Vec<(String, String)> = inputs
        .policies
        .unsupported
        .iter()
        .map(|(n, k)| (n.clone(), unsupported_feature(k)))
        .collect();
    let mut gen_inputs = generated::load(dir, &spec);
    inputs.test.clone_sources = std::mem::take(&mut gen_inputs.clone_sources);
    let cx = Context {
        invalid: &inputs.policies.invalid,
        unsupported: &unsupported,
        unsupported_inputs: &spec.unsupported_inputs,
        evaluated: &evaluated,
        expected: &gen_inputs.expected,
    };
    // DeletingPolicies are not admission-driven: an operation on their row aborts the test
    // (`test.go` `runTest`).
    if let Some(r) = spec
        .results
        .iter()
        .find(|r| r.operation.is_some() && r.cel_kind == Some("DeletingPolicy"))
    {
        report.error = Some(format!(
            "invalid test result for policy {}: operation is not supported for deleting policies",
            r.policy
        ));
        return report;
    }
    // §7.2: the default run, plus one per operation declared on result entries (in the
    // order of their names).
    let declared: BTreeSet<&str> = spec
        .results
        .iter()
        .filter_map(|r| r.operation.map(Operation::as_str))
        .collect();
    let declared: Vec<Operation> = declared
        .iter()
        .filter_map(|s| Operation::parse(s))
        .collect();
    let test_run::TestRuns { runs, targets } =
        match test_run::evaluate(&engine, &inputs.test, &declared) {
            Ok(r) => r,
            Err(e) => {
                report.error = Some(LoadError::in_file(dir.display().to_string(), e).to_string());
                return report;
            }
        };
    // Each entry's rows from the run of its operation; the `Target` map (targets patched in
    // any run) whatever the entry's operation.
    for entry in &spec.results {
        let Some((_, run)) = runs.iter().find(|(op, _)| *op == entry.operation) else {
            continue;
        };
        // `patchedResources` is relative to the test file's directory.
        let mut entry = entry.clone();
        if let Some(p) = &entry.patched_resources {
            entry.patched_resources = Some(joined(dir, p).display().to_string());
        }
        report
            .rows
            .extend(rows::rows_for(&entry, run, &targets, &cx));
    }
    report
}

/// The rules of `policies` as written ([`super::report::LoadedRule`]).
fn loaded_rules(policies: &[kpol::policy::Policy]) -> Vec<super::report::LoadedRule> {
    use kpol::policy::{PolicyBody, RuleBody};
    let mut out = Vec::new();
    for p in policies {
        let at = |span: kpol::source::Span| p.source.line_col(span.start).line;
        let rule = |name: &str, kind: &str, line: u32| super::report::LoadedRule {
            policy: p.key(),
            rule: name.to_owned(),
            kind: kind.to_owned(),
            file: p.source.name().to_owned(),
            line,
        };
        match &p.body {
            PolicyBody::Rules(set) => {
                for r in &set.autogen.spec_rules {
                    let kind = match &r.body {
                        RuleBody::Validate(_) => "validate",
                        RuleBody::Mutate(_) => "mutate",
                        RuleBody::Generate(_) => "generate",
                        RuleBody::VerifyImages(_) => "verifyImages",
                    };
                    out.push(rule(&r.name, kind, at(r.raw.span)));
                }
            }
            PolicyBody::Cel(_) => out.push(rule("", &format!("{:?}", p.kind), at(p.raw.span))),
        }
    }
    out
}
