//! ImageValidatingPolicy tests, after Kyverno v1.19's `image/verification/evaluator` order and
//! `test/cli/test-image-validating-policy`: no match and false matchConditions give no
//! response, exceptions skip, the digest check fails first, any other matched image is an
//! error (registry data offline), no matched image runs the validations, autogen copies
//! reach pod controllers, namespaced scope, load problems at line:column.

use super::evaluate;
use crate::diagnostic::Code;
use crate::exception::PolicyException;
use crate::report::{RuleType, Status};
use crate::request::Request;
use crate::test_support::{exceptions, load, resource};

/// An ImageValidatingPolicy `iv` on pods with `extra` spec lines.
fn ivpol(kind: &str, extra: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1beta1\nkind: {kind}\nmetadata: {{name: iv, namespace: test}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}\n  matchImageReferences:\n  - glob: 'ghcr.io/*'\n  attestors: []\n  validations:\n  - expression: images.containers.all(i, i.startsWith('ghcr.io/'))\n    message: not from ghcr\n{extra}"
    )
}

fn pod(name: &str, image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: test, labels: {{prod: 'true'}}}}\nspec: {{containers: [{{name: c, image: '{image}'}}]}}\n"
    )
}

fn run(policy_text: &str, r: &str, ex: &[PolicyException]) -> Option<(String, Status, String)> {
    let l = load(policy_text);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let resp = evaluate(&l.policies[0], &resource(r), &Request::default(), ex)?;
    assert_eq!(resp.rule_type, RuleType::ImageVerify);
    Some((resp.rule, resp.status, resp.message))
}

const DIGEST: &str = "@sha256:0123456789012345678901234567890123456789012345678901234567890123";

#[test]
fn the_digest_check_fails_first_then_a_matched_image_needs_the_registry() {
    let p = ivpol("ImageValidatingPolicy", "");
    let (rule, status, message) = run(&p, &pod("a", "ghcr.io/x/app:1"), &[]).unwrap();
    assert_eq!((rule.as_str(), status), ("iv", Status::Fail));
    assert_eq!(message, "image ghcr.io/x/app:1 does not have a digest");
    // With a digest, or with verifyDigest off, the registry is needed: an error, never a pass.
    let with_digest = format!("ghcr.io/x/app{DIGEST}");
    for (policy, image) in [
        (p.clone(), with_digest.as_str()),
        (
            ivpol(
                "ImageValidatingPolicy",
                "  validationConfigurations: {verifyDigest: false}\n",
            ),
            "ghcr.io/x/app:1",
        ),
    ] {
        let (rule, status, message) = run(&policy, &pod("a", image), &[]).unwrap();
        assert_eq!((rule.as_str(), status), ("evaluation", Status::Error));
        assert!(
            message.starts_with("failed to evaluate policy: registry data for "),
            "{message}"
        );
        assert!(message.contains("cannot be fetched offline"), "{message}");
    }
}

#[test]
fn no_matched_image_runs_the_validations() {
    // docker.io is not matched: no registry call, the validations decide.
    let p = ivpol("ImageValidatingPolicy", "");
    let (rule, status, message) = run(&p, &pod("a", "docker.io/nginx:1"), &[]).unwrap();
    assert_eq!(
        (rule.as_str(), status, message.as_str()),
        ("iv", Status::Pass, "success")
    );
    // A custom extractor whose images are not matched; a validation that fails on it.
    let custom = ivpol(
        "ImageValidatingPolicy",
        "  images:\n  - {name: all, expression: 'object.spec.containers.map(c, c.image)'}\n",
    )
    .replace(
        "images.containers.all(i, i.startsWith('ghcr.io/'))",
        "size(images.all) > 0",
    );
    let (_, status, message) = run(&custom, &pod("a", "docker.io/nginx:1"), &[]).unwrap();
    assert_eq!((status, message.as_str()), (Status::Fail, "not from ghcr"));
    // A validation that cannot be evaluated is an error.
    let broken = ivpol("ImageValidatingPolicy", "").replace(
        "images.containers.all(i, i.startsWith('ghcr.io/'))",
        "object.spec.nope == 1",
    );
    let (rule, status, _) = run(&broken, &pod("a", "docker.io/nginx:1"), &[]).unwrap();
    assert_eq!((rule.as_str(), status), ("evaluation", Status::Error));
}

