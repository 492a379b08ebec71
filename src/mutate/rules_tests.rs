//! Rule-level behaviour (mutate.md §2, §4.4–4.6, §6): statuses and messages, rule order and
//! cascading, applyRules One, merge keys and directives, foreach order, preprocessing quirks.

use std::sync::Arc;

use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::report::Status;
use crate::request::Request;
use crate::resource::Resource;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn engine(text: &str) -> Engine {
    let source = Arc::new(SourceFile::new("p.yaml", text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    let loaded = load_policies(&source, docs);
    assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
    Engine::new(loaded.policies)
}

fn resource(text: &str) -> Resource {
    let source = Arc::new(SourceFile::new("r.yaml", text));
    read_manifests(&source, Limits::default())
        .resources
        .remove(0)
}

fn policy(name: &str, apply_one: bool, rules: &[(&str, &str)]) -> String {
    let mut s = format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: {name}}}\nspec:\n  applyRules: {}\n  rules:\n",
        if apply_one { "One" } else { "All" }
    );
    for (rule, mutate) in rules {
        s.push_str(&format!(
            "  - name: {rule}\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    mutate: {mutate}\n"
        ));
    }
    s
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n  - {name: a, image: 'a:1', ports: [{containerPort: 80}]}\n  - {name: b, image: 'b:1'}\n";

fn run(policies: &str, pod: &str) -> (serde_json::Value, Vec<(String, Status, String)>) {
    let e = engine(policies);
    let m = e.mutate(&resource(pod), &Request::default());
    let rules = m
        .policies
        .iter()
        .flat_map(|p| p.response.rules.iter())
        .map(|r| (r.rule.clone(), r.status, r.message.clone()))
        .collect();
    (m.resource.root.to_json(), rules)
}

#[test]
fn statuses_messages_and_cascading_rules() {
    let p = policy(
        "p",
        false,
        &[
            (
                "label",
                "{patchStrategicMerge: {metadata: {labels: {tier: web}}}}",
            ),
            (
                "again",
                "{patchStrategicMerge: {metadata: {labels: {tier: web}}}}",
            ),
            (
                "guarded",
                "{patchStrategicMerge: {metadata: {labels: {(tier): web}}, spec: {hostNetwork: false}}}",
            ),
        ],
    );
    let (out, rules) = run(&p, POD);
    assert_eq!(
        rules,
        [
            (
                "label".into(),
                Status::Pass,
                "mutated Pod/p in namespace ns".into()
            ),
            ("again".into(), Status::Skip, "no patches applied".into()),
            (
                "guarded".into(),
                Status::Pass,
                "mutated Pod/p in namespace ns".into()
            ),
        ]
    );
    assert_eq!(out["spec"]["hostNetwork"], false);
}

#[test]
fn apply_rules_one_stops_after_the_first_pass_and_policies_chain() {
    let p1 = policy(
        "first",
        true,
        &[
            ("noop", "{patchStrategicMerge: {metadata: {name: p}}}"),
            (
                "one",
                "{patchStrategicMerge: {metadata: {labels: {a: '1'}}}}",
            ),
            (
                "two",
                "{patchStrategicMerge: {metadata: {labels: {b: '1'}}}}",
            ),
        ],
    );
    let p2 = policy(
        "second",
        false,
        &[(
            "three",
            "{patchStrategicMerge: {metadata: {labels: {(a): '1', c: '1'}}}}",
        )],
    );
    let (out, rules) = run(&format!("{p1}---\n{p2}"), POD);
    let names: Vec<&str> = rules.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["noop", "one", "three"]);
    assert_eq!(
        out["metadata"]["labels"],
        serde_json::json!({"a": "1", "c": "1"})
    );
}

#[test]
fn ports_merge_by_port_and_protocol_and_patch_replace_replaces() {
    let p = policy(
        "p",
        false,
        &[
            (
                "ports",
                "{patchStrategicMerge: {spec: {containers: [{name: a, ports: [{containerPort: 80, protocol: TCP, name: http}]}]}}}",
            ),
            (
                "replace",
                "{patchStrategicMerge: {spec: {containers: [{name: b, image: 'b:2', $patch: replace}]}}}",
            ),
        ],
    );
    let (out, _) = run(&p, POD);
    let c = &out["spec"]["containers"];
    // Mentioning `b` moved it to the front; `a`'s port matched (protocol empty on one side).
    assert_eq!(c[1]["name"], "a");
    assert_eq!(c[1]["ports"].as_array().map(Vec::len), Some(1));
    assert_eq!(c[1]["ports"][0]["name"], "http");
    assert_eq!(c[0]["name"], "b");
    assert_eq!(c[0]["image"], "b:2");
}

#[test]
fn json_patch_errors_and_failed_test_are_errors() {
    let p = policy(
        "p",
        false,
        &[(
            "t",
            "{patchesJson6902: \"- {op: test, path: /metadata/name, value: q}\"}",
        )],
    );
    let (_, rules) = run(&p, POD);
    assert_eq!(rules[0].1, Status::Error);
    assert!(
        rules[0].2.starts_with("failed to patch resource: "),
        "{}",
        rules[0].2
    );
}

#[test]
fn foreach_strategic_merge_keeps_container_order_and_reports_no_change() {
    let p = policy(
        "p",
        false,
        &[
            (
                "pull",
                "{foreach: [{list: request.object.spec.containers, patchStrategicMerge: {spec: {containers: [{name: '{{ element.name }}', imagePullPolicy: Always}]}}}]}",
            ),
            (
                "none",
                "{foreach: [{list: request.object.spec.containers, patchStrategicMerge: {spec: {containers: [{name: '{{ element.name }}', imagePullPolicy: Always}]}}}]}",
            ),
        ],
    );
    let (out, rules) = run(&p, POD);
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        rules[1],
        ("none".into(), Status::Skip, "0 elements processed".into())
    );
}

#[test]
fn unresolvable_variables_are_errors() {
    let p = policy(
        "p",
        false,
        &[(
            "v",
            "{patchStrategicMerge: {metadata: {labels: {x: '{{ request.object.metadata.nope }}'}}}}",
        )],
    );
    let (_, rules) = run(&p, POD);
    assert_eq!(rules[0].1, Status::Error);
    assert!(
        rules[0].2.starts_with("variable substitution failed"),
        "{}",
        rules[0].2
    );
}
