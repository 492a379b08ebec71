//! What the end-to-end tests share: running the built binary from the repository root, and
//! snapshotting what a user sees of a run.

// Each test crate uses what it needs of this module.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Output bytes as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `kpol` with `args` in the repository root.
pub fn kpol(args: &[&str]) -> Output {
    kpol_env(args, &[])
}

/// Runs `kpol` with `args` in `dir` (relative to the repository root): the exit code,
/// stdout and stderr.
pub fn kpol_in(dir: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = match Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run kpol: {e}"),
    };
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `kpol` with `args` and extra environment variables in the repository root.
pub fn kpol_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run kpol: {e}"),
    }
}

/// Runs `kpol` with `args` in the repository root as the snapshots need it: policy reports
/// stamped with a fixed time, and none of the CI variables that make SARIF's `helpUri` a
/// GitHub page.
pub fn kpol_for_snapshot(args: &[&str]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SERVER_URL")
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("GITHUB_SHA")
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run kpol: {e}"),
    }
}

/// A run as a user sees it: the exit code, stderr (when there is any) and stdout, with what
/// depends on the build in stdout replaced (kpol's version, the checkout's directory in
/// SARIF's file URIs).
pub fn shown(o: &Output) -> String {
    let mut s = format!("exit code: {:?}\n", o.status.code());
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !stderr.is_empty() {
        s.push_str(&format!("--- stderr\n{stderr}"));
    }
    s.push_str("--- stdout\n");
    let stdout = String::from_utf8_lossy(&o.stdout)
        .replace(
            &format!("\"{}\"", env!("CARGO_PKG_VERSION")),
            "\"[version]\"",
        )
        .replace(
            &format!("kpol {}", env!("CARGO_PKG_VERSION")),
            "kpol [version]",
        )
        .replace(
            &format!("file://{}/", env!("CARGO_MANIFEST_DIR")),
            "file://[checkout]/",
        );
    s.push_str(&stdout);
    s
}

/// Compares [`shown`] of `o` with the snapshot `name` in tests/snapshots/, described by
/// `description` (the command line).
pub fn snapshot(name: &str, description: String, o: &Output) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
    settings.set_description(description);
    settings.bind(|| insta::assert_snapshot!(name, shown(o)));
}

/// A `kpol test … --format json` run in the repository root (docs/test-json.md).
pub struct TestRun {
    pub code: Option<i32>,
    /// The JSON document printed on stdout.
    pub json: serde_json::Value,
    pub stdout: String,
    pub stderr: String,
}

/// One row of a [`TestRun`]: the fields the tests compare (absent ones are empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub policy: String,
    pub rule: String,
    pub resource: String,
    pub expected: String,
    pub actual: String,
    pub ok: bool,
    pub reason: String,
    pub message: String,
}

/// Runs `kpol test ARGS… --format json`; a run whose stdout is not JSON panics with its
/// stderr.
pub fn kpol_test(args: &[&str]) -> TestRun {
    let mut all = vec!["test"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = kpol(&all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = match serde_json::from_str(&stdout) {
        Ok(j) => j,
        Err(e) => panic!("kpol test did not print JSON ({e}); stderr:\n{stderr}"),
    };
    TestRun {
        code: out.status.code(),
        json,
        stdout,
        stderr,
    }
}

impl TestRun {
    /// Every row, in output order.
    pub fn rows(&self) -> Vec<Row> {
        rows_of(&self.json)
    }
}

/// Asserts each row's (resource, actual, ok), in output order, against `want`; the run's
/// stdout is in the message.
pub fn assert_outcomes(run: &TestRun, want: &[(&str, &str, bool)]) {
    let rows = run.rows();
    let got: Vec<(&str, &str, bool)> = rows
        .iter()
        .map(|r| (r.resource.as_str(), r.actual.as_str(), r.ok))
        .collect();
    assert_eq!(got, want, "{}", run.stdout);
}

/// The rows of a `kpol test --format json` document, in output order.
pub fn rows_of(json: &serde_json::Value) -> Vec<Row> {
    let Some(rows) = json["rows"].as_array() else {
        panic!("no rows in {json}");
    };
    rows.iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            Row {
                policy: s("policy"),
                rule: s("rule"),
                resource: s("resource"),
                expected: s("expected"),
                actual: s("actual"),
                ok: r["ok"] == true,
                reason: s("reason"),
                message: s("message"),
            }
        })
        .collect()
}
