//! The typed merge against what structured-merge-diff v6.4.2 and the apiserver's
//! `ApplyStructuredMergeDiff` (k8s.io/apiserver v0.36.3) do, with the Kubernetes 1.32 schemas.

use serde_json::json;

use super::schema::{BUILTIN, ListKind, Schema, TypeRef};
use super::{Options, SmdError, apply, apply_deduced, apply_with};
use crate::yaml::{Limits, Node, parse_documents};

fn yaml(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn schema() -> &'static Schema {
    BUILTIN.as_ref().unwrap()
}

fn field_type<'a>(schema: &'a Schema, ty: &str, field: &str) -> &'a TypeRef {
    let atom = schema.named(ty).unwrap_or_else(|| panic!("no type {ty}"));
    &atom.map.as_ref().unwrap().field(field).unwrap().ty
}

fn list_kind(schema: &Schema, ty: &str, field: &str) -> ListKind {
    let view = schema.resolve(field_type(schema, ty, field)).unwrap();
    view.list.unwrap().kind.clone()
}

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
    tier: front
spec:
  containers:
  - name: app
    image: nginx:1.25
    ports:
    - containerPort: 80
      protocol: TCP
    env:
    - name: A
      value: '1'
    - name: B
      value: '2'
  - name: sidecar
    image: envoy
  tolerations:
  - key: k
    operator: Exists
";

fn pod_apply(patch: serde_json::Value) -> Result<serde_json::Value, SmdError> {
    apply(&yaml(POD), &Node::from_json(&patch), "v1", "Pod").map(|n| n.to_json())
}

fn container<'a>(pod: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

#[test]
fn builtin_schema_parses_and_knows_the_common_kinds() {
    let s = schema();
    for (gv, kind, ty) in [
        ("apps/v1", "Deployment", "io.k8s.api.apps.v1.Deployment"),
        ("v1", "Pod", "io.k8s.api.core.v1.Pod"),
        ("batch/v1", "CronJob", "io.k8s.api.batch.v1.CronJob"),
    ] {
        let root = s.kind(gv, kind).unwrap_or_else(|| panic!("{gv} {kind}"));
        assert!(std::ptr::eq(
            s.resolve(&TypeRef::named(root)).unwrap().map.unwrap(),
            s.named(ty).unwrap().map.as_ref().unwrap()
        ));
    }
    // A kind is reachable only through its own group-version's document.
    assert!(s.kind("apps/v1", "Pod").is_none());
    assert!(!s.has_group_version("kyverno.io/v1"));
    assert_eq!(
        list_kind(s, "io.k8s.api.core.v1.Container", "ports"),
        ListKind::Map(vec!["containerPort".into(), "protocol".into()])
    );
    assert_eq!(
        list_kind(s, "io.k8s.api.core.v1.PodSpec", "containers"),
        ListKind::Map(vec!["name".into()])
    );
    assert_eq!(
        list_kind(s, "io.k8s.api.core.v1.PodSpec", "tolerations"),
        ListKind::Atomic
    );
    assert_eq!(
        list_kind(
            s,
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "finalizers"
        ),
        ListKind::Set
    );
    // The protocol key falls back to its default.
    let port = s.named("io.k8s.api.core.v1.ContainerPort").unwrap();
    let protocol = port.map.as_ref().unwrap().field("protocol").unwrap();
    assert_eq!(
        protocol.default,
        Some(crate::yaml::Value::Str("TCP".into()))
    );
    // Atomic structs and maps.
    let selector = s
        .named("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")
        .unwrap();
    assert!(selector.map.as_ref().unwrap().atomic);
    let node_selector = s
        .resolve(field_type(s, "io.k8s.api.core.v1.PodSpec", "nodeSelector"))
        .unwrap();
    assert!(node_selector.map_atomic);
}

#[test]
fn a_schema_line_with_an_unknown_reference_is_an_error() {
    let err = Schema::parse("T a M-{x:@b}\n").unwrap_err();
    assert!(err.contains("unknown type `b`"), "{err}");
    assert!(Schema::parse("X y\n").is_err());
}

