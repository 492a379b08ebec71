//! GeneratingPolicy tests. The scenarios follow Kyverno v1.19.0's own: `pkg/cel/policies/
//! gpol/{compiler,engine,template}/*_test.go` and the CLI tests under
//! `test/cli/test-generating-policy/` (data, clone, template, with-exceptions); the policies
//! here are kpol's own fixtures.

use serde_json::json;

use super::evaluate::Generation;
use super::{generate, generating_policy};
use crate::exception::PolicyException;
use crate::policy::Policy;
use crate::report::Status;
use crate::request::{Operation, Request};
use crate::test_support::{exceptions_unchecked as exceptions, load, resource};

fn policy(text: &str) -> Policy {
    let mut l = load(text);
    assert_eq!(l.policies.len(), 1, "{:?}", l.diagnostics);
    l.policies.remove(0)
}

fn run(policy_text: &str, trigger: &str) -> Option<Generation> {
    run_with(policy_text, trigger, &[], &Request::default())
}

fn run_with(
    policy_text: &str,
    trigger: &str,
    exceptions: &[PolicyException],
    request: &Request,
) -> Option<Generation> {
    let p = policy(policy_text);
    generate(&p, &resource(trigger), request, exceptions)
}

fn resources(g: &Generation) -> Vec<serde_json::Value> {
    g.generated.iter().map(|o| o.resource.clone()).collect()
}

const NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n";

/// A cluster GeneratingPolicy on Namespaces; `generate` is the YAML of its `generate` list.
fn on_namespaces(extra: &str, generate: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1beta1
kind: GeneratingPolicy
metadata:
  name: gen
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ['']
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [namespaces]
{extra}  generate:
{generate}"
    )
}

const APPLY_CM: &str = "  - expression: >-
      generator.Apply(object.metadata.name, [{'apiVersion': 'v1', 'kind': 'ConfigMap',
      'metadata': {'name': 'zk-kafka-address'}, 'data': {'replicas': dyn(3)}}])
";

/// `test/cli/test-generating-policy/data/generate-cm`: the object lands in the namespace
/// `generator.Apply` names, every number a double, and the result is pass.
#[test]
fn expression_generates_into_the_namespace_apply_names() {
    let g = run(&on_namespaces("", APPLY_CM), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Pass);
    assert_eq!(g.rule, "gen");
    assert_eq!(g.message, "policy evaluated successfully");
    assert_eq!(
        resources(&g),
        [
            json!({"apiVersion": "v1", "data": {"replicas": 3.0}, "kind": "ConfigMap",
                "metadata": {"name": "zk-kafka-address", "namespace": "team-a"}})
        ]
    );
    assert_eq!(g.generated[0].mode, "expression");
}

/// No match gives no response at all (the test row is then Not found), and a policy without
/// matchConstraints matches nothing (`gpol/engine` `matchPolicy`).
#[test]
fn no_match_and_no_constraints_give_no_response() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: team-a\n";
    assert_eq!(run(&on_namespaces("", APPLY_CM), pod), None);
    let unconstrained = on_namespaces("", APPLY_CM).replace(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: ['']\n      apiVersions: [v1]\n      operations: [CREATE, UPDATE]\n      resources: [namespaces]\n",
        "",
    );
    assert!(!unconstrained.contains("matchConstraints"));
    assert_eq!(run(&unconstrained, NAMESPACE), None);
    // The operation is matched too: DELETE is not among them.
    let delete = Request {
        operation: Operation::Delete,
        ..Request::default()
    };
    assert_eq!(
        run_with(&on_namespaces("", APPLY_CM), NAMESPACE, &[], &delete),
        None
    );
}

