//! kpol: Kyverno policies evaluated offline on Kubernetes manifests.
//!
//! The engine is this library; the `kpol` binary (`src/main.rs`, `src/cli/`) only reads
//! arguments and files, and renders what the engine returns.

pub(crate) mod autogen;
pub(crate) mod base;
pub mod cel;
pub mod cluster;
pub(crate) mod conditions;
pub mod defaults;
pub mod diagnostic;
pub(crate) mod dpol;
pub mod engine;
pub mod exception;
pub mod generate;
pub(crate) mod gpol;
pub(crate) mod ivpol;
pub mod jmespath;
pub(crate) mod kinds;
pub mod manifest;
pub(crate) mod mapol;
pub(crate) mod matching;
pub mod migrate;
pub(crate) mod mpol;
pub mod mutate;
pub(crate) mod number;
pub(crate) mod pattern;
pub mod payload;
pub(crate) mod pipeline;
pub mod policy;
pub(crate) mod pss;
pub mod report;
pub mod request;
pub mod resource;
pub(crate) mod smd;
pub mod source;
pub mod suppress;
#[cfg(test)]
pub(crate) mod test_support;
pub mod testfile;
pub(crate) mod validate;
pub mod variables;
pub(crate) mod verify_images;
pub mod vpol;
pub mod yaml;

// The public surface: the `pub` modules above, and these few items of crate-private modules
// that the binary, tests, benches and fuzz targets use (docs/ARCHITECTURE.md).

/// Kyverno's `*`/`?` wildcard match of a name (`ruleNames`, `policyName`).
pub use base::wildcard::matches as wildcard_matches;
/// One deny/precondition condition evaluated in a variable context (`kpol explain`).
pub use conditions::evaluate_condition;
/// Policy documents loaded with the table of every kind kpol knows (`kinds`), alone or with
/// the admission bindings of the run's other policy files.
pub use kinds::{load_policies, load_policies_bound};
/// Whether a MutatingPolicy mutates existing resources, and whether it selects a target
/// (`kpol test`'s mutate-existing rows).
pub use mpol::{mutates_existing, selects_target};
/// A `pattern` / `anyPattern` checked against a resource (`kpol explain`, the fuzz targets).
pub use pattern::{PatternVerdict, validate_any_pattern, validate_pattern};
/// The variable context a rule is evaluated in (`kpol explain`).
pub use validate::explain_context;
