//! What `policy` needs from the evaluators to build ClusterPolicy / Policy rules, handed to it
//! by the layer above (`crate::kinds::RULES`): a table of functions, so that `policy` holds the
//! compiled form of a validate check without knowing it, and imports no evaluator
//! (docs/ARCHITECTURE.md).

use std::collections::BTreeMap;

use super::model::{Rule, ValidateCheck};
use crate::matching::Schema;
use crate::source::Span;
use crate::yaml::Node;

/// The annotation that chooses the autogen controllers of a policy (match.md §8.2): data the
/// envelope reads (its policy validation) as well as autogen.
pub(crate) const CONTROLLERS_ANNOTATION: &str = "pod-policies.kyverno.io/autogen-controllers";

/// A validate check as the evaluator compiled it at load (pattern walk plans, `foreach`
/// entries, a `podSecurity` body read): `policy` keeps it beside the check and never looks
/// inside; the evaluator gets its own type back through [`CompiledCheck::as_any`].
pub trait CompiledCheck: std::fmt::Debug + Send + Sync {
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The rule lists autogen yields for a policy at load.
#[derive(Clone, Debug, Default)]
pub struct AutogenRules {
    /// `ComputeRules(policy, "")`: the whole controller set.
    pub all: Vec<Rule>,
    /// The controller kinds `ComputeRules(policy, kind)` may generate rules for (computed
    /// when a resource of the kind is met, `Policy::validate_rules`).
    pub controllers: Vec<String>,
}

/// `ComputeRules(policy, kind)`: (the rules as written, the policy's annotations, the
/// controller kind, the schema, the compiler the generated rules are built with) → the rules,
/// `None` when nothing is generated.
pub(crate) type AutogenForKind =
    fn(&[Rule], &BTreeMap<String, String>, &str, Schema, &RuleCompiler) -> Option<Vec<Rule>>;

/// The evaluator side of building rules. Every entry is a plain function of the kinds layer.
#[derive(Clone, Copy, Debug)]
pub struct RuleCompiler {
    /// A validate check → its compiled form.
    pub check: fn(&ValidateCheck) -> std::sync::Arc<dyn CompiledCheck>,
    /// Autogen at load (`ComputeRules(policy, "")` and the controller kinds) for the rules as
    /// written and the policy's annotations.
    pub autogen: fn(&[Rule], &BTreeMap<String, String>, Schema, &RuleCompiler) -> AutogenRules,
    /// `ComputeRules(policy, kind)` for one controller kind; `None`: no generated rules.
    pub autogen_for_kind: AutogenForKind,
    /// Kyverno's policy validation of a `podSecurity` body (its `exclude` entries) of rule
    /// `rule_index`: the first error and the node it is about.
    pub pod_security_error: fn(&Node, usize) -> Option<(String, &Node)>,
    /// The first key of a validate pattern with an anchor validation does not allow: its
    /// dotted path, the key and its span.
    pub unsupported_anchor: fn(&Node) -> Option<(String, String, Span)>,
}
