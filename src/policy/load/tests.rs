//! Loading tests: kinds recognised, `List` expansion, defaults, namespaced policies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use super::*;
use crate::policy::{RuleBody, ValidateCheck};
use crate::report::FailureAction;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

pub(crate) fn load(text: &str) -> LoadedPolicies {
    let source: Source = Arc::new(SourceFile::new("pol.yaml", text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    crate::kinds::load_policies(&source, docs)
}

const BASIC: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: basic
spec:
  rules:
  - name: r
    match:
      any:
      - resources:
          kinds: [Service]
    validate:
      message: m
      pattern:
        metadata:
          labels:
            app: '?*'
";

#[test]
fn loads_a_cluster_policy_with_defaults() {
    let l = load(BASIC);
    assert!(l.invalid.is_empty(), "{:?}", l.invalid);
    let p = &l.policies[0];
    assert_eq!(p.name, "basic");
    assert_eq!(p.namespace, None);
    assert_eq!(
        p.rule_set().unwrap().validation_failure_action,
        FailureAction::Audit
    );
    assert!(p.background && p.admission && !p.apply_one());
    assert_eq!(p.rules().len(), 1);
    let r = &p.rules()[0];
    assert!(r.skip_background_requests);
    let RuleBody::Validate(v) = &r.body else {
        panic!("not validate")
    };
    assert!(v.allow_existing_violations);
    assert_eq!(v.message.as_deref(), Some("m"));
    assert!(matches!(v.check, ValidateCheck::Pattern(_)));
}

#[test]
fn namespaced_policy_defaults_to_default_namespace() {
    let text = BASIC.replace("kind: ClusterPolicy", "kind: Policy");
    let l = load(&text);
    assert_eq!(l.policies[0].namespace.as_deref(), Some("default"));
    assert_eq!(l.policies[0].key(), "default/basic");
}

#[test]
fn lists_are_expanded_and_other_kinds_sorted_out() {
    let text = format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\n---\napiVersion: kyverno.io/v9\nkind: ClusterPolicy\nmetadata: {{name: vp}}\n---\napiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {{name: e}}\n",
        serde_json::to_string(
            &crate::yaml::parse_documents(BASIC, Limits::default()).unwrap()[0]
                .root
                .to_json()
        )
        .unwrap()
    );
    let l = load(&text);
    assert_eq!(l.policies.len(), 1);
    assert_eq!(l.unsupported.len(), 1);
    assert_eq!(l.unsupported[0].kind, "ClusterPolicy");
    assert_eq!(l.unsupported[0].name, "vp");
    assert_eq!(l.exceptions.len(), 1);
}

#[test]
fn rule_bodies_are_classified() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: kinds}
spec:
  validationFailureAction: Enforce
  applyRules: One
  rules:
  - name: any
    match: {resources: {kinds: [Service]}}
    validate:
      failureAction: Audit
      allowExistingViolations: false
      anyPattern: [{a: 1}, {b: 2}]
  - name: deny
    match: {resources: {kinds: [Service]}}
    validate: {deny: {conditions: {any: []}}}
  - name: mut
    match: {resources: {kinds: [Service]}}
    mutate: {patchStrategicMerge: {metadata: {labels: {a: b}}}}
";
    let l = load(text);
    assert!(l.invalid.is_empty(), "{:?}", l.invalid);
    let p = &l.policies[0];
    assert!(p.apply_one());
    assert_eq!(
        p.rule_set().unwrap().validation_failure_action,
        FailureAction::Enforce
    );
    let RuleBody::Validate(v) = &p.rules()[0].body else {
        panic!()
    };
    assert!(matches!(&v.check, ValidateCheck::AnyPattern(ps) if ps.len() == 2));
    assert_eq!(v.failure_action, Some(FailureAction::Audit));
    assert!(!v.allow_existing_violations);
    assert_eq!(
        p.rule_action(&p.rules()[0], "", &Default::default()),
        FailureAction::Audit
    );
    assert!(
        matches!(&p.rules()[1].body, RuleBody::Validate(v) if matches!(v.check, ValidateCheck::Deny(_)))
    );
    assert!(matches!(p.rules()[2].body, RuleBody::Mutate(_)));
    assert_eq!(
        p.rule_action(&p.rules()[2], "", &Default::default()),
        FailureAction::Enforce
    );
}

