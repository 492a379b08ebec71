//! `kpol mutate`'s `--check` line for standard error: a file that would change (its rule
//! errors and `--format` reports are written by `kpol check`'s renderers,
//! src/cli/command_report.rs). File names are [printable](super::printable).

use super::printable as p;

/// `--check`: a file that would change.
pub fn would_change_line(file: &str) -> String {
    format!("would change: {}", p(file))
}
