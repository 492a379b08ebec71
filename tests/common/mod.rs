//! What the end-to-end tests share: running the built binary from the repository root, and
//! snapshotting what a user sees of a run.

// Each test crate uses what it needs of this module.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `kpol` with `args` in the repository root.
pub fn kpol(args: &[&str]) -> Output {
    kpol_env(args, &[])
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

/// A run as a user sees it: the exit code, stderr (when there is any) and stdout.
pub fn shown(o: &Output) -> String {
    let mut s = format!("exit code: {:?}\n", o.status.code());
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !stderr.is_empty() {
        s.push_str(&format!("--- stderr\n{stderr}"));
    }
    s.push_str("--- stdout\n");
    s.push_str(&String::from_utf8_lossy(&o.stdout));
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
