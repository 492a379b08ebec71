//! DeletingPolicy tests, after the cases of Kyverno v1.19's `pkg/cel/policies/dpol` engine
//! tests and `test/cli/test-deleting-policy`: match and no match, object and namespace
//! selectors (a Namespace selects by its own labels), namespaced scope, conditions and
//! variables, CEL PolicyExceptions (a match keeps the resource), errors and load problems.

use super::evaluate;
use crate::diagnostic::Code;
use crate::exception::PolicyException;
use crate::policy::PolicyKind;
use crate::report::{RuleType, Status};
use crate::request::{Operation, Request};
use crate::test_support::{exceptions, load, resource};

/// A DeletingPolicy `d` on pods with `extra` spec lines (indented two spaces).
fn dpol(kind: &str, extra: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1beta1\nkind: {kind}\nmetadata: {{name: d, namespace: test}}\nspec:\n  schedule: '*/1 * * * *'\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [''], apiVersions: [v1], resources: [pods]}}\n{extra}"
    )
}

const POD_TEST: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: test-nginx-1, namespace: test, labels: {a: '1'}}\nspec: {containers: [{name: c, image: nginx}]}\n";
const POD_OTHER: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: nginx-2, namespace: other}\nspec: {containers: [{name: c, image: nginx}]}\n";

fn verdict_with(
    policy_text: &str,
    r: &str,
    request: &Request,
    ex: &[PolicyException],
) -> Option<(Status, String)> {
    let l = load(policy_text);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let resp = evaluate(&l.policies[0], &resource(r), request, ex)?;
    assert_eq!(resp.rule, "d");
    assert_eq!(resp.rule_type, RuleType::Deletion);
    Some((resp.status, resp.message))
}

fn verdict(policy_text: &str, r: &str) -> Option<(Status, String)> {
    verdict_with(policy_text, r, &Request::default(), &[])
}

fn pass() -> Option<(Status, String)> {
    Some((Status::Pass, "resource matched".to_owned()))
}

fn fail() -> Option<(Status, String)> {
    Some((Status::Fail, "resource did not match".to_owned()))
}

#[test]
fn conditions_all_true_pass_and_one_false_fails() {
    // test/cli/test-deleting-policy/deleting-pod-by-name.
    let p = dpol(
        "DeletingPolicy",
        "  conditions:\n  - {name: ns, expression: 'object.metadata.namespace == \"test\"'}\n  - {name: byname, expression: 'object.metadata.name == \"test-nginx-1\"'}\n",
    );
    assert_eq!(verdict(&p, POD_TEST), pass());
    assert_eq!(verdict(&p, POD_OTHER), fail());
    // No conditions: every selected resource.
    assert_eq!(verdict(&dpol("DeletingPolicy", ""), POD_OTHER), pass());
}

#[test]
fn constraints_that_exclude_give_no_response_whatever_the_operation() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: test}\n";
    assert_eq!(verdict(&dpol("DeletingPolicy", ""), cm), None);
    // Operations in the resource rules are ignored: a CREATE-only rule selects on DELETE.
    let ops = dpol("DeletingPolicy", "").replace(
        "resources: [pods]",
        "resources: [pods], operations: [CREATE]",
    );
    let delete = Request {
        operation: Operation::Delete,
        ..Request::default()
    };
    assert_eq!(verdict_with(&ops, POD_TEST, &delete, &[]), pass());
    // No matchConstraints: nothing is selected (and Kyverno's admission check refuses it).
    let bare = "apiVersion: policies.kyverno.io/v1\nkind: DeletingPolicy\nmetadata: {name: d}\nspec: {schedule: '@hourly'}\n";
    let l = load(bare);
    assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
    assert!(l.diagnostics[0].message.contains("matchConstraints"));
    assert!(
        evaluate(
            &l.policies[0],
            &resource(POD_TEST),
            &Request::default(),
            &[]
        )
        .is_none()
    );
}

#[test]
fn object_and_namespace_selectors() {
    // test/cli/test-deleting-policy/object-selector.
    let p = dpol(
        "DeletingPolicy",
        "    objectSelector: {matchExpressions: [{key: a, operator: Exists}]}\n",
    );
    assert_eq!(verdict(&p, POD_TEST), pass());
    assert_eq!(verdict(&p, POD_OTHER), None);
    // A Namespace is selected by its own labels (engine_test.go
    // TestHandleCleanupIntegrationTestNamespaces, the CLI path).
    let ns = "apiVersion: policies.kyverno.io/v1\nkind: DeletingPolicy\nmetadata: {name: d}\nspec:\n  schedule: '*/5 * * * *'\n  matchConstraints:\n    resourceRules: [{apiGroups: [''], apiVersions: [v1], resources: [namespaces]}]\n    namespaceSelector: {matchExpressions: [{key: project-name, operator: Exists}]}\n";
    let project =
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: p1, labels: {project-name: p1}}\n";
    let system = "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n";
    assert_eq!(verdict(ns, project), pass());
    assert_eq!(verdict(ns, system), None);
}

#[test]
fn namespace_object_comes_from_the_values() {
    // test/cli/test-deleting-policy/deleting-pod-by-namespaceObject.
    let p = dpol(
        "DeletingPolicy",
        "  conditions:\n  - name: env\n    expression: has(namespaceObject.metadata.labels) && namespaceObject.metadata.labels.environment == 'test'\n",
    );
    let mut request = Request::default();
    request.namespace_labels.insert(
        "test".to_owned(),
        [("environment".to_owned(), "test".to_owned())].into(),
    );
    assert_eq!(verdict_with(&p, POD_TEST, &request, &[]), pass());
    // An unknown namespace: `namespaceObject` is null, reading it an error.
    let (status, _) = verdict(&p, POD_OTHER).unwrap();
    assert_eq!(status, Status::Error);
}

