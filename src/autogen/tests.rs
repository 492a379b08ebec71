//! Autogen tests: eligibility, controller selection, naming, rewriting, rule order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crate::kinds::load_policies;
use crate::policy::{LoadedPolicies, Policy, RuleBody, ValidateCheck};
use crate::source::SourceFile;
use crate::yaml::{Limits, Node, parse_documents};

fn load(text: &str) -> LoadedPolicies {
    let source = Arc::new(SourceFile::new("p.yaml", text));
    load_policies(&source, parse_documents(text, Limits::default()).unwrap())
}

fn policy(text: &str) -> Policy {
    let mut l = load(text);
    assert!(l.invalid.is_empty(), "{:?}", l.invalid);
    l.policies.remove(0)
}

fn names(rules: &[crate::policy::Rule]) -> Vec<&str> {
    rules.iter().map(|r| r.name.as_str()).collect()
}

fn kinds(rule: &crate::policy::Rule) -> Vec<&str> {
    rule.match_.kinds()
}

fn pol(annotations: &str, rules: &str) -> String {
    format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n{annotations}spec:\n  rules:\n{rules}"
    )
}

const TWO_POD_RULES: &str = "  - name: a
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: 'label required at $(./pattern/metadata/labels)'
      pattern:
        metadata:
          labels:
            app: '?*'
  - name: b
    match:
      resources:
        kinds: [Pod]
    preconditions:
      all:
      - key: '{{ request.object.metadata.labels.team || \"\" }}'
        operator: Equals
        value: x
    validate:
      deny:
        conditions:
          any:
          - key: '{{ request.object.spec.hostNetwork }}'
            operator: Equals
            value: true
";

#[test]
fn whole_controller_set_order_and_kinds() {
    let p = policy(&pol("", TWO_POD_RULES));
    assert_eq!(
        names(p.rules()),
        [
            "a",
            "b",
            "autogen-a",
            "autogen-cronjob-a",
            "autogen-b",
            "autogen-cronjob-b"
        ]
    );
    assert_eq!(
        kinds(&p.rules()[2]),
        [
            "apps/v1/DaemonSet",
            "apps/v1/Deployment",
            "batch/v1/Job",
            "apps/v1/ReplicaSet",
            "v1/ReplicationController",
            "apps/v1/StatefulSet"
        ]
    );
    assert_eq!(kinds(&p.rules()[3]), ["batch/v1/CronJob"]);
    assert!(p.rules()[2].autogen && !p.rules()[0].autogen);
}

#[test]
fn validate_phase_rules_per_kind() {
    let p = policy(&pol("", TWO_POD_RULES));
    assert_eq!(names(p.validate_rules("Pod")), ["a", "b"]);
    assert_eq!(names(p.validate_rules("Service")), ["a", "b"]);
    let d = p.validate_rules("Deployment");
    assert_eq!(names(d), ["a", "b", "autogen-a", "autogen-b"]);
    assert_eq!(kinds(&d[2]), ["apps/v1/Deployment"]);
    let c = p.validate_rules("CronJob");
    assert_eq!(
        names(c),
        ["a", "b", "autogen-cronjob-a", "autogen-cronjob-b"]
    );
    assert_eq!(kinds(&c[3]), ["batch/v1/CronJob"]);
}

