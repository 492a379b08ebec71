//! CEL policy tests on kpol's fixtures (`testdata/cel/`): syntax errors located at their
//! line:column, and each kind's result rules through the engine.

use std::sync::Arc;

use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn load(name: &str, text: &str) -> crate::policy::LoadedPolicies {
    let source = Arc::new(SourceFile::new(name, text));
    let docs = parse_documents(text, Limits::default()).unwrap();
    load_policies(&source, docs)
}

#[test]
fn syntax_errors_are_diagnostics_at_line_and_column() {
    let l = load(
        "syntax-error.yaml",
        include_str!("../../testdata/cel/syntax-error.yaml"),
    );
    let at: Vec<String> = l.diagnostics.iter().map(|d| d.position()).collect();
    // `)` on line 13 (column 42 counts the quote), and `)` on line 31 (column 54).
    assert_eq!(
        at,
        ["syntax-error.yaml:13:42", "syntax-error.yaml:31:54"],
        "{:?}",
        l.diagnostics
    );
    assert!(l.diagnostics[0].message.contains("CEL syntax error"));
}

fn statuses(policy_text: &str, resource_text: &str, op: Operation) -> Vec<(String, Status)> {
    let request = Request {
        operation: op,
        ..Request::default()
    };
    statuses_for(policy_text, resource_text, &request)
}

fn statuses_for(
    policy_text: &str,
    resource_text: &str,
    request: &Request,
) -> Vec<(String, Status)> {
    let l = load("p.yaml", policy_text);
    let engine = Engine::new(l.policies);
    let source = Arc::new(SourceFile::new("r.yaml", resource_text));
    let resources = read_manifests(&source, Limits::default()).resources;
    resources
        .iter()
        .flat_map(|r| engine.validate(r, request))
        .flat_map(|p| p.rules)
        .map(|r| (r.rule, r.status))
        .collect()
}

const VPOL: &str = "\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: v}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [pods]}
  validations:
  - expression: EXPR
";

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {replicas: 2}\n";

#[test]
fn vpol_errors_are_errors_and_results_have_no_rule_name() {
    let run = |e: &str| statuses(&VPOL.replace("EXPR", e), POD, Operation::Create);
    assert_eq!(
        run("\"object.spec.replicas == 2\""),
        [(String::new(), Status::Pass)]
    );
    assert_eq!(
        run("\"object.spec.replicas > 2\""),
        [(String::new(), Status::Fail)]
    );
    assert_eq!(
        run("\"object.spec.missing == 1\""),
        [(String::new(), Status::Error)]
    );
    // Numbers from resources are doubles: int arithmetic fails (cel.md §9.1).
    assert_eq!(
        run("\"object.spec.replicas + 1 == 3\""),
        [(String::new(), Status::Error)]
    );
}

#[test]
fn vpol_sees_operations() {
    let e = "\"oldObject == null\"";
    let p = VPOL.replace("EXPR", e);
    assert_eq!(statuses(&p, POD, Operation::Create)[0].1, Status::Pass);
    assert_eq!(statuses(&p, POD, Operation::Update)[0].1, Status::Fail);
    let p = VPOL.replace(
        "EXPR",
        "\"object == null && request.operation == 'DELETE'\"",
    );
    assert_eq!(statuses(&p, POD, Operation::Delete)[0].1, Status::Pass);
}

#[test]
fn validate_cel_errors_are_failures() {
    let cp = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: c}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        expressions:
        - expression: EXPR
";
    let run = |e: &str| statuses(&cp.replace("EXPR", e), POD, Operation::Create);
    assert_eq!(
        run("\"object.spec.replicas == 2\""),
        [("r".into(), Status::Pass)]
    );
    assert_eq!(
        run("\"object.spec.missing == 1\""),
        [("r".into(), Status::Fail)]
    );
    assert_eq!(
        run("\"namespaceObject.metadata.name == 'default'\""),
        [("r".into(), Status::Pass)]
    );
}

