//! MutatingAdmissionPolicy tests, after Kyverno v1.19's `pkg/admissionpolicy/mutate.go` and
//! `test/cli/test-mutating-admission-policy`: matchConstraints without bindings, bindings'
//! matchResources (chained, the last that responds decides), false and failing
//! matchConditions, ApplyConfiguration through the deduced merge (lists replaced), JSONPatch,
//! patch errors dropping the response, and load problems at line:column.

use std::sync::Arc;

use super::mutate;
use crate::diagnostic::Code;
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::test_support::{load, resource};
use serde_json::json;

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default, labels: {app: game}}\ndata: {k: v}\n";

/// A MAP `m` on configmaps with `extra` spec lines, then `more` documents.
fn map(extra: &str, more: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata: {{name: m}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}\n{extra}{more}"
    )
}

const ADD_LABEL: &str = "  mutations:\n  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: \"Object{metadata: Object.metadata{labels: {'added': 'yes'}}}\"\n";

fn run(
    policy_text: &str,
    r: &str,
    request: &Request,
) -> Option<(Status, String, serde_json::Value)> {
    let l = load(policy_text);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    assert_eq!(l.policies.len(), 1, "{:?}", l.unsupported);
    let pm = mutate(0, &l.policies[0], &resource(r), request)?;
    let rule = &pm.response.rules[0];
    assert_eq!(rule.rule, "m");
    Some((
        rule.status,
        rule.message.clone(),
        pm.patched.unwrap().to_json(),
    ))
}

#[test]
fn apply_configuration_merges_maps_and_passes_whatever_the_operation() {
    // The CLI always applies MAPs as a CREATE: an UPDATE request still matches CREATE rules.
    let update = Request {
        operation: Operation::Update,
        ..Request::default()
    };
    let (status, message, out) = run(&map(ADD_LABEL, ""), CM, &update).unwrap();
    assert_eq!(
        (status, message.as_str()),
        (Status::Pass, "mutation is successfully applied")
    );
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "game", "added": "yes"})
    );
    // A Pod is not matched: no response.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n";
    assert!(run(&map(ADD_LABEL, ""), pod, &Request::default()).is_none());
}

#[test]
fn the_deduced_merge_replaces_lists() {
    // smd::apply_deduced: no merge keys without a schema, a list is replaced wholesale.
    let p = map(
        "  mutations:\n  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: \"Object{spec: Object.spec{containers: [Object.spec.containers{name: 'sidecar', image: 'busybox'}]}}\"\n",
        "",
    )
    .replace("resources: [configmaps]", "resources: [pods]");
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: app, image: nginx}]}\n";
    let (status, _, out) = run(&p, pod, &Request::default()).unwrap();
    assert_eq!(status, Status::Pass);
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "sidecar", "image": "busybox"}])
    );
}

#[test]
fn json_patch_and_patch_errors() {
    let p = map(
        "  mutations:\n  - patchType: JSONPatch\n    jsonPatch:\n      expression: \"[JSONPatch{op: 'add', path: '/metadata/labels/x', value: 'y'}]\"\n",
        "",
    );
    let (status, _, out) = run(&p, CM, &Request::default()).unwrap();
    assert_eq!(status, Status::Pass);
    assert_eq!(out["metadata"]["labels"]["x"], "y");
    // A patch that fails (no parent is created on add): the response is dropped.
    let bad = p.replace("/metadata/labels/x", "/spec/nothing/x");
    assert!(run(&bad, CM, &Request::default()).is_none());
    // `params` without a binding that supplies them: undeclared, the patch fails, dropped.
    let params = p.replace("value: 'y'", "value: params.data.v");
    assert!(run(&params, CM, &Request::default()).is_none());
}

