//! Decoding of containers and security contexts (pod and container level) for [`super::pod`].

use crate::yaml::Map;

use super::gojson::{Cx, DecodeError, GoPath, item};
use super::pod::{Capabilities, Container, PodSecurityContext, SeLinux, SecurityContext};

/// `seccompProfile.type`, `appArmorProfile.type` and `seLinuxOptions`, shared by the pod and
/// container security contexts.
type Profiles = (
    Option<String>,
    Option<String>,
    Option<SeLinux>,
    Option<bool>,
);

fn decode_profiles(cx: &Cx<'_>, m: &Map) -> Result<Profiles, DecodeError> {
    let typed =
        |key: &str, strukt: &'static str, go: &str| -> Result<Option<String>, DecodeError> {
            match cx.map(m, key, go)? {
                None => Ok(None),
                Some(p) => {
                    let path = cx.sub(key);
                    let inner = Cx { strukt, path };
                    Ok(Some(inner.str(p, "type")?.unwrap_or_default()))
                }
            }
        };
    let seccomp = typed("seccompProfile", "SeccompProfile", "v1.SeccompProfile")?;
    let apparmor = typed("appArmorProfile", "AppArmorProfile", "v1.AppArmorProfile")?;
    let selinux = match cx.map(m, "seLinuxOptions", "v1.SELinuxOptions")? {
        None => None,
        Some(o) => {
            let path = cx.sub("seLinuxOptions");
            let inner = Cx {
                strukt: "SELinuxOptions",
                path,
            };
            Some(SeLinux {
                type_: inner.str(o, "type")?.unwrap_or_default(),
                user: inner.str(o, "user")?.unwrap_or_default(),
                role: inner.str(o, "role")?.unwrap_or_default(),
            })
        }
    };
    let host_process = match cx.map(m, "windowsOptions", "v1.WindowsSecurityContextOptions")? {
        None => None,
        Some(w) => {
            let path = cx.sub("windowsOptions");
            let inner = Cx {
                strukt: "WindowsSecurityContextOptions",
                path,
            };
            inner.bool(w, "hostProcess")?
        }
    };
    Ok((seccomp, apparmor, selinux, host_process))
}

pub(crate) fn decode_pod_sc(m: &Map, path: GoPath<'_>) -> Result<PodSecurityContext, DecodeError> {
    let cx = Cx {
        strukt: "PodSecurityContext",
        path,
    };
    let (seccomp, apparmor, selinux, host_process) = decode_profiles(&cx, m)?;
    let mut sysctls = Vec::new();
    let sp = cx.sub("sysctls");
    let scx = Cx {
        strukt: "Sysctl",
        path: sp,
    };
    for n in cx.seq(m, "sysctls", "[]v1.Sysctl")? {
        let s = item(&cx, "sysctls", n, "v1.Sysctl")?;
        sysctls.push(scx.str(s, "name")?.unwrap_or_default());
    }
    Ok(PodSecurityContext {
        run_as_non_root: cx.bool(m, "runAsNonRoot")?,
        run_as_user: cx.int(m, "runAsUser", false)?,
        seccomp,
        selinux,
        sysctls,
        host_process,
        apparmor,
    })
}

fn decode_sc(m: &Map, path: GoPath<'_>) -> Result<SecurityContext, DecodeError> {
    let cx = Cx {
        strukt: "SecurityContext",
        path,
    };
    let (seccomp, apparmor, selinux, host_process) = decode_profiles(&cx, m)?;
    let capabilities = match cx.map(m, "capabilities", "v1.Capabilities")? {
        None => None,
        Some(c) => {
            let p = cx.sub("capabilities");
            let ccx = Cx {
                strukt: "Capabilities",
                path: p,
            };
            Some(Capabilities {
                add: ccx.strings(c, "add", "Capabilities", "v1.Capability")?,
                drop: ccx.strings(c, "drop", "Capabilities", "v1.Capability")?,
            })
        }
    };
    Ok(SecurityContext {
        privileged: cx.bool(m, "privileged")?,
        allow_privilege_escalation: cx.bool(m, "allowPrivilegeEscalation")?,
        capabilities,
        proc_mount: cx.str(m, "procMount")?,
        run_as_non_root: cx.bool(m, "runAsNonRoot")?,
        run_as_user: cx.int(m, "runAsUser", false)?,
        seccomp,
        selinux,
        host_process,
        apparmor,
    })
}

pub(crate) fn decode_container(m: &Map, path: GoPath<'_>) -> Result<Container, DecodeError> {
    let cx = Cx {
        strukt: "Container",
        path,
    };
    let mut c = Container {
        name: cx.str(m, "name")?.unwrap_or_default(),
        image: cx.str(m, "image")?.unwrap_or_default(),
        ..Container::default()
    };
    if let Some(sc) = cx.map(m, "securityContext", "v1.SecurityContext")? {
        c.security_context = Some(decode_sc(sc, cx.sub("securityContext"))?);
    }
    let pp = cx.sub("ports");
    let pcx = Cx {
        strukt: "ContainerPort",
        path: pp,
    };
    for n in cx.seq(m, "ports", "[]v1.ContainerPort")? {
        let p = item(&cx, "ports", n, "v1.ContainerPort")?;
        c.host_ports
            .push(pcx.int(p, "hostPort", true)?.unwrap_or(0));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = cx.map(m, probe, "v1.Probe")? {
            handler_hosts(cx.sub(probe), p, &[probe], &mut c.probe_hosts)?;
        }
    }
    if let Some(l) = cx.map(m, "lifecycle", "v1.Lifecycle")? {
        let lp = cx.sub("lifecycle");
        let lcx = Cx {
            strukt: "Lifecycle",
            path: lp,
        };
        for h in ["postStart", "preStop"] {
            if let Some(hm) = lcx.map(l, h, "v1.LifecycleHandler")? {
                handler_hosts(lcx.sub(h), hm, &["lifecycle", h], &mut c.probe_hosts)?;
            }
        }
    }
    Ok(c)
}

/// The non-empty `httpGet.host` / `tcpSocket.host` of a probe or lifecycle handler.
fn handler_hosts(
    path: GoPath<'_>,
    m: &Map,
    at: &[&'static str],
    out: &mut Vec<(Vec<&'static str>, String)>,
) -> Result<(), DecodeError> {
    let cx = Cx {
        strukt: "ProbeHandler",
        path,
    };
    for (key, go) in [
        ("httpGet", "v1.HTTPGetAction"),
        ("tcpSocket", "v1.TCPSocketAction"),
    ] {
        if let Some(a) = cx.map(m, key, go)? {
            let p = cx.sub(key);
            let acx = Cx {
                strukt: if key == "httpGet" {
                    "HTTPGetAction"
                } else {
                    "TCPSocketAction"
                },
                path: p,
            };
            let host = acx.str(a, "host")?.unwrap_or_default();
            if !host.is_empty() {
                let mut loc = at.to_vec();
                loc.extend([key, "host"]);
                out.push((loc, host));
            }
        }
    }
    Ok(())
}
