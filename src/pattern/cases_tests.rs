//! validate-cases.md as tests: every case about patterns, anyPattern, scalar matching and
//! their messages (sections A–F, H14, K1–K2, K4). Rule name `r`, no message unless stated;
//! resources are normalised like the CLI does (every integer a float, validate.md §2.1).
//! Each table row starts with its case id; variants carry a letter suffix.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::{PatternVerdict, validate_any_pattern, validate_pattern};
use crate::report::Status;
use crate::yaml::{Limits, Node, Value, parse_documents};

#[derive(Clone, Copy, Debug)]
enum Expect {
    Pass,
    Skip,
    Error,
    /// Fail at this Kyverno path.
    Fail(&'static str),
}

fn yaml(text: &str) -> Node {
    parse_documents(text, Limits::default()).unwrap()[0]
        .root
        .clone()
}

/// The CLI turns every resource integer into a float64 (validate.md §2.1).
fn floatify(node: &mut Node) {
    match &mut node.value {
        Value::Int(i) => node.value = Value::Float(*i as f64),
        Value::Seq(items) => items.iter_mut().for_each(floatify),
        Value::Map(m) => m
            .entries_mut()
            .iter_mut()
            .for_each(|e| floatify(&mut e.value)),
        _ => {}
    }
}

fn resource(text: &str) -> Node {
    let mut n = yaml(text);
    floatify(&mut n);
    n
}

fn run(pattern: &str, res: &str) -> PatternVerdict {
    validate_pattern("r", None, &resource(res), &yaml(pattern))
}

fn check(rows: &[(&str, &str, &str, Expect)]) {
    let mut failures = Vec::new();
    for &(id, pattern, res, expect) in rows {
        let v = run(pattern, res);
        let ok = match expect {
            Expect::Pass => v.status == Status::Pass && v.message == "validation rule 'r' passed.",
            Expect::Skip => v.status == Status::Skip,
            Expect::Error => v.status == Status::Error,
            Expect::Fail(path) => {
                v.status == Status::Fail
                    && v.message == format!("validation error: rule r failed at path {path}")
                    && v.path
                        .as_ref()
                        .map(|p| super::path::render_segments(p))
                        .as_deref()
                        == Some(path)
            }
        };
        if !ok {
            failures.push(format!("{id}: expected {expect:?}, got {v:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

use Expect::{Error, Fail, Pass, Skip};

#[test]
fn a_maps_missing_keys_null_scalar_types() {
    check(&[
        (
            "A1",
            r#"{metadata: {labels: {app: "?*"}}}"#,
            r#"{metadata: {labels: {app: ""}}}"#,
            Fail("/metadata/labels/app/"),
        ),
        (
            "A2",
            r#"{metadata: {labels: {app: "?*"}}}"#,
            "{metadata: {name: web}}",
            Fail("/metadata/labels/"),
        ),
        (
            "A3",
            r#"{spec: {loadBalancerSourceRanges: "*"}}"#,
            "{spec: {type: LoadBalancer}}",
            Fail("/spec/"),
        ),
        ("A4", r#"{spec: {x: "*"}}"#, r#"{spec: {x: ""}}"#, Pass),
        (
            "A5",
            r#"{spec: {x: "*"}}"#,
            "{spec: {x: null}}",
            Fail("/spec/"),
        ),
        ("A6", r#"{spec: {x: "*"}}"#, "{spec: {x: {a: 1}}}", Pass),
        ("A6b", r#"{spec: {x: "*"}}"#, "{spec: {x: [1]}}", Pass),
        ("A6c", r#"{spec: {x: "*"}}"#, "{spec: {x: 0}}", Pass),
        ("A6d", r#"{spec: {x: "*"}}"#, "{spec: {x: false}}", Pass),
        (
            "A7",
            r#"{spec: {"=(x)": "*"}}"#,
            "{spec: {x: {a: 1}}}",
            Fail("/spec/x/"),
        ),
        ("A8", "{spec: {hostNetwork: null}}", "{spec: {}}", Pass),
        ("A9", "{spec: {x: null}}", "{spec: {x: false}}", Pass),
        ("A9b", "{spec: {x: null}}", "{spec: {x: 0}}", Pass),
        ("A9c", "{spec: {x: null}}", r#"{spec: {x: ""}}"#, Pass),
        ("A9d", "{spec: {x: null}}", "{spec: {x: 0.0}}", Pass),
        (
            "A9e",
            "{spec: {x: null}}",
            "{spec: {x: a}}",
            Fail("/spec/x/"),
        ),
        (
            "A9f",
            "{spec: {x: null}}",
            "{spec: {x: {}}}",
            Fail("/spec/x/"),
        ),
        // Corrected: a scalar pattern against a list checks every element, so an empty list
        // passes (validate.go validateResourceElement); the case file says fail.
        ("A9g", "{spec: {x: null}}", "{spec: {x: []}}", Pass),
        (
            "A9h",
            "{spec: {x: null}}",
            "{spec: {x: [1]}}",
            Fail("/spec/x/"),
        ),
        ("A10", r#"{spec: {x: ""}}"#, "{spec: {}}", Fail("/spec/x/")),
        (
            "A11",
            "{spec: {x: {y: 1}}}",
            "{spec: {x: str}}",
            Fail("/spec/x/"),
        ),
        (
            "A12",
            "{spec: {x: true}}",
            r#"{spec: {x: "true"}}"#,
            Fail("/spec/x/"),
        ),
        ("A13", r#"{spec: {x: "true"}}"#, "{spec: {x: true}}", Pass),
        ("A14", "{spec: {x: 1}}", r#"{spec: {x: "1"}}"#, Pass),
        (
            "A14b",
            "{spec: {x: 1}}",
            r#"{spec: {x: "1.0"}}"#,
            Fail("/spec/x/"),
        ),
        ("A15", r#"{spec: {x: "1"}}"#, "{spec: {x: 1}}", Pass),
        ("A16", "{spec: {x: 8.0}}", "{spec: {x: 8}}", Pass),
        (
            "A16b",
            "{spec: {x: 8.1}}",
            "{spec: {x: 8}}",
            Fail("/spec/x/"),
        ),
        (
            "A16c",
            "{spec: {x: 8}}",
            "{spec: {x: 8.1}}",
            Fail("/spec/x/"),
        ),
        ("A17", "{spec: {a: 1}}", "{spec: {a: 1, b: 2}}", Pass),
        (
            "A18",
            "{}",
            "{metadata: {annotations: {test/bar: value1}}}",
            Pass,
        ),
    ]);
}

#[test]
fn b_arrays() {
    check(&[
        (
            "B1",
            r#"{spec: {containers: [{name: "*", image: "!*:latest"}]}}"#,
            r#"{spec: {containers: [{name: a, image: "nginx:1.2"}, {name: b, image: "redis:latest"}]}}"#,
            Fail("/spec/containers/1/image/"),
        ),
        (
            "B2",
            r#"{spec: {containers: [{image: "!*:latest"}]}}"#,
            "{spec: {containers: []}}",
            Pass,
        ),
        (
            "B3",
            r#"{spec: {containers: [{image: "!*:latest"}]}}"#,
            "{spec: {}}",
            Fail("/spec/containers/"),
        ),
        (
            "B4",
            r#"{spec: {a: ["x", "y"]}}"#,
            r#"{spec: {a: ["x", "x"]}}"#,
            Pass,
        ),
        (
            "B4b",
            r#"{spec: {a: ["x", "y"]}}"#,
            r#"{spec: {a: ["y"]}}"#,
            Fail("/spec/a/"),
        ),
        (
            "B5",
            r#"{spec: {a: [{"n": x}, {"n": "y"}]}}"#,
            r#"{spec: {a: [{"n": "y"}]}}"#,
            Fail("/spec/a/0/n/"),
        ),
        (
            "B6",
            "{spec: {a: []}}",
            r#"{spec: {a: ["q"]}}"#,
            Fail("/spec/a/"),
        ),
        (
            "B7",
            r#"{spec: {args: "!*--privileged*"}}"#,
            r#"{spec: {args: ["--a", "--privileged"]}}"#,
            Fail("/spec/args/"),
        ),
        (
            "B8",
            r#"{spec: {supplementalGroups: ">0 & <100001"}}"#,
            r#"{spec: {supplementalGroups: ["2", "5", "10"]}}"#,
            Pass,
        ),
        (
            "B9",
            r#"{spec: {"=(supplementalGroups)": [">0"]}}"#,
            r#"{spec: {supplementalGroups: ["2", "0"]}}"#,
            Fail("/spec/supplementalGroups/"),
        ),
        (
            "B9b",
            r#"{spec: {"=(supplementalGroups)": [">0"]}}"#,
            r#"{spec: {supplementalGroups: ["2", "5"]}}"#,
            Pass,
        ),
    ]);
}

#[test]
fn c_scalar_expressions() {
    check(&[
        (
            "C1",
            r#"{spec: {replicas: ">=2"}}"#,
            "{spec: {replicas: 1}}",
            Fail("/spec/replicas/"),
        ),
        (
            "C1b",
            r#"{spec: {replicas: ">=2"}}"#,
            "{spec: {replicas: 2}}",
            Pass,
        ),
        (
            "C2",
            r#"{spec: {memory: "<=2Gi"}}"#,
            r#"{spec: {memory: "2048Mi"}}"#,
            Pass,
        ),
        (
            "C2b",
            r#"{spec: {memory: "<=2Gi"}}"#,
            r#"{spec: {memory: "3Gi"}}"#,
            Fail("/spec/memory/"),
        ),
        ("C3", r#"{spec: {memory: "<=2Gi"}}"#, "{spec: {}}", Pass),
        (
            "C4",
            r#"{spec: {memory: ">0"}}"#,
            "{spec: {}}",
            Fail("/spec/memory/"),
        ),
        ("C5", r#"{spec: {x: "<1h"}}"#, "{spec: {}}", Pass),
        ("C5b", r#"{spec: {x: "0-10"}}"#, "{spec: {}}", Pass),
        ("C5c", r#"{spec: {x: ">=0"}}"#, "{spec: {}}", Pass),
        ("C5d", r#"{spec: {x: "0"}}"#, "{spec: {}}", Pass),
        (
            "C6",
            r#"{spec: {cpu: "<=500m"}}"#,
            r#"{spec: {cpu: "1"}}"#,
            Fail("/spec/cpu/"),
        ),
        (
            "C6b",
            r#"{spec: {cpu: "<=500m"}}"#,
            "{spec: {cpu: 0.25}}",
            Pass,
        ),
        (
            "C7",
            r#"{spec: {timeout: ">=1h30m"}}"#,
            r#"{spec: {timeout: "90m"}}"#,
            Pass,
        ),
        (
            "C8",
            r#"{spec: {port: "1-1024"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        (
            "C8b",
            r#"{spec: {port: "1-1024"}}"#,
            "{spec: {port: 443}}",
            Pass,
        ),
        (
            "C9",
            r#"{spec: {port: "1024!-65535"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        ("C10", r#"{spec: {x: "-10--8"}}"#, "{spec: {x: -9}}", Pass),
        (
            "C11",
            r#"{spec: {x: "10-20"}}"#,
            r#"{spec: {x: "10-20"}}"#,
            Pass,
        ),
        (
            "C12",
            r#"{spec: {x: "2020-01"}}"#,
            r#"{spec: {x: "2020-02"}}"#,
            Fail("/spec/x/"),
        ),
        ("C13", r#"{spec: {x: "a | b"}}"#, "{spec: {x: b}}", Pass),
        (
            "C14",
            r#"{spec: {x: ">1 & <5 | 10"}}"#,
            "{spec: {x: 10}}",
            Pass,
        ),
        (
            "C14b",
            r#"{spec: {x: ">1 & <5 | 10"}}"#,
            "{spec: {x: 7}}",
            Fail("/spec/x/"),
        ),
        (
            "C15",
            r#"{spec: {image: "!nginx"}}"#,
            "{spec: {}}",
            Fail("/spec/image/"),
        ),
        (
            "C16",
            r#"{spec: {x: "!0"}}"#,
            "{spec: {}}",
            Fail("/spec/x/"),
        ),
        ("C17", r#"{spec: {x: "?"}}"#, r#"{spec: {x: "é"}}"#, Pass),
        (
            "C17b",
            r#"{spec: {x: "?"}}"#,
            r#"{spec: {x: "ab"}}"#,
            Fail("/spec/x/"),
        ),
        (
            "C17c",
            r#"{spec: {x: "my-?-bucket"}}"#,
            r#"{spec: {x: "my--bucket"}}"#,
            Fail("/spec/x/"),
        ),
        (
            "C18",
            r#"{spec: {port: "8?"}}"#,
            "{spec: {port: 80}}",
            Fail("/spec/port/"),
        ),
        (
            "C19",
            r#"{spec: {port: "80*"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        (
            "C19b",
            r#"{spec: {port: "8*"}}"#,
            "{spec: {port: 8080}}",
            Pass,
        ),
        ("C20", r#"{spec: {port: "80"}}"#, "{spec: {port: 80}}", Pass),
        (
            "C20b",
            r#"{spec: {port: "!80"}}"#,
            "{spec: {port: 80}}",
            Fail("/spec/port/"),
        ),
        (
            "C21",
            r#"{spec: {version: ">1.4.0"}}"#,
            r#"{spec: {version: "1.4.1"}}"#,
            Fail("/spec/version/"),
        ),
        (
            "C22",
            r#"{spec: {a: "1Gi", b: "5m", c: "100m"}}"#,
            r#"{spec: {a: "1024Mi", b: "300s", c: "0.1"}}"#,
            Pass,
        ),
        (
            "C23",
            r#"{spec: {x: "a|b"}}"#,
            r#"{spec: {x: "a|b"}}"#,
            Pass,
        ),
        ("C23b", r#"{spec: {x: "a|b"}}"#, r#"{spec: {x: "a"}}"#, Pass),
    ]);
}

const D2_PATTERN: &str =
    r#"{spec: {containers: [{"(image)": "*:latest", imagePullPolicy: "!IfNotPresent"}]}}"#;
const D4_PATTERN: &str = r#"{spec: {containers: [{name: "*", "(image)": "*:latest | !*:*", imagePullPolicy: "!Always"}]}}"#;
const D17_PATTERN: &str =
    r#"{spec: {containers: [{name: "*", "<(image)": "*:latest", imagePullPolicy: "!Always"}]}}"#;
const D23_PATTERN: &str = r#"{metadata: {labels: {allow-docker: "true"}}, "(spec)": {"(volumes)": [{"(hostPath)": {path: /var/run/docker.sock}}]}}"#;
const D24_PATTERN: &str =
    r#"{spec: {"=(volumes)": [{"(name)": "!cache-volume", "=(emptyDir)": {sizeLimit: "?*"}}]}}"#;
const D27_PATTERN: &str = r#"{spec: {"=(initContainers)": [{"(name)": "!istio-init", "=(securityContext)": {"=(runAsUser)": ">0"}}], "=(containers)": [{"=(securityContext)": {"=(runAsUser)": ">0"}}]}}"#;

#[test]
fn d_anchors() {
    check(&[
        (
            "D1",
            D2_PATTERN,
            r#"{spec: {containers: [{image: "nginx:1.2", imagePullPolicy: IfNotPresent}]}}"#,
            Skip,
        ),
        (
            "D2",
            D2_PATTERN,
            r#"{spec: {containers: [{image: "nginx:latest", imagePullPolicy: IfNotPresent}]}}"#,
            Fail("/spec/containers/0/imagePullPolicy/"),
        ),
        (
            "D3",
            D2_PATTERN,
            r#"{spec: {containers: [{image: "nginx:1.2", imagePullPolicy: IfNotPresent}, {image: "nginx:latest", imagePullPolicy: Always}]}}"#,
            Pass,
        ),
        (
            "D4",
            D4_PATTERN,
            "{spec: {containers: [{name: nginx, image: nginx, imagePullPolicy: Always}]}}",
            Fail("/spec/containers/0/imagePullPolicy/"),
        ),
        (
            "D4b",
            D4_PATTERN,
            "{spec: {containers: [{name: nginx, image: nginx, imagePullPolicy: Never}]}}",
            Pass,
        ),
        (
            "D4c",
            D4_PATTERN,
            r#"{spec: {containers: [{name: nginx, image: "nginx:1.2.3", imagePullPolicy: Always}]}}"#,
            Skip,
        ),
        (
            "D5",
            D4_PATTERN,
            r#"{spec: {containers: [{name: a, image: "nginx:1.2.3", imagePullPolicy: Always}, {name: b, image: "busybox:1.28", imagePullPolicy: Always}]}}"#,
            Skip,
        ),
        (
            "D6",
            D4_PATTERN,
            r#"{spec: {containers: [{name: a, image: nginx, imagePullPolicy: Always}, {name: b, image: "busybox:1.28", imagePullPolicy: Always}]}}"#,
            Fail("/spec/containers/0/imagePullPolicy/"),
        ),
        (
            "D7",
            r#"{spec: {"(tier)": "web", replicas: ">=2"}}"#,
            "{spec: {replicas: 1}}",
            Skip,
        ),
        (
            "D8",
            r#"{spec: {"(a)": "1", "X(b)": "null", "=(c)": "x"}}"#,
            r#"{spec: {a: "2", b: "present", c: "y"}}"#,
            Skip,
        ),
        (
            "D9",
            r#"{spec: {"=(volumes)": [{"X(hostPath)": "null"}]}}"#,
            "{spec: {volumes: [{name: v, hostPath: {path: /x}}]}}",
            Fail("/spec/volumes/0/hostPath/"),
        ),
        (
            "D10",
            r#"{spec: {"X(a)": "*"}}"#,
            "{spec: {a: null}}",
            Fail("/spec/a/"),
        ),
        (
            "D11",
            r#"{spec: {"=(securityContext)": {runAsNonRoot: true}}}"#,
            "{spec: {}}",
            Pass,
        ),
        (
            "D12",
            r#"{spec: {"=(securityContext)": {runAsNonRoot: true}}}"#,
            "{spec: {securityContext: {runAsNonRoot: false}}}",
            Fail("/spec/securityContext/runAsNonRoot/"),
        ),
        (
            "D13",
            r#"{spec: {"^(containers)": [{image: "nginx*"}]}}"#,
            r#"{spec: {containers: [{image: busybox}, {image: "nginx:1"}]}}"#,
            Pass,
        ),
        (
            "D13b",
            r#"{spec: {"^(containers)": [{image: "nginx*"}]}}"#,
            "{spec: {containers: [{image: busybox}]}}",
            Fail("/spec/containers/"),
        ),
        (
            "D14",
            r#"{spec: {"^(initContainers)": [{image: "nginx*"}]}}"#,
            "{spec: {}}",
            Pass,
        ),
        (
            "D15",
            r#"{spec: {"^(initContainers)": [{image: "nginx*"}], containers: [{image: x}]}}"#,
            r#"{spec: {containers: [{image: "y"}]}}"#,
            Error,
        ),
        (
            "D16",
            r#"{spec: {"^(containers)": [{image: "nginx*"}, {image: "redis*"}]}}"#,
            "{spec: {containers: [{image: nginx}]}}",
            Fail("/spec/containers/"),
        ),
        (
            "D17",
            D17_PATTERN,
            r#"{spec: {containers: [{name: nginx, image: "nginx:v1", imagePullPolicy: Always}]}}"#,
            Skip,
        ),
        (
            "D18",
            D17_PATTERN,
            r#"{spec: {containers: [{name: a, image: "nginx:latest", imagePullPolicy: IfNotPresent}, {name: b, image: "nginx:v2", imagePullPolicy: Always}]}}"#,
            Pass,
        ),
        (
            "D18b",
            D17_PATTERN,
            r#"{spec: {containers: [{name: b, image: "nginx:v2", imagePullPolicy: Always}, {name: a, image: "nginx:latest", imagePullPolicy: Always}]}}"#,
            Fail("/spec/containers/1/imagePullPolicy/"),
        ),
        (
            "D19",
            r#"{spec: {"<(tier)": "web", replicas: ">=2"}}"#,
            "{spec: {replicas: 1}}",
            Fail("/spec/replicas/"),
        ),
        (
            "D20",
            r#"{metadata: {"<(name)": nginx}, spec: {imagePullSecrets: [{name: regcred}]}}"#,
            "{metadata: {name: somename}, spec: {imagePullSecrets: [{name: cred}]}}",
            Skip,
        ),
        (
            "D21",
            r#"{spec: {containers: [{name: "*", "<(image)": "corp.reg.com/*"}], imagePullSecrets: [{name: my-registry-secret}]}}"#,
            "{spec: {containers: [{name: web, image: corp.reg.com/nginx}], imagePullSecrets: [{name: other-secret}]}}",
            Fail("/spec/imagePullSecrets/0/name/"),
        ),
        (
            "D22",
            r#"{spec: {c: [{"<(image)": nginx, env: [{"<(name)": foo, value: bar}]}]}}"#,
            "{spec: {c: [{image: redis, env: [{name: foo, value: baz}]}]}}",
            Fail("/spec/c/0/env/0/value/"),
        ),
        (
            "D23",
            D23_PATTERN,
            "{metadata: {labels: {run: x}}, spec: {volumes: [{hostPath: {path: /var/run/docker.sock}}]}}",
            Fail("/metadata/labels/allow-docker/"),
        ),
        (
            "D23b",
            D23_PATTERN,
            "{metadata: {labels: {run: x}}, spec: {}}",
            Skip,
        ),
        (
            "D23c",
            D23_PATTERN,
            r#"{metadata: {labels: {allow-docker: "true"}}, spec: {volumes: [{hostPath: {path: /var/run/docker.sock}}]}}"#,
            Pass,
        ),
        (
            "D24",
            D24_PATTERN,
            "{spec: {volumes: [{name: cache-volume, emptyDir: {}}]}}",
            Skip,
        ),
        (
            "D24b",
            D24_PATTERN,
            "{spec: {volumes: [{name: data, emptyDir: {}}]}}",
            Fail("/spec/volumes/0/emptyDir/sizeLimit/"),
        ),
        (
            "D24c",
            D24_PATTERN,
            "{spec: {volumes: [{name: data}]}}",
            Pass,
        ),
        (
            "D25",
            r#"{spec: {"=(volumes)": [{"(name)": "!credential-socket&!istio-data", "=(emptyDir)": {sizeLimit: "?*"}}]}}"#,
            "{spec: {volumes: [{name: credential-socket, emptyDir: {sizeLimit: 1Gi}}]}}",
            Skip,
        ),
        (
            "D26",
            r#"{"(spec)": {"X(hostNetwork)": "null"}, metadata: {labels: {tier: web}}}"#,
            "{metadata: {labels: {}}, spec: {hostNetwork: true}}",
            Skip,
        ),
        (
            "D26b",
            r#"{"(spec)": {"X(hostNetwork)": "null"}, metadata: {labels: {tier: web}}}"#,
            "{metadata: {labels: {}}, spec: {}}",
            Fail("/metadata/labels/tier/"),
        ),
        (
            "D27",
            D27_PATTERN,
            "{spec: {initContainers: [{name: istio-init, securityContext: {runAsUser: 0}}], containers: [{securityContext: {runAsUser: 1000}}]}}",
            Pass,
        ),
        (
            "D27b",
            D27_PATTERN,
            "{spec: {initContainers: [{name: nginx, securityContext: {runAsUser: 0}}], containers: [{securityContext: {runAsUser: 1000}}]}}",
            Fail("/spec/initContainers/0/securityContext/runAsUser/"),
        ),
        // D28: the policy is invalid (policy validation rejects `+()`); if it reached the
        // engine the key is looked up literally.
        (
            "D28",
            r#"{spec: {"+(priority)": 1}}"#,
            "{spec: {priority: 1}}",
            Fail("/spec/+(priority)/"),
        ),
    ]);
}

#[test]
fn d_anchor_messages() {
    // D1: the skip message.
    let v = run(
        D2_PATTERN,
        r#"{spec: {containers: [{image: "nginx:1.2", imagePullPolicy: IfNotPresent}]}}"#,
    );
    assert_eq!(
        v.message,
        "conditional anchor mismatch: resource value 'nginx:1.2' does not match '*:latest' at path /spec/containers/0/image/"
    );
    // D7
    let v = run(
        r#"{spec: {"(tier)": "web", replicas: ">=2"}}"#,
        "{spec: {replicas: 1}}",
    );
    assert_eq!(
        v.message,
        "conditional anchor mismatch: conditional anchor key doesn't exist in the resource"
    );
    // D15: the error message, path dropped.
    let v = run(
        r#"{spec: {"^(initContainers)": [{image: "nginx*"}], containers: [{image: x}]}}"#,
        r#"{spec: {containers: [{image: "y"}]}}"#,
    );
    assert_eq!(
        v.message,
        "validation error: rule r execution error: resource value 'y' does not match 'x' at path /spec/containers/0/image/"
    );
    assert_eq!(v.path, None);
    // D5: skips of every element are joined with "; ".
    let v = run(
        D4_PATTERN,
        r#"{spec: {containers: [{name: a, image: "nginx:1.2.3", imagePullPolicy: Always}, {name: b, image: "busybox:1.28", imagePullPolicy: Always}]}}"#,
    );
    assert_eq!(
        v.message,
        "conditional anchor mismatch: resource value 'nginx:1.2.3' does not match '*:latest | !*:*' at path /spec/containers/0/image/; \
         conditional anchor mismatch: resource value 'busybox:1.28' does not match '*:latest | !*:*' at path /spec/containers/1/image/"
    );
}

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

fn any(message: Option<&str>, patterns: &str, res: &str) -> PatternVerdict {
    let Value::Seq(items) = yaml(patterns).value else {
        panic!("not a list")
    };
    validate_any_pattern("r", message, &resource(res), &items)
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

#[test]
fn walk_edges() {
    check(&[
        // Nested arrays shorter than the pattern: empty path → Error (§3.4).
        ("nested-short", "{a: [[1], [2]]}", "{a: [[1]]}", Error),
        ("nested-ok", "{a: [[1], [2]]}", "{a: [[1], [2], [3]]}", Pass),
        // Existence on a non-list resource value.
        (
            "exist-scalar",
            r#"{"^(a)": [{b: 1}]}"#,
            "{a: x}",
            Fail("/a/"),
        ),
        // Map pattern at the root against a map is fine; against a list item of scalars not.
        ("map-vs-list", "{a: {b: 1}}", "{a: [1]}", Fail("/a/")),
        ("list-vs-map", "{a: [1]}", "{a: {b: 1}}", Fail("/a/")),
        // An equality anchor on a present null walks the value.
        ("eq-null", r#"{"=(a)": {b: 1}}"#, "{a: null}", Fail("/a/")),
    ]);
}
