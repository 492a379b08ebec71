//! One test resource through `kpol test`'s row of the phase table (`engine::phases`), in the
//! Kyverno CLI's order (match.md §3.1): each phase is handed the resource and request the CLI
//! would, and the responses are kept as the rows compare them. A rule kpol does not evaluate
//! is marked unsupported, so that rows for it never pass by accident; responses on a resource
//! that an unsupported mutation may have changed are marked too.
//!
//! Generate responses carry what each rule generated; the CLI's fake cluster holds the
//! trigger and the rule's `cloneSourceResource` documents, so those are the clone sources.

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::{ResourceRun, Response, RuleOutcome, TestInputs, response};
use crate::engine::overlay::{ContextPhase, Overlay};
use crate::engine::{Engine, phases};
use crate::generate::{RuleGeneration, SourcePool};
use crate::policy::{Policy, RuleBody};
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::resource::Resource;

/// `clusterResources` mode: a resource whose kind the cluster's REST mapper does not know
/// (no built-in kind, no CRD read) stops the test when a policy of a kind the CLI maps each
/// resource for is loaded (MutatingPolicy, ValidatingPolicy not in JSON mode,
/// ValidatingAdmissionPolicy, MutatingAdmissionPolicy, GeneratingPolicy: `processor/
/// policy_processor.go`), with the Kyverno v1.19.0 CLI's words.
fn unmapped_kind(engine: &Engine, inputs: &TestInputs, resource: &Resource) -> Option<String> {
    use crate::policy::PolicyKind as K;
    let cluster = inputs.offline.cluster.as_ref()?;
    let maps = engine.policies().iter().any(|p| match p.kind {
        K::MutatingPolicy
        | K::NamespacedMutatingPolicy
        | K::ValidatingAdmissionPolicy
        | K::MutatingAdmissionPolicy
        | K::GeneratingPolicy
        | K::NamespacedGeneratingPolicy => true,
        K::ValidatingPolicy | K::NamespacedValidatingPolicy => {
            crate::vpol::cel_policy(p).is_some_and(|c| !c.json_mode)
        }
        _ => false,
    });
    if !maps {
        return None;
    }
    let e = cluster
        .rest_mapping(&resource.api_version, &resource.kind)
        .err()?;
    let (group, version) = resource.group_version();
    Some(format!(
        "failed to apply policies on resource {} (failed to map gvk to gvr {group}/{version}, Kind={}: {e})",
        resource.name, resource.kind
    ))
}

/// `clusterResources` mode: a namespaced resource (its namespace defaulted to `default` as
/// the CLI loads it) whose Namespace the cluster does not hold stops the test before any
/// policy runs, whatever the policies' kinds, unless the values file's `namespaceSelector`
/// gives that namespace labels (`processor/policy_processor.go` reads the Namespace then),
/// with the Kyverno v1.19.0 CLI's words.
fn missing_namespace(inputs: &TestInputs, resource: &Resource) -> Option<String> {
    let cluster = inputs.offline.cluster.as_ref()?;
    let ns = resource.namespace.as_str();
    if ns.is_empty() || resource.kind == "Namespace" {
        return None;
    }
    if inputs
        .values
        .namespace_labels
        .get(ns)
        .is_some_and(|l| !l.is_empty())
    {
        return None;
    }
    if cluster.namespace(ns).is_some() {
        return None;
    }
    Some(format!(
        "failed to apply policies on resource {} (failed to get the resource's namespace \
         (namespaces \"{ns}\" not found))",
        resource.name
    ))
}

