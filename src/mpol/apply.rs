//! Applying an ApplyConfiguration (cel.md §6.3): the partial object an expression produced,
//! merged into the current object with Kubernetes' structured-merge-diff, typed by the
//! Kubernetes 1.32 built-in schemas the Kyverno CLI uses ([`crate::smd`]): lists merge by
//! their keys, sets by value, atomic parts are replaced — and a patch that sets an atomic part
//! is refused unless the policy asks for server-side apply.

use crate::yaml::Node;

/// The object after merging `patch` into it. `api_version` and `kind` are the object's
/// (Kubernetes gives the patch the object's GVK before merging); `server_side_apply` is the
/// policy's `evaluation.useServerSideApply`; `crd_schema` the kind's CRD `openAPIV3Schema`
/// when the inputs hold one (then it types the merge instead of the built-ins).
pub fn apply_configuration(
    object: &Node,
    patch: &Node,
    api_version: &str,
    kind: &str,
    server_side_apply: bool,
    crd_schema: Option<&Node>,
) -> Result<Node, String> {
    let options = crate::smd::Options { server_side_apply };
    match crd_schema {
        Some(schema) => crate::smd::apply_crd(object, patch, api_version, kind, schema, options),
        None => crate::smd::apply_with(object, patch, api_version, kind, options),
    }
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        Node::from_json(&v)
    }

    #[test]
    fn maps_merge_and_containers_merge_by_name() {
        let object = node(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "x"}], "dnsPolicy": "Default"}
        }));
        let patch = node(json!({
            "metadata": {"labels": {"b": "2"}},
            "spec": {"containers": [{"name": "c", "imagePullPolicy": "Always"}, {"name": "d", "image": "y"}], "dnsPolicy": "None"}
        }));
        let out = apply_configuration(&object, &patch, "v1", "Pod", false, None).unwrap();
        assert_eq!(
            out.to_json(),
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "x", "imagePullPolicy": "Always"},
                        {"name": "d", "image": "y"}
                    ],
                    "dnsPolicy": "None"
                }
            })
        );
        // Keys the object had keep their order.
        let keys: Vec<&str> = out.as_map().unwrap().keys().collect();
        assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec"]);
    }

    #[test]
    fn an_atomic_list_is_refused_unless_server_side_apply() {
        let object = node(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}]}}),
        );
        let patch = node(json!({"spec": {"tolerations": [{"key": "k", "operator": "Exists"}]}}));
        assert!(apply_configuration(&object, &patch, "v1", "Pod", false, None).is_err());
        let out = apply_configuration(&object, &patch, "v1", "Pod", true, None).unwrap();
        assert_eq!(out.to_json()["spec"]["tolerations"][0]["key"], "k");
    }

    #[test]
    fn a_patch_that_is_not_a_map_is_an_error() {
        let object = node(json!({"apiVersion": "v1", "kind": "Pod"}));
        assert!(apply_configuration(&object, &node(json!([1])), "v1", "Pod", false, None).is_err());
    }

    #[test]
    fn a_kind_without_a_schema_is_an_error() {
        let object = node(json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}}));
        let patch = node(json!({"spec": {"a": 1}}));
        assert!(
            apply_configuration(&object, &patch, "example.com/v1", "Widget", false, None).is_err()
        );
    }
}
