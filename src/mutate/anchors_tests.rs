//! Strategic merge with anchors, on the examples of mutate.md §4.

use crate::mutate::strategic_merge;
use crate::yaml::{Limits, Node, parse_documents};

fn yaml(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn psm(resource: &str, overlay: &str) -> serde_json::Value {
    let r = yaml(resource);
    let out = strategic_merge(&r, &yaml(overlay), "v1", "Pod").unwrap();
    out.to_json()
}

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {tier: web}}
spec:
  containers:
  - {name: app, image: 'nginx:latest'}
  - {name: side, image: 'envoy:1.30'}
";

#[test]
fn add_if_absent_adds_only_missing_keys() {
    let out = psm(POD, "metadata: {labels: {+(tier): db, +(team): x}}");
    assert_eq!(
        out["metadata"]["labels"],
        serde_json::json!({"tier": "web", "team": "x"})
    );
}

#[test]
fn conditional_list_element_selects_by_name_and_moves_to_front() {
    let out = psm(
        POD,
        "spec: {containers: [{(image): '*:1.30', imagePullPolicy: Always}]}",
    );
    let c = &out["spec"]["containers"];
    assert_eq!(c[0]["name"], "side");
    assert_eq!(c[0]["imagePullPolicy"], "Always");
    assert_eq!(c[1]["name"], "app");
    assert!(c[1].get("imagePullPolicy").is_none());
}

#[test]
fn failed_map_condition_discards_the_whole_patch() {
    let out = psm(
        POD,
        "metadata: {labels: {(tier): db}}\nspec: {+(priorityClassName): x}",
    );
    assert!(out["spec"].get("priorityClassName").is_none());
    let out = psm(
        POD,
        "metadata: {labels: {(tier): web}}\nspec: {+(priorityClassName): x}",
    );
    assert_eq!(out["spec"]["priorityClassName"], "x");
}

#[test]
fn global_anchor_in_list_discards_unless_some_element_matches() {
    let overlay = "spec: {containers: [{<(image): 'nginx:*'}], +(hostNetwork): false}";
    assert_eq!(psm(POD, overlay)["spec"]["hostNetwork"], false);
    let overlay = "spec: {containers: [{<(image): 'redis:*'}], +(hostNetwork): false}";
    assert!(psm(POD, overlay)["spec"].get("hostNetwork").is_none());
}

#[test]
fn new_container_is_prepended_and_patch_delete_removes() {
    let out = psm(POD, "spec: {containers: [{name: new, image: x}]}");
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["new", "app", "side"]);
    let out = psm(POD, "spec: {containers: [{name: side, $patch: delete}]}");
    assert_eq!(out["spec"]["containers"].as_array().unwrap().len(), 1);
}

#[test]
fn null_removes_and_lists_without_keys_are_replaced() {
    let r = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {a: '1', b: '2'}}\nspec: {tolerations: [{key: a}]}\n";
    let out = psm(
        r,
        "metadata: {annotations: {a: null}}\nspec: {tolerations: [{key: b}]}",
    );
    assert_eq!(
        out["metadata"]["annotations"],
        serde_json::json!({"b": "2"})
    );
    assert_eq!(
        out["spec"]["tolerations"],
        serde_json::json!([{"key": "b"}])
    );
}

#[test]
fn add_anchor_in_list_applies_to_every_named_element() {
    let out = psm(
        POD,
        "spec: {containers: [{(name): '*', securityContext: {+(privileged): false}}]}",
    );
    for c in out["spec"]["containers"].as_array().unwrap() {
        assert_eq!(c["securityContext"]["privileged"], false);
    }
}

#[test]
fn empty_maps_are_stripped_from_the_overlay() {
    let out = psm(POD, "metadata: {annotations: {}}");
    assert!(out["metadata"].get("annotations").is_none());
}

/// Upstream deletes anchored list elements by their index in a snapshot of the list, on the
/// already-shortened list: with two anchored elements first, the wrong ones go (§4.4).
#[test]
fn deletion_index_defect_is_reproduced() {
    let mut overlay = yaml(
        "spec: {containers: [{(name): zz, image: q}, {(name): yy, image: r}, {name: x1}, {name: y1}]}",
    );
    super::preprocess(&mut overlay, &yaml(POD)).unwrap();
    let c = overlay.to_json()["spec"]["containers"].clone();
    assert_eq!(
        c,
        serde_json::json!([{"(name)": "yy", "image": "r"}, {"name": "y1"}])
    );
}

#[test]
fn finalizers_merge_as_a_set_in_built_in_kinds_only() {
    let r = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, finalizers: [a, b]}\n";
    let out = psm(r, "metadata: {finalizers: [c, a]}");
    assert_eq!(
        out["metadata"]["finalizers"],
        serde_json::json!(["c", "a", "b"])
    );
    let crd = yaml("apiVersion: x.io/v1\nkind: W\nmetadata: {name: p, finalizers: [a, b]}\n");
    let out = strategic_merge(&crd, &yaml("metadata: {finalizers: [c]}"), "x.io/v1", "W").unwrap();
    assert_eq!(
        out.to_json()["metadata"]["finalizers"],
        serde_json::json!(["c"])
    );
}
