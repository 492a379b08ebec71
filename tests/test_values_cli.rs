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

// Values overriding request.object with classic mutate rules
// (testdata/test/values-object-mutate): each mutate policy matches and patches the object
// with its values merged, a patch hands a copy on that later contexts merge into (p1's
// patched resource gets p2's values and the global value back over its own patch), and the
// UPDATE run starts from the resource as the default run left it. The v1.19.0 binary's rows.
#[test]
fn object_values_meet_mutate_rules_as_upstream() {
    let run = kpol_test(&[&fixture("values-object-mutate"), "--detailed-results"]);
    let seen: Vec<(String, String, bool, String)> = run
        .rows()
        .into_iter()
        .map(|r| (r.policy, r.actual, r.ok, r.message))
        .collect();
    let row = |policy: &str, actual: &str, message: &str| {
        (
            policy.to_owned(),
            actual.to_owned(),
            true,
            message.to_owned(),
        )
    };
    let mutated = "mutated ConfigMap/cm in namespace default";
    assert_eq!(
        seen,
        [
            row("p1", "pass", mutated),
            row("p2", "pass", mutated),
            row(
                "p3",
                "fail",
                "op=CREATE team=a x=one y=two a1=none a2=one-two-three"
            ),
            row(
                "p3",
                "skip",
                "skipping the rule evaluation as pre-existing violations are allowed"
            ),
            row("p2", "pass", mutated),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// Values `subresources` (testdata/test/values-subresources): a mapped kind is matched as
// its parent kind with the subresource (`Deployment/scale`, `*/scale`, `Pod/exec`), neither
// its own kind nor the bare parent kind; an unmapped version of the kind is matched as
// itself; exceptions and mutate rules see the same kind; request.object stays the resource.
// Every outcome is the v1.19.0 binary's.
#[test]
fn mapped_subresource_kinds_match_as_their_parent() {
    let run = kpol_test(&[&fixture("values-subresources"), "--detailed-results"]);
    let seen: Vec<(String, String, String, bool)> = run
        .rows()
        .into_iter()
        .map(|r| (r.rule, r.resource, r.actual, r.ok))
        .collect();
    let web = "autoscaling/v1/Scale/default/web";
    let other = "autoscaling/v2/Scale/default/other";
    let exec = "v1/PodExecOptions/default/execpod";
    let row = |rule: &str, resource: &str, actual: &str| {
        (
            rule.to_owned(),
            resource.to_owned(),
            actual.to_owned(),
            true,
        )
    };
    assert_eq!(
        seen,
        [
            row("sub", web, "fail"),
            row("parent", web, "excluded"),
            row("own", web, "excluded"),
            row("wildcard", web, "fail"),
            row("other-group", web, "excluded"),
            row("excepted", web, "skip"),
            row("sub", other, "excluded"),
            row("own", other, "fail"),
            row("mark", web, "pass"),
            row("exec", exec, "fail"),
            row("pods", exec, "excluded"),
        ],
        "{}",
        run.stdout
    );
    let message = |rule: &str| {
        run.rows()
            .into_iter()
            .find(|r| r.rule == rule)
            .map(|r| r.message)
            .unwrap()
    };
    // The CLI's context has no request.kind or request.subResource.
    assert_eq!(message("wildcard"), "kind=none sub=none object=Scale");
    assert_eq!(message("exec"), "no exec into nginx");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// In cluster mode (`clusterResources`) upstream ignores the mappings: the Scale is its own
// kind again.
#[test]
fn subresource_mappings_are_ignored_in_cluster_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture("values-subresources");
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, tmp.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        tmp.path().join("cluster.yaml"),
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: ClusterResource\nmetadata:\n  name: c\nspec:\n  resources:\n  - apiVersion: v1\n    kind: Namespace\n    metadata:\n      name: default\n",
    )
    .unwrap();
    let test = tmp.path().join("kyverno-test.yaml");
    let text = std::fs::read_to_string(&test).unwrap().replace(
        "resources: [resources.yaml]\n",
        "resources: [resources.yaml]\nclusterResources: [cluster.yaml]\n",
    );
    std::fs::write(&test, text).unwrap();
    let run = kpol_test(&[tmp.path().to_str().unwrap()]);
    let actual = |rule: &str, resource: &str| {
        run.rows()
            .into_iter()
            .find(|r| r.rule == rule && r.resource == resource)
            .map(|r| r.actual)
            .unwrap()
    };
    let web = "autoscaling/v1/Scale/default/web";
    assert_eq!(actual("sub", web), "excluded", "{}", run.stdout);
    assert_eq!(actual("own", web), "fail", "{}", run.stdout);
    assert_eq!(
        actual("exec", "v1/PodExecOptions/default/execpod"),
        "excluded"
    );
}

// A mapping whose `subresource.name` has no `/<subresource>` part is refused where it is
// written (upstream crashes on it once a resource has the kind).
#[test]
fn a_subresource_name_without_a_subresource_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fixture("values-subresources");
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, tmp.path().join(f.file_name().unwrap())).unwrap();
    }
    let values = tmp.path().join("values.yaml");
    let text = std::fs::read_to_string(&values)
        .unwrap()
        .replace("name: deployments/scale", "name: scale");
    std::fs::write(&values, text).unwrap();
    let out = common::kpol(&["test", tmp.path().to_str().unwrap()]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("values.yaml:7:")
            && all.contains(r#"subresource.name "scale" is not <resource>/<subresource>"#),
        "{all}"
    );
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

// `kpol check -f`: global `request.object…` values are merged into each resource before
// matching, as `kyverno apply --values-file` does (v1.19.0: the selector then matches and the
// rule fails with `team=a`); after a mutate rule they are merged again (the validate rule
// sees `team=a` over the patched `team: b`).
#[test]
fn check_merges_global_object_values_into_the_resource() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_owned()
    };
    let policy = write(
        "policy.yaml",
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: mark\nspec:\n  rules:\n  - name: m\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          labels: {team: b}\n---\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: team\nspec:\n  rules:\n  - name: v\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n          selector:\n            matchLabels: {team: a}\n    validate:\n      failureAction: Audit\n      message: \"team={{ request.object.metadata.labels.team }}\"\n      deny: {}\n",
    );
    let resource = write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n",
    );
    let values = write(
        "values.yaml",
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nglobalValues:\n  request.object.metadata.labels.team: a\n",
    );
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--no-config", "--format", "concise", "-p", &policy];
        args.push(&resource);
        args.extend_from_slice(extra);
        let out = common::kpol(&args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = check(&["-f", &values]);
    assert!(text.contains("team/v: team=a"), "{text}");
    assert!(text.contains("fail: 1"), "{text}");
    assert_eq!(code, Some(1), "{text}");
    // Without the values the selector does not match (the patch sets `team: b`).
    let (code, text) = check(&[]);
    assert!(!text.contains("team/v"), "{text}");
    assert_eq!(code, Some(0), "{text}");
}

