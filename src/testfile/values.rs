//! The values file / inline `values` (cli-compat.md §5) and the userinfo file (§6).
//!
//! Both read into the library's model ([`crate::request::values::Values`], [`crate::request::UserInfo`]).

use std::collections::BTreeMap;

use super::fields::{Fields, LoadError};
use crate::request::UserInfo;
use crate::request::values::{KeyValues, PolicyValues, SubresourceMapping, Values};
use crate::source::SourceFile;
use crate::yaml::{Node, Value};

const FILE_FIELDS: &[&str] = &["apiVersion", "kind", "metadata"];
const SPEC_FIELDS: &[&str] = &[
    "globalValues",
    "policies",
    "namespaceSelector",
    "namespaces",
    "subresources",
];

impl Values {
    /// Reads a values file (`variables:`). Missing apiVersion/kind is Kyverno ≥ 1.15's
    /// deprecated-schema error; kpol warns and goes on (into `warnings`).
    pub fn from_file(
        source: &SourceFile,
        root: &Node,
        warnings: &mut Vec<String>,
    ) -> Result<Self, LoadError> {
        let known: Vec<&str> = FILE_FIELDS.iter().chain(SPEC_FIELDS).copied().collect();
        let f = Fields::new(source, root, "values", &known)?;
        if f.string("apiVersion")?.is_empty() || f.string("kind")?.is_empty() {
            warnings.push(format!(
                "values file {} uses a deprecated schema (no apiVersion/kind)",
                source.name()
            ));
        }
        from_fields(&f)
    }

    /// Reads an inline `values:` spec.
    pub fn from_spec(source: &SourceFile, node: &Node) -> Result<Self, LoadError> {
        from_fields(&Fields::new(source, node, "values", SPEC_FIELDS)?)
    }
}

fn from_fields(f: &Fields<'_>) -> Result<Values, LoadError> {
    let src = f.source;
    let mut v = Values {
        global: key_values(src, f.get("globalValues"))?,
        ..Values::default()
    };
    // The mappings: upstream reads `group`, `version`, `kind` of both APIResources and the
    // subresource's `name`.
    for s in f.list("subresources")? {
        let part = |side: &str, k: &str| {
            s.get_path(&[side, k])
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let gvk = |side: &str| {
            (
                part(side, "group"),
                part(side, "version"),
                part(side, "kind"),
            )
        };
        let m = SubresourceMapping {
            parent: gvk("parentResource"),
            kind: gvk("subresource"),
            name: part("subresource", "name"),
        };
        // Upstream indexes the part after `/` when a resource has the kind (a crash); kpol
        // refuses the mapping up front.
        if m.subresource().is_none() {
            let at = s.get_path(&["subresource", "name"]).unwrap_or(s);
            return Err(LoadError::at(
                src,
                at,
                format!(
                    "values subresources: subresource.name {:?} is not <resource>/<subresource>",
                    m.name
                ),
            ));
        }
        v.subresources.push(m);
    }
    for p in f.list("policies")? {
        let pf = Fields::new(src, p, "values policy", &["name", "resources", "rules"])?;
        let mut pv = PolicyValues {
            name: pf.string("name")?,
            ..PolicyValues::default()
        };
        for r in pf.list("resources")? {
            let rf = Fields::new(src, r, "values resource", &["name", "values"])?;
            pv.resources
                .push((rf.string("name")?, key_values(src, rf.get("values"))?));
        }
        for r in pf.list("rules")? {
            let rf = Fields::new(src, r, "values rule", &["name", "values", "foreachValues"])?;
            let mut kv = key_values(src, rf.get("values"))?;
            // `foreachValues` (key → list): the CLI's context loader sets each key to the
            // item at the store's foreach element, which nothing in v1.19 ever moves from 0
            // (`store.SetForEachElement` has no caller), so every element sees the first
            // item. An empty list (an index out of range upstream) stays unsupported.
            let mut unevaluated = false;
            for (k, list) in key_values(src, rf.get("foreachValues"))? {
                match list.as_seq().and_then(<[Node]>::first) {
                    Some(first) => kv.push((k, first.clone())),
                    None => unevaluated = true,
                }
            }
            pv.rules.push((rf.string("name")?, kv, unevaluated));
        }
        v.policies.push(pv);
    }
    for ns in f.list("namespaceSelector")? {
        let nf = Fields::new(src, ns, "namespaceSelector", &["name", "labels"])?;
        let labels = string_map(src, nf.get("labels"))?;
        v.namespace_labels.insert(nf.string("name")?, labels);
    }
    // Full Namespace objects win over namespaceSelector entries (§5).
    for ns in f.list("namespaces")? {
        let meta = ns.get("metadata");
        let name = meta.and_then(|m| m.get("name")).and_then(Node::as_str);
        let labels = string_map(src, meta.and_then(|m| m.get("labels")))?;
        v.namespace_labels
            .insert(name.unwrap_or("").to_owned(), labels);
        v.namespace_objects
            .insert(name.unwrap_or("").to_owned(), ns.clone());
    }
    Ok(v)
}

fn key_values(source: &SourceFile, node: Option<&Node>) -> Result<KeyValues, LoadError> {
    match node.map(|n| &n.value) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Map(m)) => Ok(m.iter().map(|(k, v)| (k.to_owned(), v.clone())).collect()),
        Some(v) => Err(LoadError::at(
            source,
            node.unwrap_or(&Node::null()),
            format!("values: expected an object, got {}", v.type_name()),
        )),
    }
}

