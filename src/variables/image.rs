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
/// container has an image; an unparsable image is an error.
pub(crate) fn images_of(kind: &str, resource: &Node) -> Result<Option<Node>, String> {
    let Some(spec_path) = pod_spec_path(kind) else {
        return Ok(None);
    };
    let Some(spec) = resource.get_path(spec_path) else {
        return Ok(None);
    };
    let mut groups = Vec::new();
    for group in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(list) = spec.get(group).and_then(Node::as_seq) else {
            continue;
        };
        let mut entries = Vec::new();
        for (i, c) in list.iter().enumerate() {
            let Some(image) = c.get("image").and_then(Node::as_str) else {
                continue;
            };
            if image.trim().is_empty() {
                continue;
            }
            let name = match c.get("name").map(|n| &n.value) {
                Some(Value::Str(s)) => s.clone(),
                _ => String::new(),
            };
            let info = parse(image)?;
            let pointer = format!("/{}/{group}/{i}/image", spec_path.join("/"));
            entries.push((name, to_node(&info, &pointer)));
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
}
