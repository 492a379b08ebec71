//! Core (`v1`) defaults, Kubernetes v1.34: `pkg/apis/core/v1/defaults.go` (SetDefaults_Pod,
//! SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_ContainerPort, SetDefaults_Probe,
//! SetDefaults_Service, SetDefaults_PersistentVolume(Claim)Spec, SetDefaults_Secret/ConfigMap
//! volume sources) and the Pod admission plugins `plugin/pkg/admission/serviceaccount`,
//! `defaulttolerationseconds` and `priority`.

use super::{Edit, Node, Owner, Planner, Seg, Value, at, get, items, k, map, s, str_at};

/// `imagePullPolicy` of an image: `Always` for tag `latest` or no tag and no digest.
pub(crate) fn pull_policy(image: &str) -> &'static str {
    // The last path component holds the tag (a registry's host may have a port).
    let (rest, digest) = match image.split_once('@') {
        Some((r, _)) => (r, true),
        None => (image, false),
    };
    let last = rest.rsplit('/').next().unwrap_or(rest);
    let tag = last.split_once(':').map(|(_, t)| t);
    match (tag, digest) {
        (Some("latest"), _) | (None, false) => "Always",
        _ => "IfNotPresent",
    }
}

pub fn pod(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    pod_spec(p, root, &spec, Owner::Pod);
    // SetDefaults_Pod: a container's requests default to its limits.
    for list in ["initContainers", "containers"] {
        let list_path = at(&spec, k(list));
        for (i, _) in items(root, &list_path).iter().enumerate() {
            let resources = at(&at(&list_path, Seg::Index(i)), k("resources"));
            let Some(limits) = get(root, &at(&resources, k("limits"))).and_then(Node::as_map)
            else {
                continue;
            };
            let requests_written = get(root, &resources)
                .and_then(|r| r.get("requests"))
                .is_some_and(|r| !r.is_null());
            for (name, v) in limits.iter() {
                let requests = at(&resources, k("requests"));
                if !requests_written {
                    // The whole `requests` map is new: one default per resource name, each
                    // creating the map when it is applied alone.
                    let label = format!(
                        "{}.{name}={}",
                        super::dotted(&requests),
                        super::shown(&v.value)
                    );
                    let mut m = crate::yaml::Map::new();
                    m.insert(
                        name.to_owned(),
                        crate::source::Span::EMPTY,
                        Node::synthetic(v.value.clone()),
                    );
                    let edits = vec![
                        Edit::Set(requests.clone(), Node::synthetic(Value::Map(m))),
                        Edit::Set(at(&requests, k(name)), Node::synthetic(v.value.clone())),
                    ];
                    p.push(label, edits);
                } else {
                    p.set_if_absent(root, &requests, name, v.value.clone());
                }
            }
        }
    }
    if !p.create {
        return;
    }
    service_account(p, root);
    default_tolerations(p, root);
    // Priority: no class and no global default class gives priority 0.
    if str_at(root, &spec, "priorityClassName").is_none_or(str::is_empty) {
        p.set_if_absent(root, &spec, "priority", Value::Int(0));
        p.set_if_absent(root, &spec, "preemptionPolicy", s("PreemptLowerPriority"));
    }
}

/// The pod spec at `spec` (a Pod's, or a template's).
pub(crate) fn pod_spec(p: &mut Planner, root: &Node, spec: &[Seg], owner: Owner) {
    if !matches!(get(root, spec).map(|n| &n.value), Some(Value::Map(_))) {
        return;
    }
    p.set_if_absent(root, spec, "dnsPolicy", s("ClusterFirst"));
    // A Job's template gets `Always` too, which Job validation then refuses: the Job is not
    // admitted, so kpol leaves a Job's restartPolicy as written.
    if owner != Owner::JobTemplate {
        p.set_if_absent(root, spec, "restartPolicy", s("Always"));
    }
    p.set_if_absent(root, spec, "securityContext", map(vec![]));
    p.set_if_absent(root, spec, "terminationGracePeriodSeconds", Value::Int(30));
    p.set_if_absent(root, spec, "schedulerName", s("default-scheduler"));
    p.set_if_absent(root, spec, "enableServiceLinks", Value::Bool(true));
    let host_network = get(root, spec)
        .and_then(|n| n.get("hostNetwork"))
        .and_then(Node::as_bool)
        .unwrap_or(false);
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let list_path = at(spec, k(list));
        for (i, _) in items(root, &list_path).iter().enumerate() {
            container(p, root, &at(&list_path, Seg::Index(i)), host_network);
        }
    }
    let volumes = at(spec, k("volumes"));
    for (i, v) in items(root, &volumes).iter().enumerate() {
        let path = at(&volumes, Seg::Index(i));
        for source in ["secret", "configMap", "projected", "downwardAPI"] {
            if v.get(source).is_some_and(|n| n.as_map().is_some()) {
                p.set_if_absent(root, &at(&path, k(source)), "defaultMode", Value::Int(420));
            }
        }
        // A volume with no source is an emptyDir.
        let has_source = v
            .as_map()
            .is_some_and(|m| m.keys().any(|key| key != "name"));
        if !has_source {
            p.set_if_absent(root, &path, "emptyDir", map(vec![]));
        }
    }
}

