//! The published pre-commit hooks (`.pre-commit-hooks.yaml`) run by pre-commit itself in a
//! temporary git repository, on a passing and a failing manifest and test file.
//!
//! pre-commit comes from PyPI (`pip install pre-commit` into a cached virtualenv under
//! `CARGO_TARGET_TMPDIR`). `published_hook_…` installs `kpol-check` as published
//! (`language: rust` from a tagged git repository: a release build inside pre-commit, so only
//! with `KPOL_PRE_COMMIT_INSTALL=1`). `hooks_pass_and_fail_…` runs every hook quickly, copied
//! into a `repo: local` config with `language: system` and the binary cargo built for this
//! test; everything else (entry arguments, file filters, `pass_filenames`) is the published
//! definition. Without python3/pip or the network the test is skipped with a
//! message, unless `CI` is set: there it must run.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The venv with pre-commit, made once per test binary: the tests here run in parallel, and two
/// `python3 -m venv` into one directory race ("File exists").
fn pre_commit() -> Option<PathBuf> {
    static VENV: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    VENV.get_or_init(make_venv).clone()
}

fn make_venv() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-venv");
    let bin = venv.join("bin/pre-commit");
    if bin.is_file() {
        return Some(bin);
    }
    let required = std::env::var_os("CI").is_some();
    let step = |cmd: &mut Command, what: &str| -> bool {
        match cmd.output() {
            Ok(o) if o.status.success() => true,
            Ok(o) => {
                let msg = format!("{what} failed: {}", String::from_utf8_lossy(&o.stderr));
                assert!(!required, "{msg}");
                eprintln!("pre-commit test skipped: {msg}");
                false
            }
            Err(e) => {
                assert!(!required, "{what}: {e}");
                eprintln!("pre-commit test skipped: {what}: {e}");
                false
            }
        }
    };
    let ok = step(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    ) && step(
        Command::new(venv.join("bin/pip")).args(["install", "-q", "pre-commit"]),
        "pip install pre-commit",
    );
    ok.then_some(bin)
}

/// `.pre-commit-hooks.yaml` as a `repo: local` config running the test's kpol binary.
fn local_config() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap();
    let docs = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()).unwrap();
    let mut hooks = docs[0].root.to_json();
    for hook in hooks.as_array_mut().unwrap() {
        assert_eq!(
            hook["language"], "rust",
            "published hooks install with cargo"
        );
        // One kpol run for all the files (one summary, one exit code), on a pre-commit that
        // knows `language: rust`.
        assert_eq!(hook["require_serial"], true, "{hook}");
        assert_eq!(hook["minimum_pre_commit_version"], "2.21.0", "{hook}");
        if hook["pass_filenames"] != false {
            // Helm chart templates are not YAML.
            let exclude = hook["exclude"].as_str().unwrap();
            assert!(exclude.ends_with("|(^|/)templates/"), "{exclude}");
        }
        let entry = hook["entry"].as_str().unwrap().to_owned();
        let rest = entry.strip_prefix("kpol").unwrap();
        hook["entry"] = Value::from(format!("{}{rest}", env!("CARGO_BIN_EXE_kpol")));
        hook["language"] = Value::from("system");
    }
    let ids: Vec<&str> = hooks
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert_eq!(ids, ["kpol-check", "kpol-test", "kpol-mutate-check"]);
    // JSON is YAML.
    serde_json::json!({"repos": [{"repo": "local", "hooks": hooks}]}).to_string()
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn run_hook(pc: &Path, dir: &Path, hook: &str, files: &[&str]) -> Output {
    git(dir, &["add", "-A"]);
    Command::new(pc)
        .args(["run", hook, "--files"])
        .args(files)
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", dir.join(".cache"))
        .env_remove("CI")
        .output()
        .unwrap()
}

const GOOD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n";
const BAD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  hostNetwork: true\n  containers:\n  - name: app\n    image: nginx:1.27\n";

