//! The ClusterPolicy / Policy `verifyImages` rules offline, as the Kyverno v1.19 CLI runs them
//! (`processor/policy_processor.go`: `VerifyAndPatchImages` in the verify-images phase, then
//! the rule's checks in the validate phase; `pkg/engine/internal/imageverifier.go`,
//! `pkg/engine/handlers/validation/validate_image.go`). kpol never contacts a registry: what
//! needs one is an `error` naming the image, never a pass. The engine's verify-images phase
//! (`Engine::verify_images`) runs every policy with such rules through [`verify_policy`]; each
//! rule goes through the shared rule steps ([`crate::pipeline::gate`]).
//!
//! The images are the resource's containers, init and ephemeral containers (pod controllers
//! and CronJobs included), or what the rule's `imageExtractors` for the resource's kind find,
//! whose `ImageInfo.String()` matches one of the rule's `imageReferences` (`image` when they
//! are absent); none → no response. `mutateDigest`, `verifyDigest` and `required` default to
//! true, as the loader applies the CRD defaults.
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
//! Not evaluated (the rule's response is an `unsupported` error): rules with `context` or
//! `preconditions`, a resource already carrying `kyverno.io/verify-images`, images that
//! cannot be extracted, and rules a PolicyException covers (kpol does not apply exceptions
//! to these rules).

use crate::exception::PolicyException;
use crate::pipeline;
use crate::policy::{Policy, Rule, RuleBody};
use crate::report::{RuleResponse, RuleType, Status};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::validate::Verdict;
use crate::variables::Context;
use crate::yaml::Node;

/// One policy's responses to one resource: the verify-images phase's, and the validate
/// phase's (the rules' checks, which the validate phase reports with its own responses).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyImages {
    /// The policy's position in the engine's policies.
    pub policy: usize,
    pub verify: Vec<RuleResponse>,
    pub validate: Vec<RuleResponse>,
}

/// Whether `policy` has `verifyImages` rules (the phase visits no other policy).
pub(crate) fn has_verify_images(policy: &Policy) -> bool {
    policy
        .rules()
        .iter()
        .any(|r| matches!(r.body, RuleBody::VerifyImages(_)))
}

/// How `verifyImages` rules go through the shared rule steps (crate::pipeline): the rules
/// kpol evaluates read no context and no preconditions (those are answered unsupported at
/// the selection stage, as are the exceptions that cover them).
const VERIFY: pipeline::How<'static> = pipeline::How {
    rule_type: RuleType::ImageVerify,
    exceptions: pipeline::Exceptions::Early,
    context_error: pipeline::ContextError::Respond,
    preconditions: pipeline::Preconditions::Engine,
    one_stops_at: pipeline::OneStopsAt::PassOrFail,
};

/// The `verifyImages` rules of policy `i` on `resource`, in rule order.
pub fn verify_policy(
    i: usize,
    policy: &Policy,
    resource: &Resource,
    request: &Request,
    exceptions: &[PolicyException],
) -> PolicyImages {
    let mut out = PolicyImages {
        policy: i,
        verify: Vec::new(),
        validate: Vec::new(),
    };
    for rule in policy.rules() {
        let RuleBody::VerifyImages(entries) = &rule.body else {
            continue;
        };
        let s = pipeline::Subject {
            policy,
            rule,
            resource,
            request,
            exceptions,
        };
        let early = |stage| {
            (stage == pipeline::Stage::Selected)
                .then(|| unevaluated(&s))
                .flatten()
        };
        let context = || None::<Result<Context<'_>, Verdict>>;
        match pipeline::gate(&s, &VERIFY, false, early, context) {
            pipeline::Gate::Silent => {}
            pipeline::Gate::Respond(r) => out.verify.push(r),
            pipeline::Gate::Body(_) => match evaluate(rule, entries, resource) {
                Ok(o) => {
                    out.verify.extend(o.verify);
                    out.validate.extend(o.validate.unwrap_or_default());
                }
                Err(feature) => out.verify.push(unsupported(rule, &feature)),
            },
        }
    }
    out
}

