//! Evaluating an ImageValidatingPolicy on one resource offline, in the Kyverno v1.19 order
//! (`ivpol/engine/engine.go` `evaluatePolicies`, `image/verification/evaluator/policy.go`
//! `Evaluate`; cel.md §11.1.8, §11.2.5):
//!
//! 1. matchConstraints select the variant (the policy as written or an autogen copy; the
//!    last that matches and responds gives the response); none → no response;
//! 2. matchConditions (without `variables`): false → no response; an error → error, or no
//!    response under `failurePolicy: Ignore`;
//! 3. CEL PolicyExceptions (the policy as written only): any that holds → skip (rule
//!    `exception`; `reportResult` and priority are not read for this kind);
//! 4. images: the built-in extractors of Pods, pod controllers and CronJobs, then `spec.images`,
//!    filtered by `matchImageReferences`;
//! 5. with `verifyDigest` (the default) an image without a digest → fail "image <img> does
//!    not have a digest";
//! 6. any image left → error: Kyverno fetches its registry data here, which kpol cannot do;
//! 7. no image: the validations run (`images`, `attestors`, `attestations`, `variables`):
//!    first false → fail with its message, an error → error, else pass "success".

use cel::Value;

use super::{ImageMatch, ImageValidatingPolicy, Variant, image_validating_policy};
use crate::cel::Activation;
use crate::cel::convert::{map_of, string, strings, to_cel};
use crate::exception::PolicyException;
use crate::policy::Policy;
use crate::report::{RuleResponse, RuleType, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::vpol::evaluate::{bind_admission, namespace_object};

/// The response of `policy` for `resource`; `None` when it is not an ImageValidatingPolicy,
/// the resource is outside its namespace, or no variant matched and responded.
pub fn evaluate(
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> Option<RuleResponse> {
    let body = image_validating_policy(policy)?;
    if body.json_mode || !policy.in_scope(&resource.namespace) {
        return None;
    }
    let _ns = crate::cel::context::PolicyNamespace::enter(policy.namespace.as_deref());
    let _budget = crate::base::budget::Scope::enter();
    let mut last = None;
    for v in &body.variants {
        let hit = v
            .constraints
            .as_ref()
            .is_some_and(|c| c.matches(resource, request));
        if hit && let Some(r) = evaluate_variant(body, v, resource, Some(request), exceptions) {
            last = Some(r);
        }
    }
    let mut r = last?;
    r.rule_type = RuleType::ImageVerify;
    r.failure_action = body.action;
    Some(r)
}

/// The response of a JSON-mode `policy` for a JSON payload (a test's `jsonPayloads`, `kpol
/// check --json-payload`), as the CLI maps `evaluator/eval.go` `Evaluate` for JSON: `object`
/// is the payload and the only variable; no constraints, no namespace, no autogen copy; only
/// the `spec.images` extractors; a false match condition gives no response; a matching
/// exception a `fail` without message (the CLI reads the empty result); an error is rule
/// `evaluation` "failed to evaluate policy for JSON: …" (the CLI aborts the test on most of
/// them; kpol keeps the error in the row); else pass "success" or the validation's failure,
/// rule = the policy name. `None` for any other policy.
pub fn evaluate_payload(
    policy: &Policy,
    payload: &Resource,
    exceptions: &[PolicyException],
) -> Option<RuleResponse> {
    let body = image_validating_policy(policy)?;
    if !body.json_mode {
        return None;
    }
    let _budget = crate::base::budget::Scope::enter();
    let _ns = crate::cel::context::PolicyNamespace::enter(policy.namespace.as_deref());
    let v = body.variants.first()?;
    let mut r = evaluate_variant(body, v, payload, None, exceptions)?;
    if r.rule == "evaluation" {
        r.message = r.message.replacen(
            "failed to evaluate policy: ",
            "failed to evaluate policy for JSON: ",
            1,
        );
    } else if r.rule == "exception" {
        r = response(&body.name, Status::Fail, "");
    }
    r.rule_type = RuleType::ImageVerify;
    r.failure_action = body.action;
    Some(r)
}

fn response(rule: &str, status: Status, message: impl Into<String>) -> RuleResponse {
    RuleResponse::new(rule, status, message)
}

fn evaluation_error(e: impl std::fmt::Display) -> RuleResponse {
    response(
        "evaluation",
        Status::Error,
        format!("failed to evaluate policy: {e}"),
    )
}

/// One variant on `resource`; `request` is `None` for a JSON payload, which sees only
/// `object`.
fn evaluate_variant(
    body: &ImageValidatingPolicy,
    v: &Variant,
    resource: &Resource,
    request: Option<&Request>,
    exceptions: &[PolicyException],
) -> Option<RuleResponse> {
    if let Some(why) = &body.broken {
        return Some(response("evaluation", Status::Error, why.clone()));
    }
    let mut act = Activation::new();
    let values = crate::cel::ResourceValues::new();
    match request {
        Some(request) => {
            bind_admission(
                &mut act,
                resource,
                request,
                &values,
                request.operation,
                true,
            );
            act.set("namespaceObject", namespace_object(resource, request));
        }
        None => act.set("object", to_cel(&resource.root)),
    }
    match conditions_hold(&act, &v.match_conditions, body.ignore_failures) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => return Some(evaluation_error(e)),
    }
    if v.exceptions_apply {
        let mut keys = Vec::new();
        let mut names = Vec::new();
        let applicable = exceptions.iter().filter(|e| {
            e.cel
                .as_ref()
                .is_some_and(|c| c.refers_to(body.kind, &body.name))
        });
        for e in applicable {
            let Some(cel) = e.cel.as_deref() else {
                continue;
            };
            match conditions_hold(&act, &cel.match_conditions, body.ignore_failures) {
                Ok(true) => {
                    keys.push(cel.key.clone());
                    names.push(e.name.clone());
                }
                Ok(false) => {}
                Err(err) => return Some(evaluation_error(err)),
            }
        }
        if !keys.is_empty() {
            let mut r = response(
                "exception",
                Status::Skip,
                format!(
                    "rule is skipped due to policy exception: {}",
                    keys.join(", ")
                ),
            );
            r.exceptions = names;
            return Some(r);
        }
    }
    let images = match extract_images(v, resource, &act) {
        Ok(images) => images,
        Err(e) => return Some(evaluation_error(e)),
    };
    let mut matched: Vec<(String, Vec<String>)> = Vec::with_capacity(images.len());
    let mut all = Vec::new();
    for (category, list) in images {
        let mut kept = Vec::new();
        for image in list {
            match image_matches(&v.match_images, &image) {
                Ok(true) => {
                    all.push(image.clone());
                    kept.push(image);
                }
                Ok(false) => {}
                Err(e) => return Some(evaluation_error(e)),
            }
        }
        matched.push((category, kept));
    }
    if body.verify_digest {
        for image in &all {
            match crate::base::image::ggcr::parse_reference(image) {
                Err(e) => {
                    return Some(evaluation_error(format!(
                        "failed to parse image reference {image}: {e}"
                    )));
                }
                Ok(r) if r.digest.is_none() => {
                    return Some(response(
                        &body.name,
                        Status::Fail,
                        format!("image {image} does not have a digest"),
                    ));
                }
                Ok(_) => {}
            }
        }
    }
    if !all.is_empty() {
        return Some(evaluation_error(format!(
            "registry data for {} cannot be fetched offline (kpol does not contact registries; image signatures and attestations are not verified)",
            all.join(", ")
        )));
    }
    act.set(
        "images",
        map_of(
            matched
                .iter()
                .map(|(k, l)| (k.clone(), strings(l.iter().map(String::as_str))))
                .collect::<Vec<_>>(),
        ),
    );
    act.set(
        "attestations",
        map_of(
            v.attestations
                .iter()
                .map(|a| (a.clone(), string(a)))
                .collect::<Vec<_>>(),
        ),
    );
    act.set(
        "attestors",
        map_of(
            v.attestors
                .iter()
                .map(|(n, a)| (n.clone(), to_cel(a)))
                .collect::<Vec<_>>(),
        ),
    );
    act.bind_variables(v.variables.iter().map(|(n, p)| (n.as_str(), p)));
    for (i, val) in v.validations.iter().enumerate() {
        match act.eval(&val.expression) {
            Err(e) => return Some(evaluation_error(e)),
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                let message = match &val.message_expression {
                    Some(p) => match act.eval(p) {
                        Ok(Value::String(s)) => s.to_string(),
                        Ok(other) => format!(
                            "failed to convert message expression to string: got {}",
                            other.type_of()
                        ),
                        Err(e) => format!("failed to evaluate message expression: {e}"),
                    },
                    None => val.message.clone().unwrap_or_default(),
                };
                let message = if message.is_empty() {
                    format!("CEL expression validation failed at index {i}")
                } else {
                    message
                };
                if let Some(e) = audit_error(v, &act) {
                    return Some(evaluation_error(e));
                }
                return Some(response(&body.name, Status::Fail, message));
            }
            Ok(other) => {
                return Some(response(
                    &body.name,
                    Status::Error,
                    format!("error: expected bool, got {}", other.type_of()),
                ));
            }
        }
    }
    if let Some(e) = audit_error(v, &act) {
        return Some(evaluation_error(e));
    }
    Some(response(&body.name, Status::Pass, "success"))
}

