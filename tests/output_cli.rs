//! Output for CI logs and people: `--format concise`, findings in line order, `--color`,
//! `NO_COLOR` and `--remove-color`.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::kpol;

const POD: &str = "testdata/check/invalid/pod.yaml";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One line per finding, `file:line:col: level policy/rule: message`, in line order (the
/// policies are loaded in another order), then the summary; an input problem is a line too.
#[test]
fn concise_is_one_line_per_finding_in_line_order() {
    let o = kpol(&[
        "check",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "-p",
        "policies/require-probes.yaml",
        "-p",
        "testdata/check/schema/typo-policy.yaml",
        "--format",
        "concise",
        POD,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "testdata/check/schema/typo-policy.yaml:14:7: error[schema]: ClusterPolicy require-team: spec.rules[0].validate: unknown field \"mesage\"",
            "testdata/check/invalid/pod.yaml:3:1: error require-team/team-label: validation error: rule team-label failed at path /metadata/labels/",
            "testdata/check/invalid/pod.yaml:7:5: warning require-probes/validate-probes: validation error: Liveness and readiness probes are required. rule validate-probes failed at path /spec/containers/0/",
            "testdata/check/invalid/pod.yaml:8:12: warning disallow-latest-tag/require-image-tag: validation error: An image tag is required. rule require-image-tag failed at path /spec/containers/0/image/",
            "pass: 1, fail: 3, warn: 0, error: 0, skip: 0; 1 policy error",
        ],
        "{text}"
    );
}

fn human(args: &[&str], no_color: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kpol"));
    cmd.args(["check", "-p", "policies/disallow-latest-tag.yaml", POD])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR");
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
}

/// `--color always` colours the level tag, even with `NO_COLOR` (an explicit request wins);
/// `auto` on a pipe, `never` and `--remove-color` write no escape sequence.
#[test]
fn color_when_asked_and_never_on_a_pipe() {
    let red = "\u{1b}[1;31mfail\u{1b}[0m[disallow-latest-tag/require-image-tag]";
    assert!(human(&["--color", "always"], None).starts_with(red));
    assert!(human(&["--color", "always"], Some("1")).starts_with(red));
    for args in [
        &["--color", "auto"][..],
        &["--color", "never"],
        &["--remove-color"],
        &["--remove-color", "--color", "always"],
        &[],
    ] {
        let text = human(args, None);
        assert!(!text.contains('\u{1b}'), "{args:?}: {text}");
        assert!(
            text.starts_with("fail[disallow-latest-tag/require-image-tag]"),
            "{args:?}"
        );
    }
}
