//! Kyverno's validate pattern language (validate.md §3–7, §14).

use crate::report::Status;
use crate::yaml::Node;

/// The outcome of a pattern or anyPattern rule.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternVerdict {
    pub status: Status,
    /// Kyverno's message for this result (validate.md §14).
    pub message: String,
    /// The failing path, split into segments, when the status is Fail.
    pub path: Option<Vec<String>>,
}

/// Evaluates `validate.pattern`.
pub fn validate_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    pattern: &Node,
) -> PatternVerdict {
    let _ = (rule_name, rule_message, resource, pattern);
    PatternVerdict {
        status: Status::Error,
        message: "pattern evaluation not implemented".to_owned(),
        path: None,
    }
}

/// Evaluates `validate.anyPattern`.
pub fn validate_any_pattern(
    rule_name: &str,
    rule_message: Option<&str>,
    resource: &Node,
    patterns: &[Node],
) -> PatternVerdict {
    let _ = (rule_name, rule_message, resource, patterns);
    PatternVerdict {
        status: Status::Error,
        message: "anyPattern evaluation not implemented".to_owned(),
        path: None,
    }
}
