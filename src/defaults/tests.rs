use super::*;
use crate::yaml::Limits;

fn res(text: &str) -> Resource {
    let source = std::sync::Arc::new(crate::source::SourceFile::new("t.yaml", text));
    let mut m = crate::manifest::read_manifests(&source, Limits::default());
    assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
    m.resources.remove(0)
}

fn defaulted(text: &str) -> (Resource, Vec<String>) {
    let r = res(text);
    let plan = plan(&r);
    let labels = plan.iter().map(|d| d.label.clone()).collect();
    (apply(&r, &plan.iter().collect::<Vec<_>>()), labels)
}

fn at_path<'a>(r: &'a Resource, path: &str) -> Option<&'a Value> {
    let mut node = &r.root;
    for seg in path.split('.') {
        node = match seg.parse::<usize>() {
            Ok(i) => node.as_seq()?.get(i)?,
            Err(_) => node.get(seg)?,
        };
    }
    Some(&node.value)
}

fn str_of<'a>(r: &'a Resource, path: &str) -> Option<&'a str> {
    match at_path(r, path) {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: nginx\n    ports: [{containerPort: 80, hostPort: 0}]\n  - name: b\n    image: nginx:1.27\n  - name: c\n    image: reg:5000/x/nginx@sha256:abc\n  - name: d\n    image: nginx:latest\n";

#[test]
fn pull_policy_follows_the_tag() {
    assert_eq!(core::pull_policy("nginx"), "Always");
    assert_eq!(core::pull_policy("nginx:latest"), "Always");
    assert_eq!(core::pull_policy("nginx:1.27"), "IfNotPresent");
    assert_eq!(core::pull_policy("reg:5000/nginx"), "Always");
    assert_eq!(core::pull_policy("reg:5000/nginx:1"), "IfNotPresent");
    assert_eq!(core::pull_policy("nginx@sha256:abc"), "IfNotPresent");
    assert_eq!(core::pull_policy("nginx:latest@sha256:abc"), "Always");
}

#[test]
fn pod_spec_and_container_defaults() {
    let (r, labels) = defaulted(POD);
    let c = |i: usize, f: &str| str_of(&r, &format!("spec.containers.{i}.{f}")).map(str::to_owned);
    assert_eq!(c(0, "imagePullPolicy").as_deref(), Some("Always"));
    assert_eq!(c(1, "imagePullPolicy").as_deref(), Some("IfNotPresent"));
    assert_eq!(c(2, "imagePullPolicy").as_deref(), Some("IfNotPresent"));
    assert_eq!(c(3, "imagePullPolicy").as_deref(), Some("Always"));
    assert_eq!(
        c(0, "terminationMessagePath").as_deref(),
        Some("/dev/termination-log")
    );
    assert_eq!(c(0, "terminationMessagePolicy").as_deref(), Some("File"));
    assert_eq!(c(0, "ports.0.protocol").as_deref(), Some("TCP"));
    assert_eq!(at_path(&r, "spec.containers.0.ports.0.hostPort"), None);
    assert_eq!(str_of(&r, "spec.restartPolicy"), Some("Always"));
    assert_eq!(str_of(&r, "spec.dnsPolicy"), Some("ClusterFirst"));
    assert_eq!(str_of(&r, "spec.schedulerName"), Some("default-scheduler"));
    assert!(matches!(at_path(&r, "spec.securityContext"), Some(Value::Map(m)) if m.is_empty()));
    assert_eq!(
        at_path(&r, "spec.terminationGracePeriodSeconds"),
        Some(&Value::Float(30.0))
    );
    assert_eq!(
        at_path(&r, "spec.enableServiceLinks"),
        Some(&Value::Bool(true))
    );
    assert_eq!(
        at_path(&r, "metadata.creationTimestamp"),
        Some(&Value::Null)
    );
    assert!(labels.contains(&"spec.containers[0].imagePullPolicy=Always".to_owned()));
    assert!(
        labels.contains(&"spec.containers[0].ports[0].hostPort dropped (0, omitempty)".to_owned())
    );
}

#[test]
fn pod_admission_plugins() {
    let (r, _) = defaulted(POD);
    assert_eq!(str_of(&r, "spec.serviceAccountName"), Some("default"));
    assert_eq!(str_of(&r, "spec.volumes.0.name"), Some(core::TOKEN_VOLUME));
    assert_eq!(
        str_of(
            &r,
            "spec.volumes.0.projected.sources.0.serviceAccountToken.path"
        ),
        Some("token")
    );
    for i in 0..4 {
        assert_eq!(
            str_of(&r, &format!("spec.containers.{i}.volumeMounts.0.mountPath")),
            Some(core::TOKEN_MOUNT)
        );
    }
    assert_eq!(
        str_of(&r, "spec.tolerations.0.key"),
        Some("node.kubernetes.io/not-ready")
    );
    assert_eq!(
        str_of(&r, "spec.tolerations.1.key"),
        Some("node.kubernetes.io/unreachable")
    );
    assert_eq!(
        at_path(&r, "spec.tolerations.1.tolerationSeconds"),
        Some(&Value::Float(300.0))
    );
    assert_eq!(str_of(&r, "spec.tolerations.1.effect"), Some("NoExecute"));
    assert_eq!(at_path(&r, "spec.priority"), Some(&Value::Float(0.0)));
}

#[test]
fn no_token_when_automount_is_off_and_covered_tolerations_are_kept() {
    let (r, _) = defaulted(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  automountServiceAccountToken: false\n  serviceAccountName: builder\n  tolerations:\n  - {key: node.kubernetes.io/not-ready, operator: Exists}\n  containers: [{name: a, image: x}]\n",
    );
    assert_eq!(str_of(&r, "spec.serviceAccountName"), Some("builder"));
    assert_eq!(at_path(&r, "spec.volumes"), None);
    assert_eq!(at_path(&r, "spec.containers.0.volumeMounts"), None);
    let t = r
        .root
        .get_path(&["spec", "tolerations"])
        .and_then(Node::as_seq)
        .unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[1].get("key").and_then(Node::as_str),
        Some("node.kubernetes.io/unreachable")
    );
}

