//! Messages, controllers, errors and `exclude`.

use serde_json::json;

use super::{base, merge, pod_with, resource, run, sc};

fn pod_with_patch(mut doc: serde_json::Value, patch: serde_json::Value) -> serde_json::Value {
    merge(&mut doc, &patch);
    doc
}
use crate::report::Status;

const BASELINE: &str = "{level: baseline, version: latest}";
const RESTRICTED: &str = "{level: restricted, version: latest}";

fn fail_text(rule_level: &str, checks: &str) -> String {
    format!("Validation rule 'r' failed. It violates PodSecurity \"{rule_level}\": {checks}")
}

#[test]
fn pass_message() {
    let v = run(RESTRICTED, &base());
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.message, "Validation rule 'r' passed.");
    assert_eq!(v.path, None);
}

#[test]
fn failure_message_lists_checks_and_field_errors() {
    let doc = pod_with(json!({"spec": {
    "volumes": [{"name": "v", "nfs": {"server": "s", "path": "/"}}],
    "containers": [
        {"securityContext": {"capabilities": null, "allowPrivilegeEscalation": null}},
        {"name": "d", "image": "busybox", "securityContext": {
            "allowPrivilegeEscalation": false, "runAsNonRoot": true,
            "seccompProfile": {"type": "RuntimeDefault"},
            "capabilities": {"add": ["SYS_TIME", "NET_ADMIN"], "drop": ["NET_RAW"]}}}
    ]}}));
    let v = run(RESTRICTED, &doc);
    assert_eq!(v.status, Status::Fail);
    assert_eq!(
        v.message,
        fail_text(
            "restricted:latest",
            "(Forbidden reason: allowPrivilegeEscalation != false, field error list: \
             [spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, forbidden values found: nil])\
             (Forbidden reason: non-default capabilities, field error list: \
             [spec.containers[1].securityContext.capabilities.add is forbidden, forbidden values found: [NET_ADMIN SYS_TIME]])\
             (Forbidden reason: unrestricted capabilities, field error list: \
             [spec.containers[0].securityContext.capabilities.drop: Required value, \
             spec.containers[1].securityContext.capabilities.drop is forbidden, forbidden values found: [NET_RAW], \
             spec.containers[1].securityContext.capabilities.add is forbidden, forbidden values found: [NET_ADMIN SYS_TIME]])\
             (Forbidden reason: restricted volume types, field error list: \
             [spec.volumes[0].nfs is forbidden, forbidden values found: <nil>])"
        )
    );
    let want: Vec<String> = [
        "spec",
        "containers",
        "0",
        "securityContext",
        "allowPrivilegeEscalation",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(v.path, Some(want));
}

#[test]
fn empty_bad_values_and_checks_without_field_errors() {
    let doc = pod_with(json!({"spec": {"containers": [{
        "securityContext": {"seccompProfile": {"type": null}},
        "startupProbe": {"tcpSocket": {"host": "h", "port": 1}}}]}}));
    let v = run("{level: baseline}", &doc);
    // The version is printed as written: empty when omitted.
    assert_eq!(
        v.message,
        fail_text(
            "baseline:",
            "(Forbidden reason: probe or lifecycle host, field error list: [])\
             (Forbidden reason: seccompProfile, field error list: \
             [spec.containers[0].securityContext.seccompProfile.type: Forbidden])"
        )
    );
    // The first check has no field error: the finding points at the probe's host.
    let want: Vec<String> = [
        "spec",
        "containers",
        "0",
        "startupProbe",
        "tcpSocket",
        "host",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(v.path, Some(want));
}

#[test]
fn controllers_evaluate_the_pod_template() {
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata:\n      annotations: {container.apparmor.security.beta.kubernetes.io/c: unconfined}\n    spec:\n      hostNetwork: true\n      containers: [{name: c, image: nginx}]\n";
    let v = super::super::validate("r", &super::node(BASELINE), &resource(deploy));
    assert_eq!(
        v.message,
        fail_text(
            "baseline:latest",
            "(Forbidden reason: forbidden AppArmor profile, field error list: \
             [spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c] is forbidden, forbidden values found: unconfined])\
             (Forbidden reason: host namespaces, field error list: \
             [spec.template.spec.hostNetwork is forbidden, forbidden values found: true])"
        )
    );
    let want: Vec<String> = [
        "spec",
        "template",
        "metadata",
        "annotations",
        "container.apparmor.security.beta.kubernetes.io/c",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(v.path, Some(want));
}

#[test]
fn cronjobs_use_the_job_template_metadata() {
    let cron = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    metadata:\n      annotations: {container.apparmor.security.beta.kubernetes.io/c: unconfined}\n    spec:\n      template:\n        metadata:\n          annotations: {container.apparmor.security.beta.kubernetes.io/d: unconfined}\n        spec:\n          containers: [{name: c, image: nginx, securityContext: {privileged: true}}]\n";
    let v = super::super::validate("r", &super::node(BASELINE), &resource(cron));
    assert_eq!(
        v.message,
        fail_text(
            "baseline:latest",
            "(Forbidden reason: forbidden AppArmor profile, field error list: \
             [spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c] is forbidden, forbidden values found: unconfined])\
             (Forbidden reason: privileged, field error list: \
             [spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])"
        )
    );
    let path = v.path.unwrap_or_default();
    assert_eq!(
        path[..4],
        ["spec", "jobTemplate", "metadata", "annotations"]
    );
}

#[test]
fn errors() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {}\n";
    let v = super::super::validate("r", &super::node(BASELINE), &resource(svc));
    assert_eq!(v.status, Status::Error);
    assert_eq!(
        v.message,
        "Error while getting new resource: could not find correct resource type"
    );
    let v = run("{level: baseline, version: v1.x}", &base());
    assert_eq!(v.status, Status::Error);
    assert_eq!(
        v.message,
        "failed to parse pod security api version: must be \"latest\" or \"v1.x\""
    );
    let v = run(
        BASELINE,
        &pod_with(json!({"spec": {"hostNetwork": "yes please"}})),
    );
    assert_eq!(v.status, Status::Error);
    assert_eq!(
        v.message,
        "Error while getting new resource: json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"
    );
    let v = run(BASELINE, &pod_with(sc(json!({"privileged": "true"}))));
    assert_eq!(v.status, Status::Error);
    // Nested structs name their whole field path.
    let v = run(
        BASELINE,
        &pod_with(sc(json!({"capabilities": {"add": "NET_RAW"}}))),
    );
    assert_eq!(
        v.message,
        "Error while getting new resource: json: cannot unmarshal string into Go struct field Capabilities.spec.containers.securityContext.capabilities.add of type []v1.Capability"
    );
    let v = run(
        BASELINE,
        &pod_with(sc(json!({"seLinuxOptions": {"type": 3}}))),
    );
    assert_eq!(
        v.message,
        "Error while getting new resource: json: cannot unmarshal number 3 into Go struct field SELinuxOptions.spec.containers.securityContext.seLinuxOptions.type of type string"
    );
    let v = run(
        BASELINE,
        &pod_with(sc(json!({"capabilities": {"drop": ["ALL", 1]}}))),
    );
    assert_eq!(
        v.message,
        "Error while getting new resource: json: cannot unmarshal number 1 into Go struct field Capabilities.spec.containers.securityContext.capabilities.drop of type v1.Capability"
    );
}

#[test]
fn exclude_pod_level_controls() {
    let doc = pod_with(json!({"spec": {"hostNetwork": true, "hostPID": true}}));
    let all = "{level: baseline, exclude: [{controlName: Host Namespaces}]}";
    assert_eq!(run(all, &doc).status, Status::Pass);
    let both = "{level: baseline, exclude: [\
        {controlName: Host Namespaces, restrictedField: spec.hostNetwork, values: ['true']},\
        {controlName: Host Namespaces, restrictedField: spec.hostPID, values: ['t*']}]}";
    assert_eq!(run(both, &doc).status, Status::Pass);
    let one = "{level: baseline, exclude: [\
        {controlName: Host Namespaces, restrictedField: spec.hostNetwork, values: ['true']}]}";
    let v = run(one, &doc);
    assert_eq!(
        v.message,
        fail_text(
            "baseline:",
            "(Forbidden reason: host namespaces, field error list: \
             [spec.hostPID is forbidden, forbidden values found: true])"
        )
    );
    let wrong_value = "{level: baseline, exclude: [\
        {controlName: Host Namespaces, restrictedField: spec.hostNetwork, values: ['false']}]}";
    let unknown = "{level: baseline, exclude: [{controlName: Nope}]}";
    let other = "{level: baseline, exclude: [{controlName: Sysctls}]}";
    for rule in [wrong_value, unknown, other] {
        assert_eq!(run(rule, &doc).status, Status::Fail, "{rule}");
    }
    let vols = pod_with(json!({"spec": {"volumes": [
        {"name": "a", "hostPath": {"path": "/var/log"}},
        {"name": "b", "hostPath": {"path": "/etc"}}]}}));
    let logs = "{level: baseline, exclude: [{controlName: HostPath Volumes, \
        restrictedField: 'spec.volumes[*].hostPath', values: ['/var/*']}]}";
    let v = run(logs, &vols);
    assert!(
        v.message
            .ends_with("[spec.volumes[1].hostPath is forbidden, forbidden values found: /etc])")
    );
}

#[test]
fn exclude_container_level_controls_by_image() {
    let doc = pod_with(json!({"spec": {
        "initContainers": [{"name": "i", "image": "ghcr.io/org/init:1",
            "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}],
        "containers": [
            {"image": "ghcr.io/org/app:1", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}},
            {"name": "d", "image": "busybox", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}]}}));
    let rule =
        "{level: baseline, exclude: [{controlName: Capabilities, images: ['ghcr.io/org/*']}]}";
    let v = run(rule, &doc);
    assert_eq!(
        v.message,
        fail_text(
            "baseline:",
            "(Forbidden reason: non-default capabilities, field error list: \
             [spec.containers[1].securityContext.capabilities.add is forbidden, forbidden values found: [NET_ADMIN]])"
        )
    );
    let everything = "{level: baseline, exclude: [{controlName: Capabilities, images: ['*']}]}";
    assert_eq!(run(everything, &doc).status, Status::Pass);
    // values must cover every bad value of the error.
    let net = "{level: baseline, exclude: [{controlName: Capabilities, images: ['*'], \
        restrictedField: 'spec.containers[*].securityContext.capabilities.add', values: ['NET_*']}]}";
    let v = run(net, &doc);
    assert!(
        v.message.contains("spec.initContainers[0]"),
        "{}",
        v.message
    );
    assert!(!v.message.contains("spec.containers["), "{}", v.message);
    let two = pod_with(sc(
        json!({"capabilities": {"add": ["NET_ADMIN", "SYS_TIME"], "drop": ["ALL"]}}),
    ));
    assert_eq!(run(net, &two).status, Status::Fail);
}

#[test]
fn exclude_seccomp_covers_both_checks() {
    let doc = pod_with(sc(json!({"seccompProfile": {"type": "Unconfined"}})));
    assert_eq!(run(RESTRICTED, &doc).status, Status::Fail);
    let rule = "{level: restricted, exclude: [{controlName: Seccomp, images: ['nginx']}]}";
    assert_eq!(run(rule, &doc).status, Status::Pass);
    let other_image = "{level: restricted, exclude: [{controlName: Seccomp, images: ['redis']}]}";
    assert_eq!(run(other_image, &doc).status, Status::Fail);
}

/// An exclusion removes one error and moves the last error into its place, as Kyverno does.
#[test]
fn exclude_removes_one_error_in_place() {
    let port = |name: &str, image: &str, p: u32| json!({"name": name, "image": image, "ports": [{"containerPort": 80, "hostPort": p}]});
    let doc = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [port("a", "x", 1), port("b", "y", 2), port("c", "z", 3)]}});
    let rule = "{level: baseline, exclude: [{controlName: Host Ports, images: [x]}]}";
    let v = run(rule, &doc);
    assert_eq!(
        v.message,
        fail_text(
            "baseline:",
            "(Forbidden reason: hostPort, field error list: \
             [spec.containers[2].ports[0].hostPort is forbidden, forbidden values found: 3, \
             spec.containers[1].ports[0].hostPort is forbidden, forbidden values found: 2])"
        )
    );
}

