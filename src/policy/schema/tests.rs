//! Schema data and checks: the data covers every kind kpol loads; unknown fields and wrong
//! scalar types are errors at their place; open areas and nulls are not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::policy::load::tests::load;

#[test]
fn committed_data_parses() {
    let s = Schemas::parse(DATA).unwrap();
    assert!(s.nodes.len() > 50);
    assert!(schemas().is_some());
}

#[test]
fn malformed_data_is_refused() {
    assert!(Schemas::parse("0 o a=5\n").is_err());
    assert!(Schemas::parse("1 s\n").is_err());
    assert!(Schemas::parse("0 q\n").is_err());
    assert!(Schemas::parse("kind kyverno.io v1 ClusterPolicy 3\n0 s\n").is_err());
}

/// Every (apiVersion, kind) that kpol's loaders read has a schema: the kinds of
/// `kinds::LOADERS` (each version Kyverno serves) and those `policy::load` reads itself.
#[test]
fn data_covers_every_kind_kpol_loads() {
    let s = schemas().unwrap();
    for l in crate::kinds::LOADERS {
        // Kubernetes 1.32, whose built-in schemas the Kyverno CLI loads with, serves
        // MutatingAdmissionPolicy at v1alpha1 only: there is no v1beta1 schema to check with.
        if l.version == Some("v1beta1") && l.kind == "MutatingAdmissionPolicy" {
            assert!(s.root(l.group, "v1beta1", l.kind).is_none());
            continue;
        }
        match l.version {
            Some(v) => assert!(s.root(l.group, v, l.kind).is_some(), "{} {v}", l.kind),
            None => assert!(s.covers(l.group, l.kind), "{}", l.kind),
        }
    }
    for (g, v, k) in [
        ("kyverno.io", "v1", "ClusterPolicy"),
        ("kyverno.io", "v2beta1", "ClusterPolicy"),
        ("kyverno.io", "v1", "Policy"),
        ("kyverno.io", "v2beta1", "Policy"),
        ("kyverno.io", "v2", "PolicyException"),
        ("kyverno.io", "v2beta1", "PolicyException"),
        ("policies.kyverno.io", "v1", "PolicyException"),
        ("policies.kyverno.io", "v1beta1", "PolicyException"),
        ("policies.kyverno.io", "v1", "ValidatingPolicy"),
        ("policies.kyverno.io", "v1beta1", "ValidatingPolicy"),
        ("policies.kyverno.io", "v1alpha1", "ValidatingPolicy"),
        ("policies.kyverno.io", "v1", "NamespacedValidatingPolicy"),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
        ),
    ] {
        assert!(s.root(g, v, k).is_some(), "{g}/{v} {k}");
    }
}

fn schema_errors(text: &str) -> Vec<String> {
    load(text)
        .diagnostics
        .into_iter()
        .filter(|d| d.code == Code::Schema)
        .map(|d| {
            let lc = d.location.unwrap().start.unwrap();
            format!("{}:{}: {}", lc.line, lc.column, d.message)
        })
        .collect()
}

#[test]
fn unknown_field_in_validate_is_an_error_at_its_key() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      messages: typo
      pattern:
        spec:
          anything: goes
";
    assert_eq!(
        schema_errors(text),
        ["13:7: ClusterPolicy p: spec.rules[0].validate: unknown field \"messages\""]
    );
    // The policy itself still loads: the error makes the run fail (exit 2), the findings stay.
    assert_eq!(load(text).policies.len(), 1);
}

#[test]
fn unknown_fields_in_metadata_spec_and_exceptions() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
  lables: {a: b}
spec:
  backgrond: true
  rules: []
---
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: e
spec:
  exceptions:
  - policyName: p
    ruleNames: [r]
    rule: x
  match:
    any:
    - resources:
        kinds: [Pod]
";
    assert_eq!(
        schema_errors(text),
        [
            "5:3: ClusterPolicy p: metadata: unknown field \"lables\"",
            "7:3: ClusterPolicy p: spec: unknown field \"backgrond\"",
            "18:5: PolicyException e: spec.exceptions[0]: unknown field \"rule\"",
        ]
    );
}

#[test]
fn wrong_scalar_types_are_errors_once() {
    let text = "\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: v
spec:
  validationActions: Deny
  evaluation:
    background:
      enabled: maybe
  validations:
  - expression: 'true'
    message: 5
";
    assert_eq!(
        schema_errors(text),
        [
            "6:22: ValidatingPolicy v: spec.validationActions: Invalid value: \"string\": spec.validationActions in body must be of type array",
            "9:16: ValidatingPolicy v: spec.evaluation.background.enabled: Invalid value: \"string\": spec.evaluation.background.enabled in body must be of type boolean",
        ]
    );
    // `message: 5`: the ValidatingPolicy loader says it; the schema check does not repeat it.
    let at_twelve = load(text)
        .diagnostics
        .into_iter()
        .filter(|d| d.location.as_ref().unwrap().start.unwrap().line == 12)
        .count();
    assert_eq!(at_twelve, 1);
}

#[test]
fn open_areas_nulls_and_unknown_kinds_are_not_checked() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
  annotations: null
spec:
  background: null
  rules:
  - name: r
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      pattern:
        whatever: {deep: [1, true]}
      deny: null
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  nonsense: 1
";
    assert_eq!(schema_errors(text), Vec::<String>::new());
}

/// A type error the ClusterPolicy loader reports itself (invalid-policy) is not repeated.
#[test]
fn loader_type_errors_are_not_repeated() {
    let text = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  background: sometimes
  rules: []
";
    let l = load(text);
    let at_six: Vec<_> = l
        .diagnostics
        .iter()
        .filter(|d| d.location.as_ref().unwrap().start.unwrap().line == 6)
        .collect();
    assert_eq!(at_six.len(), 1, "{at_six:?}");
}

/// A field the CRD requires and the document lacks is an error at the map that lacks it,
/// once even where the loader says so too (a rule without `match`).
#[test]
fn missing_required_fields_are_errors() {
    let text = "\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: e
spec:
  exceptions:
  - ruleNames: [r]
  match:
    any:
    - resources:
        kinds: [Pod]
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    validate:
      pattern: {}
";
    assert_eq!(
        schema_errors(text),
        ["7:5: PolicyException e: spec.exceptions[0].policyName: Required value"]
    );
    let l = load(text);
    let at_rule = l
        .diagnostics
        .iter()
        .filter(|d| d.location.as_ref().unwrap().start.unwrap().line == 19)
        .count();
    assert_eq!(at_rule, 1, "{:?}", l.diagnostics);
}

#[test]
fn kind_entries_leave_out_wildcard_kinds_with_a_subresource() {
    let raw = crate::yaml::parse_documents(
        "spec:\n  rules:\n  - name: r\n    match:\n      any:\n      - resources:\n          kinds: ['*/scale', Deployment/scale, 'v1/*', Podd]\n",
        crate::yaml::Limits::default(),
    )
    .unwrap()
    .remove(0)
    .root;
    let kinds: Vec<String> = kind_entries(&raw).into_iter().map(|(_, k, _)| k).collect();
    assert_eq!(kinds, ["Deployment", "Podd"]);
}
