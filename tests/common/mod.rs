//! What the end-to-end tests share: running the built binary from the repository root.

use std::process::{Command, Output};

/// Runs `kpol` with `args` in the repository root.
pub fn kpol(args: &[&str]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run kpol: {e}"),
    }
}
