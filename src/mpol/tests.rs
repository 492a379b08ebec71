//! MutatingPolicy tests, after the cases of Kyverno's `pkg/cel/policies/mpol` tests: match and
//! no match, namespaced scope, false matchConditions, errors, JSONPatch and ApplyConfiguration,
//! autogen copies, and CEL PolicyExceptions.

use super::mutate;
use crate::exception::PolicyException;
use crate::mutate::PolicyMutation;
use crate::policy::Policy;
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::test_support::{load, resource};
use serde_json::json;

fn exceptions(text: &str) -> Vec<PolicyException> {
    let e = crate::test_support::exceptions(text);
    assert_eq!(e.len(), 1);
    e
}

fn run_with(
    policy: &Policy,
    r: &Resource,
    op: Operation,
    ex: &[PolicyException],
) -> Option<PolicyMutation> {
    let request = Request {
        operation: op,
        ..Request::default()
    };
    mutate(0, policy, r, &request, ex)
}

/// `(rule, status, message)` of each rule response, and the patched resource as JSON.
type Outcome = (Vec<(String, Status, String)>, serde_json::Value);

fn one(policy_text: &str, resource_text: &str) -> Option<Outcome> {
    let l = load(policy_text);
    assert!(
        l.diagnostics
            .iter()
            .all(|d| d.code == crate::diagnostic::Code::UnsupportedPolicy),
        "{:?}",
        l.diagnostics
    );
    let pm = run_with(
        &l.policies[0],
        &resource(resource_text),
        Operation::Create,
        &[],
    )?;
    let rules = pm
        .response
        .rules
        .iter()
        .map(|r| (r.rule.clone(), r.status, r.message.clone()))
        .collect();
    Some((rules, pm.patched.map_or(json!(null), |n| n.to_json())))
}

const MPOL: &str = "\
apiVersion: policies.kyverno.io/v1alpha1
kind: MutatingPolicy
metadata: {name: m}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: RESOURCES}
  matchConditions: CONDITIONS
  variables:
  - {name: team, expression: \"'blue'\"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >-
        EXPR
";

fn mpol(resources: &str, conditions: &str, expr: &str) -> String {
    MPOL.replace("RESOURCES", resources)
        .replace("CONDITIONS", conditions)
        .replace("EXPR", expr)
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {a: '1'}}\nspec:\n  containers: [{name: c, image: nginx}]\n";
const LABEL: &str = "Object{metadata: Object.metadata{labels: {'team': variables.team}}}";

#[test]
fn apply_configuration_merges_and_passes() {
    let (rules, patched) = one(&mpol("[pods]", "[]", LABEL), POD).unwrap();
    assert_eq!(rules, [(String::new(), Status::Pass, "success".to_owned())]);
    assert_eq!(
        patched["metadata"]["labels"],
        json!({"a": "1", "team": "blue"})
    );
    assert_eq!(patched["spec"]["containers"][0]["image"], "nginx");
}

#[test]
fn no_match_is_dropped_for_simple_constraints_and_kept_otherwise() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\n";
    assert_eq!(one(&mpol("[configmaps]", "[]", LABEL), svc), None);
    // A pod policy: its controllers copy has two resource rules, so it is kept, empty.
    let (rules, _) = one(&mpol("[pods]", "[]", LABEL), svc).unwrap();
    assert!(rules.is_empty());
    // Two resource rules: not simple, an empty response.
    let two = mpol("[configmaps]", "[]", LABEL).replace(
        "resources: [configmaps]}",
        "resources: [configmaps]}\n    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [secrets]}",
    );
    let (rules, patched) = one(&two, svc).unwrap();
    assert!(rules.is_empty());
    assert_eq!(patched, json!(null));
}

