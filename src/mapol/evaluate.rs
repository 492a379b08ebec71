//! Applying a MutatingAdmissionPolicy to one resource as the Kyverno v1.19 CLI does offline
//! (`pkg/admissionpolicy/mutate.go` `Mutate`, `processMAPNoBindings`,
//! `processMAPWithoutClient`, `mutateResource`; `processor/policy_processor.go`):
//!
//! - always a CREATE without an old object; `namespaceObject` is the namespace with the values
//!   file's labels (none for an unlisted one, null for a cluster-scoped resource);
//! - without bindings the policy's matchConstraints decide (none: every resource); with
//!   bindings only each binding's matchResources (none: every resource), and the bindings
//!   chain: each mutates what the one before left, and the last one that responds decides;
//! - in `clusterResources` mode (`processMAPWithClient`) the policy's own matchConstraints
//!   must match as well, a namespaced resource's Namespace comes from the cluster (absent: no
//!   response) and the bindings' params from the CLI's fake cluster
//!   ([`crate::vpol::params::from_fake_cluster`]);
//! - `variables` (visible to matchConditions), matchConditions: false → skip "match conditions
//!   aren't met"; an error ignores that binding (skip under `failurePolicy: Ignore`);
//! - each mutation in order, `object` rebound after each; a patch error drops the response
//!   (the CLI keeps no empty response); else pass "mutation is successfully applied".

use cel::Value;