#[test]
fn written_fields_are_never_overwritten() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: '2024-01-01T00:00:00Z'}\nspec:\n  restartPolicy: Never\n  dnsPolicy: Default\n  schedulerName: mine\n  securityContext: {runAsNonRoot: true}\n  terminationGracePeriodSeconds: 5\n  enableServiceLinks: false\n  containers:\n  - name: a\n    image: nginx\n    imagePullPolicy: Never\n    terminationMessagePath: /t\n    terminationMessagePolicy: FallbackToLogsOnError\n    ports: [{containerPort: 53, protocol: UDP, hostPort: 53}]\n";
    let (r, labels) = defaulted(text);
    for l in &labels {
        assert!(
            !l.starts_with("spec.restartPolicy") && !l.contains("imagePullPolicy"),
            "{l}"
        );
    }
    assert_eq!(str_of(&r, "spec.restartPolicy"), Some("Never"));
    assert_eq!(str_of(&r, "spec.dnsPolicy"), Some("Default"));
    assert_eq!(str_of(&r, "spec.schedulerName"), Some("mine"));
    assert_eq!(
        at_path(&r, "spec.securityContext.runAsNonRoot"),
        Some(&Value::Bool(true))
    );
    assert_eq!(
        at_path(&r, "spec.terminationGracePeriodSeconds"),
        Some(&Value::Float(5.0))
    );
    assert_eq!(
        at_path(&r, "spec.enableServiceLinks"),
        Some(&Value::Bool(false))
    );
    assert_eq!(
        str_of(&r, "spec.containers.0.imagePullPolicy"),
        Some("Never")
    );
    assert_eq!(
        str_of(&r, "spec.containers.0.terminationMessagePath"),
        Some("/t")
    );
    assert_eq!(
        str_of(&r, "spec.containers.0.ports.0.protocol"),
        Some("UDP")
    );
    assert_eq!(
        at_path(&r, "spec.containers.0.ports.0.hostPort"),
        Some(&Value::Float(53.0))
    );
    assert_eq!(
        str_of(&r, "metadata.creationTimestamp"),
        Some("2024-01-01T00:00:00Z")
    );
}

#[test]
fn requests_default_to_limits_in_pods_only() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    resources: {limits: {cpu: 500m, memory: 1Gi}}\n  - name: b\n    image: x\n    resources: {limits: {cpu: '1', memory: 2Gi}, requests: {cpu: 100m}}\n  - name: c\n    image: x\n    resources: {limits: {cpu: '2', memory: 3Gi}, requests: null}\n";
    let (r, _) = defaulted(pod);
    assert_eq!(
        str_of(&r, "spec.containers.2.resources.requests.cpu"),
        Some("2")
    );
    assert_eq!(
        str_of(&r, "spec.containers.2.resources.requests.memory"),
        Some("3Gi")
    );
    assert_eq!(
        str_of(&r, "spec.containers.0.resources.requests.cpu"),
        Some("500m")
    );
    assert_eq!(
        str_of(&r, "spec.containers.0.resources.requests.memory"),
        Some("1Gi")
    );
    assert_eq!(
        str_of(&r, "spec.containers.1.resources.requests.cpu"),
        Some("100m")
    );
    assert_eq!(
        str_of(&r, "spec.containers.1.resources.requests.memory"),
        Some("2Gi")
    );
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n        resources: {limits: {cpu: 500m}}\n";
    let (r, _) = defaulted(deploy);
    assert_eq!(
        at_path(&r, "spec.template.spec.containers.0.resources.requests"),
        None
    );
}

