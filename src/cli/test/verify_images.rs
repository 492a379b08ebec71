//! `verifyImages` rules offline, as the Kyverno v1.19 CLI runs them (`processor/
//! policy_processor.go`: `VerifyAndPatchImages` in the verify-images phase, then the rule's
//! checks in the validate phase; `pkg/engine/internal/imageverifier.go`,
//! `pkg/engine/handlers/validation/validate_image.go`). kpol never contacts a registry: what
//! needs one is an `error` naming the image, never a pass.
//!
//! The images are the resource's containers, init and ephemeral containers (pod controllers
//! and CronJobs included), or what the rule's `imageExtractors` for the resource's kind find,
//! whose `ImageInfo.String()` matches one of the rule's `imageReferences` (`image` when they
//! are absent); none → no response. `mutateDigest`,
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
//! Not evaluated (the row is `unsupported`): rules with `context` or `preconditions`, a
//! resource already carrying `kyverno.io/verify-images`, images that cannot be extracted,
//! and PolicyExceptions (not applied to these rules).

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

/// `ImageInfo.String()` of a parsed image, with whether it has a digest.
fn display(registry: &str, path: &str, tag: &str, digest: &str) -> (String, bool) {
    let path = if registry.is_empty() {
        path.to_owned()
    } else {
        format!("{registry}/{path}")
    };
    if digest.is_empty() {
        (format!("{path}:{tag}"), false)
    } else {
        (format!("{path}@{digest}"), true)
    }
}

/// The resource's images as `ImageInfo.String()`, with whether each has a digest: the
/// rule's `imageExtractors` for the resource's kind when it has some, else the containers.
fn images(rule: &Rule, resource: &Resource) -> Result<Vec<(String, bool)>, String> {
    if let Some(configs) = rule
        .raw
        .get("imageExtractors")
        .and_then(|m| m.get(&resource.kind))
    {
        return extracted(configs, &resource.root);
    }
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
            out.push(display(s("registry"), s("path"), s("tag"), s("digest")));
        }
    }
    Ok(out)
}

/// The images a kind's `imageExtractors` entries find (`pkg/utils/api/image.go`): each
/// entry's `path` split on `/`, `*` walking every item of a list or map, its last segment the
/// field holding the image unless `value` names it; `key` must then name a string field
/// beside it; an absent or blank value is no image; `jmesPath` maps the value, which must
/// stay a string. An empty list of entries is an error, as upstream.
fn extracted(configs: &Node, root: &Node) -> Result<Vec<(String, bool)>, String> {
    let entries: &[Node] = configs.as_seq().unwrap_or(&[]);
    if entries.is_empty() {
        return Err("no extractors found".to_owned());
    }
    let mut out = Vec::new();
    for e in entries {
        let text = |k: &str| e.get(k).and_then(Node::as_str).unwrap_or("");
        let mut fields: Vec<&str> = text("path")
            .split('/')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect();
        let value = match text("value") {
            "" => fields.pop().unwrap_or(""),
            v => v,
        };
        let jmes = match text("jmesPath") {
            "" => None,
            q => Some(
                kpol::jmespath::Expr::compile(q)
                    .map_err(|e| format!("invalid jmespath {q}: {e}"))?,
            ),
        };
        let found = Found {
            key: text("key"),
            value,
            jmes: jmes.as_ref(),
        };
        found.walk(root, &fields, &mut out)?;
    }
    Ok(out)
}

/// One `imageExtractors` entry being walked.
struct Found<'a> {
    key: &'a str,
    value: &'a str,
    jmes: Option<&'a kpol::jmespath::Expr>,
}

impl Found<'_> {
    fn walk(
        &self,
        node: &Node,
        fields: &[&str],
        out: &mut Vec<(String, bool)>,
    ) -> Result<(), String> {
        if node.is_null() {
            return Ok(());
        }
        if let Some((&"*", rest)) = fields.split_first() {
            if let Some(items) = node.as_seq() {
                for item in items {
                    self.walk(item, rest, out)?;
                }
            } else if let Some(map) = node.as_map() {
                for (_, item) in map.iter() {
                    self.walk(item, rest, out)?;
                }
            } else {
                return Err("invalid type".to_owned());
            }
            return Ok(());
        }
        if node.as_map().is_none() {
            return Err("invalid image config".to_owned());
        }
        if let Some((first, rest)) = fields.split_first() {
            return match node.get(first) {
                Some(child) => self.walk(child, rest, out),
                None => Ok(()),
            };
        }
        if !self.key.is_empty() && node.get(self.key).and_then(Node::as_str).is_none() {
            return Err("invalid key".to_owned());
        }
        let Some(value) = node
            .get(self.value)
            .and_then(Node::as_str)
            .filter(|v| !v.trim().is_empty())
        else {
            return Ok(());
        };
        let value = match self.jmes {
            None => value.to_owned(),
            Some(q) => {
                let input = Node::synthetic(kpol::yaml::Value::Str(value.to_owned()));
                let result = q
                    .search(&input)
                    .map_err(|e| format!("failed to apply jmespath {}: {e}", q.text()))?;
                match result.as_str() {
                    Some(s) => s.to_owned(),
                    None => {
                        return Err(format!("jmespath {} must produce a string", q.text()));
                    }
                }
            }
        };
        let info = kpol::base::image::parse(&value)
            .map_err(|e| format!("invalid image '{value}' ({e})"))?;
        out.push(display(&info.registry, &info.path, &info.tag, &info.digest));
        Ok(())
    }
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
    let all = images(rule, resource).map_err(|e| format!("verifyImages ({e})"))?;
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
