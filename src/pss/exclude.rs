//! `podSecurity.exclude`: Kyverno's exemption of controls (validate.md §13.4).
//!
//! Each entry re-runs the checks on a reduced pod — the pod with one empty container `fake`
//! when the entry has no `images` (pod-level exclusion), else only the containers whose image
//! matches (container-level exclusion). Every error of the entry's control found there that
//! passes `restrictedField` and `values` removes one matching error (same field with indices
//! replaced by `*`, and for container fields the same container name) from the results; a
//! check left without errors is gone. A check that reports no field errors is never removed.

use crate::base::wildcard;
use crate::yaml::Node;

use super::field::{CheckResult, FieldErr};
use super::pod::{Container, Pod, Spec};
use super::registry::{Version, evaluate};

/// One `exclude` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Exclude {
    pub(crate) control_name: String,
    pub(crate) images: Vec<String>,
    pub(crate) restricted_field: String,
    pub(crate) values: Vec<String>,
}

/// The check ids of a control name (`PSS_control_name_to_ids`).
pub(crate) fn control_ids(name: &str) -> &'static [&'static str] {
    match name {
        "Capabilities" => &["capabilities_baseline", "capabilities_restricted"],
        "Seccomp" => &["seccompProfile_baseline", "seccompProfile_restricted"],
        "Privileged Containers" => &["privileged"],
        "Host Ports" => &["hostPorts"],
        "/proc Mount Type" => &["procMount"],
        "HostProcess" => &["windowsHostProcess"],
        "SELinux" => &["seLinuxOptions"],
        "Host Namespaces" => &["hostNamespaces"],
        "HostPath Volumes" => &["hostPathVolumes"],
        "Sysctls" => &["sysctls"],
        "AppArmor" => &["appArmorProfile"],
        "Privilege Escalation" => &["allowPrivilegeEscalation"],
        "Running as Non-root" => &["runAsNonRoot"],
        "Running as Non-root user" => &["runAsUser"],
        "Volume Types" => &["restrictedVolumes"],
        _ => &[],
    }
}

/// Every run of ASCII digits replaced by `*` (`regexp \d+`).
pub(crate) fn normalise(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut in_digits = false;
    for ch in field.chars() {
        if ch.is_ascii_digit() {
            if !in_digits {
                out.push('*');
            }
            in_digits = true;
        } else {
            out.push(ch);
            in_digits = false;
        }
    }
    out
}

/// `parseField`: the normalised field and, when its second word names a container list, the
/// list and the first index in the field.
fn parse_field(field: &str) -> (String, Option<(String, usize)>) {
    let words: Vec<&str> = field
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let first_index = field
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse::<usize>().ok());
    let container = match (words.get(1), first_index) {
        (Some(&w), Some(i))
            if matches!(w, "containers" | "initContainers" | "ephemeralContainers") =>
        {
            Some((w.to_owned(), i))
        }
        _ => None,
    };
    (normalise(field), container)
}

/// The name of the container at `list[index]` of `spec` (empty when absent).
fn container_name<'a>(spec: &'a Spec, list: &str, index: usize) -> &'a str {
    let l = match list {
        "initContainers" => &spec.init_containers,
        "ephemeralContainers" => &spec.ephemeral_containers,
        _ => &spec.containers,
    };
    l.get(index).map_or("", |c| c.name.as_str())
}

/// The pod an entry re-runs the checks on, and whether it is a container-level exclusion.
fn reduced_pod(exclude: &Exclude, pod: &Pod) -> (Pod, bool) {
    if exclude.images.is_empty() {
        let mut p = pod.clone();
        p.spec.containers = vec![Container {
            name: "fake".into(),
            ..Container::default()
        }];
        p.spec.init_containers.clear();
        p.spec.ephemeral_containers.clear();
        return (p, false);
    }
    let keep = |list: &[Container]| -> Vec<Container> {
        list.iter()
            .filter(|c| {
                exclude
                    .images
                    .iter()
                    .any(|i| wildcard::matches(i, &c.image))
            })
            .cloned()
            .collect()
    };
    let spec = Spec {
        containers: keep(&pod.spec.containers),
        init_containers: keep(&pod.spec.init_containers),
        ephemeral_containers: keep(&pod.spec.ephemeral_containers),
        ..Spec::default()
    };
    (
        Pod {
            annotations: Vec::new(),
            spec,
        },
        true,
    )
}

/// Whether an error of the reduced pod qualifies under the entry's `restrictedField` and
/// `values`.
fn qualifies(exclude: &Exclude, field: &str, err: &FieldErr) -> bool {
    if !(exclude.restricted_field.is_empty() || exclude.restricted_field == field) {
        return false;
    }
    exclude.values.is_empty()
        || err
            .bad
            .values()
            .iter()
            .all(|b| exclude.values.iter().any(|v| wildcard::matches(v, b)))
}

