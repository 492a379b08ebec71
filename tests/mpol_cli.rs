//! MutatingPolicies in `kpol check` and `kpol mutate` (admission order: mutations before every
//! validation), on `testdata/check/mpol/`: a MutatingPolicy adding the label a
//! ValidatingPolicy requires, and a commented Deployment.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/check/mpol")
}

fn kpol_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("cannot run kpol: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_label_added_by_a_mutating_policy_satisfies_the_validating_policy() {
    let out = kpol_in(
        &dir(),
        &["check", "deploy.yaml", "-p", "mpol.yaml", "-p", "vpol.yaml"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("pass: 1, fail: 0"));
}

#[test]
fn without_the_mutating_policy_the_deployment_fails_at_its_labels() {
    let out = kpol_in(&dir(), &["check", "deploy.yaml", "-p", "vpol.yaml"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // The expression reads object.metadata.labels: the finding is at `labels:` (line 6).
    assert!(stdout.contains("--> deploy.yaml:6:3"), "{stdout}");
    assert!(stdout.contains("the label team is required"), "{stdout}");
    // A resource without labels: at `metadata:`.
    let tmp = tempfile::tempdir().unwrap();
    let bare = std::fs::read_to_string(dir().join("deploy.yaml"))
        .unwrap()
        .replace("  labels:\n    app: web\n", "");
    std::fs::write(tmp.path().join("bare.yaml"), bare).unwrap();
    let vpol = dir().join("vpol.yaml");
    let out = kpol_in(
        tmp.path(),
        &["check", "bare.yaml", "-p", vpol.to_str().unwrap()],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("--> bare.yaml:4:1"), "{stdout}");
}

#[test]
fn mutate_diff_changes_only_the_patched_lines_and_a_second_pass_is_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(dir().join("deploy.yaml")).unwrap();
    std::fs::write(tmp.path().join("deploy.yaml"), &original).unwrap();
    let mpol = dir().join("mpol.yaml");
    let mpol = mpol.to_str().unwrap();
    let out = kpol_in(tmp.path(), &["mutate", "deploy.yaml", "-p", mpol, "--diff"]);
    let diff = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{diff}");
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(changed, ["+    team: platform"], "{diff}");
    let out = kpol_in(
        tmp.path(),
        &["mutate", "deploy.yaml", "-p", mpol, "--write"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(tmp.path().join("deploy.yaml")).unwrap();
    // Comments and layout stay; only the label line is new.
    assert_eq!(
        written,
        original.replace(
            "    app: web\nspec:",
            "    app: web\n    team: platform\nspec:"
        )
    );
    let out = kpol_in(
        tmp.path(),
        &["mutate", "deploy.yaml", "-p", mpol, "--check"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// `kpol mutate --context-file`: a MutatingPolicy reads image data through `image.GetMetadata`
/// (the label Kyverno v1.19.0's `kyverno apply --context-file` adds: `arch: arm64`), the rest
/// of the file kept; without the file the call is unsupported offline (exit 1), and a context
/// file that does not read stops the run before anything is written (exit 2).
#[test]
fn mutate_reads_image_data_from_a_context_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = |extra: &[&str]| -> Output {
        let mut a = vec![
            "mutate",
            "testdata/check/context/pod.yaml",
            "-p",
            "testdata/check/context/arch-label.yaml",
        ];
        a.extend_from_slice(extra);
        kpol_in(root, &a)
    };
    let out = args(&["--context-file", "testdata/test/image-data/context.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let original = std::fs::read_to_string(root.join("testdata/check/context/pod.yaml")).unwrap();
    assert_eq!(
        text(&out.stdout),
        original.replace(
            "  namespace: default\n",
            "  namespace: default\n  labels:\n    arch: arm64\n"
        )
    );
    let out = args(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("image.GetMetadata: unsupported offline"));
    let out = args(&[
        "--context-file",
        "testdata/check/context/unknown-field.yaml",
        "--diff",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
}