#[test]
fn a_container_merges_by_name_and_keeps_its_other_fields() {
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}))
        .unwrap();
    let app = container(&out, "app");
    assert_eq!(app["image"], "nginx:1.27");
    assert_eq!(
        app["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(app["env"].as_array().unwrap().len(), 2);
    assert_eq!(container(&out, "sidecar")["image"], "envoy");
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );
}

#[test]
fn a_new_container_is_appended_after_the_existing_ones() {
    let out =
        pod_apply(json!({"spec": {"containers": [{"name": "log", "image": "fluentd"}]}})).unwrap();
    let names: Vec<_> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["app", "sidecar", "log"]);
}

#[test]
fn env_merges_by_name() {
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "env": [
        {"name": "B", "value": "20"}, {"name": "C", "value": "3"}
    ]}]}}))
    .unwrap();
    assert_eq!(
        container(&out, "app")["env"],
        json!([
            {"name": "A", "value": "1"},
            {"name": "B", "value": "20"},
            {"name": "C", "value": "3"}
        ])
    );
}

#[test]
fn ports_merge_by_container_port_and_protocol_with_its_default() {
    // No protocol in the patch: it takes the default TCP, so it is the resource's port 80.
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "ports": [
        {"containerPort": 80, "name": "http"}
    ]}]}}))
    .unwrap();
    assert_eq!(
        container(&out, "app")["ports"],
        json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}])
    );
    // UDP 80 is another port.
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "ports": [
        {"containerPort": 80, "protocol": "UDP"}
    ]}]}}))
    .unwrap();
    assert_eq!(
        container(&out, "app")["ports"],
        json!([
            {"containerPort": 80, "protocol": "TCP"},
            {"containerPort": 80, "protocol": "UDP"}
        ])
    );
}

fn finalizers(object: &[&str], patch: &[&str]) -> Vec<String> {
    let obj =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": object}});
    let out = apply(
        &Node::from_json(&obj),
        &Node::from_json(&json!({"metadata": {"finalizers": patch}})),
        "v1",
        "Pod",
    )
    .unwrap();
    out.get_path(&["metadata", "finalizers"])
        .unwrap()
        .str_items()
}

#[test]
fn sets_are_unioned_in_the_walk_order() {
    // Triplets of structured-merge-diff's own merge tests (typed/merge_test.go, setStr).
    assert_eq!(finalizers(&["a", "b", "c"], &["a", "b"]), ["a", "b", "c"]);
    assert_eq!(finalizers(&["a", "b"], &["b", "a"]), ["b", "a"]);
    assert_eq!(
        finalizers(&["a", "b", "c", "g", "f"], &["c", "d", "e", "f"]),
        ["a", "b", "c", "g", "d", "e", "f"]
    );
    assert_eq!(
        finalizers(&["c", "d", "e", "f"], &["a", "c", "e"]),
        ["a", "c", "d", "e", "f"]
    );
    assert_eq!(
        finalizers(&["a", "b", "c", "d"], &["d", "e", "f", "a"]),
        ["b", "c", "d", "e", "f", "a"]
    );
    assert_eq!(
        finalizers(
            &["c", "d", "e", "f", "g", "h", "i", "j"],
            &["2", "h", "3", "e", "4", "k", "l"]
        ),
        [
            "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"
        ]
    );
}

#[test]
fn keyed_list_elements_the_patch_reorders_follow_the_patch() {
    let out = pod_apply(json!({"spec": {"containers": [
        {"name": "sidecar", "image": "envoy:2"},
        {"name": "app"}
    ]}}))
    .unwrap();
    let images: Vec<_> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["image"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(images, ["envoy:2", "nginx:1.25"]);
}

#[test]
fn an_atomic_list_in_the_patch_is_refused() {
    let patch = json!({"spec": {"tolerations": [{"key": "x", "operator": "Exists"}]}});
    let err = pod_apply(patch.clone()).unwrap_err();
    assert_eq!(err, SmdError::Atomic(vec![".spec.tolerations".into()]));
    assert!(err.to_string().contains("atomic"), "{err}");
    // Server-side apply replaces it whole.
    let out = apply_with(
        &yaml(POD),
        &Node::from_json(&patch),
        "v1",
        "Pod",
        Options {
            server_side_apply: true,
        },
    )
    .unwrap()
    .to_json();
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "x", "operator": "Exists"}])
    );
}

