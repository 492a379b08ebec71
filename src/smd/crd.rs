//! A CRD's structural schema (`spec.versions[].schema.openAPIV3Schema`) as the merge's typed
//! schema, the way `k8s.io/kube-openapi` `schemaconv` converts it for structured-merge-diff
//! (what the Kyverno CLI's type converter does with the CRDs of a test's `clusterResources`):
//!
//! * `type: object` with `properties`: a struct of those fields, atomic when
//!   `x-kubernetes-map-type: atomic`; other keys take `additionalProperties`' type, or merge
//!   deduced with `x-kubernetes-preserve-unknown-fields: true`;
//! * `type: object` with only `additionalProperties`: a map of that type (granular unless
//!   `x-kubernetes-map-type: atomic`); with neither: a deduced map;
//! * `type: array`: a list by `x-kubernetes-list-type` — `map` merged by
//!   `x-kubernetes-list-map-keys`, `set` by value, `atomic` or **no annotation: atomic**;
//! * scalars by type (`x-kubernetes-int-or-string` is untyped); a schema with no type is
//!   deduced;
//! * at the root, `metadata` is Kubernetes' `ObjectMeta` (whatever the CRD writes for it),
//!   `apiVersion` and `kind` strings.

use super::schema::{
    Atom, DEDUCED, Field, List, ListKind, MapType, Scalar, Schema, TypeRef, UNTYPED_ATOMIC,
};
use crate::yaml::Node;

/// The root type of a custom kind from its `openAPIV3Schema`.
pub(crate) fn root_type(builtin: &Schema, schema: &Node) -> TypeRef {
    let mut root = convert(schema);
    if let TypeRef::Inline(atom) = &mut root
        && let Some(map) = atom.map.as_mut()
    {
        map.fields
            .retain(|f| !matches!(f.name.as_str(), "apiVersion" | "kind" | "metadata"));
        for name in ["apiVersion", "kind"] {
            map.fields.push(field(name, scalar(Scalar::String)));
        }
        map.fields.push(field("metadata", object_meta(builtin)));
    }
    root
}

/// `ObjectMeta` as the built-in schema types it (read off a built-in kind's `metadata`).
fn object_meta(builtin: &Schema) -> TypeRef {
    builtin
        .kind("v1", "ConfigMap")
        .and_then(|root| {
            builtin
                .resolve(&TypeRef::named(root))?
                .map?
                .field("metadata")
                .map(|f| f.ty.clone())
        })
        .unwrap_or(TypeRef::named(DEDUCED))
}

fn field(name: &str, ty: TypeRef) -> Field {
    Field {
        name: name.to_owned(),
        ty,
        default: None,
    }
}

fn scalar(s: Scalar) -> TypeRef {
    TypeRef::Inline(Box::new(Atom {
        scalar: Some(s),
        ..Atom::default()
    }))
}

fn flag(node: &Node, key: &str) -> bool {
    node.get(key).and_then(Node::as_bool) == Some(true)
}

fn convert(node: &Node) -> TypeRef {
    if flag(node, "x-kubernetes-int-or-string") {
        return scalar(Scalar::Untyped);
    }
    let ty = node.get("type").and_then(Node::as_str).unwrap_or("");
    match ty {
        "string" => scalar(Scalar::String),
        "integer" | "number" => scalar(Scalar::Numeric),
        "boolean" => scalar(Scalar::Boolean),
        "array" => {
            let elem = node
                .get("items")
                .map_or(TypeRef::named(UNTYPED_ATOMIC), convert);
            let kind = match node.get("x-kubernetes-list-type").and_then(Node::as_str) {
                Some("map") => ListKind::Map(
                    node.get("x-kubernetes-list-map-keys")
                        .and_then(Node::as_seq)
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(Node::as_str)
                        .map(str::to_owned)
                        .collect(),
                ),
                Some("set") => ListKind::Set,
                _ => ListKind::Atomic,
            };
            TypeRef::Inline(Box::new(Atom {
                list: Some(List { kind, elem }),
                ..Atom::default()
            }))
        }
        "object" => {
            let fields: Vec<Field> = node
                .get("properties")
                .and_then(Node::as_map)
                .map(|m| m.iter().map(|(k, v)| field(k, convert(v))).collect())
                .unwrap_or_default();
            let elem = match node.get("additionalProperties") {
                Some(a) if a.as_map().is_some() => Some(convert(a)),
                Some(a) if a.as_bool() == Some(true) => Some(TypeRef::named(DEDUCED)),
                _ if flag(node, "x-kubernetes-preserve-unknown-fields") => {
                    Some(TypeRef::named(DEDUCED))
                }
                _ if fields.is_empty() => Some(TypeRef::named(DEDUCED)),
                _ => None,
            };
            let atomic = node.get("x-kubernetes-map-type").and_then(Node::as_str) == Some("atomic");
            TypeRef::Inline(Box::new(Atom {
                map: Some(MapType {
                    atomic,
                    fields,
                    elem,
                }),
                ..Atom::default()
            }))
        }
        _ => TypeRef::named(DEDUCED),
    }
}