#[test]
fn v2beta1_rejects_allow_existing_violations() {
    let text = BASIC
        .replace("kyverno.io/v1", "kyverno.io/v2beta1")
        .replace(
            "      message: m\n",
            "      message: m\n      allowExistingViolations: true\n",
        );
    let l = load(&text);
    assert_eq!(l.invalid.len(), 1);
    assert!(l.invalid[0].reason.contains("allowExistingViolations"));
}

/// A pattern literal `8.0` is the integer 8 once Kyverno has read the policy as JSON.
#[test]
fn integral_float_literals_become_ints() {
    let l = load(&BASIC.replace(
        "app: '?*'",
        "app: '?*'\n        spec: {replicas: 8.0, ratio: 0.5}",
    ));
    let RuleBody::Validate(v) = &l.policies[0].rules()[0].body else {
        panic!("not a validate rule")
    };
    let ValidateCheck::Pattern(p) = &v.check else {
        panic!("not a pattern")
    };
    assert_eq!(
        p.get_path(&["spec", "replicas"]).map(|n| &n.value),
        Some(&crate::yaml::Value::Int(8))
    );
    assert_eq!(
        p.get_path(&["spec", "ratio"]).map(|n| &n.value),
        Some(&crate::yaml::Value::Float(0.5))
    );
}

#[test]
fn rule_action_order_rule_overrides_rule_action_spec_overrides_spec_action() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: order
spec:
  validationFailureAction: Audit
  validationFailureActionOverrides:
  - action: Enforce
    namespaces: ['spec-*']
  - action: Audit
    namespaces: ['rule-*']
  rules:
  - name: with-overrides
    match: {resources: {kinds: [Service]}}
    validate:
      failureAction: Audit
      failureActionOverrides:
      - action: bogus
        namespaces: ['*']
      - action: Enforce
        namespaceSelector: {matchLabels: {tier: prod}}
      - action: Enforce
        namespaces: ['rule-*']
      pattern: {metadata: {name: '?*'}}
  - name: plain
    match: {resources: {kinds: [Service]}}
    validate:
      pattern: {metadata: {name: '?*'}}
";
    let l = load(text);
    assert!(l.invalid.is_empty(), "{:?}", l.invalid);
    let p = &l.policies[0];
    let none = std::collections::BTreeMap::new();
    let prod: std::collections::BTreeMap<String, String> =
        [("tier".to_owned(), "prod".to_owned())].into();
    let (with, plain) = (&p.rules()[0], &p.rules()[1]);
    // The rule's overrides first (the invalid action skipped) ...
    assert_eq!(p.rule_action(with, "rule-1", &none), FailureAction::Enforce);
    assert_eq!(p.rule_action(with, "x", &prod), FailureAction::Enforce);
    // ... then its failureAction, before any spec-level override.
    assert_eq!(p.rule_action(with, "spec-1", &none), FailureAction::Audit);
    // A rule without either: the spec's overrides, in order, then its action.
    assert_eq!(
        p.rule_action(plain, "spec-1", &none),
        FailureAction::Enforce
    );
    assert_eq!(p.rule_action(plain, "rule-1", &prod), FailureAction::Audit);
    assert_eq!(p.rule_action(plain, "dev", &none), FailureAction::Audit);
}

#[test]
fn override_shapes_are_invalid_policies() {
    let text = BASIC.replace(
        "    validate:\n",
        "    validate:\n      failureActionOverrides:\n      - namespaces: prod\n",
    );
    let l = load(&text);
    assert_eq!(l.invalid.len(), 1, "{:?}", l.invalid);
    assert!(
        format!("{:?}", l.invalid[0]).contains("failureActionOverrides[0].namespaces"),
        "{:?}",
        l.invalid[0]
    );
}

