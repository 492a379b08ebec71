//! CEL PolicyExceptions (`policies.kyverno.io`) through the engine: binding by `policyRefs`,
//! match conditions, the exemption's result, partial exceptions, errors and load diagnostics.

use std::sync::Arc;

use super::super::{Loaded, load_documents};
use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::report::Status;
use crate::request::Request;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn vpol(extra_spec: &str, validation: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {{name: require-team}}\n\
         spec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: ['']\n      \
         apiVersions: [v1]\n      operations: [CREATE]\n      resources: [pods]\n{extra_spec}  \
         validations:\n  - expression: \"{validation}\"\n    message: no team\n"
    )
}

fn policy() -> String {
    vpol(
        "",
        "has(object.metadata.labels) && 'team' in object.metadata.labels",
    )
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ops\n  \
                   labels: {legacy: 'true'}\nspec: {containers: [{name: c, image: nginx}]}\n";

fn exception(name: &str, kind: &str, body: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1beta1\nkind: PolicyException\nmetadata:\n  \
         name: {name}\n  namespace: ops\nspec:\n  policyRefs:\n  - name: require-team\n    \
         kind: {kind}\n{body}"
    )
}

fn load_exceptions(text: &str) -> Loaded {
    let source = SourceFile::new("e.yaml", text);
    let docs = parse_documents(text, Limits::default()).unwrap();
    load_documents(&source, docs.iter().map(|d| &d.root), true)
}

fn run(policy: &str, exc: &str, resource: &str) -> Vec<(String, Status, String)> {
    responses(policy, exc, resource)
        .into_iter()
        .map(|r| (r.rule, r.status, r.message))
        .collect()
}

/// The exception names the one response records.
fn names(policy: &str, exc: &str) -> Vec<String> {
    let mut got = responses(policy, exc, POD);
    assert_eq!(got.len(), 1);
    got.remove(0).exceptions
}

