//! Generate phase: data, clone, cloneList, foreach, preconditions, missing sources.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn engine(text: &str) -> Engine {
    let source = Arc::new(SourceFile::new("p.yaml", text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    let loaded = load_policies(&source, docs);
    assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
    Engine::new(loaded.policies)
}

fn resources(text: &str) -> Vec<Resource> {
    let source = Arc::new(SourceFile::new("r.yaml", text));
    read_manifests(&source, Limits::default()).resources
}

fn run(policy: &str, inputs: &str) -> Vec<RuleGeneration> {
    let e = engine(policy);
    let rs = resources(inputs);
    let pool = SourcePool::new(rs.iter().collect());
    e.generate(&rs[0], &Request::default(), &pool)
        .into_iter()
        .flat_map(|p| p.rules)
        .collect()
}

const HEAD: &str = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n    match: {any: [{resources: {kinds: [Namespace]}}]}\n";

const NS: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, uid: u1}\n";

#[test]
fn data_is_substituted_and_labelled() {
    let p = format!(
        "{HEAD}    generate:\n      apiVersion: networking.k8s.io/v1\n      kind: NetworkPolicy\n      name: default-deny\n      namespace: '{{{{request.object.metadata.name}}}}'\n      synchronize: true\n      data:\n        spec: {{podSelector: {{}}, policyTypes: [Ingress, Egress]}}\n"
    );
    let rules = run(&p, NS);
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].status, Status::Pass);
    let g = &rules[0].generated[0];
    assert!(g.synchronize);
    assert_eq!(
        (g.namespace.as_str(), g.name.as_str()),
        ("team-a", "default-deny")
    );
    assert_eq!(
        g.resource,
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "default-deny", "namespace": "team-a", "labels": {
                "app.kubernetes.io/managed-by": "kyverno",
                "generate.kyverno.io/policy-name": "p",
                "generate.kyverno.io/policy-namespace": "",
                "generate.kyverno.io/rule-name": "r",
                "generate.kyverno.io/trigger-version": "v1",
                "generate.kyverno.io/trigger-group": "",
                "generate.kyverno.io/trigger-kind": "Namespace",
                "generate.kyverno.io/trigger-namespace": "",
                "generate.kyverno.io/trigger-uid": "u1"}},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
        })
    );
}

const CLONE: &str = "    generate:\n      apiVersion: v1\n      kind: Secret\n      name: regcred\n      namespace: '{{request.object.metadata.name}}'\n      clone: {namespace: default, name: regcred}\n";

#[test]
fn clone_copies_the_source_or_names_what_is_missing() {
    let p = format!("{HEAD}{CLONE}");
    let rules = run(&p, NS);
    assert!(rules[0].generated.is_empty());
    assert_eq!(
        rules[0].missing,
        [Missing {
            what: "v1 Secret regcred in namespace default".into(),
            clone_list: false,
        }]
    );
    let with_source = format!(
        "{NS}---\napiVersion: v1\nkind: Secret\nmetadata: {{name: regcred, namespace: default, uid: s1, resourceVersion: '9'}}\ndata: {{k: dg==}}\n"
    );
    let rules = run(&p, &with_source);
    assert!(rules[0].missing.is_empty());
    let r = &rules[0].generated[0].resource;
    assert_eq!(r["metadata"]["namespace"], "team-a");
    assert_eq!(r["data"], json!({"k": "dg=="}));
    assert!(r["metadata"].get("uid").is_none());
    assert_eq!(
        r["metadata"]["labels"]["generate.kyverno.io/source-uid"],
        "s1"
    );
}

#[test]
fn clone_list_takes_selected_sources() {
    let p = format!(
        "{HEAD}    generate:\n      namespace: '{{{{request.object.metadata.name}}}}'\n      cloneList:\n        namespace: default\n        kinds: [v1/ConfigMap]\n        selector: {{matchLabels: {{copy: 'yes'}}}}\n"
    );
    let inputs = format!(
        "{NS}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a, namespace: default, labels: {{copy: 'yes'}}}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: b, namespace: default}}\n"
    );
    let rules = run(&p, &inputs);
    let names: Vec<_> = rules[0].generated.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    assert_eq!(rules[0].generated[0].namespace, "team-a");
}

