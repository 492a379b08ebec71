//! Row matching (cli-compat.md §8) on hand-built engine responses.

use super::*;

fn outcome(rule: &str, status: Status) -> RuleOutcome {
    RuleOutcome {
        rule: rule.to_owned(),
        status,
        message: String::new(),
        unsupported: None,
        generated: None,
        patched: None,
        target: None,
    }
}

fn run(kind: &str, ns: &str, name: &str, responses: Vec<Response>) -> ResourceRun {
    ResourceRun {
        api_version: "v1".to_owned(),
        kind: kind.to_owned(),
        namespace: ns.to_owned(),
        name: name.to_owned(),
        responses,
    }
}

fn resp(policy: &str, unscored: bool, rules: Vec<RuleOutcome>) -> Response {
    Response {
        policy: policy.to_owned(),
        unscored,
        ruleless: false,
        rules,
    }
}

fn entry(policy: &str, rule: &str, resources: &[&str], result: &str) -> ResultEntry {
    ResultEntry {
        policy: policy.to_owned(),
        rule: rule.to_owned(),
        resources: resources.iter().map(|s| (*s).to_owned()).collect(),
        result: result.to_owned(),
        ..ResultEntry::default()
    }
}

fn cx<'a>(invalid: &'a [(String, String)], evaluated: &'a [String]) -> Context<'a> {
    Context {
        invalid,
        unsupported: &[],
        unsupported_inputs: &[],
        evaluated,
        expected: &[],
    }
}

fn summary(rows: &[Row]) -> Vec<(String, String, bool, Count)> {
    rows.iter()
        .map(|r| (r.resource.clone(), r.reason.clone(), r.ok, r.count))
        .collect()
}

#[test]
fn names_and_namespaced_names_select_resources_else_all() {
    let runs = vec![
        run(
            "Pod",
            "a",
            "web",
            vec![resp("p", false, vec![outcome("r", Status::Pass)])],
        ),
        run(
            "Pod",
            "b",
            "web",
            vec![resp("p", false, vec![outcome("r", Status::Fail)])],
        ),
    ];
    let evaluated = ["p".to_owned()];
    let cx = cx(&[], &evaluated);
    let rows = rows_for(&entry("p", "r", &["b/web"], "fail"), &runs, &[], &cx);
    assert_eq!(
        summary(&rows),
        [("v1/Pod/b/web".into(), "Ok".into(), true, Count::Pass)]
    );
    let rows = rows_for(&entry("p", "r", &["web"], "pass"), &runs, &[], &cx);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].reason, "Want pass, got fail");
    // A typo checks every resource (§8.2).
    assert_eq!(
        rows_for(&entry("p", "r", &["wbe"], "pass"), &runs, &[], &cx).len(),
        2
    );
}

// `rule: r` selects autogen-r and autogen-cronjob-r; `ns/policy` matches by name.
#[test]
fn autogen_rule_names_and_namespaced_policy_names() {
    let runs = vec![run(
        "CronJob",
        "d",
        "job",
        vec![resp(
            "p",
            false,
            vec![
                outcome("autogen-cronjob-r", Status::Fail),
                outcome("other", Status::Pass),
            ],
        )],
    )];
    let evaluated = ["p".to_owned()];
    let rows = rows_for(
        &entry("ns/p", "r", &["job"], "fail"),
        &runs,
        &[],
        &cx(&[], &evaluated),
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].rule.as_str(), rows[0].ok),
        ("autogen-cronjob-r", true)
    );
    assert_eq!(rows[0].policy, "ns/p");
}

// A policy with mutate and validate rules: the mutate-phase response comes first and adds
// one Excluded row before the real one (§8.3).
#[test]
fn excluded_row_once_per_resource_then_real_rows() {
    let runs = vec![run(
        "Pod",
        "d",
        "web",
        vec![
            resp("p", false, vec![outcome("m", Status::Pass)]),
            resp("p", false, vec![outcome("v", Status::Fail)]),
            resp("p", false, vec![]),
        ],
    )];
    let evaluated = ["p".to_owned()];
    let rows = rows_for(
        &entry("p", "v", &[], "fail"),
        &runs,
        &[],
        &cx(&[], &evaluated),
    );
    let reasons: Vec<&str> = rows.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(reasons, ["Excluded", "Ok"]);
    assert_eq!(rows[0].count, Count::Skip);
}

