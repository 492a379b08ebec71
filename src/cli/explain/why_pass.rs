//! `kpol explain FILE:LINE --why-pass`: for the resource there, every policy's rules — the
//! result of each rule that matched (a skip names its reason: preconditions, an exception) and
//! why each other rule gave none (its kind is not selected, `match` does not select the
//! resource, `exclude` does, the policy is namespaced elsewhere).

use std::fmt::Write as _;

use kpol::policy::{PolicyBody, Rule, RuleBody};
use kpol::report::Status;
use kpol::resource::{Resource, split_api_version};

use super::{Cx, Evaluated, place};

pub fn render(cx: &Cx, e: &Evaluated) -> String {
    let resource = &e.resource;
    let mut out = String::new();
    let at = resource.source.as_ref().map_or(String::new(), |s| {
        format!(" ({})", place(s, resource.root.span))
    });
    let _ = writeln!(out, "{}{at}", resource.display_name());
    for (i, policy) in cx.engine.policies().iter().enumerate() {
        let _ = writeln!(
            out,
            "policy {} ({:?}, {})",
            policy.key(),
            policy.kind,
            place(&policy.source, policy.raw.span)
        );
        let responses: Vec<_> = e.findings.iter().filter(|f| f.policy_index == i).collect();
        if !policy.in_scope(&resource.namespace) {
            let _ = writeln!(
                out,
                "  -     not applied: a namespaced policy reaches only namespace {}",
                policy.namespace.as_deref().unwrap_or("")
            );
            continue;
        }
        match &policy.body {
            PolicyBody::Rules(_) => {
                let rules = policy.validate_rules(&resource.kind);
                for rule in rules {
                    match responses.iter().find(|f| f.rule == rule.name) {
                        Some(f) => {
                            let _ = writeln!(
                                out,
                                "  {:<5} {}: {}",
                                f.status.as_str(),
                                rule.name,
                                f.response.message
                            );
                            // Which precondition did not hold.
                            if f.status == Status::Skip
                                && f.response.message.starts_with("preconditions not met")
                                && let Some(pre) = &rule.preconditions
                            {
                                out.push_str(&super::body::condition_block(
                                    cx,
                                    policy,
                                    rule,
                                    resource,
                                    pre,
                                    super::body::Block::Preconditions,
                                    "        ",
                                ));
                            }
                        }
                        None => {
                            let _ = writeln!(
                                out,
                                "  -     {}: {}",
                                rule.name,
                                left_out(cx, rule, resource)
                            );
                        }
                    }
                }
                if rules.is_empty() {
                    let _ = writeln!(out, "  -     no rules");
                }
            }
            PolicyBody::Cel(_) => {
                if responses.is_empty() {
                    let _ = writeln!(
                        out,
                        "  -     not applied: its matchConstraints do not select {}",
                        resource.kind
                    );
                }
                for f in responses {
                    let _ = writeln!(out, "  {:<5} {}", f.status.as_str(), f.response.message);
                }
            }
        }
    }
    out
}

/// Why a rule of the policy gave no validate result for the resource.
fn left_out(cx: &Cx, rule: &Rule, resource: &Resource) -> String {
    match &rule.body {
        RuleBody::Validate(_) => {}
        RuleBody::Mutate(_) => return "a mutate rule (applied before validation)".to_owned(),
        RuleBody::Generate(_) => return "a generate rule (kpol generate)".to_owned(),
        RuleBody::VerifyImages(_) => return "a verifyImages rule".to_owned(),
    }
    let (group, version) = split_api_version(&resource.api_version);
    let kinds = rule.match_.kinds();
    let kind_selected = rule
        .match_
        .filters()
        .any(|f| f.kinds_match(group, version, &resource.kind));
    if !kinds.is_empty() && !kind_selected {
        return format!(
            "kind {} not selected (match kinds: {})",
            resource.kind,
            kinds.join(", ")
        );
    }
    if !rule.match_.selects(resource, cx.request) {
        return "match does not select it (names, namespaces, selectors, operations or user)"
            .to_owned();
    }
    if rule
        .exclude
        .as_ref()
        .is_some_and(|x| x.excludes(resource, cx.request))
    {
        return "exclude selects it".to_owned();
    }
    "no result (an earlier rule decided: applyRules: One)".to_owned()
}