#[test]
fn match_conditions_skip_or_drop() {
    let cond = |expr: &str, policy: &str| {
        format!(
            "{ADD_LABEL}  failurePolicy: {policy}\n  variables:\n  - {{name: app, expression: object.metadata.labels.app}}\n  matchConditions:\n  - {{name: c, expression: \"{expr}\"}}\n"
        )
    };
    let (status, message, out) = run(
        &map(&cond("variables.app == 'other'", "Fail"), ""),
        CM,
        &Request::default(),
    )
    .unwrap();
    assert_eq!(
        (status, message.as_str()),
        (Status::Skip, "match conditions aren't met")
    );
    assert_eq!(out["metadata"]["labels"], json!({"app": "game"}));
    // Variables are visible to matchConditions offline.
    assert_eq!(
        run(
            &map(&cond("variables.app == 'game'", "Fail"), ""),
            CM,
            &Request::default()
        )
        .unwrap()
        .0,
        Status::Pass
    );
    // An error: no response under Fail, skip under Ignore.
    assert!(
        run(
            &map(&cond("object.nope.x == 1", "Fail"), ""),
            CM,
            &Request::default()
        )
        .is_none()
    );
    assert_eq!(
        run(
            &map(&cond("object.nope.x == 1", "Ignore"), ""),
            CM,
            &Request::default()
        )
        .unwrap()
        .0,
        Status::Skip
    );
}

#[test]
fn bindings_match_by_their_resources_and_chain() {
    let binding = |name: &str, selector: &str| {
        format!(
            "---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {{name: {name}}}\nspec:\n  policyName: m\n{selector}"
        )
    };
    // The policy's own constraints are not consulted once it has bindings.
    let secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\n";
    let all = map(ADD_LABEL, &binding("b", ""));
    assert_eq!(
        run(&all, secret, &Request::default()).unwrap().0,
        Status::Pass
    );
    // A binding whose matchResources exclude the resource: no response.
    let only_team = map(
        ADD_LABEL,
        &binding(
            "b",
            "  matchResources:\n    objectSelector: {matchLabels: {team: a}}\n",
        ),
    );
    assert!(run(&only_team, CM, &Request::default()).is_none());
    // Two matching bindings: the second mutates what the first left (same label, one pass).
    let two = map(
        ADD_LABEL,
        &format!("{}{}", binding("b1", ""), binding("b2", "")),
    );
    let (status, _, out) = run(&two, CM, &Request::default()).unwrap();
    assert_eq!(status, Status::Pass);
    assert_eq!(out["metadata"]["labels"]["added"], "yes");
}

#[test]
fn params_come_from_the_param_resources() {
    // test/cli/test-mutating-admission-policy/with-params and with-two-params.
    let add = "  mutations:\n  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: \"Object{metadata: Object.metadata{labels: {'v': PARAM}}}\"\n";
    let binding = |param_ref: &str| {
        format!(
            "---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {{name: b}}\nspec:\n  policyName: m\n  paramRef: {param_ref}\n"
        )
    };
    let param = |name: &str, ns: &str, v: &str| {
        crate::yaml::Node::from_json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": {"type": "param"}}, "data": {"v": v}}))
    };
    let request = Request {
        params: Arc::new(vec![
            param("p1", "default", "one"),
            param("p2", "other", "two"),
        ]),
        ..Request::default()
    };
    let by = |param_ref: &str, expr: &str| {
        run(
            &map(&add.replace("PARAM", expr), &binding(param_ref)),
            CM,
            &request,
        )
        .map(|(s, _, out)| (s, out["metadata"]["labels"]["v"].clone()))
    };
    assert_eq!(
        by("{name: p2}", "params.data.v"),
        Some((Status::Pass, json!("two")))
    );
    assert_eq!(
        by("{namespace: default}", "params.data.v"),
        Some((Status::Pass, json!("one")))
    );
    assert_eq!(
        by(
            "{selector: {matchLabels: {type: param}}}",
            "params.items[1].data.v"
        ),
        Some((Status::Pass, json!("two")))
    );
    // No param found: `params` is undeclared, the patch fails, the response is dropped.
    assert_eq!(by("{name: missing}", "params.data.v"), None);
}

#[test]
fn load_problems_are_diagnostics_at_line_and_column() {
    let text = "\
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata: {name: m}
spec:
  mutations:
  - patchType: Strategic
  - patchType: JSONPatch
    jsonPatch: {expression: '[JSONPatch{op: 1'}
";
    let l = load(text);
    let at: Vec<String> = l
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::InvalidPolicy)
        .map(|d| d.position())
        .collect();
    assert_eq!(at, ["p.yaml:6:16", "p.yaml:8:46"], "{:?}", l.diagnostics);
    // The policy loads and mutates nothing (the CLI drops the response).
    assert!(mutate(0, &l.policies[0], &resource(CM), &Request::default()).is_none());
}