// A UserInfo file's `userInfo.uid` and `userInfo.extra` reach `request.userInfo`
// (testdata/test/userinfo-extra, rows as Kyverno v1.19.0 gives them): with the file the deny
// conditions on both see the values and the rule passes; without it `request.userInfo` is
// absent and the rule errors with the CLI's message.
#[test]
fn userinfo_uid_and_extra_reach_the_request() {
    let run = kpol_test(&[&fixture("userinfo-extra"), "--detailed-results"]);
    let rows = run.rows();
    let seen: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.actual.as_str(), r.message.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("pass", "validation rule 'uid-and-extra' passed."),
            (
                "error",
                "failed to check deny conditions: failed to substitute variables in condition key: failed to resolve request.userInfo.uid at path : JMESPath query failed: Unknown key \"userInfo\" in path"
            ),
        ]
    );
    assert!(rows.iter().all(|r| r.ok), "{}", run.stdout);
    assert_eq!(run.code, Some(0));
}

// A test-file field kpol does not evaluate (`checks`, newer than v1.19, where the CLI refuses
// the file as an unknown field) makes each row of that test not ok, naming it — never a pass.
#[test]
fn an_unevaluated_test_field_is_a_row_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(&fixture("userinfo-extra")).to_owned();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let mut text = std::fs::read_to_string(&p).unwrap();
        if p.ends_with("kyverno-test.yaml") {
            text = text.replacen("results:", "checks:\n- match: {}\nresults:", 1);
        }
        std::fs::write(tmp.path().join(p.file_name().unwrap()), text).unwrap();
    }
    let run = kpol_test(&[tmp.path().to_str().unwrap()]);
    let rows = run.rows();
    assert_eq!(rows.len(), 2, "{}", run.stdout);
    assert!(!rows[0].ok, "{:?}", rows[0]);
    assert_eq!(rows[0].reason, "unsupported: checks");
    // The other test of the file has no `checks` and is unaffected.
    assert!(rows[1].ok, "{:?}", rows[1]);
    assert_eq!(run.code, Some(1));
}