#[test]
fn bodies_are_wrapped_and_paths_rewritten() {
    let p = policy(&pol("", TWO_POD_RULES));
    let RuleBody::Validate(v) = &p.rules()[2].body else {
        panic!()
    };
    let ValidateCheck::Pattern(pat) = &v.check else {
        panic!()
    };
    let inner = pat
        .get_path(&["spec", "template", "metadata", "labels", "app"])
        .unwrap();
    assert_eq!(inner.as_str(), Some("?*"));
    // The moved subtree keeps its span in the policy file; the wrapper takes the pattern's.
    let RuleBody::Validate(orig) = &p.rules()[0].body else {
        panic!()
    };
    let ValidateCheck::Pattern(opat) = &orig.check else {
        panic!()
    };
    assert_eq!(
        inner.span,
        opat.get_path(&["metadata", "labels", "app"]).unwrap().span
    );
    assert_eq!(pat.span, opat.span);
    assert_eq!(
        v.message.as_deref(),
        Some("label required at $(./pattern/spec/template/metadata/labels)")
    );
    let RuleBody::Validate(cv) = &p.rules()[3].body else {
        panic!()
    };
    let ValidateCheck::Pattern(cpat) = &cv.check else {
        panic!()
    };
    assert!(
        cpat.get_path(&[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "metadata",
            "labels",
            "app"
        ])
        .is_some()
    );
    // Kyverno shifts the already shifted reference once more for CronJob.
    assert_eq!(
        cv.message.as_deref(),
        Some(
            "label required at $(./pattern/spec/jobTemplate/spec/template/spec/template/metadata/labels)"
        )
    );

    let b = &p.rules()[4];
    let key = |n: &Node| {
        n.get_path(&["all"]).and_then(Node::as_seq).unwrap()[0]
            .get("key")
            .and_then(Node::as_str)
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        key(b.preconditions.as_ref().unwrap()),
        "{{ request.object.spec.template.metadata.labels.team || \"\" }}"
    );
    let RuleBody::Validate(bv) = &b.body else {
        panic!()
    };
    let ValidateCheck::Deny(deny) = &bv.check else {
        panic!()
    };
    assert_eq!(
        deny.get_path(&["conditions", "any"])
            .and_then(Node::as_seq)
            .unwrap()[0]
            .get("key")
            .and_then(Node::as_str),
        Some("{{ request.object.spec.template.spec.hostNetwork }}")
    );
    let cron_pre = key(p.rules()[5].preconditions.as_ref().unwrap());
    assert_eq!(
        cron_pre,
        "{{ request.object.spec.jobTemplate.spec.template.metadata.labels.team || \"\" }}"
    );
}

#[test]
fn annotation_controls_controllers() {
    let ann = |v: &str| {
        format!("  annotations:\n    pod-policies.kyverno.io/autogen-controllers: '{v}'\n")
    };
    let none = policy(&pol(&ann("none"), TWO_POD_RULES));
    assert_eq!(names(none.rules()), ["a", "b"]);
    assert_eq!(names(none.validate_rules("Deployment")), ["a", "b"]);

    // No trimming: " Job" never matches a kind.
    let dj = policy(&pol(&ann("Deployment, Job"), TWO_POD_RULES));
    assert_eq!(names(dj.rules()), ["a", "b", "autogen-a", "autogen-b"]);
    assert_eq!(kinds(&dj.rules()[2]), ["apps/v1/Deployment"]);
    assert_eq!(names(dj.validate_rules("Job")), ["a", "b"]);

    let cron = policy(&pol(&ann("CronJob"), TWO_POD_RULES));
    assert_eq!(
        names(cron.rules()),
        ["a", "b", "autogen-cronjob-a", "autogen-cronjob-b"]
    );

    // Custom kinds alone are used as they are; next to a standard one they are dropped.
    let custom = policy(&pol(&ann("CloneSet"), TWO_POD_RULES));
    assert_eq!(kinds(&custom.rules()[2]), ["CloneSet"]);
    let mixed = policy(&pol(&ann("Deployment,CloneSet"), TWO_POD_RULES));
    assert_eq!(kinds(&mixed.rules()[2]), ["apps/v1/Deployment"]);
    assert_eq!(kinds(&mixed.validate_rules("CloneSet")[2]), ["CloneSet"]);

    let all = load(&pol(&ann("all"), TWO_POD_RULES));
    assert_eq!(all.invalid.len(), 1);
}

fn one_rule(matchb: &str, extra: &str) -> String {
    pol(
        "",
        &format!(
            "  - name: r\n    match:\n{matchb}{extra}    validate:\n      pattern:\n        spec:\n          x: 1\n"
        ),
    )
}

