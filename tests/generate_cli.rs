//! `kpol generate` and generate rows of `kpol test`, end to end on testdata/generate.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const DENY_POLICY: &str = "testdata/generate/default-deny/policy.yaml";
const DENY_TREE: &str = "testdata/generate/default-deny/manifests";

/// The must-show: two Namespaces, two NetworkPolicies, each in its namespace, each
/// traced to its trigger's file and line.
#[test]
fn default_deny_for_every_namespace() {
    let out = kpol(&["generate", DENY_TREE, "-p", DENY_POLICY]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let docs: Vec<&str> = stdout.split("---\n").filter(|d| !d.is_empty()).collect();
    assert_eq!(docs.len(), 2, "{stdout}");
    for (doc, ns, at) in [
        (docs[0], "team-a", "team-a.yaml:1)"),
        (docs[1], "team-b", "team-b.yaml:10)"),
    ] {
        let first = doc.lines().next().unwrap_or("");
        assert!(
            first.starts_with("# policy add-networkpolicy, rule default-deny, trigger Namespace")
                && first.contains(&format!("Namespace {ns} ("))
                && first.contains(at),
            "{first}"
        );
        assert!(doc.contains("kind: NetworkPolicy\n"), "{doc}");
        assert!(doc.contains(&format!("  namespace: {ns}\n")), "{doc}");
        assert!(doc.contains("  name: default-deny\n"), "{doc}");
    }
}

#[test]
fn json_and_output_dir() {
    let out = kpol(&["generate", DENY_TREE, "-p", DENY_POLICY, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v["generated"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[1]["trigger"]["line"], 10);
    assert_eq!(items[1]["synchronize"], true);
    assert_eq!(items[1]["resource"]["metadata"]["namespace"], "team-b");
    assert!(v["findings"].as_array().unwrap().is_empty());

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = kpol(&["generate", DENY_TREE, "-p", DENY_POLICY, "-o", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for ns in ["team-a", "team-b"] {
        let p = dir
            .path()
            .join(ns)
            .join("networkpolicy.networking.k8s.io")
            .join("default-deny.yaml");
        let body = std::fs::read_to_string(&p).unwrap();
        assert!(body.starts_with("# policy add-networkpolicy"), "{body}");
    }
}

/// A clone source that is not among the inputs is a finding naming it (exit 1); given, the
/// copy lands in the trigger's namespace.
#[test]
fn clone_source_missing_then_given() {
    let policy = "testdata/generate/clone/policy.yaml";
    let ns = "testdata/generate/clone/namespace.yaml";
    let out = kpol(&["generate", ns, "-p", policy]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.contains("clone source not provided: v1 Secret regcred in namespace default"),
        "{err}"
    );
    let out = kpol(&[
        "generate",
        ns,
        "testdata/generate/clone/regcred.yaml",
        "-p",
        policy,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("  namespace: team-a\n"), "{stdout}");
    assert!(
        stdout.contains(".dockerconfigjson: eyJhdXRocyI6e319"),
        "{stdout}"
    );
    assert!(!stdout.contains("resourceVersion"), "{stdout}");
}

/// `kpol test` compares generatedResource, with clone sources from cloneSourceResource.
#[test]
fn test_files_compare_generated_resources() {
    let out = kpol(&["test", "testdata/generate/test", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("\"resource\": \"regcred\""), "{stdout}");
}

/// A PolicyException covering the rule for team-b leaves only team-a's NetworkPolicy.
#[test]
fn exception_skips_a_trigger() {
    let out = kpol(&[
        "generate",
        DENY_TREE,
        "-p",
        DENY_POLICY,
        "-e",
        "testdata/generate/default-deny/exception.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v["generated"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["resource"]["metadata"]["namespace"], "team-a");
}

/// A generated resource that differs from `generatedResource` fails the row (`Resource diff`);
/// an expected file without it fails with `Resource error`.
#[test]
fn test_files_report_generated_mismatches() {
    let out = kpol(&[
        "test",
        "testdata/generate/test-mismatch",
        "--detailed-results",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Resource diff"), "{stdout}");
    assert!(
        stdout.contains("resource with name default-deny not found in manifest"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 tests passed and 2 tests failed"),
        "{stdout}"
    );
}

const GPOL_POLICY: &str = "testdata/generate/gpol/policy.yaml";
const GPOL_TREE: &str = "testdata/generate/gpol/manifests";

/// A GeneratingPolicy previews like a generate rule: each object headed by the policy (its
/// name is the rule's), the trigger and its file:line; the expression's copy of the secret
/// comes from the inputs (`resource.Get`), the template's NetworkPolicy from the trigger;
/// kube-system fails the match condition and gets nothing.
#[test]
fn generating_policy_previews_with_its_trigger() {
    let out = kpol(&["generate", GPOL_TREE, "-p", GPOL_POLICY]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let docs: Vec<&str> = stdout.split("---\n").filter(|d| !d.is_empty()).collect();
    assert_eq!(docs.len(), 2, "{stdout}");
    for doc in &docs {
        let first = doc.lines().next().unwrap_or("");
        assert_eq!(
            first,
            "# policy namespace-defaults, rule namespace-defaults, trigger Namespace team-a \
             (testdata/generate/gpol/manifests/team-a.yaml:2), synchronize: true",
            "{doc}"
        );
        assert!(doc.contains("  namespace: team-a\n"), "{doc}");
    }
    assert!(docs[0].contains("kind: Secret\n"), "{}", docs[0]);
    assert!(
        docs[0].contains("  .dockerconfigjson: e30=\n"),
        "{}",
        docs[0]
    );
    assert!(docs[1].contains("kind: NetworkPolicy\n"), "{}", docs[1]);
    assert!(docs[1].contains("    team: a\n"), "{}", docs[1]);
    assert!(!stdout.contains("kube-system"), "{stdout}");

    let out = kpol(&["generate", GPOL_TREE, "-p", GPOL_POLICY, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v["generated"].as_array().unwrap();
    let modes: Vec<&str> = items.iter().map(|i| i["mode"].as_str().unwrap()).collect();
    assert_eq!(modes, ["expression", "template"]);
    assert_eq!(items[0]["rule"], "namespace-defaults");
}

/// Without the secret among the inputs, `resource.Get` finds nothing and the policy errors:
/// a finding on the trigger (exit 1), nothing generated.
#[test]
fn generating_policy_without_its_source_is_a_finding() {
    let out = kpol(&[
        "generate",
        "testdata/generate/gpol/manifests/team-a.yaml",
        "-p",
        GPOL_POLICY,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("team-a.yaml:2:1: error namespace-defaults: failed to evaluate policy"),
        "{err}"
    );
}

/// `kpol test` rows for a GeneratingPolicy: one per object, any of `generatedResources`
/// matching passes; an expected file without the object is `Resource error`.
#[test]
fn generating_policy_test_rows() {
    let out = kpol(&["test", "testdata/generate/gpol/test", "--detailed-results"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("2 tests passed and 2 tests failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("resource with name regcred not found in manifest"),
        "{stdout}"
    );
}