use super::{MutatingAdmissionPolicy, mutating_admission_policy};
use crate::cel::Activation;
use crate::cel::convert::{map_of, string, to_cel};
use crate::mpol::Mutation;
use crate::mpol::evaluate::{apply_configuration_patch, apply_json_patch};
use crate::mutate::PolicyMutation;
use crate::policy::Policy;
use crate::report::{PolicyResponse, RuleResponse, RuleType, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::vpol::evaluate::bind_admission;
use crate::yaml::Node;

/// What `policy` (the engine's policy number `index`) does to `resource`: `None` when it is
/// not a MutatingAdmissionPolicy or gives no response; else its one rule response and the
/// resource after it.
pub fn mutate(
    index: usize,
    policy: &Policy,
    resource: &Resource,
    request: &Request,
) -> Option<PolicyMutation> {
    let body = mutating_admission_policy(policy)?;
    let _budget = crate::base::budget::Scope::enter();
    let create = Request {
        operation: Operation::Create,
        old_object: None,
        ..request.clone()
    };
    let mut current = resource.clone();
    let mut last: Option<RuleResponse> = None;
    if body.bindings.is_empty() {
        if !body
            .constraints
            .as_ref()
            .is_none_or(|c| c.matches(resource, &create))
        {
            return None;
        }
        match apply_once(body, &current, &create, None, None) {
            Outcome::Done(r, root) => {
                current = current.with_root(root);
                last = Some(r);
            }
            Outcome::Ignored | Outcome::Dropped => return None,
        }
    } else {
        // In `clusterResources` mode (`processMAPWithClient`) the policy's own constraints
        // must match too, a namespaced resource's Namespace is the cluster's (absent: no
        // response), and the bindings' params come from the CLI's fake cluster.
        let cluster = create.offline.cluster.clone();
        let mut labels = None;
        // The cluster's Namespace object is `namespaceObject` there.
        let mut cluster_ns = None;
        if let Some(c) = &cluster {
            if !resource.namespace.is_empty() {
                cluster_ns = Some(to_cel(c.namespace(&resource.namespace)?));
                labels = Some(c.namespace_labels(&resource.namespace).unwrap_or_default());
            }
            let own = body
                .constraints
                .as_ref()
                .is_none_or(|k| k.matches_in(resource, &create, labels.as_ref()));
            if !own {
                return None;
            }
        }
        for b in &body.bindings {
            if !b
                .match_resources
                .as_ref()
                .is_none_or(|c| c.matches_in(&current, &create, labels.as_ref()))
            {
                continue;
            }
            let params = match (&cluster, &b.param_ref) {
                (Some(c), Some(r)) => {
                    match crate::vpol::params::from_fake_cluster(b.param_kind.as_ref(), r, c) {
                        Ok(Some(p)) => Some(p),
                        Ok(None) => {
                            last = Some(response(
                                &body.name,
                                Status::Error,
                                "no params selected by the binding's paramRef (the Kyverno v1.19.0 CLI panics here)",
                            ));
                            break;
                        }
                        // Collecting failed: the policy ends with the responses so far.
                        Err(_) => break,
                    }
                }
                _ => b.param_ref.as_ref().and_then(|r| r.resolve(&create.params)),
            };
            match apply_once(body, &current, &create, params, cluster_ns.as_ref()) {
                Outcome::Done(r, root) => {
                    current = current.with_root(root);
                    last = Some(r);
                }
                Outcome::Ignored => {}
                // A later binding's patch error leaves an empty response, which is dropped.
                Outcome::Dropped => last = None,
            }
        }
    }
    let rule = last?;
    Some(PolicyMutation {
        response: PolicyResponse {
            policy: index,
            rules: vec![rule],
        },
        patched: Some(current.root),
    })
}

enum Outcome {
    /// A response, and the object after the policy.
    Done(RuleResponse, Node),
    /// A match condition could not be evaluated: the binding is ignored.
    Ignored,
    /// A patch failed: the response is empty.
    Dropped,
}

fn response(policy: &str, status: Status, message: &str) -> RuleResponse {
    let mut r = RuleResponse::new(policy, status, message);
    r.rule_type = RuleType::Mutation;
    r
}

fn apply_once(
    body: &MutatingAdmissionPolicy,
    resource: &Resource,
    request: &Request,
    params: Option<Value>,
    namespace: Option<&Value>,
) -> Outcome {
    if body.broken.is_some() {
        return Outcome::Dropped;
    }
    let mut act = Activation::new();
    if let Some(p) = params {
        act.set("params", p);
    }
    let values = crate::cel::ResourceValues::new();
    bind_admission(
        &mut act,
        resource,
        request,
        &values,
        Operation::Create,
        false,
    );
    let ns = namespace.cloned();
    act.set(
        "namespaceObject",
        ns.unwrap_or_else(|| namespace_object(resource, request)),
    );
    act.bind_variables(body.variables.iter().map(|(n, p)| (n.as_str(), p)));
    let mut failed = false;
    for (_, cond) in &body.match_conditions {
        match act.eval_bool(cond) {
            Ok(false) => {
                return Outcome::Done(
                    response(&body.name, Status::Skip, "match conditions aren't met"),
                    resource.root.clone(),
                );
            }
            Ok(true) => {}
            Err(_) => failed = true,
        }
    }
    if failed {
        return if body.ignore_failures {
            Outcome::Done(
                response(&body.name, Status::Skip, "match conditions aren't met"),
                resource.root.clone(),
            )
        } else {
            Outcome::Ignored
        };
    }
    let mut root = resource.root.clone();
    for m in &body.mutations {
        let next = match m {
            Mutation::ApplyConfiguration(p) => act.eval(p).and_then(|v| {
                let patch = apply_configuration_patch(&v)?;
                crate::smd::apply_deduced(&root, &patch, &resource.api_version, &resource.kind)
                    .map_err(|e| e.to_string())
            }),
            Mutation::JsonPatch(p) => act.eval(p).and_then(|v| apply_json_patch(&root, &v)),
        };
        match next {
            Ok(n) => {
                act.set("object", to_cel(&n));
                root = n;
            }
            Err(_) => return Outcome::Dropped,
        }
    }
    Outcome::Done(
        response(&body.name, Status::Pass, "mutation is successfully applied"),
        root,
    )
}

/// The namespace as the CLI builds it for a MAP: its name and the values file's labels;
/// null for a cluster-scoped resource (and a Namespace).
fn namespace_object(resource: &Resource, request: &Request) -> Value {
    if resource.namespace.is_empty() {
        return Value::Null;
    }
    let labels = request
        .namespace_labels
        .get(&resource.namespace)
        .map(|l| map_of(l.iter().map(|(k, v)| (k.clone(), string(v)))))
        .unwrap_or_else(|| map_of(Vec::<(String, Value)>::new()));
    map_of([(
        "metadata",
        map_of([("name", string(&resource.namespace)), ("labels", labels)]),
    )])
}
