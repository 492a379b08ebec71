//! Values injected into evaluation (cli-compat.md §5): the Kyverno CLI's Values file as a
//! model — global values, per policy per resource, per rule — with the lookups the engine and
//! the test runner need. Parsing lives with the command-line side, which owns the file format.

use std::collections::BTreeMap;

use crate::request::Operation;
use crate::yaml::Node;

/// Injected values: dotted keys and their values, in file order.
pub type KeyValues = Vec<(String, Node)>;

#[derive(Clone, Debug, Default)]
pub struct Values {
    pub global: KeyValues,
    pub policies: Vec<PolicyValues>,
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// The values file's full `namespaces` objects, by name (CEL's `namespaceObject`).
    pub namespace_objects: BTreeMap<String, Node>,
    /// `subresources` mappings are given (not evaluated by kpol yet).
    pub subresources: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PolicyValues {
    pub name: String,
    /// Per resource name.
    pub resources: Vec<(String, KeyValues)>,
    /// Per rule name: values (with the first item of each `foreachValues` list), and whether
    /// some `foreachValues` could not be evaluated (an empty or non-list value).
    pub rules: Vec<(String, KeyValues, bool)>,
}

impl Values {
    pub fn policy(&self, name: &str) -> impl Iterator<Item = &PolicyValues> {
        self.policies.iter().filter(move |p| p.name == name)
    }

    /// The operation for one policy on one resource (§7.1): the global `request.operation`
    /// (any of the four), overridden by a per-resource UPDATE or DELETE.
    pub fn operation(&self, policy: &str, resource: &str) -> Result<Operation, String> {
        let mut op = Operation::Create;
        if let Some((_, n)) = self
            .global
            .iter()
            .rev()
            .find(|(k, _)| k == "request.operation")
        {
            let s = n.as_str().unwrap_or("");
            op = Operation::parse(s)
                .ok_or_else(|| format!("invalid request.operation value {s:?}"))?;
        }
        let per_resource = self
            .policy(policy)
            .flat_map(|p| p.resources.iter())
            .filter(|(r, _)| r == resource)
            .flat_map(|(_, kv)| kv.iter())
            .filter(|(k, _)| k == "request.operation")
            .filter_map(|(_, n)| n.as_str().and_then(Operation::parse))
            .filter(|o| matches!(o, Operation::Update | Operation::Delete))
            .last();
        Ok(per_resource.unwrap_or(op))
    }

    /// The value keys injected for (policy, resource, rule), `request.operation` aside — the
    /// variables a rule may read. Rule values match `rule`, `autogen-rule`,
    /// `autogen-cronjob-rule` (match.md §8.8).
    pub fn variable_keys(&self, policy: &str, resource: &str, rule: &str) -> Vec<&str> {
        let mut keys: Vec<&str> = self.global.iter().map(|(k, _)| k.as_str()).collect();
        for p in self.policy(policy) {
            for (r, kv) in &p.resources {
                if r == resource {
                    keys.extend(kv.iter().map(|(k, _)| k.as_str()));
                }
            }
            for (r, kv, foreach) in &p.rules {
                if base_rule(rule) == r {
                    keys.extend(kv.iter().map(|(k, _)| k.as_str()));
                    if *foreach {
                        keys.push("foreachValues");
                    }
                }
            }
        }
        keys.retain(|k| *k != "request.operation");
        keys
    }
}

/// The rule a (possibly generated) rule name comes from.
pub fn base_rule(rule: &str) -> &str {
    rule.strip_prefix("autogen-cronjob-")
        .or_else(|| rule.strip_prefix("autogen-"))
        .unwrap_or(rule)
}

impl Values {
    /// The values for one policy on one resource, in precedence order (global, then the
    /// resource's): each is deep-merged into the context in turn (§5.2).
    pub fn for_resource<'a>(
        &'a self,
        policy: &'a str,
        resource: &'a str,
    ) -> impl Iterator<Item = &'a (String, Node)> + 'a {
        self.global.iter().chain(
            self.policy(policy)
                .flat_map(|p| p.resources.iter())
                .filter(move |(r, _)| r == resource)
                .flat_map(|(_, kv)| kv.iter()),
        )
    }

    /// The values of one rule (also for its autogen forms).
    pub fn for_rule<'a>(
        &'a self,
        policy: &'a str,
        rule: &'a str,
    ) -> impl Iterator<Item = &'a (String, Node)> + 'a {
        self.policy(policy)
            .flat_map(|p| p.rules.iter())
            .filter(move |(r, _, _)| r == base_rule(rule))
            .flat_map(|(_, kv, _)| kv.iter())
    }

    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.policies.is_empty()
    }
}
