//! Policy loading end to end: every independent problem of an invalid policy is its own
//! diagnostic at its line:column, in position order; the policy is not evaluated (exit 2).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The `-->` positions of the `error[invalid-policy]` diagnostics, in output order.
fn invalid_positions(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("error[invalid-policy]"))
        .filter_map(|(i, _)| lines.get(i + 1))
        .filter_map(|l| l.trim().strip_prefix("--> "))
        .map(str::to_owned)
        .collect()
}

/// A ClusterPolicy with four mistakes in four rules (a field of the wrong type, an unknown
/// operator, a JMESPath syntax error, a match block that is a list) reports all four.
#[test]
fn a_policy_with_four_mistakes_reports_four_diagnostics() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        "testdata/check/invalid/four-mistakes.yaml",
        "testdata/check/invalid/pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    let f = "testdata/check/invalid/four-mistakes.yaml";
    assert_eq!(
        invalid_positions(&text),
        [
            format!("{f}:10:16"),
            format!("{f}:19:23"),
            // Just past the `[` the expression ends with.
            format!("{f}:24:53"),
            format!("{f}:27:12"),
        ],
        "{text}"
    );
    for what in [
        "spec.rules[0].validate.message: Invalid value",
        "spec.rules[1].validate.deny.conditions.any[0].: entered value of `operator` is invalid",
        "four/jmespath: JMESPath expression `request.object.metadata.name[` is invalid",
        "spec.rules[3].match: Invalid value: \"array\"",
    ] {
        assert!(text.contains(what), "{what}\n{text}");
    }
    // Not evaluated: no rule result.
    assert!(
        text.contains("pass: 0, fail: 0, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// A ClusterPolicy's bad JMESPath expressions (a context variable's `jmesPath`, a variable
/// in a double-quoted message with escapes before it, one after `''` in a single-quoted key, one
/// in a folded block) are each reported at the character the parser stopped at.
#[test]
fn bad_jmespath_is_reported_at_its_character() {
    let f = "testdata/check/invalid/jmespath-bad-expressions.yaml";
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        f,
        "testdata/check/invalid/pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    let at = invalid_positions(&text);
    assert_eq!(
        at,
        [
            format!("{f}:16:58"),
            format!("{f}:19:75"),
            format!("{f}:23:32"),
            format!("{f}:26:62"),
        ],
        "{text}"
    );
    // What is written there: the `]`, just past `team |` (the expression stops short), the
    // `]` after `''web''`, the literal's backtick.
    let policy = std::fs::read_to_string(f).unwrap();
    let lines: Vec<&str> = policy.lines().collect();
    let shown: Vec<&str> = at
        .iter()
        .map(|p| {
            let mut it = p.rsplit(':');
            let col: usize = it.next().unwrap().parse().unwrap();
            let line: usize = it.next().unwrap().parse().unwrap();
            &lines[line - 1][col - 1..col]
        })
        .collect();
    assert_eq!(shown, ["]", " ", "]", "`"], "{text}");
}

/// A ValidatingPolicy with three bad expressions (a variable, its second validation, a
/// message expression) reports each at its line:column: just past its end, where each stops
/// short.
#[test]
fn a_validating_policy_reports_each_bad_expression() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        "testdata/check/invalid/vpol-bad-expressions.yaml",
        "testdata/check/invalid/pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    let f = "testdata/check/invalid/vpol-bad-expressions.yaml";
    assert_eq!(
        invalid_positions(&text),
        [
            format!("{f}:14:41"),
            format!("{f}:18:66"),
            format!("{f}:21:33"),
        ],
        "{text}"
    );
    assert!(
        text.contains("validations[1].expression: CEL syntax error"),
        "{text}"
    );
    assert!(
        text.contains("validations[2].messageExpression: CEL syntax error"),
        "{text}"
    );
}