/// The responses for one test resource, through every phase of `kpol test`'s row; `forced`
/// overrides the values' operations (§7.2). `Err` stops the test.
pub(super) fn run_resource(
    engine: &Engine,
    inputs: &TestInputs,
    resource: &Resource,
    forced: Option<Operation>,
) -> Result<ResourceRun, String> {
    let original = resource;
    let first = resource;
    let policies = engine.policies();
    if let Some(e) = missing_namespace(inputs, resource) {
        return Err(e);
    }
    if let Some(e) = unmapped_kind(engine, inputs, resource) {
        return Err(e);
    }
    if let Some(e) = policies
        .iter()
        .filter_map(crate::vpol::cel_policy)
        .find_map(|c| c.compile_stop(&resource.name))
    {
        return Err(e);
    }
    let mut ops = Vec::with_capacity(policies.len());
    for p in policies {
        ops.push(match forced {
            Some(op) => op,
            None => inputs.values.operation(&p.name, &resource.name)?,
        });
    }
    // Values that override the resource (crate::engine::overlay): a run for a declared operation
    // starts from the resource as the default run left it.
    let failed = |e: String| {
        format!(
            "failed to apply policies on resource {} ({e})",
            resource.name
        )
    };
    let overlay = Overlay::new(&inputs.values, policies, &resource.name, &ops).map_err(failed)?;
    let settled = match forced {
        Some(_) => {
            let mut first = Vec::with_capacity(policies.len());
            for p in policies {
                first.push(inputs.values.operation(&p.name, &resource.name)?);
            }
            Overlay::new(&inputs.values, policies, &resource.name, &first)
                .map_err(failed)?
                .map(|o| default_run_left(engine, inputs, &o, resource, &first))
        }
        None => None,
    };
    let resource = settled.as_ref().unwrap_or(resource);
    let request_for = |op: Operation| request_with(inputs, overlay.as_ref(), op);
    let mut responses = Vec::new();
    // What a phase of `kpol test`'s row leaves for the phases after it: the resource as the
    // classic mutate rules left it (`classic`: the CEL mutating kinds' `seen`, the classic
    // validate rules' view), the live resource the CEL mutating kinds change (`live`), whether
    // a classic mutation kpol did not evaluate came first (`mutated`), and with overriding
    // values the classic policies' contexts (`chain`).
    let mut classic: Cow<'_, Resource> = Cow::Borrowed(resource);
    let mut live: Cow<'_, Resource> = Cow::Borrowed(resource);
    let mut mutated = false;
    let mut chain: Option<Chain> = None;
    let mut overlay_mutated = false;
    // With overriding values: the objects upstream's contexts merged values into
    // (`mutate_chain`), and per mutate response (its position in `responses`) the object
    // it holds as its patched resource.
    let mut objects: Option<Objects> = None;
    let mut mutate_objects: Vec<(usize, usize)> = Vec::new();
    // verifyImages rules (the engine's verify-images phase, crate::verify_images): the
    // verify-images phase's response there, the validate phase's with the other validate
    // responses.
    let mut image_checks: Vec<(usize, Vec<RuleOutcome>)> = Vec::new();
    for phase in phases::of(phases::Command::Test) {
        match phase {
            phases::Phase::MutateRules => {
                // With overriding values (and no DELETE, whose empty object upstream hands
                // on is not modelled): each mutate policy's context, in order (`Objects`).
                if let Some(o) = overlay.as_ref().filter(|_| !deletes_mutate(policies, &ops)) {
                    let (objs, pms) = mutate_chain(engine, o, resource, &ops, &request_for);
                    for (pm, at) in &pms {
                        let Some(p) = policies.get(pm.response.policy) else {
                            continue;
                        };
                        let rules = mutate_outcomes(inputs, p, pm, resource, false, None);
                        mutated |= rules.iter().any(|o| o.unsupported.is_some());
                        mutate_objects.push((responses.len(), *at));
                        responses.push(response(p, rules));
                    }
                    let mut objs = objs;
                    let (c, after) = Chain::new(o, policies, objs.live_mut());
                    chain = Some(c);
                    objects = Some(objs);
                    classic = Cow::Owned(after);
                    live = classic.clone();
                    continue;
                }
                let mutate_op = policies
                    .iter()
                    .zip(&ops)
                    .find(|(p, _)| {
                        p.rules()
                            .iter()
                            .any(|r| matches!(r.body, RuleBody::Mutate(_)))
                    })
                    .map_or(Operation::Create, |(_, op)| *op);
                let mutation = engine.mutate(resource, &request_for(mutate_op));
                for pm in &mutation.policies {
                    let Some(p) = policies.get(pm.response.policy) else {
                        continue;
                    };
                    let rules =
                        mutate_outcomes(inputs, p, pm, resource, false, pm.patched.as_ref());
                    mutated |= rules.iter().any(|o| o.unsupported.is_some());
                    responses.push(response(p, rules));
                }
                overlay_mutated = overlay.as_ref().is_some_and(|o| {
                    mutation.resource.root != resource.root
                        || (0..policies.len())
                            .any(|i| o.touches(i) && ContextPhase::Mutate.builds(&policies[i]))
                });
                // With overriding values: the resource each classic policy's context sees in
                // the verify-images and validate phases, and the live resource after them, on
                // which the CEL mutating kinds run.
                let after = match overlay.as_ref() {
                    Some(o) => {
                        let mut start = mutation.resource;
                        let (c, after) = Chain::new(o, policies, &mut start);
                        chain = Some(c);
                        after
                    }
                    None => mutation.resource,
                };
                classic = Cow::Owned(after);
                live = classic.clone();
            }
            // MutatingAdmissionPolicies (each response with the resource after it), then
            // MutatingPolicies, each in load order, on the output of the classic mutate rules
            // (cel.md §6.4).
            phases::Phase::MutatingAdmissionPolicies => {
                for (i, p) in policies.iter().enumerate() {
                    let Some(pm) = engine.mutating_admission_policy(i, &live, &request_for(ops[i]))
                    else {
                        continue;
                    };
                    if let Some(root) = &pm.patched {
                        live = Cow::Owned(live.with_root(root.clone()));
                    }
                    let rules =
                        mutate_outcomes(inputs, p, &pm, &classic, mutated, pm.patched.as_ref());
                    responses.push(response(p, rules));
                }
            }
            phases::Phase::MutatingPolicies => {
                let first_mpol = responses.len();
                for (i, p) in policies.iter().enumerate() {
                    let request = request_for(ops[i]);
                    let Some(pm) = engine.mutating_policy(i, &live, &request) else {
                        continue;
                    };
                    if let Some(root) = &pm.patched {
                        live = Cow::Owned(live.with_root(root.clone()));
                    }
                    // Set below to the resource after every MutatingPolicy.
                    let rules = mutate_outcomes(inputs, p, &pm, &classic, mutated, None);
                    responses.push(response(p, rules));
                }
                // Each MutatingPolicy response carries the resource after all of them, as the
                // CLI's do.
                for r in &mut responses[first_mpol..] {
                    for o in &mut r.rules {
                        o.patched = Some(live.root.clone());
                    }
                }
                responses.extend(mpol_targets(engine, inputs, &live, &ops, &request_for)?);
            }
            // Not in `kpol test`'s row (the CLI runs the two CEL mutating kinds as two
            // phases, above; src/engine/phases.rs tests the row).
            phases::Phase::CelMutations => {}
            phases::Phase::VerifyImages => {
                // Each classic policy's rules see the resource as its verify-images context
                // left it (with overriding values), else the live resource.
                let live: &Resource = &live;
                let view = |i: usize| {
                    let seen = chain
                        .as_ref()
                        .and_then(|c| c.verify.get(i)?.as_ref())
                        .map_or(live, |(r, _)| r);
                    (seen, request_for(ops[i]))
                };
                for pi in engine.verify_images(view) {
                    let Some(p) = policies.get(pi.policy) else {
                        continue;
                    };
                    let rules = pi.verify.into_iter().map(RuleOutcome::from).collect();
                    responses.push(response(p, rules));
                    if !pi.validate.is_empty() {
                        let checks = pi.validate.into_iter().map(RuleOutcome::from).collect();
                        image_checks.push((pi.policy, checks));
                    }
                }
            }
            phases::Phase::Validate => {
                let resource: &Resource = &live;
                let classic: &Resource = &classic;
                // One engine run per distinct operation, each policy's response taken from the
                // run with its own operation. The CLI validates classic rules before the
                // MutatingPolicies run and CEL kinds after: when those changed the resource,
                // classic responses come from a run on the resource before them.
                let distinct: BTreeSet<usize> = ops.iter().map(|o| *o as usize).collect();
                let mpol_changed = resource.root != classic.root;
                let mut validate: Vec<(usize, Vec<RuleOutcome>)> = Vec::new();
                for op in distinct {
                    let Some(&operation) = ops.iter().find(|o| **o as usize == op) else {
                        continue;
                    };
                    // Which resource each run validates (with the old object of an UPDATE whose
                    // values override it), and whether it keeps CEL-kind responses (`None`: all
                    // responses) or only those of some classic policies.
                    let is_cel =
                        |i: usize| matches!(policies[i].body, crate::policy::PolicyBody::Cel(_));
                    let passes: Vec<(&Resource, Option<&Resource>, Keep)> = match &chain {
                        Some(c) => {
                            let mut passes: Vec<(&Resource, Option<&Resource>, Keep)> = Vec::new();
                            for (i, view) in c.validate.iter().enumerate() {
                                let Some((r, old)) = view else { continue };
                                match passes.iter_mut().find(|(pr, po, _)| {
                                    pr.root == r.root
                                        && po.map(|o| &o.root) == old.as_ref().map(|o| &o.root)
                                }) {
                                    Some((_, _, Keep::Only(list))) => list.push(i),
                                    _ => passes.push((r, old.as_ref(), Keep::Only(vec![i]))),
                                }
                            }
                            passes.push((resource, None, Keep::Cel(true)));
                            passes
                        }
                        None if mpol_changed => vec![
                            (classic, None, Keep::Cel(false)),
                            (resource, None, Keep::Cel(true)),
                        ],
                        None => vec![(resource, None, Keep::All)],
                    };
                    for (validated, old, keep) in passes {
                        let mut request = request_for(operation);
                        if let Some(old) = old {
                            request.old_object = Some(std::sync::Arc::new(old.clone()));
                        }
                        for pr in engine.validate(validated, &request) {
                            if ops.get(pr.policy) != Some(&operation) {
                                continue;
                            }
                            let Some(policy) = policies.get(pr.policy) else {
                                continue;
                            };
                            let kept = match &keep {
                                Keep::All => true,
                                Keep::Cel(k) => *k == is_cel(pr.policy),
                                Keep::Only(list) => list.contains(&pr.policy),
                            };
                            if !kept {
                                continue;
                            }
                            let rules = pr
                                .rules
                                .into_iter()
                                .map(|r| {
                                    let mut o = RuleOutcome {
                                        patched: Some(validated.root.clone()),
                                        ..RuleOutcome::from(r)
                                    };
                                    if o.unsupported.is_none() {
                                        o.unsupported =
                                            taint(inputs, policy, validated, &o.rule, mutated);
                                    }
                                    o
                                })
                                .collect();
                            validate.push((pr.policy, rules));
                        }
                    }
                }
                validate.extend(std::mem::take(&mut image_checks));
                validate.sort_by_key(|(i, _)| *i);
                for (i, rules) in validate {
                    if let Some(p) = policies.get(i) {
                        responses.push(response(p, rules));
                    }
                }
            }
            phases::Phase::Generate => {
                let resource: &Resource = &live;
                // A policy gives a response only when some rule did (`IsEmpty`).
                let pool = SourcePool {
                    common: vec![resource],
                    per_rule: inputs
                        .clone_sources
                        .iter()
                        .map(|(p, r, res)| (p.clone(), r.clone(), res))
                        .collect(),
                    // The engine's client holds every test resource (exceptions read Namespaces
                    // there).
                    namespaces: inputs
                        .resources
                        .iter()
                        .filter(|r| r.kind == "Namespace")
                        .collect(),
                };
                let mut with_values = resource.clone();
                for (i, p) in policies.iter().enumerate() {
                    let mut request = request_for(ops[i]);
                    let mut resource = resource;
                    if let Some(o) = overlay
                        .as_ref()
                        .filter(|_| ContextPhase::Generate.builds(p))
                    {
                        if let Some(old) = o.apply(i, &mut with_values) {
                            request.old_object = Some(std::sync::Arc::new(old));
                        }
                        resource = &with_values;
                    }
                    let Some(response_g) = engine.generate_policy(i, resource, &request, &pool)
                    else {
                        continue;
                    };
                    // One rule failing to generate makes the CLI drop what the policy's rules
                    // generated.
                    let failed = response_g.rules.iter().any(RuleGeneration::failed);
                    let rules: Vec<RuleOutcome> = response_g
                        .rules
                        .into_iter()
                        .map(|g| RuleOutcome {
                            unsupported: taint(inputs, p, resource, &g.rule, mutated),
                            message: generation_message(&g),
                            rule: g.rule,
                            status: g.status,
                            patched: None,
                            target: None,
                            generated: Some(if failed {
                                Vec::new()
                            } else {
                                g.generated
                                    .into_iter()
                                    .map(|r| (r.name, r.resource))
                                    .collect()
                            }),
                        })
                        .collect();
                    if !rules.is_empty() {
                        responses.push(response(p, rules));
                    }
                }
                // The generate contexts merged into the live object too (when the CEL
                // mutating kinds left it as it was).
                if let Some(objs) = objects.as_mut()
                    && live.root == classic.root
                {
                    *objs.live_mut() = with_values;
                }
            }
            phases::Phase::Delete => {
                // DeletingPolicies, last and only in the default run: they are not
                // admission-driven (`test.go` `evalResource`); they see the resource as the test
                // gives it.
                let settled_all = match (&overlay, &objects) {
                    // A mutate rule's copy took the values after it: the resource keeps
                    // what was merged into it before.
                    (Some(_), Some(objs)) if !objs.copies.is_empty() => Some(objs.original.clone()),
                    (Some(o), _) => Some(o.settled(policies, original)),
                    (None, _) => None,
                };
                let original = settled_all.as_ref().unwrap_or(original);
                if forced.is_none() {
                    for (i, p) in policies.iter().enumerate() {
                        let request = request_for(ops[i]);
                        let Some(r) = engine.deletion(i, original, &request) else {
                            continue;
                        };
                        let rules = vec![RuleOutcome::from(r)];
                        responses.push(response(p, rules));
                    }
                }
            }
        }
    }
    // Each mutate response holds its object as every later context left it.
    if let Some(objs) = &objects {
        for (k, at) in &mutate_objects {
            let root = &objs.get(*at).root;
            for o in responses
                .get_mut(*k)
                .into_iter()
                .flat_map(|r| r.rules.iter_mut())
            {
                o.patched = Some(root.clone());
            }
        }
    }
    if overlay_mutated {
        // Overriding values with a mutate policy run as a DELETE (`deletes_mutate`): what
        // later contexts see upstream (an empty object) is not modelled.
        for o in responses.iter_mut().flat_map(|r| r.rules.iter_mut()) {
            o.unsupported.get_or_insert_with(|| {
                "values-file variables (request.object and mutate rules)".to_owned()
            });
        }
    }
    // Keyed by the resource as the test gives it (upstream's key is made before the run).
    let key = if chain.is_some() { first } else { &live };
    Ok(ResourceRun {
        api_version: key.api_version.clone(),
        kind: key.kind.clone(),
        namespace: key.namespace.clone(),
        name: key.name.clone(),
        responses,
    })
}