fn responses(policy: &str, exc: &str, resource: &str) -> Vec<crate::report::RuleResponse> {
    let source = Arc::new(SourceFile::new("p.yaml", policy));
    let loaded = load_policies(&source, parse_documents(policy, Limits::default()).unwrap());
    assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
    let ex = load_exceptions(exc);
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

fn one(policy: &str, exc: &str) -> (String, Status, String) {
    let mut got = run(policy, exc, POD);
    assert_eq!(got.len(), 1, "{got:?}");
    got.remove(0)
}

const LEGACY: &str = "  matchConditions:\n  - name: legacy\n    \
                      expression: \"object.metadata.?labels.?legacy.orValue('') == 'true'\"\n";

#[test]
fn a_matching_exception_skips_the_policy() {
    let exc = exception("legacy", "ValidatingPolicy", LEGACY);
    let got = one(&policy(), &exc);
    assert_eq!(
        got,
        (
            "exception".to_owned(),
            Status::Skip,
            "rule is skipped due to policy exception: ops/legacy".to_owned()
        )
    );
    assert_eq!(names(&policy(), &exc), ["legacy"]);
}

#[test]
fn a_false_match_condition_leaves_the_failure() {
    let body = "  matchConditions:\n  - name: legacy\n    expression: \"true\"\n  \
                - name: other-ns\n    expression: \"object.metadata.namespace == 'dev'\"\n";
    let got = one(&policy(), &exception("legacy", "ValidatingPolicy", body));
    assert_eq!(got, (String::new(), Status::Fail, "no team".to_owned()));
}

#[test]
fn policy_refs_compare_name_and_kind_exactly() {
    for exc in [
        exception("legacy", "NamespacedValidatingPolicy", LEGACY),
        exception("legacy", "ValidatingPolicy", LEGACY).replace("name: require-team", "name: x"),
        exception("legacy", "ClusterPolicy", LEGACY),
    ] {
        assert_eq!(one(&policy(), &exc).1, Status::Fail, "{exc}");
    }
}

#[test]
fn no_match_conditions_match_and_keys_omit_an_empty_namespace() {
    let a = exception("a", "ValidatingPolicy", "").replace("  namespace: ops\n", "");
    let b = exception("b", "ValidatingPolicy", LEGACY);
    let both = format!("{a}---\n{b}");
    let got = one(&policy(), &both);
    assert_eq!(got.1, Status::Skip);
    assert_eq!(got.2, "rule is skipped due to policy exception: a, ops/b");
    assert_eq!(names(&policy(), &both), ["a", "b"]);
}

#[test]
fn report_result_pass_and_priority() {
    let pass = exception("p", "ValidatingPolicy", "  reportResult: pass\n");
    let got = one(&policy(), &pass);
    assert_eq!(
        (got.1, got.2.as_str()),
        (
            Status::Pass,
            "rule is passed due to policy exception: ops/p"
        )
    );
    // The first matching exception decides, unless a later one has a greater priority.
    let skip = exception("s", "ValidatingPolicy", "");
    assert_eq!(
        one(&policy(), &format!("{skip}---\n{pass}")).1,
        Status::Skip
    );
    let urgent = pass.replace(
        "  namespace: ops\n",
        "  namespace: ops\n  labels: {polex.kyverno.io/priority: '3'}\n",
    );
    let got = one(&policy(), &format!("{skip}---\n{urgent}"));
    assert_eq!(
        (got.1, got.2.as_str()),
        (
            Status::Pass,
            "rule is passed due to policy exception: ops/s, ops/p"
        )
    );
}

#[test]
fn partial_exceptions_fill_allowed_values() {
    let p = vpol(
        "",
        "object.metadata.name in exceptions.allowedValues || 'team' in object.metadata.labels",
    );
    let values = exception("v", "ValidatingPolicy", "  allowedValues: [p]\n");
    assert_eq!(
        one(&p, &values),
        (String::new(), Status::Pass, "success".to_owned())
    );
    let other = exception("v", "ValidatingPolicy", "  allowedValues: [q]\n");
    assert_eq!(one(&p, &other).1, Status::Fail);
    // A full exemption wins over a partial one.
    let full = exception("f", "ValidatingPolicy", "");
    assert_eq!(one(&p, &format!("{other}---\n{full}")).1, Status::Skip);
}

#[test]
fn condition_errors_are_errors_unless_failures_are_ignored() {
    // `variables` is not bound while exceptions are matched.
    let body = "  matchConditions:\n  - name: bad\n    expression: \"variables.x == 1\"\n";
    let exc = exception("e", "ValidatingPolicy", body);
    let got = one(&policy(), &exc);
    assert_eq!(got.1, Status::Error, "{got:?}");
    // Kyverno's wording: the condition's error alone, behind the engine's prefix.
    assert!(got.2.starts_with("failed to load context: "), "{}", got.2);
    assert!(!got.2.contains("matchCondition"), "{}", got.2);
    let ignore = vpol(
        "  failurePolicy: Ignore\n",
        "has(object.metadata.labels) && 'team' in object.metadata.labels",
    );
    assert_eq!(one(&ignore, &exc).1, Status::Fail);
    // An exemption already granted stands.
    let full = exception("f", "ValidatingPolicy", "");
    assert_eq!(one(&policy(), &format!("{full}---\n{exc}")).1, Status::Skip);
}

#[test]
fn families_do_not_cross() {
    let classic = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: require-team}\n\
                   spec:\n  rules:\n  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    \
                   validate:\n      message: no team\n      pattern: {metadata: {labels: {team: '?*'}}}\n";
    let cel = exception("legacy", "ClusterPolicy", "");
    assert_eq!(run(classic, &cel, POD)[0].1, Status::Fail);
    let kyverno = "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: k}\nspec:\n  \
                   exceptions:\n  - {policyName: require-team, ruleNames: ['*']}\n  \
                   match: {any: [{resources: {kinds: [Pod]}}]}\n";
    assert_eq!(one(&policy(), kyverno).1, Status::Fail);
    assert_eq!(run(classic, kyverno, POD)[0].1, Status::Skip);
}

#[test]
fn invalid_exceptions_are_diagnostics_at_their_line() {
    let cases = [
        (
            "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: x}\n\
             spec:\n  matchConditions: []\n",
            "spec.policyRefs is required",
            "e.yaml:5:3",
        ),
        (
            "apiVersion: policies.kyverno.io/v1alpha1\nkind: PolicyException\nmetadata: {name: x}\n\
             spec:\n  policyRefs:\n  - name: p\n",
            "spec.policyRefs[0] needs name and kind",
            "e.yaml:6:5",
        ),
        (
            "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: x}\n\
             spec:\n  policyRefs: [{name: p, kind: ValidatingPolicy}]\n  reportResult: fail\n",
            "spec.reportResult must be skip or pass",
            "e.yaml:6:17",
        ),
        (
            "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: x}\n\
             spec:\n  policyRefs: [{name: p, kind: ValidatingPolicy}]\n  matchConditions:\n  \
             - name: c\n    expression: \"object.metadata.name == )\"\n",
            "CEL syntax error",
            "e.yaml:8:42",
        ),
        (
            "apiVersion: policies.kyverno.io/v2\nkind: PolicyException\nmetadata: {name: x}\n",
            "policy exception type not supported",
            "e.yaml:1:1",
        ),
    ];
    for (text, message, at) in cases {
        let l = load_exceptions(text);
        assert_eq!(l.diagnostics.len(), 1, "{text}: {:?}", l.diagnostics);
        let d = &l.diagnostics[0];
        assert!(d.message.contains(message), "{}", d.message);
        assert_eq!(d.position(), at, "{}", d.message);
    }
}