#[test]
fn unscored_fail_is_warn_and_expected_skip_counts_as_skip() {
    let runs = vec![run(
        "Pod",
        "d",
        "web",
        vec![
            resp("u", true, vec![outcome("r", Status::Fail)]),
            resp("s", false, vec![outcome("r", Status::Skip)]),
        ],
    )];
    let evaluated = ["u".to_owned(), "s".to_owned()];
    let cx = cx(&[], &evaluated);
    let rows = rows_for(&entry("u", "r", &[], "warn"), &runs, &[], &cx);
    assert_eq!((rows[0].actual.as_str(), rows[0].ok), ("warn", true));
    let rows = rows_for(&entry("s", "r", &[], "skip"), &runs, &[], &cx);
    assert_eq!(rows[0].count, Count::Skip);
}

#[test]
fn no_response_is_invalid_policy_or_not_found() {
    let runs = vec![run("Pod", "d", "web", vec![])];
    let invalid = [("bad".to_owned(), "spec: Required value".to_owned())];
    let cx = cx(&invalid, &[]);
    let rows = rows_for(&entry("bad", "r", &[], "fail"), &runs, &[], &cx);
    assert_eq!(
        (rows[0].result_word(), rows[0].reason.as_str()),
        ("Skip", "Invalid Policy")
    );
    let rows = rows_for(&entry("gone", "r", &[], "pass"), &runs, &[], &cx);
    assert_eq!(
        (rows[0].result_word(), rows[0].reason.as_str()),
        ("Fail", "Not found")
    );
}

// Unsupported is never a pass, whatever was expected.
#[test]
fn unsupported_rules_and_policies_fail() {
    let mut o = outcome("r", Status::Error);
    o.unsupported = Some("deny".to_owned());
    let runs = vec![run("Pod", "d", "web", vec![resp("p", false, vec![o])])];
    let evaluated = ["p".to_owned()];
    let rows = rows_for(
        &entry("p", "r", &[], "error"),
        &runs,
        &[],
        &cx(&[], &evaluated),
    );
    assert_eq!(
        (rows[0].ok, rows[0].reason.as_str()),
        (false, "unsupported: deny")
    );
    let unsupported = [("vp".to_owned(), "cel (ValidatingPolicy)".to_owned())];
    let cx = Context {
        unsupported: &unsupported,
        ..cx(&[], &evaluated)
    };
    let rows = rows_for(&entry("vp", "", &["web"], "pass"), &runs, &[], &cx);
    assert_eq!(rows[0].reason, "unsupported: cel (ValidatingPolicy)");
    assert_eq!(rows[0].count, Count::Fail);
}

// `resourceSpecs` select by apiVersion, namespace and name, but only when the entry has a
// `resources` key (cli-compat.md §15; `commands/test/output.go`).
#[test]
fn resource_specs_select_only_with_a_resources_key() {
    let runs = vec![
        run(
            "Pod",
            "a",
            "web",
            vec![resp("p", false, vec![outcome("r", Status::Pass)])],
        ),
        run(
            "Pod",
            "b",
            "web",
            vec![resp("p", false, vec![outcome("r", Status::Fail)])],
        ),
    ];
    let evaluated = ["p".to_owned()];
    let cx = cx(&[], &evaluated);
    let spec = |version: &str| {
        (
            String::new(),
            version.to_owned(),
            "b".to_owned(),
            "web".to_owned(),
        )
    };
    let mut e = entry("p", "r", &[], "fail");
    e.resource_specs = vec![spec("v1")];
    e.resources_given = true;
    let rows = rows_for(&e, &runs, &[], &cx);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].resource, "v1/Pod/b/web");
    assert!(rows[0].ok);
    // Another version selects nothing: every resource is checked.
    e.resource_specs = vec![spec("v2")];
    assert_eq!(rows_for(&e, &runs, &[], &cx).len(), 2);
    // Without a `resources` key the specs are not read.
    e.resource_specs = vec![spec("v1")];
    e.resources_given = false;
    assert_eq!(rows_for(&e, &runs, &[], &cx).len(), 2);
}

