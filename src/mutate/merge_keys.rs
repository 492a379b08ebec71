//! The strategic-merge schema for built-in kinds: which lists merge element-wise, and by which
//! key(s). Everything not listed is replaced wholesale (mutate.md §4.6).
//!
//! Source: the Kubernetes **v1.21.2** OpenAPI schema embedded in `sigs.k8s.io/kustomize/kyaml`
//! v0.21.1 (`kyaml/openapi/kubernetesapi/v1212/swagger.go`), the fields with
//! `x-kubernetes-patch-strategy: merge` and their `x-kubernetes-patch-merge-key`, as
//! tabulated in `shared/spec/mutate.md` §4.6. Kyverno merges with that schema, not a newer
//! one, so fields added after 1.21 are deliberately absent.

/// How a list field merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListStrategy {
    /// The overlay list replaces the resource list.
    Replace,
    /// Elements are matched by these keys (all must agree; empty matches anything).
    Keys(&'static [&'static str]),
    /// A list of scalars merged as a set (overlay values first).
    ScalarSet,
}

/// `(type, field, type of the field's value or list element, strategy)`. A field with no
/// strategy but a known type is listed with `Replace` so the walk can descend through it.
const FIELDS: &[(&str, &str, &str, ListStrategy)] = &[
    (
        "ObjectMeta",
        "ownerReferences",
        "",
        ListStrategy::Keys(&["uid"]),
    ),
    ("ObjectMeta", "finalizers", "", ListStrategy::ScalarSet),
    (
        "PodTemplateSpec",
        "metadata",
        "ObjectMeta",
        ListStrategy::Replace,
    ),
    ("PodTemplateSpec", "spec", "PodSpec", ListStrategy::Replace),
    (
        "PodSpec",
        "containers",
        "Container",
        ListStrategy::Keys(&["name"]),
    ),
    (
        "PodSpec",
        "initContainers",
        "Container",
        ListStrategy::Keys(&["name"]),
    ),
    (
        "PodSpec",
        "ephemeralContainers",
        "Container",
        ListStrategy::Keys(&["name"]),
    ),
    ("PodSpec", "volumes", "", ListStrategy::Keys(&["name"])),
    (
        "PodSpec",
        "imagePullSecrets",
        "",
        ListStrategy::Keys(&["name"]),
    ),
    ("PodSpec", "hostAliases", "", ListStrategy::Keys(&["ip"])),
    (
        "PodSpec",
        "topologySpreadConstraints",
        "",
        ListStrategy::Keys(&["topologyKey", "whenUnsatisfiable"]),
    ),
    ("Container", "env", "", ListStrategy::Keys(&["name"])),
    (
        "Container",
        "ports",
        "",
        ListStrategy::Keys(&["containerPort", "protocol"]),
    ),
    (
        "Container",
        "volumeMounts",
        "",
        ListStrategy::Keys(&["mountPath"]),
    ),
    (
        "Container",
        "volumeDevices",
        "",
        ListStrategy::Keys(&["devicePath"]),
    ),
    (
        "WorkloadSpec",
        "template",
        "PodTemplateSpec",
        ListStrategy::Replace,
    ),
    (
        "CronJobSpec",
        "jobTemplate",
        "JobTemplateSpec",
        ListStrategy::Replace,
    ),
    (
        "JobTemplateSpec",
        "metadata",
        "ObjectMeta",
        ListStrategy::Replace,
    ),
    (
        "JobTemplateSpec",
        "spec",
        "WorkloadSpec",
        ListStrategy::Replace,
    ),
    (
        "ServiceSpec",
        "ports",
        "",
        ListStrategy::Keys(&["port", "protocol"]),
    ),
    ("Status", "conditions", "", ListStrategy::Keys(&["type"])),
    (
        "ServiceAccount",
        "secrets",
        "",
        ListStrategy::Keys(&["name"]),
    ),
    (
        "WebhookConfiguration",
        "webhooks",
        "",
        ListStrategy::Keys(&["name"]),
    ),
];

