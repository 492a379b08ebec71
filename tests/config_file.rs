//! `.kpol.yaml`: a sample repository (testdata/config/repo) whose config changes what a bare
//! `kpol check` does; flags override it; an unknown key is an error at its line and column.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/config/repo")
}

fn kpol_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .output()
        .expect("run kpol")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bare_check_follows_the_config() {
    let o = kpol_in(&repo(), &["check"]);
    let out = text(&o.stdout);
    // format: json, paths: [manifests], policies: [policies], the generated dir excluded.
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{out}");
    assert!(results.iter().all(|r| r["policy"] == "require-team-label"));
    assert!(doc["diagnostics"].as_array().unwrap().is_empty(), "{out}");
    // auditWarn: the Audit failure is a warning; warnExitCode: 3.
    assert_eq!(doc["summary"]["warn"], 1);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
}

#[test]
fn the_config_is_found_from_a_subdirectory() {
    let o = kpol_in(&repo().join("manifests"), &["check"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["results"].as_array().unwrap().len(), 2);
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn flags_override_the_config() {
    let o = kpol_in(
        &repo(),
        &[
            "check",
            "--format",
            "human",
            "vendor",
            "--warn-exit-code",
            "0",
        ],
    );
    let out = text(&o.stdout);
    // Only the team policy is loaded (from the config), so the privileged Pod has no finding.
    assert!(out.starts_with("pass: 0, fail: 0"), "{out}");
    assert_eq!(o.status.code(), Some(0));
    // Without the config: kpol's embedded default policies.
    let o = kpol_in(&repo(), &["check", "--no-config", "vendor"]);
    assert!(
        text(&o.stdout).contains("fail[disallow-privileged-containers/"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn unknown_key_is_an_error_with_line_and_column() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/config");
    let o = kpol_in(&dir, &["check", "--config", "unknown-key.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("unknown-key.yaml:2:1"), "{err}");
    assert!(err.contains("unknown key 'policy'"), "{err}");
}

#[test]
fn without_any_config_paths_default_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: 'nginx:1'}]\n",
    )
    .unwrap();
    let o = kpol_in(dir.path(), &["check", "--no-config"]);
    assert!(text(&o.stdout).contains("fail[disallow-host-namespaces/host-namespaces]"));
    assert_eq!(o.status.code(), Some(1));
}

/// `values:` in the config (or `-f`) feeds variables to rules: a deny rule comparing the
/// resource's team label with a global value.
#[test]
fn values_file_from_the_config_feeds_variables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("policy.yaml"),
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: owned}\nspec:\n  \
         validationFailureAction: Enforce\n  rules:\n  - name: team\n    match: {any: [{resources: {kinds: [ConfigMap]}}]}\n    \
         context: [{name: team, apiCall: {urlPath: /api/v1/namespaces/shop, jmesPath: metadata.labels.team}}]\n    \
         validate:\n      message: wrong team\n      deny:\n        conditions:\n          any:\n          \
         - {key: \"{{ request.object.metadata.labels.team }}\", operator: NotEquals, value: \"{{ team }}\"}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {team: shop}}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("values.yaml"),
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Value\nmetadata: {name: v}\nglobalValues: {team: shop}\n",
    )
    .unwrap();
    std::fs::write(
        d.join(".kpol.yaml"),
        "policies: [policy.yaml]\npaths: [cm.yaml]\n",
    )
    .unwrap();
    // Without values the variable is unresolved: the rule errors.
    let bare = kpol_in(d, &["check"]);
    assert_ne!(bare.status.code(), Some(0), "{}", text(&bare.stdout));
    std::fs::write(
        d.join(".kpol.yaml"),
        "policies: [policy.yaml]\npaths: [cm.yaml]\nvalues: values.yaml\n",
    )
    .unwrap();
    let o = kpol_in(d, &["check"]);
    assert!(
        text(&o.stdout).contains("pass: 1, fail: 0"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(o.status.code(), Some(0));
    // The flag says the same, and a missing file is an incomplete run.
    let o = kpol_in(
        d,
        &[
            "check",
            "--no-config",
            "-p",
            "policy.yaml",
            "-f",
            "values.yaml",
            "cm.yaml",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = kpol_in(d, &["check", "-f", "missing.yaml"]);
    assert_eq!(o.status.code(), Some(2));
}