#[test]
fn atomic_parts_are_found_inside_keyed_lists_and_structs() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"spec": {"containers": [
            {"name": "app", "image": "x", "args": ["a"]}]}}}});
    let patch = json!({"spec": {"selector": {"matchLabels": {"app": "e"}},
        "template": {"spec": {"nodeSelector": {"disk": "ssd"},
            "containers": [{"name": "app", "args": ["b"]}]}}}});
    let err = apply(
        &Node::from_json(&deploy),
        &Node::from_json(&patch),
        "apps/v1",
        "Deployment",
    )
    .unwrap_err();
    let SmdError::Atomic(mut paths) = err else {
        panic!("{err:?}")
    };
    paths.sort();
    assert_eq!(
        paths,
        [
            ".spec.selector",
            ".spec.template.spec.containers[0].args",
            ".spec.template.spec.nodeSelector",
        ]
    );
}

#[test]
fn a_field_the_schema_does_not_declare_is_an_error() {
    let err =
        pod_apply(json!({"spec": {"containers": [{"name": "app", "imag": "x"}]}})).unwrap_err();
    let SmdError::Patch(errors) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        errors,
        &[r#".spec.containers[name="app"].imag: field not declared in schema"#.to_owned()]
    );
    // In the resource too.
    let obj =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"bogus": 1}});
    let err = apply(
        &Node::from_json(&obj),
        &Node::from_json(&json!({"metadata": {"labels": {"a": "b"}}})),
        "v1",
        "Pod",
    )
    .unwrap_err();
    assert_eq!(
        err,
        SmdError::Object(vec![".spec.bogus: field not declared in schema".into()])
    );
}

#[test]
fn a_value_of_the_wrong_kind_is_an_error() {
    let err =
        pod_apply(json!({"spec": {"containers": [{"name": "app", "tty": "yes"}]}})).unwrap_err();
    assert_eq!(
        err,
        SmdError::Patch(vec![
            r#".spec.containers[name="app"].tty: expected a boolean, got a string"#.into()
        ])
    );
    // IntOrString takes both.
    for port in [json!(8080), json!("http")] {
        let patch = json!({"spec": {"containers": [{"name": "app",
            "livenessProbe": {"httpGet": {"port": port.clone(), "path": "/"}}}]}});
        let out = pod_apply(patch).unwrap();
        assert_eq!(
            container(&out, "app")["livenessProbe"]["httpGet"]["port"],
            port
        );
    }
}

#[test]
fn repeated_keys_are_refused_in_the_patch_and_allowed_in_the_resource() {
    let err =
        pod_apply(json!({"spec": {"containers": [{"name": "x"}, {"name": "x"}]}})).unwrap_err();
    assert_eq!(
        err,
        SmdError::Patch(vec![
            r#".spec.containers: duplicate entries for key [name="x"]"#.into()
        ])
    );
    // The resource repeats `B`; the patch names it, and the two collapse into the patch's.
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "app", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "B", "value": "3"}]}
    ]}});
    let patch =
        json!({"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "9"}]}]}});
    let out = apply(
        &Node::from_json(&obj),
        &Node::from_json(&patch),
        "v1",
        "Pod",
    )
    .unwrap()
    .to_json();
    assert_eq!(
        out["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "9"}])
    );
}

#[test]
fn a_keyed_list_element_that_is_not_a_map_is_an_error() {
    let err = pod_apply(json!({"spec": {"containers": ["app"]}})).unwrap_err();
    assert_eq!(
        err,
        SmdError::Patch(vec![
            ".spec.containers: element 0: a keyed list has an element that is not a map but a string"
                .into()
        ])
    );
}

#[test]
fn a_missing_key_field_takes_its_schema_default() {
    // Container.name defaults to "": a container without a name is a new element keyed "".
    let out = pod_apply(json!({"spec": {"containers": [{"image": "x"}]}})).unwrap();
    let containers = out["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 3);
    assert_eq!(containers[2], json!({"image": "x"}));
}

#[test]
fn cronjob_containers_merge_along_the_nested_path() {
    let cron = yaml(
        "\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: '0 * * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: busybox
",
    );
    let patch = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "backup", "securityContext": {"runAsNonRoot": true}}]}}}}}});
    let out = apply(&cron, &Node::from_json(&patch), "batch/v1", "CronJob")
        .unwrap()
        .to_json();
    assert_eq!(
        out["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        json!({"restartPolicy": "OnFailure", "containers": [
            {"name": "backup", "image": "busybox", "securityContext": {"runAsNonRoot": true}}
        ]})
    );
    assert_eq!(out["spec"]["schedule"], "0 * * * *");
}

