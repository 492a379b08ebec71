//! Rule selection: `match` / `exclude` blocks against a resource (match.md §4–6).

use crate::yaml::Node;

/// A compiled `match` or `exclude` block.
#[derive(Clone, Debug)]
pub struct MatchBlock {
    pub raw: Node,
}

/// Whether a rule's match (and not its exclude) selects the resource.
pub fn rule_matches(
    rule: &crate::policy::Rule,
    resource: &crate::resource::Resource,
    request: &crate::request::Request,
) -> bool {
    let _ = (rule, resource, request);
    false
}
