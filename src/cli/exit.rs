//! The exit contract, as the Kyverno CLI has it (STYLE.md habit 4), and the warn exit policy
//! of `--warn-exit-code` / `--warn-no-pass`.

/// Nothing failed.
pub const CLEAN: u8 = 0;
/// A rule failed or errored (or, for `kpol test`, a test row did not match).
pub const FINDINGS: u8 = 1;
/// The run itself is incomplete: a bad flag, an unreadable path, malformed YAML, an invalid
/// policy. Whatever could be checked was still checked and reported.
pub const INCOMPLETE: u8 = 2;

/// Kyverno's exit policy after printing (cli-compat.md §11.6), for a complete run.
#[derive(Clone, Copy, Debug, Default)]
pub struct WarnPolicy {
    /// `--warn-exit-code N`.
    pub warn_exit_code: Option<u8>,
    /// `--warn-no-pass`.
    pub warn_no_pass: bool,
}

impl WarnPolicy {
    /// The exit code for these counts, and the line Kyverno prints with it.
    pub fn code(self, pass: usize, fail: usize, warn: usize, error: usize) -> (u8, Option<String>) {
        let n = self.warn_exit_code.unwrap_or(0);
        if fail > 0 || error > 0 {
            (FINDINGS, None)
        } else if warn > 0 && n != 0 {
            (n, Some(format!("exit as warnExitCode is {n}")))
        } else if pass == 0 && self.warn_no_pass {
            (n, Some("exit as no objects satisfied policy".to_owned()))
        } else {
            (CLEAN, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kyverno_order() {
        let p = WarnPolicy {
            warn_exit_code: Some(3),
            warn_no_pass: true,
        };
        assert_eq!(p.code(1, 1, 1, 0).0, FINDINGS);
        assert_eq!(p.code(0, 0, 0, 1).0, FINDINGS);
        assert_eq!(p.code(1, 0, 1, 0).0, 3);
        assert_eq!(p.code(0, 0, 0, 0).0, 3);
        assert_eq!(p.code(1, 0, 0, 0).0, CLEAN);
        let plain = WarnPolicy::default();
        assert_eq!(plain.code(0, 0, 5, 0).0, CLEAN);
        let no_pass = WarnPolicy {
            warn_exit_code: None,
            warn_no_pass: true,
        };
        assert_eq!(
            no_pass.code(0, 0, 0, 0),
            (CLEAN, Some("exit as no objects satisfied policy".into()))
        );
    }
}
