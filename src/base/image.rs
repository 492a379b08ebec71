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
// The host is a domain name or a bracketed IPv6 address, then an optional port.
const DOMAIN: &str = r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?";
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
    let (registry, path) = match name_re.captures(name) {
        Some(n) => (
            n.get(1).map_or("", |m| m.as_str()).to_owned(),
            n.get(2).map_or("", |m| m.as_str()).to_owned(),
        ),
        None => (String::new(), name.to_owned()),
    };
    // The limit is on the path, the registry not counted.
    if path.len() > 255 {
        return Err(bad("repository name must not be more than 255 characters"));
    }
    let mut tag = caps.get(2).map_or("", |m| m.as_str()).to_owned();
    let digest = caps.get(3).map_or("", |m| m.as_str()).to_owned();
    if !digest.is_empty() {
        check_digest(&digest).map_err(bad)?;
    }
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

/// A digest as go-digest v1.0.0 validates it: an algorithm it provides (sha256, sha384,
/// sha512) with its hex encoding, lower case and of the hash's length. The reference grammar
/// already gave its shape: `algorithm:hex` of at least 32 hex digits.
fn check_digest(digest: &str) -> Result<(), &'static str> {
    const FORMAT: &str = "invalid checksum digest format";
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return Err(FORMAT);
    };
    let size = match algorithm {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        // An algorithm go-digest does not provide: its own shape is lower case.
        _ if algorithm
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+._-".contains(&b)) =>
        {
            return Err("unsupported digest algorithm");
        }
        _ => return Err(FORMAT),
    };
    if encoded.len() != size * 2 {
        return Err("invalid checksum digest length");
    }
    if !encoded
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(FORMAT);
    }
    Ok(())
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

    /// What the reference grammar accepts and go-digest then refuses, as Kyverno reports it.
    #[test]
    fn digests_are_validated_as_go_digest_does() {
        let why = |image: String| {
            parse(&image)
                .unwrap_err()
                .rsplit(": ")
                .next()
                .unwrap()
                .to_owned()
        };
        let hex = |n: usize| "a".repeat(n);
        assert!(parse(&format!("nginx@sha384:{}", hex(96))).is_ok());
        assert!(parse(&format!("nginx@sha512:{}", hex(128))).is_ok());
        assert_eq!(
            why(format!("nginx@sha256:{}", hex(63))),
            "invalid checksum digest length"
        );
        assert_eq!(
            why(format!("nginx@sha256:{}", "A".repeat(64))),
            "invalid checksum digest format"
        );
        assert_eq!(
            why(format!("nginx@md5:{}", hex(32))),
            "unsupported digest algorithm"
        );
        assert_eq!(
            why(format!("nginx@Sha256:{}", hex(64))),
            "invalid checksum digest format"
        );
    }

    /// A bracketed IPv6 registry, and the 255-character limit on the path alone.
    #[test]
    fn ipv6_registries_and_the_path_limit() {
        let i = parse("[::1]:5000/team/app:1").unwrap();
        assert_eq!(
            (i.registry.as_str(), i.path.as_str()),
            ("[::1]:5000", "team/app")
        );
        let long = format!("registry.example.com/{}", "a".repeat(255));
        assert_eq!(parse(&long).unwrap().path.len(), 255);
        assert!(
            parse(&format!("{long}a"))
                .unwrap_err()
                .ends_with("repository name must not be more than 255 characters")
        );
    }
}
