//! The spanned YAML layer: documents as [`Node`] trees read the way Kubernetes reads them.
//!
//! Knows nothing of Kyverno. Paths into a tree are JSON-pointer-like lists of keys/indices.

pub mod emit;
pub(crate) mod fields;
mod load;
mod node;
mod quote;
mod resolve;
mod scalar;

pub use load::{Document, Limits, RunBudget, YamlError, parse_documents};
pub(crate) use load::{Reading, parse_reading};
pub use node::{Entry, Map, Node, Value};
pub use quote::double_quoted;
pub(crate) use resolve::resolve_plain;
pub(crate) use scalar::position_in_scalar;