#[test]
fn foreach_generates_per_element_and_preconditions_skip() {
    let p = format!(
        "{HEAD}    generate:\n      foreach:\n      - list: request.object.metadata.labels.keys(@)\n        preconditions: {{all: [{{key: '{{{{element}}}}', operator: NotEquals, value: skip}}]}}\n        apiVersion: v1\n        kind: ConfigMap\n        name: 'cm-{{{{element}}}}'\n        namespace: '{{{{request.object.metadata.name}}}}'\n        data: {{data: {{index: '{{{{elementIndex}}}}'}}}}\n"
    );
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: n, labels: {a: '1', skip: '2', c: '3'}}\n";
    let rules = run(&p, ns);
    let names: Vec<_> = rules[0].generated.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["cm-a", "cm-c"]);
    let pre = format!(
        "{HEAD}    preconditions: {{all: [{{key: '{{{{request.object.metadata.name}}}}', operator: Equals, value: other}}]}}\n{CLONE}"
    );
    let rules = run(&pre, NS);
    assert_eq!(rules[0].status, Status::Skip);
    assert!(rules[0].missing.is_empty());
}

#[test]
fn existing_target_is_not_generated_again() {
    let p = format!(
        "{HEAD}    generate:\n      apiVersion: v1\n      kind: ConfigMap\n      name: c\n      namespace: '{{{{request.object.metadata.name}}}}'\n      data: {{data: {{a: b}}}}\n"
    );
    let inputs = format!(
        "{NS}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: team-a}}\n"
    );
    assert!(run(&p, &inputs)[0].generated.is_empty());
    assert_eq!(run(&p, NS)[0].generated.len(), 1);
}

#[test]
fn resource_comparison_follows_the_cli() {
    let a = json!({"kind": "X", "metadata": {"name": "n", "labels": {"generate.kyverno.io/rule-name": "r", "app.kubernetes.io/managed-by": "kyverno"}}, "spec": {"n": 1.0, "e": {}}});
    let e = json!({"kind": "X", "metadata": {"name": "n"}, "spec": {"n": 1}});
    assert!(labels::same_resource(&a, &e));
    let e2 = json!({"kind": "X", "metadata": {"name": "n"}, "spec": {"n": 2}});
    assert!(!labels::same_resource(&a, &e2));
}

/// A missing `clone` source fails the rule's generation (upstream returns an error); a
/// `cloneList` kind with no source is reported but is not a failure.
#[test]
fn missing_clone_fails_missing_clone_list_does_not() {
    let rules = run(&format!("{HEAD}{CLONE}"), NS);
    assert!(rules[0].failed());
    let p = format!(
        "{HEAD}    generate:\n      namespace: '{{{{request.object.metadata.name}}}}'\n      cloneList: {{namespace: default, kinds: [v1/Secret]}}\n"
    );
    let rules = run(&p, NS);
    assert_eq!(rules[0].missing.len(), 1);
    assert!(rules[0].missing[0].clone_list);
    assert!(!rules[0].failed());
}

/// DELETE: a matching rule fails (upstream's "old resource matched") and generates nothing.
#[test]
fn delete_fails_without_generating() {
    let e = engine(&format!("{HEAD}{CLONE}"));
    let rs = resources(NS);
    let pool = SourcePool::new(rs.iter().collect());
    let req = Request {
        operation: Operation::Delete,
        ..Request::default()
    };
    let rules: Vec<_> = e
        .generate(&rs[0], &req, &pool)
        .into_iter()
        .flat_map(|p| p.rules)
        .collect();
    assert_eq!(rules[0].status, Status::Fail);
    assert!(rules[0].generated.is_empty() && rules[0].missing.is_empty());
}

/// A PolicyException that covers the rule and matches the trigger skips it, with upstream's
/// message.
#[test]
fn exceptions_skip_generate_rules() {
    let text = "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: ex, namespace: kyverno}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Namespace, ConfigMap], names: [team-a, c]}}]}\n";
    let source = Arc::new(SourceFile::new("e.yaml", text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    let ex =
        crate::exception::load_documents(&source, docs.iter().map(|d| &d.root), true).exceptions;
    assert_eq!(ex.len(), 1);
    let e = engine(&format!("{HEAD}{CLONE}")).with_exceptions(ex);
    let rs = resources(NS);
    let pool = SourcePool::new(rs.iter().collect());
    let rules: Vec<_> = e
        .generate(&rs[0], &Request::default(), &pool)
        .into_iter()
        .flat_map(|p| p.rules)
        .collect();
    assert_eq!(rules[0].status, Status::Skip);
    assert_eq!(
        rules[0].message,
        "rule is skipped due to policy exception kyverno/ex"
    );
    assert!(rules[0].missing.is_empty());
}
