//! The engine: compiled policies, evaluated against one resource at a time.
//!
//! `Engine` is `Send + Sync` and does no I/O; the binary runs it over files in parallel.

pub mod file;
pub(crate) mod overlay;
pub mod phases;
pub mod test_run;

pub use overlay::global_object_parts;

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use crate::exception::PolicyException;
use crate::pipeline;
use crate::policy::{Policy, PolicyBody, Rule, RuleBody, ValidateCheck};
use crate::report::{PolicyResponse, RuleResponse, RuleType, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::validate;
use phases::Phase;

pub struct Engine {
    policies: Vec<Policy>,
    exceptions: Vec<PolicyException>,
    /// The policies with mutate rules, with what was found about their rules (the mutate
    /// phase visits no other).
    mutating: Vec<crate::mutate::Mutating>,
    /// The positions of the MutatingAdmissionPolicies (crate::mapol), then of the
    /// MutatingPolicies (crate::mpol), each in load order: they run after the classic mutate
    /// rules, in this order (cel.md §6.4, `processor/policy_processor.go`).
    mutating_policies: Vec<usize>,
    /// The positions of the policies with generate rules and of the GeneratingPolicies, and
    /// of the DeletingPolicies, in load order: their phases visit no other policy (perf: no
    /// scan of every policy per resource).
    generating: Vec<usize>,
    deleting: Vec<usize>,
    /// The positions of the policies with `verifyImages` rules, in load order.
    verifying: Vec<usize>,
    /// What the validate phase visits for each apiVersion and kind met so far ([`KindPlan`]):
    /// by kind, then by apiVersion (looked up without building a key).
    kind_plans: RwLock<KindPlans>,
}

/// [`KindPlan`]s by kind, then by apiVersion.
type KindPlans = HashMap<String, Vec<(String, Arc<KindPlan>)>, foldhash::fast::FixedState>;

/// The policies and rules the validate phase can apply to resources of one apiVersion and
/// kind, found the first time they are met. perf: a resource then visits only those, instead
/// of every rule of every policy, and a rule whose match depends on nothing else is not
/// matched again (docs/PERFORMANCE.md).
#[derive(Debug)]
struct KindPlan {
    /// The policies with validate rules, in load order.
    policies: Vec<(usize, PolicyPlan)>,
    /// The positions in `policies` of those whose response can hold a rule result (not
    /// [`PolicyPlan::RulesNone`] nor [`PolicyPlan::CelEmpty`]).
    selecting: Vec<usize>,
}

#[derive(Debug)]
enum PolicyPlan {
    /// A compiled CEL policy (crate::vpol), evaluated with the variants that may select the
    /// kind ([`crate::vpol::CelPolicy::kind_plan`]).
    Cel(Vec<usize>),
    /// A CEL policy that cannot select the kind: an empty response where in scope.
    CelEmpty,
    /// An ImageValidatingPolicy (crate::ivpol).
    Image,
    /// The positions, in `Policy::validate_rules(kind)`, of the validate rules that may
    /// select the resources, each with whether it selects them all
    /// ([`Rule::selects_kind`]: then it is not matched per resource); and where the
    /// policy keeps the kind's rule list ([`Policy::kind_slot`]).
    Rules(Vec<(usize, bool)>, Option<usize>),
    /// A policy with validate rules none of which can select the kind: its response is empty
    /// wherever the resource is (perf: nothing is looked up per resource, docs/PERFORMANCE.md).
    RulesNone,
}

impl KindPlan {
    /// `mapped`: the parent kind a values `subresources` mapping gives the resource (the
    /// classic rules are planned for it, each matched per resource); `None` for most.
    fn new(
        policies: &[Policy],
        api_version: &str,
        kind: &str,
        mapped: Option<crate::request::MatchKind<'_>>,
    ) -> Self {
        let rule_kind = mapped.map_or(kind, |m| m.kind);
        let policies = policies
            .iter()
            .enumerate()
            .filter(|(_, p)| match &p.body {
                // The CEL kinds the validate phase evaluates (a MutatingPolicy is not one).
                PolicyBody::Cel(_) => {
                    crate::vpol::cel_policy(p).is_some()
                        || crate::ivpol::image_validating_policy(p).is_some()
                }
                PolicyBody::Rules(set) => set
                    .rules
                    .iter()
                    .any(|r| matches!(r.body, RuleBody::Validate(_))),
            })
            .filter_map(|(i, p)| {
                if let Some(cel) = crate::vpol::cel_policy(p) {
                    return match cel.kind_plan(api_version, kind) {
                        crate::vpol::KindPlan::Evaluate(v) => Some((i, PolicyPlan::Cel(v))),
                        crate::vpol::KindPlan::Empty => Some((i, PolicyPlan::CelEmpty)),
                        crate::vpol::KindPlan::Dropped => None,
                    };
                }
                if crate::ivpol::image_validating_policy(p).is_some() {
                    return Some((i, PolicyPlan::Image));
                }
                let slot = p.kind_slot(rule_kind);
                let rules = p
                    .validate_rules_in(slot, rule_kind)
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| matches!(r.body, RuleBody::Validate(_)))
                    .filter(|(_, r)| {
                        r.match_
                            .kinds_only
                            .as_ref()
                            .is_none_or(|k| k.iter().any(|k| k == rule_kind))
                    })
                    .filter_map(|(j, r)| match mapped {
                        Some(_) => Some((j, false)),
                        None => match r.selects_kind(api_version, kind) {
                            Some(false) => None,
                            Some(true) => Some((j, true)),
                            None => Some((j, false)),
                        },
                    })
                    .collect::<Vec<_>>();
                if rules.is_empty() {
                    return Some((i, PolicyPlan::RulesNone));
                }
                Some((i, PolicyPlan::Rules(rules, slot)))
            })
            .collect::<Vec<_>>();
        let selecting = policies
            .iter()
            .enumerate()
            .filter(|(_, (_, plan))| !matches!(plan, PolicyPlan::RulesNone | PolicyPlan::CelEmpty))
            .map(|(k, _)| k)
            .collect();
        KindPlan {
            policies,
            selecting,
        }
    }
}