/// The request of an `op` run: its rule contexts receive the values without the keys the
/// overlay (if any) merged into the resource.
fn request_with(inputs: &TestInputs, overlay: Option<&Overlay>, op: Operation) -> Request {
    Request {
        operation: op,
        namespace_labels: inputs.values.namespace_labels.clone(),
        user_info: inputs.user_info.clone(),
        values: overlay
            .and_then(|o| o.values(op))
            .unwrap_or_else(|| inputs.values.clone()),
        namespaces: Default::default(),
        old_object: None,
        offline: inputs.offline.clone(),
        params: inputs.params.clone(),
    }
}

/// Whether a policy with mutate rules runs as a DELETE: upstream then hands the empty
/// object on to the contexts after it, which kpol does not model with overriding values.
fn deletes_mutate(policies: &[Policy], ops: &[Operation]) -> bool {
    policies
        .iter()
        .zip(ops)
        .any(|(p, op)| *op == Operation::Delete && ContextPhase::Mutate.builds(p))
}

/// The objects upstream's policy contexts merge values into (crate::engine::overlay): the test's
/// resource, then each copy a mutate rule patched. Contexts are built on the last one; the
/// ones before keep what was merged into them until then.
struct Objects {
    original: Resource,
    copies: Vec<Resource>,
}

