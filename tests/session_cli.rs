//! One session for every command (src/cli/session.rs): `.kpol.yaml`'s policies, exceptions,
//! excludes and values apply to `kpol mutate` and `kpol generate` as to `kpol check`; config
//! excludes hold however the paths are typed; `kpol mutate`/`kpol generate` without any
//! policy apply nothing (exit 2) instead of kpol's embedded set.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

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

const TEAM_LABEL: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-team
spec:
  rules:
    - name: team
      match:
        any:
          - resources:
              kinds: [ConfigMap]
      # Declared for Kyverno's policy validation; offline its value comes from values.
      context:
        - name: team
          apiCall:
            urlPath: /api/v1/namespaces/platform
            jmesPath: metadata.labels.team
      mutate:
        patchStrategicMerge:
          metadata:
            labels:
              +(team): \"{{ team }}\"
";

const QUOTA: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-quota
spec:
  rules:
    - name: quota
      match:
        any:
          - resources:
              kinds: [Namespace]
      context:
        - name: pods
          apiCall:
            urlPath: /api/v1/namespaces/platform
            jmesPath: metadata.labels.pods
      generate:
        apiVersion: v1
        kind: ResourceQuota
        name: quota
        namespace: \"{{request.object.metadata.name}}\"
        data:
          spec:
            hard:
              pods: \"{{ pods }}\"
";

const VALUES: &str = "apiVersion: cli.kyverno.io/v1alpha1
kind: Value
globalValues:
  team: platform
  pods: \"10\"
";

fn cm(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
}

/// A repository: `.kpol.yaml` naming its policies, values, and `manifests/generated`
/// excluded; one ConfigMap to mutate, one malformed generated file, one Namespace.
fn repo(policies: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir_all(d.join("policies")).unwrap();
    std::fs::create_dir_all(d.join("manifests/generated")).unwrap();
    for (name, body) in policies {
        std::fs::write(d.join("policies").join(name), body).unwrap();
    }
    std::fs::write(
        d.join(".kpol.yaml"),
        "policies: [policies]\nvalues: values.yaml\nexclude: [\"manifests/generated/**\"]\n",
    )
    .unwrap();
    std::fs::write(d.join("values.yaml"), VALUES).unwrap();
    std::fs::write(d.join("manifests/app.yaml"), cm("app")).unwrap();
    // Malformed: were it read, every command would report it (exit 2).
    std::fs::write(d.join("manifests/generated/gen.yaml"), "kind: [unclosed\n").unwrap();
    std::fs::write(
        d.join("manifests/ns.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
    )
    .unwrap();
    tmp
}

/// `kpol mutate --diff` and `--check` use the config's policy and values (the label is
/// `platform`), and leave the excluded directory alone.
#[test]
fn mutate_follows_the_config() {
    let tmp = repo(&[("team.yaml", TEAM_LABEL)]);
    let d = tmp.path();
    let diff = kpol_in(d, &["mutate", "--diff", "manifests"]);
    let out = text(&diff.stdout);
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff.stderr));
    assert!(out.contains("+++ b/manifests/app.yaml"), "{out}");
    assert!(out.contains("+    team: platform"), "{out}");
    assert!(!out.contains("gen.yaml"), "{out}");
    assert!(!out.contains("managed-by"), "{out}");

    let check = kpol_in(d, &["mutate", "--check", "./manifests"]);
    let err = text(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{err}");
    assert_eq!(err, "would change: ./manifests/app.yaml\n");

    // -p overrides the config's policies; --no-config ignores the file.
    let none = kpol_in(d, &["mutate", "--check", "--no-config", "manifests"]);
    assert_eq!(none.status.code(), Some(2), "{}", text(&none.stderr));
}

/// `kpol generate` without `-p` generates from the config's policies, with its values, for
/// the inputs its excludes leave.
#[test]
fn generate_follows_the_config() {
    let tmp = repo(&[("quota.yaml", QUOTA)]);
    let o = kpol_in(tmp.path(), &["generate", "manifests"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains("kind: ResourceQuota\n"), "{out}");
    assert!(out.contains("  namespace: team-a\n"), "{out}");
    assert!(
        out.contains("pods: '10'") || out.contains("pods: \"10\""),
        "{out}"
    );
}

/// The config's excludes are relative to its directory: `manifests/generated/**` holds for
/// `manifests`, `./manifests`, an absolute path and `.` inside `manifests`, for check,
/// mutate and generate alike.
#[test]
fn excludes_hold_however_the_path_is_typed() {
    let tmp = repo(&[("team.yaml", TEAM_LABEL)]);
    let d = tmp.path();
    let abs = d.join("manifests").display().to_string();
    for (dir, path) in [
        (d.to_path_buf(), "manifests"),
        (d.to_path_buf(), "./manifests"),
        (d.to_path_buf(), abs.as_str()),
        (d.join("manifests"), "."),
        (d.join("manifests"), "./generated/gen.yaml"),
        (d.join("manifests/generated"), "gen.yaml"),
    ] {
        for args in [
            &["check", "--format", "json", path][..],
            &["mutate", "--diff", path],
            &["generate", path],
        ] {
            let o = kpol_in(&dir, args);
            let all = text(&o.stdout) + &text(&o.stderr);
            assert!(
                !all.contains("invalid YAML"),
                "{args:?} in {}: {all}",
                dir.display()
            );
        }
    }
    // Only a path under the excluded directory is left out.
    let mutate = kpol_in(&d.join("manifests"), &["mutate", "--diff", "."]);
    assert!(
        text(&mutate.stdout).contains("+++ b/app.yaml"),
        "{}",
        text(&mutate.stdout)
    );
}

/// Without `-p` or config policies, `kpol mutate` and `kpol generate` apply nothing: exit 2
/// with a message, and no file changes (kpol's embedded `add-default-labels` is not used).
#[test]
fn mutate_and_generate_without_policies_apply_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cm.yaml");
    std::fs::write(&file, cm("c")).unwrap();
    for args in [
        &["mutate", "--write", "cm.yaml"][..],
        &["mutate", "--check", "cm.yaml"],
        &["generate", "cm.yaml"],
    ] {
        let o = kpol_in(tmp.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("nothing to apply"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), cm("c"));
}

/// `kpol policies` loads through the same session step: the config's policies without `-p`
/// (and only them: not the embedded set), `-p` over them, and a config that cannot be read
/// stops it (exit 2) as it stops `kpol check`, `-p` or not.
#[test]
fn policies_follows_the_config() {
    let tmp = repo(&[("team.yaml", TEAM_LABEL)]);
    let d = tmp.path();
    let listed = kpol_in(d, &["policies", "--format", "json"]);
    let out = text(&listed.stdout);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["add-team"]);

    std::fs::write(
        d.join("other.yaml"),
        TEAM_LABEL.replace("add-team", "other"),
    )
    .unwrap();
    let flag = kpol_in(d, &["policies", "-p", "other.yaml"]);
    let out = text(&flag.stdout);
    assert_eq!(flag.status.code(), Some(0), "{}", text(&flag.stderr));
    assert!(out.contains("other") && !out.contains("add-team"), "{out}");

    std::fs::write(d.join(".kpol.yaml"), "policies: [unclosed\n").unwrap();
    for args in [
        &["policies"][..],
        &["policies", "-p", "other.yaml"],
        &["check", "-p", "other.yaml", "manifests"],
    ] {
        let o = kpol_in(d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{args:?}: {}", text(&o.stdout));
    }
}
