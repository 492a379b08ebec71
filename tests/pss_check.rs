//! `kpol check` with the embedded default policies on Pod Security Standards violations:
//! the baseline policy reports them at the offending field's line.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The finding of `rule` in the human output: its header line and the rest of its block.
fn finding<'a>(text: &'a str, rule: &str) -> &'a str {
    let head = format!("fail[{rule}]");
    let start = text
        .find(&head)
        .unwrap_or_else(|| panic!("no {head} in:\n{text}"));
    let rest = &text[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn host_network_pod_fails_the_baseline_default_at_its_line() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "testdata/pss/host-network-pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let f = finding(&text, "pod-security-baseline/baseline");
    assert!(
        f.contains(
            "Validation rule 'baseline' failed. It violates PodSecurity \"baseline:latest\": \
             (Forbidden reason: host namespaces, field error list: \
             [spec.hostNetwork is forbidden, forbidden values found: true])"
        ),
        "{f}"
    );
    // `hostNetwork: true` is line 7; its value starts at column 16.
    assert!(
        f.contains("--> testdata/pss/host-network-pod.yaml:7:16"),
        "{f}"
    );
    assert!(f.contains("(Enforce)"), "{f}");
}

#[test]
fn controllers_are_checked_through_autogen_at_the_template_field() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "testdata/pss/host-path-deployment.yaml",
    ]);
    let text = stdout(&o);
    let f = finding(&text, "pod-security-baseline/autogen-baseline");
    assert!(
        f.contains(
            "(Forbidden reason: hostPath volumes, field error list: \
             [spec.template.spec.volumes[0].hostPath is forbidden, forbidden values found: /var/log])"
        ),
        "{f}"
    );
    // The `hostPath:` key of the first volume is line 18.
    assert!(
        f.contains("--> testdata/pss/host-path-deployment.yaml:18:"),
        "{f}"
    );
    let r = finding(&text, "pod-security-restricted/autogen-restricted");
    assert!(r.contains("restricted volume types"), "{r}");
    assert!(r.contains("(Audit)"), "{r}");
}

/// A Pod that meets the restricted level passes both defaults.
#[test]
fn restricted_pod_passes_both_defaults() {
    let o = kpol(&["check", "testdata/sample/web-deployment.yaml"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(!text.contains("fail[pod-security"), "{text}");
}