impl Objects {
    fn live_mut(&mut self) -> &mut Resource {
        self.copies.last_mut().unwrap_or(&mut self.original)
    }

    /// Object `at`: 0 the resource, `k` the `k`-th copy.
    fn get(&self, at: usize) -> &Resource {
        at.checked_sub(1)
            .and_then(|k| self.copies.get(k))
            .unwrap_or(&self.original)
    }
}

/// The classic mutate phase with overriding values, as upstream builds its contexts: per
/// policy with mutate rules, in load order, its values merge into the live object, the policy
/// mutates that (with the UPDATE's old object its `request.oldObject` values give), and a
/// rule that patched it makes the patched copy the live object. Each response comes with the
/// object it holds as its patched resource.
fn mutate_chain(
    engine: &Engine,
    o: &Overlay,
    start: &Resource,
    ops: &[Operation],
    request_for: &dyn Fn(Operation) -> Request,
) -> (Objects, Vec<(crate::mutate::PolicyMutation, usize)>) {
    let mut objs = Objects {
        original: start.clone(),
        copies: Vec::new(),
    };
    let mut out = Vec::new();
    for (i, p) in engine.policies().iter().enumerate() {
        if !ContextPhase::Mutate.builds(p) {
            continue;
        }
        let old = o.apply(i, objs.live_mut());
        let mut request = request_for(ops.get(i).copied().unwrap_or_default());
        if let Some(old) = old {
            request.old_object = Some(std::sync::Arc::new(old));
        }
        let live = objs.get(objs.copies.len());
        let m = engine.mutate_policy(i, live, &request);
        if m.resource.root != live.root {
            objs.copies.push(m.resource);
        }
        let at = objs.copies.len();
        for mut pm in m.policies {
            pm.patched = None;
            out.push((pm, at));
        }
    }
    (objs, out)
}

