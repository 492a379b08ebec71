use super::*;
use crate::yaml::{Limits, parse_documents};

fn node(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn cluster() -> Cluster {
    let mut c = Cluster::default();
    for t in [
        "{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: prod}}",
        "{apiVersion: v1, kind: Pod, metadata: {name: b, namespace: dev}}",
        "{apiVersion: v1, kind: Namespace, metadata: {name: prod}}",
        "{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {k: v}}",
        "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: geese.example.com}, \
         spec: {group: example.com, scope: Namespaced, names: {kind: Goose, plural: geese}, versions: [{name: v1}]}}",
        "{apiVersion: example.com/v1, kind: Goose, metadata: {name: g, namespace: prod}}",
    ] {
        c.add(&node(t)).unwrap();
    }
    c
}

#[test]
fn raw_get_lists_and_gets_like_the_fake_client() {
    let c = cluster();
    let list = c.raw_get("/api/v1/namespaces/prod/pods").unwrap();
    assert_eq!(list.get("kind").and_then(Node::as_str), Some("PodList"));
    assert_eq!(list.get("apiVersion").and_then(Node::as_str), Some("v1"));
    assert_eq!(
        list.get("items").and_then(Node::as_seq).map(<[Node]>::len),
        Some(1)
    );
    // No namespace: every namespace.
    let all = c.raw_get("/api/v1/pods").unwrap();
    assert_eq!(
        all.get("items").and_then(Node::as_seq).map(<[Node]>::len),
        Some(2)
    );
    let ns = c.raw_get("/api/v1/namespaces/prod").unwrap();
    assert_eq!(ns.get("kind").and_then(Node::as_str), Some("Namespace"));
    // A CRD's plural and kind.
    let geese = c
        .raw_get("/apis/example.com/v1/namespaces/prod/geese")
        .unwrap();
    assert_eq!(geese.get("kind").and_then(Node::as_str), Some("GooseList"));
    let g = c
        .raw_get("/apis/example.com/v1/namespaces/prod/geese/g")
        .unwrap();
    assert_eq!(
        g.get_path(&["metadata", "name"]).and_then(Node::as_str),
        Some("g")
    );
    assert_eq!(c.custom_kinds()[0].plural, "geese");
    assert!(c.custom_kinds()[0].namespaced);
}

#[test]
fn misses_are_errors_naming_the_object() {
    let c = cluster();
    let e = c.raw_get("/api/v1/namespaces/prod/pods/zz").unwrap_err();
    assert_eq!(e, "failed to get resource v1/Pod/zz: pods \"zz\" not found");
    let e = c
        .raw_get("/apis/batch/v1/namespaces/prod/jobs")
        .unwrap_err();
    assert!(
        e.contains("failed to list resources batch/v1/Job in namespace \"prod\""),
        "{e}"
    );
    assert!(c.raw_get("/healthz").is_err());
    assert!(c.config_map("default", "cm").is_ok());
    assert_eq!(
        c.config_map("default", "nope").unwrap_err(),
        "configmaps \"nope\" not found"
    );
}

#[test]
fn api_call_mocks_are_checked_and_indexed() {
    let list = node(
        "- {urlPath: /api/v1/namespaces, response: {body: {items: []}}}\n\
         - {url: 'https://svc.example/x', method: post, response: {statusCode: 503, body: {e: 1}}}\n",
    );
    let m = mocks::ApiCalls::from_list(list.as_seq().unwrap()).unwrap();
    assert_eq!(
        m.lookup("", "/api/v1/namespaces").map(|r| r.status),
        Some(200)
    );
    assert_eq!(
        m.lookup("POST", "https://svc.example/x").map(|r| r.status),
        Some(503)
    );
    assert!(m.lookup("GET", "https://svc.example/x").is_none());
    for (bad, msg) in [
        ("- {response: {body: {}}}", "either url or urlPath"),
        (
            "- {urlPath: x, response: {body: {}}}",
            "must be an absolute path",
        ),
        (
            "- {url: 'ftp://h/x', response: {body: {}}}",
            "absolute https/http URL",
        ),
        (
            "- {urlPath: /x, method: PUT, response: {body: {}}}",
            "GET or POST",
        ),
        (
            "- {urlPath: /x, response: {body: [1]}}",
            "must be a JSON object",
        ),
        ("- {urlPath: /x, response: {}}", "response.body is required"),
        (
            "- {urlPath: /x, response: {statusCode: 7, body: {}}}",
            "between 100 and 599",
        ),
        (
            "- {urlPath: /x, response: {body: {}}}\n- {urlPath: /x, response: {body: {}}}",
            "duplicate",
        ),
    ] {
        let e = mocks::ApiCalls::from_list(node(bad).as_seq().unwrap()).unwrap_err();
        assert!(e.contains(msg), "{bad}: {e}");
    }
}

#[test]
fn global_entries_read_projections() {
    let mut g = mocks::Globals::default();
    g.insert("e".into(), Ok(node("{a: 1}")));
    g.insert("bad".into(), Err("broken".into()));
    assert!(g.get("e", "").unwrap().is_ok());
    assert!(g.get("e", "a").unwrap().is_ok());
    assert!(g.get("e", "b").unwrap().unwrap_err().contains("not found"));
    assert_eq!(g.get("bad", "").unwrap().unwrap_err(), "broken");
    assert!(g.get("zz", "").is_none());
    let (s, files) = mocks::GlobalSource::from_node(&node(
        "{name: e, resourceFiles: [a.yaml], projections: [{name: p, path: x}]}",
    ))
    .unwrap();
    assert_eq!(files, ["a.yaml"]);
    assert_eq!(s.projections, [("p".to_owned(), "x".to_owned())]);
    let e =
        mocks::GlobalSource::from_node(&node("{name: e, data: {}, resources: []}")).unwrap_err();
    assert!(e.contains("mutually exclusive"), "{e}");
}

#[test]
fn find_resource_is_the_fake_discovery_lookup() {
    let c = cluster();
    // `lowercase(kind) + "s"`, whatever the group asked.
    assert_eq!(
        c.find_resource("Pod"),
        Some((String::new(), "v1".to_owned(), "pods".to_owned()))
    );
    assert_eq!(
        c.find_resource("ConfigMap").map(|g| g.2),
        Some("configmaps".to_owned())
    );
    // An irregular plural is not found (`geeses` is not served), nor an absent kind.
    assert_eq!(c.find_resource("Goose"), None);
    assert_eq!(c.find_resource("Secret"), None);
}

// What Kyverno v1.19.0's CLI answers for `resource.ToGVR` in clusterResources mode (checked
// with its `kyverno test`): built-in kinds and CRD kinds map; the rest are its errors.
#[test]
fn rest_mapping_knows_builtin_and_crd_kinds() {
    let c = cluster();
    let gvr = |g: &str, v: &str, r: &str| Ok((g.to_owned(), v.to_owned(), r.to_owned()));
    assert_eq!(
        c.rest_mapping("apps/v1", "Deployment"),
        gvr("apps", "v1", "deployments")
    );
    assert_eq!(
        c.rest_mapping("v1", "Endpoints"),
        gvr("", "v1", "endpoints")
    );
    assert_eq!(
        c.rest_mapping("example.com/v1", "Goose"),
        gvr("example.com", "v1", "geese")
    );
    // No version: the group's first version serving the kind.
    assert_eq!(
        c.rest_mapping("autoscaling/", "HorizontalPodAutoscaler"),
        gvr("autoscaling", "v2", "horizontalpodautoscalers")
    );
    assert_eq!(c.rest_mapping("", "Pod"), gvr("", "v1", "pods"));
}

#[test]
fn rest_mapping_errors_as_the_cli() {
    let c = cluster();
    let err = |av: &str, k: &str| c.rest_mapping(av, k).unwrap_err();
    assert_eq!(
        err("example.com/v1", "Duck"),
        "no matches for kind \"Duck\" in version \"example.com/v1\""
    );
    assert_eq!(
        err("apps/v1beta1", "Deployment"),
        "no matches for kind \"Deployment\" in version \"apps/v1beta1\""
    );
    // A bare word is a version of the core group.
    assert_eq!(
        err("apps", "Deployment"),
        "no matches for kind \"Deployment\" in version \"apps\""
    );
    // Kinds are matched exactly.
    assert_eq!(
        err("v1", "pod"),
        "no matches for kind \"pod\" in version \"v1\""
    );
    assert_eq!(err("a/b/c", "Pod"), "unexpected GroupVersion string: a/b/c");
    assert_eq!(
        err("", "Duck"),
        "no matches for kind \"Duck\" in group \"\""
    );
}
