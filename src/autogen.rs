//! Autogen: Pod rules rewritten for Pod controllers (match.md §8,
//! `kyverno/kyverno:pkg/autogen/v1/autogen.go` and `rule.go`).
//!
//! Kyverno recomputes the rule list on every evaluation: for the whole controller set
//! (`ComputeRules(policy, "")`: mutate phase, rule counting, policy validation) and for the
//! resource's kind (validate phase). kpol computes both once, at load.

mod generate;
mod rewrite;

use std::collections::BTreeMap;

pub use rewrite::{Target, update_fields};

use crate::base::gvk::contains_kind;
use crate::matching::Schema;
use crate::matching::{ResourceDescription, ResourceFilter};
pub(crate) use crate::policy::{AutogenRules, CONTROLLERS_ANNOTATION};
use crate::policy::{Rule, RuleBody, RuleCompiler, build_rule};
use crate::yaml::{Map, Node, Value};

/// Kyverno's `PodControllers`.
pub const POD_CONTROLLERS: &[&str] = &[
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
    "CronJob",
];

/// `checkAutogenSupport` for one filter; records in `needed` whether a Pod or controller
/// kind is named (exact string comparison: `v1/Pod` does not count, match.md §8.1).
fn filter_supports(rd: &ResourceDescription, needed: &mut bool) -> bool {
    let kinds = rd.kind_strings();
    if rd.name.as_deref().is_some_and(|n| !n.is_empty())
        || !rd.names.is_empty()
        || rd.selector.is_some()
        || rd.annotations.is_some()
        || (kinds.len() > 1 && contains_kind(&kinds, "Pod"))
    {
        return false;
    }
    *needed = *needed
        || kinds
            .iter()
            .any(|k| *k == "Pod" || POD_CONTROLLERS.contains(k));
    true
}

/// `CanAutoGen`: whether the policy is eligible at all (match.md §8.1).
pub fn can_autogen(rules: &[Rule]) -> bool {
    let mut needed = false;
    for rule in rules {
        match &rule.body {
            RuleBody::Generate(_) => return false,
            RuleBody::Mutate(m) => {
                let json6902 = |n: &Node| {
                    n.get("patchesJson6902")
                        .and_then(Node::as_str)
                        .is_some_and(|s| !s.is_empty())
                };
                if json6902(m)
                    || m.get("foreach")
                        .and_then(Node::as_seq)
                        .is_some_and(|fes| fes.iter().any(json6902))
                {
                    return false;
                }
            }
            _ => {}
        }
        let blocks = std::iter::once(&rule.match_).chain(rule.exclude.as_ref());
        for b in blocks {
            let filters = std::iter::once(&b.flat).chain(&b.any).chain(&b.all);
            if !filters
                .map(|f: &ResourceFilter| &f.resources)
                .all(|rd| filter_supports(rd, &mut needed))
            {
                return false;
            }
        }
    }
    needed
}

/// The controllers in effect (`actualControllers`): `None` means "none".
fn actual_controllers(rules: &[Rule], annotations: &BTreeMap<String, String>) -> Vec<String> {
    if !can_autogen(rules) {
        return vec!["none".to_owned()];
    }
    match annotations.get(CONTROLLERS_ANNOTATION) {
        None => POD_CONTROLLERS.iter().map(|s| (*s).to_owned()).collect(),
        Some(v) => {
            let mut set: Vec<String> = Vec::new();
            for c in v.split(',') {
                if !set.iter().any(|s| s == c) {
                    set.push(c.to_owned());
                }
            }
            set
        }
    }
}

/// `createRule` + `convertRule`: only the fields Kyverno's JSON round trip keeps, then the
/// path rewrite.
fn convert(mut node: Node, target: Target) -> Node {
    const KEPT: &[&str] = &[
        "name",
        "match",
        "exclude",
        "celPreconditions",
        "context",
        "preconditions",
        "mutate",
        "validate",
        "verifyImages",
        "skipBackgroundRequests",
        "reportProperties",
    ];
    if let Value::Map(m) = &node.value {
        let mut kept = Map::with_capacity(m.len());
        for e in m.entries() {
            if KEPT.contains(&e.key.as_str()) && !e.value.is_null() {
                kept.insert(e.key.clone(), e.key_span, e.value.clone());
            }
        }
        node.value = Value::Map(kept);
    }
    let cel = node
        .get_path(&["validate", "cel"])
        .is_some_and(|n| !n.is_null());
    update_fields(&mut node, target, cel);
    node
}