fn container(p: &mut Planner, root: &Node, c: &[Seg], host_network: bool) {
    if let Some(image) = str_at(root, c, "image").filter(|i| !i.is_empty()) {
        p.set_if_absent(root, c, "imagePullPolicy", s(pull_policy(image)));
    }
    // `resources` is a struct: re-serialising writes it even when empty.
    p.set_if_absent(root, c, "resources", map(vec![]));
    p.set_if_absent(root, c, "terminationMessagePath", s("/dev/termination-log"));
    p.set_if_absent(root, c, "terminationMessagePolicy", s("File"));
    let ports = at(c, k("ports"));
    for (i, port) in items(root, &ports).iter().enumerate() {
        let path = at(&ports, Seg::Index(i));
        p.set_if_absent(root, &path, "protocol", s("TCP"));
        match port.get("hostPort").map(|n| &n.value) {
            // `hostPort` is `omitempty`: a 0 written is gone once re-serialised.
            Some(Value::Int(0)) => p.push(
                format!(
                    "{} dropped (0, omitempty)",
                    super::dotted(&at(&path, k("hostPort")))
                ),
                vec![Edit::Remove(at(&path, k("hostPort")))],
            ),
            Some(Value::Float(f)) if *f == 0.0 => p.push(
                format!(
                    "{} dropped (0, omitempty)",
                    super::dotted(&at(&path, k("hostPort")))
                ),
                vec![Edit::Remove(at(&path, k("hostPort")))],
            ),
            // With hostNetwork a port's hostPort is its containerPort.
            None if host_network => {
                if let Some(cp) = port.get("containerPort") {
                    p.set_if_absent(root, &path, "hostPort", cp.value.clone());
                }
            }
            _ => {}
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let path = at(c, k(probe));
        if get(root, &path).and_then(Node::as_map).is_none() {
            continue;
        }
        p.set_if_absent(root, &path, "timeoutSeconds", Value::Int(1));
        p.set_if_absent(root, &path, "periodSeconds", Value::Int(10));
        p.set_if_absent(root, &path, "successThreshold", Value::Int(1));
        p.set_if_absent(root, &path, "failureThreshold", Value::Int(3));
        let http = at(&path, k("httpGet"));
        if get(root, &http).and_then(Node::as_map).is_some() {
            p.set_if_absent(root, &http, "path", s("/"));
            p.set_if_absent(root, &http, "scheme", s("HTTP"));
        }
    }
}

/// Where the ServiceAccount plugin mounts the token.
pub(crate) const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The projected volume's name; the API server adds five random characters, kpol writes
/// fixed ones (`x` is among the characters it draws from).
pub(crate) const TOKEN_VOLUME: &str = "kube-api-access-xxxxx";

/// The ServiceAccount admission plugin on Pod CREATE: the `default` account, and its token
/// as a projected volume mounted in every container unless `automountServiceAccountToken`
/// is false (kpol cannot read the ServiceAccount's own setting; it assumes true).
fn service_account(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    // Mirror pods (static pods) are left alone.
    if get(
        root,
        &[
            k("metadata"),
            k("annotations"),
            k("kubernetes.io/config.mirror"),
        ],
    )
    .is_some()
    {
        return;
    }
    if str_at(root, &spec, "serviceAccountName").is_none_or(str::is_empty) {
        p.set_if_absent(root, &spec, "serviceAccountName", s("default"));
    }
    let automount = get(root, &spec)
        .and_then(|n| n.get("automountServiceAccountToken"))
        .and_then(Node::as_bool)
        .unwrap_or(true);
    if !automount {
        return;
    }
    let mounted = |c: &Node| {
        c.get("volumeMounts")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .any(|m| m.get("mountPath").and_then(Node::as_str) == Some(TOKEN_MOUNT))
    };
    let mut edits = vec![Edit::Push(
        at(&spec, k("volumes")),
        Node::synthetic(token_volume()),
    )];
    for list in ["initContainers", "containers"] {
        let list_path = at(&spec, k(list));
        for (i, c) in items(root, &list_path).iter().enumerate() {
            if c.as_map().is_none() || mounted(c) {
                continue;
            }
            let mount = map(vec![
                ("name", s(TOKEN_VOLUME)),
                ("readOnly", Value::Bool(true)),
                ("mountPath", s(TOKEN_MOUNT)),
            ]);
            edits.push(Edit::Push(
                at(&at(&list_path, Seg::Index(i)), k("volumeMounts")),
                Node::synthetic(mount),
            ));
        }
    }
    if edits.len() > 1 {
        p.push(
            format!(
                "spec.volumes[+]={TOKEN_VOLUME} (service account token, mounted at {TOKEN_MOUNT})"
            ),
            edits,
        );
    }
}

fn token_volume() -> Value {
    let items = |key: &str, path: &str| {
        Value::Seq(vec![Node::synthetic(map(vec![
            ("key", s(key)),
            ("path", s(path)),
        ]))])
    };
    let sources = Value::Seq(vec![
        Node::synthetic(map(vec![(
            "serviceAccountToken",
            map(vec![
                ("expirationSeconds", Value::Int(3607)),
                ("path", s("token")),
            ]),
        )])),
        Node::synthetic(map(vec![(
            "configMap",
            map(vec![
                ("name", s("kube-root-ca.crt")),
                ("items", items("ca.crt", "ca.crt")),
            ]),
        )])),
        Node::synthetic(map(vec![(
            "downwardAPI",
            map(vec![(
                "items",
                Value::Seq(vec![Node::synthetic(map(vec![
                    (
                        "fieldRef",
                        map(vec![
                            ("apiVersion", s("v1")),
                            ("fieldPath", s("metadata.namespace")),
                        ]),
                    ),
                    ("path", s("namespace")),
                ]))]),
            )]),
        )])),
    ]);
    map(vec![
        ("name", s(TOKEN_VOLUME)),
        (
            "projected",
            map(vec![("defaultMode", Value::Int(420)), ("sources", sources)]),
        ),
    ])
}

/// DefaultTolerationSeconds on Pod CREATE: tolerate `not-ready` and `unreachable` for 300 s
/// unless a toleration covers them already (same key or no key, NoExecute or no effect).
fn default_tolerations(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    let tolerations = items(root, &at(&spec, k("tolerations")));
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let covered = tolerations.iter().any(|t| {
            let tk = t.get("key").and_then(Node::as_str).unwrap_or("");
            let effect = t.get("effect").and_then(Node::as_str).unwrap_or("");
            (tk == key || tk.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        });
        if covered {
            continue;
        }
        let t = map(vec![
            ("key", s(key)),
            ("operator", s("Exists")),
            ("effect", s("NoExecute")),
            ("tolerationSeconds", Value::Int(300)),
        ]);
        p.push(
            format!("spec.tolerations[+]={key}:NoExecute for 300s"),
            vec![Edit::Push(at(&spec, k("tolerations")), Node::synthetic(t))],
        );
    }
}

pub fn service(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    p.set_if_absent(root, &spec, "sessionAffinity", s("None"));
    let ty = str_at(root, &spec, "type")
        .unwrap_or("ClusterIP")
        .to_owned();
    p.set_if_absent(root, &spec, "type", s("ClusterIP"));
    if ty == "ExternalName" {
        return;
    }
    p.set_if_absent(root, &spec, "internalTrafficPolicy", s("Cluster"));
    if ty == "NodePort" || ty == "LoadBalancer" {
        p.set_if_absent(root, &spec, "externalTrafficPolicy", s("Cluster"));
    }
    if ty == "LoadBalancer" {
        p.set_if_absent(
            root,
            &spec,
            "allocateLoadBalancerNodePorts",
            Value::Bool(true),
        );
    }
    let ports = at(&spec, k("ports"));
    for (i, port) in items(root, &ports).iter().enumerate() {
        let path = at(&ports, Seg::Index(i));
        p.set_if_absent(root, &path, "protocol", s("TCP"));
        if let Some(n) = port.get("port") {
            p.set_if_absent(root, &path, "targetPort", n.value.clone());
        }
    }
}

pub(crate) fn pvc(p: &mut Planner, root: &Node) {
    p.set_if_absent(root, &[k("spec")], "volumeMode", s("Filesystem"));
}

pub(crate) fn pv(p: &mut Planner, root: &Node) {
    p.set_if_absent(
        root,
        &[k("spec")],
        "persistentVolumeReclaimPolicy",
        s("Retain"),
    );
    p.set_if_absent(root, &[k("spec")], "volumeMode", s("Filesystem"));
}

pub(crate) fn replication_controller(p: &mut Planner, root: &Node) {
    p.set_if_absent(root, &[k("spec")], "replicas", Value::Int(1));
    p.pod_template(root, &[k("spec"), k("template")], Owner::Template);
}
