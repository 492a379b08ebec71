//! JSON patch and text-edit tests (mutate.md §5; the `--write` contract).

use super::edit;
use super::json_patch;
use crate::yaml::{Limits, Node, parse_documents};

fn yaml(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn jp(doc: &str, patch: &str) -> Result<serde_json::Value, String> {
    let mut d = yaml(doc);
    let ops = json_patch::parse(patch)?;
    json_patch::apply(&mut d, &ops)?;
    Ok(d.to_json())
}

#[test]
fn add_creates_missing_parents_and_minus_one_appends() {
    let out = jp("a: {}", "- {op: add, path: /b/c/0/d, value: 1}").unwrap();
    assert_eq!(out, serde_json::json!({"a": {}, "b": {"c": [{"d": 1}]}}));
    let out = jp(
        "l: [1, 2]",
        "[{\"op\": \"add\", \"path\": \"/l/-1\", \"value\": 3}]",
    )
    .unwrap();
    assert_eq!(out["l"], serde_json::json!([1, 2, 3]));
    let out = jp("l: [1, 2]", "- {op: add, path: /l/-, value: 3}").unwrap();
    assert_eq!(out["l"], serde_json::json!([1, 2, 3]));
}

/// Kyverno v1.19.0 (`kubectl-kyverno apply` of these five `add`s to one ConfigMap): a parent
/// created at an array index whose element is null is inserted before the null; an object
/// key holding null is replaced; past the end the array is padded with nulls.
#[test]
fn add_through_a_null_array_element_inserts_before_it() {
    let doc = "items: [null]\nlist: [1, null, 3]\nneg: [null]\nobj: {k: null}\nfar: [null]";
    let patch = "\
- {op: add, path: /items/0/mounts/-, value: a}
- {op: add, path: /list/1/x, value: b}
- {op: add, path: /neg/-1/y, value: c}
- {op: add, path: /obj/k/z, value: d}
- {op: add, path: /far/3/w, value: e}";
    assert_eq!(
        jp(doc, patch).unwrap(),
        serde_json::json!({
            "items": [{"mounts": ["a"]}, null],
            "list": [1, {"x": "b"}, null, 3],
            "neg": [null, {"y": "c"}],
            "obj": {"k": {"z": "d"}},
            "far": [null, null, null, {"w": "e"}],
        })
    );
    // A present element is descended into, not shifted.
    assert_eq!(
        jp("l: [{a: 1}]", "- {op: add, path: /l/0/b, value: 2}").unwrap(),
        serde_json::json!({"l": [{"a": 1, "b": 2}]})
    );
}

#[test]
fn remove_of_missing_path_is_a_no_op_test_failure_is_an_error() {
    assert_eq!(
        jp("a: 1", "- {op: remove, path: /x/y}").unwrap(),
        serde_json::json!({"a": 1})
    );
    assert_eq!(
        jp("l: [1, 2]", "- {op: remove, path: /l/-1}").unwrap()["l"],
        serde_json::json!([1])
    );
    assert!(jp("a: 1", "- {op: test, path: /a, value: 2}").is_err());
    assert!(jp("a: 1", "- {op: replace, path: /b, value: 2}").is_err());
    assert_eq!(
        jp("a: 1", "- {op: move, from: /a, path: /b}").unwrap(),
        serde_json::json!({"b": 1})
    );
}

const DEPLOY: &str = "\
# a deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # the name
  labels:
    app: web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web  # main
        image: 'nginx:1.27'
";

fn roundtrip(text: &str, after: &Node) -> String {
    let before = yaml(text);
    let edits = edit::diff(text, &before, after).unwrap();
    let out = edit::apply(text, &edits).unwrap();
    assert_eq!(yaml(&out).to_json(), after.to_json(), "{out}");
    out
}

#[test]
fn adding_a_label_touches_only_that_line() {
    let mut after = yaml(DEPLOY).to_json();
    after["metadata"]["labels"]["team"] = "a b: c".into();
    let out = roundtrip(DEPLOY, &Node::from_json(&after));
    assert_eq!(
        out,
        DEPLOY.replace("    app: web\n", "    app: web\n    team: \"a b: c\"\n")
    );
}

#[test]
fn changed_lists_and_new_blocks_reparse() {
    let mut after = yaml(DEPLOY).to_json();
    after["spec"]["template"]["spec"]["containers"] = serde_json::json!([
        {"name": "side", "image": "x", "ports": [{"containerPort": 80}]},
        {"name": "web", "image": "nginx:1.27"}
    ]);
    after["spec"]["template"]["metadata"] = serde_json::json!({"labels": {"a": "true"}});
    after["metadata"].as_object_mut().unwrap().remove("labels");
    let out = roundtrip(DEPLOY, &Node::from_json(&after));
    assert!(out.starts_with("# a deployment\n"));
    assert!(out.contains("name: web   # the name"));
    assert!(out.contains("a: \"true\""));
}

#[test]
fn flow_maps_get_entries_before_the_brace() {
    let text = "{\"metadata\": {\"name\": \"flow\", \"labels\": {\"app\": \"web\"}}}\n";
    let mut after = yaml(text).to_json();
    after["metadata"]["labels"]["team"] = "core".into();
    let out = roundtrip(text, &Node::from_json(&after));
    assert_eq!(
        out,
        "{\"metadata\": {\"name\": \"flow\", \"labels\": {\"app\": \"web\", \"team\": \"core\"}}}\n"
    );
}

#[test]
fn synthetic_namespace_is_not_written() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"flow\", \"labels\": {\"app\": \"web\"}}}\n";
    let r = crate::resource::Resource::from_document(yaml(text), None, 0).unwrap();
    let mut after = r.root.to_json();
    after["metadata"]["labels"]["team"] = "core".into();
    let edits = edit::diff(text, &r.root, &Node::from_json(&after)).unwrap();
    let out = edit::apply(text, &edits).unwrap();
    assert!(!out.contains("namespace"), "{out} {edits:?}");
}