#[test]
fn labels_merge_key_by_key() {
    let out = pod_apply(json!({"metadata": {"labels": {"tier": "back", "team": "a"}}})).unwrap();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "tier": "back", "team": "a"})
    );
}

#[test]
fn nulls_replace_scalars_and_leave_granular_maps_and_keyed_lists() {
    let out = pod_apply(json!({"metadata": {"labels": null}, "spec": {
        "containers": null, "restartPolicy": null}}))
    .unwrap();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );
    assert_eq!(out["spec"]["containers"].as_array().unwrap().len(), 2);
    assert!(
        out["spec"]
            .as_object()
            .unwrap()
            .contains_key("restartPolicy")
    );
    assert!(out["spec"]["restartPolicy"].is_null());
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "image": null}]}})).unwrap();
    assert!(container(&out, "app")["image"].is_null());
    // A null atomic list (server-side apply) is replaced by the null.
    let out = apply_with(
        &yaml(POD),
        &Node::from_json(&json!({"spec": {"tolerations": null}})),
        "v1",
        "Pod",
        Options {
            server_side_apply: true,
        },
    )
    .unwrap()
    .to_json();
    assert!(out["spec"]["tolerations"].is_null());
}

#[test]
fn empty_maps_and_lists_are_kept_as_written() {
    // Both sides empty or absent: the patch's value is taken as a leaf.
    let out = pod_apply(json!({"metadata": {"annotations": {}}})).unwrap();
    assert_eq!(out["metadata"]["annotations"], json!({}));
    // An empty keyed list over a full one changes nothing.
    let out = pod_apply(json!({"spec": {"containers": []}})).unwrap();
    assert_eq!(out["spec"]["containers"].as_array().unwrap().len(), 2);
}

#[test]
fn a_kind_without_a_schema_has_no_typed_merge() {
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let err = apply(
        &Node::from_json(&obj),
        &Node::from_json(&json!({"spec": {}})),
        "example.com/v1",
        "Widget",
    )
    .unwrap_err();
    assert_eq!(
        err,
        SmdError::NoTypeConverter {
            api_version: "example.com/v1".into()
        }
    );
    assert!(err.to_string().contains("type converter"), "{err}");
    let err = apply(
        &Node::from_json(&obj),
        &Node::from_json(&json!({})),
        "apps/v1",
        "Widget",
    )
    .unwrap_err();
    assert!(matches!(err, SmdError::NoType { .. }), "{err:?}");
}

