//! The mutate phase (mutate.md): `patchStrategicMerge`, `patchesJson6902` and `foreach` rules
//! applied to one resource, policy after policy, each rule on the output of the previous one.
//!
//! The library entry point is [`mutate`]; [`edit`] turns a patched tree back into byte-exact
//! text edits of the file it came from.

pub mod anchors;
pub mod compare;
pub mod edit;
mod existing;
mod foreach;
pub(crate) mod json_patch;
pub mod merge;
pub(crate) mod merge_keys;
pub mod render;
pub mod udiff;

#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use crate::policy::{Policy, Rule, RuleBody};
use crate::report::{PolicyResponse, RuleResponse, RuleType, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::yaml::{Node, Value};

use crate::exception::PolicyException;
use crate::pipeline;
use crate::variables::{Context, VarError, has_variables, substitute_cow};

use merge_keys::{ListStrategy, SchemaType};

/// What one policy did to the resource.
#[derive(Clone, Debug)]
pub struct PolicyMutation {
    pub response: PolicyResponse,
    /// The resource as this policy left it (`patchedResources` compares this, mutate.md §10);
    /// `None` from [`mutated`], which keeps only the final resource.
    pub patched: Option<Node>,
}

/// The result of the mutate phase for one resource.
#[derive(Clone, Debug)]
pub struct Mutation {
    /// The resource after every mutate policy.
    pub resource: Resource,
    /// One entry per policy with mutate rules, in load order.
    pub policies: Vec<PolicyMutation>,
}

impl Mutation {
    /// Whether any rule changed the resource.
    pub fn changed(&self) -> bool {
        any_rule_passed(&self.policies)
    }
}

/// Whether a rule of `policies` applied its patch (a mutate rule passes when it did).
pub(crate) fn any_rule_passed(policies: &[PolicyMutation]) -> bool {
    policies
        .iter()
        .flat_map(|p| &p.response.rules)
        .any(|r| r.status == Status::Pass)
}

/// Runs every mutate policy over `resource`, in load order (mutate.md §2). Values-file
/// variables come with the request (`request.values`).
pub fn mutate(resource: &Resource, policies: &[Policy], request: &Request) -> Mutation {
    mutate_with_exceptions(resource, policies, &[], request)
}

/// [`mutate`] with PolicyExceptions: a rule an exception covers is skipped
/// (`rule is skipped due to policy exceptions…`, looked up after preconditions).
pub(crate) fn mutate_with_exceptions(
    resource: &Resource,
    policies: &[Policy],
    exceptions: &[PolicyException],
    request: &Request,
) -> Mutation {
    // `kpol test` compares each policy's output and lists every policy's response.
    let keep = Keep {
        snapshots: true,
        empty_responses: true,
    };
    run(resource, policies, exceptions, request, keep)
}

/// The resource as every mutate policy leaves it, or `None` when they leave it as it is
/// ([`mutate_with_exceptions`] without the responses and the copies they keep): what
/// validate rules see in `kpol check`.
pub fn mutated(
    resource: &Resource,
    policies: &[Policy],
    exceptions: &[PolicyException],
    request: &Request,
) -> Option<Resource> {
    mutated_by(resource, policies, &mutating(policies), exceptions, request)
}

/// A policy with mutate rules (the only ones the mutate phase visits), with what is found
/// once about its rules.
pub(crate) struct Mutating {
    policy: usize,
    /// Per rule, in the policy's order: whether it reads a variable context (`context`
    /// entries, preconditions, `foreach`, or a variable in its body). perf: asked per resource
    /// before, walking the body for `{{`.
    needs_context: Vec<bool>,
    /// The only kinds its mutate rules can select, when each of them names literal kinds
    /// ([`crate::matching::MatchBlock::kinds_only`]); `None` otherwise. perf: a resource of
    /// another kind skips the policy where its empty response is not kept.
    kinds: Option<Vec<String>>,
}

impl Mutating {
    /// Whether some mutate rule of the policy may select a resource of `kind`.
    fn may_select(&self, kind: &str) -> bool {
        self.kinds
            .as_ref()
            .is_none_or(|k| k.iter().any(|k| k == kind))
    }
}

/// The policies with mutate rules, in load order.
pub(crate) fn mutating(policies: &[Policy]) -> Vec<Mutating> {
    policies
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.rules()
                .iter()
                .any(|r| matches!(r.body, RuleBody::Mutate(_)))
        })
        .map(|(i, p)| Mutating {
            policy: i,
            needs_context: p
                .rules()
                .iter()
                .map(|rule| match &rule.body {
                    RuleBody::Mutate(body) => {
                        rule.context.is_some()
                            || rule.preconditions.is_some()
                            || body.get("foreach").is_some()
                            || body.get("targets").is_some()
                            || has_variables(body)
                    }
                    _ => false,
                })
                .collect(),
            kinds: p
                .rules()
                .iter()
                .filter(|r| matches!(r.body, RuleBody::Mutate(_)))
                .try_fold(Vec::new(), |mut all, r| {
                    all.extend(r.match_.kinds_only.as_ref()?.iter().cloned());
                    Some(all)
                }),
        })
        .collect()
}

