//! `kpol test` on mutate-existing rules and policies (issue #23 item 3, #22 item 1): the
//! test's `targetResources` (and the other objects of the CLI's fake client) are the
//! targets; rows compare the patched targets as Kyverno v1.19's CLI does
//! (`cmd/cli/kubectl-kyverno/commands/test/output.go`, the `Target` map), and the trigger is
//! never changed by such a rule. Fixtures: testdata/cluster/mutate-existing, mpol-existing.
//! Also verifyImages rules offline (#23 item 7, testdata/verify-images/offline): digests are
//! checked, what needs a registry is an error.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

/// `(rule, resource, expected, actual, ok, message)` of a row.
type Row = (String, String, String, String, bool, String);

fn run(dir: &Path) -> (Option<i32>, Vec<Row>) {
    let run = common::kpol_test(&[dir.to_str().unwrap(), "--detailed-results"]);
    let rows = run
        .rows()
        .into_iter()
        .map(|r| (r.rule, r.resource, r.expected, r.actual, r.ok, r.message))
        .collect();
    (run.code, rows)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cluster")
        .join(name)
}

/// A copy of a fixture directory with `file` rewritten by `edit`.
fn copy_with(name: &str, file: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = if p.ends_with(file) { edit(&text) } else { text };
        std::fs::write(tmp.path().join(p.file_name().unwrap()), text).unwrap();
    }
    tmp
}

#[test]
fn cluster_policy_targets_are_patched_and_compared() {
    let (code, rows) = run(&fixture("mutate-existing"));
    let brief: Vec<(&str, &str, &str, bool)> = rows
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str(), r.3.as_str(), r.4))
        .collect();
    assert_eq!(
        brief,
        [
            // Both blue Secrets of the trigger's namespace, compared with patched.yaml.
            (
                "label-team-secrets",
                "v1/Secret/team-a/blue-db",
                "pass",
                true
            ),
            (
                "label-team-secrets",
                "v1/Secret/team-a/frozen",
                "pass",
                true
            ),
            // The target precondition on `target.metadata.name`.
            (
                "thaw-frozen-secret",
                "v1/ConfigMap/team-a/team-settings",
                "skip",
                true
            ),
            // A named target that is not there: the fake client's not-found error.
            (
                "label-missing-secret",
                "v1/ConfigMap/team-a/team-settings",
                "error",
                true
            ),
            // The trigger validated as written (it was "mutated before validation" before).
            (
                "trigger-untouched",
                "v1/ConfigMap/team-a/team-settings",
                "pass",
                true
            ),
        ],
        "{rows:?}"
    );
    assert_eq!(rows[0].5, "mutated Secret/blue-db in namespace team-a");
    assert_eq!(rows[3].5, ": secrets \"ghost\" not found");
    assert_eq!(code, Some(0));
}

#[test]
fn a_target_that_differs_from_patched_resources_fails() {
    let dir = copy_with("mutate-existing", "patched.yaml", |t| {
        t.replacen("copy-of: blue-db", "copy-of: someone-else", 1)
    });
    let (code, rows) = run(dir.path());
    let bad: Vec<&Row> = rows.iter().filter(|r| !r.4).collect();
    assert_eq!(bad.len(), 1, "{rows:?}");
    assert_eq!(bad[0].1, "v1/Secret/team-a/blue-db");
    assert!(bad[0].5.contains("someone-else"), "{}", bad[0].5);
    assert_eq!(code, Some(1));
}

#[test]
fn a_patched_target_missing_from_patched_resources_fails() {
    // Upstream drops a trigger's row whose resource is not in the file, but fails a
    // target's.
    let dir = copy_with("mutate-existing", "patched.yaml", |t| {
        t.split("---\n").next().unwrap().to_owned()
    });
    let (_, rows) = run(dir.path());
    let frozen = rows
        .iter()
        .find(|r| r.1 == "v1/Secret/team-a/frozen")
        .expect("frozen row");
    assert!(!frozen.4, "{frozen:?}");
    assert!(frozen.5.contains("not found in manifest"), "{}", frozen.5);
}

#[test]
fn without_target_resources_nothing_is_patched() {
    let dir = copy_with("mutate-existing", "kyverno-test.yaml", |t| {
        t.replace("targetResources:\n- secrets.yaml\n", "")
    });
    let (_, rows) = run(dir.path());
    // No Secret exists: the fake discovery knows no such kind (`not found`), so each rule
    // answers with an error on the trigger and no target row exists; the first entry's
    // trigger rows are dropped (the ConfigMap is not in patched.yaml), as upstream.
    assert!(rows.iter().all(|r| !r.1.contains("Secret")), "{rows:?}");
    let brief: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r.0.as_str(), r.3.as_str(), r.5.as_str()))
        .collect();
    assert_eq!(
        brief,
        [
            ("thaw-frozen-secret", "error", ": not found"),
            ("label-missing-secret", "error", ": not found"),
            (
                "trigger-untouched",
                "pass",
                "validation rule 'trigger-untouched' passed."
            ),
        ]
    );
}