/// `(group, kind, type of spec)`: the built-in kinds whose spec has merge lists. Every kind
/// of these groups gets `metadata: ObjectMeta` and `status: Status`.
const KINDS: &[(&str, &str, &str)] = &[
    ("", "Pod", "PodSpec"),
    ("", "PodTemplate", ""),
    ("", "ReplicationController", "WorkloadSpec"),
    ("", "Service", "ServiceSpec"),
    ("", "ServiceAccount", ""),
    ("", "ConfigMap", ""),
    ("", "Secret", ""),
    ("", "Namespace", ""),
    ("", "Node", ""),
    ("", "PersistentVolume", ""),
    ("", "PersistentVolumeClaim", ""),
    ("", "Endpoints", ""),
    ("", "LimitRange", ""),
    ("", "ResourceQuota", ""),
    ("apps", "Deployment", "WorkloadSpec"),
    ("apps", "ReplicaSet", "WorkloadSpec"),
    ("apps", "StatefulSet", "WorkloadSpec"),
    ("apps", "DaemonSet", "WorkloadSpec"),
    ("batch", "Job", "WorkloadSpec"),
    ("batch", "CronJob", "CronJobSpec"),
    ("networking.k8s.io", "Ingress", ""),
    ("networking.k8s.io", "NetworkPolicy", ""),
    ("policy", "PodDisruptionBudget", ""),
    ("rbac.authorization.k8s.io", "Role", ""),
    ("rbac.authorization.k8s.io", "ClusterRole", ""),
    ("rbac.authorization.k8s.io", "RoleBinding", ""),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", ""),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "",
    ),
    ("autoscaling", "HorizontalPodAutoscaler", ""),
];

/// A position in the schema: the type of the node being merged, if known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaType {
    /// Unknown: every list below is replaced.
    Unknown,
    /// The root of a built-in kind (the kind's name).
    Kind(&'static str),
    /// A named type of [`FIELDS`].
    Type(&'static str),
}

impl SchemaType {
    /// The root type of a resource; unknown kinds (every custom resource) have none.
    pub fn root(api_version: &str, kind: &str) -> SchemaType {
        let group = crate::resource::split_api_version(api_version).0;
        KINDS
            .iter()
            .find(|&&(g, k, _)| g == group && k == kind)
            .map_or(SchemaType::Unknown, |&(_, k, _)| SchemaType::Kind(k))
    }

    /// The type of `field` in a map of this type, and how it merges when it is a list.
    pub fn field(self, field: &str) -> (SchemaType, ListStrategy) {
        let unknown = (SchemaType::Unknown, ListStrategy::Replace);
        match self {
            SchemaType::Unknown => unknown,
            SchemaType::Kind(kind) => match field {
                "metadata" => (SchemaType::Type("ObjectMeta"), ListStrategy::Replace),
                "status" => (SchemaType::Type("Status"), ListStrategy::Replace),
                "spec" => KINDS
                    .iter()
                    .find(|&&(_, k, s)| k == kind && !s.is_empty())
                    .map_or(unknown, |&(_, _, s)| {
                        (SchemaType::Type(s), ListStrategy::Replace)
                    }),
                "template" if kind == "PodTemplate" => {
                    (SchemaType::Type("PodTemplateSpec"), ListStrategy::Replace)
                }
                "secrets" if kind == "ServiceAccount" => {
                    SchemaType::Type("ServiceAccount").field(field)
                }
                "webhooks" if kind.ends_with("WebhookConfiguration") => {
                    SchemaType::Type("WebhookConfiguration").field(field)
                }
                _ => unknown,
            },
            SchemaType::Type(ty) => FIELDS
                .iter()
                .find(|&&(t, f, _, _)| t == ty && f == field)
                .map_or(unknown, |&(_, _, c, s)| {
                    let child = if c.is_empty() {
                        SchemaType::Unknown
                    } else {
                        SchemaType::Type(c)
                    };
                    (child, s)
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_containers_merge_by_name_ports_by_two_keys() {
        let root = SchemaType::root("apps/v1", "Deployment");
        let (spec, _) = root.field("spec");
        let (tmpl, _) = spec.field("template");
        let (pod, _) = tmpl.field("spec");
        let (c, s) = pod.field("containers");
        assert_eq!(s, ListStrategy::Keys(&["name"]));
        assert_eq!(
            c.field("ports").1,
            ListStrategy::Keys(&["containerPort", "protocol"])
        );
        assert_eq!(pod.field("tolerations").1, ListStrategy::Replace);
    }

    #[test]
    fn custom_resources_and_cronjobs() {
        let crd = SchemaType::root("example.com/v1", "Widget");
        assert_eq!(
            crd.field("metadata").0.field("finalizers").1,
            ListStrategy::Replace
        );
        let cj = SchemaType::root("batch/v1", "CronJob");
        let pod = cj
            .field("spec")
            .0
            .field("jobTemplate")
            .0
            .field("spec")
            .0
            .field("template")
            .0
            .field("spec")
            .0;
        assert_eq!(pod.field("volumes").1, ListStrategy::Keys(&["name"]));
    }
}
