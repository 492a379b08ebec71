//! `match`/`exclude` (match.md) as a CEL policy's `matchConstraints` and `matchConditions`:
//! kinds become `resourceRules` (groups and versions from the Kubernetes 1.32 built-in
//! schemas), `operations` carry over (default CREATE and UPDATE), `selector` and
//! `namespaceSelector` become the object and namespace selectors, names, namespaces and
//! annotations become conditions; excluded kinds become `excludeResourceRules`.

use serde_json::{Value as J, json};

use crate::yaml::Node;

use super::Blocked;
use super::cel_text::{and, not, or, quote, select, wildcard_test};

/// The matching part of a converted rule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Matching {
    pub(crate) constraints: J,
    pub(crate) conditions: Vec<String>,
    /// Kinds that are no built-in kind (their resource names follow the English plural).
    pub(crate) guessed: Vec<String>,
    /// The matched kinds as the rule names them (`Pod`, `apps/v1/Deployment`).
    pub(crate) kinds: Vec<String>,
}

/// One resource filter, converted.
struct Filter {
    kinds: Vec<String>,
    operations: Vec<String>,
    condition: Option<String>,
    object_selector: Option<J>,
    namespace_selector: Option<J>,
}

/// `match` and `exclude` of one rule.
pub(crate) fn convert(rule: &Node) -> Result<Matching, Blocked> {
    let Some(m) = rule.get("match") else {
        return Err(Blocked::new(
            rule.span,
            "the rule has no `match`".to_owned(),
        ));
    };
    let filters = filters_of(m)?;
    let (all_mode, filters) = filters;
    let Some(first) = filters.first() else {
        return Err(Blocked::new(m.span, "`match` selects nothing".to_owned()));
    };
    if all_mode && filters.len() > 1 {
        return Err(Blocked::new(
            m.span,
            "`match.all` with several filters (an intersection) is not translated".to_owned(),
        ));
    }
    let mut conditions = Vec::new();
    let with_selectors = filters
        .iter()
        .any(|f| f.object_selector.is_some() || f.namespace_selector.is_some());
    if filters.len() > 1 {
        let same_kinds = filters.iter().all(|f| f.kinds == first.kinds);
        let any_cond = filters.iter().any(|f| f.condition.is_some());
        if with_selectors {
            return Err(Blocked::new(
                m.span,
                "selectors in one of several `match.any` filters are not translated".to_owned(),
            ));
        }
        if any_cond && !same_kinds {
            return Err(Blocked::new(
                m.span,
                "`match.any` filters with different kinds and their own names/namespaces are not translated".to_owned(),
            ));
        }
        if any_cond {
            let each: Vec<String> = filters
                .iter()
                .map(|f| f.condition.clone().unwrap_or_else(|| "true".to_owned()))
                .collect();
            conditions.push(or(&each));
        }
    } else if let Some(c) = &first.condition {
        conditions.push(c.clone());
    }
    let mut kinds: Vec<String> = Vec::new();
    let mut operations: Vec<String> = Vec::new();
    for f in &filters {
        for k in &f.kinds {
            if !kinds.contains(k) {
                kinds.push(k.clone());
            }
        }
        for o in &f.operations {
            if !operations.contains(o) {
                operations.push(o.clone());
            }
        }
    }
    if filters.iter().any(|f| f.operations.is_empty()) {
        operations = vec!["CREATE".to_owned(), "UPDATE".to_owned()];
    }
    let mut guessed = Vec::new();
    let rules = resource_rules(&kinds, &operations, &mut guessed, m.span)?;
    let mut constraints = serde_json::Map::new();
    constraints.insert("resourceRules".to_owned(), rules);
    if let Some(s) = &first.namespace_selector {
        constraints.insert("namespaceSelector".to_owned(), s.clone());
    }
    if let Some(s) = &first.object_selector {
        constraints.insert("objectSelector".to_owned(), s.clone());
    }

    if let Some(x) = rule.get("exclude") {
        let (x_all, xf) = filters_of(x)?;
        if x_all && xf.len() > 1 {
            return Err(Blocked::new(
                x.span,
                "`exclude.all` with several filters is not translated".to_owned(),
            ));
        }
        let mut excluded_kinds = Vec::new();
        for f in &xf {
            if f.object_selector.is_some() || f.namespace_selector.is_some() {
                return Err(Blocked::new(
                    x.span,
                    "selectors in `exclude` are not translated".to_owned(),
                ));
            }
            let covers = f.kinds.is_empty() || kinds.iter().all(|k| f.kinds.contains(k));
            match (&f.condition, covers) {
                (Some(c), true) => conditions.push(not(c)),
                (None, true) => conditions.push("false".to_owned()),
                (None, false) => excluded_kinds.extend(f.kinds.iter().cloned()),
                (Some(_), false) => {
                    return Err(Blocked::new(
                        x.span,
                        "an `exclude` filter that names some of the matched kinds and also names, namespaces or annotations is not translated".to_owned(),
                    ));
                }
            }
        }
        if !excluded_kinds.is_empty() {
            let rules = resource_rules(&excluded_kinds, &operations, &mut guessed, x.span)?;
            constraints.insert("excludeResourceRules".to_owned(), rules);
        }
    }
    Ok(Matching {
        constraints: J::Object(constraints),
        conditions,
        guessed,
        kinds,
    })
}

