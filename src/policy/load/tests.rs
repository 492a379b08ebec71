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
    load_policies(&source, docs)
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
        "apiVersion: v1\nkind: List\nitems:\n- {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\n---\napiVersion: policies.kyverno.io/v1\nkind: MutatingPolicy\nmetadata: {{name: vp}}\n---\napiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {{name: e}}\n",
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
    assert_eq!(l.unsupported[0].kind, "MutatingPolicy");
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