#[cfg(test)]
mod tests {
    use crate::smd::{Options, SmdError, apply_crd};
    use crate::yaml::Node;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        Node::from_json(&v)
    }

    fn crd() -> Node {
        node(json!({
            "type": "object",
            "properties": {
                "metadata": {"type": "object"},
                "spec": {
                    "type": "object",
                    "properties": {
                        "color": {"type": "string"},
                        "size": {"type": "integer"},
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {
                                "name": {"type": "string"}, "port": {"type": "integer"}}}
                        },
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "hosts": {"type": "array", "items": {"type": "string"}},
                        "settings": {"type": "object", "additionalProperties": {"type": "string"}},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }
            }
        }))
    }

    fn apply(
        object: serde_json::Value,
        patch: serde_json::Value,
        ssa: bool,
    ) -> Result<serde_json::Value, SmdError> {
        let opts = Options {
            server_side_apply: ssa,
        };
        apply_crd(
            &node(object),
            &node(patch),
            "example.com/v1",
            "Widget",
            &crd(),
            opts,
        )
        .map(|n| n.to_json())
    }

    fn widget(spec: serde_json::Value) -> serde_json::Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w", "labels": {"a": "1"}}, "spec": spec})
    }

    #[test]
    fn keyed_lists_sets_maps_and_object_meta_merge() {
        let out = apply(
            widget(json!({"color": "blue", "ports": [{"name": "http", "port": 80}],
                          "tags": ["x"], "settings": {"k": "v"}, "extra": {"deep": {"a": 1}}})),
            json!({"metadata": {"labels": {"b": "2"}, "annotations": {"t": "true"}},
                   "spec": {"ports": [{"name": "http", "port": 8080}, {"name": "https", "port": 443}],
                            "tags": ["y"], "settings": {"k2": "v2"}, "extra": {"deep": {"b": 2}}}}),
            false,
        )
        .unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"a": "1", "b": "2"}));
        assert_eq!(out["metadata"]["annotations"], json!({"t": "true"}));
        assert_eq!(out["spec"]["color"], json!("blue"));
        assert_eq!(
            out["spec"]["ports"],
            json!([{"name": "http", "port": 8080}, {"name": "https", "port": 443}])
        );
        assert_eq!(out["spec"]["tags"], json!(["x", "y"]));
        assert_eq!(out["spec"]["settings"], json!({"k": "v", "k2": "v2"}));
        assert_eq!(out["spec"]["extra"], json!({"deep": {"a": 1, "b": 2}}));
    }

    #[test]
    fn a_list_without_list_type_is_atomic() {
        let object = widget(json!({"hosts": ["a", "b"]}));
        let patch = json!({"spec": {"hosts": ["c"]}});
        // Setting an atomic list is refused by the apiserver's guard …
        let e = apply(object.clone(), patch.clone(), false).unwrap_err();
        assert!(matches!(e, SmdError::Atomic(_)), "{e}");
        // … and with server-side apply it replaces the list whole.
        let out = apply(object, patch, true).unwrap();
        assert_eq!(out["spec"]["hosts"], json!(["c"]));
    }

    #[test]
    fn a_patch_that_does_not_fit_the_crd_is_an_error() {
        let e = apply(widget(json!({})), json!({"spec": {"colour": "red"}}), false).unwrap_err();
        assert!(matches!(e, SmdError::Patch(_)), "{e}");
        let e = apply(widget(json!({})), json!({"spec": {"size": "big"}}), false).unwrap_err();
        assert!(matches!(e, SmdError::Patch(_)), "{e}");
    }
}
