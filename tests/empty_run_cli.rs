//! A CI gate fails when it did not check (issue #24): no policy, every input excluded, or an
//! empty standard input is exit 2 unless `--allow-empty`; an exception naming no loaded
//! policy is a warning.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use std::io::Write as _;
use std::process::{Command, Output, Stdio};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run kpol");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    child.wait_with_output().expect("kpol")
}

const POD: &str = "testdata/check/mixed/a-good-pod.yaml";

/// `-p` naming a manifest, not a policy: nothing was checked, exit 2.
#[test]
fn a_policy_path_without_policies_exits_2() {
    let o = kpol(&["check", "--no-config", "-p", POD, POD]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!("error[io]: no policies loaded from {POD}")),
        "{text}"
    );
    let o = kpol(&["check", "--no-config", "--allow-empty", "-p", POD, POD]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// An exclude that removes every input: exit 2, and 0 with `--allow-empty`.
#[test]
fn every_input_excluded_exits_2() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "--no-config",
        "--exclude",
        "*.yaml",
        POD,
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains("every file found matches an exclude"),
        "{text}"
    );
    assert!(text.contains("--allow-empty"), "{text}");
    let o = kpol(&[
        "check",
        "--no-config",
        "--allow-empty",
        "--exclude",
        "*.yaml",
        POD,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// `helm template … | kpol check -` where helm failed: no document on stdin is exit 2.
#[test]
fn empty_stdin_exits_2() {
    for input in [&b""[..], b"---\n", b"# nothing\n"] {
        let o = with_stdin(&["check", "--no-config", "-"], input);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(
            text.contains("error[io]: no resources on standard input"),
            "{text}"
        );
    }
    let o = with_stdin(&["check", "--no-config", "--allow-empty", "-v", "-"], b"");
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("info[io]: no resources on standard input (--allow-empty)"),
        "{text}"
    );
}

/// A PolicyException whose policyName no loaded policy has, or whose ruleNames match no rule
/// of it: a warning at the entry's `policyName`.
#[test]
fn an_exception_naming_no_policy_warns_at_policy_name() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "--no-config",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "-e",
        "testdata/exceptions/unknown-policy.yaml",
        POD,
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "warning[invalid-policy]: PolicyException default/typo: policyName \
             disalow-latest-tag names no loaded policy"
        ),
        "{text}"
    );
    assert!(
        text.contains("--> testdata/exceptions/unknown-policy.yaml:8:19"),
        "{text}"
    );
    // A loaded policy without the named rule warns too; `autogen-*` matches its autogen rules.
    assert!(
        text.contains(
            "PolicyException default/stale-rule: no rule of policy disallow-latest-tag matches \
             ruleNames [no-such-rule]"
        ),
        "{text}"
    );
    assert!(
        text.contains("--> testdata/exceptions/unknown-policy.yaml:22:19"),
        "{text}"
    );
    assert_eq!(text.matches("warning[").count(), 2, "{text}");
}