#[test]
fn templates_get_pod_spec_defaults_but_no_admission_plugins() {
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: nginx}]\n";
    let (r, _) = defaulted(deploy);
    assert_eq!(at_path(&r, "spec.replicas"), Some(&Value::Float(1.0)));
    assert_eq!(
        at_path(&r, "spec.revisionHistoryLimit"),
        Some(&Value::Float(10.0))
    );
    assert_eq!(
        at_path(&r, "spec.progressDeadlineSeconds"),
        Some(&Value::Float(600.0))
    );
    assert_eq!(str_of(&r, "spec.strategy.type"), Some("RollingUpdate"));
    assert_eq!(
        str_of(&r, "spec.strategy.rollingUpdate.maxSurge"),
        Some("25%")
    );
    assert_eq!(
        str_of(&r, "spec.strategy.rollingUpdate.maxUnavailable"),
        Some("25%")
    );
    assert_eq!(
        str_of(&r, "spec.template.spec.restartPolicy"),
        Some("Always")
    );
    assert_eq!(
        str_of(&r, "spec.template.spec.containers.0.imagePullPolicy"),
        Some("Always")
    );
    assert_eq!(
        at_path(&r, "spec.template.metadata.creationTimestamp"),
        Some(&Value::Null)
    );
    assert!(matches!(at_path(&r, "status"), Some(Value::Map(m)) if m.is_empty()));
    assert!(
        matches!(at_path(&r, "spec.template.spec.containers.0.resources"), Some(Value::Map(m)) if m.is_empty())
    );
    assert_eq!(at_path(&r, "spec.template.spec.serviceAccountName"), None);
    assert_eq!(at_path(&r, "spec.template.spec.volumes"), None);
    assert_eq!(at_path(&r, "spec.template.spec.tolerations"), None);

    let recreate = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  strategy: {type: Recreate}\n  template: {spec: {containers: [{name: a, image: x}]}}\n";
    let (r, _) = defaulted(recreate);
    assert_eq!(at_path(&r, "spec.strategy.rollingUpdate"), None);

    let cron = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: a, image: busybox:1}]\n";
    let (r, _) = defaulted(cron);
    assert_eq!(str_of(&r, "spec.concurrencyPolicy"), Some("Allow"));
    assert_eq!(
        str_of(
            &r,
            "spec.jobTemplate.spec.template.spec.containers.0.imagePullPolicy"
        ),
        Some("IfNotPresent")
    );
    assert_eq!(
        at_path(&r, "spec.jobTemplate.spec.template.spec.restartPolicy"),
        None
    );
    assert_eq!(at_path(&r, "spec.jobTemplate.spec.backoffLimit"), None);

    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: a, image: busybox}]\n";
    let (r, _) = defaulted(job);
    assert_eq!(at_path(&r, "spec.backoffLimit"), Some(&Value::Float(6.0)));
    assert_eq!(at_path(&r, "spec.completions"), Some(&Value::Float(1.0)));
    assert_eq!(
        str_of(&r, "spec.template.spec.dnsPolicy"),
        Some("ClusterFirst")
    );

    for (kind, field) in [
        ("StatefulSet", "podManagementPolicy"),
        ("DaemonSet", "updateStrategy"),
    ] {
        let text = format!(
            "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: s}}\nspec:\n  template: {{spec: {{containers: [{{name: a, image: x}}]}}}}\n"
        );
        let (r, _) = defaulted(&text);
        assert!(at_path(&r, &format!("spec.{field}")).is_some(), "{kind}");
        assert_eq!(
            at_path(&r, "spec.revisionHistoryLimit"),
            Some(&Value::Float(10.0))
        );
        assert_eq!(
            str_of(&r, "spec.template.spec.schedulerName"),
            Some("default-scheduler")
        );
    }
}