impl Engine {
    pub fn new(policies: Vec<Policy>) -> Self {
        Self {
            mutating: crate::mutate::mutating(&policies),
            mutating_policies: {
                let positions = |is: fn(&Policy) -> bool| {
                    policies
                        .iter()
                        .enumerate()
                        .filter(move |(_, p)| is(p))
                        .map(|(i, _)| i)
                };
                positions(|p| crate::mapol::mutating_admission_policy(p).is_some())
                    .chain(positions(|p| crate::mpol::mutating_policy(p).is_some()))
                    .collect()
            },
            generating: positions_of(&policies, crate::generate::has_generate),
            deleting: positions_of(&policies, |p| crate::dpol::deleting_policy(p).is_some()),
            verifying: positions_of(&policies, crate::verify_images::has_verify_images),
            policies,
            exceptions: Vec::new(),
            kind_plans: RwLock::default(),
        }
    }

    /// The [`KindPlan`] of a resource's apiVersion and kind, made on first use. A resource a
    /// values `subresources` mapping gives a parent kind gets a plan of its own, not kept.
    fn kind_plan(&self, resource: &Resource, request: &Request) -> Arc<KindPlan> {
        let (api_version, kind) = (resource.api_version.as_str(), resource.kind.as_str());
        if let Some(mapped) = request.mapped_kind(resource) {
            return Arc::new(KindPlan::new(
                &self.policies,
                api_version,
                kind,
                Some(mapped),
            ));
        }
        let find = |plans: &[(String, Arc<KindPlan>)]| {
            plans
                .iter()
                .find(|(v, _)| v == api_version)
                .map(|(_, p)| Arc::clone(p))
        };
        let read = self
            .kind_plans
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(plan) = read.get(kind).and_then(|ps| find(ps)) {
            return plan;
        }
        drop(read);
        let plan = Arc::new(KindPlan::new(&self.policies, api_version, kind, None));
        let mut write = self
            .kind_plans
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let plans = write.entry(kind.to_owned()).or_default();
        // Another thread may have made it meanwhile: the first one made is kept.
        if let Some(made) = find(plans) {
            return made;
        }
        plans.push((api_version.to_owned(), Arc::clone(&plan)));
        plan
    }

    /// The PolicyExceptions every rule is checked against (exceptions.md).
    pub fn with_exceptions(mut self, exceptions: Vec<PolicyException>) -> Self {
        self.exceptions = exceptions;
        self
    }

    pub fn policies(&self) -> &[Policy] {
        &self.policies
    }

    /// Policy `i` when it reaches `resource`: the one scope check (`Policy::in_scope`, match.md
    /// §2.2), asked by every per-policy entry of the engine before the kind runs.
    fn reaching(&self, i: usize, resource: &Resource) -> Option<&Policy> {
        self.policies
            .get(i)
            .filter(|p| p.in_scope(&resource.namespace))
    }

    /// The mutate phase for one resource: every policy with mutate rules, in load order, each
    /// on the resource as the previous one left it (mutate.md §2).
    pub fn mutate(&self, resource: &Resource, request: &Request) -> crate::mutate::Mutation {
        crate::mutate::mutate_with_exceptions(resource, &self.policies, &self.exceptions, request)
    }

    /// The mutate rules of policy `i` alone on `resource` (crate::mutate), its responses with
    /// `i` as their policy's position: `kpol test` runs each policy with its own values and
    /// operation.
    pub fn mutate_policy(
        &self,
        i: usize,
        resource: &Resource,
        request: &Request,
    ) -> crate::mutate::Mutation {
        let policies = self.policies.get(i..=i).unwrap_or_default();
        let mut m =
            crate::mutate::mutate_with_exceptions(resource, policies, &self.exceptions, request);
        for pm in &mut m.policies {
            pm.response.policy = i;
        }
        m
    }

    /// The response of policy `i` when it is a MutatingPolicy (crate::mpol), on `resource`.
    pub fn mutating_policy(
        &self,
        i: usize,
        resource: &Resource,
        request: &Request,
    ) -> Option<crate::mutate::PolicyMutation> {
        crate::mpol::mutate(
            i,
            self.reaching(i, resource)?,
            resource,
            request,
            &self.exceptions,
        )
    }

    /// The response of policy `i` when it is a MutatingAdmissionPolicy (crate::mapol), on
    /// `resource`.
    pub fn mutating_admission_policy(
        &self,
        i: usize,
        resource: &Resource,
        request: &Request,
    ) -> Option<crate::mutate::PolicyMutation> {
        crate::mapol::mutate(i, self.policies.get(i)?, resource, request)
    }

    /// What policy `i`, a mutate-existing MutatingPolicy, does to `target` for `trigger`'s
    /// request (crate::mpol::evaluate::mutate_target; the caller selected the target).
    pub fn mutate_target(
        &self,
        i: usize,
        target: &Resource,
        trigger: &Resource,
        request: &Request,
    ) -> Option<crate::mutate::PolicyMutation> {
        crate::mpol::evaluate::mutate_target(
            i,
            self.policies.get(i)?,
            target,
            trigger,
            request,
            &self.exceptions,
        )
    }

    /// The mutate phase as admission runs it (`kpol check`, `kpol mutate`): the classic mutate
    /// rules, then the MutatingPolicies on their output (cel.md §6.4). The resource as it
    /// leaves the phase, `None` when unchanged, and one response per policy, without the copy
    /// of the resource each policy left (only `kpol test` compares those). perf: `kpol mutate`
    /// keeps this per resource of a file, and a copy of a large CRD per mutate policy of the
    /// library cost hundreds of MB.
    pub fn mutate_responses(
        &self,
        resource: &Resource,
        request: &Request,
    ) -> (Option<Resource>, Vec<crate::mutate::PolicyMutation>) {
        let mut current = std::borrow::Cow::Borrowed(resource);
        let mut policies = Vec::new();
        for phase in phases::of(phases::Command::Mutate) {
            match phase {
                Phase::MutateRules => {
                    // Every mutate policy's response, without the copies of the resource.
                    let keep = crate::mutate::Keep {
                        snapshots: false,
                        empty_responses: true,
                    };
                    let (after, responses) = crate::mutate::run_policies(
                        resource,
                        &self.policies,
                        &self.mutating,
                        &self.exceptions,
                        request,
                        keep,
                    );
                    current = after;
                    policies.extend(responses);
                }
                Phase::CelMutations => {
                    current = self.mutating_policies_on(current, request, &mut policies);
                }
                _ => {}
            }
        }
        let patched = match current {
            std::borrow::Cow::Owned(r) => Some(r),
            std::borrow::Cow::Borrowed(_) => None,
        };
        (patched, policies)
    }