#[test]
fn no_match_and_false_conditions_give_no_response() {
    let p = ivpol(
        "ImageValidatingPolicy",
        "  matchConditions:\n  - {name: prod, expression: \"object.metadata.labels.prod == 'true'\"}\n",
    );
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: test}\n";
    assert_eq!(run(&p, cm, &[]), None);
    let unlabelled =
        pod("a", "ghcr.io/team/app:1").replace("labels: {prod: 'true'}", "labels: {prod: 'false'}");
    assert_eq!(run(&p, &unlabelled, &[]), None);
    // A condition error is an error, or no match under failurePolicy Ignore.
    let err = p.replace("object.metadata.labels.prod", "object.metadata.nope.prod");
    assert_eq!(
        run(&err, &pod("a", "ghcr.io/team/app:1"), &[]).unwrap().1,
        Status::Error
    );
    let ignored = format!("{err}  failurePolicy: Ignore\n");
    assert_eq!(run(&ignored, &pod("a", "ghcr.io/team/app:1"), &[]), None);
}

#[test]
fn exceptions_skip_the_policy_as_written() {
    // test/cli/test-image-validating-policy/with-cel-exceptions.
    let p = ivpol("ImageValidatingPolicy", "");
    let ex = exceptions(
        "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e, namespace: test}\nspec:\n  policyRefs: [{name: iv, kind: ImageValidatingPolicy}]\n  reportResult: pass\n  matchConditions:\n  - {name: byname, expression: \"object.metadata.name == 'skipped'\"}\n",
    );
    let (rule, status, message) = run(&p, &pod("skipped", "ghcr.io/team/app:1"), &ex).unwrap();
    // reportResult is not read for this kind: always skip.
    assert_eq!((rule.as_str(), status), ("exception", Status::Skip));
    assert_eq!(message, "rule is skipped due to policy exception: test/e");
    let other = run(&p, &pod("other", "ghcr.io/team/app:1"), &ex).unwrap();
    assert_eq!(other.1, Status::Fail, "{other:?}");
}

#[test]
fn autogen_copies_reach_pod_controllers_and_namespaced_policies_their_namespace() {
    let p = ivpol("ImageValidatingPolicy", "");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: test}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: 'ghcr.io/team/app:1'}]\n";
    let (rule, status, message) = run(&p, deployment, &[]).unwrap();
    assert_eq!((rule.as_str(), status), ("iv", Status::Fail));
    assert_eq!(message, "image ghcr.io/team/app:1 does not have a digest");
    let cronjob = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: test}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          initContainers: [{name: c, image: 'docker.io/x:1'}]\n          containers: [{name: c, image: 'docker.io/y:1'}]\n";
    assert_eq!(run(&p, cronjob, &[]).unwrap().1, Status::Pass);
    let none = format!("{p}  autogen: {{podControllers: {{controllers: []}}}}\n");
    assert_eq!(run(&none, deployment, &[]), None);
    let ns = ivpol("NamespacedImageValidatingPolicy", "");
    let other = pod("a", "ghcr.io/team/app:1").replace("namespace: test", "namespace: other");
    assert_eq!(run(&ns, &other, &[]), None);
    assert!(run(&ns, &pod("a", "ghcr.io/team/app:1"), &[]).is_some());
}

#[test]
fn load_problems_are_diagnostics_at_line_and_column() {
    let text = "\
apiVersion: policies.kyverno.io/v1alpha1
kind: ImageValidatingPolicy
metadata: {name: iv}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  matchImageReferences:
  - glob: 'ghcr.io/[x'
  - {}
  validations:
  - expression: 'images.containers =='
";
    let l = load(text);
    let at: Vec<String> = l
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::InvalidPolicy)
        .map(|d| d.position())
        .collect();
    assert_eq!(
        at,
        ["p.yaml:9:5", "p.yaml:10:5", "p.yaml:12:38"],
        "{:?}",
        l.diagnostics
    );
    let r = evaluate(
        &l.policies[0],
        &resource(&pod("a", "x")),
        &Request::default(),
        &[],
    )
    .unwrap();
    assert_eq!((r.rule.as_str(), r.status), ("evaluation", Status::Error));
    assert!(
        r.message.starts_with("failed to compile policy: "),
        "{}",
        r.message
    );
}
