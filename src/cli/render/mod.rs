//! Renderers: views of one [`CheckReport`](super::check::CheckReport); none computes anything.

pub mod human;
pub mod json;

use kpol::diagnostic::Diagnostic;

/// One diagnostic on one line of standard error, for failures before any report exists.
pub fn print_diagnostic_line(d: &Diagnostic) {
    let pos = d.position();
    if pos.is_empty() {
        eprintln!("error[{}]: {}", d.code.as_str(), d.message);
    } else {
        eprintln!("error[{}]: {pos}: {}", d.code.as_str(), d.message);
    }
}