/// [`mutated`] when the mutating policies are known ([`mutating`], found once by the engine:
/// perf, no scan of every rule of every policy per resource).
pub(crate) fn mutated_by(
    resource: &Resource,
    policies: &[Policy],
    mutating: &[Mutating],
    exceptions: &[PolicyException],
    request: &Request,
) -> Option<Resource> {
    let keep = Keep {
        snapshots: false,
        empty_responses: false,
    };
    let (current, _) = run_policies(resource, policies, mutating, exceptions, request, keep);
    match current {
        Cow::Owned(r) => Some(r),
        Cow::Borrowed(_) => None,
    }
}

/// [`mutated_by`] with the rules that errored (policy position, response), in load order.
/// A rule with `targets` (mutateExisting) is left out: Kyverno applies it to other resources
/// in the background, not to the request.
pub(crate) fn mutated_with_errors(
    resource: &Resource,
    policies: &[Policy],
    mutating: &[Mutating],
    exceptions: &[PolicyException],
    request: &Request,
) -> (Option<Resource>, Vec<(usize, RuleResponse)>) {
    let keep = Keep {
        snapshots: false,
        empty_responses: false,
    };
    let (current, responses) =
        run_policies(resource, policies, mutating, exceptions, request, keep);
    let mut errors = Vec::new();
    for pm in responses {
        let policy = pm.response.policy;
        for r in pm.response.rules {
            if r.status == Status::Error && r.unsupported.as_deref() != Some("mutate targets") {
                errors.push((policy, r));
            }
        }
    }
    let patched = match current {
        Cow::Owned(r) => Some(r),
        Cow::Borrowed(_) => None,
    };
    (patched, errors)
}

fn run(
    resource: &Resource,
    policies: &[Policy],
    exceptions: &[PolicyException],
    request: &Request,
    keep: Keep,
) -> Mutation {
    let mutating = mutating(policies);
    let (current, policies) =
        run_policies(resource, policies, &mutating, exceptions, request, keep);
    Mutation {
        resource: current.into_owned(),
        policies,
    }
}

/// What a caller of [`run_policies`] keeps of the run besides the resource it leaves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keep {
    /// The resource as each policy left it ([`PolicyMutation::patched`]: `kpol test` compares
    /// them, mutate.md §10).
    pub snapshots: bool,
    /// The (empty) responses of the policies none of whose rules can select the resource's
    /// kind; callers that read only changes and rule results leave them out (perf: such a
    /// policy is not visited).
    pub empty_responses: bool,
}

/// Every mutate policy (positions `mutating` of `policies`) over `resource`; the resource is
/// copied only when a rule changes it.
pub(crate) fn run_policies<'r>(
    resource: &'r Resource,
    policies: &[Policy],
    mutating: &[Mutating],
    exceptions: &[PolicyException],
    request: &Request,
    keep: Keep,
) -> (Cow<'r, Resource>, Vec<PolicyMutation>) {
    let mut current = Cow::Borrowed(resource);
    let mut out = Vec::new();
    for m in mutating {
        // The kind as the policies before left it (cascading, §2).
        if !keep.empty_responses && !m.may_select(request.match_kind(&current).kind) {
            continue;
        }
        let (i, policy) = (m.policy, &policies[m.policy]);
        let env = Env {
            policy,
            request,
            exceptions,
        };
        let rules = mutate_policy(&env, &m.needs_context, &mut current);
        out.push(PolicyMutation {
            response: PolicyResponse { policy: i, rules },
            patched: keep.snapshots.then(|| current.root.clone()),
        });
    }
    (current, out)
}

/// What a rule is evaluated with besides the resource.
struct Env<'a> {
    policy: &'a Policy,
    request: &'a Request,
    exceptions: &'a [PolicyException],
}

/// How mutate rules go through the shared rule steps (crate::pipeline): Kyverno's engine
/// handlers (exceptions after preconditions, a context error is the rule's error);
/// `applyRules: One` stops after the first rule that patched the resource.
const MUTATE: pipeline::How<'static> = pipeline::How {
    rule_type: RuleType::Mutation,
    exceptions: pipeline::Exceptions::AfterPreconditions,
    context_error: pipeline::ContextError::Respond,
    preconditions: pipeline::Preconditions::Engine,
    one_stops_at: pipeline::OneStopsAt::Pass,
};

