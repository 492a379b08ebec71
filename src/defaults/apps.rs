//! `apps/v1` defaults, Kubernetes v1.34: `pkg/apis/apps/v1/defaults.go`.

use super::{Node, Owner, Planner, Value, get, k, map, s, str_at};

fn template(p: &mut Planner, root: &Node) {
    p.pod_template(root, &[k("spec"), k("template")], Owner::Template);
}

pub fn deployment(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    p.set_if_absent(root, &spec, "replicas", Value::Int(1));
    let strategy = [k("spec"), k("strategy")];
    let ru = || map(vec![("maxUnavailable", s("25%")), ("maxSurge", s("25%"))]);
    match get(root, &strategy) {
        None => p.set_if_absent(
            root,
            &spec,
            "strategy",
            map(vec![("type", s("RollingUpdate")), ("rollingUpdate", ru())]),
        ),
        Some(_) => {
            p.set_if_absent(root, &strategy, "type", s("RollingUpdate"));
            if str_at(root, &strategy, "type").is_none_or(|t| t == "RollingUpdate") {
                let path = [k("spec"), k("strategy"), k("rollingUpdate")];
                match get(root, &path) {
                    Some(_) => {
                        p.set_if_absent(root, &path, "maxUnavailable", s("25%"));
                        p.set_if_absent(root, &path, "maxSurge", s("25%"));
                    }
                    None => p.set_if_absent(root, &strategy, "rollingUpdate", ru()),
                }
            }
        }
    }
    p.set_if_absent(root, &spec, "revisionHistoryLimit", Value::Int(10));
    p.set_if_absent(root, &spec, "progressDeadlineSeconds", Value::Int(600));
    template(p, root);
}

pub(crate) fn stateful_set(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    p.set_if_absent(root, &spec, "replicas", Value::Int(1));
    p.set_if_absent(root, &spec, "podManagementPolicy", s("OrderedReady"));
    let strategy = [k("spec"), k("updateStrategy")];
    match get(root, &strategy) {
        None => p.set_if_absent(
            root,
            &spec,
            "updateStrategy",
            map(vec![
                ("type", s("RollingUpdate")),
                ("rollingUpdate", map(vec![("partition", Value::Int(0))])),
            ]),
        ),
        Some(_) => {
            p.set_if_absent(root, &strategy, "type", s("RollingUpdate"));
            if str_at(root, &strategy, "type").is_none_or(|t| t == "RollingUpdate") {
                let ru = [k("spec"), k("updateStrategy"), k("rollingUpdate")];
                match get(root, &ru) {
                    Some(_) => p.set_if_absent(root, &ru, "partition", Value::Int(0)),
                    None => p.set_if_absent(
                        root,
                        &strategy,
                        "rollingUpdate",
                        map(vec![("partition", Value::Int(0))]),
                    ),
                }
            }
        }
    }
    p.set_if_absent(root, &spec, "revisionHistoryLimit", Value::Int(10));
    p.set_if_absent(
        root,
        &spec,
        "persistentVolumeClaimRetentionPolicy",
        map(vec![
            ("whenDeleted", s("Retain")),
            ("whenScaled", s("Retain")),
        ]),
    );
    template(p, root);
}

pub(crate) fn daemon_set(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    let strategy = [k("spec"), k("updateStrategy")];
    let ru = || {
        map(vec![
            ("maxUnavailable", Value::Int(1)),
            ("maxSurge", Value::Int(0)),
        ])
    };
    match get(root, &strategy) {
        None => p.set_if_absent(
            root,
            &spec,
            "updateStrategy",
            map(vec![("type", s("RollingUpdate")), ("rollingUpdate", ru())]),
        ),
        Some(_) => {
            p.set_if_absent(root, &strategy, "type", s("RollingUpdate"));
            if str_at(root, &strategy, "type").is_none_or(|t| t == "RollingUpdate") {
                let path = [k("spec"), k("updateStrategy"), k("rollingUpdate")];
                match get(root, &path) {
                    Some(_) => {
                        p.set_if_absent(root, &path, "maxUnavailable", Value::Int(1));
                        p.set_if_absent(root, &path, "maxSurge", Value::Int(0));
                    }
                    None => p.set_if_absent(root, &strategy, "rollingUpdate", ru()),
                }
            }
        }
    }
    p.set_if_absent(root, &spec, "revisionHistoryLimit", Value::Int(10));
    template(p, root);
}

pub(crate) fn replica_set(p: &mut Planner, root: &Node) {
    p.set_if_absent(root, &[k("spec")], "replicas", Value::Int(1));
    template(p, root);
}
