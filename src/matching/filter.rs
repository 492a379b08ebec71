//! One resource filter (`resources` + `subjects`/`roles`/`clusterRoles`): its compiled form
//! and `doesResourceMatchConditionBlock` (`kyverno/kyverno:pkg/engine/utils/match.go`;
//! match.md §4–5).

use std::collections::BTreeMap;

use super::selector::{LabelSelector, Requirement};
use crate::base::gvk::KindSelector;
use crate::base::wildcard::matches;
use crate::request::{Request, UserInfo};
use crate::resource::Resource;
use crate::source::Span;
use crate::yaml::Map;
use crate::yaml::fields::{
    FieldResult, as_map, opt_map, opt_seq, opt_str, opt_str_list, opt_str_map,
};

/// `ResourceDescription`: the resource attributes of a filter. `None`/empty mirror Go's nil
/// and empty values where Kyverno distinguishes them.
#[derive(Clone, Debug, Default)]
pub struct ResourceDescription {
    pub kinds: Vec<KindSelector>,
    pub name: Option<String>,
    pub names: Vec<String>,
    pub namespaces: Vec<String>,
    pub annotations: Option<Vec<(String, String)>>,
    pub selector: Option<LabelSelector>,
    pub namespace_selector: Option<LabelSelector>,
    pub operations: Vec<String>,
    /// Span of the `resources` node (or of the filter when absent).
    pub span: Span,
}

impl ResourceDescription {
    /// `ResourceDescription.IsEmpty` / DeepEqual with the zero value.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
            && self.name.as_deref().is_none_or(str::is_empty)
            && self.names.is_empty()
            && self.namespaces.is_empty()
            && self.annotations.is_none()
            && self.selector.is_none()
            && self.namespace_selector.is_none()
            && self.operations.is_empty()
    }

    pub fn kind_strings(&self) -> Vec<&str> {
        self.kinds.iter().map(|k| k.text.as_str()).collect()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// `UserInfo` of a filter.
#[derive(Clone, Debug, Default)]
pub struct UserFilter {
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
    pub subjects: Vec<Subject>,
}

impl UserFilter {
    pub fn is_empty(&self) -> bool {
        self.roles.is_empty() && self.cluster_roles.is_empty() && self.subjects.is_empty()
    }
}

/// A `ResourceFilter` (an `any[]`/`all[]` entry, or the flat form of a block).
#[derive(Clone, Debug, Default)]
pub struct ResourceFilter {
    pub resources: ResourceDescription,
    pub user: UserFilter,
    pub span: Span,
}

impl ResourceFilter {
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.user.is_empty()
    }

    /// Whether the filter constrains nothing but `kinds`: whether it selects a resource then
    /// depends on the resource's apiVersion and kind alone ([`ResourceFilter::kinds_match`]),
    /// whatever its name, namespace, labels or the request.
    pub fn only_kinds(&self) -> bool {
        let rd = &self.resources;
        !rd.kinds.is_empty()
            && rd.name.as_deref().is_none_or(str::is_empty)
            && rd.names.is_empty()
            && rd.namespaces.is_empty()
            && rd.annotations.as_ref().is_none_or(Vec::is_empty)
            && rd.selector.is_none()
            && rd.namespace_selector.is_none()
            && rd.operations.is_empty()
            && self.user.is_empty()
    }

    /// Compiles the filter fields found in `m` (`resources`, `subjects`, `roles`,
    /// `clusterRoles`).
    pub fn compile(m: &Map, span: Span, path: &str) -> FieldResult<Self> {
        let resources = match opt_map(m, "resources", path)? {
            Some(r) => compile_description(
                r,
                m.get("resources").map_or(span, |n| n.span),
                &format!("{path}.resources"),
            )?,
            None => ResourceDescription {
                span,
                ..Default::default()
            },
        };
        let mut subjects = Vec::new();
        for (i, s) in opt_seq(m, "subjects", path)?
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let p = format!("{path}.subjects[{i}]");
            let sm = as_map(s, &p)?;
            subjects.push(Subject {
                kind: opt_str(sm, "kind", &p)?.unwrap_or("").to_owned(),
                name: opt_str(sm, "name", &p)?.unwrap_or("").to_owned(),
                namespace: opt_str(sm, "namespace", &p)?.unwrap_or("").to_owned(),
            });
        }
        Ok(Self {
            resources,
            user: UserFilter {
                roles: opt_str_list(m, "roles", path)?.unwrap_or_default(),
                cluster_roles: opt_str_list(m, "clusterRoles", path)?.unwrap_or_default(),
                subjects,
            },
            span,
        })
    }

    /// Whether some `kinds` entry matches a resource of this group, version and kind.
    pub fn kinds_match(&self, group: &str, version: &str, kind: &str) -> bool {
        self.resources
            .kinds
            .iter()
            .any(|k| k.matches(group, version, kind, ""))
    }

    /// `doesResourceMatchConditionBlock` with user info already decided by the caller:
    /// every specified attribute must match.
    pub fn matches(&self, resource: &Resource, request: &Request, user: &UserFilter) -> bool {
        let rd = &self.resources;
        if !rd.operations.is_empty()
            && !rd
                .operations
                .iter()
                .any(|o| o == request.match_operation().as_str())
        {
            return false;
        }
        if !rd.kinds.is_empty() {
            // The request's view of the kind: a values `subresources` mapping makes it the
            // parent kind and a subresource.
            let k = request.match_kind(resource);
            if !rd
                .kinds
                .iter()
                .any(|s| s.matches(k.group, k.version, k.kind, k.subresource))
            {
                return false;
            }
        }
        if let Some(name) = rd.name.as_deref().filter(|n| !n.is_empty())
            && !matches(name, &resource.name)
        {
            return false;
        }
        if !rd.names.is_empty() && !rd.names.iter().any(|n| matches(n, &resource.name)) {
            return false;
        }
        if !rd.namespaces.is_empty() {
            // A Namespace is matched on its own name (match.md §5.3).
            let ns = if resource.kind == "Namespace" {
                &resource.name
            } else {
                &resource.namespace
            };
            if !rd.namespaces.iter().any(|p| matches(p, ns)) {
                return false;
            }
        }
        if let Some(ann) = rd.annotations.as_ref().filter(|a| !a.is_empty()) {
            let actual = string_map(resource.annotations());
            if !ann.iter().all(|(k, v)| {
                actual
                    .iter()
                    .any(|(ak, av)| matches(k, ak) && matches(v, av))
            }) {
                return false;
            }
        }
        if let Some(sel) = &rd.selector
            && sel.matches(&string_map(resource.labels())) != Ok(true)
        {
            return false;
        }
        if let Some(sel) = &rd.namespace_selector {
            if resource.kind == "Namespace" {
                return false;
            }
            let labels = request.classic_namespace_labels(&resource.namespace);
            if sel.matches(&labels) != Ok(true) {
                return false;
            }
        }
        user_matches(user, request.user_info.as_ref())
    }
}

