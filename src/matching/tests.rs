//! Matching tests: every filter attribute, any/all/flat, match vs exclude user info.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use super::*;
use crate::request::{Operation, UserInfo};
use crate::yaml::{Limits, parse_documents};

fn node(text: &str) -> Node {
    parse_documents(text, Limits::default())
        .unwrap()
        .remove(0)
        .root
}

fn block(text: &str) -> MatchBlock {
    MatchBlock::compile(&node(text), "match", Schema::V1).unwrap()
}

fn res(text: &str) -> Resource {
    Resource::from_document(node(text), None, 0).unwrap()
}

fn pod(ns: &str, name: &str) -> Resource {
    res(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}, labels: {{app: web}}, annotations: {{team: core}}}}\n"
    ))
}

fn req() -> Request {
    Request::default()
}

#[test]
fn kinds_any_all_flat() {
    let p = pod("default", "p");
    assert!(block("resources: {kinds: [Pod]}").selects(&p, &req()));
    assert!(!block("resources: {kinds: [Service]}").selects(&p, &req()));
    assert!(
        block("any: [{resources: {kinds: [Service]}}, {resources: {kinds: [v1/Pod]}}]")
            .selects(&p, &req())
    );
    assert!(
        !block("all: [{resources: {kinds: [Service]}}, {resources: {kinds: [Pod]}}]")
            .selects(&p, &req())
    );
    assert!(
        block("all: [{resources: {kinds: ['*']}}, {resources: {kinds: [Pod]}}]")
            .selects(&p, &req())
    );
    // An empty match never matches.
    assert!(!block("{}").selects(&p, &req()));
    assert!(!block("any: [{resources: {}}]").selects(&p, &req()));
}

#[test]
fn names_and_generate_name() {
    let p = pod("default", "web-1");
    assert!(block("resources: {kinds: [Pod], names: [db, web-*]}").selects(&p, &req()));
    assert!(!block("resources: {kinds: [Pod], names: [db]}").selects(&p, &req()));
    assert!(block("resources: {kinds: [Pod], name: 'web-?'}").selects(&p, &req()));
    let g = res("apiVersion: v1\nkind: Pod\nmetadata: {generateName: job-}\n");
    assert!(block("resources: {kinds: [Pod], names: ['job-*']}").selects(&g, &req()));
}

#[test]
fn namespaces_incl_namespace_kind_and_cluster_scoped() {
    let p = pod("prod-eu", "p");
    assert!(block("resources: {kinds: [Pod], namespaces: ['prod-*']}").selects(&p, &req()));
    assert!(!block("resources: {kinds: [Pod], namespaces: [dev]}").selects(&p, &req()));
    let ns = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: prod-x}\n");
    assert!(block("resources: {kinds: [Namespace], namespaces: ['prod-*']}").selects(&ns, &req()));
    let node_r = res("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
    assert!(block("resources: {kinds: [Node], namespaces: ['*']}").selects(&node_r, &req()));
    assert!(!block("resources: {kinds: [Node], namespaces: ['?*']}").selects(&node_r, &req()));
}

#[test]
fn annotations_and_selector() {
    let p = pod("default", "p");
    assert!(block("resources: {kinds: [Pod], annotations: {te*: core}}").selects(&p, &req()));
    assert!(!block("resources: {kinds: [Pod], annotations: {team: other}}").selects(&p, &req()));
    assert!(
        block("resources: {kinds: [Pod], selector: {matchLabels: {app: web}}}").selects(&p, &req())
    );
    assert!(
        block("resources: {kinds: [Pod], selector: {matchLabels: {'*': 'w*'}}}")
            .selects(&p, &req())
    );
    assert!(
        !block("resources: {kinds: [Pod], selector: {matchLabels: {app: db}}}").selects(&p, &req())
    );
    assert!(
        !block("resources: {kinds: [Pod], selector: {matchLabels: {app: 'bad value'}}}")
            .selects(&p, &req())
    );
}

#[test]
fn namespace_selector_from_request() {
    let p = pod("web", "p");
    let mut r = req();
    let b = block("resources: {kinds: [Pod], namespaceSelector: {matchLabels: {env: prod}}}");
    assert!(!b.selects(&p, &r));
    r.namespace_labels.insert(
        "web".into(),
        BTreeMap::from([("env".to_owned(), "prod".to_owned())]),
    );
    assert!(b.selects(&p, &r));
    let notin = block(
        "resources: {kinds: [Pod], namespaceSelector: {matchExpressions: [{key: env, operator: NotIn, values: [dev]}]}}",
    );
    assert!(notin.selects(&pod("other", "p"), &req()));
    let ns = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n");
    let nsb = block(
        "resources: {kinds: [Namespace], namespaceSelector: {matchExpressions: [{key: env, operator: DoesNotExist}]}}",
    );
    assert!(!nsb.selects(&ns, &req()));
}