/// Without `images` an entry re-runs the checks on a pod with one empty container `fake`,
/// whose own container errors also remove errors: here the fake container's missing
/// `runAsNonRoot` removes the first container's error, not the second's.
#[test]
fn exclude_without_images_uses_a_fake_container() {
    let mut second = base()["spec"]["containers"][0].clone();
    second["name"] = "d".into();
    let doc = pod_with(json!({"spec": {"containers": [{}, second]}}));
    let doc = pod_with_patch(
        doc,
        json!({"spec": {"containers": [
            {"securityContext": {"runAsNonRoot": null}},
            {"securityContext": {"runAsNonRoot": null}}]}}),
    );
    let rule = "{level: restricted, exclude: [{controlName: Running as Non-root}]}";
    let v = run(rule, &doc);
    assert_eq!(
        v.message,
        fail_text(
            "restricted:",
            "(Forbidden reason: runAsNonRoot != true, field error list: \
             [spec.containers[1].securityContext.runAsNonRoot: Required value])"
        )
    );
}

/// Kyverno's policy validation of `exclude` (`ValidatePSaControlNames`).
#[test]
fn exclude_entries_are_validated_with_the_policy() {
    use crate::kinds::load_policies;
    use crate::source::SourceFile;
    use crate::yaml::{Limits, parse_documents};
    let load = |level: &str, entry: &str| {
        let text = format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: p}}\nspec:\n  rules:\n  - name: r\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      podSecurity:\n        level: {level}\n        exclude: [{entry}]\n"
        );
        let source = std::sync::Arc::new(SourceFile::new("p.yaml", &text));
        let docs = parse_documents(&text, Limits::default()).unwrap();
        let loaded = load_policies(&source, docs);
        loaded.invalid.first().map(|i| i.reason.clone())
    };
    let p = "spec.rules[0].podSecurity.exclude[0]";
    assert_eq!(
        load("restricted", "{controlName: Capabilities}"),
        Some(format!(
            "{p}.controlName: Invalid value: \"Capabilities\": exclude.images must be specified for the container level control"
        ))
    );
    assert_eq!(
        load("baseline", "{controlName: Sysctls, images: ['*']}"),
        Some(format!(
            "{p}.controlName: Invalid value: \"Sysctls\": exclude.images must not be specified for the pod level control"
        ))
    );
    assert_eq!(
        load(
            "baseline",
            "{controlName: Host Namespaces, restrictedField: spec.hostPID}"
        ),
        Some(format!("{p}.values: Forbidden: values is required"))
    );
    assert_eq!(
        load(
            "baseline",
            "{controlName: Host Namespaces, values: ['true']}"
        ),
        Some(format!(
            "{p}.restrictedField: Forbidden: restrictedField is required"
        ))
    );
    assert_eq!(
        load("baseline", "{controlName: Running as Non-root}"),
        Some(format!(
            "{p}.controlName: Invalid value: \"Running as Non-root\": Invalid control name defined at the given level"
        ))
    );
    assert_eq!(load("baseline", "{controlName: Seccomp}"), None);
    assert_eq!(
        load("restricted", "{controlName: Capabilities, images: [nginx]}"),
        None
    );
    assert_eq!(
        load("restricted", "{controlName: Running as Non-root}"),
        None
    );
}

/// Each pod location's dotted paths are its key paths joined with `.` (decoding errors name
/// them).
#[test]
fn pod_locations_spell_their_paths() {
    for kind in ["Pod", "Deployment", "CronJob", "Job", "DaemonSet"] {
        let loc = super::super::location(kind).expect(kind);
        assert_eq!(loc.spec_dotted, loc.spec.join("."), "{kind}");
        assert_eq!(loc.meta_dotted, loc.meta.join("."), "{kind}");
    }
}
