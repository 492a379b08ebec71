//! Exceptions through the engine: skip message, wildcards, autogen names, match semantics.

use std::sync::Arc;

use super::*;
use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

const POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-host-network}
spec:
  validationFailureAction: Enforce
  rules:
  - name: host-network
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: no host network
      pattern: {spec: {=(hostNetwork): false}}
";

fn exceptions(text: &str) -> Loaded {
    let source = SourceFile::new("e.yaml", text);
    let docs = parse_documents(text, Limits::default()).unwrap();
    load_documents(&source, docs.iter().map(|d| &d.root), true)
}

fn exception(rules: &str, filter: &str) -> String {
    format!(
        "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {{name: legacy}}\nspec:\n  \
         exceptions:\n  - policyName: disallow-host-network\n    ruleNames: {rules}\n  \
         match:\n    any:\n    - {filter}\n"
    )
}

fn run(exc: &str, resource: &str) -> Vec<(String, Status, String)> {
    run_with(POLICY, exc, resource)
}

fn run_with(policy: &str, exc: &str, resource: &str) -> Vec<(String, Status, String)> {
    responses(policy, exc, resource)
        .into_iter()
        .map(|r| (r.rule, r.status, r.message))
        .collect()
}

fn responses(policy: &str, exc: &str, resource: &str) -> Vec<RuleResponse> {
    let source = Arc::new(SourceFile::new("p.yaml", policy));
    let loaded = load_policies(&source, parse_documents(policy, Limits::default()).unwrap());
    assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
    let ex = exceptions(exc);
    assert!(ex.diagnostics.is_empty(), "{:?}", ex.diagnostics);
    let engine = Engine::new(loaded.policies).with_exceptions(ex.exceptions);
    let rsrc = Arc::new(SourceFile::new("r.yaml", resource));
    let r = read_manifests(&rsrc, Limits::default()).resources.remove(0);
    engine
        .validate(&r, &Request::default())
        .into_iter()
        .flat_map(|p| p.rules)
        .collect()
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: legacy-router, namespace: x}\nspec: {hostNetwork: true, containers: [{name: c, image: i}]}\n";
const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: legacy-router, namespace: x}\nspec:\n  template:\n    spec: {hostNetwork: true, containers: [{name: c, image: i}]}\n";

#[test]
fn excepted_pod_is_skipped_with_kyvernos_message() {
    let out = run(
        &exception(
            "[host-network]",
            "resources: {kinds: [Pod], names: [legacy-*]}",
        ),
        POD,
    );
    assert_eq!(
        out,
        [(
            "host-network".into(),
            Status::Skip,
            "rule is skipped due to policy exceptionsdefault/legacy".into()
        )]
    );
    // The names are recorded in the response, not parsed back out of the message.
    let r = &responses(
        POLICY,
        &exception(
            "[host-network]",
            "resources: {kinds: [Pod], names: [legacy-*]}",
        ),
        POD,
    )[0];
    assert_eq!(r.exceptions, ["legacy"]);
}

#[test]
fn autogen_rules_need_their_own_names_or_a_wildcard() {
    let plain = exception("[host-network]", "resources: {kinds: [Deployment]}");
    assert_eq!(run(&plain, DEPLOY)[0].1, Status::Fail);
    let wild = exception("['*host-network']", "resources: {kinds: [Deployment]}");
    let out = run(&wild, DEPLOY);
    assert_eq!(
        (out[0].0.as_str(), out[0].1),
        ("autogen-host-network", Status::Skip)
    );
}

#[test]
fn non_matching_resources_and_operation_only_filters() {
    let other = exception("['*']", "resources: {kinds: [Pod], names: [other]}");
    assert_eq!(run(&other, POD)[0].1, Status::Fail);
    // A filter with only `operations` matches every resource (exceptions.md §4).
    let ops = exception("['*']", "resources: {operations: [DELETE]}");
    assert_eq!(run(&ops, POD)[0].1, Status::Skip);
    // User filters are kept: without user info they never match.
    let user = exception("['*']", "clusterRoles: [admin]");
    assert_eq!(run(&user, POD)[0].1, Status::Fail);
}

