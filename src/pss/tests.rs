//! Unit tests: every control, passing and failing, at each level where it applies.

use std::sync::Arc;

use super::*;
use crate::manifest::read_manifests;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn resource(text: &str) -> Resource {
    let source = Arc::new(SourceFile::new("r.yaml", text));
    read_manifests(&source, Limits::default())
        .resources
        .remove(0)
}

fn body(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn run(rule: &str, pod: &str) -> PssVerdict {
    validate("r", &body(rule), &resource(pod))
}

#[test]
fn host_network_fails_baseline() {
    let v = run(
        "{level: baseline, version: latest}",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: nginx}]\n",
    );
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.message,
        "Validation rule 'r' failed. It violates PodSecurity \"baseline:latest\": (Forbidden reason: host namespaces, field error list: [spec.hostNetwork is forbidden, forbidden values found: true])"
    );
    assert_eq!(v.path, Some(vec!["spec".into(), "hostNetwork".into()]));
}
