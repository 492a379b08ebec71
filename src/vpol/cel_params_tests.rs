//! ClusterPolicy `validate.cel` params (`paramKind` + `paramRef`), resolved as Kyverno v1.19's
//! handler resolves them against a cluster (`pkg/engine/handlers/validation/validate_cel.go`,
//! `pkg/admissionpolicy/utils.go` `CollectParams`): by name or selector, scoped by the
//! param kind, once per param, with `parameterNotFoundAction: Deny` and a missing named param
//! as errors. The policy is the library's `allowed-pod-priorities` shape.

use std::sync::Arc;

use crate::engine::Engine;
use crate::kinds::load_policies;
use crate::manifest::read_manifests;
use crate::report::Status;
use crate::request::Request;
use crate::source::SourceFile;
use crate::yaml::{Limits, Node, parse_documents};

const POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: priorities}
spec:
  rules:
  - name: validate-pod-priority
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        paramKind: {apiVersion: v1, kind: ConfigMap}
        paramRef: PARAMREF
        variables:
        - name: priorities
          expression: \"namespaceObject.metadata.name in params.data ? params.data[namespaceObject.metadata.name].split(', ') : []\"
        expressions:
        - expression: \"variables.priorities == [] || object.spec.priorityClassName in variables.priorities\"
          messageExpression: \"'class ' + object.spec.priorityClassName + ' is not allowed in ' + namespaceObject.metadata.name\"
";

fn pod(namespace: &str, class: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {namespace}}}\nspec: {{priorityClassName: {class}}}\n"
    )
}

fn config_map(name: &str, namespace: Option<&str>, data: serde_json::Value) -> Node {
    let mut meta = serde_json::json!({"name": name, "labels": {"role": "priorities"}});
    if let Some(ns) = namespace {
        meta["namespace"] = ns.into();
    }
    Node::from_json(&serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data,
    }))
}

fn params() -> Vec<Node> {
    vec![
        config_map(
            "allowed",
            Some("default"),
            serde_json::json!({"team-a": "low, medium"}),
        ),
        config_map(
            "allowed-b",
            Some("team-b"),
            serde_json::json!({"team-b": "high"}),
        ),
        config_map(
            "other",
            Some("team-b"),
            serde_json::json!({"team-b": "low"}),
        ),
    ]
}

fn run(param_ref: &str, resource: &str, params: Vec<Node>) -> (Status, String) {
    let text = POLICY.replace("PARAMREF", param_ref);
    let source = Arc::new(SourceFile::new("p.yaml", text.as_str()));
    let loaded = load_policies(&source, parse_documents(&text, Limits::default()).unwrap());
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let engine = Engine::new(loaded.policies);
    let request = Request {
        params: Arc::new(params),
        ..Request::default()
    };
    let source = Arc::new(SourceFile::new("r.yaml", resource));
    let resources = read_manifests(&source, Limits::default()).resources;
    let rules: Vec<_> = resources
        .iter()
        .flat_map(|r| engine.validate(r, &request))
        .flat_map(|p| p.rules)
        .collect();
    assert_eq!(rules.len(), 1, "{rules:?}");
    (rules[0].status, rules[0].message.clone())
}

// A named param in the namespace paramRef names: the rule sees `params`.
#[test]
fn a_named_param_is_read_in_the_paramref_namespace() {
    let r = "{name: allowed, namespace: default}";
    assert_eq!(
        run(r, &pod("team-a", "low"), params()),
        (
            Status::Pass,
            "Validation rule 'validate-pod-priority' passed.".to_owned()
        )
    );
    assert_eq!(
        run(r, &pod("team-a", "high"), params()),
        (
            Status::Fail,
            "class high is not allowed in team-a".to_owned()
        )
    );
}

// Without paramRef.namespace a namespaced param kind is read in the resource's namespace.
#[test]
fn a_namespaced_param_kind_defaults_to_the_resources_namespace() {
    let r = "{name: allowed-b}";
    assert_eq!(run(r, &pod("team-b", "high"), params()).0, Status::Pass);
    // `allowed-b` does not exist in team-a: the missing named param is an error.
    assert_eq!(
        run(r, &pod("team-a", "high"), params()),
        (
            Status::Error,
            "error in parameterized resource: configmaps \"allowed-b\" not found".to_owned()
        )
    );
}

