//! Kyverno's CEL `image` library (`kyverno/sdk:extensions/cel/libs/image`): `image(s)`
//! (deprecated alias), `parseImageReference(s)`, `isImage(s)`, and the methods of the image
//! value — `registry()`, `repository()`, `identifier()`, `tag()`, `digest()`,
//! `containsDigest()`.
//!
//! Kyverno parses these with go-containerregistry's `name.ParseReference` (weak validation),
//! not with the distribution grammar behind `images` and `image_normalize`
//! ([`crate::variables::image`]): Docker Hub is `index.docker.io`, a one-component Docker Hub
//! repository gains `library/`, a digest must be `sha256:` and 64 lowercase hex digits, and a
//! tag before a digest is dropped. The two grammars accept different strings and report
//! different registries, so this module keeps its own small parser instead of bending the
//! shared one.

use std::sync::Arc;

use cel::objects::Opaque;
use cel::{ExecutionError, Value};

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

impl Opaque for ImageRef {
    fn runtime_type_name(&self) -> &str {
        "kyverno.image"
    }
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

fn this_image<'a>(function: &str, v: &'a Value) -> Result<&'a ImageRef, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<ImageRef>(),
        _ => None,
    }
    .ok_or_else(|| ExecutionError::function_error(function, "no such overload"))
}

type Method = fn(&ImageRef) -> Value;

const METHODS: &[(&str, Method)] = &[
    ("registry", |i| Value::from(i.registry.as_str())),
    ("repository", |i| Value::from(i.repository())),
    ("identifier", |i| Value::from(i.identifier())),
    ("tag", |i| Value::from(i.tag.as_deref().unwrap_or(""))),
    ("digest", |i| Value::from(i.digest.as_deref().unwrap_or(""))),
    ("containsDigest", |i| {
        Value::Bool(i.digest.as_ref().is_some_and(|d| !d.is_empty()))
    }),
];

fn to_image(function: &str, s: &str) -> Result<Value, ExecutionError> {
    parse_reference(s)
        .map(|r| Value::Opaque(Arc::new(r)))
        .map_err(|e| ExecutionError::function_error(function, e))
}

pub(super) fn register(ctx: &mut cel::Context<'static, 'static>) {
    let _ = ctx.add_function("image", |s: Arc<String>| to_image("image", &s));
    let _ = ctx.add_function("parseImageReference", |s: Arc<String>| {
        to_image("parseImageReference", &s)
    });
    let _ = ctx.add_function("isImage", |s: Arc<String>| parse_reference(&s).is_ok());
    for (name, method) in METHODS {
        let (name, method): (&'static str, Method) = (name, *method);
        let _ = ctx.add_function(
            name,
            move |cel::extractors::This(v): cel::extractors::This<Value>| -> Result<Value, ExecutionError> {
                this_image(name, &v).map(method)
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::eval_expr;

    fn s(expr: &str) -> String {
        match eval_expr(expr) {
            Ok(Value::String(s)) => s.to_string(),
            other => panic!("{expr}: {other:?}"),
        }
    }

    fn b(expr: &str) -> bool {
        match eval_expr(expr) {
            Ok(Value::Bool(b)) => b,
            other => panic!("{expr}: {other:?}"),
        }
    }

    const D: &str = "sha256:2bb1f0e2ca9b4a5e2a1e3e1b5b1cb4c2d3e1f5a6b7c8d9e0f1a2b3c4d5e6f7a8";

    #[test]
    fn docker_hub_defaults() {
        assert_eq!(s("image('nginx').registry()"), "index.docker.io");
        assert_eq!(s("image('nginx').repository()"), "library/nginx");
        assert_eq!(s("parseImageReference('nginx').tag()"), "latest");
        assert_eq!(s("parseImageReference('nginx').identifier()"), "latest");
        assert_eq!(s("parseImageReference('nginx').digest()"), "");
        assert!(!b("parseImageReference('nginx:1.2').containsDigest()"));
        assert_eq!(
            s("image('docker.io/nginx:1.2').registry()"),
            "index.docker.io"
        );
        assert_eq!(
            s("image('docker.io/nginx:1.2').repository()"),
            "library/nginx"
        );
        assert_eq!(s("image('bitnami/redis:7').repository()"), "bitnami/redis");
    }

    #[test]
    fn registries_and_ports() {
        assert_eq!(s("image('ghcr.io/org/app:v1').registry()"), "ghcr.io");
        assert_eq!(s("image('ghcr.io/org/app:v1').repository()"), "org/app");
        assert_eq!(s("image('ghcr.io/org/app:v1').tag()"), "v1");
        assert_eq!(
            s("image('localhost:5000/app').registry()"),
            "localhost:5000"
        );
        assert_eq!(s("image('localhost/app').registry()"), "localhost");
        assert_eq!(s("image('localhost:5000/app').tag()"), "latest");
    }

    #[test]
    fn digests() {
        let e = format!("image('ghcr.io/org/app:v1@{D}')");
        assert_eq!(s(&format!("{e}.digest()")), D);
        assert_eq!(s(&format!("{e}.identifier()")), D);
        assert_eq!(s(&format!("{e}.tag()")), "");
        assert!(b(&format!("{e}.containsDigest()")));
        assert_eq!(s(&format!("{e}.repository()")), "org/app");
        assert_eq!(
            s(&format!("image('nginx@{D}').repository()")),
            "library/nginx"
        );
    }

    /// Outcomes checked against go-containerregistry v0.21.8's `ParseReference`.
    #[test]
    fn edge_cases_like_go() {
        let cases = [
            ("ab", Some(("index.docker.io", "library/ab", "latest"))),
            ("nginx:-x", Some(("index.docker.io", "library/nginx", "-x"))),
            ("app//x", Some(("index.docker.io", "app//x", "latest"))),
            ("LOCAL.host/app", Some(("LOCAL.host", "app", "latest"))),
            ("[::1]:5000/app", Some(("[::1]:5000", "app", "latest"))),
            (
                "reg_under.com/app",
                Some(("reg_under.com", "app", "latest")),
            ),
            (
                "index.docker.io/nginx",
                Some(("index.docker.io", "library/nginx", "latest")),
            ),
            ("Localhost/app", None),
            ("reg:abc/app", None),
            ("exa%20mple.com/app", None),
            ("user@host.com/app", None),
            ("a.b/", None),
            (":tag", None),
            ("example.com/APP", None),
        ];
        for (input, want) in cases {
            let got = parse_reference(input).ok();
            let got = got
                .as_ref()
                .map(|r| (r.registry.as_str(), r.repository(), r.identifier()));
            let want = want.map(|(a, b, c)| (a, b.to_owned(), c));
            assert_eq!(got, want, "{input}");
        }
        let long = format!("my-reg.io/app:{}", "x".repeat(129));
        assert!(parse_reference(&long).is_err());
    }

    #[test]
    fn is_image_and_errors() {
        assert!(b("isImage('nginx:latest')"));
        assert!(!b("isImage('Nginx')"));
        assert!(!b("isImage('nginx:')"));
        assert!(!b("isImage('a')"), "a repository needs two characters");
        assert!(!b("isImage('nginx@sha256:abc')"));
        assert!(!b("isImage('nginx@md5:0123456789abcdef0123456789abcdef')"));
        let e = eval_expr("image('UPPER').tag()").unwrap_err();
        assert!(e.contains("could not parse reference: UPPER"), "{e}");
        assert!(b("image('nginx') == parseImageReference('nginx')"));
        assert!(!b("image('nginx') == image('nginx:latest')"));
    }
}