// A patched resource missing from `patchedResources` drops the row, unless
// `failOnMissingResources` (`commands/test/output.go`).
#[test]
fn fail_on_missing_resources_fails_a_missing_patched_resource() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("patched.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: a}\n",
    )
    .unwrap();
    let patched = kpol::yaml::parse_documents(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: a}\n",
        kpol::yaml::Limits::default(),
    )
    .unwrap()
    .remove(0)
    .root;
    let mut o = outcome("r", Status::Pass);
    o.patched = Some(patched);
    let runs = vec![run("Pod", "a", "web", vec![resp("p", false, vec![o])])];
    let evaluated = ["p".to_owned()];
    let cx = cx(&[], &evaluated);
    let mut e = entry("p", "r", &["web"], "pass");
    e.patched_resources = Some(file.display().to_string());
    // Dropped: the policy's response gives no row, so it reads as Excluded.
    let rows = rows_for(&e, &runs, &[], &cx);
    assert!(
        rows.iter().all(|r| r.reason != "Resource error"),
        "{rows:?}"
    );
    e.fail_on_missing_resources = true;
    let rows = rows_for(&e, &runs, &[], &cx);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].reason, "Resource error");
    assert!(!rows[0].ok);
    assert!(
        rows[0].message.contains("web not found in manifest"),
        "{}",
        rows[0].message
    );
}

// `isRulelessPolicyKind`: for a CEL kind the entry's `rule` is ignored and every response of
// the policy is checked; for a ClusterPolicy it selects.
#[test]
fn a_ruleless_kind_ignores_the_entrys_rule() {
    let mut cel = resp("vp", false, vec![outcome("", Status::Fail)]);
    cel.ruleless = true;
    let runs = vec![run("Pod", "a", "web", vec![cel])];
    let evaluated = ["vp".to_owned()];
    let rows = rows_for(
        &entry("vp", "some-rule", &["web"], "fail"),
        &runs,
        &[],
        &cx(&[], &evaluated),
    );
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].actual.as_str(), rows[0].ok), ("fail", true));
    let classic = vec![run(
        "Pod",
        "a",
        "web",
        vec![resp("vp", false, vec![outcome("other", Status::Fail)])],
    )];
    let rows = rows_for(
        &entry("vp", "some-rule", &["web"], "fail"),
        &classic,
        &[],
        &cx(&[], &evaluated),
    );
    assert_eq!(rows[0].actual, "excluded");
}

// A payload is selected by its name with at most one slash; a name of three or more parts
// selects nothing (`output.go` compares `name` and `ns/name` only), so every key is checked.
#[test]
fn payload_names_with_two_slashes_select_every_payload() {
    let payload = |name: &str, status: Status| ResourceRun {
        api_version: String::new(),
        kind: String::new(),
        namespace: String::new(),
        name: name.to_owned(),
        responses: vec![resp("p", false, vec![outcome("p", status)])],
    };
    let runs = vec![
        payload("d/a.json", Status::Pass),
        payload("x/y/b.json", Status::Fail),
    ];
    let evaluated = ["p".to_owned()];
    let cx = cx(&[], &evaluated);
    let one = rows_for(&entry("p", "", &["d/a.json"], "pass"), &runs, &[], &cx);
    assert_eq!(
        summary(&one),
        [("d/a.json".to_owned(), "Ok".to_owned(), true, Count::Pass)]
    );
    let all = rows_for(&entry("p", "", &["x/y/b.json"], "fail"), &runs, &[], &cx);
    let names: Vec<&str> = all.iter().map(|r| r.resource.as_str()).collect();
    assert_eq!(names, ["d/a.json", "x/y/b.json"]);
}