#[test]
fn operations() {
    let p = pod("default", "p");
    let b = block("resources: {kinds: [Pod], operations: [UPDATE]}");
    assert!(!b.selects(&p, &req()));
    let mut r = req();
    r.operation = Operation::Update;
    assert!(b.selects(&p, &r));
    r.operation = Operation::Connect;
    assert!(!block("resources: {kinds: [Pod], operations: [CONNECT]}").selects(&p, &r));
}

#[test]
fn user_info_match_vs_exclude() {
    let p = pod("default", "p");
    let m = block("any: [{resources: {kinds: [Pod]}, clusterRoles: [admin]}]");
    // No user info: user filters of match are ignored.
    assert!(m.selects(&p, &req()));
    let mut r = req();
    r.user_info = Some(UserInfo {
        username: "system:serviceaccount:ns:sa".into(),
        groups: vec!["devs".into()],
        roles: vec!["ns:editor".into()],
        cluster_roles: vec!["view".into()],
        ..UserInfo::default()
    });
    assert!(!m.selects(&p, &r));
    let e = block("any: [{clusterRoles: [admin]}]");
    assert!(!e.excludes(&p, &req()));
    assert!(block("any: [{subjects: [{kind: User, name: '*'}]}]").excludes(&p, &req()));
    assert!(
        block("any: [{subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]}]")
            .excludes(&p, &r)
    );
    assert!(block("any: [{subjects: [{kind: Group, name: 'dev*'}]}]").excludes(&p, &r));
    assert!(block("any: [{roles: ['ns:editor']}]").excludes(&p, &r));
    assert!(!block("any: [{roles: ['ns:edit*']}]").excludes(&p, &r));
}

#[test]
fn exclude_any_all_flat() {
    let p = pod("kube-system", "p");
    assert!(
        block("any: [{resources: {namespaces: [x]}}, {resources: {namespaces: [kube-system]}}]")
            .excludes(&p, &req())
    );
    assert!(
        !block("all: [{resources: {namespaces: [x]}}, {resources: {namespaces: [kube-system]}}]")
            .excludes(&p, &req())
    );
    assert!(block("resources: {namespaces: [kube-*]}").excludes(&p, &req()));
    assert!(!block("{}").excludes(&p, &req()));
}

#[test]
fn v2beta1_rejects_flat_form() {
    assert!(
        MatchBlock::compile(&node("resources: {kinds: [Pod]}"), "match", Schema::V2beta1).is_err()
    );
    assert!(
        MatchBlock::compile(
            &node("any: [{resources: {kinds: [Pod]}}]"),
            "match",
            Schema::V2beta1
        )
        .is_ok()
    );
}

#[test]
fn kind_names_rule_blocks_out_before_matching() {
    let names = |text: &str| block(text).kind_names();
    let some = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        names("resources: {kinds: [Pod, apps/v1/Deployment]}"),
        some(&["Pod", "Deployment"])
    );
    assert_eq!(
        names("any: [{resources: {kinds: [Pod/exec]}}, {resources: {kinds: [v1/Service]}}]"),
        some(&["Pod", "Service"])
    );
    assert_eq!(
        names("all: [{resources: {kinds: [Pod]}}, {resources: {kinds: [Pod], namespaces: [a]}}]"),
        some(&["Pod", "Pod"])
    );
    assert_eq!(names("resources: {kinds: [a/b/c/d/e]}"), some(&[]));
    // Undecided: a wildcard kind, or a filter that names no kind.
    assert_eq!(names("resources: {kinds: ['*']}"), None);
    assert_eq!(names("resources: {kinds: [Po?]}"), None);
    assert_eq!(names("resources: {kinds: ['*/*']}"), None);
    assert_eq!(
        names("any: [{resources: {kinds: [Pod]}}, {resources: {names: [x]}}]"),
        None
    );
    assert_eq!(names("subjects: [{kind: User, name: u}]"), None);
    // The first test agrees with the full one.
    let p = pod("default", "p");
    assert!(
        block("any: [{resources: {kinds: [Service]}}, {resources: {kinds: [Pod]}}]")
            .selects(&p, &req())
    );
    assert!(!block("resources: {kinds: [Service, Deployment]}").selects(&p, &req()));
    assert!(block("resources: {kinds: ['P*']}").selects(&p, &req()));
}