#[test]
fn false_match_conditions_skip_and_errors_are_errors() {
    let cond = "[{name: c, expression: \"variables.team == 'red'\"}]";
    let (rules, _) = one(&mpol("[pods]", cond, LABEL), POD).unwrap();
    assert_eq!(rules, [(String::new(), Status::Skip, "skip".to_owned())]);
    let cond = "[{name: c, expression: \"object.spec.missing == 1\"}]";
    let (rules, _) = one(&mpol("[pods]", cond, LABEL), POD).unwrap();
    assert_eq!(rules[0].0, "evaluation");
    assert_eq!(rules[0].1, Status::Error);
    assert!(
        rules[0].2.starts_with("failed to evaluate policy: "),
        "{}",
        rules[0].2
    );
    // A result that is not an Object literal, and a literal named off its field path.
    for (expr, why) in [
        ("{'metadata': {}}", "unsupported return type"),
        (
            "Object{metadata: Object.spec{}}",
            "type mismatch: unexpected type name",
        ),
    ] {
        let (rules, patched) = one(&mpol("[pods]", "[]", expr), POD).unwrap();
        assert_eq!(rules[0].1, Status::Error, "{expr}");
        assert!(rules[0].2.contains(why), "{expr}: {}", rules[0].2);
        // Nothing patched: the resource as it was.
        assert_eq!(patched["metadata"]["labels"], json!({"a": "1"}));
    }
}

#[test]
fn json_patch_mutations_run_in_order_and_a_failed_test_changes_nothing() {
    let text = "\
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: j}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >-
        [JSONPatch{op: 'add', path: '/metadata/annotations', value: {}},
         JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('k8s.io/x'), value: 'y'}]
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >-
        Object{metadata: Object.metadata{labels: {'seen': object.metadata.annotations['k8s.io/x']}}}
  - patchType: JSONPatch
    jsonPatch:
      expression: >-
        [JSONPatch{op: 'test', path: '/metadata/name', value: 'other'},
         JSONPatch{op: 'remove', path: '/spec'}]
";
    let (rules, patched) = one(text, POD).unwrap();
    assert_eq!(rules[0].1, Status::Pass, "{rules:?}");
    assert_eq!(patched["metadata"]["annotations"], json!({"k8s.io/x": "y"}));
    assert_eq!(patched["metadata"]["labels"]["seen"], "y");
    assert!(patched.get("spec").is_some(), "the failed test kept spec");
}

#[test]
fn json_patch_creates_no_parents_and_removes_only_what_exists() {
    let text = |expr: &str| {
        mpol("[pods]", "[]", "").replace(
            "  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: >-\n        \n",
            &format!("  - patchType: JSONPatch\n    jsonPatch:\n      expression: >-\n        {expr}\n"),
        )
    };
    for expr in [
        "[JSONPatch{op: 'add', path: '/metadata/annotations/a', value: 'b'}]",
        "[JSONPatch{op: 'remove', path: '/metadata/annotations'}]",
    ] {
        let (rules, _) = one(&text(expr), POD).unwrap();
        assert_eq!(rules[0].1, Status::Error, "{expr}");
        assert!(rules[0].2.contains("JSON Patch: "), "{}", rules[0].2);
        assert!(rules[0].2.contains("doc is missing path"), "{}", rules[0].2);
    }
}

#[test]
fn namespaced_policies_reach_only_their_namespace() {
    let text = mpol("[pods]", "[]", LABEL).replace(
        "kind: MutatingPolicy\nmetadata: {name: m}",
        "kind: NamespacedMutatingPolicy\nmetadata: {name: m, namespace: ns}",
    );
    // The scope is the engine's check (`Engine::mutating_policy`).
    let engine = crate::engine::Engine::new(load(&text).policies);
    assert_eq!(engine.policies()[0].key(), "ns/m");
    let request = Request {
        operation: Operation::Create,
        ..Request::default()
    };
    assert!(
        engine
            .mutating_policy(0, &resource(POD), &request)
            .is_some()
    );
    let other = POD.replace("namespace: ns", "namespace: elsewhere");
    assert!(
        engine
            .mutating_policy(0, &resource(&other), &request)
            .is_none()
    );
}

