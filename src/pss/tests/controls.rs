//! One test per control: failing and passing pods at each level where the control applies,
//! and the versions where its rule changes.

use serde_json::json;

use super::{base, failed, pod_with, sc};

const LEVELS: [&str; 2] = ["baseline", "restricted"];

#[test]
fn host_process() {
    for level in LEVELS {
        let pod_level = pod_with(json!({"spec": {"securityContext":
            {"windowsOptions": {"hostProcess": true}}}}));
        assert_eq!(failed(level, "latest", &pod_level), ["windowsHostProcess"]);
        let ctr = pod_with(sc(json!({"windowsOptions": {"hostProcess": true}})));
        assert_eq!(failed(level, "v1.19", &ctr), ["windowsHostProcess"]);
        let off = pod_with(sc(json!({"windowsOptions": {"hostProcess": false}})));
        assert!(failed(level, "latest", &off).is_empty());
    }
}

#[test]
fn host_namespaces() {
    for level in LEVELS {
        for key in ["hostNetwork", "hostPID", "hostIPC"] {
            let on = pod_with(json!({"spec": {key: true}}));
            assert_eq!(failed(level, "latest", &on), ["hostNamespaces"], "{key}");
            let off = pod_with(json!({"spec": {key: false}}));
            assert!(failed(level, "v1.0", &off).is_empty());
        }
    }
}