/// `namespaceObject` is the whole Namespace the request knows (`kpol check`: an input or the
/// values file) for a ValidatingPolicy and `validate.cel`; without one, null and name-only.
#[test]
fn namespace_object_is_the_known_namespace() {
    let ns = crate::yaml::Node::from_json(&serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "default", "annotations": {"team": "a"}},
        "spec": {"finalizers": ["kubernetes"]},
    }));
    let known = Request {
        namespaces: Arc::new([("default".to_owned(), ns)].into()),
        ..Request::default()
    };
    let expr = "\"namespaceObject.metadata.annotations.team == 'a' && \
                namespaceObject.spec.finalizers[0] == 'kubernetes'\"";
    let vpol = VPOL.replace("EXPR", expr);
    let cp = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: c}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        expressions:
        - expression: EXPR
"
    .replace("EXPR", expr);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n";
    assert_eq!(statuses_for(&vpol, pod, &known)[0].1, Status::Pass);
    assert_eq!(statuses_for(&cp, pod, &known)[0].1, Status::Pass);
    let unknown = Request::default();
    assert_eq!(statuses_for(&vpol, pod, &unknown)[0].1, Status::Error);
    assert_eq!(statuses_for(&cp, pod, &unknown)[0].1, Status::Fail);
}

#[test]
fn cel_preconditions_are_compiled_with_the_rule() {
    let cp = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: c}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    celPreconditions:
    - {name: pre, expression: PRE}
    validate:
      cel:
        expressions:
        - expression: \"object.spec.replicas == 3\"
";
    let l = load("p.yaml", &cp.replace("PRE", "\"object.spec.replicas > 5\""));
    let crate::policy::RuleBody::Validate(v) = &l.policies[0].rules()[0].body else {
        panic!("not a validate rule");
    };
    let crate::policy::ValidateCheck::Cel(cel) = &v.check else {
        panic!("not a cel rule");
    };
    assert_eq!(cel.preconditions.len(), 1);
    let run = |e: &str| statuses(&cp.replace("PRE", e), POD, Operation::Create);
    assert_eq!(run("\"object.spec.replicas > 5\"")[0].1, Status::Skip);
    assert_eq!(run("\"object.spec.replicas > 1\"")[0].1, Status::Fail);
    // A precondition that errors denies: fail.
    assert_eq!(run("\"object.spec.nope > 1\"")[0].1, Status::Fail);
}

/// The actions of the responses of `policy_text` for [`POD`].
fn actions(policy_text: &str) -> Vec<crate::report::FailureAction> {
    let l = load("p.yaml", policy_text);
    let engine = Engine::new(l.policies);
    let source = Arc::new(SourceFile::new("r.yaml", POD));
    let resources = read_manifests(&source, Limits::default()).resources;
    resources
        .iter()
        .flat_map(|r| engine.validate(r, &Request::default()))
        .flat_map(|p| p.rules)
        .map(|r| r.failure_action)
        .collect()
}

#[test]
fn vpol_validation_actions_give_the_failure_action() {
    use crate::report::FailureAction::{Audit, Enforce, Warn};
    let failing = VPOL.replace("EXPR", "\"object.spec.replicas > 2\"");
    let with = |actions: &str| {
        failing.replace(
            "spec:\n",
            &format!("spec:\n  validationActions: {actions}\n"),
        )
    };
    for (written, want) in [
        (None, Enforce),
        (Some("[]"), Enforce),
        (Some("[Audit]"), Audit),
        (Some("[Warn]"), Warn),
        (Some("[Deny, Audit]"), Enforce),
        (Some("[Warn, Audit]"), Warn),
        (Some("[Audit, Warn]"), Warn),
        (Some("[Warn, Deny]"), Enforce),
    ] {
        let text = written.map_or_else(|| failing.clone(), with);
        let l = load("p.yaml", &text);
        assert_eq!(
            crate::vpol::cel_policy(&l.policies[0]).unwrap().action,
            want,
            "{written:?}"
        );
        assert_eq!(actions(&text), [want], "{written:?}");
    }
    // A NamespacedValidatingPolicy reads them too.
    let ns = with("[Audit]")
        .replace("kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy")
        .replace(
            "metadata: {name: v}",
            "metadata: {name: v, namespace: default}",
        );
    assert_eq!(
        crate::vpol::cel_policy(&load("p.yaml", &ns).policies[0])
            .unwrap()
            .action,
        Audit
    );
}