    /// The MutatingAdmissionPolicies then the MutatingPolicies, each in load order and on the
    /// resource the one before left; their responses are appended to `out`.
    fn mutating_policies_on<'r>(
        &self,
        mut current: std::borrow::Cow<'r, Resource>,
        request: &Request,
        out: &mut Vec<crate::mutate::PolicyMutation>,
    ) -> std::borrow::Cow<'r, Resource> {
        for &i in &self.mutating_policies {
            let Some(mut pm) = self
                .mutating_policy(i, &current, request)
                .or_else(|| self.mutating_admission_policy(i, &current, request))
            else {
                continue;
            };
            if let Some(root) = pm.patched.take()
                && root != current.root
            {
                current = std::borrow::Cow::Owned(current.with_root(root));
            }
            out.push(pm);
        }
        current
    }

    /// The resource as the mutate phase leaves it, `None` when unchanged
    /// ([`Engine::mutate_responses`] without the responses).
    pub fn mutated(&self, resource: &Resource, request: &Request) -> Option<Resource> {
        if self.mutating_policies.is_empty() {
            return crate::mutate::mutated_by(
                resource,
                &self.policies,
                &self.mutating,
                &self.exceptions,
                request,
            );
        }
        self.mutate_responses(resource, request).0
    }

    /// [`Engine::mutated`] with the mutate rules that errored, each with the position of its
    /// policy in [`Engine::policies`] (`kpol check` reports them: with `failurePolicy: Fail`
    /// Kyverno blocks the request, mutate.md §8; a MutatingPolicy with `failurePolicy:
    /// Ignore` is skipped instead). The list is empty, and allocates nothing, when no rule
    /// errored.
    pub fn mutated_with_errors(
        &self,
        resource: &Resource,
        request: &Request,
    ) -> (Option<Resource>, Vec<(usize, RuleResponse)>) {
        let mut mutated: Option<Resource> = None;
        let mut errors = Vec::new();
        // The mutate phases of `kpol check`'s row; the CLI validates and asks the
        // DeletingPolicies after (`Engine::validate`, `Engine::deletions`).
        for phase in phases::of(phases::Command::Check) {
            match phase {
                Phase::MutateRules => {
                    (mutated, errors) = crate::mutate::mutated_with_errors(
                        resource,
                        &self.policies,
                        &self.mutating,
                        &self.exceptions,
                        request,
                    );
                }
                Phase::CelMutations if !self.mutating_policies.is_empty() => {
                    let current = match &mutated {
                        Some(r) => std::borrow::Cow::Borrowed(r),
                        None => std::borrow::Cow::Borrowed(resource),
                    };
                    let mut responses = Vec::new();
                    let after = self.mutating_policies_on(current, request, &mut responses);
                    if let std::borrow::Cow::Owned(r) = after {
                        mutated = Some(r);
                    }
                    for pm in responses {
                        let i = pm.response.policy;
                        let ignored = crate::mpol::mutating_policy(&self.policies[i])
                            .is_some_and(|m| m.ignore_failures);
                        errors.extend(
                            pm.response
                                .rules
                                .into_iter()
                                .filter(|r| r.status == Status::Error && !ignored)
                                .map(|r| (i, r)),
                        );
                    }
                }
                _ => {}
            }
        }
        for (_, r) in &mut errors {
            r.place(&resource.root);
        }
        (mutated, errors)
    }

    /// The verify-images phase (crate::verify_images): one response per policy with
    /// `verifyImages` rules, in load order, each with the validate phase's responses of its
    /// rules' checks. `view` gives, per policy position, the resource its rules see and the
    /// request (`kpol test` runs each policy with its own operation and values).
    pub fn verify_images<'r>(
        &self,
        mut view: impl FnMut(usize) -> (&'r Resource, Request),
    ) -> Vec<crate::verify_images::PolicyImages> {
        self.verifying
            .iter()
            .map(|&i| {
                let (resource, request) = view(i);
                let Some(p) = self.reaching(i, resource) else {
                    return crate::verify_images::PolicyImages {
                        policy: i,
                        verify: Vec::new(),
                        validate: Vec::new(),
                    };
                };
                let mut out =
                    crate::verify_images::verify_policy(i, p, resource, &request, &self.exceptions);
                for r in out.verify.iter_mut().chain(&mut out.validate) {
                    r.place(&resource.root);
                }
                out
            })
            .collect()
    }

    /// The validate phase for one resource: one response per policy that has validate rules,
    /// in load order (match.md §3.1).
    pub fn validate(&self, resource: &Resource, request: &Request) -> Vec<PolicyResponse> {
        // One variable context for all rules of this resource (validate/shared.rs).
        let mut contexts = validate::Contexts::new(resource, request);
        let plan = self.kind_plan(resource, request);
        let mut out = Vec::with_capacity(plan.policies.len());
        out.extend(plan.policies.iter().filter_map(|(i, policy_plan)| {
            self.respond(*i, policy_plan, resource, request, &mut contexts)
        }));
        out
    }

    /// [`Engine::validate`] without the empty responses of the policies that cannot select
    /// the resource's kind (`kpol check` reads rule results only). perf: a resource visits
    /// only the policies that can select it, so a policy for a kind absent from the tree costs
    /// nothing per resource (docs/PERFORMANCE.md).
    pub fn validate_selecting(
        &self,
        resource: &Resource,
        request: &Request,
    ) -> Vec<PolicyResponse> {
        let mut contexts = validate::Contexts::new(resource, request);
        let plan = self.kind_plan(resource, request);
        let mut out = Vec::with_capacity(plan.selecting.len());
        out.extend(plan.selecting.iter().filter_map(|&k| {
            let (i, policy_plan) = &plan.policies[k];
            self.respond(*i, policy_plan, resource, request, &mut contexts)
        }));
        out
    }

    /// The response of policy `i` planned as `policy_plan` for the resource; `None` when it
    /// gives none.
    fn respond<'r>(
        &self,
        i: usize,
        policy_plan: &PolicyPlan,
        resource: &'r Resource,
        request: &Request,
        contexts: &mut validate::Contexts<'r>,
    ) -> Option<PolicyResponse> {
        // Outside a namespaced policy's namespace a ClusterPolicy-shaped policy gives an empty
        // response, a CEL kind none.
        let Some(p) = self.reaching(i, resource) else {
            return match policy_plan {
                PolicyPlan::Rules(..) | PolicyPlan::RulesNone => Some(PolicyResponse {
                    policy: i,
                    rules: Vec::new(),
                }),
                PolicyPlan::Cel(_) | PolicyPlan::CelEmpty | PolicyPlan::Image => None,
            };
        };
        let mut rules = match policy_plan {
            PolicyPlan::Rules(rules, slot) => validate_policy(
                p,
                (rules, *slot),
                resource,
                request,
                &self.exceptions,
                contexts,
            ),
            PolicyPlan::RulesNone => {
                return Some(PolicyResponse {
                    policy: i,
                    rules: Vec::new(),
                });
            }
            PolicyPlan::CelEmpty => Vec::new(),
            PolicyPlan::Cel(variants) => {
                let cel = crate::vpol::cel_policy(p)?;
                let _ns = crate::cel::context::PolicyNamespace::enter(p.namespace.as_deref());
                crate::vpol::evaluate::evaluate(
                    cel,
                    variants,
                    resource,
                    request,
                    &self.exceptions,
                    &contexts.cel,
                )?
            }
            // No response when nothing matched (the CLI keeps none).
            PolicyPlan::Image => vec![crate::ivpol::evaluate(
                p,
                resource,
                request,
                &self.exceptions,
            )?],
        };
        // Every response says where it points, so no output format locates a path again
        // (a foreach failure's path is relative to its element).
        for r in &mut rules {
            r.place(&resource.root);
        }
        Some(PolicyResponse { policy: i, rules })
    }

    /// The validate phase for one JSON payload (cel.md §3.5): the responses of the
    /// ValidatingPolicies in `evaluation.mode: JSON`, in load order; every other policy skips
    /// payloads. `payload` holds the document as its root (no identity is read from it).
    pub fn validate_payload(&self, payload: &Resource) -> Vec<PolicyResponse> {
        let mut out = Vec::new();
        for (i, p) in self.policies.iter().enumerate() {
            let Some(cel) = crate::vpol::cel_policy(p) else {
                // A JSON-mode ImageValidatingPolicy sees payloads too.
                if let Some(mut r) = crate::ivpol::evaluate_payload(p, payload, &self.exceptions) {
                    r.place(&payload.root);
                    out.push(PolicyResponse {
                        policy: i,
                        rules: vec![r],
                    });
                }
                continue;
            };
            let Some(mut rules) =
                crate::vpol::evaluate::evaluate_payload(cel, payload, &self.exceptions)
            else {
                continue;
            };
            for r in &mut rules {
                r.place(&payload.root);
            }
            out.push(PolicyResponse { policy: i, rules });
        }
        out
    }

    /// `kpol generate`'s row of the phase table for one trigger resource: its generate phase
    /// (crate::generate), one response per policy with generate rules that gave any, in load
    /// order; clone sources come from `pool`.
    pub fn generate(
        &self,
        resource: &Resource,
        request: &Request,
        pool: &crate::generate::SourcePool<'_>,
    ) -> Vec<crate::generate::GeneratePolicyResponse> {
        let mut out = Vec::new();
        for phase in phases::of(phases::Command::Generate) {
            if *phase == Phase::Generate {
                out.extend(
                    self.generating
                        .iter()
                        .filter_map(|&i| self.generate_policy(i, resource, request, pool)),
                );
            }
        }
        out
    }

    /// The generate phase of policy `i` alone for one trigger resource
    /// (crate::generate::generate_policy): `None` when it has no generate rules, is no
    /// GeneratingPolicy, or gave nothing. `kpol test` asks per policy, with each policy's own
    /// values and operation.
    pub fn generate_policy(
        &self,
        i: usize,
        resource: &Resource,
        request: &Request,
        pool: &crate::generate::SourcePool<'_>,
    ) -> Option<crate::generate::GeneratePolicyResponse> {
        // A GeneratingPolicy is not scoped: Kyverno's generating engine asks only its
        // matchConstraints.
        let p = match self.policies.get(i) {
            Some(p) if crate::gpol::generating_policy(p).is_some() => p,
            _ => self.reaching(i, resource)?,
        };
        crate::generate::generate_policy(i, p, resource, request, pool, &self.exceptions)
    }

    /// The verdict of policy `i` on `resource` when it is a DeletingPolicy (crate::dpol),
    /// without its place in the resource ([`Engine::deletions`] places it).
    pub fn deletion(
        &self,
        i: usize,
        resource: &Resource,
        request: &Request,
    ) -> Option<RuleResponse> {
        // A JSON payload (no apiVersion, no kind) has no namespace: the policy is asked anyway.
        let payload = resource.api_version.is_empty() && resource.kind.is_empty();
        let p = if payload {
            self.policies.get(i)?
        } else {
            self.reaching(i, resource)?
        };
        crate::dpol::evaluate(p, resource, request, &self.exceptions)
    }

    /// The DeletingPolicies' verdicts on one resource (crate::dpol): `(policy index,
    /// response)` for each DeletingPolicy whose matchConstraints select it, in load order. Not
    /// an admission phase: Kyverno's cleanup controller asks on its schedule, which kpol
    /// does not run.
    pub fn deletions(&self, resource: &Resource, request: &Request) -> Vec<(usize, RuleResponse)> {
        self.deleting
            .iter()
            .filter_map(|&i| {
                let mut r = self.deletion(i, resource, request)?;
                r.place(&resource.root);
                Some((i, r))
            })
            .collect()
    }
}