/// `selects_kind` (what the engine decides once per apiVersion and kind) agrees with
/// `rule_matches` on every resource of that apiVersion and kind, whatever else it has.
#[test]
fn selects_kind_agrees_with_rule_matches() {
    let blocks = [
        "resources: {kinds: [Pod]}",
        "resources: {kinds: [Service]}",
        "resources: {kinds: [v1/Pod]}",
        "resources: {kinds: [apps/v1/Deployment]}",
        "resources: {kinds: ['apps/*/Deployment', 'Pod/exec']}",
        "resources: {kinds: ['*']}",
        "resources: {kinds: ['D*']}",
        "any: [{resources: {kinds: [Service]}}, {resources: {kinds: [Deployment]}}]",
        "all: [{resources: {kinds: ['*']}}, {resources: {kinds: [Pod]}}]",
        "all: [{resources: {kinds: [Service]}}, {resources: {kinds: [Pod]}}]",
        "resources: {kinds: [Pod], names: [web-*]}",
        "resources: {kinds: [Pod], namespaces: [prod]}",
        "resources: {kinds: [Pod], selector: {matchLabels: {app: web}}}",
        "resources: {kinds: [Pod], operations: [CREATE]}",
        "any: [{resources: {kinds: [Pod]}, subjects: [{kind: User, name: bob}]}]",
        "any: [{resources: {}}]",
        "{}",
    ];
    let excludes = [None, Some("resources: {names: [db]}"), Some("{}")];
    let resources = [
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: prod, labels: {app: web}}",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: dev}",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}",
        "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: db}",
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc}",
    ];
    for b in blocks {
        for ex in excludes {
            let mut text = format!("name: r\nvalidate: {{pattern: {{a: b}}}}\nmatch:\n  {b}\n");
            if let Some(e) = ex {
                text.push_str(&format!("exclude:\n  {e}\n"));
            }
            let rule = crate::policy::build_rule(
                &node(&text),
                "rule",
                Schema::V1,
                false,
                &crate::kinds::RULES,
            )
            .unwrap();
            for r in resources {
                let r = res(r);
                if let Some(decided) = rule.selects_kind(&r.api_version, &r.kind) {
                    assert_eq!(
                        decided,
                        rule.matches(&r, &req()),
                        "{b} / {ex:?} on {} {}",
                        r.api_version,
                        r.kind
                    );
                }
            }
        }
    }
}

/// Values `subresources`: a resource of the mapped kind is matched as the parent kind with
/// the subresource; its own kind, the bare parent kind and another version do not match;
/// in cluster mode the mapping is ignored.
#[test]
fn subresource_mappings_give_the_parent_kind() {
    use crate::request::values::{SubresourceMapping, Values};
    let gvk = |g: &str, v: &str, k: &str| (g.to_owned(), v.to_owned(), k.to_owned());
    let values = Values {
        subresources: vec![SubresourceMapping {
            parent: gvk("apps", "v1", "Deployment"),
            kind: gvk("autoscaling", "v1", "Scale"),
            name: "deployments/scale".to_owned(),
        }],
        ..Values::default()
    };
    let mapped = Request {
        values: std::sync::Arc::new(values),
        ..Request::default()
    };
    let scale = |v: &str| {
        res(&format!(
            "apiVersion: autoscaling/{v}\nkind: Scale\nmetadata: {{name: web, namespace: default}}\n"
        ))
    };
    let (v1, v2) = (scale("v1"), scale("v2"));
    for (kinds, want) in [
        ("Deployment/scale", true),
        ("apps/v1/Deployment/scale", true),
        ("Deployment.scale", true),
        ("'*/scale'", true),
        ("Deployment", false),
        ("Scale", false),
        ("Deployment/status", false),
        ("autoscaling/v1/Deployment/scale", false),
    ] {
        let b = block(&format!("any: [{{resources: {{kinds: [{kinds}]}}}}]"));
        assert_eq!(b.selects(&v1, &mapped), want, "{kinds}");
        // Without the mapping (or for an unmapped version) the Scale is itself.
        assert_eq!(b.selects(&v1, &req()), kinds == "Scale", "{kinds}");
        assert_eq!(b.selects(&v2, &mapped), kinds == "Scale", "{kinds}");
    }
    let cluster = Request {
        offline: std::sync::Arc::new(crate::cluster::Offline {
            cluster: Some(Default::default()),
            ..Default::default()
        }),
        ..mapped.clone()
    };
    assert!(block("resources: {kinds: [Scale]}").selects(&v1, &cluster));
    assert!(!block("resources: {kinds: [Deployment/scale]}").selects(&v1, &cluster));
}
