//! `matchConstraints` / a binding's `matchResources` (Kubernetes `MatchResources`), matched the
//! way Kyverno's CEL matcher does offline (cel.md §3.2, `kyverno/kyverno:pkg/cel/matching`):
//! namespace and object selectors, excluded rules, then resource rules on group, version,
//! resource (plural), operation and scope.

use std::collections::BTreeMap;

use crate::matching::compile_selector;
use crate::matching::selector::LabelSelector;
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::yaml::Node;

/// One `resourceRules[]` / `excludeResourceRules[]` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceRule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
    pub scope: Option<String>,
    pub resource_names: Vec<String>,
}

/// A compiled `MatchResources`.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    pub resource_rules: Vec<ResourceRule>,
    pub exclude_rules: Vec<ResourceRule>,
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
}

fn strs(n: Option<&Node>) -> Vec<String> {
    n.map(Node::str_items).unwrap_or_default()
}

fn rules(n: Option<&Node>) -> Vec<ResourceRule> {
    n.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .map(|r| ResourceRule {
            api_groups: strs(r.get("apiGroups")),
            api_versions: strs(r.get("apiVersions")),
            resources: strs(r.get("resources")),
            operations: strs(r.get("operations")),
            scope: r.get("scope").and_then(Node::as_str).map(str::to_owned),
            resource_names: strs(r.get("resourceNames")),
        })
        .collect()
}

impl Constraints {
    /// Reads a `MatchResources` node; malformed selectors are an error message.
    pub fn read(node: &Node) -> Result<Self, String> {
        let map = node.as_map();
        let selector = |key: &str| match map {
            Some(m) => compile_selector(m, key, "matchConstraints").map_err(|e| e.message),
            None => Ok(None),
        };
        Ok(Self {
            resource_rules: rules(node.get("resourceRules")),
            exclude_rules: rules(node.get("excludeResourceRules")),
            namespace_selector: selector("namespaceSelector")?,
            object_selector: selector("objectSelector")?,
        })
    }

    /// Whether a namespace or object selector is set (non-empty).
    pub(crate) fn has_selector(&self) -> bool {
        let set = |s: &Option<LabelSelector>| {
            s.as_ref()
                .is_some_and(|s| !s.match_labels.is_empty() || !s.match_expressions.is_empty())
        };
        set(&self.namespace_selector) || set(&self.object_selector)
    }

    /// What the Kyverno CLI's `hasSelector` (`processor/policy_processor.go`) calls a
    /// selector, despite its name the simple case: no non-empty namespace or object
    /// selector, no excluded rules, exactly one resource rule and that one without resource
    /// names. A ValidatingPolicy or MutatingPolicy with such constraints that matched nothing
    /// gives no response in `kpol test` (a row naming it is Not found); any other keeps its
    /// empty response (an Excluded pass row, cel.md §3.7).
    pub fn simple(&self) -> bool {
        !self.has_selector()
            && self.exclude_rules.is_empty()
            && matches!(self.resource_rules.as_slice(), [r] if r.resource_names.is_empty())
    }

    pub fn matches(&self, resource: &Resource, request: &Request) -> bool {
        self.matches_in(resource, request, None)
    }

    /// [`Constraints::matches`], the labels of a namespaced resource's Namespace being
    /// `namespace_labels` when given, instead of the request's.
    pub(crate) fn matches_in(
        &self,
        resource: &Resource,
        request: &Request,
        namespace_labels: Option<&BTreeMap<String, String>>,
    ) -> bool {
        if !self.namespace_matches(resource, request, namespace_labels)
            || !self.object_matches(resource)
        {
            return false;
        }
        let op = request.match_operation();
        if self
            .exclude_rules
            .iter()
            .any(|r| rule_matches(r, resource, op))
        {
            return false;
        }
        // No resource rules: every resource (Kubernetes' matcher; cel.md §3.2).
        self.resource_rules.is_empty()
            || self
                .resource_rules
                .iter()
                .any(|r| rule_matches(r, resource, op))
    }

    /// Whether these constraints can match some resource of `api_version` and `kind`: false
    /// only where [`Constraints::matches`] is false for every such resource, whatever its
    /// namespace, labels, name or operation (no resource rule names the kind's group, version
    /// and plural). perf: the engine's per-kind plan skips what cannot match.
    pub(crate) fn can_select(&self, api_version: &str, kind: &str) -> bool {
        self.resource_rules.is_empty()
            || self
                .resource_rules
                .iter()
                .any(|r| selects_kind(r, api_version, kind))
    }

    fn namespace_matches(
        &self,
        resource: &Resource,
        request: &Request,
        given: Option<&BTreeMap<String, String>>,
    ) -> bool {
        let Some(sel) = &self.namespace_selector else {
            return true;
        };
        let labels = if resource.namespace.is_empty() {
            if resource.kind != "Namespace" {
                return true;
            }
            labels_of(resource)
        } else if let Some(l) = given {
            l.clone()
        } else {
            match request.namespace_labels.get(&resource.namespace) {
                Some(l) => l.clone(),
                None => BTreeMap::from([(
                    "kubernetes.io/metadata.name".to_owned(),
                    resource.namespace.clone(),
                )]),
            }
        };
        sel.matches(&labels).unwrap_or(false)
    }

    fn object_matches(&self, resource: &Resource) -> bool {
        match &self.object_selector {
            Some(sel) => sel.matches(&labels_of(resource)).unwrap_or(false),
            None => true,
        }
    }
}

fn labels_of(resource: &Resource) -> BTreeMap<String, String> {
    resource
        .labels()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

fn any_or(list: &[String], value: &str) -> bool {
    list.iter().any(|x| x == "*" || x == value)
}

/// Whether `rule` names the group, version and resource (plural) of `api_version` and `kind`:
/// the part of [`rule_matches`] the kind alone decides.
fn selects_kind(rule: &ResourceRule, api_version: &str, kind: &str) -> bool {
    let (group, version) = crate::resource::split_api_version(api_version);
    if !any_or(&rule.api_groups, group) || !any_or(&rule.api_versions, version) {
        return false;
    }
    // In cluster mode as the virtual cluster's CRDs name it (the same answer at plan time and
    // at run time: both run inside the test's or the check's CEL context).
    let plural = crate::cel::context::resource_name(group, kind);
    let lower = kind.to_ascii_lowercase();
    // A resource with no subresource matches `*` and its own plural, never `x/*`.
    rule.resources
        .iter()
        .any(|r| r == "*" || *r == plural || *r == lower)
}

fn rule_matches(rule: &ResourceRule, resource: &Resource, op: Operation) -> bool {
    if !any_or(&rule.operations, op.as_str()) {
        return false;
    }
    if !selects_kind(rule, &resource.api_version, &resource.kind) {
        return false;
    }
    let scope_ok = match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Cluster") => resource.namespace.is_empty(),
        Some("Namespaced") => !resource.namespace.is_empty(),
        Some(_) => false,
    };
    if !scope_ok {
        return false;
    }
    rule.resource_names.is_empty() || rule.resource_names.contains(&resource.name)
}