#[test]
fn entries_after_a_block_scalar_and_a_patched_default_namespace() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  script: |\n    echo hi\n  # trailing comment\nother: 1\n";
    let r = crate::resource::Resource::from_document(yaml(text), None, 0).unwrap();
    let mut after = r.root.to_json();
    after["data"]["extra"] = "x".into();
    after["metadata"]["namespace"] = "team".into();
    let edits = edit::diff(text, &r.root, &Node::from_json(&after)).unwrap();
    let out = edit::apply(text, &edits).unwrap();
    assert_eq!(
        out,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: team\ndata:\n  script: |\n    echo hi\n  extra: x\n  # trailing comment\nother: 1\n"
    );
}

#[test]
fn a_list_emptied_by_a_patch_becomes_flow_empty() {
    let text =
        "spec:\n  volumes:\n    - name: a   # gone\n      hostPath: {path: /x}\n  other: 1\n";
    let mut after = yaml(text).to_json();
    after["spec"]["volumes"] = serde_json::json!([]);
    let out = roundtrip(text, &Node::from_json(&after));
    assert_eq!(out, "spec:\n  volumes: []\n  other: 1\n");
}

#[test]
fn crlf_files_keep_crlf() {
    let text = DEPLOY.replace('\n', "\r\n");
    let mut after = yaml(&text).to_json();
    after["metadata"]["labels"]["team"] = "x".into();
    after["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("app");
    after["spec"]["template"]["spec"]["containers"] =
        serde_json::json!([{"name": "side", "image": "s"}, {"name": "web", "image": "nginx:1.27"}]);
    let out = roundtrip(&text, &Node::from_json(&after));
    assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
    assert!(!out.contains("\r\r"), "{out:?}");
}

#[test]
fn yaml_flow_maps_get_plain_entries_json_gets_json() {
    let text = "metadata: {name: a, labels: {x: y}}\n";
    let mut after = yaml(text).to_json();
    after["metadata"]["labels"]["team"] = "a,b".into();
    after["metadata"]["labels"]["tier"] = "web".into();
    let out = roundtrip(text, &Node::from_json(&after));
    assert_eq!(
        out,
        "metadata: {name: a, labels: {x: y, team: \"a,b\", tier: web}}\n"
    );
}

#[test]
fn a_merge_of_maps_the_resource_has_is_known_to_change_nothing() {
    use super::merge::{is_noop, merge, value_eq};
    use super::merge_keys::{ListStrategy, SchemaType};
    let doc = yaml("metadata: {name: a, labels: {x: '1'}}\nspec: {containers: [{name: c}]}");
    for overlay in [
        "{}",
        "metadata: {}",
        "metadata: {labels: {}}",
        "{spec: {}, metadata: {labels: {}}}",
    ] {
        let o = yaml(overlay);
        assert!(is_noop(&doc, &o), "{overlay}");
        // What the merge itself gives: the same document.
        let ty = SchemaType::root("v1", "Pod");
        let merged = merge(Some(&doc), &o, ty, ListStrategy::Replace, "")
            .unwrap()
            .unwrap();
        assert!(value_eq(&merged.value, &doc.value), "{overlay}");
    }
    for overlay in [
        "metadata: {annotations: {}}",
        "metadata: {labels: {x: '1'}}",
        "metadata: {labels: null}",
        "metadata: {$patch: replace}",
        "spec: {containers: []}",
        "metadata: {name: {}}",
    ] {
        assert!(!is_noop(&doc, &yaml(overlay)), "{overlay}");
    }
}

/// An overlay seen to add nothing (`adds_nothing`) is one that preprocessing and the merge's
/// no-op test also find changes nothing; and the usual add-if-absent label patch is seen so
/// on a workload that has the label, and not on one that lacks it.
#[test]
fn overlays_seen_to_add_nothing_change_nothing() {
    let docs = [
        "metadata: {name: a, labels: {app: x, team: y}}\nspec: {replicas: 1}",
        "metadata: {name: a}\nspec: {template: {metadata: {labels: {app: x}}}}",
        "metadata: {name: a, labels: {}}",
        "metadata: x",
    ];
    let overlays = [
        "metadata: {labels: {+(app): z}}",
        "metadata: {labels: {+(app): z, +(team): w}}",
        "metadata: {labels: {+(other): z}}",
        "metadata: {labels: {app: z}}",
        "metadata: {+(labels): {app: z}}",
        "metadata: {labels: {(app): x}}",
        "metadata: {labels: {<(app): x}}",
        "metadata: {labels: {$patch: replace}}",
        "spec: {template: {metadata: {labels: {+(app): z}}}}",
        "spec: {}",
        "{}",
        "metadata: {labels: {=(app): x}}",
    ];
    let mut seen = 0;
    for d in docs {
        let doc = yaml(d);
        for o in overlays {
            let overlay = yaml(o);
            if super::adds_nothing(&overlay, &doc) {
                seen += 1;
                let mut pre = overlay.clone();
                let full = super::anchors::preprocess(&mut pre, &doc).is_err()
                    || super::merge::is_noop(&doc, &pre);
                assert!(full, "{o} on {d}");
            }
        }
    }
    assert!(seen >= 8, "only {seen} overlays were seen to add nothing");
    let labelled = yaml(docs[0]);
    let patch = yaml("metadata: {labels: {+(app): kpol}}");
    assert!(super::adds_nothing(&patch, &labelled));
    assert!(!super::adds_nothing(&patch, &yaml(docs[1])));
}

#[test]
fn merge_errors_name_the_types_with_their_article() {
    use super::merge::{MergeError, merge};
    use super::merge_keys::{ListStrategy, SchemaType};
    let doc = yaml("labels: {a: b}\nargs: [x]\nname: n");
    let error = |overlay: &str| {
        let ty = SchemaType::root("v1", "ConfigMap");
        match merge(Some(&doc), &yaml(overlay), ty, ListStrategy::Replace, "") {
            Err(MergeError(m)) => m,
            Ok(_) => panic!("{overlay} merged"),
        }
    };
    assert_eq!(
        error("labels: not-a-map"),
        "/labels: cannot replace an object with a string"
    );
    assert_eq!(
        error("args: {k: v}"),
        "/args: cannot merge an object into an array"
    );
    assert_eq!(
        error("labels: [x]"),
        "/labels: cannot merge a list into an object"
    );
}