/// The positions of the policies that `is`, in load order.
fn positions_of(policies: &[Policy], is: impl Fn(&Policy) -> bool) -> Vec<usize> {
    policies
        .iter()
        .enumerate()
        .filter(|(_, p)| is(p))
        .map(|(i, _)| i)
        .collect()
}

/// The validate rules of `policy` at positions `rules` of its rules for the resource's kind.
fn validate_policy<'r>(
    policy: &Policy,
    (rules, slot): (&[(usize, bool)], Option<usize>),
    resource: &'r Resource,
    request: &Request,
    exceptions: &[PolicyException],
    contexts: &mut validate::Contexts<'r>,
) -> Vec<RuleResponse> {
    let mut out = Vec::new();
    let labels = request.classic_namespace_labels(&resource.namespace);
    // Kyverno computes the rule list per resource kind (autogen, match.md §8.3).
    let all = policy.validate_rules_in(slot, request.match_kind(resource).kind);
    for (k, &(j, selected)) in rules.iter().enumerate() {
        let rule = &all[j];
        // One evaluation budget for everything the rule builds (variables/budget.rs).
        let _budget = crate::base::budget::Scope::enter();
        let s = pipeline::Subject {
            policy,
            rule,
            resource,
            request,
            exceptions,
        };
        let resp = validate_rule(&s, selected, contexts);
        contexts.release();
        let Some(mut resp) = resp else {
            continue;
        };
        // The failure action, then the pre-existing violation's exemption: validate only.
        resp.failure_action = policy.rule_action(rule, &resource.namespace, &labels);
        exempt_existing_violation(policy, rule, resource, request, exceptions, &mut resp);
        let stops = VALIDATE.stops(policy, std::iter::once(resp.status));
        if out.is_empty() {
            // perf: room for the rules left, once (docs/PERFORMANCE.md).
            out.reserve_exact(rules.len() - k);
        }
        out.push(resp);
        if stops {
            break;
        }
    }
    out
}