fn string_map(
    source: &SourceFile,
    node: Option<&Node>,
) -> Result<BTreeMap<String, String>, LoadError> {
    let mut out = BTreeMap::new();
    let Some(n) = node.filter(|n| !n.is_null()) else {
        return Ok(out);
    };
    let Some(m) = n.as_map() else {
        return Err(LoadError::at(source, n, "labels: expected an object"));
    };
    for (k, v) in m.iter() {
        let s = v
            .as_str()
            .ok_or_else(|| LoadError::at(source, v, format!("label {k}: expected a string")))?;
        out.insert(k.to_owned(), s.to_owned());
    }
    Ok(out)
}

/// Reads a userinfo file (§6). Missing apiVersion/kind: warning (Kyverno ≥ 1.15 errors).
pub fn user_info(
    source: &SourceFile,
    root: &Node,
    warnings: &mut Vec<String>,
) -> Result<UserInfo, LoadError> {
    let f = Fields::new(
        source,
        root,
        "userinfo",
        &[
            "apiVersion",
            "kind",
            "metadata",
            "roles",
            "clusterRoles",
            "userInfo",
        ],
    )?;
    if f.string("apiVersion")?.is_empty() || f.string("kind")?.is_empty() {
        warnings.push(format!(
            "user info file {} uses a deprecated schema (no apiVersion/kind)",
            source.name()
        ));
    }
    let mut info = UserInfo {
        roles: f.strings("roles")?,
        cluster_roles: f.strings("clusterRoles")?,
        ..UserInfo::default()
    };
    if let Some(u) = f.get("userInfo") {
        let uf = Fields::new(
            source,
            u,
            "userInfo",
            &["username", "uid", "groups", "extra"],
        )?;
        info.username = uf.string("username")?;
        info.uid = uf.string("uid")?;
        info.groups = uf.strings("groups")?;
        if let Some(extra) = uf.get("extra").and_then(Node::as_map) {
            for (k, v) in extra.iter() {
                info.extra.insert(k.to_owned(), v.str_items());
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Operation;
    use crate::yaml::{Limits, parse_documents};

    // Kyverno v1.19's ValuesSpec has no `variables` field: its strict decoding refuses it
    // (`json: unknown field "variables"`), and so does kpol.
    #[test]
    fn a_variables_field_in_values_is_refused() {
        let e = values("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nvariables: {a: b}\n")
            .unwrap_err();
        assert!(e.message.contains("unknown field \"variables\""), "{e:?}");
    }

    fn values(text: &str) -> Result<(Values, Vec<String>), LoadError> {
        let src = SourceFile::new("values.yaml", text);
        let docs = parse_documents(text, Limits::default())
            .map_err(|e| LoadError::in_file("yaml", e.message))?;
        let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
        let mut w = Vec::new();
        let v = Values::from_file(&src, &root, &mut w)?;
        Ok((v, w))
    }

    #[test]
    fn operations_and_namespace_labels() -> Result<(), LoadError> {
        let (v, w) = values(
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Value\n\
             globalValues: {request.operation: CONNECT}\n\
             policies:\n- name: p\n  resources:\n  - name: web\n    values: {request.operation: UPDATE}\n\
             \x20 rules:\n  - name: r\n    values: {teams.data: x}\n\
             namespaceSelector:\n- name: prod\n  labels: {env: prod}\n\
             namespaces:\n- metadata: {name: prod, labels: {env: production}}\n",
        )?;
        assert!(w.is_empty());
        assert_eq!(v.operation("p", "web"), Ok(Operation::Update));
        assert_eq!(v.operation("p", "api"), Ok(Operation::Connect));
        assert_eq!(v.operation("q", "web"), Ok(Operation::Connect));
        assert_eq!(v.variable_keys("p", "web", "autogen-r"), ["teams.data"]);
        assert_eq!(
            v.namespace_labels
                .get("prod")
                .and_then(|l| l.get("env"))
                .map(String::as_str),
            Some("production")
        );
        Ok(())
    }

    #[test]
    fn bad_global_operation_is_an_error() -> Result<(), LoadError> {
        let (v, w) = values("globalValues: {request.operation: PATCH}\n")?;
        assert_eq!(w.len(), 1);
        assert!(v.operation("p", "r").is_err());
        Ok(())
    }

    // `userInfo.uid` and `extra` reach the request (RequestInfo's authentication UserInfo).
    #[test]
    fn user_info_reads_uid_and_extra() -> Result<(), LoadError> {
        let text = "apiVersion: cli.kyverno.io/v1alpha1\nkind: UserInfo\n\
                    userInfo: {username: u, uid: '42', extra: {scopes: [a, b]}}\n";
        let src = SourceFile::new("user.yaml", text);
        let root = parse_documents(text, Limits::default())
            .map_err(|e| LoadError::in_file("yaml", e.message))?
            .remove(0)
            .root;
        let mut w = Vec::new();
        let u = user_info(&src, &root, &mut w)?;
        assert_eq!(u.uid, "42");
        assert_eq!(
            u.extra.get("scopes").map(Vec::as_slice),
            Some(&["a".to_owned(), "b".to_owned()][..])
        );
        Ok(())
    }

    // Kyverno v1.19 never moves the store's foreach element from 0: every element reads
    // the first item of a `foreachValues` list; an empty list is left unevaluated.
    #[test]
    fn foreach_values_give_their_first_item() -> Result<(), LoadError> {
        let (v, _) = values(
            "policies:\n- name: p\n  rules:\n  - name: r\n    values: {a: 1}\n    \
             foreachValues: {imageData: [foo, foo1], none: []}\n",
        )?;
        let got: Vec<(String, serde_json::Value)> = v
            .for_rule("p", "r")
            .map(|(k, n)| (k.clone(), n.to_json()))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_owned(), serde_json::json!(1)),
                ("imageData".to_owned(), serde_json::json!("foo"))
            ]
        );
        assert!(v.variable_keys("p", "x", "r").contains(&"foreachValues"));
        Ok(())
    }
}
