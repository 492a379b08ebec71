//! PolicyExceptions for generate rules (`pkg/engine/background.go` `filterRule`): checked
//! before the rule's own match, against the trigger, with `isCluster` set — the trigger's
//! Namespace is read from the cluster for its labels, and when it is not there no exception
//! applies. Offline the cluster is [`SourcePool::namespaces`]. An exception that applies
//! skips the rule with `rule is skipped due to policy exception <ns>/<name>, …`.

use std::collections::BTreeMap;

use super::pool::SourcePool;
use crate::conditions::evaluate_block;
use crate::exception::{self, PolicyException};
use crate::policy::{Policy, Rule};
use crate::request::Request;
use crate::resource::Resource;
use crate::variables::Context;

/// The skip message when exceptions apply to the rule for this trigger.
pub(super) fn skip_message(
    exceptions: &[PolicyException],
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
    pool: &SourcePool<'_>,
) -> Option<String> {
    if exceptions.is_empty() {
        return None;
    }
    let mut request = request.clone();
    if !resource.namespace.is_empty() {
        let ns = pool
            .namespaces
            .iter()
            .find(|n| n.kind == "Namespace" && n.name == resource.namespace)?;
        let labels: BTreeMap<String, String> = ns
            .labels()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.to_owned(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        request
            .namespace_labels
            .insert(resource.namespace.clone(), labels);
    }
    let mut ctx = Context::for_resource(resource, &request);
    let mut holds = |c: &crate::yaml::Node| evaluate_block(c, &mut ctx).is_ok_and(|r| r.holds);
    let applied = exception::matching(
        exceptions,
        &policy.key(),
        &rule.name,
        resource,
        &request,
        &mut holds,
    );
    if applied.is_empty() {
        return None;
    }
    let names: Vec<String> = applied.iter().map(|e| e.qualified_name()).collect();
    Some(format!(
        "{}{}",
        exception::SKIP_PREFIX_PSS,
        names.join(", ")
    ))
}