#[test]
fn untouched_nodes_keep_their_spans() {
    let object = yaml(POD);
    let out = apply(
        &object,
        &Node::from_json(&json!({"metadata": {"labels": {"team": "a"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}})),
        "v1",
        "Pod",
    )
    .unwrap();
    let before = object.get_path(&["metadata", "labels", "app"]).unwrap();
    let after = out.get_path(&["metadata", "labels", "app"]).unwrap();
    assert_eq!(after.span, before.span);
    assert!(!after.span.is_empty());
    // The container is merged in place; an image set to the value it had keeps its node.
    let obj_app = &object
        .get_path(&["spec", "containers"])
        .unwrap()
        .as_seq()
        .unwrap()[0];
    let out_app = &out
        .get_path(&["spec", "containers"])
        .unwrap()
        .as_seq()
        .unwrap()[0];
    assert_eq!(out_app.span, obj_app.span);
    assert_eq!(
        out_app.get("image").unwrap().span,
        obj_app.get("image").unwrap().span
    );
    // A new key comes from the patch (no span), after the resource's keys.
    let labels = out
        .get_path(&["metadata", "labels"])
        .unwrap()
        .as_map()
        .unwrap();
    assert_eq!(labels.keys().collect::<Vec<_>>(), ["app", "tier", "team"]);
    assert!(labels.entry("team").unwrap().value.span.is_empty());
    // The kind and apiVersion the patch is given equal the resource's: their nodes stay.
    assert_eq!(
        out.get("kind").unwrap().span,
        object.get("kind").unwrap().span
    );
}

#[test]
fn the_deduced_merge_merges_maps_and_replaces_lists() {
    let out = apply_deduced(
        &yaml(POD),
        &Node::from_json(&json!({"metadata": {"labels": {"team": "a"}},
            "spec": {"containers": [{"name": "only"}], "anything": {"x": 1}}})),
        "v1",
        "Pod",
    )
    .unwrap()
    .to_json();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "tier": "front", "team": "a"})
    );
    // No schema: lists are atomic, and the guard never looks past the top-level map.
    assert_eq!(out["spec"]["containers"], json!([{"name": "only"}]));
    assert_eq!(out["spec"]["anything"], json!({"x": 1}));
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "k", "operator": "Exists"}])
    );
}

#[test]
fn a_patch_that_is_not_an_object_is_an_error() {
    let err = apply(&yaml(POD), &Node::from_json(&json!([1])), "v1", "Pod").unwrap_err();
    assert_eq!(err, SmdError::NotAnObject("patch"));
}

#[test]
fn the_result_goes_to_the_byte_edit_writer() {
    // The merged tree diffs against the spanned original into edits that keep the rest of the
    // text, and the edited text reads back as the merged tree.
    let object = yaml(POD);
    let out = apply(
        &object,
        &Node::from_json(&json!({"metadata": {"labels": {"team": "a"}},
            "spec": {"containers": [{"name": "sidecar", "image": "envoy:2"}, {"name": "log", "image": "fluentd"}]}})),
        "v1",
        "Pod",
    )
    .unwrap();
    let edits = crate::mutate::edit::diff(POD, &object, &out).unwrap();
    let text = crate::mutate::edit::apply(POD, &edits).unwrap();
    assert_eq!(yaml(&text).to_json(), out.to_json());
    assert!(text.contains("    image: nginx:1.25\n"), "{text}");
    assert!(text.contains("  - name: log\n"), "{text}");
}

#[test]
fn a_float_key_matches_the_integer_it_equals() {
    // structured-merge-diff compares an int and a float as numbers (value.Equals).
    let out = pod_apply(json!({"spec": {"containers": [{"name": "app", "ports": [
        {"containerPort": 80.0, "name": "http"}
    ]}]}}))
    .unwrap();
    let ports = container(&out, "app")["ports"].as_array().unwrap().clone();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["name"], "http");
    assert_eq!(ports[0]["protocol"], "TCP");
}

#[test]
fn a_patch_as_deep_as_the_reader_allows_merges() {
    // The YAML reader stops at 512 levels; the walk goes that deep without trouble.
    use crate::yaml::{Map, Value};
    fn nest(depth: usize, leaf: i64) -> Node {
        let mut n = Node::synthetic(Value::Int(leaf));
        for _ in 0..depth {
            let mut m = Map::new();
            m.insert("x".into(), crate::source::Span::EMPTY, n);
            n = Node::synthetic(Value::Map(m));
        }
        n
    }
    let depth = crate::yaml::Limits::default().max_depth;
    let mut object = Node::from_json(&json!({"apiVersion": "v1", "kind": "Pod"}));
    let mut patch = Node::from_json(&json!({}));
    for (n, leaf) in [(&mut object, 1), (&mut patch, 2)] {
        let Value::Map(m) = &mut n.value else {
            unreachable!()
        };
        m.insert(
            "spec".into(),
            crate::source::Span::EMPTY,
            nest(depth - 1, leaf),
        );
    }
    let out = apply_deduced(&object, &patch, "v1", "Pod").unwrap();
    let mut n = out.get("spec").unwrap();
    while let Some(next) = n.get("x") {
        n = next;
    }
    assert_eq!(n.value, Value::Int(2));
}