/// The resource as the default run (operations `ops`) leaves it for the runs of declared
/// operations: every context of the run merged into it, or, when a mutate rule patched a
/// copy, only those built before.
fn default_run_left(
    engine: &Engine,
    inputs: &TestInputs,
    o: &Overlay,
    resource: &Resource,
    ops: &[Operation],
) -> Resource {
    let policies = engine.policies();
    if !deletes_mutate(policies, ops) && policies.iter().any(|p| ContextPhase::Mutate.builds(p)) {
        let request_for = |op: Operation| request_with(inputs, Some(o), op);
        let (objs, _) = mutate_chain(engine, o, resource, ops, &request_for);
        if !objs.copies.is_empty() {
            return objs.original;
        }
    }
    o.settled(policies, resource)
}

/// Which responses of a validate pass are kept.
enum Keep {
    All,
    /// Those of the CEL kinds (`true`) or of the classic policies (`false`).
    Cel(bool),
    /// Those of these policies.
    Only(Vec<usize>),
}

/// The classic policies' views of a resource whose values override it (crate::engine::overlay),
/// in upstream's order of contexts: the mutate phase's policies, then the verify-images and
/// the validate phases' (each context merging its policy's values into the live resource).
struct Chain {
    /// Per policy: the resource (and an UPDATE's old object) its verify-images context sees.
    verify: Vec<Option<(Resource, Option<Resource>)>>,
    validate: Vec<Option<(Resource, Option<Resource>)>>,
}

