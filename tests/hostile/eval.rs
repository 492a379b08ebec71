//! Evaluation budgets: substitution, JMESPath, CEL and foreach on hostile policies and resources.

use super::*;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A Pod whose name is `{{request.object.metadata.name}}` twice: the message and the deny key
/// that substitute it keep it as text (Kyverno would evaluate it again, doubling it each time).
#[test]
fn self_replicating_name_stays_literal_text() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/hostile/self-replicating-name-policy.yaml",
        "testdata/hostile/self-replicating-name.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "fail[echo-name/echo]: name is {{request.object.metadata.name}}{{request.object.metadata.name}}.\n"
        ),
        "{text}"
    );
}

/// A container named `{{element.name}}` twice, copied by a foreach mutation: the patch holds
/// the name as text.
#[test]
fn foreach_element_name_is_copied_as_text() {
    let o = kpol(&[
        "mutate",
        "-p",
        "testdata/hostile/foreach-element-name-policy.yaml",
        "testdata/hostile/self-replicating-name.yaml",
        "--diff",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("+        value: c-{{element.name}}{{element.name}}\n"),
        "{text}"
    );
}

/// A policy with one rule whose JMESPath grows a string geometrically (nested `replace_all`)
/// and one that passes: the first is a rule error naming the budget, the second still passes,
/// and so does the other file.
#[test]
fn jmespath_growth_is_a_rule_error_and_the_rest_goes_on() {
    let mut grow = "'aa'".to_owned();
    for _ in 0..40 {
        grow = format!("replace_all({grow}, 'a', 'aa')");
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("grow.yaml");
    std::fs::write(
        &policy,
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: grow}}\nspec:\n  rules:\n  - name: grow\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ length({grow}) }}}}\"\n            operator: Equals\n            value: 0\n  - name: fine\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ request.object.metadata.name }}}}\"\n            operator: Equals\n            value: nobody\n"
        ),
    )
    .unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, GOOD_POD).unwrap();
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        policy.to_str().unwrap(),
        "testdata/sample/debug-pod.yaml",
        good.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("error[grow/grow]"), "{text}");
    assert!(
        text.contains("evaluation budget exceeded: more than 16 MiB built"),
        "{text}"
    );
    assert!(
        text.contains("pass: 2, fail: 0, warn: 0, error: 2,"),
        "{text}"
    );
}

/// A message and a deny key with 10,000 variables each: substituted in linear time.
#[test]
fn ten_thousand_variables_in_one_string_are_linear() {
    let vars = vec!["{{ request.object.metadata.name }}"; 10_000].join(" ");
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("many.yaml");
    std::fs::write(
        &policy,
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: many}}\nspec:\n  rules:\n  - name: many\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      message: \"m {vars}\"\n      deny:\n        conditions:\n          any:\n          - key: \"k {vars}\"\n            operator: NotEquals\n            value: \"\"\n"
        ),
    )
    .unwrap();
    let start = Instant::now();
    let o = kpol(&[
        "check",
        "--format",
        "json",
        "-p",
        policy.to_str().unwrap(),
        "testdata/sample/debug-pod.yaml",
    ]);
    let secs = start.elapsed().as_secs_f64();
    let text = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(text.contains(&format!("m {}", vec!["debug"; 10_000].join(" "))));
    // About 2.4 s in a debug build (10,000 variables in each of two strings).
    assert!(secs < 30.0, "took {secs:.1} s");
}

/// `validations: 5` is an invalid policy at the value; the policy's evaluations are errors,
/// never a pass.
#[test]
fn validations_that_are_not_a_list_are_an_invalid_policy() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/hostile/validations-not-a-list-policy.yaml",
        "testdata/sample/debug-pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains("error[invalid-policy]: ValidatingPolicy five: validations must be a list, not number\n --> testdata/hostile/validations-not-a-list-policy.yaml:13:16"),
        "{text}"
    );
    assert!(
        text.contains("pass: 0, fail: 0, warn: 0, error: 1,"),
        "{text}"
    );
}

/// The other fields of the CEL kinds, wrong-typed, in a ValidatingAdmissionPolicy.
#[test]
fn wrong_typed_cel_policy_fields_are_invalid_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("vap.yaml");
    std::fs::write(
        &p,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: vap}\nspec:\n  matchConstraints: [1]\n  matchConditions: {a: 1}\n  variables:\n  - name: v\n    expression: 7\n  validations:\n  - message: no expression\n  auditAnnotations: \"x\"\n",
    )
    .unwrap();
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        p.to_str().unwrap(),
        "testdata/sample/debug-pod.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(!text.contains("CEL syntax error"), "{text}");
    for (what, at) in [
        ("matchConstraints must be a map, not array", "vap.yaml:5:21"),
        (
            "matchConditions must be a list, not object",
            "vap.yaml:6:20",
        ),
        (
            "variables[0].expression must be a string, not number",
            "vap.yaml:9:17",
        ),
        ("validations[0].expression is required", "vap.yaml:11:5"),
        (
            "auditAnnotations must be a list, not string",
            "vap.yaml:12:21",
        ),
    ] {
        assert!(
            text.contains(&format!("ValidatingAdmissionPolicy vap: {what}\n")),
            "{what}: {text}"
        );
        assert!(text.contains(at), "{at}: {text}");
    }
}

