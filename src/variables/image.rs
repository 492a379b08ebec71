//! The `images` context map (validate.md §11.7): each container's image, parsed with
//! [`crate::base::image`], as the JSON object Kyverno stores.

use crate::base::image::{ImageInfo, parse};
use crate::jmespath::value;
use crate::yaml::{Node, Value};

/// The JSON object Kyverno stores (empty optional fields omitted), with its pointer.
fn to_node(info: &ImageInfo, pointer: &str) -> Node {
    let mut e = Vec::new();
    let mut opt = |k: &str, v: &str| {
        if !v.is_empty() {
            e.push((k.to_owned(), value::string(v)));
        }
    };
    opt("registry", &info.registry);
    e.push(("name".to_owned(), value::string(&info.name)));
    e.push(("path".to_owned(), value::string(&info.path)));
    let mut opt = |k: &str, v: &str| {
        if !v.is_empty() {
            e.push((k.to_owned(), value::string(v)));
        }
    };
    opt("tag", &info.tag);
    opt("digest", &info.digest);
    opt("reference", &info.reference);
    opt("referenceWithTag", &info.reference_with_tag);
    e.push(("jsonPointer".to_owned(), value::string(pointer)));
    value::map(e)
}

/// The pod spec path of a kind that has an image extractor (`registeredExtractors`).
pub(crate) fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "Pod" => &["spec"],
        "Deployment"
        | "DaemonSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "StatefulSet"
        | "Job" => &["spec", "template", "spec"],
        "CronJob" => &["spec", "jobTemplate", "spec", "template", "spec"],
        _ => return None,
    })
}

impl super::Context<'_> {
    /// Builds the pending `images` map from the object as `for_resource` put it in.
    pub(super) fn materialize_images(&mut self) {
        let Some(kind) = self.images_pending.take() else {
            return;
        };
        match self.object().map(|o| images_of(&kind, o)) {
            Some(Ok(Some(images))) => self.set_path(&["images"], images),
            Some(Err(e)) => self.images_error = Some(e),
            _ => {}
        }
    }
}

/// Whether a query may read `images`: it names it, or reads the root as a whole.
pub(super) fn may_read_images(query: &str) -> bool {
    // perf: asked of every query on a pod; byte scans, no substring searcher set up.
    let b = query.as_bytes();
    b.iter().any(|&c| matches!(c, b'@' | b'*' | b'$' | b'\\'))
        || memchr::memchr_iter(b'i', b).any(|i| b[i..].starts_with(b"images"))
}

/// Whether a kind has an image extractor (an `images` map).
pub(crate) fn has_images(kind: &str) -> bool {
    pod_spec_path(kind).is_some()
}