#[test]
fn ineligible_policies_are_left_alone() {
    let cases = [
        one_rule(
            "      resources:\n        kinds: [Pod]\n        names: [x]\n",
            "",
        ),
        one_rule(
            "      resources:\n        kinds: [Pod]\n        selector: {matchLabels: {a: b}}\n",
            "",
        ),
        one_rule("      resources:\n        kinds: [Pod, Service]\n", ""),
        one_rule("      resources:\n        kinds: [v1/Pod]\n", ""),
        one_rule(
            "      any:\n      - resources:\n          kinds: [Pod]\n",
            "    exclude:\n      any:\n      - resources:\n          annotations: {a: b}\n",
        ),
    ];
    for c in cases {
        let p = policy(&c);
        assert_eq!(names(p.rules()), ["r"], "{c}");
    }
    // Exclude kinds without Pod: this rule is skipped.
    let p = policy(&one_rule(
        "      resources:\n        kinds: [Pod]\n",
        "    exclude:\n      resources:\n        kinds: [Service]\n",
    ));
    assert_eq!(names(p.rules()), ["r"]);
    // Exclude flat kinds with Pod are replaced too.
    let p = policy(&one_rule(
        "      resources:\n        kinds: [Pod]\n",
        "    exclude:\n      resources:\n        kinds: [Pod]\n        namespaces: [kube-system]\n",
    ));
    assert_eq!(p.rules()[1].exclude.as_ref().unwrap().kinds().len(), 6);
    assert_eq!(
        p.rules()[2].exclude.as_ref().unwrap().kinds(),
        ["batch/v1/CronJob"]
    );
}

#[test]
fn mixed_any_filters_and_autogen_named_rules() {
    let p = policy(&pol(
        "",
        "  - name: autogen-old
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {spec: {a: 1}}}
  - name: r
    match:
      any:
      - resources: {kinds: [Pod]}
      - resources: {kinds: [Service]}
    exclude:
      any:
      - resources: {namespaces: [kube-system]}
    validate: {pattern: {spec: {a: 1}}}
",
    ));
    // The user rule named autogen-old disappears (match.md §8.6), and is not a source.
    assert_eq!(names(p.rules()), ["r", "autogen-r", "autogen-cronjob-r"]);
    let g = &p.rules()[1];
    assert_eq!(g.match_.any[1].resources.kind_strings(), ["Service"]);
    let c = &p.rules()[2];
    assert_eq!(
        c.match_.any[1].resources.kind_strings(),
        ["batch/v1/CronJob"]
    );
    assert_eq!(
        c.exclude.as_ref().unwrap().any[0].resources.kind_strings(),
        ["batch/v1/CronJob"]
    );
    assert_eq!(
        c.exclude.as_ref().unwrap().any[0].resources.namespaces,
        ["kube-system"]
    );
    // Without Pod kinds, the exclude filter of the autogen- rule is kept as written.
    assert!(
        g.exclude.as_ref().unwrap().any[0]
            .resources
            .kinds
            .is_empty()
    );
}

#[test]
fn long_names_are_truncated() {
    let long = "x".repeat(60);
    let p = policy(&pol(
        "",
        &format!(
            "  - name: {long}\n    match: {{resources: {{kinds: [Pod]}}}}\n    validate: {{pattern: {{spec: {{a: 1}}}}}}\n"
        ),
    ));
    assert_eq!(p.rules()[1].name.len(), 63);
    assert_eq!(p.rules()[1].name, format!("autogen-{}", &long[..55]));
    assert_eq!(
        p.rules()[2].name,
        format!("autogen-cronjob-{}", &long[..47])
    );
}

#[test]
fn verify_images_cronjob_like_kyverno_test() {
    // kyverno/kyverno:pkg/autogen/v1/autogen_test.go Test_ComputeRules, kind CronJob.
    let p = policy(&pol(
        "",
        "  - name: check-image\n    match:\n      resources:\n        kinds:\n        - Pod\n    verifyImages:\n    - imageReferences: ['*']\n      mutateDigest: false\n",
    ));
    let c = p.validate_rules("CronJob");
    assert_eq!(names(c), ["check-image", "autogen-cronjob-check-image"]);
    assert_eq!(kinds(&c[1]), ["batch/v1/CronJob"]);
    assert!(matches!(c[1].body, RuleBody::VerifyImages(_)));
}

#[test]
fn mutate_psm_and_foreach() {
    let p = policy(&pol(
        "",
        "  - name: m
    match: {resources: {kinds: [Pod]}}
    mutate:
      foreach:
      - list: request.object.spec.containers
        patchStrategicMerge:
          spec:
            containers:
            - name: '{{ element.name }}'
",
    ));
    let RuleBody::Mutate(m) = &p.rules()[1].body else {
        panic!()
    };
    let fe = &m.get("foreach").and_then(Node::as_seq).unwrap()[0];
    assert_eq!(
        fe.get("list").and_then(Node::as_str),
        Some("request.object.spec.template.spec.containers")
    );
    assert!(
        fe.get_path(&[
            "patchStrategicMerge",
            "spec",
            "template",
            "spec",
            "containers"
        ])
        .is_some()
    );
}