/// The answer of a selected rule kpol does not evaluate, or that gives no response (a
/// DELETE); `None` when its body runs.
fn unevaluated(s: &pipeline::Subject<'_, '_>) -> Option<pipeline::Early> {
    let (policy, rule, resource, request) = (s.policy, s.rule, s.resource, s.request);
    let feature = if s
        .exceptions
        .iter()
        .any(|e| e.covers(&policy.key(), &rule.name) && e.matches(resource, request))
    {
        "exceptions"
    } else if rule.context.is_some() {
        "verifyImages context"
    } else if rule.preconditions.is_some() {
        "verifyImages preconditions"
    } else if request.operation == Operation::Delete {
        return Some(pipeline::Early::Silent);
    } else if resource
        .root
        .get_path(&["metadata", "annotations", "kyverno.io/verify-images"])
        .is_some()
    {
        "verifyImages kyverno.io/verify-images annotation"
    } else {
        return None;
    };
    Some(pipeline::Early::Respond(unsupported(rule, feature)))
}

/// The response of a rule kpol does not evaluate: an error naming the feature.
fn unsupported(rule: &Rule, feature: &str) -> RuleResponse {
    let mut r = response(
        rule,
        Status::Error,
        format!("kpol does not evaluate {feature} rules yet"),
    );
    r.unsupported = Some(feature.to_owned());
    r
}

fn response(rule: &Rule, status: Status, message: String) -> RuleResponse {
    VERIFY.respond(rule, Verdict::new(status, message))
}

/// The responses of one selected rule's body: the verify-images phase's, and the validate
/// phase's (`None` when the rule has no checks).
struct Outcomes {
    verify: Vec<RuleResponse>,
    validate: Option<Vec<RuleResponse>>,
}

