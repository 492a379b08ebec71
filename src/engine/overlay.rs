//! Values that override the resource itself: global or per-resource `request.object…` and
//! `request.oldObject…` keys, as the Kyverno v1.19 CLI applies them
//! (`processor/policy_processor.go` `makePolicyContext`, `pkg/engine/context` `AddVariable`).
//!
//! Upstream, each classic policy's context is built from the resource, the policy's values
//! are merged into the JSON context key by key (a key split as [`split_key`] splits it, maps
//! merged into maps), and the resource the policy matches and validates is read back from
//! `request.object` (`request.oldObject` for a DELETE). The JSON context holds the test's
//! resource object itself, not a copy, so a `request.object` value changes that object in
//! place: every context built after it — later policies, later phases, the runs of other
//! operations, the DeletingPolicies — sees it too (checked with the v1.19.0 binary). An
//! UPDATE's `oldObject` is a copy made before the values, so `request.oldObject` values
//! change only that policy's old object.
//!
//! [`Overlay`] models this: the *live* resource accumulates, in the order upstream builds the
//! contexts, what each policy's values merge into it. The keys are then left out of the
//! values the rule contexts receive (they are in the resource already).

use std::sync::Arc;

use crate::jmespath::value;
use crate::policy::{Policy, RuleBody};
use crate::request::Operation;
use crate::request::values::{KeyValues, Values, merge_into, split_key};
use crate::resource::Resource;
use crate::yaml::Node;

/// What each policy's values change in the resource, for one resource.
pub(crate) struct Overlay {
    /// Per policy (engine order): the trees its values merge into `request.object` and into
    /// `request.oldObject`, in order. Empty for a policy without a context (the CEL kinds).
    object: Vec<Vec<Node>>,
    old: Vec<Vec<Node>>,
    /// The values with the keys applied here left out, per operation.
    stripped: Vec<(Operation, Arc<Values>)>,
}

/// The classic phases in which upstream builds a policy context, in their order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ContextPhase {
    Mutate,
    VerifyImages,
    Validate,
    Generate,
}

impl ContextPhase {
    /// Whether `policy` builds a context in this phase (`HasMutate`, `HasVerifyImages`,
    /// `policyHasValidateOrVerifyImageChecks`, `HasGenerate`).
    pub(crate) fn builds(self, policy: &Policy) -> bool {
        policy.rules().iter().any(|r| match self {
            ContextPhase::Mutate => matches!(r.body, RuleBody::Mutate(_)),
            ContextPhase::VerifyImages => matches!(r.body, RuleBody::VerifyImages(_)),
            ContextPhase::Validate => {
                matches!(r.body, RuleBody::Validate(_) | RuleBody::VerifyImages(_))
            }
            ContextPhase::Generate => matches!(r.body, RuleBody::Generate(_)),
        })
    }
}

pub(crate) const PHASES: [ContextPhase; 4] = [
    ContextPhase::Mutate,
    ContextPhase::VerifyImages,
    ContextPhase::Validate,
    ContextPhase::Generate,
];

/// The part of one value (`fields` as split) that lands under `request.<at>`.
fn part_at(fields: &[String], v: &Node, at: &str) -> Option<Node> {
    match fields {
        [r] if r == "request" => v.get(at).cloned(),
        [r, o, rest @ ..] if r == "request" && o == at => {
            let mut node = v.clone();
            for f in rest.iter().rev() {
                node = value::map(vec![(f.clone(), node)]);
            }
            Some(node)
        }
        _ => None,
    }
}