impl Chain {
    /// The views, and the live resource after the validate phase's contexts (`live`, which
    /// the mutate phase's contexts merged into already, is left so too).
    fn new(o: &Overlay, policies: &[Policy], live: &mut Resource) -> (Self, Resource) {
        let views = |phase: ContextPhase, live: &mut Resource| {
            policies
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    phase.builds(p).then(|| {
                        let old = o.apply(i, live);
                        (live.clone(), old)
                    })
                })
                .collect::<Vec<_>>()
        };
        let verify = views(ContextPhase::VerifyImages, live);
        let validate = views(ContextPhase::Validate, live);
        (Self { verify, validate }, live.clone())
    }
}

/// MutatingPolicies with `evaluation.mutateExisting.enabled` on the test's
/// `targetResources` (`policy_processor.go`, after the trigger's MutatingPolicies): per
/// target, each such policy in load order that selects it (src/mpol `selects_target`), on
/// the target as the one before left it, with the trigger's request. Each response is about
/// the trigger (its rows compare an empty resource) and carries the patched target on a pass.
/// CEL calls see the targets too (the CLI adds them to its fake context provider).
fn mpol_targets(
    engine: &Engine,
    inputs: &TestInputs,
    trigger: &Resource,
    ops: &[Operation],
    request_for: &dyn Fn(Operation) -> Request,
) -> Result<Vec<Response>, String> {
    let policies = engine.policies();
    let existing: Vec<usize> = (0..policies.len())
        .filter(|&i| crate::mpol::mutates_existing(&policies[i]))
        .collect();
    if inputs.targets.is_empty() || existing.is_empty() {
        return Ok(Vec::new());
    }
    crate::cel::context::with_context(inputs.target_cel_context.clone(), || {
        let mut out = Vec::new();
        for target in &inputs.targets {
            let mut current = target.clone();
            for &i in &existing {
                let p = &policies[i];
                let request = request_for(ops[i]);
                if !crate::mpol::selects_target(p, &current, trigger, &request)
                    .map_err(|e| format!("failed to discover CEL targets: {e}"))?
                {
                    continue;
                }
                let Some(pm) = engine.mutate_target(i, &current, trigger, &request) else {
                    continue;
                };
                let empty =
                    crate::yaml::Node::synthetic(crate::yaml::Value::Map(Default::default()));
                let rules: Vec<RuleOutcome> = pm
                    .response
                    .rules
                    .iter()
                    .map(|r| RuleOutcome {
                        patched: Some(empty.clone()),
                        target: match (&pm.patched, r.status) {
                            (Some(root), Status::Pass) => Some(root.clone()),
                            _ => None,
                        },
                        ..RuleOutcome::from_ref(r)
                    })
                    .collect();
                if let Some(root) = &pm.patched {
                    current = current.with_root(root.clone());
                }
                if !rules.is_empty() {
                    out.push(response(p, rules));
                }
            }
        }
        Ok(out)
    })
}

