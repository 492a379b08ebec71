//! The pod the checks read, decoded from a resource the way Kyverno decodes it: the resource
//! is unmarshalled into the typed Kubernetes object (`corev1.Pod`, `appsv1.Deployment`,
//! `batchv1.CronJob`), so `null` means unset, unknown fields vanish, and a value of the wrong
//! JSON type is an error (`json: cannot unmarshal …`) that makes the rule an Error.
//!
//! Only the fields the Pod Security checks read are decoded (and type-checked); a type error
//! elsewhere in the pod, which Kyverno would also report, is not seen.

use crate::yaml::{Map, Node, Value};

/// A decoding failure, with Go's `encoding/json` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DecodeError(pub(crate) String);

/// The pod: metadata annotations (sorted by key) and spec.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pod {
    pub(crate) annotations: Vec<(String, String)>,
    pub(crate) spec: Spec,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Spec {
    pub(crate) host_network: bool,
    pub(crate) host_pid: bool,
    pub(crate) host_ipc: bool,
    /// `spec.os.name == "windows"`.
    pub(crate) windows: bool,
    pub(crate) security_context: Option<PodSecurityContext>,
    pub(crate) volumes: Vec<Volume>,
    pub(crate) init_containers: Vec<Container>,
    pub(crate) containers: Vec<Container>,
    pub(crate) ephemeral_containers: Vec<Container>,
}

/// `seLinuxOptions`: type, user, role (unset strings are empty).
#[derive(Clone, Debug, Default)]
pub(crate) struct SeLinux {
    pub(crate) type_: String,
    pub(crate) user: String,
    pub(crate) role: String,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct PodSecurityContext {
    pub(crate) run_as_non_root: Option<bool>,
    pub(crate) run_as_user: Option<i64>,
    /// `seccompProfile.type` when `seccompProfile` is set (empty when it has no type).
    pub(crate) seccomp: Option<String>,
    pub(crate) selinux: Option<SeLinux>,
    pub(crate) sysctls: Vec<String>,
    pub(crate) host_process: Option<bool>,
    /// `appArmorProfile.type` when `appArmorProfile` is set.
    pub(crate) apparmor: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Capabilities {
    pub(crate) add: Vec<String>,
    pub(crate) drop: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SecurityContext {
    pub(crate) privileged: Option<bool>,
    pub(crate) allow_privilege_escalation: Option<bool>,
    pub(crate) capabilities: Option<Capabilities>,
    pub(crate) proc_mount: Option<String>,
    pub(crate) run_as_non_root: Option<bool>,
    pub(crate) run_as_user: Option<i64>,
    pub(crate) seccomp: Option<String>,
    pub(crate) selinux: Option<SeLinux>,
    pub(crate) host_process: Option<bool>,
    pub(crate) apparmor: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Container {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) security_context: Option<SecurityContext>,
    /// `ports[*].hostPort` (0 when unset), one per port.
    pub(crate) host_ports: Vec<i64>,
    /// Non-empty `host`s of probes and lifecycle handlers, with their path in the container.
    pub(crate) probe_hosts: Vec<(Vec<&'static str>, String)>,
}

/// The inline volume sources a pod may use under the restricted level.
pub(crate) const ALLOWED_VOLUMES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The other volume sources, in the order the restricted check names them.
pub(crate) const RESTRICTED_VOLUMES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

#[derive(Clone, Debug, Default)]
pub(crate) struct Volume {
    /// The known volume sources that are set (non-null), in source order.
    pub(crate) sources: Vec<&'static str>,
    /// `hostPath.path` when `hostPath` is set.
    pub(crate) host_path: Option<String>,
}

/// Decoding position: Go's innermost struct type and the JSON field path from the root.
struct Cx<'a> {
    strukt: &'static str,
    path: &'a str,
}

impl Cx<'_> {
    fn err(&self, key: &str, n: &Node, go_type: &str) -> DecodeError {
        let got = match &n.value {
            Value::Bool(_) => "bool".to_owned(),
            Value::Int(_) => "number".to_owned(),
            Value::Float(f) => format!("number {f}"),
            Value::Str(_) => "string".to_owned(),
            Value::Seq(_) => "array".to_owned(),
            Value::Map(_) => "object".to_owned(),
            Value::Null => "null".to_owned(),
        };
        DecodeError(format!(
            "json: cannot unmarshal {got} into Go struct field {}.{}.{key} of type {go_type}",
            self.strukt, self.path
        ))
    }

    fn sub(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    fn bool(&self, m: &Map, key: &str) -> Result<Option<bool>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Bool(b) => Ok(Some(*b)),
                _ => Err(self.err(key, n, "bool")),
            },
        }
    }