/// The filters of a `match` or `exclude` block, and whether they are `all`.
fn filters_of(block: &Node) -> Result<(bool, Vec<Filter>), Blocked> {
    let (all, list): (bool, Vec<&Node>) = if let Some(any) = block.get("any") {
        (false, any.as_seq().unwrap_or(&[]).iter().collect())
    } else if let Some(all) = block.get("all") {
        (true, all.as_seq().unwrap_or(&[]).iter().collect())
    } else {
        (true, vec![block])
    };
    let filters = list.into_iter().map(filter).collect::<Result<_, _>>()?;
    Ok((all, filters))
}

fn filter(f: &Node) -> Result<Filter, Blocked> {
    for key in ["roles", "clusterRoles"] {
        if let Some(n) = f.get(key)
            && !n.is_null()
        {
            return Err(Blocked::new(
                n.span,
                format!(
                    "`{key}` (the requester's RBAC roles, which Kyverno looks up) is not translated"
                ),
            ));
        }
    }
    let mut conds = Vec::new();
    if let Some(n) = f.get("subjects").filter(|n| !n.is_null()) {
        conds.push(subjects(n)?);
    }
    let null = Node::null();
    let r = f.get("resources").unwrap_or(&null);
    let strs = |k: &str| r.get(k).map(Node::str_items).unwrap_or_default();
    let kinds = strs("kinds");
    let mut names = strs("names");
    if let Some(n) = r.get("name").and_then(Node::as_str) {
        names.push(n.to_owned());
    }
    let namespaces = strs("namespaces");
    let operations = strs("operations");
    if !names.is_empty() {
        let each: Vec<String> = names
            .iter()
            .map(|n| wildcard_test("object.metadata.name", n))
            .collect();
        conds.push(or(&each));
    }
    if !namespaces.is_empty() {
        let each: Vec<String> = namespaces
            .iter()
            .map(|n| wildcard_test("request.namespace", n))
            .collect();
        conds.push(or(&each));
    }
    if let Some(a) = r.get("annotations").and_then(Node::as_map) {
        for (k, v) in a.iter() {
            let Some(v) = v.as_str() else {
                return Err(Blocked::new(
                    v.span,
                    "an annotation value must be a string".to_owned(),
                ));
            };
            let anns = "object.metadata.annotations";
            conds.push(and(&[
                format!("has({anns})"),
                format!("{} in {anns}", quote(k)),
                wildcard_test(&select(anns, k), v),
            ]));
        }
    }
    let object_selector = r.get("selector").map(selector).transpose()?;
    let namespace_selector = r.get("namespaceSelector").map(selector).transpose()?;
    Ok(Filter {
        kinds,
        operations,
        condition: (!conds.is_empty()).then(|| and(&conds)),
        object_selector,
        namespace_selector,
    })
}

