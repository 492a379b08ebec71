//! Image references as go-containerregistry's `name.ParseReference` reads them (weak
//! validation), the grammar of Kyverno's CEL image library (`kyverno/sdk:extensions/cel/libs/image`).
//!
//! Not the distribution grammar of [`super`] (behind `images` and `image_normalize`): Docker Hub
//! is `index.docker.io`, a one-component Docker Hub repository gains `library/`, a digest must be
//! `sha256:` and 64 lowercase hex digits, and a tag before a digest is dropped. The two grammars
//! accept different strings and report different registries, so each keeps its own parser.

/// The registry a reference without one names.
pub const DEFAULT_REGISTRY: &str = "index.docker.io";
const REGISTRY_ALIAS: &str = "docker.io";
const DEFAULT_TAG: &str = "latest";
const TAG_CHARS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
const REPOSITORY_CHARS: &str = "abcdefghijklmnopqrstuvwxyz0123456789_-./";

/// A parsed image reference: a tag or a digest on a repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    /// The registry (`index.docker.io` when none is written).
    pub registry: String,
    /// The repository as written (without Docker Hub's implicit `library/`).
    repository: String,
    /// `Some(tag)` for a tag reference (`latest` when none is written).
    pub tag: Option<String>,
    /// `Some(digest)` for a digest reference.
    pub digest: Option<String>,
    /// The reference as written.
    pub original: String,
}

impl ImageRef {
    /// `RepositoryStr()`: Docker Hub's one-component names live under `library/`.
    pub fn repository(&self) -> String {
        if !self.repository.contains('/') && self.registry == DEFAULT_REGISTRY {
            format!("library/{}", self.repository)
        } else {
            self.repository.clone()
        }
    }

    /// `Identifier()`: the tag or the digest.
    pub fn identifier(&self) -> &str {
        self.tag.as_deref().or(self.digest.as_deref()).unwrap_or("")
    }
}

fn check_element(what: &str, s: &str, allowed: &str, min: usize, max: usize) -> Result<(), String> {
    let n = s.chars().count();
    if n < min || n > max {
        return Err(format!(
            "{what} must be between {min} and {max} characters in length: {s}"
        ));
    }
    if s.chars().any(|c| !allowed.contains(c)) {
        return Err(format!(
            "{what} can only contain the characters `{allowed}`: {s}"
        ));
    }
    Ok(())
}

/// Go's `url.Parse("//" + name).Host == name`, for the shapes a registry takes: a host (reg-name
/// characters or a bracketed IPv6 address) and an optional all-digit port.
fn valid_registry(name: &str) -> bool {
    let (host, port) = if let Some(rest) = name.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, tail)) => {
                if !ip
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
                {
                    return false;
                }
                match tail.strip_prefix(':') {
                    Some(p) => ("", Some(p)),
                    None if tail.is_empty() => ("", None),
                    None => return false,
                }
            }
            None => return false,
        }
    } else {
        match name.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (name, None),
        }
    };
    let host_ok = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=".contains(c));
    host_ok && port.is_none_or(|p| p.chars().all(|c| c.is_ascii_digit()))
}

/// `NewRepository`: splits off the registry and checks both parts.
fn new_repository(name: &str) -> Result<(String, String), String> {
    if name.is_empty() {
        return Err("a repository name must be specified".to_owned());
    }
    let (mut registry, repo) = match name.split_once('/') {
        Some((first, rest)) if first == "localhost" || first.contains(['.', ':']) => {
            (first.to_owned(), rest)
        }
        _ => (String::new(), name),
    };
    check_element("repository", repo, REPOSITORY_CHARS, 2, 255)?;
    if !valid_registry(&registry) {
        return Err(format!(
            "registries must be valid RFC 3986 URI authorities: {registry}"
        ));
    }
    if registry.is_empty() || registry == REGISTRY_ALIAS {
        registry = DEFAULT_REGISTRY.to_owned();
    }
    Ok((registry, repo.to_owned()))
}

fn new_tag(name: &str) -> Result<ImageRef, String> {
    let mut base = name;
    let mut tag = "";
    if let Some((b, t)) = name.rsplit_once(':')
        && !t.contains('/')
    {
        if t.is_empty() {
            return Err(format!("{name} must specify a tag name after the colon"));
        }
        base = b;
        tag = t;
        check_element("tag", tag, TAG_CHARS, 1, 128)?;
    }
    let (registry, repository) = new_repository(base)?;
    Ok(ImageRef {
        registry,
        repository,
        tag: Some(if tag.is_empty() { DEFAULT_TAG } else { tag }.to_owned()),
        digest: None,
        original: name.to_owned(),
    })
}

fn new_digest(name: &str) -> Result<ImageRef, String> {
    let mut parts = name.split('@');
    let (Some(mut base), Some(digest), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!(
            "a digest must contain exactly one '@' separator: {name}"
        ));
    };
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return Err(format!("unsupported digest algorithm: {digest}"));
    };
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err("invalid checksum digest format".to_owned());
    }
    // A tag written before the digest is dropped.
    let untagged;
    if let Ok(t) = new_tag(base) {
        untagged = format!("{}/{}", t.registry, t.repository());
        base = &untagged;
    }
    let (registry, repository) = new_repository(base)?;
    Ok(ImageRef {
        registry,
        repository,
        tag: None,
        digest: Some(digest.to_owned()),
        original: name.to_owned(),
    })
}

/// `name.ParseReference` with the default options: a tag reference, else a digest reference.
pub fn parse_reference(s: &str) -> Result<ImageRef, String> {
    new_tag(s)
        .or_else(|_| new_digest(s))
        .map_err(|_| format!("could not parse reference: {s}"))
}