/// `kv` without what lands under `request.<at>`: such keys dropped, and `at` taken out of a
/// `request` map value.
fn strip(kv: &KeyValues, at: &str) -> KeyValues {
    let mut out = Vec::with_capacity(kv.len());
    for (k, v) in kv {
        match split_key(k).as_deref() {
            Ok([r]) if r == "request" && v.get(at).is_some() => {
                let mut v = v.clone();
                if let crate::yaml::Value::Map(m) = &mut v.value {
                    m.remove(at);
                }
                out.push((k.clone(), v));
            }
            Ok([r, o, ..]) if r == "request" && o == at => {}
            _ => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The global values' trees that land on the request's object for an `op` request
/// (`request.object…`; for a DELETE, whose object is the old one, `request.oldObject…`): what
/// `kpol check` merges into every resource, as `kyverno apply --values-file` does. A key Go's
/// csv reader refuses, or a part that is not an object, is the error upstream's context
/// gives.
pub fn global_object_parts(values: &Values, op: Operation) -> Result<Vec<Node>, String> {
    let at = match op {
        Operation::Delete => "oldObject",
        _ => "object",
    };
    let mut out = Vec::new();
    for (k, v) in &values.global {
        let fields =
            split_key(k).map_err(|e| format!("failed to add variable to context {k} ({e})"))?;
        let v = value::json_round_trip(v);
        if let Some(part) = part_at(&fields, &v, at) {
            if part.as_map().is_none() {
                return Err("the object retrieved from the json context is not valid".to_owned());
            }
            out.push(part);
        }
    }
    Ok(out)
}

impl Overlay {
    /// The overlay of `resource` (by its name), `None` when no policy's values change it.
    /// A key Go's csv reader refuses, in the values of a policy that builds a context, is the
    /// error upstream's context gives (it aborts the test).
    pub(crate) fn new(
        values: &Values,
        policies: &[Policy],
        resource: &str,
        ops: &[Operation],
    ) -> Result<Option<Self>, String> {
        let mut object = Vec::with_capacity(policies.len());
        let mut old = Vec::with_capacity(policies.len());
        let mut any = false;
        for (i, p) in policies.iter().enumerate() {
            let (mut o, mut d) = (Vec::new(), Vec::new());
            if PHASES.iter().any(|ph| ph.builds(p)) {
                let op = ops.get(i).copied().unwrap_or(Operation::Create);
                for (k, v) in values.for_resource(&p.name, resource) {
                    let fields = split_key(k)
                        .map_err(|e| format!("failed to add variable to context {k} ({e})"))?;
                    let v = value::json_round_trip(v);
                    let (into_object, into_old) = match op {
                        Operation::Delete => (None, part_at(&fields, &v, "oldObject")),
                        Operation::Update => (
                            part_at(&fields, &v, "object"),
                            part_at(&fields, &v, "oldObject"),
                        ),
                        _ => (part_at(&fields, &v, "object"), None),
                    };
                    for part in [&into_object, &into_old].into_iter().flatten() {
                        if part.as_map().is_none() {
                            return Err("the object retrieved from the json context is not valid"
                                .to_owned());
                        }
                    }
                    // A DELETE's old object is the test's resource: its values change it in
                    // place, as a CREATE's or UPDATE's `request.object` values do.
                    match op {
                        Operation::Delete => o.extend(into_old),
                        _ => {
                            o.extend(into_object);
                            d.extend(into_old);
                        }
                    }
                }
            }
            any |= !o.is_empty() || !d.is_empty();
            object.push(o);
            old.push(d);
        }
        if !any {
            return Ok(None);
        }
        let mut stripped = Vec::new();
        for op in [
            Operation::Create,
            Operation::Update,
            Operation::Delete,
            Operation::Connect,
        ] {
            let at: &[&str] = match op {
                Operation::Create | Operation::Connect => &["object"],
                Operation::Update => &["object", "oldObject"],
                Operation::Delete => &["oldObject"],
            };
            let mut v = values.clone();
            let drop = |kv: &KeyValues| at.iter().fold(kv.clone(), |kv, a| strip(&kv, a));
            v.global = drop(&v.global);
            for p in &mut v.policies {
                for (name, kv) in &mut p.resources {
                    if name == resource {
                        *kv = drop(kv);
                    }
                }
            }
            stripped.push((op, Arc::new(v)));
        }
        Ok(Some(Self {
            object,
            old,
            stripped,
        }))
    }

    /// The values the rule contexts of an `op` request receive.
    pub(crate) fn values(&self, op: Operation) -> Option<Arc<Values>> {
        self.stripped
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, v)| v.clone())
    }

    /// Whether policy `i`'s values change the resource or its old object.
    pub(crate) fn touches(&self, i: usize) -> bool {
        self.object.get(i).is_some_and(|o| !o.is_empty())
            || self.old.get(i).is_some_and(|o| !o.is_empty())
    }

    /// Merges policy `i`'s values into the live resource; for an UPDATE with
    /// `request.oldObject` values, the old object (the live resource before them, with them).
    pub(crate) fn apply(&self, i: usize, live: &mut Resource) -> Option<Resource> {
        let before = self
            .old
            .get(i)
            .filter(|d| !d.is_empty())
            .map(|_| live.clone());
        if let Some(parts) = self.object.get(i).filter(|o| !o.is_empty()) {
            let mut root = live.root.clone();
            for p in parts {
                merge_into(&mut root, p.clone());
            }
            *live = live.with_root(root);
        }
        let before = before?;
        let mut root = before.root.clone();
        for p in self.old.get(i).into_iter().flatten() {
            merge_into(&mut root, p.clone());
        }
        Some(before.with_root(root))
    }

    /// The live resource after every context of a run was built once (the state a later run
    /// of the same resource starts from).
    pub(crate) fn settled(&self, policies: &[Policy], resource: &Resource) -> Resource {
        let mut live = resource.clone();
        for ph in PHASES {
            for (i, p) in policies.iter().enumerate() {
                if ph.builds(p) {
                    self.apply(i, &mut live);
                }
            }
        }
        live
    }
}
