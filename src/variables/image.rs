//! Container image references parsed like Kyverno (`pkg/utils/image/infos.go`) with the
//! distribution reference grammar, and the `images` context map (validate.md §11.7).

use std::sync::LazyLock;

use regex::Regex;

use crate::jmespath::value;
use crate::yaml::{Node, Value};

/// `defaultRegistry` of Kyverno's configuration.
pub const DEFAULT_REGISTRY: &str = "docker.io";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageInfo {
    pub registry: String,
    pub name: String,
    pub path: String,
    pub tag: String,
    pub digest: String,
    pub reference: String,
    pub reference_with_tag: String,
}

// distribution/reference: name components, optional domain, tag, digest. Go's `\w` is ASCII
// (`[0-9A-Za-z_]`); spelling it out also keeps the compiled regex small (a Unicode `\w{0,127}`
// cost more to compile than a whole run of checks, docs/PERFORMANCE.md).
const DOMAIN: &str = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?";
const COMPONENT: &str = r"[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*";

static REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let name = format!("(?:{DOMAIN}/)?{COMPONENT}(?:/{COMPONENT})*");
    Regex::new(&format!(
        r"^({name})(?::([0-9A-Za-z_][0-9A-Za-z_.-]{{0,127}}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{{32,}}))?$"
    ))
    .ok()
});

static NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^(?:({DOMAIN})/)?({COMPONENT}(?:/{COMPONENT})*)$")).ok());

fn add_default_registry(name: &str) -> String {
    match name.find('/') {
        Some(i)
            if name[..i].contains(['.', ':'])
                || &name[..i] == "localhost"
                || name[..i].to_lowercase() != name[..i] =>
        {
            name.to_owned()
        }
        _ => format!("{DEFAULT_REGISTRY}/{name}"),
    }
}

/// `GetImageInfo` with the default configuration (registry mutation enabled).
pub fn parse(image: &str) -> Result<ImageInfo, String> {
    let full = add_default_registry(image);
    let bad = |why: &str| {
        format!(
            "bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, enableDefaultRegistryMutation: true: {why}"
        )
    };
    let (Some(reference), Some(name_re)) = (REFERENCE.as_ref(), NAME.as_ref()) else {
        return Err(bad("invalid reference format"));
    };
    let Some(caps) = reference.captures(&full) else {
        if full.is_empty() {
            return Err(bad("repository name must have at least one component"));
        }
        if reference.is_match(&full.to_lowercase()) {
            return Err(bad(
                "invalid reference format: repository name must be lowercase",
            ));
        }
        return Err(bad("invalid reference format"));
    };
    let name = caps.get(1).map_or("", |m| m.as_str());
    if name.len() > 255 {
        return Err(bad("repository name must not be more than 255 characters"));
    }
    let (registry, path) = match name_re.captures(name) {
        Some(n) => (
            n.get(1).map_or("", |m| m.as_str()).to_owned(),
            n.get(2).map_or("", |m| m.as_str()).to_owned(),
        ),
        None => (String::new(), name.to_owned()),
    };
    let mut tag = caps.get(2).map_or("", |m| m.as_str()).to_owned();
    let digest = caps.get(3).map_or("", |m| m.as_str()).to_owned();
    if digest.is_empty() && tag.is_empty() {
        tag = "latest".to_owned();
    }
    let short = path.rsplit('/').next().unwrap_or("").to_owned();
    let reference_with_tag = if registry.is_empty() {
        format!("{path}:{tag}")
    } else {
        format!("{registry}/{path}:{tag}")
    };
    let mut info = ImageInfo {
        registry,
        name: short,
        path,
        tag,
        digest,
        reference: String::new(),
        reference_with_tag,
    };
    info.reference = info.normalized();
    Ok(info)
}

impl ImageInfo {
    /// `ImageInfo.String()`: `registry/path@digest` or `registry/path:tag`.
    pub fn normalized(&self) -> String {
        let image = if self.registry.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{}", self.registry, self.path)
        };
        if self.digest.is_empty() {
            format!("{image}:{}", self.tag)
        } else {
            format!("{image}@{}", self.digest)
        }
    }

    /// The JSON object Kyverno stores (empty optional fields omitted), with its pointer.
    fn to_node(&self, pointer: &str) -> Node {
        let mut e = Vec::new();
        let mut opt = |k: &str, v: &str| {
            if !v.is_empty() {
                e.push((k.to_owned(), value::string(v)));
            }
        };
        opt("registry", &self.registry);
        e.push(("name".to_owned(), value::string(&self.name)));
        e.push(("path".to_owned(), value::string(&self.path)));
        let mut opt = |k: &str, v: &str| {
            if !v.is_empty() {
                e.push((k.to_owned(), value::string(v)));
            }
        };
        opt("tag", &self.tag);
        opt("digest", &self.digest);
        opt("reference", &self.reference);
        opt("referenceWithTag", &self.reference_with_tag);
        e.push(("jsonPointer".to_owned(), value::string(pointer)));
        value::map(e)
    }
}

/// The pod spec path of a kind that has an image extractor.
fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
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
pub fn has_images(kind: &str) -> bool {
    pod_spec_path(kind).is_some()
}

/// The `images` map of a resource: `Ok(None)` when the kind has no extractor or no
/// container has an image; an unparsable image is an error.
pub fn images_of(kind: &str, resource: &Node) -> Result<Option<Node>, String> {
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
            entries.push((name, info.to_node(&pointer)));
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
    fn parses_references() {
        let i = parse("nginx").unwrap();
        assert_eq!(
            (
                i.registry.as_str(),
                i.path.as_str(),
                i.name.as_str(),
                i.tag.as_str()
            ),
            ("docker.io", "nginx", "nginx", "latest")
        );
        assert_eq!(i.reference, "docker.io/nginx:latest");
        let i = parse("localhost:4443/test/nginx").unwrap();
        assert_eq!(
            (i.registry.as_str(), i.path.as_str()),
            ("localhost:4443", "test/nginx")
        );
        let d = format!("sha256:{}", "a".repeat(64));
        let i = parse(&format!("ghcr.io/org/app@{d}")).unwrap();
        assert_eq!(i.tag, "");
        assert_eq!(i.reference, format!("ghcr.io/org/app@{d}"));
        assert_eq!(i.reference_with_tag, "ghcr.io/org/app:");
        assert!(parse("Nginx").is_err());
        assert!(parse("nginx:").is_err());
    }

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