/// A false match condition gives no response; one that errors is the policy's error.
#[test]
fn match_conditions_false_give_no_response_errors_are_errors() {
    let false_cond = "  matchConditions:\n  - name: skip-team\n    expression: \"object.metadata.name != 'team-a'\"\n";
    assert_eq!(run(&on_namespaces(false_cond, APPLY_CM), NAMESPACE), None);
    let true_cond = "  matchConditions:\n  - name: team\n    expression: \"object.metadata.name == 'team-a'\"\n";
    let g = run(&on_namespaces(true_cond, APPLY_CM), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Pass);
    let broken =
        "  matchConditions:\n  - name: bad\n    expression: \"object.spec.missing == 1\"\n";
    let g = run(&on_namespaces(broken, APPLY_CM), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Error);
    assert!(
        g.message == "failed to evaluate policy: no such key: spec",
        "{}",
        g.message
    );
    assert!(g.generated.is_empty());
}

/// `variables` are computed before the entries, each seeing the earlier ones, and every
/// `generate[]` entry runs in order (`test/cli/test-generating-policy/clone/
/// generate-secrets-and-networkpolicies`).
#[test]
fn variables_feed_every_entry_in_order() {
    let vars = "  variables:\n  - name: ns\n    expression: object.metadata.name\n  - name: cm\n    expression: \"variables.ns + '-cm'\"\n";
    let gens = "  - expression: \"generator.Apply(variables.ns, [{'kind': 'ConfigMap', 'metadata': {'name': variables.cm}}])\"
  - expression: \"generator.apply('', [{'kind': 'ClusterRole', 'metadata': {'name': variables.ns}}])\"
";
    let g = run(&on_namespaces(vars, gens), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Pass, "{}", g.message);
    assert_eq!(
        resources(&g),
        [
            json!({"kind": "ConfigMap", "metadata": {"name": "team-a-cm", "namespace": "team-a"}}),
            // An empty namespace: none at all (a cluster-scoped object).
            json!({"kind": "ClusterRole", "metadata": {"name": "team-a"}}),
        ]
    );
}

/// An entry that fails to evaluate makes the whole policy an error, and what earlier entries
/// generated is dropped (`gpol/compiler/policy_test.go`).
#[test]
fn an_erroring_entry_is_the_policy_error() {
    let gens =
        format!("{APPLY_CM}  - expression: \"generator.Apply(object.metadata.missing, [])\"\n");
    let g = run(&on_namespaces("", &gens), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Error);
    assert!(
        g.message.starts_with("failed to evaluate policy: "),
        "{}",
        g.message
    );
    assert!(g.message.contains("missing"), "{}", g.message);
    assert!(g.generated.is_empty());
    // A failing audit annotation is one too.
    let audit = format!(
        "{APPLY_CM}  auditAnnotations:\n  - key: k\n    valueExpression: object.metadata.nope\n"
    );
    let g = run(&on_namespaces("", &audit), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Error, "{}", g.message);
    assert!(g.message.contains("auditAnnotation \"k\""), "{}", g.message);
}

/// `interpolate: cel` (`gpol/template/template_test.go`): whole-value placeholders are
/// spliced with their type, embedded ones written into the string, `\((` stays literal,
/// every document is a resource, and each goes to its own `metadata.namespace`.
#[test]
fn templates_interpolate_placeholders() {
    let vars =
        "  variables:\n  - name: labels\n    expression: \"{'team': object.metadata.name}\"\n";
    let gens = r#"  - template:
      interpolate: cel
      value: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: (( object.metadata.name ))-config
          namespace: (( object.metadata.name ))
          labels: (( variables.labels ))
        data:
          count: (( 2 ))
          note: '\(( kept ))'
          ratio: "x(( 1.5 ))"
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: second
"#;
    let g = run(&on_namespaces(vars, gens), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Pass, "{}", g.message);
    assert_eq!(
        resources(&g),
        [
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "team-a-config", "namespace": "team-a", "labels": {"team": "team-a"}},
                   "data": {"count": 2, "note": "(( kept ))", "ratio": "x1.5"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "second"}}),
        ]
    );
    assert!(g.generated.iter().all(|o| o.mode == "template"));
}