#[test]
fn loading_rejects_other_documents_and_old_versions() {
    let bad = exceptions("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    assert_eq!(bad.diagnostics.len(), 1);
    let old =
        exceptions(&exception("['*']", "resources: {kinds: [Pod]}").replace("v2\n", "v2alpha1\n"));
    assert!(old.exceptions.is_empty() && old.diagnostics.len() == 1);
    let flat = exceptions(
        "apiVersion: kyverno.io/v2beta1\nkind: PolicyException\nmetadata: {name: e}\nspec:\n  \
         exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {resources: {kinds: [Pod]}}\n",
    );
    assert!(flat.exceptions.is_empty() && flat.diagnostics.len() == 1);
}

fn with_conditions(cond: &str) -> String {
    exception("['*']", "resources: {kinds: [Pod]}")
        + "  conditions:\n    all:\n    - "
        + cond
        + "\n"
}

/// Conditions see the rule's context: the exception applies only when they hold, and one
/// whose conditions cannot be evaluated is ignored (exceptions.md §5).
#[test]
fn conditions_decide_and_errors_ignore_the_exception() {
    let tier = "{key: \"{{ request.object.metadata.labels.tier || '' }}\", operator: Equals, value: system}";
    let system = POD.replace("namespace: x}", "namespace: x, labels: {tier: system}}");
    assert_eq!(run(&with_conditions(tier), &system)[0].1, Status::Skip);
    assert_eq!(run(&with_conditions(tier), POD)[0].1, Status::Fail);
    let broken = "{key: \"{{ no_such_variable }}\", operator: Equals, value: x}";
    assert_eq!(run(&with_conditions(broken), POD)[0].1, Status::Fail);
}

const PSS_POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: psa}
spec:
  validationFailureAction: Enforce
  rules:
  - name: baseline
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      podSecurity: {level: baseline, version: latest}
";

const PSS_EXCEPTION: &str = "\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: pss-exception, namespace: delta}
spec:
  exceptions:
  - policyName: psa
    ruleNames: [baseline]
  match:
    any:
    - resources: {namespaces: [staging-ns]}
  podSecurity:
  - controlName: HostPath Volumes
    restrictedField: spec.volumes[*].hostPath
    values: [/var/lib1]
";

fn hostpath_pod(ns: &str, path: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec:\n  \
         containers: [{{name: c, image: nginx}}]\n  volumes: [{{name: v, hostPath: {{path: {path}}}}}]\n"
    )
}

/// Upstream fixture test/cli/test-exceptions/exceptions-3 (exceptions.md §6.3): podSecurity
/// entries are exclusions; the rule is skipped only when they clear every violation.
#[test]
fn pod_security_entries_exclude_controls() {
    let status = |ns: &str, path: &str| {
        run_with(PSS_POLICY, PSS_EXCEPTION, &hostpath_pod(ns, path))[0].clone()
    };
    let staged = status("staging-ns", "/var/lib1");
    assert_eq!(staged.1, Status::Skip, "{staged:?}");
    assert_eq!(
        staged.2,
        "rule is skipped due to policy exceptionsdelta/pss-exception"
    );
    let r = &responses(
        PSS_POLICY,
        PSS_EXCEPTION,
        &hostpath_pod("staging-ns", "/var/lib1"),
    )[0];
    assert_eq!(r.exceptions, ["pss-exception"]);
    assert_eq!(status("default", "/var/lib1").1, Status::Fail);
    // A failure names no exception, though one matched.
    let r = &responses(
        PSS_POLICY,
        PSS_EXCEPTION,
        &hostpath_pod("staging-ns", "/var/lib2"),
    )[0];
    assert_eq!((r.status, r.exceptions.len()), (Status::Fail, 0));
    // Without podSecurity entries the exception skips the rule outright (singular message).
    let whole = PSS_EXCEPTION
        .split("  podSecurity:")
        .next()
        .unwrap()
        .to_owned();
    let out = run_with(PSS_POLICY, &whole, &hostpath_pod("staging-ns", "/var/lib2"));
    assert_eq!(
        out[0].2,
        "rule is skipped due to policy exception delta/pss-exception"
    );
    let r = &responses(PSS_POLICY, &whole, &hostpath_pod("staging-ns", "/var/lib2"))[0];
    assert_eq!(r.exceptions, ["pss-exception"]);
}
