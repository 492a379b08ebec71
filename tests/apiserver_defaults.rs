//! `kpol check --apiserver-defaults`: verdicts that the API server's defaulting changes, and
//! the note that names the defaults.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

const DIR: &str = "testdata/check/apiserver-defaults";

fn run(args: &[&str]) -> (Option<i32>, String) {
    // The messages are matched whole: no wrapping.
    let o = kpol(&[args, &["--width", "0"]].concat());
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// As written the Pod has no imagePullPolicy and a `hostPort: 0`: both rules fail. Defaulted,
/// `nginx` (no tag) pulls Always and the 0 is dropped: both pass, each with its note.
#[test]
fn defaults_turn_failures_into_passes_and_say_which() {
    let pol = format!("{DIR}/pull-and-host-port.yaml");
    let pod = format!("{DIR}/pod.yaml");
    let (code, text) = run(&["check", "-p", &pol, &pod]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("pass: 0, fail: 2"), "{text}");
    assert!(!text.contains("API-server defaults"), "{text}");

    let (code, text) = run(&["check", "-p", &pol, &pod, "--apiserver-defaults", "-v"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("pass: 2, fail: 0"), "{text}");
    assert!(
        text.contains(
            "(verdict changed by API-server defaults, fail as written: \
             spec.containers[0].imagePullPolicy=Always)"
        ),
        "{text}"
    );
    assert!(
        text.contains("spec.containers[0].ports[0].hostPort dropped (0, omitempty)"),
        "{text}"
    );
}

/// The ServiceAccount admission plugin names `default`: a rule that passes as written fails,
/// reported at `spec:` (the defaulted field is not in the file), and JSON lists the default.
#[test]
fn a_default_that_makes_a_rule_fail_is_reported_at_its_parent() {
    let pol = format!("{DIR}/no-default-sa.yaml");
    let pod = format!("{DIR}/pod.yaml");
    let (code, text) = run(&["check", "-p", &pol, &pod]);
    assert_eq!(code, Some(0), "{text}");

    let (code, text) = run(&["check", "-p", &pol, &pod, "--apiserver-defaults"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(
            "(verdict changed by API-server defaults, pass as written: \
             spec.serviceAccountName=default)"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("--> {pod}:5:1")), "{text}");

    let (_, json) = run(&[
        "check",
        "-p",
        &pol,
        &pod,
        "--apiserver-defaults",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["results"][0]["apiserverDefaults"],
        serde_json::json!(["spec.serviceAccountName=default"])
    );
}

/// Templates get pod spec defaults (a tagged image pulls IfNotPresent, so the rule still
/// fails, now at the container) but no admission plugin: no note where nothing changed.
#[test]
fn templates_are_defaulted_without_admission_plugins() {
    let pol = format!("{DIR}/no-default-sa.yaml");
    let deploy = format!("{DIR}/deployment.yaml");
    // The rule matches Pods; autogen carries it to the Deployment's template.
    let (code, text) = run(&["check", "-p", &pol, &deploy, "--apiserver-defaults"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("API-server defaults"), "{text}");

    let pol = format!("{DIR}/pull-and-host-port.yaml");
    let (_, text) = run(&["check", "-p", &pol, &deploy, "--apiserver-defaults"]);
    assert!(
        text.contains("fail[always-pull/autogen-require-always]"),
        "{text}"
    );
    assert!(!text.contains("API-server defaults"), "{text}");
}

/// `apiserverDefaults: true` in the config file turns it on as the flag does.
#[test]
fn the_config_file_turns_it_on() {
    let pol = format!("{DIR}/no-default-sa.yaml");
    let pod = format!("{DIR}/pod.yaml");
    let config = format!("{DIR}/kpol.yaml");
    let (code, text) = run(&["check", "--config", &config, "-p", &pol, &pod]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("spec.serviceAccountName=default"), "{text}");
}