/// `generateRules`: for each rule its `autogen-` then its `autogen-cronjob-` rule.
fn generate_rules(
    rules: &[Rule],
    controllers: &str,
    schema: Schema,
    compiler: &RuleCompiler,
) -> Vec<Rule> {
    let mut out = Vec::new();
    for rule in rules {
        for node in rule_copies(&rule.raw, &rule.name, controllers) {
            // The generated document is built from a valid rule, so compiling it cannot fail
            // on types; if it ever does, the rule is left out rather than aborting the policy
            // (Kyverno logs "failed to create rule" and does the same).
            if let Ok(r) = build_rule(&node, "spec.rules", schema, true, compiler) {
                out.push(r);
            }
        }
    }
    out
}

/// The `autogen-` and `autogen-cronjob-` rules Kyverno makes of one rule document for the
/// controllers `controllers` (comma-separated, as the annotation), path rewrites applied;
/// empty where the rule gets none. Eligibility of the policy (`CanAutoGen`) is the caller's.
fn rule_copies(rule: &Node, name: &str, controllers: &str) -> Vec<Node> {
    let without_cron: Vec<String> = generate::split_kinds(controllers)
        .into_iter()
        .filter(|c| c != "CronJob")
        .collect();
    let made = [
        generate::for_controllers(rule, name, &without_cron.join(","))
            .map(|n| convert(n, Target::Controllers)),
        generate::for_cronjob(rule, name, controllers).map(|n| convert(n, Target::CronJob)),
    ];
    made.into_iter().flatten().collect()
}

/// The rules autogen made of the rule named `name`, found among a policy's rules for the
/// whole controller set ([`crate::policy::Policy::rules`], where `CanAutoGen` and the
/// controllers annotation have been applied): its `autogen-` rule, then its
/// `autogen-cronjob-` rule, those that exist.
pub fn copies_of<'a>(rules: &'a [Rule], name: &str) -> Vec<&'a Rule> {
    ["autogen", "autogen-cronjob"]
        .into_iter()
        .filter_map(|prefix| {
            let copy = generate::autogen_name(prefix, name);
            rules.iter().find(|r| r.autogen && r.name == copy)
        })
        .collect()
}

/// `ComputeRules(policy, kind)`; `kind` empty for the whole controller set. The generated
/// rules are built with `compiler`.
pub fn compute_rules(
    rules: &[Rule],
    annotations: &BTreeMap<String, String>,
    kind: &str,
    schema: Schema,
    compiler: &RuleCompiler,
) -> Option<Vec<Rule>> {
    let actual = actual_controllers(rules, annotations);
    let controllers = if kind.is_empty() {
        actual.join(",")
    } else if actual.iter().any(|c| c == kind) {
        kind.to_owned()
    } else {
        return None;
    };
    if controllers == "none" {
        return None;
    }
    let generated = generate_rules(rules, &controllers, schema, compiler);
    if generated.is_empty() {
        return None;
    }
    // A user rule named `autogen-…` is dropped once anything is generated (match.md §8.6).
    let mut out: Vec<Rule> = rules
        .iter()
        .filter(|r| !r.name.starts_with("autogen-"))
        .cloned()
        .collect();
    out.extend(generated);
    Some(out)
}

/// Computes the autogen rule lists of a policy.
pub fn compute(
    rules: &[Rule],
    annotations: &BTreeMap<String, String>,
    schema: Schema,
    compiler: &RuleCompiler,
) -> AutogenRules {
    let all =
        compute_rules(rules, annotations, "", schema, compiler).unwrap_or_else(|| rules.to_vec());
    let controllers = actual_controllers(rules, annotations)
        .into_iter()
        .filter(|k| k != "none" && !k.is_empty())
        .collect();
    AutogenRules { all, controllers }
}

#[cfg(test)]
mod tests;
