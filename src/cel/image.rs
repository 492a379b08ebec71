//! Kyverno's CEL `image` library (`kyverno/sdk:extensions/cel/libs/image`): `image(s)`
//! (deprecated alias), `parseImageReference(s)`, `isImage(s)`, and the methods of the image
//! value — `registry()`, `repository()`, `identifier()`, `tag()`, `digest()`,
//! `containsDigest()`.
//!
//! Kyverno parses these with go-containerregistry's `name.ParseReference`
//! ([`crate::base::image::ggcr`]), not with the distribution grammar behind `images` and
//! `image_normalize` ([`crate::base::image`]).

use std::sync::Arc;

use cel::objects::Opaque;
use cel::{ExecutionError, Value};

use crate::base::image::ggcr::{ImageRef, parse_reference};

impl Opaque for ImageRef {
    fn runtime_type_name(&self) -> &str {
        "kyverno.image"
    }
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
