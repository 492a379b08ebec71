//! Kyverno policies: raw policy documents → the compiled [`Policy`] model.
//!
//! Every problem found while loading is a [`Diagnostic`](crate::diagnostic::Diagnostic) that
//! points into the policy file; an invalid policy is not evaluated.

mod build;
mod cel_rule;
mod compiler;
mod envelope;
mod expressions;
mod load;
mod model;
mod overrides;
pub mod schema;
mod validate;

pub(crate) use build::build_rule;
pub use cel_rule::{CelRule, Validation as CelValidation};
pub(crate) use compiler::{AutogenRules, CONTROLLERS_ANNOTATION, CompiledCheck, RuleCompiler};
pub(crate) use envelope::{Envelope, Opened};
pub use load::{
    InvalidPolicy, LoadedPolicies, UnsupportedPolicy, admission_bindings, load_policies_bound,
};
pub(crate) use load::{KindLoader, Kinds, load_policies_with};
pub(crate) use model::CelBody;
pub use model::{Policy, PolicyBody, PolicyKind, Rule, RuleBody, Validate, ValidateCheck};
pub(crate) use overrides::Overrides;