#[test]
fn mutating_policy_targets_follow_target_match_constraints() {
    let (code, rows) = run(&fixture("mpol-existing"));
    let brief: Vec<(&str, &str, bool)> = rows
        .iter()
        .map(|r| (r.1.as_str(), r.3.as_str(), r.4))
        .collect();
    assert_eq!(
        brief,
        [
            ("v1/ConfigMap/shop/shop-config", "pass", true),
            ("v1/ConfigMap/shop/shop-config", "pass", true),
        ],
        "{rows:?}"
    );
    assert_eq!(code, Some(0));
    // In another namespace the targetMatchConditions (which read the trigger's request) and
    // the expression's list select no target: no target key, and the trigger's rows are
    // dropped (the Deployment is in neither patched file).
    let dir = copy_with("mpol-existing", "trigger.yaml", |t| {
        t.replace("namespace: shop", "namespace: elsewhere")
    });
    let (_, rows) = run(dir.path());
    assert!(rows.is_empty(), "{rows:?}");
}

#[test]
fn verify_images_without_a_registry() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/verify-images/offline");
    let (code, rows) = run(&dir);
    let decided: Vec<(&str, &str, &str, bool)> = rows
        .iter()
        .filter(|r| r.3 != "excluded")
        .map(|r| (r.0.as_str(), r.1.as_str(), r.3.as_str(), r.4))
        .collect();
    assert_eq!(
        decided,
        [
            ("digest-only", "v1/Pod/shop/tagged", "fail", true),
            ("digest-only", "v1/Pod/shop/pinned", "pass", true),
            ("resolve-digest", "v1/Pod/shop/tagged", "error", true),
            ("must-be-signed", "v1/Pod/shop/pinned", "error", true),
            ("must-be-signed", "v1/Pod/shop/pinned", "error", true),
            ("signed-and-resolved", "v1/Pod/shop/tagged", "error", true),
            ("signed-and-resolved", "v1/Pod/shop/tagged", "error", true),
        ],
        "{rows:?}"
    );
    // A tag with attestors: the digest's fetch fails before the verification, as in
    // Kyverno v1.19.0.
    let signed: Vec<&str> = rows
        .iter()
        .filter(|r| r.0 == "signed-and-resolved")
        .map(|r| r.5.as_str())
        .collect();
    assert!(
        signed[0].starts_with("failed to update digest: the digest of registry.example.com"),
        "{signed:?}"
    );
    assert!(
        signed[1].starts_with("failed to verify image registry.example.com/shop/app:1.4"),
        "{signed:?}"
    );
    let msg = |rule: &str| {
        rows.iter()
            .find(|r| r.0 == rule && r.3 != "excluded")
            .map(|r| r.5.clone())
            .unwrap()
    };
    assert_eq!(
        msg("digest-only"),
        "missing digest for registry.example.com/shop/app:1.4"
    );
    assert!(
        msg("resolve-digest").starts_with(
            "failed to update digest: the digest of registry.example.com/shop/app:1.4"
        )
    );
    assert!(msg("must-be-signed").contains("registry.example.com/shop/app@sha256:"));
    assert_eq!(code, Some(0));
    // A signed-image rule expected to pass is never passed offline.
    let tmp = tempfile::tempdir().unwrap();
    for f in ["policy.yaml", "resources.yaml", "kyverno-test.yaml"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let text = if f == "kyverno-test.yaml" {
            text.replace(
                "  resources: [shop/pinned]\n  result: error",
                "  resources: [shop/pinned]\n  result: pass",
            )
        } else {
            text
        };
        std::fs::write(tmp.path().join(f), text).unwrap();
    }
    let (code, rows) = run(tmp.path());
    assert!(
        rows.iter().any(|r| r.0 == "must-be-signed" && !r.4),
        "{rows:?}"
    );
    assert_eq!(code, Some(1));
}

/// verifyImages `imageExtractors` (testdata/verify-images/extractors, rows as the Kyverno
/// v1.19.0 CLI gives them): a list walked with `*`, a named `value` field mapped by
/// `jmesPath`; a tag either finds fails `verifyDigest`, digests pass, an image no reference
/// matches gives no response.
#[test]
fn verify_images_with_image_extractors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/verify-images/extractors");
    let (code, rows) = run(&dir);
    let decided: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|r| r.3 != "excluded")
        .map(|r| (r.1.as_str(), r.3.as_str(), r.5.as_str()))
        .collect();
    assert_eq!(
        decided,
        [
            ("example.com/v1/Task/ci/pinned", "pass", "image verified"),
            (
                "example.com/v1/Task/ci/tagged-step",
                "fail",
                "missing digest for registry.example.com/tools/test:1.0"
            ),
            (
                "example.com/v1/Task/ci/tagged-sidecar",
                "fail",
                "missing digest for registry.example.com/tools/cache:2.1"
            ),
        ],
        "{rows:?}"
    );
    assert!(rows.iter().all(|r| r.4), "{rows:?}");
    assert_eq!(code, Some(0));
}
