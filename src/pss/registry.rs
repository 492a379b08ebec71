//! The check registry: every Pod Security check with its level and versions, in Kyverno's
//! registration order, and how a `level`/`version` pair selects what runs (validate.md §13.2).

use super::field::{CheckResult, FieldPath};
use super::pod::{Container, Pod, Spec};
use super::{host, privilege, profiles};

/// A Pod Security Standards version: `latest` or `v1.<minor>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    Latest,
    Minor(u64),
}

impl Version {
    /// `api.ParseVersion`: `latest` or `v1.x` (`v1.0`, `v1.25`; no leading zeros).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        if s.is_empty() || s == "latest" {
            return Some(Self::Latest);
        }
        let minor = s.strip_prefix("v1.")?;
        let ok = !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && (minor.len() == 1 || !minor.starts_with('0'));
        if !ok {
            return None;
        }
        minor.parse().ok().map(Self::Minor)
    }

    /// `Version.Older`: latest is never older; everything is older than latest.
    fn older(self, other: Self) -> bool {
        match (self, other) {
            (Self::Latest, _) => false,
            (_, Self::Latest) => true,
            (Self::Minor(a), Self::Minor(b)) => a < b,
        }
    }
}

/// One revision of a check: the first minor version it applies to, and its function.
pub(crate) type CheckFn = fn(&Pod) -> Option<CheckResult>;

pub(crate) struct Check {
    pub(crate) id: &'static str,
    /// A restricted-level check (else baseline).
    pub(crate) restricted: bool,
    pub(crate) versions: &'static [(u64, CheckFn)],
}

/// The checks in registration order (the Go source files' name order).
pub(crate) const CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        restricted: true,
        versions: &[
            (8, privilege::allow_privilege_escalation_1_8),
            (25, privilege::allow_privilege_escalation_1_25),
        ],
    },
    Check {
        id: "appArmorProfile",
        restricted: false,
        versions: &[(0, profiles::app_armor)],
    },
    Check {
        id: "capabilities_baseline",
        restricted: false,
        versions: &[(0, privilege::capabilities_baseline)],
    },
    Check {
        id: "capabilities_restricted",
        restricted: true,
        versions: &[
            (22, privilege::capabilities_restricted_1_22),
            (25, privilege::capabilities_restricted_1_25),
        ],
    },
    Check {
        id: "hostNamespaces",
        restricted: false,
        versions: &[(0, host::host_namespaces)],
    },
    Check {
        id: "hostPathVolumes",
        restricted: false,
        versions: &[(0, host::host_path_volumes)],
    },
    Check {
        id: "hostPorts",
        restricted: false,
        versions: &[(0, host::host_ports)],
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        restricted: false,
        versions: &[(34, host::host_probes)],
    },
    Check {
        id: "privileged",
        restricted: false,
        versions: &[(0, privilege::privileged)],
    },
    Check {
        id: "procMount",
        restricted: false,
        versions: &[(0, profiles::proc_mount)],
    },
    Check {
        id: "restrictedVolumes",
        restricted: true,
        versions: &[(0, host::restricted_volumes)],
    },
    Check {
        id: "runAsNonRoot",
        restricted: true,
        versions: &[(0, privilege::run_as_non_root)],
    },
    Check {
        id: "runAsUser",
        restricted: true,
        versions: &[(23, privilege::run_as_user)],
    },
    Check {
        id: "seLinuxOptions",
        restricted: false,
        versions: &[(0, profiles::selinux_1_0), (31, profiles::selinux_1_31)],
    },
    Check {
        id: "seccompProfile_baseline",
        restricted: false,
        versions: &[
            (0, profiles::seccomp_baseline_1_0),
            (19, profiles::seccomp_baseline_1_19),
        ],
    },
    Check {
        id: "seccompProfile_restricted",
        restricted: true,
        versions: &[
            (19, profiles::seccomp_restricted_1_19),
            (25, profiles::seccomp_restricted_1_25),
        ],
    },
    Check {
        id: "sysctls",
        restricted: false,
        versions: &[
            (0, host::sysctls_1_0),
            (27, host::sysctls_1_27),
            (29, host::sysctls_1_29),
            (32, host::sysctls_1_32),
        ],
    },
    Check {
        id: "windowsHostProcess",
        restricted: false,
        versions: &[(0, host::windows_host_process)],
    },
];

/// The revision of `check` that runs at `version`: the newest whose minimum version is not
/// newer than `version`, else the first one (Kyverno applies a check even below its first
/// version).
fn select(check: &Check, version: Version) -> Option<CheckFn> {
    let mut selected = check.versions.first()?;
    for next in &check.versions[1..] {
        let next_v = Version::Minor(next.0);
        if !version.older(next_v) && selected.0 < next.0 {
            selected = next;
        }
    }
    Some(selected.1)
}

/// `evaluatePSS`: the failed checks for `pod`. `baseline` runs only the baseline checks; any
/// other level (restricted, privileged, anything else) runs them all.
pub(crate) fn evaluate(baseline: bool, version: Version, pod: &Pod) -> Vec<CheckResult> {
    CHECKS
        .iter()
        .filter(|c| !(baseline && c.restricted))
        .filter_map(|c| {
            let mut r = select(c, version)?(pod)?;
            r.id = c.id;
            Some(r)
        })
        .collect()
}

/// The containers in the order the checks visit them (init, regular, ephemeral), with
/// where each is (its path is built only for a check that fails on it).
pub(crate) fn visit(spec: &Spec) -> impl Iterator<Item = (&Container, At)> {
    let lists = [
        ("initContainers", &spec.init_containers),
        ("containers", &spec.containers),
        ("ephemeralContainers", &spec.ephemeral_containers),
    ];
    lists.into_iter().flat_map(|(list, containers)| {
        containers
            .iter()
            .enumerate()
            .map(move |(index, c)| (c, At { list, index }))
    })
}

/// A container's place in the pod spec: `spec.<list>[<index>]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At {
    list: &'static str,
    index: usize,
}

impl At {
    pub(crate) fn path(self) -> FieldPath {
        FieldPath::spec().child(&[self.list]).index(self.index)
    }

    /// The path of a field of the container.
    pub(crate) fn child(self, names: &[&'static str]) -> FieldPath {
        self.path().child(names)
    }
}
