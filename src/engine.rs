//! The engine: compiled policies, evaluated against one resource at a time.
//!
//! `Engine` is `Send + Sync` and does no I/O; the binary runs it over files in parallel.

use crate::matching;
use crate::pattern;
use crate::policy::{Policy, PolicyKind, Rule, RuleBody, ValidateCheck};
use crate::report::{PolicyResponse, RuleResponse, RuleType, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;

pub struct Engine {
    policies: Vec<Policy>,
}

impl Engine {
    pub fn new(policies: Vec<Policy>) -> Self {
        Self { policies }
    }

    pub fn policies(&self) -> &[Policy] {
        &self.policies
    }

    /// The validate phase for one resource: one response per policy that has validate rules,
    /// in load order (match.md §3.1).
    pub fn validate(&self, resource: &Resource, request: &Request) -> Vec<PolicyResponse> {
        self.policies
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.rules
                    .iter()
                    .any(|r| matches!(r.body, RuleBody::Validate(_)))
            })
            .map(|(i, p)| PolicyResponse {
                policy: i,
                rules: validate_policy(p, resource, request),
            })
            .collect()
    }
}

fn validate_policy(policy: &Policy, resource: &Resource, request: &Request) -> Vec<RuleResponse> {
    // A namespaced Policy applies only to resources of its own namespace (match.md §2.2).
    if policy.kind == PolicyKind::Policy {
        let ns = policy.namespace.as_deref().unwrap_or("default");
        if resource.namespace != ns {
            return Vec::new();
        }
    }
    let mut out = Vec::new();
    // Kyverno computes the rule list per resource kind (autogen, match.md §8.3).
    for rule in policy.validate_rules(&resource.kind) {
        let RuleBody::Validate(_) = &rule.body else {
            continue;
        };
        if !matching::rule_matches(rule, resource, request) {
            continue;
        }
        let Some(mut resp) = validate_rule(policy, rule, resource, request) else {
            continue;
        };
        resp.failure_action = policy.rule_action(rule);
        let applied = matches!(resp.status, Status::Pass | Status::Fail);
        out.push(resp);
        // applyRules: One stops after the first pass or fail (match.md §3.4).
        if policy.apply_one && applied {
            break;
        }
    }
    out
}

/// One validate rule against one resource; `None` when the rule gives no response at all.
fn validate_rule(
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
) -> Option<RuleResponse> {
    let RuleBody::Validate(v) = &rule.body else {
        return None;
    };
    let unsupported = |feature: &str| {
        let mut r = RuleResponse::new(
            &rule.name,
            Status::Error,
            format!("kpol does not evaluate {feature} yet"),
        );
        r.unsupported = Some(feature.to_owned());
        Some(r)
    };
    if rule.context.is_some() {
        return unsupported("context");
    }
    if rule.preconditions.is_some() {
        return unsupported("preconditions");
    }
    let verdict = match &v.check {
        ValidateCheck::Pattern(p) => {
            if request.operation == Operation::Delete {
                return None;
            }
            pattern::validate_pattern(&rule.name, v.message.as_deref(), &resource.root, p)
        }
        ValidateCheck::AnyPattern(ps) => {
            if request.operation == Operation::Delete {
                return None;
            }
            pattern::validate_any_pattern(&rule.name, v.message.as_deref(), &resource.root, ps)
        }
        ValidateCheck::Deny(_) => return unsupported("deny"),
        ValidateCheck::Foreach(_) => return unsupported("foreach"),
        ValidateCheck::PodSecurity(_) => return unsupported("podSecurity"),
        ValidateCheck::Cel(_) => return unsupported("cel"),
        ValidateCheck::Manifests(_) => return unsupported("manifests"),
    };
    let _ = policy;
    Some(RuleResponse {
        rule: rule.name.clone(),
        rule_type: RuleType::Validation,
        status: verdict.status,
        message: verdict.message,
        failure_action: Default::default(),
        path: verdict.path,
        unsupported: None,
    })
}
