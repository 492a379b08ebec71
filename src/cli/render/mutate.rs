//! `kpol mutate`'s lines for standard error: a rule that errored, with the file and the
//! resource's line, and (`--check`) a file that would change. Text from inputs and policies
//! is [printable](super::printable).

use kpol::engine::file::MutateFinding;

use super::printable as p;

/// A rule error: `<file>[:<line>:<column>]: error: <resource> <policy>/<rule>: <message>`.
pub fn rule_error_line(file: &str, f: &MutateFinding) -> String {
    let pos = f
        .start
        .map_or(String::new(), |lc| format!(":{}:{}", lc.line, lc.column));
    format!(
        "{}{pos}: error: {} {}/{}: {}",
        p(file),
        p(&f.resource),
        p(&f.policy),
        p(&f.response.rule),
        p(&f.response.message)
    )
}

/// `--check`: a file that would change.
pub fn would_change_line(file: &str) -> String {
    format!("would change: {}", p(file))
}