/// How validate rules go through the shared rule steps (crate::pipeline): Kyverno's engine
/// handlers (exceptions after preconditions, a context error is the rule's error);
/// `applyRules: One` stops after the first pass or fail (match.md §3.4).
const VALIDATE: pipeline::How<'static> = pipeline::How {
    rule_type: RuleType::Validation,
    exceptions: pipeline::Exceptions::AfterPreconditions,
    context_error: pipeline::ContextError::Respond,
    preconditions: pipeline::Preconditions::Engine,
    one_stops_at: pipeline::OneStopsAt::PassOrFail,
};

/// One validate rule against one resource, through the shared rule steps, then its body;
/// `None` when the rule gives no response at all. `selected`: the rule is known to select
/// the resource (its match is not asked again).
fn validate_rule<'r>(
    s: &pipeline::Subject<'_, 'r>,
    selected: bool,
    contexts: &mut validate::Contexts<'r>,
) -> Option<RuleResponse> {
    let (policy, rule, resource, request) = (s.policy, s.rule, s.resource, s.request);
    let RuleBody::Validate(v) = &rule.body else {
        return None;
    };
    let respond = |verdict: validate::Verdict| Some(VALIDATE.respond(rule, verdict));
    let unsupported = |feature: &str| {
        let mut r = RuleResponse::new(
            &rule.name,
            Status::Error,
            format!("kpol does not evaluate {feature} yet"),
        );
        r.unsupported = Some(feature.to_owned());
        Some(r)
    };
    // Pattern rules give no response for a DELETE (validate.md §1).
    let is_pattern = matches!(
        v.check,
        ValidateCheck::Pattern(_) | ValidateCheck::AnyPattern(_)
    );
    let early = |stage| {
        (stage == pipeline::Stage::Selected && is_pattern && request.operation == Operation::Delete)
            .then_some(pipeline::Early::Silent)
    };
    let lend = &mut *contexts;
    let context =
        move || validate::needs_context(rule, v).then(move || lend.for_rule(policy, rule));
    let mut ctx = match pipeline::gate(s, &VALIDATE, selected, early, context) {
        pipeline::Gate::Silent => return None,
        pipeline::Gate::Respond(r) => return Some(r),
        pipeline::Gate::Body(ctx) => ctx,
    };
    let message = v.message.as_deref();
    let compiled = validate::compiled(v);
    let verdict = match &v.check {
        ValidateCheck::Pattern(p) => validate::pattern_check(
            &rule.name,
            message,
            false,
            compiled.patterns.patterns(std::slice::from_ref(p)),
            &resource.root,
            ctx.as_deref_mut(),
        ),
        ValidateCheck::AnyPattern(ps) => validate::pattern_check(
            &rule.name,
            message,
            true,
            compiled.patterns.patterns(ps),
            &resource.root,
            ctx.as_deref_mut(),
        ),
        ValidateCheck::Deny(d) => match ctx {
            Some(c) => validate::deny_check(&rule.name, message, d, c),
            None => return None,
        },
        ValidateCheck::Foreach(_) => match ctx {
            Some(c) => {
                validate::foreach_rule(&rule.name, message, &compiled.foreach, &resource.root, c)?
            }
            None => return None,
        },
        ValidateCheck::PodSecurity(node) => {
            if request.operation == Operation::Delete {
                return None;
            }
            let read;
            let body = match compiled.pod_security.as_deref() {
                Some(b) => b,
                None => {
                    read = crate::pss::Body::read(node);
                    &read
                }
            };
            let v = crate::pss::validate_with(&rule.name, body, resource, &mut contexts.pods);
            validate::Verdict {
                status: v.status,
                message: v.message,
                path: v.path,
                span: None,
            }
        }
        ValidateCheck::Cel(cel) => {
            let old = (request.operation == Operation::Update)
                .then(|| request.old_for(&policy.name, resource));
            let (status, message, feature) = crate::vpol::cel_rule::evaluate(
                &rule.name,
                v.message.as_deref(),
                cel,
                resource,
                old.as_deref(),
                request,
                &contexts.cel,
            );
            let mut r = RuleResponse::new(&rule.name, status, message);
            r.unsupported = feature.map(str::to_owned);
            return Some(r);
        }
        ValidateCheck::Manifests(_) => return unsupported("manifests"),
    };
    respond(verdict)
}