fn flag(entry: &Node, key: &str) -> bool {
    !matches!(
        entry.get(key).map(|n| &n.value),
        Some(crate::yaml::Value::Bool(false))
    )
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
    let Some(map) = crate::variables::image::images_of(&resource.kind, &resource.root)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for group in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(entries) = map.get(group).and_then(Node::as_map) else {
            continue;
        };
        for (_, info) in entries.iter() {
            // `reference` is the entry's `ImageInfo.String()` (crate::base::image).
            let s = |k: &str| info.get(k).and_then(Node::as_str).unwrap_or("");
            out.push((s("reference").to_owned(), !s("digest").is_empty()));
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
                crate::jmespath::Expr::compile(q)
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
    jmes: Option<&'a crate::jmespath::Expr>,
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
                let input = Node::synthetic(crate::yaml::Value::Str(value.to_owned()));
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
        let info = crate::base::image::parse(&value)
            .map_err(|e| format!("invalid image '{value}' ({e})"))?;
        out.push((info.normalized(), !info.digest.is_empty()));
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
    refs.iter()
        .any(|r| crate::base::wildcard::matches(r, image))
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

/// The body of one selected verifyImages rule on `resource`; `Err` is the feature kpol does
/// not evaluate.
fn evaluate(rule: &Rule, entries: &Node, resource: &Resource) -> Result<Outcomes, String> {
    let entries: &[Node] = entries.as_seq().unwrap_or(&[]);
    let all = images(rule, resource).map_err(|e| format!("verifyImages ({e})"))?;
    let matched: Vec<&(String, bool)> = all
        .iter()
        .filter(|(i, _)| entries.iter().any(|e| matches(&references(e), i)))
        .collect();
    if matched.is_empty() {
        return Ok(Outcomes {
            verify: Vec::new(),
            validate: None,
        });
    }
    let mut verify = Vec::new();
    for e in entries {
        for (image, digest) in &matched {
            // A failed verification leaves no digest either: `mutateDigest` fetches it, and
            // its error comes before the verification's.
            if flag(e, "mutateDigest") && !digest {
                verify.push(response(
                    rule,
                    Status::Error,
                    format!(
                        "failed to update digest: the digest of {image} must be fetched from the registry, which kpol does not contact (offline)"
                    ),
                ));
            }
            if needs_registry(e) {
                verify.push(response(
                    rule,
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
                    return vec![response(
                        rule,
                        Status::Fail,
                        format!("missing digest for {image}"),
                    )];
                }
                if flag(e, "required") {
                    if needs_registry(e) {
                        return vec![response(
                            rule,
                            Status::Error,
                            format!(
                                "required image {image} cannot be checked offline: whether its signature verifies needs the registry"
                            ),
                        )];
                    }
                    return vec![response(
                        rule,
                        Status::Fail,
                        format!("unverified image {image}"),
                    )];
                }
            }
        }
        vec![response(rule, Status::Pass, "image verified".to_owned())]
    });
    Ok(Outcomes { verify, validate })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{exceptions, load, resource};

    fn policy(entry: &str) -> Policy {
        let text = format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: p}}\nspec:\n  \
             validationFailureAction: Enforce\n  rules:\n  - name: r\n    \
             match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    verifyImages:\n    - {entry}\n"
        );
        load(&text).policies.remove(0)
    }

    fn pod(image: &str) -> Resource {
        resource(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: web, namespace: ns}}\nspec:\n  \
             containers: [{{name: c, image: '{image}'}}]\n"
        ))
    }

    /// (status, message) of each verify-phase response, and of each validate-phase one.
    type Shown = (Vec<(Status, String)>, Vec<(Status, String)>);

    fn run(policy: &Policy, r: &Resource, op: Operation, ex: &[PolicyException]) -> Shown {
        let request = Request {
            operation: op,
            ..Request::default()
        };
        let out = verify_policy(3, policy, r, &request, ex);
        assert_eq!(out.policy, 3);
        let shown = |rs: Vec<RuleResponse>| {
            rs.into_iter()
                .map(|r| {
                    assert_eq!((r.rule.as_str(), r.rule_type), ("r", RuleType::ImageVerify));
                    (r.status, r.message)
                })
                .collect()
        };
        (shown(out.verify), shown(out.validate))
    }

    const DIGEST: &str =
        "ghcr.io/o/app@sha256:0123456789012345678901234567890123456789012345678901234567890123";

    #[test]
    fn a_tag_without_digest_needs_the_registry_and_fails_verify_digest() {
        let p = policy("{imageReferences: ['ghcr.io/*']}");
        let (verify, validate) = run(&p, &pod("ghcr.io/o/app:1.0"), Operation::Create, &[]);
        assert_eq!(verify.len(), 1);
        assert_eq!(verify[0].0, Status::Error);
        assert!(
            verify[0]
                .1
                .starts_with("failed to update digest: the digest of ghcr.io/o/app:1.0")
        );
        assert_eq!(
            validate,
            [(
                Status::Fail,
                "missing digest for ghcr.io/o/app:1.0".to_owned()
            )]
        );
        // An image no reference names gives no response.
        assert_eq!(
            run(&p, &pod("nginx:1.25"), Operation::Create, &[]),
            (vec![], vec![])
        );
    }

    #[test]
    fn a_digest_without_required_signature_is_verified() {
        let p = policy("{imageReferences: ['ghcr.io/*'], required: false}");
        let (verify, validate) = run(&p, &pod(DIGEST), Operation::Create, &[]);
        assert!(verify.is_empty());
        assert_eq!(validate, [(Status::Pass, "image verified".to_owned())]);
        // `required` without attestors: no signature annotation is added.
        let p = policy("{imageReferences: ['ghcr.io/*'], mutateDigest: false}");
        let (_, validate) = run(&p, &pod(DIGEST), Operation::Create, &[]);
        assert_eq!(
            validate[0],
            (Status::Fail, format!("unverified image {DIGEST}"))
        );
    }

    #[test]
    fn unevaluated_rules_say_why_and_a_delete_gives_nothing() {
        let p = policy("{imageReferences: ['ghcr.io/*']}");
        let r = pod("ghcr.io/o/app:1.0");
        assert_eq!(run(&p, &r, Operation::Delete, &[]), (vec![], vec![]));
        let ex = exceptions(
            "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: e, namespace: ns}\n\
             spec:\n  exceptions:\n  - policyName: p\n    ruleNames: [r]\n  \
             match: {any: [{resources: {kinds: [Pod]}}]}\n",
        );
        // The exception answers first, even under a DELETE.
        let unsupported = (
            vec![(
                Status::Error,
                "kpol does not evaluate exceptions rules yet".to_owned(),
            )],
            vec![],
        );
        assert_eq!(run(&p, &r, Operation::Create, &ex), unsupported);
        assert_eq!(run(&p, &r, Operation::Delete, &ex), unsupported);
    }
}