/// `needs_context`: per rule, [`Mutating::needs_context`].
fn mutate_policy(
    env: &Env<'_>,
    needs_context: &[bool],
    current: &mut Cow<'_, Resource>,
) -> Vec<RuleResponse> {
    let policy = env.policy;
    if !policy.in_scope(&current.namespace) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (rule, &needs_context) in policy.rules().iter().zip(needs_context) {
        let RuleBody::Mutate(body) = &rule.body else {
            continue;
        };
        // One evaluation budget for everything the rule builds (variables/budget.rs).
        let _budget = crate::base::budget::Scope::enter();
        // Matched against the resource as previous rules left it (cascading, §2).
        let Some((resps, after)) = apply_rule(env, rule, body, current, needs_context) else {
            continue;
        };
        if let Some(after) = after {
            *current = Cow::Owned(after);
        }
        let stops = MUTATE.stops(policy, resps.iter().map(|r| r.status));
        out.extend(resps);
        if stops {
            break;
        }
    }
    out
}

fn response(rule: &Rule, status: Status, message: String) -> RuleResponse {
    MUTATE.respond(rule, crate::validate::Verdict::new(status, message))
}

fn unsupported(rule: &Rule, feature: &str) -> RuleResponse {
    let mut r = response(
        rule,
        Status::Error,
        format!("unsupported: {feature} (kpol does not evaluate {feature} in mutate rules yet)"),
    );
    r.unsupported = Some(feature.to_owned());
    r
}

fn var_error(rule: &Rule, e: VarError) -> RuleResponse {
    response(
        rule,
        Status::Error,
        format!("variable substitution failed: {}", e.message),
    )
}

/// `mutated Kind/name in namespace ns` (or without the namespace when cluster-scoped).
fn mutated_message(r: &Resource) -> String {
    if r.namespace.is_empty() {
        format!("mutated {}/{}", r.kind, r.name)
    } else {
        format!("mutated {}/{} in namespace {}", r.kind, r.name, r.namespace)
    }
}

/// One rule on the current resource, through the shared rule steps, then its body: its
/// responses (one, or one per target of a mutate-existing rule) and, when it changed
/// something, the resource as it left it; `None` when the rule does not select the resource.
/// The rule's context is built only when it reads one (`needs_context`: preconditions,
/// `foreach`, `context` entries, targets or variables; perf: a plain patch needs no copy of
/// the resource, docs/PERFORMANCE.md); then only an exception's conditions may need one.
fn apply_rule(
    env: &Env<'_>,
    rule: &Rule,
    body: &Node,
    current: &Resource,
    needs_context: bool,
) -> Option<(Vec<RuleResponse>, Option<Resource>)> {
    let targets = body.get("targets");
    let objects = env.request.offline.objects.as_ref();
    let s = pipeline::Subject {
        policy: env.policy,
        rule,
        resource: current,
        request: env.request,
        exceptions: env.exceptions,
    };
    // Without a cluster a mutate-existing rule is unsupported: told once its context is
    // loaded (a context that fails to load is the rule's error first).
    let early = |stage| {
        (stage == pipeline::Stage::ContextLoaded && targets.is_some() && objects.is_none())
            .then(|| pipeline::Early::Respond(unsupported(rule, "mutate targets")))
    };
    let context = || {
        needs_context.then(|| crate::validate::rule_context(env.policy, rule, current, env.request))
    };
    let mut ctx = match pipeline::gate(&s, &MUTATE, false, early, context) {
        pipeline::Gate::Silent => return None,
        pipeline::Gate::Respond(r) => return Some((vec![r], None)),
        pipeline::Gate::Body(ctx) => ctx,
    };
    // A mutate-existing rule patches its targets, never the trigger (`mutateExistingHandler`).
    if let (Some(targets), Some(objects), Some(ctx)) = (targets, objects, ctx.as_mut()) {
        return Some((
            existing::apply(env, rule, body, targets, objects, ctx),
            None,
        ));
    }
    let (r, after) = patch_rule(rule, body, current, &mut ctx);
    Some((vec![r], after))
}