/// Under an UPDATE an Enforce rule that fails on the new object is evaluated again on the old
/// object, as if that were being created (Kyverno's `validateOldObject`, validate.md §1 step
/// 7): when the old object fails too, the violation already existed and the rule is skipped.
/// The old object is the request's previous revision (`kpol check --old`, `--diff-base`),
/// else the resource itself, with the values' `request.oldObject` merged over it.
///
/// As in Kyverno this is done for pattern, anyPattern, deny and foreach rules (the root level
/// only) and podSecurity rules, not for `validate.cel`; an old object that passes, errors, is
/// skipped or does not match leaves the failure as it is. The old object is matched with
/// operation CREATE and a user no rule names, so that rules on subjects or roles do not match.
fn exempt_existing_violation(
    policy: &Policy,
    rule: &Rule,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
    resp: &mut RuleResponse,
) {
    let RuleBody::Validate(v) = &rule.body else {
        return;
    };
    let pss = matches!(v.check, ValidateCheck::PodSecurity(..));
    if matches!(v.check, ValidateCheck::Cel(_) | ValidateCheck::Manifests(_)) {
        return;
    }
    // Overrides are ignored here: the rule's own action, else the policy's.
    let enforce = v
        .failure_action
        .or(policy.rule_set().map(|set| set.validation_failure_action))
        == Some(crate::report::FailureAction::Enforce);
    if request.operation != Operation::Update
        || !enforce
        || !v.allow_existing_violations
        || resp.status != Status::Fail
    {
        return;
    }
    let old = request.old_for(&policy.name, resource);
    let matcher = Request {
        operation: Operation::Create,
        user_info: Some(crate::request::old_object_matcher()),
        old_object: None,
        ..request.clone()
    };
    if !rule.matches(&old, &matcher) {
        return;
    }
    // The old object is `request.object` now, and there is no `request.oldObject`: values
    // that set either are left out (Kyverno replaces both in its context).
    let as_create = Request {
        operation: Operation::Create,
        old_object: None,
        values: without_object_values(&request.values),
        ..request.clone()
    };
    // Exceptions: a podSecurity rule looks its up again for the old object; the other
    // rules were not excepted (else they would not have failed).
    let exceptions = if pss { exceptions } else { &[] };
    let mut contexts = validate::Contexts::new(&old, &as_create);
    let s = pipeline::Subject {
        policy,
        rule,
        resource: &old,
        request: &as_create,
        exceptions,
    };
    // Matched above, as a CREATE by a user no rule names.
    let prior = validate_rule(&s, true, &mut contexts);
    if prior.is_some_and(|old| old.status == Status::Fail) {
        resp.status = Status::Skip;
        resp.message = "skipping the rule evaluation as pre-existing violations are allowed".into();
        resp.path = None;
        resp.span = None;
    }
}

/// `values` without the keys that set `request.object` or `request.oldObject` (shared when
/// there are none).
fn without_object_values(
    values: &Arc<crate::request::values::Values>,
) -> Arc<crate::request::values::Values> {
    let sets_objects = |k: &str| {
        ["request.object", "request.oldObject"]
            .iter()
            .any(|p| k == *p || k.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
    };
    let kv_has = |kv: &crate::request::values::KeyValues| kv.iter().any(|(k, _)| sets_objects(k));
    let any = kv_has(&values.global)
        || values.policies.iter().any(|p| {
            p.resources.iter().any(|(_, kv)| kv_has(kv))
                || p.rules.iter().any(|(_, kv, _)| kv_has(kv))
        });
    if !any {
        return values.clone();
    }
    let mut v = (**values).clone();
    let strip = |kv: &mut crate::request::values::KeyValues| kv.retain(|(k, _)| !sets_objects(k));
    strip(&mut v.global);
    for p in &mut v.policies {
        p.resources.iter_mut().for_each(|(_, kv)| strip(kv));
        p.rules.iter_mut().for_each(|(_, kv, _)| strip(kv));
    }
    Arc::new(v)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::kinds::load_policies;
    use crate::manifest::read_manifests;
    use crate::source::SourceFile;
    use crate::yaml::{Limits, parse_documents};

    /// The verify-images phase visits the policies with `verifyImages` rules only, in load
    /// order, each on the resource and request its view gives.
    #[test]
    fn verify_images_visits_the_verifying_policies_with_their_views() {
        let policy = |name: &str, body: &str| {
            format!(
                "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: {name}}}\nspec:\n  \
                 rules:\n  - name: r\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n{body}"
            )
        };
        let text = [
            policy("v", "    validate: {pattern: {metadata: {name: '?*'}}}\n"),
            policy(
                "i",
                "    verifyImages:\n    - {imageReferences: ['*'], mutateDigest: false, required: false}\n",
            ),
        ]
        .join("---\n");
        let engine = Engine::new(crate::test_support::load(&text).policies);
        let pod = |image: &str| {
            crate::test_support::resource(&format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers: [{{name: c, image: '{image}'}}]\n"
            ))
        };
        let (tag, digest) = (
            pod("nginx:1"),
            pod(&format!("nginx@sha256:{}", "0".repeat(64))),
        );
        let mut asked = Vec::new();
        let out = engine.verify_images(|i| {
            asked.push(i);
            (&tag, Request::default())
        });
        assert_eq!(asked, [1]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].policy, 1);
        assert!(out[0].verify.is_empty());
        assert_eq!(
            out[0].validate[0].message,
            "missing digest for docker.io/nginx:1"
        );
        let out = engine.verify_images(|_| (&digest, Request::default()));
        assert_eq!(out[0].validate[0].status, Status::Pass);
        // A DELETE gives no response of the rule.
        let delete = Request {
            operation: Operation::Delete,
            ..Request::default()
        };
        let out = engine.verify_images(|_| (&tag, delete.clone()));
        assert!(out[0].verify.is_empty() && out[0].validate.is_empty());
    }

    fn engine(text: &str) -> Engine {
        let source = Arc::new(SourceFile::new("p.yaml", text));
        let docs = parse_documents(text, Limits::default()).unwrap();
        let loaded = load_policies(&source, docs);
        assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
        Engine::new(loaded.policies)
    }

    fn resource(text: &str) -> Resource {
        let source = Arc::new(SourceFile::new("r.yaml", text));
        read_manifests(&source, Limits::default())
            .resources
            .remove(0)
    }

    fn statuses(e: &Engine, r: &Resource, req: &Request) -> Vec<(String, Status)> {
        e.validate(r, req)
            .into_iter()
            .flat_map(|p| p.rules)
            .map(|r| (r.rule, r.status))
            .collect()
    }

    const POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: POLICYKIND