/// The first audit annotation that fails to evaluate, as upstream words it.
fn audit_error(v: &Variant, act: &Activation) -> Option<String> {
    v.audit_annotations
        .iter()
        .find_map(|(key, p)| match act.eval(p) {
            Err(e) => Some(format!("failed to evaluate auditAnnotation '{key}': {e}")),
            Ok(Value::String(_) | Value::Null) => None,
            Ok(other) => Some(format!(
                "failed to convert auditAnnotation '{key}' expression: got {}",
                other.type_of()
            )),
        })
}

/// Kyverno's `match`: the first false decides; otherwise the errors, or no match under
/// `failurePolicy: Ignore`.
fn conditions_hold(
    act: &Activation,
    conditions: &[(String, crate::cel::Program)],
    ignore_failures: bool,
) -> Result<bool, String> {
    let mut errors = Vec::new();
    for (_, p) in conditions {
        match act.eval_bool(p) {
            Ok(false) => return Ok(false),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    match (errors.is_empty(), ignore_failures) {
        (true, _) => Ok(true),
        (false, true) => Ok(false),
        (false, false) => Err(errors.join("; ")),
    }
}

/// The images by extractor name: the built-in extractors of the resource's kind
/// (`containers`, `initContainers`, `ephemeralContainers` of a Pod, a pod controller's
/// template or a CronJob's job template, `pkg/cel/compiler/images.go`), then `spec.images`
/// (an extractor of the same name replaces the built-in one).
fn extract_images(
    v: &Variant,
    resource: &Resource,
    act: &Activation,
) -> Result<Vec<(String, Vec<String>)>, String> {
    let (group, version) = resource.group_version();
    let pod_spec: Option<&[&str]> = match (group, version, resource.kind.as_str()) {
        ("", "v1", "Pod") => Some(&["spec"]),
        ("apps", "v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch", "v1", "Job") => Some(&["spec", "template", "spec"]),
        ("batch", "v1", "CronJob") => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    };
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(path) = pod_spec {
        let spec = resource.root.get_path(path);
        for field in ["containers", "initContainers", "ephemeralContainers"] {
            let list = spec
                .and_then(|s| s.get(field))
                .and_then(crate::yaml::Node::as_seq)
                .unwrap_or(&[]);
            let images = list
                .iter()
                .map(
                    |c| match c.get("image").and_then(crate::yaml::Node::as_str) {
                        Some(i) => Ok(i.to_owned()),
                        None => Err(format!("no such key: image (in {field})")),
                    },
                )
                .collect::<Result<Vec<_>, _>>()?;
            out.push((field.to_owned(), images));
        }
    }
    for (name, p) in &v.images {
        let images = match act.eval(p)? {
            Value::List(items) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s.to_string()),
                    other => Err(format!(
                        "image extractor {name}: expected a list of strings, got an item of type {}",
                        other.type_of()
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => {
                return Err(format!(
                    "image extractor {name}: expected a list of strings, got {}",
                    other.type_of()
                ));
            }
        };
        out.retain(|(n, _)| n != name);
        out.push((name.clone(), images));
    }
    Ok(out)
}

/// `matchImageReferences`: none → every image; else any entry (a glob, or an expression over
/// `ref`).
fn image_matches(matches: &[ImageMatch], image: &str) -> Result<bool, String> {
    if matches.is_empty() {
        return Ok(true);
    }
    for m in matches {
        let hit = match m {
            ImageMatch::Glob(g) => g.matches(image),
            ImageMatch::Expression(p) => {
                let mut act = Activation::new();
                act.set("ref", string(image));
                act.eval_bool(p)?
            }
        };
        if hit {
            return Ok(true);
        }
    }
    Ok(false)
}
