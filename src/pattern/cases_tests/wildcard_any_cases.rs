//! validate-cases.md sections E (wildcard label/annotation keys) and F (anyPattern).

#![allow(clippy::unwrap_used, clippy::panic)]

use super::Expect::*;
use super::*;

#[test]
fn e_wildcard_keys() {
    check(&[
        (
            "E1",
            r#"{metadata: {annotations: {"test/*": value1}}}"#,
            "{metadata: {annotations: {test/bar: value1}}}",
            Pass,
        ),
        (
            "E2",
            r#"{metadata: {labels: {"foo/X*": bar, "foo/A*": bar2}}}"#,
            "{metadata: {labels: {foo/XYZ: bar}}}",
            Fail("/metadata/labels/foo/A*/"),
        ),
        (
            "E3",
            r#"{metadata: {labels: {"foo/1*": bar}}}"#,
            "{metadata: {labels: {foo/123: bar222}}}",
            Fail("/metadata/labels/foo/123/"),
        ),
        (
            "E4",
            r#"{spec: {template: {metadata: {labels: {"app.kubernetes.io/*": "?*"}}}}}"#,
            "{spec: {template: {metadata: {labels: {app.kubernetes.io/name: web}}}}}",
            Pass,
        ),
        (
            "E5",
            r#"{metadata: {labels: {"X(app)": null}}}"#,
            "{metadata: {labels: {app: x}}}",
            Pass,
        ),
        (
            "E5b",
            r#"{metadata: {labels: {"X(app)": "null"}}}"#,
            "{metadata: {labels: {app: x}}}",
            Fail("/metadata/labels/app/"),
        ),
        (
            "E6",
            r#"{metadata: {"=(annotations)": {"X(*-snippet)": "?*"}}}"#,
            r#"{metadata: {annotations: {nginx.ingress.kubernetes.io/server-snippet: "x"}}}"#,
            Fail("/metadata/annotations/nginx.ingress.kubernetes.io/server-snippet/"),
        ),
        (
            "E7",
            r#"{spec: {nodeSelector: {"kubernetes.io/*": "?*"}}}"#,
            "{spec: {nodeSelector: {kubernetes.io/os: linux}}}",
            Fail("/spec/nodeSelector/kubernetes.io/*/"),
        ),
    ]);
    // A key with `/` is one path segment.
    let v = run(
        r#"{metadata: {labels: {"foo/1*": bar}}}"#,
        "{metadata: {labels: {foo/123: bar222}}}",
    );
    assert_eq!(v.path.unwrap(), ["metadata", "labels", "foo/123"]);
}

#[test]
fn e_wildcard_expansion_persists_across_elements() {
    // Upstream rewrites the shared pattern in place: the second element sees the key the
    // first element expanded to (wildcards.go ExpandInMetadata).
    check(&[(
        "E-persist",
        r#"{items: [{metadata: {labels: {"app*": x}}}]}"#,
        "{items: [{metadata: {labels: {app1: x}}}, {metadata: {labels: {app2: x}}}]}",
        Fail("/items/1/metadata/labels/app1/"),
    )]);
}

#[test]
fn f1_all_alternatives_fail() {
    let patterns = r#"[{metadata: {namespace: "?*"}}, {metadata: {namespace: "!default"}}]"#;
    let v = any(
        Some("A namespace is required"),
        patterns,
        "{kind: Pod, metadata: {name: myapp-pod}}",
    );
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.message,
        "validation error: A namespace is required. rule r[0] failed at path /metadata/namespace/ rule r[1] failed at path /metadata/namespace/"
    );
    assert_eq!(v.path.unwrap(), ["metadata", "namespace"]);
    // After the CLI's namespace defaulting, alternative 0 passes.
    let v = any(
        None,
        patterns,
        "{kind: Pod, metadata: {name: myapp-pod, namespace: default}}",
    );
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.message, "validation rule 'r' anyPattern[0] passed.");
}

#[test]
fn f2_skipped_and_failed() {
    let patterns = r#"[{metadata: {annotations: {"service.beta.kubernetes.io/aws-load-balancer-security-groups": "?*"}}, spec: {"<(type)": LoadBalancer}},
                       {spec: {"<(type)": LoadBalancer, loadBalancerSourceRanges: "*"}}]"#;
    let v = any(
        None,
        patterns,
        "{metadata: {annotations: {other: x}}, spec: {type: LoadBalancer}}",
    );
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.message,
        "validation error: rule r[0] failed at path /metadata/annotations/service.beta.kubernetes.io/aws-load-balancer-security-groups/ rule r[1] failed at path /spec/"
    );
    let v = any(
        None,
        patterns,
        "{metadata: {annotations: {other: x}}, spec: {type: ClusterIP}}",
    );
    assert_eq!(v.status, Status::Skip);
    assert_eq!(
        v.message,
        "rule r[0] skipped: global anchor mismatch: resource value 'ClusterIP' does not match 'LoadBalancer' at path /spec/type/ \
         rule r[1] skipped: global anchor mismatch: resource value 'ClusterIP' does not match 'LoadBalancer' at path /spec/type/"
    );
    let v = any(
        None,
        patterns,
        r#"{metadata: {annotations: {other: x}}, spec: {type: LoadBalancer, loadBalancerSourceRanges: ["1.2.3.4/32"]}}"#,
    );
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.message, "validation rule 'r' anyPattern[1] passed.");
}

#[test]
fn f4_negations_are_ored() {
    let patterns = r#"[{metadata: {"=(annotations)": {"X(fluxcd.io/*)": "*?"}}}, {metadata: {"=(annotations)": {"X(flux.weave.works/*)": "*?"}}}]"#;
    let v = any(
        None,
        patterns,
        r#"{metadata: {annotations: {fluxcd.io/automated: "true"}}}"#,
    );
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.message, "validation rule 'r' anyPattern[1] passed.");
    let v = any(
        None,
        patterns,
        r#"{metadata: {annotations: {fluxcd.io/automated: "true", flux.weave.works/x: "y"}}}"#,
    );
    assert_eq!(v.status, Status::Fail);
}

#[test]
fn f_any_pattern_edges() {
    // An empty anyPattern passes with the raw rule message.
    let v = any(Some("msg"), "[]", "{a: 1}");
    assert_eq!((v.status, v.message.as_str()), (Status::Pass, "msg"));
    // A message ending with "." is not given another.
    let v = any(Some("Bad."), "[{a: 2}]", "{a: 1}");
    assert_eq!(
        v.message,
        "validation error: Bad. rule r[0] failed at path /a/"
    );
    // An alternative classified Error is reported as "failed: <err>".
    let v = any(
        None,
        r#"[{spec: {"^(init)": [{image: "n*"}], c: [{image: x}]}}]"#,
        r#"{spec: {c: [{image: "y"}]}}"#,
    );
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.message,
        "validation error: rule r[0] failed: resource value 'y' does not match 'x' at path /spec/c/0/image/"
    );
}