metadata: {name: p, namespace: team-a}
spec:
  validationFailureAction: Enforce
  applyRules: APPLY
  rules:
  - name: one
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate: {message: m, pattern: {data: {a: '1'}}}
  - name: two
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate: {message: m, pattern: {data: {b: '1'}}}
";

    fn policy(kind: &str, apply: &str) -> String {
        let p = POLICY.replace("POLICYKIND", kind).replace("APPLY", apply);
        if kind == "ClusterPolicy" {
            p.replace(", namespace: team-a", "")
        } else {
            p
        }
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: NS}\ndata: {a: '2', b: '1'}\n";

    /// The text each response of `policy` for `pod` points at (`RuleResponse::span`).
    fn placed(policy: &str, pod: &str) -> Vec<(String, Status, String)> {
        let r = resource(pod);
        let src = r.source.clone().unwrap();
        engine(policy)
            .validate(&r, &Request::default())
            .into_iter()
            .flat_map(|p| p.rules)
            .map(|resp| {
                let span = resp.span.expect("the engine places every response");
                (resp.rule, resp.status, src.slice(span).to_owned())
            })
            .collect()
    }

    const FOREACH: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: f}
spec:
  rules:
  - name: pattern
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        pattern: {image: '!*:latest'}
  - name: deny
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        deny: {conditions: {any: [{key: '{{ element.name }}', operator: Equals, value: b}]}}
  - name: nested
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        foreach:
        - list: element.ports
          pattern: {=(hostPort): 0}
  - name: outer-scope
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        elementScope: false
        pattern: {metadata: {labels: {team: '?*'}}}
  - name: plain
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      pattern: {spec: {containers: [{name: '?*', image: '!*:latest'}]}}
";

    const FOREACH_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: x}
spec:
  containers:
  - name: a
    image: a:1
  - name: b
    image: b:latest
    ports:
    - containerPort: 1
    - {containerPort: 2, hostPort: 2}
