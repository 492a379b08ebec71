//! The exit contract, as the Kyverno CLI has it (STYLE.md habit 4).

/// Nothing failed.
pub const CLEAN: u8 = 0;
/// A rule failed or errored (or, for `kpol test`, a test row did not match).
pub const FINDINGS: u8 = 1;
/// The run itself is incomplete: a bad flag, an unreadable path, malformed YAML, an invalid
/// policy. Whatever could be checked was still checked and reported.
pub const INCOMPLETE: u8 = 2;
