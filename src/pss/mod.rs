//! `validate.podSecurity`: the Kubernetes Pod Security Standards evaluated as Kyverno
//! evaluates them (validate.md §13, messages §13.1).
//!
//! The rule's resource is decoded into a pod ([`pod`]) — a Pod itself, the pod template of a
//! Deployment/DaemonSet/Job/StatefulSet/ReplicaSet/ReplicationController, or of a CronJob's
//! job template — the checks of the level run at the selected version ([`registry`]), the
//! `exclude` entries remove what they exempt ([`exclude`]), and what is left fails the rule
//! with Kyverno's message. The finding points at the first offending field.

mod container;
mod exclude;
mod field;
mod gojson;
mod host;
mod pod;
mod privilege;
mod profiles;
mod registry;
#[cfg(test)]
mod tests;

use crate::report::Status;
use crate::resource::Resource;
use crate::yaml::Node;

use exclude::Exclude;
use registry::Version;

/// The outcome of a podSecurity rule on one resource.
#[derive(Clone, Debug, PartialEq)]
pub struct PssVerdict {
    pub status: Status,
    pub message: String,
    /// The first offending field, as resource path segments (failures only).
    pub path: Option<Vec<String>>,
}

/// Where a kind keeps its pod: spec and metadata paths in the resource.
struct PodLocation {
    spec: &'static [&'static str],
    meta: &'static [&'static str],
    /// `spec` and `meta` joined with `.`, as decoding errors name them.
    spec_dotted: &'static str,
    meta_dotted: &'static str,
    /// How Kyverno renames `spec` in field errors (`None`: unchanged).
    spec_rename: Option<&'static str>,
}

fn location(kind: &str) -> Option<PodLocation> {
    match kind {
        "Pod" => Some(PodLocation {
            spec: &["spec"],
            meta: &["metadata"],
            spec_dotted: "spec",
            meta_dotted: "metadata",
            spec_rename: None,
        }),
        "DaemonSet"
        | "Deployment"
        | "Job"
        | "StatefulSet"
        | "ReplicaSet"
        | "ReplicationController" => Some(PodLocation {
            spec: &["spec", "template", "spec"],
            meta: &["spec", "template", "metadata"],
            spec_dotted: "spec.template.spec",
            meta_dotted: "spec.template.metadata",
            spec_rename: Some("spec.template.spec"),
        }),
        "CronJob" => Some(PodLocation {
            spec: &["spec", "jobTemplate", "spec", "template", "spec"],
            // Kyverno takes the job template's metadata, not the pod template's.
            meta: &["spec", "jobTemplate", "metadata"],
            spec_dotted: "spec.jobTemplate.spec.template.spec",
            meta_dotted: "spec.jobTemplate.metadata",
            spec_rename: Some("spec.jobTemplate.spec.template.spec"),
        }),
        _ => None,
    }
}

/// A `validate.podSecurity` body, read once when the policy is loaded.
#[derive(Clone, Debug)]
pub struct Body {
    level: String,
    version: String,
    /// `version` parsed; `None` when it is neither `latest` nor `v1.x`.
    parsed_version: Option<Version>,
    excludes: Vec<Exclude>,
}

fn strings(n: Option<&Node>) -> Vec<String> {
    n.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

impl Body {
    /// Reads the rule's `validate.podSecurity` map.
    pub fn read(body: &Node) -> Body {
        let text = |k: &str| body.get(k).and_then(Node::as_str).unwrap_or("").to_owned();
        let excludes = body
            .get("exclude")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .map(|e| Exclude {
                control_name: e
                    .get("controlName")
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .into(),
                images: strings(e.get("images")),
                restricted_field: e
                    .get("restrictedField")
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .into(),
                values: strings(e.get("values")),
            })
            .collect();
        let version = text("version");
        Body {
            level: text("level"),
            parsed_version: Version::parse(&version),
            version,
            excludes,
        }
    }
}

/// Kyverno's policy validation of a podSecurity rule's `exclude` entries (rule `rule_index`
/// of the policy): the first error message and the node it is about, if any.
pub fn policy_error(body: &Node, rule_index: usize) -> Option<(String, &Node)> {
    exclude::policy_error(body, rule_index)
}

/// A resource's pod, decoded once for every podSecurity rule that checks the resource.
#[derive(Debug, Default)]
pub struct PodCache(Option<Result<pod::Pod, String>>);

/// Evaluates a podSecurity rule (`body` = the `validate.podSecurity` map) on `resource`.
/// DELETE requests are the caller's business (they give no response).
pub fn validate(rule: &str, body: &Node, resource: &Resource) -> PssVerdict {
    validate_with(rule, &Body::read(body), resource, &mut PodCache::default())
}

/// [`validate`] of a body read at load ([`Body::read`]), with the pod decoded at most once
/// per `cache` (one cache per resource).
pub fn validate_with(
    rule: &str,
    body: &Body,
    resource: &Resource,
    cache: &mut PodCache,
) -> PssVerdict {
    let error = |message: String| PssVerdict {
        status: Status::Error,
        message,
        path: None,
    };
    let Some(loc) = location(&resource.kind) else {
        return error(
            "Error while getting new resource: could not find correct resource type".into(),
        );
    };
    let decoded = cache.0.get_or_insert_with(|| {
        let spec = resource.root.get_path(loc.spec);
        let meta = resource.root.get_path(loc.meta);
        pod::decode(spec, meta, loc.spec_dotted, loc.meta_dotted).map_err(|e| e.0)
    });
    let pod = match decoded {
        Ok(p) => &*p,
        Err(e) => return error(format!("Error while getting new resource: {e}")),
    };
    let Some(version) = body.parsed_version else {
        return error(
            "failed to parse pod security api version: must be \"latest\" or \"v1.x\"".into(),
        );
    };
    let baseline = body.level == "baseline";
    let mut results = registry::evaluate(baseline, version, pod);
    if !body.excludes.is_empty() {
        exclude::apply(baseline, version, &body.excludes, &mut results, pod);
    }
    if results.is_empty() {
        return PssVerdict {
            status: Status::Pass,
            message: crate::report::pass_message("Validation", rule),
            path: None,
        };
    }
    let path = results
        .iter()
        .find_map(|r| r.first_path())
        .map(|p| p.in_resource(loc.spec, loc.meta));
    let mut checks = String::new();
    for r in &results {
        let errs: Vec<String> = r
            .errs
            .iter()
            .flatten()
            .map(|e| {
                let mut f = e.field.clone();
                if let Some(to) = loc.spec_rename {
                    f = f.replace("spec", to);
                }
                e.print(&f.replace("metadata", "spec.template.metadata"))
            })
            .collect();
        checks.push_str(&format!(
            "(Forbidden reason: {}, field error list: [{}])",
            r.reason,
            errs.join(", ")
        ));
    }
    PssVerdict {
        status: Status::Fail,
        message: format!(
            "Validation rule '{rule}' failed. It violates PodSecurity \"{}:{}\": {checks}",
            body.level, body.version
        ),
        path,
    }
}