/// The rule's patch (`patchStrategicMerge`, `patchesJson6902` or `foreach`) applied to
/// `current`: its response and, when it changed something, the patched resource.
fn patch_rule(
    rule: &Rule,
    body: &Node,
    current: &Resource,
    ctx: &mut Option<Context<'_>>,
) -> (RuleResponse, Option<Resource>) {
    let result = if let (Some(entries), Some(ctx)) = (body.get("foreach"), ctx.as_mut()) {
        foreach::apply(entries, current, ctx).map(|(doc, foreach)| (Some(doc), foreach))
    } else {
        let patch = body
            .get("patchStrategicMerge")
            .map(|p| (Patch::Strategic, "patchStrategicMerge", p))
            .or_else(|| {
                body.get("patchesJson6902")
                    .map(|p| (Patch::Json, "patchesJson6902", p))
            });
        match patch {
            None => return (unsupported(rule, "this mutate form"), None),
            Some((kind, field, p)) => {
                let p = match ctx {
                    Some(c) => substitute_cow(p, c, &format!("/mutate/{field}")),
                    None => Ok(Cow::Borrowed(p)),
                };
                match p {
                    Err(e) => return (var_error(rule, e), None),
                    Ok(p) => apply_patch(kind, &p, &current.root, current).map(|n| (n, false)),
                }
            }
        }
    };
    match result {
        Err(RuleError::Vars(e)) => (var_error(rule, e), None),
        Err(RuleError::Other(m)) => (response(rule, Status::Error, m), None),
        Err(RuleError::Patch(m)) => (
            response(
                rule,
                Status::Error,
                format!("failed to patch resource: {m}"),
            ),
            None,
        ),
        Ok((Some(patched), _)) if !merge::value_eq(&patched.value, &current.root.value) => {
            let after = current.with_root(patched);
            (
                response(rule, Status::Pass, mutated_message(&after)),
                Some(after),
            )
        }
        Ok((_, foreach)) => {
            let msg = if foreach {
                "0 elements processed"
            } else {
                "no patches applied"
            };
            (response(rule, Status::Skip, msg.to_owned()), None)
        }
    }
}

/// Whether an overlay certainly changes nothing, seen without preprocessing a copy of it: it
/// holds only maps that `doc` has as maps, down to add-if-absent keys that `doc` has. Then
/// preprocessing drops every `+()` key and [`merge::is_noop`] holds; any other form is left
/// to that path. perf: the embedded `add-default-labels` is such an overlay on every workload
/// that has its label, and was copied for each.
fn adds_nothing(overlay: &Node, doc: &Node) -> bool {
    let (Value::Map(om), Value::Map(dm)) = (&overlay.value, &doc.value) else {
        return false;
    };
    om.iter().all(|(k, v)| match anchors::parse_anchor(k) {
        Some((anchors::Anchor::AddIfAbsent, key)) => dm.contains_key(key),
        Some(_) => false,
        None => matches!(v.value, Value::Map(_)) && dm.get(k).is_some_and(|d| adds_nothing(v, d)),
    })
}

/// The two patch forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patch {
    Strategic,
    Json,
}

/// Why a rule failed.
#[derive(Debug)]
pub(crate) enum RuleError {
    Vars(VarError),
    Patch(String),
    /// Any other error, with its full message.
    Other(String),
}

/// Applies one substituted patch to `doc` (the accumulated tree); `res` names the schema.
/// `None`: the patch certainly leaves `doc` as it is (no copy is made).
pub(crate) fn apply_patch(
    kind: Patch,
    patch: &Node,
    doc: &Node,
    res: &Resource,
) -> Result<Option<Node>, RuleError> {
    match kind {
        Patch::Strategic => merge_changes(doc, patch, &res.api_version, &res.kind),
        Patch::Json => {
            let text = patch
                .as_str()
                .ok_or_else(|| RuleError::Patch("patchesJson6902 must be a string".to_owned()))?;
            let ops = json_patch::parse(text).map_err(RuleError::Patch)?;
            let mut out = doc.clone();
            json_patch::apply(&mut out, &ops).map_err(RuleError::Patch)?;
            Ok(Some(out))
        }
    }
}

/// Preprocesses the overlay against `doc` and merges it in (mutate.md §4.1). A failed
/// condition leaves `doc` as it is.
#[cfg(test)]
pub(crate) fn strategic_merge(
    doc: &Node,
    overlay: &Node,
    api_version: &str,
    kind: &str,
) -> Result<Node, RuleError> {
    merge_changes(doc, overlay, api_version, kind).map(|n| n.unwrap_or_else(|| doc.clone()))
}

/// [`strategic_merge`], `None` when the overlay certainly changes nothing: a failed
/// condition, or (once preprocessed) only maps that `doc` already has, such as the map left
/// by an add-if-absent anchor whose key is present (perf: no copy of the resource to compare,
/// docs/PERFORMANCE.md).
fn merge_changes(
    doc: &Node,
    overlay: &Node,
    api_version: &str,
    kind: &str,
) -> Result<Option<Node>, RuleError> {
    if adds_nothing(overlay, doc) {
        return Ok(None);
    }
    let mut overlay = overlay.clone();
    if anchors::preprocess(&mut overlay, doc).is_err() || merge::is_noop(doc, &overlay) {
        return Ok(None);
    }
    let ty = SchemaType::root(api_version, kind);
    match merge::merge(Some(doc), &overlay, ty, ListStrategy::Replace, "") {
        Ok(Some(n)) => Ok(Some(n)),
        Ok(None) => Err(RuleError::Patch(
            "the patch removes the whole resource".into(),
        )),
        Err(e) => Err(RuleError::Patch(e.0)),
    }
}