/// `interpolate: none` (the default) is plain YAML: placeholders are text.
#[test]
fn plain_templates_keep_placeholders_as_text() {
    let gens = "  - template:\n      value: |\n        kind: ConfigMap\n        metadata:\n          name: (( object.metadata.name ))\n          namespace: ns\n";
    let g = run(&on_namespaces("", gens), NAMESPACE).unwrap();
    assert_eq!(
        resources(&g),
        [
            json!({"kind": "ConfigMap", "metadata": {"name": "(( object.metadata.name ))", "namespace": "ns"}})
        ]
    );
}

/// A structured value inside a string is a render error; the message names the document and
/// the field.
#[test]
fn embedded_structured_placeholders_are_errors() {
    let gens = "  - template:\n      interpolate: cel\n      value: |\n        kind: ConfigMap\n        metadata:\n          name: x-(( object.metadata ))\n";
    let g = run(&on_namespaces("", gens), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Error);
    assert!(
        g.message.contains(
            "failed to render generation template: document 1: field \"metadata\": field \"name\""
        ) && g.message.contains("must evaluate to a scalar"),
        "{}",
        g.message
    );
}

fn namespaced(generate: &str) -> String {
    format!(
        "apiVersion: policies.kyverno.io/v1
kind: NamespacedGeneratingPolicy
metadata:
  name: ngen
  namespace: team-a
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ['']
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  generate:
{generate}"
    )
}

const CM_IN_B: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trigger\n  namespace: team-b\n";

/// A NamespacedGeneratingPolicy calls `generator.Apply([objects])` and generates into its own
/// namespace; the v1.19 CLI evaluates it for triggers of any namespace. A template may not
/// name another namespace.
#[test]
fn namespaced_policies_generate_into_their_own_namespace() {
    let p = policy(&namespaced(
        "  - expression: \"generator.Apply([{'kind': 'Secret', 'metadata': {'name': 's'}}])\"\n",
    ));
    assert_eq!(p.key(), "team-a/ngen");
    let g = generate(&p, &resource(CM_IN_B), &Request::default(), &[]).unwrap();
    assert_eq!(g.status, Status::Pass, "{}", g.message);
    assert_eq!(
        resources(&g),
        [json!({"kind": "Secret", "metadata": {"name": "s", "namespace": "team-a"}})]
    );
    // The two-argument form is the cluster policy's: a compile problem, an error result.
    let l = load(&namespaced(
        "  - expression: \"generator.Apply('x', [])\"\n",
    ));
    assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
    assert_eq!(l.diagnostics[0].position(), "p.yaml:14:17");
    assert!(
        l.diagnostics[0]
            .message
            .contains("generator.Apply takes generator.Apply([objects])"),
        "{}",
        l.diagnostics[0].message
    );
    let two = generate(&l.policies[0], &resource(CM_IN_B), &Request::default(), &[]).unwrap();
    assert_eq!(two.status, Status::Error);
    // Templates: no namespace → the policy's; another → denied.
    let own = run(
        &namespaced("  - template:\n      value: '{kind: Secret, metadata: {name: s}}'\n"),
        CM_IN_B,
    )
    .unwrap();
    assert_eq!(
        resources(&own),
        [json!({"kind": "Secret", "metadata": {"name": "s", "namespace": "team-a"}})]
    );
    let other = run(
        &namespaced(
            "  - template:\n      value: '{kind: Secret, metadata: {name: s, namespace: team-b}}'\n",
        ),
        CM_IN_B,
    )
    .unwrap();
    assert_eq!(other.status, Status::Error);
    assert!(
        other.message.contains("cross-namespace generation denied"),
        "{}",
        other.message
    );
}

const EXCEPTION: &str = "apiVersion: policies.kyverno.io/v1beta1
kind: PolicyException
metadata:
  name: skip-team-a
  namespace: kyverno
spec:
  policyRefs:
  - name: some-other-policy
    kind: ValidatingPolicy
  matchConditions:
  - name: team-a
    expression: \"object.metadata.name == 'team-a'\"
