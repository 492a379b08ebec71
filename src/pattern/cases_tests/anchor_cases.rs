//! validate-cases.md section D: anchors, statuses and skip/error messages.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::Expect::*;
use super::*;

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