/// Four independent mistakes in four rules: each is a diagnostic at its line:column, sorted
/// by position; the policy's reason stays the first one Kyverno's order finds.
const FOUR_MISTAKES: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: four
spec:
  rules:
  - name: field-type
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: 5
      pattern: {metadata: {name: '?*'}}
  - name: operator
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      deny:
        conditions:
          any:
          - key: a
            operator: Same
            value: a
  - name: jmespath
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: 'bad {{ request.object.metadata.name[ }}'
      pattern: {metadata: {name: '?*'}}
  - name: match-type
    match: [Pod]
    validate:
      pattern: {metadata: {name: '?*'}}
";

#[test]
fn every_independent_problem_is_reported_at_its_place() {
    let l = load(FOUR_MISTAKES);
    assert!(l.policies.is_empty());
    assert_eq!(l.invalid.len(), 1);
    let d: Vec<String> = l
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.position(), d.message))
        .collect();
    assert_eq!(d.len(), 4, "{d:#?}");
    assert!(
        l.diagnostics
            .iter()
            .all(|d| d.code == Code::InvalidPolicy
                && d.severity == crate::diagnostic::Severity::Error)
    );
    for (d, (at, what)) in d.iter().zip([
        ("pol.yaml:10:16", "spec.rules[0].validate.message"),
        ("pol.yaml:19:23", "entered value of `operator` is invalid"),
        ("pol.yaml:24:53", "JMESPath expression"),
        ("pol.yaml:27:12", "spec.rules[3].match"),
    ]) {
        assert!(d.starts_with(&format!("{at} ")) && d.contains(what), "{d}");
    }
    // The policy's reason: the first problem in Kyverno's order.
    assert!(
        l.invalid[0]
            .reason
            .starts_with("spec.rules[0].validate.message")
    );
}

/// Identical problems are reported once; a policy with one problem reports one.
#[test]
fn one_problem_one_diagnostic() {
    let text = BASIC.replace("      message: m\n", "      message: [m]\n");
    let l = load(&text);
    assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
}

/// `spec` not a map: nothing below it is checked.
#[test]
fn a_problem_that_leaves_nothing_to_check_stops_there() {
    let text = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p, annotations: 5}\nspec: [x]\n";
    let l = load(text);
    let d: Vec<String> = l.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(
        d[0].contains("metadata.annotations") && d[1].contains("spec: Invalid value"),
        "{d:?}"
    );
}

/// Problems of one rule are each reported too (fields read independently).
#[test]
fn problems_within_one_rule_are_each_reported() {
    let text = BASIC
        .replace(
            "  - name: r\n",
            "  - name: r\n    skipBackgroundRequests: 1\n",
        )
        .replace(
            "      message: m\n",
            "      message: [m]\n      failureAction: Never\n",
        );
    let l = load(&text);
    let d: Vec<String> = l
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.position(), d.message))
        .collect();
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(
        d[0].contains("skipBackgroundRequests")
            && d[1].contains("message")
            && d[2].contains("failureAction: Unsupported value"),
        "{d:#?}"
    );
}

/// A ValidatingPolicy: each bad expression is a diagnostic at its line:column, here just past
/// its end, where each stops short (the CEL compiler goes on past the first).
#[test]
fn every_bad_cel_expression_is_reported() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/check/invalid/vpol-bad-expressions.yaml"
    ))
    .unwrap();
    let l = load(&text);
    let d: Vec<String> = l
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.position(), d.message))
        .collect();
    assert_eq!(d.len(), 3, "{d:#?}");
    for (d, at) in d
        .iter()
        .zip(["pol.yaml:14:41", "pol.yaml:18:66", "pol.yaml:21:33"])
    {
        assert!(d.starts_with(at) && d.contains("CEL syntax error"), "{d}");
    }
}
