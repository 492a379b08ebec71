//! A JSON-mode ImageValidatingPolicy on JSON payloads (`evaluation.mode: JSON`), after Kyverno
//! v1.19's `image/verification/evaluator/eval.go` (`filterPolicies`, `Evaluate`) and the CLI's
//! mapping in `commands/test/test.go` `applyImageValidatingPolicies`: only `object`, only the
//! `spec.images` extractors, the digest check before the (offline) registry fetch, and never
//! a resource.

use std::sync::Arc;

use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::report::Status;
use crate::request::Request;
use crate::source::SourceFile;
use crate::yaml::{Limits, Node, parse_documents};

const POLICY: &str = include_str!("../../testdata/json-payload-image/policies.yaml");

fn engine() -> Engine {
    let source = Arc::new(SourceFile::new("p.yaml", POLICY));
    let loaded = load_policies(&source, parse_documents(POLICY, Limits::default()).unwrap());
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity != crate::diagnostic::Severity::Error),
        "{:?}",
        loaded.diagnostics
    );
    Engine::new(loaded.policies)
}

/// (rule, status, message) of the payload `json`.
fn run(json: serde_json::Value) -> Vec<(String, Status, String)> {
    let source = Arc::new(SourceFile::new("x.json", "{}"));
    let payload = crate::payload::payload(Node::from_json(&json), &source, 0, "x.json");
    engine()
        .validate_payload(&payload)
        .into_iter()
        .flat_map(|p| p.rules)
        .map(|r| (r.rule, r.status, r.message))
        .collect()
}

fn row(rule: &str, status: Status, message: &str) -> Vec<(String, Status, String)> {
    vec![(rule.to_owned(), status, message.to_owned())]
}

#[test]
fn payload_images_are_checked_before_the_registry() {
    // No image selected by matchImageReferences: the validations decide.
    assert_eq!(
        run(serde_json::json!({"stage": "prod", "images": ["docker.io/nginx:1.25"]})),
        row("payload-images", Status::Pass, "success")
    );
    assert_eq!(
        run(serde_json::json!({"stage": "dev", "images": []})),
        row("payload-images", Status::Fail, "only prod payloads")
    );
    // A selected image without a digest fails before any fetch.
    assert_eq!(
        run(serde_json::json!({"stage": "prod", "images": ["registry.example.com/app:1.0"]})),
        row(
            "payload-images",
            Status::Fail,
            "image registry.example.com/app:1.0 does not have a digest"
        )
    );
    // A selected image with a digest needs registry data: an error, never a pass.
    let digest = format!("registry.example.com/app@sha256:{}", "0".repeat(64));
    let got = run(serde_json::json!({"stage": "prod", "images": [digest]}));
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0.as_str(), got[0].1), ("evaluation", Status::Error));
    assert!(
        got[0]
            .2
            .starts_with("failed to evaluate policy for JSON: registry data for"),
        "{got:?}"
    );
}

// A false match condition gives no response; an extractor that is not a list of strings is
// an evaluation error.
#[test]
fn payload_match_conditions_and_extractor_errors() {
    assert_eq!(run(serde_json::json!({"stage": "prod"})), Vec::new());
    let got = run(serde_json::json!({"stage": "prod", "images": "one"}));
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0.as_str(), got[0].1), ("evaluation", Status::Error));
    assert!(got[0].2.contains("image extractor listed"), "{got:?}");
}

// A JSON-mode policy never answers for a resource (filterPolicies keeps Kubernetes-mode
// policies for admission requests).
#[test]
fn json_mode_policies_skip_resources() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: registry.example.com/app:1.0}\n";
    let source = Arc::new(SourceFile::new("r.yaml", text));
    let resources = crate::manifest::read_manifests(&source, Limits::default()).resources;
    let responses: Vec<_> = engine()
        .validate(&resources[0], &Request::default())
        .into_iter()
        .flat_map(|p| p.rules)
        .collect();
    assert!(responses.is_empty(), "{responses:?}");
}
