//! `verifyImages` rules offline, as the Kyverno v1.19 CLI runs them (`processor/
//! policy_processor.go`: `VerifyAndPatchImages` in the verify-images phase, then the rule's
//! checks in the validate phase; `pkg/engine/internal/imageverifier.go`,
//! `pkg/engine/handlers/validation/validate_image.go`). kpol never contacts a registry: what
//! needs one is an `error` naming the image, never a pass.
//!
//! The images are the resource's containers, init and ephemeral containers (pod controllers
//! and CronJobs included) whose `ImageInfo.String()` matches one of the rule's
//! `imageReferences` (`image` when they are absent); none → no response. `mutateDigest`,
//! `verifyDigest` and `required` default to true, as the loader applies the CRD defaults.
//!
//! - Verify-images phase, per entry and image: `mutateDigest` on an image without a digest
//!   needs the registry's digest → `error` "failed to update digest: …"; then `attestors` /
//!   `attestations` need the registry's signatures → `error` (offline a verification never
//!   succeeds, so it never yields the digest either); else no response.
//! - Validate phase (an entry with `verifyDigest` or `required`), per entry and image, the
//!   first failure ending the rule: `verifyDigest` and no digest → `fail` "missing digest for
//!   <image>"; `required` → the `kyverno.io/verify-images` annotation the verify phase adds on
//!   a verified signature: without attestors none is added → `fail` "unverified image
//!   <image>"; with attestors kpol cannot know → `error` (the Kyverno v1.19.0 CLI without a
//!   network prints `fail`, its lookup having failed). Otherwise `pass` "image verified".
//!
//! Not evaluated (the row is `unsupported`): rules with `context`, `preconditions` or
//! `imageExtractors`, a resource already carrying `kyverno.io/verify-images`, and
//! PolicyExceptions (not applied to these rules).

use super::evaluate::RuleOutcome;
use kpol::policy::Rule;
use kpol::report::Status;
use kpol::request::Operation;
use kpol::resource::Resource;
use kpol::yaml::Node;

/// The responses of one matched rule: the verify-images phase's outcomes, and the validate
/// phase's (`None` when the rule has no checks or the phase gives no response).
pub struct Outcomes {
    pub verify: Vec<RuleOutcome>,
    pub validate: Option<Vec<RuleOutcome>>,
}

fn outcome(rule: &str, status: Status, message: String) -> RuleOutcome {
    RuleOutcome {
        rule: rule.to_owned(),
        status,
        message,
        unsupported: None,
        generated: None,
        patched: None,
        target: None,
    }
}

fn flag(entry: &Node, key: &str) -> bool {
    !matches!(
        entry.get(key).map(|n| &n.value),
        Some(kpol::yaml::Value::Bool(false))
    )
}

/// The resource's images as `ImageInfo.String()`, with whether each has a digest.
fn images(resource: &Resource) -> Result<Vec<(String, bool)>, String> {
    let Some(map) = kpol::variables::image::images_of(&resource.kind, &resource.root)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for group in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(entries) = map.get(group).and_then(Node::as_map) else {
            continue;
        };
        for (_, info) in entries.iter() {
            let s = |k: &str| info.get(k).and_then(Node::as_str).unwrap_or("");
            let digest = !s("digest").is_empty();
            let path = if s("registry").is_empty() {
                s("path").to_owned()
            } else {
                format!("{}/{}", s("registry"), s("path"))
            };
            let image = if digest {
                format!("{path}@{}", s("digest"))
            } else {
                format!("{path}:{}", s("tag"))
            };
            out.push((image, digest));
        }
    }
    Ok(out)
}

fn references(entry: &Node) -> Vec<String> {
    let mut refs: Vec<String> = entry
        .get("imageReferences")
        .map(Node::str_items)
        .unwrap_or_default();
    if refs.is_empty()
        && let Some(i) = entry.get("image").and_then(Node::as_str)
    {
        refs.push(i.to_owned());
    }
    refs
}

fn matches(refs: &[String], image: &str) -> bool {
    refs.iter().any(|r| kpol::base::wildcard::matches(r, image))
}

fn needs_registry(entry: &Node) -> bool {
    let non_empty = |k: &str| {
        entry
            .get(k)
            .and_then(Node::as_seq)
            .is_some_and(|s| !s.is_empty())
    };
    non_empty("attestors") || non_empty("attestations")
}

/// One matched verifyImages rule on `resource`; `Err` is the feature kpol does not evaluate.
pub fn evaluate(
    rule: &Rule,
    entries: &Node,
    resource: &Resource,
    op: Operation,
) -> Result<Outcomes, String> {
    if rule.context.is_some() {
        return Err("verifyImages context".to_owned());
    }
    if rule.preconditions.is_some() {
        return Err("verifyImages preconditions".to_owned());
    }
    if rule.raw.get("imageExtractors").is_some() {
        return Err("verifyImages imageExtractors".to_owned());
    }
    let none = Outcomes {
        verify: Vec::new(),
        validate: None,
    };
    if op == Operation::Delete {
        return Ok(none);
    }
    if resource
        .root
        .get_path(&["metadata", "annotations", "kyverno.io/verify-images"])
        .is_some()
    {
        return Err("verifyImages kyverno.io/verify-images annotation".to_owned());
    }
    let entries: &[Node] = entries.as_seq().unwrap_or(&[]);
    let all = images(resource).map_err(|e| format!("verifyImages ({e})"))?;
    let matched: Vec<&(String, bool)> = all
        .iter()
        .filter(|(i, _)| entries.iter().any(|e| matches(&references(e), i)))
        .collect();
    if matched.is_empty() {
        return Ok(none);
    }
    let name = rule.name.as_str();
    let mut verify = Vec::new();
    for e in entries {
        for (image, digest) in &matched {
            // A failed verification leaves no digest either: `mutateDigest` fetches it, and
            // its error comes before the verification's.
            if flag(e, "mutateDigest") && !digest {
                verify.push(outcome(
                    name,
                    Status::Error,
                    format!(
                        "failed to update digest: the digest of {image} must be fetched from the registry, which kpol does not contact (offline)"
                    ),
                ));
            }
            if needs_registry(e) {
                verify.push(outcome(
                    name,
                    Status::Error,
                    format!(
                        "failed to verify image {image}: its signatures and attestations are in the registry, which kpol does not contact (offline)"
                    ),
                ));
            }
        }
    }
    let checks = entries
        .iter()
        .any(|e| flag(e, "verifyDigest") || flag(e, "required"));
    let validate = checks.then(|| {
        for e in entries {
            let refs = references(e);
            for (image, digest) in all.iter().filter(|(i, _)| matches(&refs, i)) {
                if flag(e, "verifyDigest") && !digest {
                    return vec![outcome(
                        name,
                        Status::Fail,
                        format!("missing digest for {image}"),
                    )];
                }
                if flag(e, "required") {
                    if needs_registry(e) {
                        return vec![outcome(
                            name,
                            Status::Error,
                            format!(
                                "required image {image} cannot be checked offline: whether its signature verifies needs the registry"
                            ),
                        )];
                    }
                    return vec![outcome(
                        name,
                        Status::Fail,
                        format!("unverified image {image}"),
                    )];
                }
            }
        }
        vec![outcome(name, Status::Pass, "image verified".to_owned())]
    });
    Ok(Outcomes { verify, validate })
}