const VAP: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: vap}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: \"object.spec.replicas > 2\"
";

fn binding(name: &str, actions: &str, match_kind: &str) -> String {
    format!(
        "---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: {name}}}
spec:
  policyName: vap
  validationActions: {actions}
  matchResources:
    resourceRules:
    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [{match_kind}]}}
"
    )
}

#[test]
fn vap_results_carry_the_matching_bindings_action() {
    use crate::report::FailureAction::{Audit, Enforce, Warn};
    // No binding: evaluated as if bound with Deny.
    assert_eq!(actions(VAP), [Enforce]);
    assert_eq!(
        actions(&format!("{VAP}{}", binding("a", "[Audit]", "pods"))),
        [Audit]
    );
    assert_eq!(
        actions(&format!("{VAP}{}", binding("w", "[Warn, Audit]", "pods"))),
        [Warn]
    );
    assert_eq!(
        actions(&format!("{VAP}{}", binding("d", "[Deny]", "pods"))),
        [Enforce]
    );
    // Only the bindings that match the resource act on it: the strongest of theirs.
    let text = format!(
        "{VAP}{}{}{}",
        binding("d", "[Deny]", "services"),
        binding("w", "[Warn]", "pods"),
        binding("a", "[Audit]", "pods")
    );
    assert_eq!(actions(&text), [Warn]);
    let l = load("p.yaml", &text);
    assert_eq!(
        crate::vpol::cel_policy(&l.policies[0]).unwrap().action,
        Enforce
    );
}

/// An UPDATE with a previous revision: `oldObject` (and `request.oldObject`) is that revision,
/// not the resource again.
#[test]
fn vpol_old_object_is_the_previous_revision() {
    let p = VPOL.replace(
        "EXPR",
        "\"oldObject.spec.replicas == 1 && request.oldObject.spec.replicas == 1\"",
    );
    let old = read_manifests(
        &Arc::new(SourceFile::new("o.yaml", POD.replace("2", "1"))),
        Limits::default(),
    )
    .resources
    .remove(0);
    let with_old = Request {
        operation: Operation::Update,
        old_object: Some(Arc::new(old)),
        ..Request::default()
    };
    assert_eq!(statuses_for(&p, POD, &with_old)[0].1, Status::Pass);
    assert_eq!(statuses(&p, POD, Operation::Update)[0].1, Status::Fail);
}

// VAP params from a test's paramResources (cel.md §11.2.1, after Kyverno v1.19.0's
// test/cli/test-validating-admission-policy/with-params): by name, by selector as a list
// object, and null when none is found (reading it is an error).
#[test]
fn vap_params_come_from_the_param_resources() {
    let vap = |param_ref: &str, expr: &str| {
        format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {{name: vap}}\nspec:\n  paramKind: {{apiVersion: v1, kind: ConfigMap}}\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}\n  validations:\n  - expression: \"{expr}\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {{name: b}}\nspec:\n  policyName: vap\n  validationActions: [Deny]\n  paramRef: {param_ref}\n"
        )
    };
    let cm = |name: &str, max: i64| {
        crate::yaml::Node::from_json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"kind": "limits"}},
            "data": {"max": max}}))
    };
    let request = Request {
        params: Arc::new(vec![cm("small", 1), cm("large", 5)]),
        ..Request::default()
    };
    let status = |param_ref: &str, expr: &str| {
        statuses_for(&vap(param_ref, expr), POD, &request)
            .first()
            .map(|(_, s)| *s)
    };
    assert_eq!(
        status("{name: large}", "object.spec.replicas <= params.data.max"),
        Some(Status::Pass)
    );
    assert_eq!(
        status("{name: small}", "object.spec.replicas <= params.data.max"),
        Some(Status::Fail)
    );
    assert_eq!(
        status(
            "{selector: {matchLabels: {kind: limits}}}",
            "size(params.items) == 2"
        ),
        Some(Status::Pass)
    );
    assert_eq!(
        status("{name: none}", "object.spec.replicas <= params.data.max"),
        Some(Status::Error)
    );
}