#[test]
fn hooks_pass_and_fail_as_kpol_does() {
    let Some(pc) = pre_commit() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join(".pre-commit-config.yaml"), local_config()).unwrap();
    std::fs::write(dir.join(".gitignore"), ".cache/\n").unwrap();
    // The repository states its policy once.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/disallow-host-namespaces.yaml"),
        dir.join("host-namespaces-policy.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.join(".kpol.yaml"),
        "policies: [host-namespaces-policy.yaml]\n",
    )
    .unwrap();
    std::fs::write(dir.join("good.yaml"), GOOD).unwrap();
    std::fs::write(dir.join("bad.yaml"), BAD).unwrap();

    let pass = run_hook(&pc, dir, "kpol-check", &["good.yaml"]);
    let out = String::from_utf8_lossy(&pass.stdout).into_owned();
    assert_eq!(pass.status.code(), Some(0), "{out}");
    assert!(
        out.contains("kpol check") && out.contains("Passed"),
        "{out}"
    );

    let fail = run_hook(&pc, dir, "kpol-check", &["good.yaml", "bad.yaml"]);
    let out = String::from_utf8_lossy(&fail.stdout).into_owned();
    assert_eq!(fail.status.code(), Some(1), "{out}");
    assert!(out.contains("Failed"), "{out}");
    assert!(
        out.contains("fail[disallow-host-namespaces/host-namespaces]"),
        "{out}"
    );
    assert!(out.contains("bad.yaml:5:"), "{out}");

    // kpol-test runs the repository's test files whatever changed.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/exceptions/kyverno-test");
    let tests = dir.join("policy-tests");
    std::fs::create_dir(&tests).unwrap();
    for f in [
        "policy.yaml",
        "exception.yaml",
        "resources.yaml",
        "kyverno-test.yaml",
    ] {
        std::fs::copy(src.join(f), tests.join(f)).unwrap();
    }
    let pass = run_hook(&pc, dir, "kpol-test", &["good.yaml"]);
    let out = String::from_utf8_lossy(&pass.stdout).into_owned();
    assert_eq!(pass.status.code(), Some(0), "{out}");
    let test_file = tests.join("kyverno-test.yaml");
    let broken = std::fs::read_to_string(&test_file)
        .unwrap()
        .replace("result: fail", "result: pass");
    std::fs::write(&test_file, broken).unwrap();
    let fail = run_hook(&pc, dir, "kpol-test", &["policy-tests/kyverno-test.yaml"]);
    let out = String::from_utf8_lossy(&fail.stdout).into_owned();
    assert_eq!(fail.status.code(), Some(1), "{out}");
    assert!(
        out.contains("1 tests failed") || out.contains("1 test failed"),
        "{out}"
    );
}

/// The GitHub Action and the sample workflow are YAML with what GitHub needs.
#[test]
fn action_and_sample_workflow_are_well_formed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| {
        let text = std::fs::read_to_string(root.join(p)).unwrap();
        let docs = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()).unwrap();
        docs[0].root.to_json()
    };
    let action = read("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    for step in steps {
        // A step runs a bash script or uses an action (the build cache).
        if step.get("run").is_some() {
            assert_eq!(step["shell"], "bash", "{step}");
        } else {
            assert!(
                step["uses"].as_str().unwrap().starts_with("actions/cache@"),
                "{step}"
            );
        }
    }
    // The build is cached, keyed by the sources, and installed from the cache's directory.
    let cache = steps.iter().find(|s| s.get("uses").is_some()).unwrap();
    assert_eq!(cache["with"]["key"], "${{ steps.key.outputs.key }}");
    let install = steps.iter().find(|s| s["name"] == "Install kpol").unwrap();
    assert!(
        install["run"]
            .as_str()
            .unwrap()
            .contains("--root \"$KPOL_ROOT\"")
    );
    assert!(action["outputs"]["exit-code"].is_object());
    let flow = read("docs/examples/github-workflow.yml");
    let steps = flow["jobs"]["kpol"]["steps"].as_array().unwrap();
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif"))
        })
        .unwrap();
    assert_eq!(upload["if"], "always()");
    assert_eq!(flow["permissions"]["security-events"], "write");
}

/// A copy of this repository's files (`git ls-files`: tracked and untracked-not-ignored, as
/// they are in the work tree, so the test sees uncommitted changes) committed in a fresh git
/// repository and tagged `v0.1.0` as a release would be.
fn tagged_copy_of_this_repository(dest: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the published-hook test copies the repository's git files: git ls-files: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut copied = 0;
    for rel in o.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let rel = std::str::from_utf8(rel).unwrap();
        let src = root.join(rel);
        // A tracked file deleted in the work tree is not part of what is tested.
        if !src.is_file() {
            continue;
        }
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&src, &to).unwrap();
        copied += 1;
    }
    assert!(dest.join("Cargo.toml").is_file() && dest.join(".pre-commit-hooks.yaml").is_file());
    assert!(copied > 100, "{copied} files");
    git(dest, &["init", "-q"]);
    git(dest, &["config", "user.email", "t@example.com"]);
    git(dest, &["config", "user.name", "t"]);
    git(dest, &["add", "-A"]);
    git(dest, &["commit", "-q", "-m", "release"]);
    git(dest, &["tag", "-a", "v0.1.0", "-m", "kpol 0.1.0"]);
}

