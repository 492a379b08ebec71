//! Privilege controls: Privileged Containers and Capabilities (baseline), Privilege
//! Escalation, Capabilities drop ALL, Running as Non-root and Running as Non-root user
//! (restricted). Field errors in the order Kubernetes' checks produce them.

use super::field::{Bad, CheckResult, FieldErr, sorted_set};
use super::pod::Pod;
use super::registry::visit;

/// Capabilities a baseline container may add.
const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// Privileged Containers: `securityContext.privileged` unset or false.
pub(crate) fn privileged(pod: &Pod) -> Option<CheckResult> {
    let errs: Vec<FieldErr> = visit(&pod.spec)
        .filter(|(c, _)| {
            c.security_context
                .as_ref()
                .is_some_and(|sc| sc.privileged == Some(true))
        })
        .map(|(_, p)| {
            FieldErr::forbidden(p.child(&["securityContext", "privileged"]), Bad::Bool(true))
        })
        .collect();
    (!errs.is_empty()).then(|| CheckResult::with_errs("privileged", "privileged", errs))
}

/// Capabilities (baseline): `capabilities.add` only from the default set.
pub(crate) fn capabilities_baseline(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    for (c, p) in visit(&pod.spec) {
        let Some(caps) = c
            .security_context
            .as_ref()
            .and_then(|s| s.capabilities.as_ref())
        else {
            continue;
        };
        let bad = sorted_set(
            caps.add
                .iter()
                .filter(|a| !BASELINE_CAPABILITIES.contains(&a.as_str()))
                .cloned(),
        );
        if !bad.is_empty() {
            errs.push(FieldErr::forbidden(
                p.child(&["securityContext", "capabilities", "add"]),
                Bad::List(bad),
            ));
        }
    }
    (!errs.is_empty())
        .then(|| CheckResult::with_errs("capabilities_baseline", "non-default capabilities", errs))
}

/// Capabilities (restricted, v1.22): `drop` includes `ALL`, `add` only `NET_BIND_SERVICE`.
pub(crate) fn capabilities_restricted_1_22(pod: &Pod) -> Option<CheckResult> {
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    for (c, p) in visit(&pod.spec) {
        let drop_path = || p.child(&["securityContext", "capabilities", "drop"]);
        let Some(caps) = c
            .security_context
            .as_ref()
            .and_then(|s| s.capabilities.as_ref())
        else {
            missing_drop.push(FieldErr::required(drop_path()));
            continue;
        };
        if !caps.drop.iter().any(|d| d == "ALL") {
            if caps.drop.is_empty() {
                missing_drop.push(FieldErr::required(drop_path()));
            } else {
                let values = sorted_set(caps.drop.iter().cloned());
                missing_drop.push(FieldErr::forbidden(drop_path(), Bad::List(values)));
            }
        }
        let bad = sorted_set(
            caps.add
                .iter()
                .filter(|a| a.as_str() != "NET_BIND_SERVICE")
                .cloned(),
        );
        if !bad.is_empty() {
            adding.push(FieldErr::forbidden(
                p.child(&["securityContext", "capabilities", "add"]),
                Bad::List(bad),
            ));
        }
    }
    missing_drop.extend(adding);
    (!missing_drop.is_empty()).then(|| {
        CheckResult::with_errs(
            "capabilities_restricted",
            "unrestricted capabilities",
            missing_drop,
        )
    })
}

/// Capabilities (restricted, v1.25): as v1.22, Windows pods exempt.
pub(crate) fn capabilities_restricted_1_25(pod: &Pod) -> Option<CheckResult> {
    if pod.spec.windows {
        return None;
    }
    capabilities_restricted_1_22(pod)
}

/// Privilege Escalation (v1.8): every container sets `allowPrivilegeEscalation: false`.
pub(crate) fn allow_privilege_escalation_1_8(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    for (c, p) in visit(&pod.spec) {
        let path = || p.child(&["securityContext", "allowPrivilegeEscalation"]);
        match &c.security_context {
            None => errs.push(FieldErr::required(path())),
            Some(sc) => match sc.allow_privilege_escalation {
                None => errs.push(FieldErr::forbidden(path(), Bad::Str("nil".into()))),
                Some(true) => errs.push(FieldErr::forbidden(path(), Bad::Bool(true))),
                Some(false) => {}
            },
        }
    }
    (!errs.is_empty()).then(|| {
        CheckResult::with_errs(
            "allowPrivilegeEscalation",
            "allowPrivilegeEscalation != false",
            errs,
        )
    })
}

/// Privilege Escalation (v1.25): as v1.8, Windows pods exempt.
pub(crate) fn allow_privilege_escalation_1_25(pod: &Pod) -> Option<CheckResult> {
    if pod.spec.windows {
        return None;
    }
    allow_privilege_escalation_1_8(pod)
}

/// Running as Non-root: `runAsNonRoot: true` on the pod (no container setting false) or on
/// every container.
pub(crate) fn run_as_non_root(pod: &Pod) -> Option<CheckResult> {
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    let pod_sc = pod.spec.security_context.as_ref();
    let mut pod_true = false;
    match pod_sc.and_then(|s| s.run_as_non_root) {
        Some(false) => explicit.push(FieldErr::forbidden(
            super::field::FieldPath::spec().child(&["securityContext", "runAsNonRoot"]),
            Bad::Bool(false),
        )),
        Some(true) => pod_true = true,
        None => {}
    }
    for (c, p) in visit(&pod.spec) {
        let path = || p.child(&["securityContext", "runAsNonRoot"]);
        match c.security_context.as_ref().and_then(|s| s.run_as_non_root) {
            Some(false) => explicit.push(FieldErr::forbidden(path(), Bad::Bool(false))),
            Some(true) => {}
            None if !pod_true => implicit.push(FieldErr::required(path())),
            None => {}
        }
    }
    explicit.extend(implicit);
    (!explicit.is_empty())
        .then(|| CheckResult::with_errs("runAsNonRoot", "runAsNonRoot != true", explicit))
}

/// Running as Non-root user: no `runAsUser: 0` on the pod or a container.
pub(crate) fn run_as_user(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    if pod
        .spec
        .security_context
        .as_ref()
        .and_then(|s| s.run_as_user)
        == Some(0)
    {
        errs.push(FieldErr::forbidden(
            super::field::FieldPath::spec().child(&["securityContext", "runAsUser"]),
            Bad::Int(0),
        ));
    }
    for (c, p) in visit(&pod.spec) {
        if c.security_context.as_ref().and_then(|s| s.run_as_user) == Some(0) {
            errs.push(FieldErr::forbidden(
                p.child(&["securityContext", "runAsUser"]),
                Bad::Int(0),
            ));
        }
    }
    (!errs.is_empty()).then(|| CheckResult::with_errs("runAsUser", "runAsUser=0", errs))
}
