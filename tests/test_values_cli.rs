//! `kpol test` with values that override the resource (issue #23 item 4): global and
//! per-resource `request.object…` keys change what the policy matches and reads, as the
//! Kyverno v1.19 CLI's `makePolicyContext` does; `request.oldObject…` keys change an
//! UPDATE's old object. Expected results in the fixtures are the v1.19.0 binary's
//! (testdata/test/values-object, values-object-leak).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol_test;

fn fixture(name: &str) -> String {
    format!("{}/testdata/test/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn object_values_change_matching_and_the_json_context() {
    let run = kpol_test(&[&fixture("values-object"), "--detailed-results"]);
    let rows = run.rows();
    let seen: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r.policy.as_str(),
                r.resource.as_str(),
                r.actual.as_str(),
                r.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            // The global label (a quoted key segment) makes the selector match; the
            // per-resource annotation is read by the rule.
            (
                "team-label",
                "v1/ConfigMap/ns/a",
                "pass",
                "validation rule 'needs-team' passed."
            ),
            ("team-label", "v1/ConfigMap/ns/b", "fail", "owner none"),
            ("old-env", "v1/ConfigMap/ns/a", "fail", "env none -> dev"),
            ("old-env", "v1/ConfigMap/ns/b", "fail", "env prod -> dev"),
            (
                "old-env",
                "v1/ConfigMap/ns/a",
                "pass",
                "validation rule 'env-unchanged' passed."
            ),
            ("old-env", "v1/ConfigMap/ns/b", "fail", "env prod -> dev"),
        ],
        "{}",
        run.stdout
    );
    assert!(rows.iter().all(|r| r.ok), "{}", run.stdout);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// Upstream the values change the test's object in place: a later policy, and the run of a
// declared operation, see what an earlier policy's values set.
#[test]
fn object_values_persist_for_later_policies_and_runs() {
    let run = kpol_test(&[&fixture("values-object-leak")]);
    let seen: Vec<(String, String, bool)> = run
        .rows()
        .into_iter()
        .map(|r| (r.policy, r.actual, r.ok))
        .collect();
    let row = |p: &str, a: &str| (p.to_owned(), a.to_owned(), true);
    assert_eq!(
        seen,
        [
            row("a-first", "pass"),
            row("b-second", "pass"),
            row("c-third", "fail"),
            row("a-first", "fail"),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// A key Go's csv reader refuses stops the test with upstream's message.
#[test]
fn a_key_with_a_bare_quote_stops_the_test() {
    let tmp = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(fixture("values-object")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = text.replace(
            r#"request.object.metadata.labels."example.com/team""#,
            r#"request.object.metadata.labels.ex"ample"#,
        );
        std::fs::write(tmp.path().join(p.file_name().unwrap()), text).unwrap();
    }
    let run = kpol_test(&[tmp.path().to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            r#"failed to apply policies on resource a (failed to add variable to context request.object.metadata.labels.ex\"ample (parse error on line 1, column 34: bare \" in non-quoted-field))"#
        ),
        "{}",
        run.stdout
    );
}

// Values `subresources` map a kind to its parent kind and subresource, which upstream matches
// (`Deployment/scale` selects a Scale) and kpol does not evaluate: the mapped resource's rows
// are `unsupported`, never the `Excluded` pass they would be without the mapping; a resource
// of another kind is evaluated as usual.
#[test]
fn a_mapped_subresource_kind_is_unsupported_not_excluded() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(tmp.path().join(name), text).unwrap();
    write(
        "policy.yaml",
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: replicas\nspec:\n  rules:\n  - name: two\n    match:\n      any:\n      - resources:\n          kinds: [Deployment/scale, ConfigMap]\n    validate:\n      failureAction: Audit\n      message: two replicas\n      pattern:\n        spec:\n          replicas: 2\n",
    );
    write(
        "resources.yaml",
        "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\n  namespace: default\nspec:\n  replicas: 4\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: other\n  namespace: default\n",
    );
    write(
        "values.yaml",
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nsubresources:\n- parentResource:\n    group: apps\n    version: v1\n    kind: Deployment\n    name: deployments\n    namespaced: true\n  subresource:\n    group: autoscaling\n    version: v1\n    kind: Scale\n    name: deployments/scale\n    namespaced: true\n",
    );
    write(
        "kyverno-test.yaml",
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: sub\npolicies: [policy.yaml]\nresources: [resources.yaml]\nvariables: values.yaml\nresults:\n- policy: replicas\n  rule: two\n  resources: [web]\n  result: fail\n- policy: replicas\n  rule: two\n  resources: [other]\n  result: pass\n",
    );
    let run = kpol_test(&[tmp.path().to_str().unwrap()]);
    let seen: Vec<(String, bool, String)> = run
        .rows()
        .into_iter()
        .map(|r| (r.resource, r.ok, r.actual))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "autoscaling/v1/Scale/default/web".to_owned(),
                false,
                "unsupported".to_owned()
            ),
            (
                "v1/Secret/default/other".to_owned(),
                true,
                "excluded".to_owned()
            ),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(run.rows()[0].reason, "unsupported: values subresources");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

// Per-result `operation` (testdata/test-operation): which rules match (`operations`), the
// old object of an UPDATE, and the runs without an operation, as the v1.19.0 binary gives
// them.
#[test]
fn per_result_operations_run_as_upstream() {
    let run = kpol_test(&[
        &format!("{}/testdata/test-operation", env!("CARGO_MANIFEST_DIR")),
        "--detailed-results",
    ]);
    let seen: Vec<(String, String, bool, String)> = run
        .rows()
        .into_iter()
        .map(|r| (r.rule, r.actual, r.ok, r.message))
        .collect();
    let row = |rule: &str, actual: &str, ok: bool, message: &str| {
        (rule.to_owned(), actual.to_owned(), ok, message.to_owned())
    };
    assert_eq!(
        seen,
        [
            row("only-update", "excluded", true, "Excluded"),
            row("only-update", "fail", false, "old=a op=UPDATE"),
            row(
                "on-delete",
                "pass",
                true,
                "validation rule 'on-delete' passed."
            ),
            row("only-update", "excluded", true, "Excluded"),
            row("on-delete", "excluded", true, "Excluded"),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}