/// The engine's per-kind plan ([`crate::vpol::CelPolicy::kind_plan`]) gives, for every
/// resource, the responses of matching all the policy's variants: with and without
/// selectors, autogen variants, JSON mode, VAPs with and without bindings, namespaced and
/// cluster-scoped resources, kinds the constraints name and kinds they cannot select.
#[test]
fn kind_plans_give_the_responses_of_a_full_match() {
    let rules = |resources: &str| {
        format!(
            "  matchConstraints:\n    resourceRules:\n    - {{apiGroups: ['', apps, batch], \
             apiVersions: [v1], operations: [CREATE, UPDATE], resources: [{resources}]}}\n"
        )
    };
    let vpol = |name: &str, extra: &str| {
        format!(
            "---\napiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: \
             {{name: {name}}}\nspec:\n{extra}  validations:\n  - expression: \
             \"has(object.metadata.labels)\"\n"
        )
    };
    let selector = "    objectSelector: {matchLabels: {a: b}}\n";
    let policies = [
        vpol("pods", &rules("pods")),
        vpol("star", &rules("'*'")),
        vpol("maps", &rules("configmaps")),
        vpol("pods-sel", &format!("{}{selector}", rules("pods"))),
        vpol("maps-sel", &format!("{}{selector}", rules("configmaps"))),
        vpol("none", ""),
        vpol("all", "  matchConstraints: {}\n"),
        vpol(
            "json",
            &format!("  evaluation: {{mode: JSON}}\n{}", rules("configmaps")),
        ),
        vpol(
            "no-autogen",
            &format!(
                "  autogen: {{podControllers: {{controllers: []}}}}\n{}",
                rules("pods")
            ),
        ),
        format!("---\n{}", VAP.trim_start_matches("---\n")),
        format!("{VAP}{}", binding("b", "[Audit]", "configmaps")),
        format!("{VAP}{}", binding("b", "[Audit]", "secrets")),
    ];
    let resources = "\
apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\n---
apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: n, labels: {a: b}}\n---
apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}
spec: {template: {metadata: {labels: {a: b}}, spec: {containers: []}}}\n---
apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: n}
spec: {jobTemplate: {spec: {template: {spec: {containers: []}}}}}\n---
apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m, namespace: n, labels: {a: b}}\n---
apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n---
apiVersion: v2\nkind: Pod\nmetadata: {name: v2}\n";
    let source = Arc::new(SourceFile::new("r.yaml", resources));
    let resources = read_manifests(&source, Limits::default()).resources;
    assert_eq!(resources.len(), 7);
    let request = Request::default();
    let mut planned = 0;
    for text in &policies {
        let l = load("p.yaml", text);
        assert!(l.diagnostics.is_empty(), "{text}: {:?}", l.diagnostics);
        let engine = Engine::new(l.policies);
        let policy = &engine.policies()[0];
        let cel = crate::vpol::cel_policy(policy).unwrap();
        let every: Vec<usize> = (0..cel.variants.len()).collect();
        for r in &resources {
            let values = crate::cel::ResourceValues::new();
            let full = crate::vpol::evaluate::evaluate(cel, &every, r, &request, &[], &values)
                .filter(|_| policy.in_scope(&r.namespace));
            let got = engine.validate(r, &request);
            let got = got.first().map(|p| {
                p.rules
                    .iter()
                    .map(|x| (x.rule.clone(), x.status, x.message.clone()))
                    .collect::<Vec<_>>()
            });
            let full = full.map(|rs| {
                rs.into_iter()
                    .map(|x| (x.rule, x.status, x.message))
                    .collect::<Vec<_>>()
            });
            assert_eq!(got, full, "{text}\n{} {}", r.kind, r.name);
            if !matches!(
                cel.kind_plan(&r.api_version, &r.kind),
                crate::vpol::KindPlan::Evaluate(_)
            ) {
                planned += 1;
            }
        }
    }
    // The plan did skip evaluations (a ConfigMap for `pods`, a Pod for `maps`, …).
    assert!(planned > 20, "{planned}");
}