#[test]
fn service_storage_class_and_claims() {
    let (r, _) = defaulted(
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}, {port: 53, protocol: UDP, targetPort: dns}]\n",
    );
    assert_eq!(str_of(&r, "spec.type"), Some("ClusterIP"));
    assert_eq!(str_of(&r, "spec.sessionAffinity"), Some("None"));
    assert_eq!(str_of(&r, "spec.ports.0.protocol"), Some("TCP"));
    assert_eq!(
        at_path(&r, "spec.ports.0.targetPort"),
        Some(&Value::Float(80.0))
    );
    assert_eq!(str_of(&r, "spec.ports.1.protocol"), Some("UDP"));
    assert_eq!(str_of(&r, "spec.ports.1.targetPort"), Some("dns"));
    let (r, _) = defaulted(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: x\n",
    );
    assert_eq!(str_of(&r, "reclaimPolicy"), Some("Delete"));
    assert_eq!(str_of(&r, "volumeBindingMode"), Some("Immediate"));
    let (r, _) = defaulted(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce]}\n",
    );
    assert_eq!(str_of(&r, "spec.volumeMode"), Some("Filesystem"));
}

#[test]
fn host_network_ports_get_host_ports_and_unknown_kinds_nothing() {
    let (r, _) = defaulted(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n  containers: [{name: a, image: x, ports: [{containerPort: 8080}]}]\n",
    );
    assert_eq!(
        at_path(&r, "spec.containers.0.ports.0.hostPort"),
        Some(&Value::Float(8080.0))
    );
    let crd = res("apiVersion: example.com/v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n");
    assert!(plan(&crd).is_empty());
}

#[test]
fn each_default_applies_alone_and_inserted_nodes_locate_at_their_parent() {
    let r = res(POD);
    let plan = plan(&r);
    for d in &plan {
        let one = apply(&r, &[d]);
        assert_ne!(one.root, r.root, "{}", d.label);
    }
    let all = apply(&r, &plan.iter().collect::<Vec<_>>());
    let (span, depth) = all
        .root
        .locate(&["spec", "containers", "0", "imagePullPolicy"]);
    assert_eq!(depth, 3);
    let start = span.start as usize;
    assert!(POD[start..].starts_with("name: a"), "{:?}", &POD[start..]);
}

#[test]
fn admission_plugins_act_on_create_only() {
    let r = res(POD);
    let labels: Vec<String> = plan_for(&r, false).into_iter().map(|d| d.label).collect();
    assert!(labels.contains(&"spec.dnsPolicy=ClusterFirst".to_owned()));
    assert!(
        !labels
            .iter()
            .any(|l| l.contains("serviceAccountName") || l.contains("tolerations"))
    );
}

fn engine(text: &str) -> crate::engine::Engine {
    let source = std::sync::Arc::new(crate::source::SourceFile::new("p.yaml", text));
    let docs = crate::yaml::parse_documents(text, Limits::default()).unwrap();
    let loaded = crate::kinds::load_policies(&source, docs);
    assert!(loaded.invalid.is_empty(), "{:?}", loaded.diagnostics);
    crate::engine::Engine::new(loaded.policies)
}

/// A rule that two defaults change only together names both (the defaults without which the
/// result is the written one's); one that a single default changes names that one.
#[test]
fn changed_names_the_defaults_that_make_the_difference() {
    let engine = engine(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  \
         - name: both\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate:\n      \
         message: both\n      deny:\n        conditions:\n          all:\n          \
         - {key: \"{{ request.object.spec.dnsPolicy || '' }}\", operator: Equals, value: ClusterFirst}\n          \
         - {key: \"{{ request.object.spec.schedulerName || '' }}\", operator: Equals, value: default-scheduler}\n  \
         - name: pull\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate:\n      \
         message: pull\n      pattern:\n        spec:\n          containers:\n          \
         - imagePullPolicy: Always\n",
    );
    let r = res(POD);
    let plan = plan(&r);
    let defaulted = apply(&r, &plan.iter().collect::<Vec<_>>());
    let request = crate::request::Request::default();
    let changed = changed(&engine, &request, &r, &defaulted, &plan);
    let both = changed.iter().find(|c| c.rule == "both").unwrap();
    assert_eq!(both.written, Some(crate::report::Status::Pass));
    assert_eq!(
        both.defaults,
        [
            "spec.dnsPolicy=ClusterFirst",
            "spec.schedulerName=default-scheduler"
        ]
    );
    // Containers b and c pull IfNotPresent: the rule fails either way, nothing changed.
    assert!(!changed.iter().any(|c| c.rule == "pull"));
}
