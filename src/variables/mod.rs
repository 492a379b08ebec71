//! Kyverno variables (validate.md §11): the evaluation context a rule sees and `{{ }}`
//! substitution.
//!
//! * [`Context`] is the JSON document JMESPath queries run against: `request.*`,
//!   `serviceAccountName`/`serviceAccountNamespace`, `images`, foreach `element*`, values
//!   injected by name, and rule/foreach `context` entries (loaded lazily, §11.8).
//! * [`substitute`] replaces variables in a document (§11.3); [`substitute_str`] in one
//!   string. Errors carry Kyverno's messages.
//!
//! ```
//! use kpol::variables::{Context, substitute};
//! use kpol::yaml::Node;
//! let mut ctx = Context::from_root(Node::from_json(&serde_json::json!({"a": 3})));
//! let out = substitute(&Node::from_json(&serde_json::json!({"x": "{{a}}", "y": "n={{a}}"})), &mut ctx).unwrap();
//! assert_eq!(out.to_json(), serde_json::json!({"x": 3, "y": "n=3"}));
//! ```

mod checkpoint;
mod context;
mod entries;
mod external;
pub mod image;
mod pointer;
mod substitute;

pub use context::Context;
pub use substitute::{expressions, has_variables, substitute, substitute_at};
pub(crate) use substitute::{mock_scan, variable_regex};
pub(crate) use substitute::{substitute_cow, substitute_str};

use std::fmt;

/// A substitution or context error, with Kyverno's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarError {
    pub message: String,
}

impl VarError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// Whether this is (or wraps) a missing-key error; foreach lists skip those (§10).
    pub(crate) fn is_unknown_key(&self) -> bool {
        self.message.contains("Unknown key")
    }
}

impl fmt::Display for VarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VarError {}
