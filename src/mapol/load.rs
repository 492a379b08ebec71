//! MutatingAdmissionPolicy documents (with the bindings of the same file) → a [`Policy`] whose
//! body is the compiled [`MutatingAdmissionPolicy`]; every problem a diagnostic at its
//! line:column. A compile error leaves a policy that mutates nothing: the Kyverno CLI drops the
//! response of a MAP whose expressions do not compile.

use std::sync::Arc;

use super::{Binding, MutatingAdmissionPolicy};
use crate::diagnostic::Diagnostic;
use crate::mpol::load::Compiler;
use crate::policy::Envelope;
use crate::policy::{Policy, PolicyKind};
use crate::source::Source;
use crate::vpol::params::ParamRef;
use crate::yaml::Node;

/// The loader of `MutatingAdmissionPolicy` in `crate::kinds::LOADERS`; `bindings` are the
/// file's admission policy bindings (those of this policy are kept).
pub fn mutating_admission_policy(
    source: &Source,
    node: Node,
    bindings: &[Node],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Policy, Node> {
    let opened = Envelope::open(&node, PolicyKind::MutatingAdmissionPolicy, None);
    let spec = opened.spec.clone();
    let mut c = Compiler::open(source, diagnostics, &opened);
    let own = c.constraints(opened.match_constraints(), "matchConstraints");
    let variables = c.named(&spec, "variables", false);
    let match_conditions = c.named(&spec, "matchConditions", false);
    let mutations = c.mutations(&spec);
    let mut kept = Vec::new();
    for b in bindings.iter().filter(|b| {
        b.get("kind").and_then(Node::as_str) == Some("MutatingAdmissionPolicyBinding")
            && b.get_path(&["spec", "policyName"]).and_then(Node::as_str)
                == Some(opened.envelope.name.as_str())
    }) {
        let name = b
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned();
        let match_resources = c.constraints(
            b.get_path(&["spec", "matchResources"]),
            &format!("matchResources of binding {name}"),
        );
        let param_ref = match b.get_path(&["spec", "paramRef"]).filter(|p| !p.is_null()) {
            None => None,
            Some(p) => match ParamRef::read(p) {
                Ok(r) => Some(r),
                Err(e) => {
                    c.problem(format!("binding {name}: invalid paramRef: {e}"), p.span);
                    None
                }
            },
        };
        kept.push(Binding {
            match_resources,
            param_ref,
            param_kind: spec.get("paramKind").filter(|k| !k.is_null()).cloned(),
        });
    }
    let body = MutatingAdmissionPolicy {
        name: opened.envelope.name.clone(),
        constraints: own,
        variables,
        match_conditions,
        mutations,
        ignore_failures: spec.get("failurePolicy").and_then(Node::as_str) == Some("Ignore"),
        bindings: kept,
        broken: c
            .errors
            .first()
            .map(|e| format!("failed to compile policy: {e}")),
    };
    Ok(opened.policy(source, node, Arc::new(body)))
}
