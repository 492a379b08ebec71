//! Container image references parsed like Kyverno (`pkg/utils/image/infos.go`) with the
//! distribution reference grammar: the reading behind the `images` context map and
//! `image_normalize`. [`ggcr`] is the other grammar, go-containerregistry's, which Kyverno's CEL
//! image library uses.

pub mod ggcr;

use std::sync::LazyLock;

use regex::Regex;

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
}
