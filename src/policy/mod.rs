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

pub use build::build_rule;
pub use cel_rule::{CelRule, Validation as CelValidation};
pub use compiler::{AutogenRules, CONTROLLERS_ANNOTATION, CompiledCheck, RuleCompiler};
pub(crate) use envelope::{Envelope, Opened};
pub use load::{
    InvalidPolicy, KindLoader, Kinds, LoadedPolicies, UnsupportedPolicy, admission_bindings,
    load_policies_bound, load_policies_with,
};
pub use model::{
    Autogen, CelBody, Policy, PolicyBody, PolicyKind, Rule, RuleBody, RuleSet, Validate,
    ValidateCheck,
};
pub use overrides::Overrides;