/// Applies the entries in order to `results` (the failed checks of `pod`).
pub(crate) fn apply(
    baseline: bool,
    version: Version,
    excludes: &[Exclude],
    results: &mut Vec<CheckResult>,
    pod: &Pod,
) {
    for exclude in excludes {
        let (reduced, container_level) = reduced_pod(exclude, pod);
        let ids = control_ids(&exclude.control_name);
        for ex in evaluate(baseline, version, &reduced) {
            if !ids.contains(&ex.id) {
                continue;
            }
            for err in ex.errs.iter().flatten() {
                let (ex_field, ex_container) = if container_level {
                    let (f, c) = parse_field(&err.field);
                    let name = c.map(|(l, i)| container_name(&reduced.spec, &l, i).to_owned());
                    (f, name)
                } else {
                    (normalise(&err.field), None)
                };
                if qualifies(exclude, &ex_field, err) {
                    remove_one(
                        results,
                        ex.id,
                        &ex_field,
                        ex_container.as_deref(),
                        container_level,
                        pod,
                    );
                }
            }
        }
    }
}

/// Removes from the result of check `id` the first error with field `ex_field` (and, for a
/// container field under a container-level exclusion, of the container named
/// `ex_container`); drops the check when no error is left.
fn remove_one(
    results: &mut Vec<CheckResult>,
    id: &str,
    ex_field: &str,
    ex_container: Option<&str>,
    container_level: bool,
    pod: &Pod,
) {
    let Some(pos) = results.iter().position(|r| r.id == id) else {
        return;
    };
    let Some(errs) = results[pos].errs.as_mut() else {
        return;
    };
    let hit = errs.iter().position(|d| {
        if container_level {
            let (f, c) = parse_field(&d.field);
            match c {
                Some((l, i)) => {
                    f == ex_field && ex_container.unwrap_or("") == container_name(&pod.spec, &l, i)
                }
                None => f == ex_field,
            }
        } else {
            normalise(&d.field) == ex_field
        }
    });
    if let Some(i) = hit {
        // Go's remove: the last error takes the removed one's place.
        errs.swap_remove(i);
    }
    if errs.is_empty() {
        results.remove(pos);
    }
}

/// Controls set per container: an entry for them must name `images`.
const CONTAINER_LEVEL: &[&str] = &[
    "Capabilities",
    "Privileged Containers",
    "Host Ports",
    "/proc Mount Type",
    "Privilege Escalation",
];

/// Controls set on the pod: an entry for them must not name `images`.
const POD_LEVEL: &[&str] = &[
    "Host Namespaces",
    "HostPath Volumes",
    "Sysctls",
    "Volume Types",
];

/// Restricted-only controls, which a baseline rule cannot exclude.
const RESTRICTED_ONLY: &[&str] = &[
    "Volume Types",
    "Privilege Escalation",
    "Running as Non-root",
    "Running as Non-root user",
];

/// Kyverno's policy validation of the `exclude` entries of rule `rule_index`
/// (`ValidatePSaControlNames`): the first problem, with the node it is about.
pub(crate) fn policy_error(body: &Node, rule_index: usize) -> Option<(String, &Node)> {
    let baseline = body.get("level").and_then(Node::as_str) == Some("baseline");
    let entries = body.get("exclude").and_then(Node::as_seq)?;
    for (i, e) in entries.iter().enumerate() {
        let path = format!("spec.rules[{rule_index}].podSecurity.exclude[{i}]");
        let control = e.get("controlName").and_then(Node::as_str).unwrap_or("");
        let control_node = e.get("controlName").unwrap_or(e);
        let has = |key: &str| {
            e.get(key)
                .and_then(Node::as_seq)
                .is_some_and(|s| !s.is_empty())
        };
        let field = e
            .get("restrictedField")
            .and_then(Node::as_str)
            .unwrap_or("");
        let invalid =
            |detail: &str| format!("{path}.controlName: Invalid value: \"{control}\": {detail}");
        if CONTAINER_LEVEL.contains(&control) && !has("images") {
            let msg = invalid("exclude.images must be specified for the container level control");
            return Some((msg, control_node));
        }
        if POD_LEVEL.contains(&control) && has("images") {
            let msg = invalid("exclude.images must not be specified for the pod level control");
            return Some((msg, control_node));
        }
        if !field.is_empty() && !has("values") {
            return Some((format!("{path}.values: Forbidden: values is required"), e));
        }
        if field.is_empty() && has("values") {
            let msg = format!("{path}.restrictedField: Forbidden: restrictedField is required");
            return Some((msg, e));
        }
        if baseline && RESTRICTED_ONLY.contains(&control) {
            let msg = invalid("Invalid control name defined at the given level");
            return Some((msg, control_node));
        }
    }
    None
}