/// The published hook as a user's `.pre-commit-config.yaml` names it: `repo` a git repository
/// (a local copy of this one), `rev` a tag, `language: rust` as published, so pre-commit clones
/// the tag and builds kpol with `cargo install`; then 200 changed manifests go to one kpol run
/// (`require_serial`: without it pre-commit splits them over its CPU-count batches, one summary
/// each).
///
/// The cost is that release build. `CARGO_TARGET_DIR` is a cache under `CARGO_TARGET_TMPDIR`,
/// so the dependencies are built once per target directory, and the release profile's
/// optimisation is turned down through `CARGO_PROFILE_RELEASE_*` (what is built and how
/// pre-commit installs and runs it are unchanged).
///
/// That build takes minutes (6 min measured on two busy cores with a cold cache, 72 s warm),
/// so the test runs only with `KPOL_PRE_COMMIT_INSTALL=1`, which `.ci/run` sets; under `CI`
/// without it, it fails rather than pass unrun.
#[test]
fn published_hook_installs_from_a_tag_and_checks_200_files_in_one_run() {
    if std::env::var_os("KPOL_PRE_COMMIT_INSTALL").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI the published-hook test must run: set KPOL_PRE_COMMIT_INSTALL=1 (.ci/run does)"
        );
        eprintln!(
            "NOT RUN: the published pre-commit hook (a release build inside pre-commit); set KPOL_PRE_COMMIT_INSTALL=1"
        );
        return;
    }
    let Some(pc) = pre_commit() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let upstream = tmp.path().join("kpol");
    tagged_copy_of_this_repository(&upstream);

    let dir = tmp.path().join("manifests");
    std::fs::create_dir(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["config", "user.email", "t@example.com"]);
    git(&dir, &["config", "user.name", "t"]);
    let config = serde_json::json!({"repos": [{
        "repo": upstream.to_str().unwrap(),
        "rev": "v0.1.0",
        "hooks": [{"id": "kpol-check"}],
    }]});
    std::fs::write(dir.join(".pre-commit-config.yaml"), config.to_string()).unwrap();
    std::fs::write(dir.join(".gitignore"), ".cache/\n").unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/disallow-host-namespaces.yaml"),
        dir.join("host-namespaces-policy.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.join(".kpol.yaml"),
        "policies: [host-namespaces-policy.yaml]\n",
    )
    .unwrap();
    let files: Vec<String> = (0..200).map(|i| format!("app/pod-{i:03}.yaml")).collect();
    std::fs::create_dir(dir.join("app")).unwrap();
    for (i, f) in files.iter().enumerate() {
        let text = if i == 137 { BAD } else { GOOD };
        std::fs::write(
            dir.join(f),
            text.replace("{name: ", &format!("{{name: p{i}-")),
        )
        .unwrap();
    }
    git(&dir, &["add", "-A"]);

    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-cargo-target");
    let run = |files: &[String]| {
        let start = std::time::Instant::now();
        let o = Command::new(&pc)
            .args(["run", "kpol-check", "--verbose", "--files"])
            .args(files)
            .current_dir(&dir)
            .env("PRE_COMMIT_HOME", dir.join(".cache"))
            .env("CARGO_TARGET_DIR", &cache)
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env_remove("CI")
            .output()
            .unwrap();
        eprintln!(
            "pre-commit run over {} files: {:.1?}",
            files.len(),
            start.elapsed()
        );
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), out)
    };

    let (code, out) = run(&files);
    assert!(out.contains("Installing environment for"), "{out}");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("kpol check") && out.contains("Failed"),
        "{out}"
    );
    assert!(
        out.contains("fail[disallow-host-namespaces/host-namespaces]"),
        "{out}"
    );
    assert!(out.contains("app/pod-137.yaml:5:"), "{out}");
    // One kpol run saw all 200 files: one summary, counting every Pod.
    let summaries: Vec<&str> = out.lines().filter(|l| l.starts_with("pass: ")).collect();
    assert_eq!(
        summaries,
        ["pass: 199, fail: 1, warn: 0, error: 0, skip: 0"],
        "{out}"
    );

    // The installed hook is reused: the 199 clean files pass, again in one run.
    let good: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("-137.yaml"))
        .cloned()
        .collect();
    let (code, out) = run(&good);
    assert!(!out.contains("Installing environment for"), "{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Passed"), "{out}");
    let summaries: Vec<&str> = out.lines().filter(|l| l.starts_with("pass: ")).collect();
    assert_eq!(
        summaries,
        ["pass: 199, fail: 0, warn: 0, error: 0, skip: 0"],
        "{out}"
    );
}
