//! Autogen: Pod rules rewritten for Pod controllers (match.md §8,
//! `kyverno/kyverno:pkg/autogen/v1/autogen.go` and `rule.go`).

use std::collections::BTreeMap;

use crate::matching::Schema;
use crate::policy::Rule;

/// The rule lists autogen yields for a policy.
#[derive(Clone, Debug, Default)]
pub struct AutogenRules {
    /// `ComputeRules(policy, "")`: the whole controller set.
    pub all: Vec<Rule>,
    /// `ComputeRules(policy, kind)` for each controller kind that yields generated rules.
    pub by_kind: Vec<(String, Vec<Rule>)>,
}

/// Computes the autogen rule lists of a policy.
pub fn compute(
    rules: &[Rule],
    annotations: &BTreeMap<String, String>,
    schema: Schema,
) -> AutogenRules {
    let _ = (annotations, schema);
    AutogenRules {
        all: rules.to_vec(),
        by_kind: Vec::new(),
    }
}