/// `subjects`: the request's user is one of them, a ServiceAccount as
/// `system:serviceaccount:NS:NAME`, each name a Kyverno wildcard over the username (a `User`,
/// a `ServiceAccount`) or some group (a `Group`); another kind matches nobody. As in Kyverno,
/// a request without any user information (a background scan) is not filtered by them.
fn subjects(n: &Node) -> Result<String, Blocked> {
    let Some(items) = n.as_seq() else {
        return Err(Blocked::new(n.span, "`subjects` must be a list".to_owned()));
    };
    let user = "request.userInfo";
    let field = |f: &str| format!("{user}.{f}");
    let mut each = Vec::new();
    for s in items {
        let get = |k: &str| s.get(k).and_then(Node::as_str).unwrap_or_default();
        let name = get("name");
        each.push(match get("kind") {
            "ServiceAccount" => and(&[
                format!("has({})", field("username")),
                wildcard_test(
                    &field("username"),
                    &format!("system:serviceaccount:{}:{name}", get("namespace")),
                ),
            ]),
            "User" => and(&[
                format!("has({})", field("username")),
                wildcard_test(&field("username"), name),
            ]),
            "Group" => and(&[
                format!("has({})", field("groups")),
                format!(
                    "{}.exists(g, {})",
                    field("groups"),
                    wildcard_test("g", name)
                ),
            ]),
            _ => "false".to_owned(),
        });
    }
    let empty = and(&[
        format!("(!has({u}) || {u} == '')", u = field("username")),
        format!("(!has({u}) || {u} == '')", u = field("uid")),
        format!("(!has({g}) || size({g}) == 0)", g = field("groups")),
        format!("(!has({e}) || size({e}) == 0)", e = field("extra")),
    ]);
    Ok(or(&[empty, or(&each)]))
}

/// A label selector carried over; Kyverno's wildcard values have no Kubernetes spelling.
fn selector(s: &Node) -> Result<J, Blocked> {
    let json = s.to_json();
    let text = json.to_string();
    if text.contains('*') || text.contains('?') {
        return Err(Blocked::new(
            s.span,
            "a label selector with wildcards (a Kyverno extension) has no Kubernetes equivalent"
                .to_owned(),
        ));
    }
    Ok(json)
}

/// `resourceRules` for `kinds`: one rule per (groups, versions), resources merged.
fn resource_rules(
    kinds: &[String],
    operations: &[String],
    guessed: &mut Vec<String>,
    span: crate::source::Span,
) -> Result<J, Blocked> {
    // (groups, versions, resources)
    let mut rules: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    for entry in kinds {
        let parts: Vec<&str> = entry.split('/').collect();
        let (group, version, kind, sub) = match parts.as_slice() {
            [k] => (None, None, *k, None),
            [a, b] if a.starts_with(|c: char| c.is_ascii_uppercase()) => (None, None, *a, Some(*b)),
            [v, k] => (Some(""), Some(*v), *k, None),
            [g, v, k] => (Some(*g), Some(*v), *k, None),
            _ => {
                return Err(Blocked::new(
                    span,
                    format!("the kind `{entry}` is not translated"),
                ));
            }
        };
        if sub.is_some() || kind.contains('*') && kind != "*" {
            return Err(Blocked::new(
                span,
                format!("the kind `{entry}` (a subresource or a kind wildcard) is not translated"),
            ));
        }
        let (groups, versions, resource) = if kind == "*" {
            (vec!["*".to_owned()], vec!["*".to_owned()], "*".to_owned())
        } else if let (Some(g), Some(v)) = (group, version) {
            (
                vec![g.to_owned()],
                vec![v.to_owned()],
                crate::base::gvk::plural(kind),
            )
        } else if kind == "Pod" {
            // Kept exact: a ValidatingPolicy's autogen for pod controllers starts from
            // `""/v1/pods` only (cel.md §3.6).
            (
                vec![String::new()],
                vec!["v1".to_owned()],
                "pods".to_owned(),
            )
        } else {
            // A bare kind matches that kind in every group and version (match.md §2.1).
            if crate::smd::builtin_api_versions(kind).is_empty() {
                guessed.push(kind.to_owned());
            }
            (
                vec!["*".to_owned()],
                vec!["*".to_owned()],
                crate::base::gvk::plural(kind),
            )
        };
        match rules.iter_mut().find(|r| r.0 == groups && r.1 == versions) {
            Some(r) => {
                if !r.2.contains(&resource) {
                    r.2.push(resource);
                }
            }
            None => rules.push((groups, versions, vec![resource])),
        }
    }
    Ok(J::Array(
        rules
            .into_iter()
            .map(|(g, v, r)| {
                json!({
                    "apiGroups": g,
                    "apiVersions": v,
                    "operations": operations,
                    "resources": r,
                })
            })
            .collect(),
    ))
}