/// The rule message, with what kept generation from completing (the CLI logs it and keeps
/// the rule's status: a missing clone source leaves a pass with nothing generated).
fn generation_message(g: &RuleGeneration) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !g.message.is_empty() {
        parts.push(g.message.clone());
    }
    for m in &g.missing {
        parts.push(format!(
            "clone source not provided: {} (add it with cloneSourceResource)",
            m.what
        ));
    }
    parts.extend(g.problems.iter().cloned());
    parts.join("; ")
}

/// The rows' view of one mutate-phase policy response (classic rules, a MAP or a
/// MutatingPolicy). Exceptions and values kpol does not apply, or a classic mutation it did not
/// evaluate before the policy saw `seen` (`mutated`), leave the row undecided.
fn mutate_outcomes(
    inputs: &TestInputs,
    policy: &Policy,
    pm: &crate::mutate::PolicyMutation,
    seen: &Resource,
    mutated: bool,
    patched: Option<&crate::yaml::Node>,
) -> Vec<RuleOutcome> {
    pm.response
        .rules
        .iter()
        .map(|r| {
            let mut o = RuleOutcome {
                patched: patched.cloned(),
                target: r.target.as_deref().cloned(),
                ..RuleOutcome::from_ref(r)
            };
            if o.unsupported.is_none() {
                o.unsupported = taint(inputs, policy, seen, &r.rule, mutated);
            }
            o
        })
        .collect()
}

/// Why a validate result kpol computed may still differ from Kyverno's: the resource was
/// mutated first, or values feed variables kpol does not substitute.
fn taint(
    inputs: &TestInputs,
    policy: &Policy,
    resource: &Resource,
    rule: &str,
    mutated: bool,
) -> Option<String> {
    if mutated {
        return Some("mutate (resource mutated before validation)".to_owned());
    }
    // Values are injected into rule contexts. What kpol does not do yet: global or
    // per-resource values that override the resource itself (`request.object.*`, which
    // Kyverno applies before matching), and `foreachValues` lists it cannot read. Rule
    // values only reach the rule's context, which kpol does.
    let foreach_values = inputs
        .values
        .variable_keys(&policy.name, &resource.name, rule)
        .contains(&"foreachValues");
    if foreach_values {
        return Some("values-file variables".to_owned());
    }
    None
}