";

/// `test/cli/test-generating-policy/data/with-exceptions`: in the CLI every CEL exception
/// reaches a GeneratingPolicy, whatever its `policyRefs` (§11.2.5); a matching one is the
/// response (rule `exception`, skip), with nothing generated. Others leave the policy be.
#[test]
fn exceptions_apply_whatever_their_policy_refs() {
    let e = exceptions(EXCEPTION);
    let p = on_namespaces("", APPLY_CM);
    let g = run_with(&p, NAMESPACE, &e, &Request::default()).unwrap();
    assert_eq!(g.rule, "exception");
    assert_eq!(g.status, Status::Skip);
    assert_eq!(
        g.message,
        "rule is skipped due to policy exception: kyverno/skip-team-a"
    );
    assert!(g.generated.is_empty());
    let other = NAMESPACE.replace("team-a", "team-b");
    let g = run_with(&p, &other, &e, &Request::default()).unwrap();
    assert_eq!(g.status, Status::Pass);
    // `reportResult: pass`.
    let pass = exceptions(&format!("{EXCEPTION}  reportResult: pass\n"));
    let g = run_with(&p, NAMESPACE, &pass, &Request::default()).unwrap();
    assert_eq!((g.rule.as_str(), g.status), ("exception", Status::Pass));
}

/// A partial exception (`allowedValues`) does not exempt: its values reach `exceptions`.
#[test]
fn partial_exceptions_fill_allowed_values() {
    let e = exceptions(&format!("{EXCEPTION}  allowedValues: [v1]\n"));
    let gens = "  - expression: \"generator.Apply('ns', [{'kind': 'ConfigMap', 'metadata': {'name': exceptions.allowedValues[0]}}])\"\n";
    let g = run_with(&on_namespaces("", gens), NAMESPACE, &e, &Request::default()).unwrap();
    assert_eq!(g.status, Status::Pass, "{}", g.message);
    assert_eq!(g.generated[0].resource["metadata"]["name"], "v1");
}

/// Compile problems are diagnostics at their line:column, and the policy evaluates to an
/// error (never a pass): a CEL syntax error, both `expression` and `template`, a placeholder
/// in a mapping key (reported on its template line), an unknown `interpolate`.
#[test]
fn compile_problems_are_located_and_evaluate_to_errors() {
    let text = on_namespaces(
        "",
        "  - expression: \"generator.Apply(object.metadata.name,\"
  - expression: x
    template:
      value: 'kind: A'
  - template:
      interpolate: cel
      value: |
        kind: ConfigMap
        data:
          (( object.metadata.name )): v
  - template:
      interpolate: yes-please
      value: 'kind: A'
",
    );
    let l = load(&text);
    let at: Vec<String> = l.diagnostics.iter().map(|d| d.position()).collect();
    assert_eq!(
        at,
        [
            "p.yaml:13:55",
            "p.yaml:14:5",
            "p.yaml:22:11",
            "p.yaml:24:20"
        ],
        "{:#?}",
        l.diagnostics
    );
    assert!(
        l.diagnostics[1]
            .message
            .contains("only one of expression or template")
    );
    assert!(
        l.diagnostics[2]
            .message
            .contains("value line 3: placeholders are not supported in mapping keys"),
        "{}",
        l.diagnostics[2].message
    );
    let p = &l.policies[0];
    let g = generate(p, &resource(NAMESPACE), &Request::default(), &[]).unwrap();
    assert_eq!(g.status, Status::Error);
    assert!(
        g.message.starts_with("failed to compile policy: "),
        "{}",
        g.message
    );
}

