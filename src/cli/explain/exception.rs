//! `kpol explain --exception`: a PolicyException that exempts the finding's resource from the
//! finding's rule, for review and for the cluster (kpol honours it with `-e`, as Kyverno does).
//! A ClusterPolicy/Policy rule gets a `kyverno.io/v2` exception naming the policy and rule and
//! matching the resource by kind, name and namespace; a ValidatingPolicy a
//! `policies.kyverno.io/v1` one whose `matchConditions` select the resource the same way.

use kpol::policy::{Policy, PolicyKind};
use serde_json::{Value, json};

use crate::cli::check::Finding;
use crate::cli::render::yaml_out::to_yaml;

pub fn render(policy: &Policy, f: &Finding) -> String {
    let doc = exception(policy, f);
    format!(
        "# kpol explain --exception: {} on {}\n{}",
        f.rule_id(),
        f.resource,
        to_yaml(&doc)
    )
}

/// The exception document.
pub fn exception(policy: &Policy, f: &Finding) -> Value {
    let name = exception_name(&policy.name, &f.name);
    let mut metadata = json!({ "name": name });
    if !f.namespace.is_empty() {
        metadata["namespace"] = json!(f.namespace);
    }
    match policy.kind {
        PolicyKind::ValidatingPolicy | PolicyKind::NamespacedValidatingPolicy => {
            let mut test = vec![
                format!("object.kind == {}", cel_string(&f.kind)),
                format!("object.metadata.name == {}", cel_string(&f.name)),
            ];
            if !f.namespace.is_empty() {
                test.push(format!(
                    "object.metadata.namespace == {}",
                    cel_string(&f.namespace)
                ));
            }
            json!({
                "apiVersion": "policies.kyverno.io/v1",
                "kind": "PolicyException",
                "metadata": metadata,
                "spec": {
                    "policyRefs": [{ "name": policy.name, "kind": format!("{:?}", policy.kind) }],
                    "matchConditions": [{ "name": "this-resource", "expression": test.join(" && ") }],
                },
            })
        }
        _ => {
            let mut resources = json!({ "kinds": [f.kind], "names": [f.name] });
            if !f.namespace.is_empty() {
                resources["namespaces"] = json!([f.namespace]);
            }
            json!({
                "apiVersion": "kyverno.io/v2",
                "kind": "PolicyException",
                "metadata": metadata,
                "spec": {
                    "exceptions": [{ "policyName": policy.key(), "ruleNames": [f.rule] }],
                    "match": { "any": [{ "resources": resources }] },
                },
            })
        }
    }
}

/// `<policy>-<resource>`, lowercased to a DNS-1123 name of at most 63 characters.
fn exception_name(policy: &str, resource: &str) -> String {
    let raw = format!("{policy}-{resource}").to_ascii_lowercase();
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    name.truncate(63);
    name.trim_matches('-').to_owned()
}

/// A single-quoted CEL string literal.
fn cel_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(
            exception_name("Require.Labels", "web_1"),
            "require-labels-web-1"
        );
        assert!(exception_name(&"p".repeat(40), &"r".repeat(40)).len() <= 63);
    }
}