/// The `images` map of a resource: `Ok(None)` when the kind has no extractor or no
/// container has an image. As Kyverno's extractor (`pkg/utils/api/image.go`), it is an error
/// when a level of the pod spec is not an object (`invalid image config`), a container list is
/// a scalar (`invalid type`), a container has no string `name` (`invalid key`, even without an
/// image) or an image does not parse; a container without an image (or a blank one) is left
/// out, and a name given twice keeps the later container.
pub(crate) fn images_of(kind: &str, resource: &Node) -> Result<Option<Node>, String> {
    let Some(spec_path) = pod_spec_path(kind) else {
        return Ok(None);
    };
    let mut spec = resource;
    for key in spec_path {
        match spec.get(key) {
            None => return Ok(None),
            Some(n) if matches!(n.value, Value::Null) => return Ok(None),
            Some(n) if n.as_map().is_none() => return Err("invalid image config".to_owned()),
            Some(n) => spec = n,
        }
    }
    let mut groups = Vec::new();
    for group in ["initContainers", "containers", "ephemeralContainers"] {
        let items: Vec<(String, &Node)> = match spec.get(group).map(|n| (n, &n.value)) {
            None | Some((_, Value::Null)) => continue,
            Some((n, _)) => match (n.as_seq(), n.as_map()) {
                (Some(list), _) => list
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i.to_string(), c))
                    .collect(),
                (None, Some(map)) => map.iter().map(|(k, c)| (k.to_owned(), c)).collect(),
                (None, None) => return Err("invalid type".to_owned()),
            },
        };
        let mut entries: Vec<(String, Node)> = Vec::new();
        for (at, c) in items {
            if matches!(c.value, Value::Null) {
                continue;
            }
            if c.as_map().is_none() {
                return Err("invalid image config".to_owned());
            }
            let Some(Value::Str(name)) = c.get("name").map(|n| &n.value) else {
                return Err("invalid key".to_owned());
            };
            let Some(image) = c.get("image").and_then(Node::as_str) else {
                continue;
            };
            if image.trim().is_empty() {
                continue;
            }
            let info = parse(image).map_err(|e| format!("invalid image '{image}' ({e})"))?;
            let pointer = format!("/{}/{group}/{at}/image", spec_path.join("/"));
            let node = to_node(&info, &pointer);
            match entries.iter_mut().find(|(n, _)| n == name) {
                Some(entry) => entry.1 = node,
                None => entries.push((name.clone(), node)),
            }
        }
        if !entries.is_empty() {
            groups.push((group.to_owned(), value::map(entries)));
        }
    }
    Ok((!groups.is_empty()).then(|| value::map(groups)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_map() {
        let pod = Node::from_json(
            &serde_json::json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}),
        );
        let m = images_of("Pod", &pod).unwrap().unwrap();
        let web = m.get_path(&["containers", "web"]).unwrap();
        assert_eq!(web.get("tag").and_then(Node::as_str), Some("1.25"));
        assert_eq!(
            web.get("jsonPointer").and_then(Node::as_str),
            Some("/spec/containers/0/image")
        );
        assert!(m.get("initContainers").is_none());
        assert!(images_of("ConfigMap", &pod).unwrap().is_none());
    }

    /// Kyverno's extractor errors: a container without a string name (even one without an
    /// image), a pod spec that is not an object, a container list that is a scalar, an image
    /// that does not parse; a name given twice keeps the later container.
    #[test]
    fn extraction_errors_and_duplicate_names() {
        let of = |v: serde_json::Value| images_of("Pod", &Node::from_json(&v));
        let err = |v: serde_json::Value| of(v).unwrap_err();
        assert_eq!(
            err(serde_json::json!({"spec": {"containers": [{"image": "nginx"}]}})),
            "invalid key"
        );
        assert_eq!(
            err(serde_json::json!({"spec": {"initContainers": [{"name": 3}]}})),
            "invalid key"
        );
        assert_eq!(
            err(serde_json::json!({"spec": "x"})),
            "invalid image config"
        );
        assert_eq!(
            err(serde_json::json!({"spec": {"containers": ["nginx"]}})),
            "invalid image config"
        );
        assert_eq!(
            err(serde_json::json!({"spec": {"containers": "nginx"}})),
            "invalid type"
        );
        assert!(
            err(serde_json::json!({"spec": {"containers": [{"name": "a", "image": "Bad"}]}}))
                .starts_with("invalid image 'Bad' (bad image: docker.io/Bad,")
        );
        let m = of(serde_json::json!({"spec": {"containers": [
            {"name": "a", "image": "nginx:1"},
            {"name": "b"},
            {"name": "a", "image": "nginx:2"},
        ]}}))
        .unwrap()
        .unwrap();
        let a = m.get_path(&["containers", "a"]).unwrap();
        assert_eq!(a.get("tag").and_then(Node::as_str), Some("2"));
        assert_eq!(
            a.get("jsonPointer").and_then(Node::as_str),
            Some("/spec/containers/2/image")
        );
        assert_eq!(
            m.get("containers").and_then(Node::as_map).map(|c| c.len()),
            Some(1)
        );
    }
}