";

    /// A foreach failure points into the element (its path is relative to it), whatever
    /// the body: a pattern's failing field, a deny's element, a nested foreach's inner
    /// element, a pattern on the outer scope (`elementScope: false`) at the resource's field.
    #[test]
    fn foreach_failures_point_into_the_element() {
        let got = placed(FOREACH, FOREACH_POD);
        let expect = |rule: &str, text: &str| {
            let found = got.iter().find(|(r, ..)| r == rule).unwrap();
            assert_eq!((found.1, found.2.as_str()), (Status::Fail, text), "{rule}");
        };
        expect("pattern", "b:latest");
        expect(
            "deny",
            "name: b\n    image: b:latest\n    ports:\n    - containerPort: 1\n    - {containerPort: 2, hostPort: 2}\n",
        );
        expect("nested", "2");
        expect("outer-scope", "labels");
        expect("plain", "b:latest");
    }

    /// A namespaced Policy only sees resources of its own namespace (match.md §2.2).
    #[test]
    fn namespaced_policy_ignores_other_namespaces() {
        let e = engine(&policy("Policy", "All"));
        let req = Request::default();
        assert!(statuses(&e, &resource(&CM.replace("NS", "team-b")), &req).is_empty());
        assert_eq!(
            statuses(&e, &resource(&CM.replace("NS", "team-a")), &req),
            [("one".into(), Status::Fail), ("two".into(), Status::Pass)]
        );
    }

    /// applyRules: One stops after the first pass or fail.
    #[test]
    fn apply_rules_one_stops_at_first_applied_rule() {
        let e = engine(&policy("ClusterPolicy", "One"));
        let r = resource(&CM.replace("NS", "x"));
        assert_eq!(
            statuses(&e, &r, &Request::default()),
            [("one".into(), Status::Fail)]
        );
    }

    /// Under UPDATE an Enforce failure is a pre-existing violation: skip. DELETE gives no
    /// response for pattern rules.
    #[test]
    fn update_exempts_enforce_failures_and_delete_gives_nothing() {
        let e = engine(&policy("ClusterPolicy", "All"));
        let r = resource(&CM.replace("NS", "x"));
        let update = Request {
            operation: Operation::Update,
            ..Request::default()
        };
        assert_eq!(
            statuses(&e, &r, &update),
            [("one".into(), Status::Skip), ("two".into(), Status::Pass)]
        );
        let delete = Request {
            operation: Operation::Delete,
            ..Request::default()
        };
        assert!(statuses(&e, &r, &delete).is_empty());
    }

    fn update_with_old(old: Option<&str>) -> Request {
        Request {
            operation: Operation::Update,
            old_object: old.map(|o| Arc::new(resource(o))),
            ..Request::default()
        }
    }

    /// With a real old object: a violation the old object had too is skipped; one the
    /// update brings in fails (Kyverno's validateOldObject).
    #[test]
    fn update_skips_only_pre_existing_violations() {
        let e = engine(&policy("ClusterPolicy", "All"));
        let new = resource(&CM.replace("NS", "x"));
        // The old object fails `one` too: pre-existing, skipped.
        let old_fails = CM.replace("NS", "x");
        let got = e.validate(&new, &update_with_old(Some(&old_fails)));
        let one = &got[0].rules[0];
        assert_eq!(one.status, Status::Skip);
        assert_eq!(
            one.message,
            "skipping the rule evaluation as pre-existing violations are allowed"
        );
        // The old object passed `one`: the update introduces the violation.
        let old_passes = old_fails.replace("a: '2'", "a: '1'");
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&old_passes))),
            [("one".into(), Status::Fail), ("two".into(), Status::Pass)]
        );
    }

    /// The old object is matched as a CREATE by a user no rule names: a rule on subjects
    /// does not match it, and the failure stands. An old object outside the rule's match
    /// (another namespace) leaves it too.
    #[test]
    fn old_object_must_match_for_the_skip() {
        let p = POLICY
            .replace("POLICYKIND", "ClusterPolicy")
            .replace(", namespace: team-a", "")
            .replace("APPLY", "All")
            .replace(
                "{any: [{resources: {kinds: [ConfigMap]}}]}",
                "{any: [{resources: {kinds: [ConfigMap], namespaces: [x]}}]}",
            );
        let e = engine(&p);
        let new = resource(&CM.replace("NS", "x"));
        let old_elsewhere = CM.replace("NS", "y");
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&old_elsewhere)))[0].1,
            Status::Fail
        );
        let subjects = p
            .replace(
                "namespaces: [x]}}]}",
                "namespaces: [x]}, subjects: [{kind: User, name: alice}]}]}",
            )
            .replace("spec:\n", "spec:\n  background: false\n");
        let e = engine(&subjects);
        let req = Request {
            user_info: Some(crate::request::UserInfo {
                username: "alice".into(),
                ..Default::default()
            }),
            ..update_with_old(Some(&CM.replace("NS", "x")))
        };
        assert_eq!(statuses(&e, &new, &req)[0].1, Status::Fail);
    }

    /// Audit rules and `allowExistingViolations: false` are not exempted.
    #[test]
    fn audit_and_disallowed_existing_violations_still_fail() {
        let old = CM.replace("NS", "x");
        let new = resource(&old);
        let audit = policy("ClusterPolicy", "All").replace("Enforce", "Audit");
        assert_eq!(
            statuses(&engine(&audit), &new, &update_with_old(Some(&old)))[0].1,
            Status::Fail
        );
        let strict = policy("ClusterPolicy", "All").replace(
            "validate: {message: m, pattern: {data: {a: '1'}}}",
            "validate: {message: m, allowExistingViolations: false, pattern: {data: {a: '1'}}}",
        );
        assert_eq!(
            statuses(&engine(&strict), &new, &update_with_old(Some(&old)))[0].1,
            Status::Fail
        );
    }

    /// An old object whose evaluation errors does not exempt the failure (only fail+fail
    /// skips); a deny rule sees the old object as `request.object` under CREATE.
    #[test]
    fn deny_old_object_error_or_pass_keeps_the_failure() {
        let deny = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: d
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      deny:
        conditions:
          any:
          - {key: '{{ request.object.data.a }}', operator: Equals, value: '2'}
";
        let e = engine(deny);
        let new = resource(&CM.replace("NS", "x"));
        // Old has no data.a: the variable does not resolve, the old evaluation errors.
        let old_error = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n";
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(old_error)))[0].1,
            Status::Fail
        );
        let old_pass = CM.replace("NS", "x").replace("a: '2'", "a: '3'");
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&old_pass)))[0].1,
            Status::Fail
        );
        let old_fail = CM.replace("NS", "x");
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&old_fail)))[0].1,
            Status::Skip
        );
    }

    /// The values' `request.oldObject` is merged over the resource to make the old object.
    #[test]
    fn values_old_object_is_the_old_object() {
        let e = engine(&policy("ClusterPolicy", "All"));
        let new = resource(&CM.replace("NS", "x"));
        let mut values = crate::request::values::Values::default();
        let one = crate::yaml::Node::synthetic(crate::yaml::Value::Str("1".into()));
        values.global.push(("request.oldObject.data.a".into(), one));
        let req = Request {
            values: Arc::new(values),
            ..update_with_old(None)
        };
        assert_eq!(statuses(&e, &new, &req)[0].1, Status::Fail);
    }

    /// validate.cel rules see the old object as `oldObject` and are never exempted.
    #[test]
    fn cel_rules_see_old_object_and_are_not_exempted() {
        let cel = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: c
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      cel:
        expressions:
        - expression: object.data.a == oldObject.data.a && object.data.a == '1'
";
        let e = engine(cel);
        let new = resource(&CM.replace("NS", "x"));
        let same = CM.replace("NS", "x");
        // Both fail (data.a is '2'): still a failure, no exemption for CEL.
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&same)))[0].1,
            Status::Fail
        );
        let new1 = resource(&same.replace("a: '2'", "a: '1'"));
        assert_eq!(
            statuses(&e, &new1, &update_with_old(Some(&same)))[0].1,
            Status::Fail
        );
        assert_eq!(
            statuses(&e, &new1, &update_with_old(None))[0].1,
            Status::Pass
        );
    }

    /// podSecurity rules are exempted too: a privileged pod that was privileged before is
    /// skipped; one that becomes privileged fails.
    #[test]
    fn pod_security_update_skips_pre_existing_violations() {
        let pss = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: baseline
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      podSecurity: {level: baseline, version: latest}
";
        let e = engine(pss);
        let pod = |privileged: bool| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: x}}\nspec:\n  \
                 containers:\n  - name: c\n    image: nginx\n    securityContext: \
                 {{privileged: {privileged}}}\n"
            )
        };
        let new = resource(&pod(true));
        assert_eq!(statuses(&e, &new, &Request::default())[0].1, Status::Fail);
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&pod(true))))[0].1,
            Status::Skip
        );
        assert_eq!(
            statuses(&e, &new, &update_with_old(Some(&pod(false))))[0].1,
            Status::Fail
        );
    }
}
