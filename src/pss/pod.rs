//! The pod the checks read, decoded from a resource the way Kyverno decodes it: the resource
//! is unmarshalled into the typed Kubernetes object (`corev1.Pod`, `appsv1.Deployment`,
//! `batchv1.CronJob`), so `null` means unset, unknown fields vanish, and a value of the wrong
//! JSON type is an error (`json: cannot unmarshal …`) that makes the rule an Error.
//!
//! Only the fields the Pod Security checks read are decoded (and type-checked); a type error
//! elsewhere in the pod, which Kyverno would also report, is not seen.

use crate::yaml::{Map, Node, Value};

use super::container::{decode_container, decode_pod_sc};
pub(crate) use super::gojson::DecodeError;
use super::gojson::{Cx, GoPath, item};

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
            path: GoPath::Root(parent),
        };
        let Value::Map(m) = &meta.value else {
            return Err(cx.err(key, meta, "v1.ObjectMeta"));
        };
        let cx = Cx {
            strukt: "ObjectMeta",
            path: GoPath::Root(meta_path),
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
            path: GoPath::Root(parent),
        };
        return Err(cx.err(key, spec, "v1.PodSpec"));
    };
    pod.spec = decode_spec(m, GoPath::Root(spec_path))?;
    Ok(pod)
}

fn decode_spec(m: &Map, path: GoPath<'_>) -> Result<Spec, DecodeError> {
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
            path: p,
        };
        spec.windows = os_cx.str(os, "name")?.as_deref() == Some("windows");
    }
    if let Some(sc) = cx.map(m, "securityContext", "v1.PodSecurityContext")? {
        let p = cx.sub("securityContext");
        spec.security_context = Some(decode_pod_sc(sc, p)?);
    }
    let vp = cx.sub("volumes");
    for n in cx.seq(m, "volumes", "[]v1.Volume")? {
        let v = item(&cx, "volumes", n, "v1.Volume")?;
        spec.volumes.push(decode_volume(v, vp)?);
    }
    for (key, list) in [
        ("initContainers", &mut spec.init_containers),
        ("containers", &mut spec.containers),
        ("ephemeralContainers", &mut spec.ephemeral_containers),
    ] {
        let p = cx.sub(key);
        for n in cx.seq(m, key, "[]v1.Container")? {
            let c = item(&cx, key, n, "v1.Container")?;
            list.push(decode_container(c, p)?);
        }
    }
    Ok(spec)
}

fn decode_volume(m: &Map, path: GoPath<'_>) -> Result<Volume, DecodeError> {
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
                    path: p,
                };
                v.host_path = Some(hcx.str(src, "path")?.unwrap_or_default());
            }
        }
    }
    Ok(v)
}
