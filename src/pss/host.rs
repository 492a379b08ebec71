//! Host isolation controls: Host Namespaces, HostPath Volumes, Host Ports, HostProcess,
//! Sysctls, probe and lifecycle hosts (baseline), and Volume Types (restricted).

use super::field::{Bad, CheckResult, FieldErr, FieldPath, Seg};
use super::pod::{ALLOWED_VOLUMES, Pod, RESTRICTED_VOLUMES};
use super::registry::visit;

/// Host Namespaces: `hostNetwork`, `hostPID`, `hostIPC` unset or false.
pub(crate) fn host_namespaces(pod: &Pod) -> Option<CheckResult> {
    let s = &pod.spec;
    let errs: Vec<FieldErr> = [
        (s.host_network, "hostNetwork"),
        (s.host_pid, "hostPID"),
        (s.host_ipc, "hostIPC"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, key)| FieldErr::forbidden(FieldPath::spec().child(&[key]), Bad::Bool(true)))
    .collect();
    (!errs.is_empty()).then(|| CheckResult::with_errs("hostNamespaces", "host namespaces", errs))
}

/// HostPath Volumes: no `hostPath` volume (the bad value is its `path`).
pub(crate) fn host_path_volumes(pod: &Pod) -> Option<CheckResult> {
    let errs: Vec<FieldErr> = pod
        .spec
        .volumes
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let path = v.host_path.as_ref()?;
            Some(FieldErr::forbidden(
                FieldPath::spec()
                    .child(&["volumes"])
                    .index(i)
                    .child(&["hostPath"]),
                Bad::Str(path.clone()),
            ))
        })
        .collect();
    (!errs.is_empty()).then(|| CheckResult::with_errs("hostPathVolumes", "hostPath volumes", errs))
}

/// Volume Types (restricted): only the allowed inline volume sources.
pub(crate) fn restricted_volumes(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    for (i, v) in pod.spec.volumes.iter().enumerate() {
        if v.sources.iter().any(|s| ALLOWED_VOLUMES.contains(s)) {
            continue;
        }
        let kind = RESTRICTED_VOLUMES
            .iter()
            .find(|k| v.sources.contains(k))
            .copied()
            .unwrap_or("unknown");
        errs.push(FieldErr::forbidden(
            FieldPath::spec()
                .child(&["volumes"])
                .index(i)
                .child(&[kind]),
            Bad::None,
        ));
    }
    (!errs.is_empty())
        .then(|| CheckResult::with_errs("restrictedVolumes", "restricted volume types", errs))
}

/// Host Ports: every `ports[*].hostPort` unset or 0.
pub(crate) fn host_ports(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    for (c, p) in visit(&pod.spec) {
        for (i, port) in c.host_ports.iter().enumerate() {
            if *port != 0 {
                errs.push(FieldErr::forbidden(
                    p.child(&["ports"]).index(i).child(&["hostPort"]),
                    Bad::Int(*port),
                ));
            }
        }
    }
    (!errs.is_empty()).then(|| CheckResult::with_errs("hostPorts", "hostPort", errs))
}

/// Probe and lifecycle hosts (v1.34): no `host` in `httpGet`/`tcpSocket` of probes and
/// lifecycle handlers. Kubernetes reports no field errors for it; kpol points at the first
/// offending `host`.
pub(crate) fn host_probes(pod: &Pod) -> Option<CheckResult> {
    let (c, p) = visit(&pod.spec).find(|(c, _)| !c.probe_hosts.is_empty())?;
    let (at, _) = c.probe_hosts.first()?;
    let mut locus = p.path();
    locus.0.extend(at.iter().map(|s| Seg::Field(s)));
    Some(CheckResult {
        id: "hostProbesAndHostLifecycle",
        reason: "probe or lifecycle host".into(),
        errs: None,
        locus: Some(locus),
    })
}

/// HostProcess: `windowsOptions.hostProcess` unset or false, pod and containers.
pub(crate) fn windows_host_process(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    let pod_sc = pod.spec.security_context.as_ref();
    if pod_sc.and_then(|s| s.host_process) == Some(true) {
        errs.push(FieldErr::forbidden(
            FieldPath::spec().child(&["securityContext", "windowsOptions", "hostProcess"]),
            Bad::Bool(true),
        ));
    }
    for (c, p) in visit(&pod.spec) {
        if c.security_context.as_ref().and_then(|s| s.host_process) == Some(true) {
            errs.push(FieldErr::forbidden(
                p.child(&["securityContext", "windowsOptions", "hostProcess"]),
                Bad::Bool(true),
            ));
        }
    }
    (!errs.is_empty()).then(|| CheckResult::with_errs("windowsHostProcess", "hostProcess", errs))
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

/// Sysctls: only the safe set of the version (`allowed` lists the sets that apply).
fn sysctls(pod: &Pod, allowed: &[&[&str]]) -> Option<CheckResult> {
    let sc = pod.spec.security_context.as_ref()?;
    let errs: Vec<FieldErr> = sc
        .sysctls
        .iter()
        .enumerate()
        .filter(|(_, name)| !allowed.iter().any(|set| set.contains(&name.as_str())))
        .map(|(i, name)| {
            FieldErr::forbidden(
                FieldPath::spec()
                    .child(&["securityContext", "sysctls"])
                    .index(i)
                    .child(&["name"]),
                Bad::Str(name.clone()),
            )
        })
        .collect();
    (!errs.is_empty()).then(|| CheckResult::with_errs("sysctls", "forbidden sysctls", errs))
}

pub(crate) fn sysctls_1_0(pod: &Pod) -> Option<CheckResult> {
    sysctls(pod, &[SYSCTLS_1_0])
}

pub(crate) fn sysctls_1_27(pod: &Pod) -> Option<CheckResult> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

pub(crate) fn sysctls_1_29(pod: &Pod) -> Option<CheckResult> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

pub(crate) fn sysctls_1_32(pod: &Pod) -> Option<CheckResult> {
    sysctls(
        pod,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}
