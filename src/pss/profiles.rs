//! Kernel security profile controls: AppArmor, SELinux, /proc Mount Type and Seccomp
//! (baseline), and Seccomp (restricted), with their version-dependent revisions.

use std::collections::BTreeMap;

use super::field::{Bad, CheckResult, FieldErr, FieldPath, pluralize, sorted_set};
use super::pod::{Pod, SeLinux};
use super::registry::visit;

const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

fn allowed_profile_type(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

/// AppArmor: profile types `RuntimeDefault`/`Localhost` (pod and containers), and the beta
/// annotations `runtime/default`, `localhost/*` or empty.
pub(crate) fn app_armor(pod: &Pod) -> Option<CheckResult> {
    let mut errs = Vec::new();
    let mut bad_types = Vec::new();
    let pod_type = pod
        .spec
        .security_context
        .as_ref()
        .and_then(|s| s.apparmor.as_ref());
    if let Some(t) = pod_type.filter(|t| !allowed_profile_type(t)) {
        errs.push(FieldErr::forbidden(
            FieldPath::spec().child(&["securityContext", "appArmorProfile", "type"]),
            Bad::Str(t.clone()),
        ));
        bad_types.push(t.clone());
    }
    for (c, p) in visit(&pod.spec) {
        let t = c
            .security_context
            .as_ref()
            .and_then(|s| s.apparmor.as_ref());
        if let Some(t) = t.filter(|t| !allowed_profile_type(t)) {
            errs.push(FieldErr::forbidden(
                p.child(&["securityContext", "appArmorProfile", "type"]),
                Bad::Str(t.clone()),
            ));
            bad_types.push(t.clone());
        }
    }
    let mut bad_annotations = 0;
    for (k, v) in &pod.annotations {
        let allowed = v.is_empty() || v == "runtime/default" || v.starts_with("localhost/");
        if k.starts_with(APPARMOR_PREFIX) && !allowed {
            errs.push(FieldErr::forbidden(
                FieldPath::annotation(k),
                Bad::Str(v.clone()),
            ));
            bad_annotations += 1;
        }
    }
    if errs.is_empty() {
        return None;
    }
    let n = sorted_set(bad_types).len() + bad_annotations;
    let reason = pluralize(
        "forbidden AppArmor profile",
        "forbidden AppArmor profiles",
        n,
    );
    Some(CheckResult::with_errs("appArmorProfile", reason, errs))
}

/// /proc Mount Type: `procMount` unset or `Default`.
pub(crate) fn proc_mount(pod: &Pod) -> Option<CheckResult> {
    let errs: Vec<FieldErr> = visit(&pod.spec)
        .filter_map(|(c, p)| {
            let pm = c.security_context.as_ref()?.proc_mount.as_ref()?;
            (pm != "Default").then(|| {
                FieldErr::forbidden(
                    p.child(&["securityContext", "procMount"]),
                    Bad::Str(pm.clone()),
                )
            })
        })
        .collect();
    (!errs.is_empty()).then(|| CheckResult::with_errs("procMount", "procMount", errs))
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// The errors of one `seLinuxOptions` at `base` (`…securityContext`): type, user, role.
fn selinux_errs(o: &SeLinux, base: &FieldPath, types: &[&str], errs: &mut Vec<FieldErr>) {
    let opts = base.child(&["seLinuxOptions"]);
    if !types.contains(&o.type_.as_str()) {
        errs.push(FieldErr::forbidden(
            opts.child(&["type"]),
            Bad::Str(o.type_.clone()),
        ));
    }
    if !o.user.is_empty() {
        errs.push(FieldErr::forbidden(
            opts.child(&["user"]),
            Bad::Str(o.user.clone()),
        ));
    }
    if !o.role.is_empty() {
        errs.push(FieldErr::forbidden(
            opts.child(&["role"]),
            Bad::Str(o.role.clone()),
        ));
    }
}

fn selinux(pod: &Pod, types: &[&str]) -> Option<CheckResult> {
    let mut errs = Vec::new();
    if let Some(o) = pod
        .spec
        .security_context
        .as_ref()
        .and_then(|s| s.selinux.as_ref())
    {
        selinux_errs(
            o,
            &FieldPath::spec().child(&["securityContext"]),
            types,
            &mut errs,
        );
    }
    for (c, p) in visit(&pod.spec) {
        if let Some(o) = c.security_context.as_ref().and_then(|s| s.selinux.as_ref()) {
            selinux_errs(o, &p.child(&["securityContext"]), types, &mut errs);
        }
    }
    (!errs.is_empty()).then(|| CheckResult::with_errs("seLinuxOptions", "seLinuxOptions", errs))
}

/// SELinux (v1.0): type from the container set, no user, no role.
pub(crate) fn selinux_1_0(pod: &Pod) -> Option<CheckResult> {
    selinux(pod, SELINUX_TYPES_1_0)
}

/// SELinux (v1.31): `container_engine_t` allowed too.
pub(crate) fn selinux_1_31(pod: &Pod) -> Option<CheckResult> {
    selinux(pod, SELINUX_TYPES_1_31)
}

fn valid_seccomp_annotation(v: &str) -> bool {
    v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/")
}

/// Seccomp (baseline, v1.0–v1.18): the alpha seccomp annotations of the pod and of each
/// container are `runtime/default`, `docker/default` or `localhost/*`.
pub(crate) fn seccomp_baseline_1_0(pod: &Pod) -> Option<CheckResult> {
    let get = |key: &str| {
        pod.annotations
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    let mut by_key: BTreeMap<String, Vec<FieldErr>> = BTreeMap::new();
    let mut check = |key: String| {
        if let Some(v) = get(&key).filter(|v| !valid_seccomp_annotation(v)) {
            let err = FieldErr::forbidden(FieldPath::annotation(&key), Bad::Str(v.clone()));
            by_key.entry(key).or_default().push(err);
        }
    };
    check(SECCOMP_POD_ANNOTATION.to_owned());
    for (c, _) in visit(&pod.spec) {
        check(format!("{SECCOMP_CONTAINER_PREFIX}{}", c.name));
    }
    let errs: Vec<FieldErr> = by_key.into_values().flatten().collect();
    (!errs.is_empty())
        .then(|| CheckResult::with_errs("seccompProfile_baseline", "seccompProfile", errs))
}

fn seccomp_type_path(base: &FieldPath) -> FieldPath {
    base.child(&["securityContext", "seccompProfile", "type"])
}

/// The explicitly invalid seccomp types: the pod's, then each container's.
fn seccomp_explicit(pod: &Pod) -> Vec<FieldErr> {
    let mut errs = Vec::new();
    let pod_type = pod
        .spec
        .security_context
        .as_ref()
        .and_then(|s| s.seccomp.as_ref());
    if let Some(t) = pod_type.filter(|t| !allowed_profile_type(t)) {
        errs.push(FieldErr::forbidden(
            seccomp_type_path(&FieldPath::spec()),
            Bad::Str(t.clone()),
        ));
    }
    for (c, p) in visit(&pod.spec) {
        let t = c.security_context.as_ref().and_then(|s| s.seccomp.as_ref());
        if let Some(t) = t.filter(|t| !allowed_profile_type(t)) {
            errs.push(FieldErr::forbidden(
                seccomp_type_path(&p.path()),
                Bad::Str(t.clone()),
            ));
        }
    }
    errs
}

/// Seccomp (baseline, v1.19): a set `seccompProfile.type` is `RuntimeDefault` or `Localhost`.
pub(crate) fn seccomp_baseline_1_19(pod: &Pod) -> Option<CheckResult> {
    let errs = seccomp_explicit(pod);
    (!errs.is_empty())
        .then(|| CheckResult::with_errs("seccompProfile_baseline", "seccompProfile", errs))
}

/// Seccomp (restricted, v1.19): the pod or every container sets a valid type; explicit
/// invalid types are reported first, and alone.
pub(crate) fn seccomp_restricted_1_19(pod: &Pod) -> Option<CheckResult> {
    let explicit = seccomp_explicit(pod);
    if !explicit.is_empty() {
        return Some(CheckResult::with_errs(
            "seccompProfile_restricted",
            "seccompProfile",
            explicit,
        ));
    }
    let pod_set = pod
        .spec
        .security_context
        .as_ref()
        .and_then(|s| s.seccomp.as_ref())
        .is_some_and(|t| allowed_profile_type(t));
    if pod_set {
        return None;
    }
    let implicit: Vec<FieldErr> = visit(&pod.spec)
        .filter(|(c, _)| {
            c.security_context
                .as_ref()
                .and_then(|s| s.seccomp.as_ref())
                .is_none()
        })
        .map(|(_, p)| FieldErr::required(seccomp_type_path(&p.path())))
        .collect();
    (!implicit.is_empty())
        .then(|| CheckResult::with_errs("seccompProfile_restricted", "seccompProfile", implicit))
}

/// Seccomp (restricted, v1.25): as v1.19, Windows pods exempt.
pub(crate) fn seccomp_restricted_1_25(pod: &Pod) -> Option<CheckResult> {
    if pod.spec.windows {
        return None;
    }
    seccomp_restricted_1_19(pod)
}
