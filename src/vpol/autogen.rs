//! Autogen for ValidatingPolicies (cel.md §3.6, `kyverno/kyverno:pkg/cel/autogen`): a policy
//! matching exactly `""/v1/pods` gets copies for pod controllers, with matchConstraints for the
//! controllers and every expression rewritten by plain text substitution — quirks included
//! (string literals are rewritten too; `object.metadata.namespace` is left alone).

use super::constraints::{Constraints, ResourceRule};

/// Where the pod template sits in the controllers of one copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `spec.template` (Deployment, DaemonSet, StatefulSet, ReplicaSet, Job).
    Template,
    /// `spec.jobTemplate.spec.template` (CronJob).
    CronJob,
}

/// `(group, resource)` of every controller autogen knows, in Kyverno's order.
const CONTROLLERS: &[(&str, &str)] = &[
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
];

/// Whether the constraints are eligible: one rule for exactly `""/v1/pods`, no resource names,
/// no exclusions, no object selector.
pub(crate) fn eligible(c: &Constraints) -> bool {
    let [r] = c.resource_rules.as_slice() else {
        return false;
    };
    r.api_groups == [""]
        && r.api_versions == ["v1"]
        && r.resources == ["pods"]
        && r.resource_names.is_empty()
        && c.exclude_rules.is_empty()
        && c.object_selector
            .as_ref()
            .is_none_or(|s| s.match_labels.is_empty() && s.match_expressions.is_empty())
}

/// The copies to make: `(target, constraints)` for the selected controllers (`None` = all six;
/// an empty list = none).
pub fn copies(c: &Constraints, controllers: Option<&[String]>) -> Vec<(Target, Constraints)> {
    let Some(pod_rule) = c.resource_rules.first() else {
        return Vec::new();
    };
    let selected = |res: &str| controllers.is_none_or(|list| list.iter().any(|x| x == res));
    let rule = |group: &str, resources: Vec<String>| ResourceRule {
        api_groups: vec![group.to_owned()],
        api_versions: vec!["v1".to_owned()],
        resources,
        operations: pod_rule.operations.clone(),
        scope: pod_rule.scope.clone(),
        resource_names: Vec::new(),
    };
    let mut out = Vec::new();
    let mut template_rules = Vec::new();
    for group in ["apps", "batch"] {
        let res: Vec<String> = CONTROLLERS
            .iter()
            .filter(|(g, r)| *g == group && *r != "cronjobs" && selected(r))
            .map(|(_, r)| (*r).to_owned())
            .collect();
        if !res.is_empty() {
            template_rules.push(rule(group, res));
        }
    }
    let constrained = |rules: Vec<ResourceRule>| Constraints {
        resource_rules: rules,
        exclude_rules: Vec::new(),
        namespace_selector: c.namespace_selector.clone(),
        object_selector: None,
    };
    if !template_rules.is_empty() {
        out.push((Target::Template, constrained(template_rules)));
    }
    if selected("cronjobs") {
        out.push((
            Target::CronJob,
            constrained(vec![rule("batch", vec!["cronjobs".to_owned()])]),
        ));
    }
    out
}

/// Rewrites `object.spec` / `object.metadata` (and `oldObject.…`) to the pod template's, except
/// `…metadata` immediately followed by the `.namespace` segment.
pub fn rewrite(text: &str, target: Target) -> String {
    let prefix = match target {
        Target::Template => "spec.template.",
        Target::CronJob => "spec.jobTemplate.spec.template.",
    };
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while !rest.is_empty() {
        let hit = ["oldObject.", "object."]
            .iter()
            .filter_map(|root| rest.find(root).map(|i| (i, *root)))
            .min_by_key(|(i, root)| (*i, std::cmp::Reverse(root.len())));
        let Some((i, root)) = hit else {
            out.push_str(rest);
            break;
        };
        let after = &rest[i + root.len()..];
        out.push_str(&rest[..i + root.len()]);
        let field = ["spec", "metadata"]
            .into_iter()
            .find(|f| after.starts_with(f));
        if let Some(f) = field {
            let tail = &after[f.len()..];
            let namespace = f == "metadata"
                && tail.starts_with(".namespace")
                && !tail[".namespace".len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            if !namespace {
                out.push_str(prefix);
            }
        }
        rest = after;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_object_paths_but_not_metadata_namespace() {
        assert_eq!(
            rewrite(
                "object.spec.containers.all(c, has(oldObject.metadata.labels))",
                Target::Template
            ),
            "object.spec.template.spec.containers.all(c, has(oldObject.spec.template.metadata.labels))"
        );
        assert_eq!(
            rewrite("object.metadata.namespace != 'x'", Target::CronJob),
            "object.metadata.namespace != 'x'"
        );
        assert_eq!(
            rewrite("object.metadata.name", Target::CronJob),
            "object.spec.jobTemplate.spec.template.metadata.name"
        );
    }
}