// A param written without a namespace lands in `default`, as it would in a cluster.
#[test]
fn a_param_without_namespace_is_in_default() {
    let p = vec![config_map(
        "allowed",
        None,
        serde_json::json!({"team-a": "low"}),
    )];
    assert_eq!(
        run(
            "{name: allowed, namespace: default}",
            &pod("team-a", "low"),
            p
        )
        .0,
        Status::Pass
    );
}

// A selector evaluates the rule once per selected param; the first failure decides.
#[test]
fn every_selected_param_is_evaluated() {
    let r = "{selector: {matchLabels: {role: priorities}}}";
    // team-b holds `allowed-b` (high) and `other` (low): high fails against `other`.
    assert_eq!(
        run(r, &pod("team-b", "high"), params()),
        (
            Status::Fail,
            "class high is not allowed in team-b".to_owned()
        )
    );
    // Nothing selected in team-c: no evaluation, a pass (parameterNotFoundAction unset).
    assert_eq!(run(r, &pod("team-c", "any"), params()).0, Status::Pass);
}

// parameterNotFoundAction: Deny makes an empty selection an error; Allow does not.
#[test]
fn deny_when_no_param_is_found() {
    let deny = "{selector: {matchLabels: {role: none}}, parameterNotFoundAction: Deny}";
    assert_eq!(
        run(deny, &pod("team-a", "low"), params()),
        (
            Status::Error,
            "error in parameterized resource: no params found".to_owned()
        )
    );
    let allow = "{selector: {matchLabels: {role: none}}, parameterNotFoundAction: Allow}";
    assert_eq!(run(allow, &pod("team-a", "low"), params()).0, Status::Pass);
}

// The scope rules of CollectParams: a namespaced param kind for a cluster-scoped resource
// needs paramRef.namespace; a cluster-scoped param kind refuses one.
#[test]
fn param_scope_errors() {
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\nspec: {priorityClassName: low}\n";
    let policy_for_namespaces = |r: &str| {
        let text = POLICY
            .replace("PARAMREF", r)
            .replace("kinds: [Pod]", "kinds: [Namespace]");
        let source = Arc::new(SourceFile::new("p.yaml", text.as_str()));
        let loaded = load_policies(&source, parse_documents(&text, Limits::default()).unwrap());
        let engine = Engine::new(loaded.policies);
        let request = Request {
            params: Arc::new(params()),
            ..Request::default()
        };
        let source = Arc::new(SourceFile::new("r.yaml", ns));
        let resources = read_manifests(&source, Limits::default()).resources;
        let rules: Vec<_> = resources
            .iter()
            .flat_map(|r| engine.validate(r, &request))
            .flat_map(|p| p.rules)
            .map(|r| (r.status, r.message))
            .collect();
        rules
    };
    assert_eq!(
        policy_for_namespaces("{name: allowed}"),
        [(
            Status::Error,
            "error in parameterized resource: can't use namespaced paramRef to match cluster-scoped resources"
                .to_owned()
        )]
    );
    let cluster_kind = POLICY
        .replace("PARAMREF", "{name: n, namespace: default}")
        .replace("kind: ConfigMap}", "kind: PriorityClass}")
        .replace(
            "apiVersion: v1, kind: PriorityClass",
            "apiVersion: scheduling.k8s.io/v1, kind: PriorityClass",
        );
    let source = Arc::new(SourceFile::new("p.yaml", cluster_kind.as_str()));
    let loaded = load_policies(
        &source,
        parse_documents(&cluster_kind, Limits::default()).unwrap(),
    );
    let engine = Engine::new(loaded.policies);
    let text = pod("team-a", "low");
    let source = Arc::new(SourceFile::new("r.yaml", text.as_str()));
    let resources = read_manifests(&source, Limits::default()).resources;
    let got: Vec<_> = engine
        .validate(&resources[0], &Request::default())
        .into_iter()
        .flat_map(|p| p.rules)
        .map(|r| (r.status, r.message))
        .collect();
    assert_eq!(
        got,
        [(
            Status::Error,
            "error in parameterized resource: paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                .to_owned()
        )]
    );
}