#[test]
fn autogen_copies_rewrite_conditions_and_apply_configurations() {
    let cond = "[{name: c, expression: \"object.spec.containers.size() > 0\"}]";
    let expr = "Object{spec: Object.spec{dnsPolicy: 'None'}}";
    let text = mpol("[pods]", cond, expr);
    let l = load(&text);
    let body = super::mutating_policy(&l.policies[0]).unwrap();
    // The policy, its controllers copy, its CronJob copy.
    assert_eq!(body.variants.len(), 3);
    assert_eq!(
        body.variants[1].match_conditions[0].1.text,
        "object.spec.template.spec.containers.size() > 0"
    );
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: nginx}]\n";
    let pm = run_with(&l.policies[0], &resource(deploy), Operation::Create, &[]).unwrap();
    assert_eq!(pm.response.rules[0].status, Status::Pass);
    let patched = pm.patched.unwrap().to_json();
    assert_eq!(patched["spec"]["template"]["spec"]["dnsPolicy"], "None");
    assert_eq!(patched["metadata"]["name"], "d");
    // A nested `Object.metadata` is left by the rewrite: Kubernetes' check makes it an error.
    let l = load(&mpol("[pods]", "[]", LABEL));
    let pm = run_with(&l.policies[0], &resource(deploy), Operation::Create, &[]).unwrap();
    assert_eq!(pm.response.rules[0].status, Status::Error);
    assert!(pm.response.rules[0].message.contains("type mismatch"));
    // Only the named controllers get copies.
    let only = text.replace(
        "  variables:",
        "  autogen: {podControllers: {controllers: [deployments]}}\n  variables:",
    );
    let l = load(&only);
    assert_eq!(
        super::mutating_policy(&l.policies[0])
            .unwrap()
            .variants
            .len(),
        2
    );
}

#[test]
fn cel_exceptions_skip_or_pass() {
    let l = load(&mpol("[pods]", "[]", LABEL));
    let ex = |result: &str| {
        exceptions(&format!(
            "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {{name: e, namespace: ns}}\nspec:\n  policyRefs: [{{name: m, kind: MutatingPolicy}}]\n  reportResult: {result}\n  matchConditions:\n  - name: byname\n    expression: \"object.metadata.name == 'p'\"\n"
        ))
    };
    for (result, status, word) in [
        ("skip", Status::Skip, "skipped"),
        ("pass", Status::Pass, "passed"),
    ] {
        let pm = run_with(
            &l.policies[0],
            &resource(POD),
            Operation::Create,
            &ex(result),
        )
        .unwrap();
        let r = &pm.response.rules[0];
        assert_eq!((r.rule.as_str(), r.status), ("exception", status));
        assert!(r.message.contains(word), "{}", r.message);
        // Not mutated.
        assert_eq!(
            pm.patched.unwrap().to_json()["metadata"]["labels"],
            json!({"a": "1"})
        );
    }
}

#[test]
fn load_problems_are_diagnostics_at_line_and_column() {
    let text = "\
apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata: {name: bad}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutations:
  - patchType: Merge
  - patchType: JSONPatch
    jsonPatch: {expression: '[JSONPatch{op: 1'}
";
    let l = load(text);
    let at: Vec<String> = l
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostic::Code::InvalidPolicy)
        .map(|d| d.position())
        .collect();
    assert_eq!(at, ["p.yaml:9:16", "p.yaml:11:46"], "{:?}", l.diagnostics);
    assert!(
        l.diagnostics[0]
            .message
            .contains("patchType must be ApplyConfiguration or JSONPatch")
    );
    // The policy still loads, and every evaluation is an error.
    let pm = run_with(&l.policies[0], &resource(POD), Operation::Create, &[]).unwrap();
    assert_eq!(pm.response.rules[0].status, Status::Error);
    assert!(
        pm.response.rules[0]
            .message
            .contains("failed to compile policy")
    );
}
