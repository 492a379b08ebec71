//! `kpol test --format concise|github|sarif`: the rows in `kpol check`'s report model, so the
//! CI formats write them through `kpol check`'s renderers. Each row is a finding at its result
//! entry in the test file: a row that is not ok a failure (`Want pass, got fail` and the rule's
//! message), an ok row a pass; a test file or test that could not run is a problem of that file.

use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::report::{FailureAction, RuleResponse, Status};

use super::report::FileReport;
use crate::cli::check::{self, CheckReport, Finding, PolicyInfo};

/// The run as one report: a file report per test file, in order.
pub fn report(files: &[FileReport]) -> CheckReport {
    let mut policies: Vec<PolicyInfo> = Vec::new();
    let mut reports = Vec::new();
    for file in files {
        let mut diagnostics = Vec::new();
        for e in file.errors() {
            diagnostics.push(Diagnostic::error(
                Code::InvalidTest,
                e.clone(),
                Some(Location::file(&file.path)),
            ));
        }
        let mut findings = Vec::new();
        for row in file.tests.iter().flat_map(|t| &t.rows) {
            let policy_index = match policies.iter().position(|p| p.name == row.policy) {
                Some(i) => i,
                None => {
                    policies.push(policy_info(&row.policy, file));
                    policies.len() - 1
                }
            };
            findings.push(finding(row, policy_index, file));
        }
        reports.push(crate::cli::command_report::file_report(
            diagnostics,
            findings,
            true,
        ));
    }
    let mut report = CheckReport {
        policies,
        ..CheckReport::empty()
    };
    for f in &reports {
        report.summary.merge(f.unlisted);
        for finding in &f.findings {
            report.summary.add(finding.status);
        }
        report.summary.input_errors += usize::from(!f.diagnostics.is_empty());
    }
    report.incomplete = report.summary.input_errors > 0;
    report.timestamp = check::timestamp();
    report.files = reports;
    report
}

/// A policy as the test names it, from the policy file a test of `file` loaded it from (the
/// test file when none did: a row for a policy that did not load).
fn policy_info(name: &str, file: &FileReport) -> PolicyInfo {
    let loaded = file
        .tests
        .iter()
        .flat_map(|t| &t.rules)
        .find(|r| r.policy == name);
    PolicyInfo {
        name: name.to_owned(),
        namespace: None,
        title: None,
        description: None,
        category: None,
        severity: None,
        background: true,
        file: loaded.map_or_else(|| file.path.clone(), |r| r.file.clone()),
        line: loaded.map_or(1, |r| r.line),
        embedded: false,
    }
}

fn finding(row: &super::rows::Row, policy_index: usize, file: &FileReport) -> Finding {
    let status = if row.ok { Status::Pass } else { Status::Fail };
    let message = match (row.ok, row.message.is_empty()) {
        (true, _) | (false, true) => row.reason.clone(),
        (false, false) => format!("{}: {}", row.reason, row.message),
    };
    let mut response = RuleResponse::new(&row.rule, status, message);
    response.failure_action = FailureAction::Enforce;
    let (api_version, kind, namespace, name) = resource_parts(&row.resource, &row.kind);
    let resource = match (namespace.is_empty(), name.is_empty()) {
        (_, true) => row.resource.clone(),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    };
    Finding {
        policy: row.policy.clone(),
        policy_index,
        scored: true,
        exceptions: Vec::new(),
        rule: row.rule.clone(),
        status,
        response,
        resource,
        kind,
        api_version,
        name,
        namespace,
        source: file.source.clone(),
        start: row.at,
        end: None,
        defaults: Vec::new(),
        suppressed: None,
    }
}

/// `<apiVersion>/<Kind>/<namespace>/<name>` (the apiVersion may hold a `/`) as its parts; a
/// resource column of another shape (a generated resource's name, several names) is kept as
/// the name, with the row's kind.
fn resource_parts(resource: &str, kind: &str) -> (String, String, String, String) {
    let parts: Vec<&str> = resource.rsplitn(4, '/').collect();
    match parts.as_slice() {
        [name, namespace, k, api_version] if *k == kind => (
            (*api_version).to_owned(),
            kind.to_owned(),
            (*namespace).to_owned(),
            (*name).to_owned(),
        ),
        _ => (
            String::new(),
            kind.to_owned(),
            String::new(),
            resource.to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::resource_parts;

    #[test]
    fn resource_columns_split_from_the_right() {
        let s = |a: &str, b: &str, c: &str, d: &str| {
            (a.to_owned(), b.to_owned(), c.to_owned(), d.to_owned())
        };
        assert_eq!(
            resource_parts("apps/v1/Deployment/default/web", "Deployment"),
            s("apps/v1", "Deployment", "default", "web")
        );
        assert_eq!(
            resource_parts("v1/Namespace//prod", "Namespace"),
            s("v1", "Namespace", "", "prod")
        );
        assert_eq!(
            resource_parts("generated-cm", "ConfigMap"),
            s("", "ConfigMap", "", "generated-cm")
        );
    }
}
