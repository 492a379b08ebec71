//! The human format's layout for long and many findings: messages wrapped at the line width
//! (`--width`, 100 off a terminal) without changing their text, and with more findings than
//! `--max-findings`, the worst first and the rest counted — while the summary, the tables and
//! the exit code still count every finding.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

const LONG: &str = "testdata/human/long-message.yaml";
const POD: &str = "testdata/human/pod.yaml";
const POLICIES: &str = "testdata/human/policies.yaml";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The headline of the first finding: its lines up to the `-->` line.
fn headline(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("-->"))
        .collect()
}

/// The wrapped lines joined again: the prefix dropped from the first, the indent from the
/// others.
fn unwrapped(lines: &[&str], prefix: &str) -> String {
    let mut parts = vec![lines[0].strip_prefix(prefix).unwrap()];
    for l in &lines[1..] {
        let indent = " ".repeat(prefix.chars().count());
        parts.push(l.strip_prefix(&indent).unwrap_or_else(|| panic!("{l:?}")));
    }
    parts.join(" ")
}

/// The message as one line (`--width 0`) is the text every width must give back.
fn message() -> String {
    let o = kpol(&["check", "--no-config", "--width", "0", "-p", LONG, POD]);
    let text = stdout(&o);
    let lines = headline(&text);
    assert_eq!(lines.len(), 1, "{text}");
    lines[0]
        .strip_prefix("fail[long-message/explain]: ")
        .unwrap()
        .to_owned()
}

#[test]
fn long_messages_wrap_at_the_width_under_the_message_and_keep_their_text() {
    let message = message();
    assert!(message.contains("and  keep  the  double"), "{message}");
    let prefix = "fail[long-message/explain]: ";
    for (flags, width) in [
        (&[][..], 100),
        (&["--width", "60"][..], 60),
        (&["--width", "140"][..], 140),
    ] {
        let o = kpol(&[&["check", "--no-config", "-p", LONG, POD][..], flags].concat());
        assert_eq!(o.status.code(), Some(1));
        let text = stdout(&o);
        let lines = headline(&text);
        assert!(lines.len() > 1, "{flags:?}: {text}");
        assert_eq!(unwrapped(&lines, prefix), message, "{flags:?}: text kept");
        for l in &lines {
            let wide = l.chars().count();
            // A word longer than the line stands alone on its line, whole.
            let one_word = !l.trim_start().contains(' ');
            assert!(
                wide <= width || one_word,
                "{flags:?}: {wide} > {width}: {l:?}"
            );
        }
        let url = lines.iter().find(|l| l.contains("https://")).unwrap();
        assert!(
            url.trim_start().ends_with(
                "team-label-requirements-and-exceptions-for-every-namespace-in-the-cluster"
            ),
            "{url}"
        );
    }
}

/// Colour escapes do not count towards the width: the same breaks with and without colour.
#[test]
fn colour_does_not_change_where_lines_break() {
    let plain = stdout(&kpol(&["check", "--no-config", "-p", LONG, POD]));
    let colour = stdout(&kpol(&[
        "check",
        "--no-config",
        "--color",
        "always",
        "-p",
        LONG,
        POD,
    ]));
    assert!(colour.contains("\x1b["), "{colour}");
    let stripped = colour.replace("\x1b[1;31m", "").replace("\x1b[0m", "");
    assert_eq!(stripped, plain);
}

/// Only the human format wraps: concise and github keep one line per finding.
#[test]
fn other_formats_stay_one_line() {
    let message = message();
    for format in ["concise", "github"] {
        let text = stdout(&kpol(&[
            "check",
            "--no-config",
            "--format",
            format,
            "-p",
            LONG,
            POD,
        ]));
        let line = text
            .lines()
            .find(|l| l.contains("every Pod must carry"))
            .unwrap();
        assert!(line.contains(&message), "{format}: {line}");
    }
}

/// 30 unlabelled Pods, each failing three policies: 60 Enforce failures (30 of a `high`
/// policy, 30 of a `low` one) and 30 Audit failures (a `medium` policy).
fn pods() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        std::fs::write(
            dir.path().join(format!("p{i:02}.yaml")),
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i:02}\nspec:\n  containers:\n  \
                 - name: c\n    image: nginx:1.27\n"
            ),
        )
        .unwrap();
    }
    dir
}

fn check_pods(dir: &tempfile::TempDir, flags: &[&str]) -> (Option<i32>, String) {
    let path = dir.path().to_str().unwrap();
    let o = kpol(
        &[
            &["check", "--no-config", "-t", "-p", POLICIES, path][..],
            flags,
        ]
        .concat(),
    );
    (o.status.code(), stdout(&o))
}

/// The policies of the finding headlines, in output order.
fn shown(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("fail[").or_else(|| l.strip_prefix("warn[")))
        .filter_map(|l| l.split('/').next())
        .collect()
}

/// What follows the findings: the tables and the summary.
fn tail(text: &str) -> &str {
    &text[text.find("POLICY ").unwrap()..]
}

#[test]
fn many_findings_show_the_worst_first_and_count_the_rest() {
    let dir = pods();
    let (all_code, all) = check_pods(&dir, &["--max-findings", "0"]);
    assert_eq!(all_code, Some(1));
    assert_eq!(shown(&all).len(), 90, "{all}");
    assert!(!all.contains("more findings"), "{all}");
    // Up to the cap, input order: file by file, policies in load order.
    assert_eq!(
        &shown(&all)[..3],
        ["enforce-high", "audit-medium", "enforce-low"]
    );

    let (code, text) = check_pods(&dir, &["--max-findings", "40"]);
    assert_eq!(code, all_code, "the cap does not change the exit code");
    let policies = shown(&text);
    assert_eq!(policies.len(), 40, "{text}");
    // Enforce before Audit; within Enforce, high before low; then input order.
    assert!(
        policies[..30].iter().all(|p| *p == "enforce-high"),
        "{policies:?}"
    );
    assert!(
        policies[30..].iter().all(|p| *p == "enforce-low"),
        "{policies:?}"
    );
    let first_low = text.find("fail[enforce-low/tier]").unwrap();
    assert!(text[first_low..].contains("p00.yaml"));
    assert!(
        text.contains("… and 50 more findings (50 fail) not shown; --max-findings 0 shows all\n")
    );
    assert_eq!(
        tail(&text),
        tail(&all),
        "tables and summary count every finding"
    );
    assert!(tail(&text).contains("pass: 0, fail: 90, warn: 0"), "{text}");

    // Audit failures as warnings: they are counted apart.
    let (code, text) = check_pods(&dir, &["--max-findings", "40", "--audit-warn"]);
    assert_eq!(code, Some(1));
    assert!(text.contains("… and 50 more findings (20 fail, 30 warn) not shown"));
    assert!(!shown(&text).contains(&"audit-medium"), "{text}");

    // The default cap is 50; -v shows every finding.
    let (_, text) = check_pods(&dir, &[]);
    assert_eq!(shown(&text).len(), 50, "{text}");
    assert!(text.contains("… and 40 more findings (40 fail) not shown"));
    let (_, text) = check_pods(&dir, &["-v"]);
    assert_eq!(shown(&text).len(), 90);
    assert!(!text.contains("more findings"));
}

/// The cap's output is the same at any thread count.
#[test]
fn the_capped_output_is_the_same_for_any_thread_count() {
    let dir = pods();
    let (_, one) = check_pods(&dir, &["--max-findings", "7", "-j1"]);
    let (_, four) = check_pods(&dir, &["--max-findings", "7", "-j4"]);
    assert_eq!(one, four);
}