/// Roles, cluster roles and subjects: each one present must match (match.md §5.8).
fn user_matches(user: &UserFilter, info: Option<&UserInfo>) -> bool {
    let empty = UserInfo::default();
    let info = info.unwrap_or(&empty);
    if !user.roles.is_empty() && !user.roles.iter().any(|r| info.roles.contains(r)) {
        return false;
    }
    if !user.cluster_roles.is_empty()
        && !user
            .cluster_roles
            .iter()
            .any(|r| info.cluster_roles.contains(r))
    {
        return false;
    }
    if !user.subjects.is_empty() && !user.subjects.iter().any(|s| subject_matches(s, info)) {
        return false;
    }
    true
}

fn subject_matches(s: &Subject, info: &UserInfo) -> bool {
    match s.kind.as_str() {
        "ServiceAccount" => matches(
            &format!("system:serviceaccount:{}:{}", s.namespace, s.name),
            &info.username,
        ),
        "Group" => info.groups.iter().any(|g| matches(&s.name, g)),
        "User" => matches(&s.name, &info.username),
        _ => false,
    }
}

/// Labels/annotations as strings (non-string values are not labels Kubernetes would accept;
/// they are rendered as their scalar text so a filter still sees the key).
fn string_map(m: Option<&Map>) -> BTreeMap<String, String> {
    m.map(|m| {
        m.iter()
            .map(|(k, v)| {
                let s = match &v.value {
                    crate::yaml::Value::Str(s) => s.clone(),
                    other => crate::yaml::Node::synthetic(other.clone())
                        .to_json()
                        .to_string(),
                };
                (k.to_owned(), s)
            })
            .collect()
    })
    .unwrap_or_default()
}

fn compile_description(m: &Map, span: Span, path: &str) -> FieldResult<ResourceDescription> {
    Ok(ResourceDescription {
        kinds: opt_str_list(m, "kinds", path)?
            .unwrap_or_default()
            .iter()
            .map(|k| KindSelector::new(k))
            .collect(),
        name: opt_str(m, "name", path)?.map(str::to_owned),
        names: opt_str_list(m, "names", path)?.unwrap_or_default(),
        namespaces: opt_str_list(m, "namespaces", path)?.unwrap_or_default(),
        annotations: opt_str_map(m, "annotations", path)?,
        selector: compile_selector(m, "selector", path)?,
        namespace_selector: compile_selector(m, "namespaceSelector", path)?,
        operations: opt_str_list(m, "operations", path)?.unwrap_or_default(),
        span,
    })
}

/// A `metav1.LabelSelector` field.
pub fn compile_selector(parent: &Map, key: &str, path: &str) -> FieldResult<Option<LabelSelector>> {
    let Some(m) = opt_map(parent, key, path)? else {
        return Ok(None);
    };
    let p = format!("{path}.{key}");
    let mut exprs = Vec::new();
    for (i, e) in opt_seq(m, "matchExpressions", &p)?
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        let ep = format!("{p}.matchExpressions[{i}]");
        let em = as_map(e, &ep)?;
        exprs.push(Requirement {
            key: opt_str(em, "key", &ep)?.unwrap_or("").to_owned(),
            operator: opt_str(em, "operator", &ep)?.unwrap_or("").to_owned(),
            values: opt_str_list(em, "values", &ep)?.unwrap_or_default(),
        });
    }
    Ok(Some(LabelSelector {
        match_labels: opt_str_map(m, "matchLabels", &p)?.unwrap_or_default(),
        match_expressions: exprs,
    }))
}