    fn str(&self, m: &Map, key: &str) -> Result<Option<String>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Str(s) => Ok(Some(s.clone())),
                _ => Err(self.err(key, n, "string")),
            },
        }
    }

    fn int(&self, m: &Map, key: &str, bits32: bool) -> Result<Option<i64>, DecodeError> {
        let go_type = if bits32 { "int32" } else { "int64" };
        let Some(n) = m.get(key) else {
            return Ok(None);
        };
        let (lo, hi) = if bits32 {
            (f64::from(i32::MIN), f64::from(i32::MAX))
        } else {
            (-9.223_372_036_854_776e18, 9.223_372_036_854_776e18)
        };
        match &n.value {
            Value::Null => Ok(None),
            Value::Int(i) if !bits32 || i32::try_from(*i).is_ok() => Ok(Some(*i)),
            #[allow(clippy::cast_possible_truncation)]
            Value::Float(f) if f.fract() == 0.0 && *f >= lo && *f < hi => Ok(Some(*f as i64)),
            _ => Err(self.err(key, n, go_type)),
        }
    }

    fn map<'n>(
        &self,
        m: &'n Map,
        key: &str,
        go_type: &str,
    ) -> Result<Option<&'n Map>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Map(inner) => Ok(Some(inner)),
                _ => Err(self.err(key, n, go_type)),
            },
        }
    }

    fn seq<'n>(&self, m: &'n Map, key: &str, go_type: &str) -> Result<&'n [Node], DecodeError> {
        match m.get(key) {
            None => Ok(&[]),
            Some(n) => match &n.value {
                Value::Null => Ok(&[]),
                Value::Seq(items) => Ok(items),
                _ => Err(self.err(key, n, go_type)),
            },
        }
    }

    /// A list of strings (`[]string`, `[]Capability`).
    fn strings(
        &self,
        m: &Map,
        key: &str,
        strukt: &'static str,
    ) -> Result<Vec<String>, DecodeError> {
        let path = self.sub(key);
        let cx = Cx {
            strukt,
            path: &path,
        };
        self.seq(m, key, "[]string")?
            .iter()
            .map(|n| match &n.value {
                Value::Str(s) => Ok(s.clone()),
                Value::Null => Ok(String::new()),
                _ => Err(DecodeError(format!(
                    "json: cannot unmarshal {} into Go struct field {}.{} of type string",
                    match &n.value {
                        Value::Bool(_) => "bool",
                        Value::Seq(_) => "array",
                        Value::Map(_) => "object",
                        _ => "number",
                    },
                    cx.strukt,
                    cx.path
                ))),
            })
            .collect()
    }
}

static EMPTY: std::sync::LazyLock<Map> = std::sync::LazyLock::new(Map::new);

/// A list item: a map, or `null` (Go's zero value).
fn item<'n>(cx: &Cx<'_>, key: &str, n: &'n Node, go_type: &str) -> Result<&'n Map, DecodeError> {
    match &n.value {
        Value::Map(m) => Ok(m),
        Value::Null => Ok(&EMPTY),
        _ => Err(cx.err(key, n, go_type)),
    }
}

/// Decodes the pod from its spec and metadata nodes; `spec_path`/`meta_path` are their JSON
/// paths in the resource (for error messages).
pub(crate) fn decode(
    spec: Option<&Node>,
    meta: Option<&Node>,
    spec_path: &str,
    meta_path: &str,
) -> Result<Pod, DecodeError> {
    let mut pod = Pod::default();
    if let Some(meta) = meta.filter(|n| !n.is_null()) {
        let (parent, key) = meta_path.rsplit_once('.').unwrap_or(("", meta_path));
        let cx = Cx {
            strukt: "ObjectMeta",
            path: parent,
        };
        let Value::Map(m) = &meta.value else {
            return Err(cx.err(key, meta, "v1.ObjectMeta"));
        };
        let cx = Cx {
            strukt: "ObjectMeta",
            path: meta_path,
        };
        if let Some(ann) = cx.map(m, "annotations", "map[string]string")? {
            for (k, v) in ann.iter() {
                match &v.value {
                    Value::Str(s) => pod.annotations.push((k.to_owned(), s.clone())),
                    Value::Null => pod.annotations.push((k.to_owned(), String::new())),
                    _ => return Err(cx.err("annotations", v, "string")),
                }
            }
        }
        pod.annotations.sort();
    }
    let Some(spec) = spec.filter(|n| !n.is_null()) else {
        return Ok(pod);
    };
    let (parent, key) = spec_path.rsplit_once('.').unwrap_or(("", spec_path));
    let Value::Map(m) = &spec.value else {
        let cx = Cx {
            strukt: "PodTemplateSpec",
            path: parent,
        };
        return Err(cx.err(key, spec, "v1.PodSpec"));
    };
    pod.spec = decode_spec(m, spec_path)?;
    Ok(pod)
}

