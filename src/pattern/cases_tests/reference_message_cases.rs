//! validate-cases.md H14 (`$()` references) and K1, K2, K4 (messages).

#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;

#[test]
fn h14_references() {
    let pattern = r#"{spec: {containers: [{name: "*", resources: {requests: {memory: "$(<=./../../limits/memory)"}, limits: {memory: "2048Mi"}}}]}}"#;
    let v = run(
        pattern,
        "{spec: {containers: [{name: a, resources: {requests: {memory: 1024Mi}, limits: {memory: 2048Mi}}}]}}",
    );
    assert_eq!(v.status, Status::Pass);
    let v = run(
        pattern,
        "{spec: {containers: [{name: a, resources: {requests: {memory: 4Gi}, limits: {memory: 2048Mi}}}]}}",
    );
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.path.unwrap(),
        ["spec", "containers", "0", "resources", "requests", "memory"]
    );
    // A reference to a path that does not exist in the pattern is a substitution error.
    let v = run(
        r#"{spec: {containers: [{name: "$(./../nothere)"}]}}"#,
        "{spec: {containers: [{name: a}]}}",
    );
    assert_eq!(v.status, Status::Error);
    assert_eq!(
        v.message,
        "variable substitution failed: got nil resolved variable $(./../nothere) at path /spec/containers/0/name: <nil>"
    );
    // anyPattern references resolve in the list document: absolute paths start with the index.
    let Value::Seq(items) = yaml(r#"[{a: "$(/0/b)", b: x}]"#).value else {
        panic!()
    };
    let v = validate_any_pattern("r", None, &resource("{a: x, b: x}"), &items);
    assert_eq!(v.status, Status::Pass);
}

#[test]
fn k_messages() {
    // K1
    let v = validate_pattern(
        "r",
        Some("imagePullPolicy 'Always' required with tag 'latest'"),
        &resource("{spec: {containers: [{image: nginx:latest, imagePullPolicy: Always}]}}"),
        &yaml(r#"{spec: {containers: [{"(image)": "*latest", imagePullPolicy: NotPresent}]}}"#),
    );
    assert_eq!(
        v.message,
        "validation error: imagePullPolicy 'Always' required with tag 'latest'. rule r failed at path /spec/containers/0/imagePullPolicy/"
    );
    // K2
    let hostpath = r#"{spec: {"=(volumes)": [{"X(hostPath)": "null"}]}}"#;
    let res = resource("{spec: {volumes: [{name: v, hostPath: {path: /x}}]}}");
    let v = validate_pattern(
        "r",
        Some("Host path is not allowed."),
        &res,
        &yaml(hostpath),
    );
    assert_eq!(
        v.message,
        "validation error: Host path is not allowed. rule r failed at path /spec/volumes/0/hostPath/"
    );
    let v = validate_pattern(
        "r",
        Some("Host path is not allowed.\n"),
        &res,
        &yaml(hostpath),
    );
    assert_eq!(
        v.message,
        "validation error: Host path is not allowed.\n. rule r failed at path /spec/volumes/0/hostPath/"
    );
    // K4: pattern and anyPattern pass messages.
    assert_eq!(
        run("{a: 1}", "{a: 1}").message,
        "validation rule 'r' passed."
    );
    let v = any(None, "[{a: 2}, {a: 1}]", "{a: 1}");
    assert_eq!(v.message, "validation rule 'r' anyPattern[1] passed.");
}