/// A ValidatingPolicy whose expression is a 5,000-term chain: invalid-policy at the
/// expression's line:column at load, the same at `-j1` and `-j2` (no stack overflow on a
/// worker), and the other policy still applied.
#[test]
fn long_cel_chain_is_an_invalid_policy_at_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("chain.yaml");
    let chain = vec!["1"; 5_000].join("+");
    std::fs::write(
        &p,
        format!(
            "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {{name: chain}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}}\n  validations:\n  - expression: \"{chain} > 0\"\n"
        ),
    )
    .unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, GOOD_POD).unwrap();
    let mut outputs = Vec::new();
    for j in ["-j1", "-j2"] {
        let o = kpol(&[
            "check",
            "--width",
            "0",
            j,
            "-p",
            p.to_str().unwrap(),
            "-p",
            "policies/require-resource-limits.yaml",
            "testdata/sample/debug-pod.yaml",
            good.to_str().unwrap(),
        ]);
        let text = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{j}: {}",
            &text[..text.len().min(2000)]
        );
        let diag = text
            .lines()
            .find(|l| l.starts_with("error[invalid-policy]"))
            .unwrap_or_else(|| panic!("{j}: {text}"));
        assert!(diag.contains("nested too deeply"), "{diag}");
        assert!(text.contains("chain.yaml:9:18"), "{j}: {text}");
        // Both Pods pass the other policy; the broken one is an error for each.
        assert!(
            text.contains("pass: 2, fail: 0, warn: 0, error: 2,"),
            "{j}: {text}"
        );
        outputs.push(text);
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// A ValidatingPolicy whose 40 variables each double the one before: the policy is an error
/// naming the budget for each Pod, in bounded memory; the other policy still applies.
#[test]
fn cel_variables_doubling_each_other_hit_the_budget() {
    let mut vars = String::from("  - {name: v0, expression: \"'xxxxxxxx'\"}\n");
    for i in 1..40 {
        vars.push_str(&format!(
            "  - {{name: v{i}, expression: \"variables.v{0} + variables.v{0}\"}}\n",
            i - 1
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("double.yaml");
    std::fs::write(
        &p,
        format!(
            "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {{name: double}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}}\n  variables:\n{vars}  validations:\n  - expression: \"size(variables.v39) > 0\"\n"
        ),
    )
    .unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, GOOD_POD).unwrap();
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        p.to_str().unwrap(),
        "-p",
        "policies/require-resource-limits.yaml",
        good.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("error[double]"), "{text}");
    assert!(text.contains("MiB built in one rule evaluation"), "{text}");
    assert!(
        text.contains("pass: 1, fail: 0, warn: 0, error: 1,"),
        "{text}"
    );
}

/// A Pod with 200 containers and three nested `foreach` loops over them (8 million elements):
/// the rule stops at the element budget with an error, in `check` and in `mutate`, and the
/// other rule still runs.
#[test]
fn nested_foreach_over_a_large_list_hits_the_element_budget() {
    let dir = tempfile::tempdir().unwrap();
    let containers: String = (0..200)
        .map(|i| format!("  - {{name: c{i}, image: nginx:1.27}}\n"))
        .collect();
    let pod = dir.path().join("pod.yaml");
    std::fs::write(
        &pod,
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: wide}}\nspec:\n  containers:\n{containers}"),
    )
    .unwrap();
    let list = "request.object.spec.containers";
    let validate = dir.path().join("validate.yaml");
    std::fs::write(
        &validate,
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: loops}}\nspec:\n  rules:\n  - name: loops\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      foreach:\n      - list: {list}\n        foreach:\n        - list: {list}\n          foreach:\n          - list: {list}\n            deny:\n              conditions:\n                any:\n                - key: \"{{{{ element.name }}}}\"\n                  operator: Equals\n                  value: nobody\n  - name: fine\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ request.object.metadata.name }}}}\"\n            operator: Equals\n            value: nobody\n"
        ),
    )
    .unwrap();
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        validate.to_str().unwrap(),
        pod.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(text.contains("error[loops/loops]"), "{text}");
    assert!(
        text.contains("evaluation budget exceeded: more than 10000000 work units"),
        "{text}"
    );
    assert!(
        text.contains("pass: 1, fail: 0, warn: 0, error: 1,"),
        "{text}"
    );

    let mutate = dir.path().join("mutate.yaml");
    std::fs::write(
        &mutate,
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: loops}}\nspec:\n  rules:\n  - name: loops\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    mutate:\n      foreach:\n      - list: {list}\n        foreach:\n        - list: {list}\n          foreach:\n          - list: {list}\n            patchStrategicMerge:\n              metadata:\n                labels:\n                  seen: \"yes\"\n"
        ),
    )
    .unwrap();
    let o = kpol(&[
        "mutate",
        "--check",
        "-p",
        mutate.to_str().unwrap(),
        pod.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("evaluation budget exceeded: more than 10000000 work units"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
}