fn decode_spec(m: &Map, path: &str) -> Result<Spec, DecodeError> {
    let cx = Cx {
        strukt: "PodSpec",
        path,
    };
    let mut spec = Spec {
        host_network: cx.bool(m, "hostNetwork")?.unwrap_or(false),
        host_pid: cx.bool(m, "hostPID")?.unwrap_or(false),
        host_ipc: cx.bool(m, "hostIPC")?.unwrap_or(false),
        ..Spec::default()
    };
    if let Some(os) = cx.map(m, "os", "v1.PodOS")? {
        let p = cx.sub("os");
        let os_cx = Cx {
            strukt: "PodOS",
            path: &p,
        };
        spec.windows = os_cx.str(os, "name")?.as_deref() == Some("windows");
    }
    if let Some(sc) = cx.map(m, "securityContext", "v1.PodSecurityContext")? {
        let p = cx.sub("securityContext");
        spec.security_context = Some(decode_pod_sc(sc, &p)?);
    }
    let vp = cx.sub("volumes");
    for n in cx.seq(m, "volumes", "[]v1.Volume")? {
        let v = item(&cx, "volumes", n, "v1.Volume")?;
        spec.volumes.push(decode_volume(v, &vp)?);
    }
    for (key, list) in [
        ("initContainers", &mut spec.init_containers),
        ("containers", &mut spec.containers),
        ("ephemeralContainers", &mut spec.ephemeral_containers),
    ] {
        let p = cx.sub(key);
        for n in cx.seq(m, key, "[]v1.Container")? {
            let c = item(&cx, key, n, "v1.Container")?;
            list.push(decode_container(c, &p)?);
        }
    }
    Ok(spec)
}

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
                    let inner = Cx {
                        strukt,
                        path: &path,
                    };
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
                path: &path,
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
                path: &path,
            };
            inner.bool(w, "hostProcess")?
        }
    };
    Ok((seccomp, apparmor, selinux, host_process))
}

fn decode_pod_sc(m: &Map, path: &str) -> Result<PodSecurityContext, DecodeError> {
    let cx = Cx {
        strukt: "PodSecurityContext",
        path,
    };
    let (seccomp, apparmor, selinux, host_process) = decode_profiles(&cx, m)?;
    let mut sysctls = Vec::new();
    let sp = cx.sub("sysctls");
    let scx = Cx {
        strukt: "Sysctl",
        path: &sp,
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

fn decode_sc(m: &Map, path: &str) -> Result<SecurityContext, DecodeError> {
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
                path: &p,
            };
            Some(Capabilities {
                add: ccx.strings(c, "add", "Capabilities")?,
                drop: ccx.strings(c, "drop", "Capabilities")?,
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

fn decode_container(m: &Map, path: &str) -> Result<Container, DecodeError> {
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
        c.security_context = Some(decode_sc(sc, &cx.sub("securityContext"))?);
    }
    let pp = cx.sub("ports");
    let pcx = Cx {
        strukt: "ContainerPort",
        path: &pp,
    };
    for n in cx.seq(m, "ports", "[]v1.ContainerPort")? {
        let p = item(&cx, "ports", n, "v1.ContainerPort")?;
        c.host_ports
            .push(pcx.int(p, "hostPort", true)?.unwrap_or(0));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = cx.map(m, probe, "v1.Probe")? {
            handler_hosts(&cx.sub(probe), p, &[probe], &mut c.probe_hosts)?;
        }
    }
    if let Some(l) = cx.map(m, "lifecycle", "v1.Lifecycle")? {
        let lp = cx.sub("lifecycle");
        let lcx = Cx {
            strukt: "Lifecycle",
            path: &lp,
        };
        for h in ["postStart", "preStop"] {
            if let Some(hm) = lcx.map(l, h, "v1.LifecycleHandler")? {
                handler_hosts(&lcx.sub(h), hm, &["lifecycle", h], &mut c.probe_hosts)?;
            }
        }
    }
    Ok(c)
}

/// The non-empty `httpGet.host` / `tcpSocket.host` of a probe or lifecycle handler.
fn handler_hosts(
    path: &str,
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
                path: &p,
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

fn decode_volume(m: &Map, path: &str) -> Result<Volume, DecodeError> {
    let cx = Cx {
        strukt: "Volume",
        path,
    };
    // The name is decoded (and type-checked) but no check reads it.
    cx.str(m, "name")?;
    let mut v = Volume::default();
    for key in ALLOWED_VOLUMES.iter().chain(RESTRICTED_VOLUMES) {
        if let Some(src) = cx.map(m, key, "object")? {
            v.sources.push(key);
            if *key == "hostPath" {
                let p = cx.sub("hostPath");
                let hcx = Cx {
                    strukt: "HostPathVolumeSource",
                    path: &p,
                };
                v.host_path = Some(hcx.str(src, "path")?.unwrap_or_default());
            }
        }
    }
    Ok(v)
}
