//! `kpol check` on UPDATEs with a real old object (`--old`, `--diff-base`, the values file's
//! `request.oldObject`): as in Kyverno's validate handler, an Enforce failure the old object
//! had too is skipped, one the update brings in fails.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use std::path::Path;
use std::process::Command;

const DIR: &str = "testdata/check/old";
const SKIP: &str = "skipping the rule evaluation as pre-existing violations are allowed";

/// (resource name, result) of every result of a JSON run, and the exit code.
fn results(args: &[&str]) -> (Vec<(String, String, String)>, Option<i32>) {
    let mut all = vec!["check", "--no-config", "--format", "json", "-v"];
    all.extend_from_slice(args);
    let o = kpol(&all);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    let rows = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["resource"]["name"].as_str().unwrap().to_owned(),
                r["result"].as_str().unwrap().to_owned(),
                r["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (rows, o.status.code())
}

fn p(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// The previous revision lacked the label too: the violation already existed, the rule is
/// skipped. `fresh` has no previous revision: a CREATE, and it fails.
#[test]
fn old_revision_with_the_same_violation_skips() {
    let (rows, code) = results(&[
        "-p",
        &p("policy.yaml"),
        &p("new.yaml"),
        "--old",
        &p("old-unlabelled.yaml"),
    ]);
    assert_eq!(rows[0].0, "settings");
    assert_eq!(rows[0].1, "skip", "{rows:?}");
    assert_eq!(rows[0].2, SKIP);
    assert_eq!((rows[1].0.as_str(), rows[1].1.as_str()), ("fresh", "fail"));
    assert_eq!(code, Some(1));
}

/// The previous revision had the label: the update introduces the violation, which fails.
#[test]
fn old_revision_without_the_violation_fails() {
    let (rows, code) = results(&[
        "-p",
        &p("policy.yaml"),
        &p("new.yaml"),
        "--old",
        &p("old-labelled.yaml"),
    ]);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str()),
        ("settings", "fail")
    );
    assert_eq!(code, Some(1));
}

/// With only `--old` of another resource, or none, nothing is an UPDATE: both fail.
#[test]
fn without_a_previous_revision_resources_are_created() {
    let (rows, _) = results(&["-p", &p("policy.yaml"), &p("new.yaml")]);
    assert!(rows.iter().all(|r| r.1 == "fail"), "{rows:?}");
}

/// The values file's `request.oldObject` is merged over the resource to make the old object
/// (the Kyverno CLI reads it back from its context): the labelled old object passes, so the
/// failures stand instead of becoming pre-existing.
#[test]
fn values_file_old_object_is_used() {
    let (rows, code) = results(&[
        "-p",
        &p("policy.yaml"),
        &p("new.yaml"),
        "-f",
        &p("values-old-labelled.yaml"),
    ]);
    assert!(rows.iter().all(|r| r.1 == "fail"), "{rows:?}");
    assert_eq!(code, Some(1));
}

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `--diff-base REV`: a changed file is checked as an UPDATE against its version at REV; a
/// file unchanged since REV, and one added since, as CREATE.
#[test]
fn diff_base_checks_changed_files_against_the_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !git(dir, &["init", "-q"]) {
        eprintln!("git not available; skipped");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    let copy = |from: &str, to: &str| std::fs::copy(root.join(from), dir.join(to)).unwrap();
    copy("old-unlabelled.yaml", "kept.yaml");
    copy("old-labelled.yaml", "broken.yaml");
    copy("old-unlabelled.yaml", "same.yaml");
    assert!(git(dir, &["add", "."]));
    assert!(git(dir, &["commit", "-qm", "base"]));
    // kept: still unlabelled (pre-existing); broken: the label is removed (introduced).
    let new = std::fs::read_to_string(root.join("new.yaml")).unwrap();
    let settings = new.split("---").next().unwrap();
    std::fs::write(dir.join("kept.yaml"), settings).unwrap();
    std::fs::write(dir.join("broken.yaml"), settings).unwrap();
    std::fs::write(dir.join("added.yaml"), settings).unwrap();
    let policy = root.join("policy.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .current_dir(dir)
        .args(["check", "--no-config", "--format", "json", "-v", "-p"])
        .arg(&policy)
        .args(["--diff-base", "HEAD", "."])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let by_file: Vec<(String, String)> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let f = r["file"].as_str().unwrap();
            let f = f.rsplit('/').next().unwrap().to_owned();
            (f, r["result"].as_str().unwrap().to_owned())
        })
        .collect();
    let want = [
        ("added.yaml", "fail"),
        ("broken.yaml", "fail"),
        ("kept.yaml", "skip"),
        ("same.yaml", "fail"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    assert_eq!(by_file, want);
    assert_eq!(o.status.code(), Some(1));

    // An unknown revision makes the run incomplete.
    let o = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .current_dir(dir)
        .args(["check", "--no-config", "-p"])
        .arg(&policy)
        .args(["--diff-base", "no-such-rev", "."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("unknown revision"));
}

/// Outside a git repository `--diff-base` is an error (exit 2).
#[test]
fn diff_base_outside_a_repository_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cm.yaml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(DIR)
            .join("new.yaml"),
        &file,
    )
    .unwrap();
    let policy = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join("policy.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .current_dir(tmp.path())
        .env("GIT_CEILING_DIRECTORIES", tmp.path().parent().unwrap())
        .args(["check", "--no-config", "-p"])
        .arg(&policy)
        .args(["--diff-base", "HEAD"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("not in a git repository"));
}
