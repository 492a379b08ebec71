//! The floor: primitives every layer above shares — Kyverno's wildcards, Go durations, semver,
//! image references (the distribution grammar, and go-containerregistry's for CEL), Kubernetes
//! quantities, kind selectors (group/version/kind), lenient base64, and the evaluation budget.
//! Nothing here knows of policies, resources or the expression languages, and nothing here
//! imports from the rest of the crate.

pub mod base64;
pub mod budget;
pub mod duration;
pub mod glob;
pub mod gvk;
pub mod image;
pub mod quantity;
pub mod semver;
pub mod wildcard;
