//! Applying an ApplyConfiguration (cel.md §6.3): the partial object an expression produced,
//! merged into the current object. [`apply_configuration`] is the one entry point; today it
//! merges without a schema ([`merge_deduced`]), the way Kubernetes' deduced type converter
//! (used for MutatingAdmissionPolicies) does: maps merge key by key, scalars replace, and every
//! list is atomic, replaced whole. A typed merge (lists by their merge keys, from OpenAPI
//! schemas) is meant to go behind the same function.

use crate::yaml::{Node, Value};

/// The object after merging `patch` into it. `api_version` and `kind` are the object's: the
/// patch takes them (Kubernetes sets the patch's GVK to the object's before merging).
pub fn apply_configuration(
    object: &Node,
    patch: &Node,
    api_version: &str,
    kind: &str,
) -> Result<Node, String> {
    if object.as_map().is_none() || patch.as_map().is_none() {
        return Err("failed to merge patch: the object and the patch must be maps".to_owned());
    }
    let mut patch = patch.clone();
    if let Value::Map(m) = &mut patch.value {
        for (key, value) in [("apiVersion", api_version), ("kind", kind)] {
            if !value.is_empty() {
                m.insert(
                    key.to_owned(),
                    crate::source::Span::EMPTY,
                    Node::synthetic(Value::Str(value.to_owned())),
                );
            }
        }
    }
    Ok(merge_deduced(object, &patch))
}

/// The schema-less merge: `patch`'s maps merged into `object`'s recursively (keys the object
/// has keep their place, new keys follow), anything else in `patch` replacing what is there.
pub fn merge_deduced(object: &Node, patch: &Node) -> Node {
    match (&object.value, &patch.value) {
        (Value::Map(have), Value::Map(want)) => {
            let mut out = have.clone();
            for (key, value) in want.iter() {
                let merged = match have.get(key) {
                    Some(existing) => merge_deduced(existing, value),
                    None => value.clone(),
                };
                out.insert(key.to_owned(), crate::source::Span::EMPTY, merged);
            }
            Node::new(Value::Map(out), object.span)
        }
        _ => patch.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        Node::from_json(&v)
    }

    #[test]
    fn maps_merge_scalars_and_lists_replace() {
        let object = node(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "x"}], "dnsPolicy": "Default"}
        }));
        let patch = node(json!({
            "metadata": {"labels": {"b": "2"}},
            "spec": {"containers": [{"name": "d"}], "dnsPolicy": "None"}
        }));
        let out = apply_configuration(&object, &patch, "v1", "Pod").unwrap();
        assert_eq!(
            out.to_json(),
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
                "spec": {"containers": [{"name": "d"}], "dnsPolicy": "None"}
            })
        );
        // Keys the object had keep their order.
        let keys: Vec<&str> = out.as_map().unwrap().keys().collect();
        assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec"]);
    }

    #[test]
    fn a_patch_that_is_not_a_map_is_an_error() {
        let object = node(json!({"a": 1}));
        assert!(apply_configuration(&object, &node(json!([1])), "v1", "Pod").is_err());
    }
}