#[test]
fn privileged_containers() {
    for level in LEVELS {
        let on = pod_with(sc(json!({"privileged": true})));
        assert_eq!(failed(level, "latest", &on), ["privileged"]);
        let init = pod_with(
            json!({"spec": {"initContainers": [{"name": "i", "image": "x",
            "securityContext": {"privileged": true, "allowPrivilegeEscalation": false,
            "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}}]}}),
        );
        assert_eq!(failed(level, "latest", &init), ["privileged"]);
        let off = pod_with(sc(json!({"privileged": false})));
        assert!(failed(level, "latest", &off).is_empty());
    }
}

#[test]
fn capabilities() {
    let net_admin = pod_with(sc(json!({"capabilities": {"add": ["NET_ADMIN"]}})));
    assert_eq!(
        failed("baseline", "latest", &net_admin),
        ["capabilities_baseline"]
    );
    // Kyverno runs both capability checks at restricted (no override).
    assert_eq!(
        failed("restricted", "latest", &net_admin),
        ["capabilities_baseline", "capabilities_restricted"]
    );
    let chown = pod_with(sc(json!({"capabilities": {"add": ["CHOWN"]}})));
    assert!(failed("baseline", "latest", &chown).is_empty());
    assert_eq!(
        failed("restricted", "latest", &chown),
        ["capabilities_restricted"]
    );
    let bind = pod_with(sc(json!({"capabilities": {"add": ["NET_BIND_SERVICE"]}})));
    assert!(failed("restricted", "latest", &bind).is_empty());
    // Restricted: drop must include ALL.
    let no_drop = pod_with(sc(json!({"capabilities": null})));
    assert!(failed("baseline", "latest", &no_drop).is_empty());
    assert_eq!(
        failed("restricted", "latest", &no_drop),
        ["capabilities_restricted"]
    );
    let drop_some = pod_with(sc(json!({"capabilities": {"drop": ["NET_RAW"]}})));
    assert_eq!(
        failed("restricted", "v1.22", &drop_some),
        ["capabilities_restricted"]
    );
    // Windows pods are exempt from v1.25 on; the v1.22 revision applies below v1.22 too.
    let windows = pod_with(json!({"spec": {"os": {"name": "windows"},
        "containers": [{"securityContext": {"capabilities": null}}]}}));
    assert!(failed("restricted", "v1.25", &windows).is_empty());
    assert_eq!(
        failed("restricted", "v1.24", &windows),
        ["capabilities_restricted"]
    );
    assert_eq!(
        failed("restricted", "v1.19", &windows),
        ["capabilities_restricted"]
    );
}

#[test]
fn host_path_volumes() {
    let host = pod_with(json!({"spec": {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}}));
    assert_eq!(failed("baseline", "latest", &host), ["hostPathVolumes"]);
    assert_eq!(
        failed("restricted", "latest", &host),
        ["hostPathVolumes", "restrictedVolumes"]
    );
    let empty = pod_with(json!({"spec": {"volumes": [{"name": "e", "emptyDir": {}}]}}));
    assert!(failed("baseline", "latest", &empty).is_empty());
    assert!(failed("restricted", "latest", &empty).is_empty());
}

#[test]
fn host_ports() {
    for level in LEVELS {
        let on = pod_with(json!({"spec": {"containers": [{"ports":
            [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081}]}]}}));
        assert_eq!(failed(level, "latest", &on), ["hostPorts"]);
        let zero = pod_with(json!({"spec": {"containers": [{"ports":
            [{"containerPort": 80, "hostPort": 0}]}]}}));
        assert!(failed(level, "latest", &zero).is_empty());
    }
}

#[test]
fn app_armor() {
    for level in LEVELS {
        let key = "container.apparmor.security.beta.kubernetes.io/c";
        for (value, bad) in [
            ("unconfined", true),
            ("runtime/default", false),
            ("localhost/mine", false),
            ("", false),
        ] {
            let doc = pod_with(json!({"metadata": {"annotations": {key: value}}}));
            let want: &[&str] = if bad { &["appArmorProfile"] } else { &[] };
            assert_eq!(failed(level, "latest", &doc), want, "{value}");
        }
        for (t, bad) in [
            ("Unconfined", true),
            ("RuntimeDefault", false),
            ("Localhost", false),
        ] {
            let pod_level = pod_with(json!({"spec": {"securityContext":
                {"appArmorProfile": {"type": t}}}}));
            let ctr = pod_with(sc(json!({"appArmorProfile": {"type": t}})));
            let want: &[&str] = if bad { &["appArmorProfile"] } else { &[] };
            assert_eq!(failed(level, "latest", &pod_level), want, "{t}");
            assert_eq!(failed(level, "latest", &ctr), want, "{t}");
        }
    }
}

#[test]
fn selinux() {
    for level in LEVELS {
        let t = |v: &str| pod_with(sc(json!({"seLinuxOptions": {"type": v}})));
        assert_eq!(failed(level, "latest", &t("spc_t")), ["seLinuxOptions"]);
        assert!(failed(level, "latest", &t("container_t")).is_empty());
        // container_engine_t is allowed from v1.31.
        assert_eq!(
            failed(level, "v1.30", &t("container_engine_t")),
            ["seLinuxOptions"]
        );
        assert!(failed(level, "v1.31", &t("container_engine_t")).is_empty());
        assert!(failed(level, "latest", &t("container_engine_t")).is_empty());
        let user = pod_with(json!({"spec": {"securityContext":
            {"seLinuxOptions": {"user": "root"}}}}));
        assert_eq!(failed(level, "latest", &user), ["seLinuxOptions"]);
        let role = pod_with(sc(json!({"seLinuxOptions": {"role": "sysadm_r"}})));
        assert_eq!(failed(level, "latest", &role), ["seLinuxOptions"]);
        let level_only = pod_with(sc(json!({"seLinuxOptions": {"level": "s0:c1"}})));
        assert!(failed(level, "latest", &level_only).is_empty());
    }
}

#[test]
fn proc_mount() {
    for level in LEVELS {
        let unmasked = pod_with(sc(json!({"procMount": "Unmasked"})));
        assert_eq!(failed(level, "latest", &unmasked), ["procMount"]);
        let default = pod_with(sc(json!({"procMount": "Default"})));
        assert!(failed(level, "latest", &default).is_empty());
    }
}

#[test]
fn seccomp() {
    let unconfined = pod_with(sc(json!({"seccompProfile": {"type": "Unconfined"}})));
    assert_eq!(
        failed("baseline", "latest", &unconfined),
        ["seccompProfile_baseline"]
    );
    assert_eq!(
        failed("restricted", "latest", &unconfined),
        ["seccompProfile_baseline", "seccompProfile_restricted"]
    );
    let localhost = pod_with(sc(json!({"seccompProfile": {"type": "Localhost"}})));
    assert!(failed("restricted", "latest", &localhost).is_empty());
    // Restricted: unset fails unless the pod sets a valid type.
    let unset = pod_with(sc(json!({"seccompProfile": null})));
    assert!(failed("baseline", "latest", &unset).is_empty());
    assert_eq!(
        failed("restricted", "latest", &unset),
        ["seccompProfile_restricted"]
    );
    let inherited = pod_with(json!({"spec": {"securityContext":
        {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"securityContext": {"seccompProfile": null}}]}}));
    assert!(failed("restricted", "latest", &inherited).is_empty());
    // Below v1.19 the baseline check reads the alpha annotations instead of the fields.
    assert!(failed("baseline", "v1.18", &unconfined).is_empty());
    let ann = pod_with(json!({"metadata": {"annotations":
        {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}}));
    assert_eq!(
        failed("baseline", "v1.18", &ann),
        ["seccompProfile_baseline"]
    );
    assert!(failed("baseline", "v1.19", &ann).is_empty());
    let ctr_ann = pod_with(json!({"metadata": {"annotations":
        {"container.seccomp.security.alpha.kubernetes.io/c": "docker/default"}}}));
    assert!(failed("baseline", "v1.0", &ctr_ann).is_empty());
    // Windows pods are exempt from the restricted check from v1.25.
    let windows = pod_with(json!({"spec": {"os": {"name": "windows"},
        "containers": [{"securityContext": {"seccompProfile": null}}]}}));
    assert!(failed("restricted", "v1.25", &windows).is_empty());
    assert_eq!(
        failed("restricted", "v1.24", &windows),
        ["seccompProfile_restricted"]
    );
}

#[test]
fn sysctls() {
    let with = |name: &str| {
        pod_with(json!({"spec": {"securityContext": {"sysctls": [{"name": name, "value": "1"}]}}}))
    };
    for level in LEVELS {
        assert_eq!(failed(level, "latest", &with("kernel.msgmax")), ["sysctls"]);
        assert!(failed(level, "v1.0", &with("kernel.shm_rmid_forced")).is_empty());
        for (name, since) in [
            ("net.ipv4.ip_local_reserved_ports", 27),
            ("net.ipv4.tcp_keepalive_time", 29),
            ("net.ipv4.tcp_fin_timeout", 29),
            ("net.ipv4.tcp_rmem", 32),
            ("net.ipv4.tcp_wmem", 32),
        ] {
            let before = format!("v1.{}", since - 1);
            let from = format!("v1.{since}");
            assert_eq!(failed(level, &before, &with(name)), ["sysctls"], "{name}");
            assert!(failed(level, &from, &with(name)).is_empty(), "{name}");
            assert!(failed(level, "latest", &with(name)).is_empty(), "{name}");
        }
    }
}

#[test]
fn probe_and_lifecycle_hosts() {
    for level in LEVELS {
        let probe = pod_with(json!({"spec": {"containers": [{"livenessProbe":
            {"httpGet": {"host": "10.0.0.1", "port": 80}}}]}}));
        // The v1.34 check applies at every version.
        for version in ["latest", "v1.19", "v1.32"] {
            assert_eq!(
                failed(level, version, &probe),
                ["hostProbesAndHostLifecycle"]
            );
        }
        let hook = pod_with(json!({"spec": {"containers": [{"lifecycle":
            {"preStop": {"tcpSocket": {"host": "example.com", "port": 1}}}}]}}));
        assert_eq!(
            failed(level, "latest", &hook),
            ["hostProbesAndHostLifecycle"]
        );
        let no_host = pod_with(json!({"spec": {"containers": [{"readinessProbe":
            {"httpGet": {"host": "", "port": 80}}}]}}));
        assert!(failed(level, "latest", &no_host).is_empty());
    }
}

#[test]
fn volume_types() {
    let nfs = pod_with(
        json!({"spec": {"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]}}),
    );
    assert!(failed("baseline", "latest", &nfs).is_empty());
    assert_eq!(failed("restricted", "latest", &nfs), ["restrictedVolumes"]);
    for allowed in [
        "configMap",
        "secret",
        "projected",
        "persistentVolumeClaim",
        "csi",
        "image",
    ] {
        let doc = pod_with(json!({"spec": {"volumes": [{"name": "v", allowed: {}}]}}));
        assert!(failed("restricted", "latest", &doc).is_empty(), "{allowed}");
    }
    let unknown = pod_with(json!({"spec": {"volumes": [{"name": "v"}]}}));
    assert_eq!(
        failed("restricted", "v1.0", &unknown),
        ["restrictedVolumes"]
    );
}

#[test]
fn privilege_escalation() {
    assert!(failed("restricted", "latest", &base()).is_empty());
    for patch in [
        json!({"allowPrivilegeEscalation": true}),
        json!({"allowPrivilegeEscalation": null}),
    ] {
        let doc = pod_with(sc(patch));
        assert!(failed("baseline", "latest", &doc).is_empty());
        assert_eq!(
            failed("restricted", "latest", &doc),
            ["allowPrivilegeEscalation"]
        );
    }
    let windows = pod_with(json!({"spec": {"os": {"name": "windows"},
        "containers": [{"securityContext": {"allowPrivilegeEscalation": true}}]}}));
    assert!(failed("restricted", "v1.25", &windows).is_empty());
    assert_eq!(
        failed("restricted", "v1.24", &windows),
        ["allowPrivilegeEscalation"]
    );
}

#[test]
fn running_as_non_root() {
    let unset = pod_with(sc(json!({"runAsNonRoot": null})));
    assert!(failed("baseline", "latest", &unset).is_empty());
    assert_eq!(failed("restricted", "latest", &unset), ["runAsNonRoot"]);
    let pod_true = pod_with(json!({"spec": {"securityContext": {"runAsNonRoot": true},
        "containers": [{"securityContext": {"runAsNonRoot": null}}]}}));
    assert!(failed("restricted", "latest", &pod_true).is_empty());
    let ctr_false = pod_with(json!({"spec": {"securityContext": {"runAsNonRoot": true},
        "containers": [{"securityContext": {"runAsNonRoot": false}}]}}));
    assert_eq!(failed("restricted", "v1.0", &ctr_false), ["runAsNonRoot"]);
    let pod_false = pod_with(json!({"spec": {"securityContext": {"runAsNonRoot": false}}}));
    assert_eq!(failed("restricted", "latest", &pod_false), ["runAsNonRoot"]);
}

#[test]
fn running_as_non_root_user() {
    let root = pod_with(sc(json!({"runAsUser": 0})));
    assert!(failed("baseline", "latest", &root).is_empty());
    assert_eq!(failed("restricted", "latest", &root), ["runAsUser"]);
    // Kyverno applies the v1.23 check below v1.23 too.
    assert_eq!(failed("restricted", "v1.22", &root), ["runAsUser"]);
    let pod_root = pod_with(json!({"spec": {"securityContext": {"runAsUser": 0}}}));
    assert_eq!(failed("restricted", "latest", &pod_root), ["runAsUser"]);
    let user = pod_with(sc(json!({"runAsUser": 1000})));
    assert!(failed("restricted", "latest", &user).is_empty());
}

/// `level: privileged` has no special case in Kyverno: every check runs, as at restricted.
#[test]
fn privileged_level_runs_every_check() {
    let doc = pod_with(json!({"spec": {"hostNetwork": true,
        "containers": [{"securityContext": {"runAsNonRoot": null}}]}}));
    assert_eq!(
        failed("privileged", "latest", &doc),
        ["hostNamespaces", "runAsNonRoot"]
    );
    assert_eq!(failed("baseline", "latest", &doc), ["hostNamespaces"]);
}

/// Checks report in registration order: the Go source files' name order.
#[test]
fn checks_report_in_registration_order() {
    let doc = pod_with(
        json!({"spec": {"hostPID": true, "containers": [{"securityContext":
        {"privileged": true, "runAsUser": 0, "allowPrivilegeEscalation": true,
         "seLinuxOptions": {"type": "x"}, "seccompProfile": {"type": "Unconfined"}}}]}}),
    );
    assert_eq!(
        failed("restricted", "latest", &doc),
        [
            "allowPrivilegeEscalation",
            "hostNamespaces",
            "privileged",
            "runAsUser",
            "seLinuxOptions",
            "seccompProfile_baseline",
            "seccompProfile_restricted"
        ]
    );
}