/// Kyverno serves NamespacedGeneratingPolicy from v1beta1 on: a v1alpha1 one is not loaded as
/// one (it is reported unsupported), while GeneratingPolicy is read in every version.
#[test]
fn versions_follow_the_served_ones() {
    let ns_alpha =
        namespaced(APPLY_CM).replace("policies.kyverno.io/v1", "policies.kyverno.io/v1alpha1");
    let l = load(&ns_alpha);
    assert!(l.policies.is_empty());
    assert_eq!(l.unsupported.len(), 1);
    for v in ["v1alpha1", "v1beta1", "v1"] {
        let text = on_namespaces("", APPLY_CM).replace("v1beta1", v);
        let p = policy(&text);
        assert!(generating_policy(&p).is_some(), "{v}");
    }
}

/// Through the engine's generate phase: one response named after the policy, each object
/// identified (what `kpol test` rows and `kpol generate` use).
#[test]
fn the_generate_phase_reports_it_as_one_rule() {
    let p = policy(&on_namespaces(
        "  evaluation:\n    synchronize:\n      enabled: true\n",
        APPLY_CM,
    ));
    let engine = crate::engine::Engine::new(vec![p]);
    let trigger = resource(NAMESPACE);
    let pool = crate::generate::SourcePool::new(vec![&trigger]);
    assert!(crate::generate::has_generate(&engine.policies()[0]));
    let out = engine.generate(&trigger, &Request::default(), &pool);
    assert_eq!(out.len(), 1);
    let rule = &out[0].rules[0];
    assert_eq!((rule.rule.as_str(), rule.status), ("gen", Status::Pass));
    let g = &rule.generated[0];
    assert_eq!(
        (g.kind.as_str(), g.namespace.as_str(), g.name.as_str()),
        ("ConfigMap", "team-a", "zk-kafka-address")
    );
    assert!(g.synchronize);
    // The validate phase gives it no response.
    assert!(engine.validate(&trigger, &Request::default()).is_empty());
}

/// A policy whose `matchConstraints` cannot be read is an error for every trigger, not
/// silently no response.
#[test]
fn unreadable_constraints_are_an_error_everywhere() {
    let text = on_namespaces("", APPLY_CM).replace(
        "  matchConstraints:\n    resourceRules:",
        "  matchConstraints:\n    namespaceSelector: {matchLabels: [1]}\n    resourceRules:",
    );
    let l = load(&text);
    assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
    assert_eq!(l.diagnostics[0].position(), "p.yaml:7:5");
    let g = generate(
        &l.policies[0],
        &resource(NAMESPACE),
        &Request::default(),
        &[],
    )
    .unwrap();
    assert_eq!(g.status, Status::Error);
    assert!(
        g.message.contains("invalid matchConstraints"),
        "{}",
        g.message
    );
}

/// The placeholder scanner (`gpol/template/scanner.go`): parentheses nest and CEL strings are
/// skipped, so `))` inside either does not end the placeholder; Go's `%v` writes floats;
/// an unterminated placeholder does not compile.
#[test]
fn placeholders_end_where_cel_says() {
    let gens = r#"  - template:
      interpolate: cel
      value: |
        kind: ConfigMap
        metadata:
          name: cm
          namespace: ns
        data:
          a: (( string(size("))")) + "))" ))
          b: "n=(( (1 + 2) * 2 ))"
          c: "f=(( 1000000.0 ))/(( 0.5 ))"
"#;
    let g = run(&on_namespaces("", gens), NAMESPACE).unwrap();
    assert_eq!(g.status, Status::Pass, "{}", g.message);
    assert_eq!(
        g.generated[0].resource["data"],
        json!({"a": "2))", "b": "n=6", "c": "f=1e+06/0.5"})
    );
    let open = "  - template:\n      interpolate: cel\n      value: |\n        kind: ConfigMap\n        metadata:\n          name: \"(( object.metadata.name\"\n";
    let l = load(&on_namespaces("", open));
    assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
    assert!(
        l.diagnostics[0]
            .message
            .contains("unterminated placeholder"),
        "{}",
        l.diagnostics[0].message
    );
    assert_eq!(l.diagnostics[0].position(), "p.yaml:18:11");
}
