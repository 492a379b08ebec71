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
    /// `subresources` mappings, in file order.
    pub subresources: Vec<SubresourceMapping>,
}

/// One values `subresources` entry: a resource of the `subresource` kind is matched as its
/// parent kind with that subresource (`Deployment/scale` selects an `autoscaling/v1` Scale),
/// as the Kyverno v1.19 CLI does outside cluster mode (`policy_processor.go`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubresourceMapping {
    /// `parentResource`: group, version, kind.
    pub parent: (String, String, String),
    /// `subresource`: group, version, kind.
    pub kind: (String, String, String),
    /// `subresource.name` as written (`deployments/scale`).
    pub name: String,
}

impl SubresourceMapping {
    /// The subresource: the part of `name` after its first `/` (up to a second one), as
    /// upstream reads it; `None` when `name` has no `/` (upstream then indexes out of range).
    pub fn subresource(&self) -> Option<&str> {
        self.name.split('/').nth(1)
    }
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
pub(crate) fn base_rule(rule: &str) -> &str {
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
    pub(crate) fn for_rule<'a>(
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

    /// The mapping whose `subresource` is exactly this group, version and kind: the last
    /// one, as upstream's loop keeps the last match.
    pub(crate) fn subresource_of(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<&SubresourceMapping> {
        self.subresources.iter().rev().find(|m| {
            let (g, v, k) = &m.kind;
            g == group && v == version && k == kind
        })
    }
}

/// A values key split as the Kyverno CLI splits it (`AddVariable`: Go's `encoding/csv`
/// with `.` as the separator): `a.b."c.d"` is `[a, b, c.d]`, `""` inside a quoted segment
/// is one `"`. A `"` inside an unquoted segment, or text after a closing `"`, is Go's csv
/// error, which makes the policy context fail upstream.
pub fn split_key(key: &str) -> Result<Vec<String>, String> {
    if key.is_empty() {
        return Err("EOF".to_owned());
    }
    let err = |col: usize, what: &str| format!("parse error on line 1, column {col}: {what}");
    let chars: Vec<char> = key.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let mut field = String::new();
        if chars.get(i) == Some(&'"') {
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(i + 1, "extraneous or missing \" in quoted-field")),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        field.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        match chars.get(i) {
                            None | Some('.') => break,
                            Some(_) => {
                                return Err(err(i + 1, "extraneous or missing \" in quoted-field"));
                            }
                        }
                    }
                    Some(c) => {
                        field.push(*c);
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(c) = chars.get(i).filter(|c| **c != '.') {
                if *c == '"' {
                    return Err(err(i + 1, "bare \" in non-quoted-field"));
                }
                field.push(*c);
                i += 1;
            }
        }
        out.push(field);
        if chars.get(i) == Some(&'.') {
            i += 1;
            continue;
        }
        return Ok(out);
    }
}

/// Merges `src` into `dest` as the Kyverno JSON context merges values (`mergeMaps`): a map
/// into a map key by key, anything else replaces what was there.
pub fn merge_into(dest: &mut Node, src: Node) {
    use crate::yaml::Value;
    match (&mut dest.value, src.value) {
        (Value::Map(d), Value::Map(s)) => {
            for e in s.entries() {
                match d.get_mut(&e.key) {
                    Some(existing) if existing.as_map().is_some() && e.value.as_map().is_some() => {
                        merge_into(existing, e.value.clone());
                    }
                    _ => d.insert(e.key.clone(), e.key_span, e.value.clone()),
                }
            }
        }
        (_, v) => *dest = Node::synthetic(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_as_go_csv_splits_them() {
        let ok = |k: &str| split_key(k).unwrap();
        assert_eq!(ok("a.b.c"), ["a", "b", "c"]);
        assert_eq!(
            ok(r#"request.object.metadata.annotations."hpedevops.net/platform""#),
            [
                "request",
                "object",
                "metadata",
                "annotations",
                "hpedevops.net/platform"
            ]
        );
        assert_eq!(ok(r#""a""b".c"#), [r#"a"b"#, "c"]);
        assert_eq!(ok("a..b"), ["a", "", "b"]);
        assert_eq!(
            split_key(r#"a.b"c"#).unwrap_err(),
            r#"parse error on line 1, column 4: bare " in non-quoted-field"#
        );
        assert!(
            split_key(r#""a"b.c"#)
                .unwrap_err()
                .contains("extraneous or missing")
        );
        assert!(split_key(r#""abc"#).is_err());
        assert_eq!(split_key("").unwrap_err(), "EOF");
    }

    #[test]
    fn merge_keeps_maps_and_replaces_the_rest() {
        let j = |v: serde_json::Value| Node::from_json(&v);
        let mut dest = j(serde_json::json!({"a": {"x": 1, "y": [1]}, "b": 2}));
        merge_into(
            &mut dest,
            j(serde_json::json!({"a": {"y": [2], "z": 3}, "b": {"c": 1}})),
        );
        assert_eq!(
            dest.to_json(),
            serde_json::json!({"a": {"x": 1, "y": [2], "z": 3}, "b": {"c": 1}})
        );
    }
}