#[test]
fn a_namespaced_policy_reaches_only_its_namespace() {
    let l = load(&dpol("NamespacedDeletingPolicy", ""));
    assert_eq!(l.policies[0].kind, PolicyKind::NamespacedDeletingPolicy);
    // The scope is the engine's check (`Engine::deletion`).
    let engine = crate::engine::Engine::new(l.policies);
    let request = Request::default();
    assert!(engine.deletion(0, &resource(POD_TEST), &request).is_some());
    assert!(engine.deletion(0, &resource(POD_OTHER), &request).is_none());
}

#[test]
fn variables_feed_conditions_and_errors_are_errors() {
    let p = dpol(
        "DeletingPolicy",
        "  variables:\n  - {name: nm, expression: object.metadata.name}\n  conditions:\n  - {name: a, expression: 'variables.nm.startsWith(\"test\")'}\n",
    );
    assert_eq!(verdict(&p, POD_TEST), pass());
    assert_eq!(verdict(&p, POD_OTHER), fail());
    // An error, then a false condition: the false decides (Kyverno's `match`).
    let p = dpol(
        "DeletingPolicy",
        "  conditions:\n  - {name: e, expression: object.spec.missing == 1}\n  - {name: f, expression: 'false'}\n",
    );
    assert_eq!(verdict(&p, POD_TEST), fail());
    // Only errors: the error. `request` and `oldObject` are not bound for this kind.
    let p = dpol(
        "DeletingPolicy",
        "  conditions:\n  - {name: e, expression: request.operation == 'CREATE'}\n",
    );
    assert_eq!(verdict(&p, POD_TEST).unwrap().0, Status::Error);
}

#[test]
fn a_matching_exception_keeps_the_resource() {
    let p = dpol("DeletingPolicy", "");
    let ex = exceptions(
        "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: test}\nspec:\n  policyRefs: [{name: d, kind: DeletingPolicy}]\n  matchConditions:\n  - {name: byname, expression: \"object.metadata.name == 'test-nginx-1'\"}\n",
    );
    assert_eq!(verdict_with(&p, POD_TEST, &Request::default(), &ex), fail());
    assert_eq!(
        verdict_with(&p, POD_OTHER, &Request::default(), &ex),
        pass()
    );
    // `reportResult: pass` changes nothing: Kyverno v1.19.0's DeletingPolicy engine never
    // reads it (only the vpol, mpol and gpol engines do); the resource is kept all the same.
    let pass_result = exceptions(
        "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: test}\nspec:\n  policyRefs: [{name: d, kind: DeletingPolicy}]\n  reportResult: pass\n  matchConditions:\n  - {name: byname, expression: \"object.metadata.name == 'test-nginx-1'\"}\n",
    );
    assert_eq!(
        verdict_with(&p, POD_TEST, &Request::default(), &pass_result),
        fail()
    );
    // An exception for another kind does not apply.
    let other = exceptions(
        "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: test}\nspec:\n  policyRefs: [{name: d, kind: ValidatingPolicy}]\n",
    );
    assert_eq!(
        verdict_with(&p, POD_TEST, &Request::default(), &other),
        pass()
    );
    // An exception whose condition cannot be evaluated is the policy's error.
    let broken = exceptions(
        "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: test}\nspec:\n  policyRefs: [{name: d, kind: DeletingPolicy}]\n  matchConditions:\n  - {name: byname, expression: object.nope.x}\n",
    );
    let (status, _) = verdict_with(&p, POD_TEST, &Request::default(), &broken).unwrap();
    assert_eq!(status, Status::Error);
}

#[test]
fn load_problems_are_diagnostics_at_line_and_column() {
    let text = "\
apiVersion: policies.kyverno.io/v1alpha1
kind: DeletingPolicy
metadata: {name: d}
spec:
  schedule: 'every minute'
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], resources: [pods]}
  conditions:
  - {name: c, expression: 'object.metadata.name =='}
";
    let l = load(text);
    let at: Vec<(String, Code)> = l
        .diagnostics
        .iter()
        .map(|d| (d.position(), d.code))
        .collect();
    assert_eq!(
        at,
        [
            ("p.yaml:5:13".to_owned(), Code::InvalidPolicy),
            ("p.yaml:10:51".to_owned(), Code::InvalidPolicy)
        ],
        "{:?}",
        l.diagnostics
    );
    assert!(l.diagnostics[0].message.contains("cron"));
    // The bad schedule alone does not stop evaluation; the compile error makes it an error.
    let r = evaluate(
        &l.policies[0],
        &resource(POD_TEST),
        &Request::default(),
        &[],
    )
    .unwrap();
    assert_eq!(r.status, Status::Error);
    assert!(
        r.message.contains("failed to compile policy"),
        "{}",
        r.message
    );
    for good in [
        "*/5 * * * *",
        "0 0 1 * * ?",
        "@daily",
        "0 0 12 ? JAN-MAR MON-FRI 2027",
    ] {
        assert!(super::load::check_schedule(good).is_ok(), "{good}");
    }
    for bad in ["* * *", "@sometimes", "* * * * * * * *", "* * * * ;"] {
        assert!(super::load::check_schedule(bad).is_err(), "{bad}");
    }
}
