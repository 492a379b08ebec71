//! The `object` of a ValidatingPolicy in `evaluation.mode: HTTP` or `Envoy`: a payload file
//! (a test's `httpPayloads` / `envoyPayloads`) read as the Kyverno v1.19.0 CLI reads it
//! (`processor/authz_processor.go`), then shaped as kyverno-authz's CEL types are, every field
//! present with its zero value when the file leaves it out.
//!
//! * HTTP (`http.CheckRequest`, Go's `encoding/json`): `attributes` with `method`, `header`
//!   (name → list of values), `host`, `protocol`, `contentLength`, `body` (bytes, base64 in
//!   the file), `scheme`, `path`, `query` (name → list of values), `fragment`; and `mcp`
//!   (`{request: …}`, passed through as written, `request` null when absent — the MCP library
//!   is not provided). Field names match case-insensitively; unknown fields are ignored.
//! * Envoy (`envoy.service.auth.v3.CheckRequest`, protobuf JSON): `attributes` with `source`
//!   and `destination` (`service`, `principal`, `certificate`, `labels`, `address`),
//!   `request` (`time`, `http`: `id`, `method`, `headers` (name → value), `path`, `host`,
//!   `scheme`, `query`, `fragment`, `size`, `protocol`, `body`, `raw_body`, `header_map`),
//!   `context_extensions`, `metadata_context`, `route_metadata_context`, `tls_session`
//!   (`sni`). Fields are read by their proto or JSON name and selected in CEL by the proto
//!   name (`object.attributes.request.http.headers`); an unknown field is an error, as in
//!   protojson. `address`, `time`, `header_map` and the metadata fields are kept as written
//!   (null or an empty map when absent).

use std::sync::Arc;

use cel::Value;
use serde_json::Value as Json;

use crate::cel::convert::map_of;

/// How a field is read and what it becomes.
#[derive(Clone, Copy)]
enum Shape {
    Str,
    Int,
    /// Bytes, written as base64.
    Bytes,
    /// A map of strings.
    StrMap,
    /// A map of string lists (Go's `http.Header`, `url.Values`).
    ListMap,
    /// Any JSON, kept as written; `map`: an empty map when absent (else null).
    Raw {
        map: bool,
    },
    Message(&'static [Field]),
}

/// One field: its CEL (proto or Go tag) name, its JSON name, its shape.
type Field = (&'static str, &'static str, Shape);

const HTTP_ATTRIBUTES: &[Field] = &[
    ("method", "method", Shape::Str),
    ("header", "header", Shape::ListMap),
    ("host", "host", Shape::Str),
    ("protocol", "protocol", Shape::Str),
    ("contentLength", "contentLength", Shape::Int),
    ("body", "body", Shape::Bytes),
    ("scheme", "scheme", Shape::Str),
    ("path", "path", Shape::Str),
    ("query", "query", Shape::ListMap),
    ("fragment", "fragment", Shape::Str),
];

const HTTP_REQUEST: &[Field] = &[
    ("attributes", "attributes", Shape::Message(HTTP_ATTRIBUTES)),
    (
        "mcp",
        "mcp",
        Shape::Message(&[("request", "request", Shape::Raw { map: false })]),
    ),
];

const ENVOY_PEER: &[Field] = &[
    ("address", "address", Shape::Raw { map: true }),
    ("service", "service", Shape::Str),
    ("labels", "labels", Shape::StrMap),
    ("principal", "principal", Shape::Str),
    ("certificate", "certificate", Shape::Str),
];

const ENVOY_HTTP: &[Field] = &[
    ("id", "id", Shape::Str),
    ("method", "method", Shape::Str),
    ("headers", "headers", Shape::StrMap),
    ("header_map", "headerMap", Shape::Raw { map: true }),
    ("path", "path", Shape::Str),
    ("host", "host", Shape::Str),
    ("scheme", "scheme", Shape::Str),
    ("query", "query", Shape::Str),
    ("fragment", "fragment", Shape::Str),
    ("size", "size", Shape::Int),
    ("protocol", "protocol", Shape::Str),
    ("body", "body", Shape::Str),
    ("raw_body", "rawBody", Shape::Bytes),
];

const ENVOY_ATTRIBUTES: &[Field] = &[
    ("source", "source", Shape::Message(ENVOY_PEER)),
    ("destination", "destination", Shape::Message(ENVOY_PEER)),
    (
        "request",
        "request",
        Shape::Message(&[
            ("time", "time", Shape::Raw { map: false }),
            ("http", "http", Shape::Message(ENVOY_HTTP)),
        ]),
    ),
    ("context_extensions", "contextExtensions", Shape::StrMap),
    (
        "metadata_context",
        "metadataContext",
        Shape::Raw { map: true },
    ),
    (
        "route_metadata_context",
        "routeMetadataContext",
        Shape::Raw { map: true },
    ),
    (
        "tls_session",
        "tlsSession",
        Shape::Message(&[("sni", "sni", Shape::Str)]),
    ),
];

const ENVOY_REQUEST: &[Field] = &[("attributes", "attributes", Shape::Message(ENVOY_ATTRIBUTES))];

/// Which reader: Go's `encoding/json` or protobuf JSON.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    GoJson,
    ProtoJson,
}

/// The `object` of an HTTP-mode policy from a payload file's text.
pub fn http_request(text: &str) -> Result<Value, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    message(Dialect::GoJson, HTTP_REQUEST, &json, "CheckRequest")
}

/// The `object` of an Envoy-mode policy from a payload file's text.
pub fn envoy_request(text: &str) -> Result<Value, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| format!("proto: syntax error: {e}"))?;
    message(
        Dialect::ProtoJson,
        ENVOY_REQUEST,
        &json,
        "envoy.service.auth.v3.CheckRequest",
    )
}

fn message(d: Dialect, fields: &[Field], json: &Json, path: &str) -> Result<Value, String> {
    let empty = serde_json::Map::new();
    let object = match json {
        Json::Object(m) => m,
        Json::Null => &empty,
        other => return Err(mismatch(d, other, path, "object")),
    };
    if d == Dialect::ProtoJson
        && let Some(k) = object
            .keys()
            .find(|k| !fields.iter().any(|(p, j, _)| k == p || k == j))
    {
        return Err(format!("proto: unknown field {k:?} in {path}"));
    }
    let mut out = Vec::with_capacity(fields.len());
    for (cel_name, json_name, shape) in fields {
        let found = match d {
            Dialect::ProtoJson => object.get(*json_name).or_else(|| object.get(*cel_name)),
            Dialect::GoJson => object.get(*json_name).or_else(|| {
                object
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(json_name))
                    .map(|(_, v)| v)
            }),
        };
        let path = format!("{path}.{json_name}");
        out.push((
            *cel_name,
            field(d, *shape, found.unwrap_or(&Json::Null), &path)?,
        ));
    }
    Ok(map_of(out))
}

fn field(d: Dialect, shape: Shape, v: &Json, path: &str) -> Result<Value, String> {
    let empty_map = || map_of(Vec::<(String, Value)>::new());
    Ok(match (shape, v) {
        (Shape::Message(fields), _) => message(d, fields, v, path)?,
        (Shape::Raw { map }, Json::Null) => {
            if map {
                empty_map()
            } else {
                Value::Null
            }
        }
        (Shape::Raw { .. }, v) => crate::cel::convert::to_cel(&crate::yaml::Node::from_json(v)),
        (Shape::Str, Json::Null) => Value::from(""),
        (Shape::Str, Json::String(s)) => Value::String(Arc::new(s.clone())),
        (Shape::Int, Json::Null) => Value::Int(0),
        (Shape::Int, Json::Number(n)) if n.is_i64() => Value::Int(n.as_i64().unwrap_or(0)),
        // protobuf JSON writes int64 as a string.
        (Shape::Int, Json::String(s)) if d == Dialect::ProtoJson && s.parse::<i64>().is_ok() => {
            Value::Int(s.parse().unwrap_or(0))
        }
        (Shape::Bytes, Json::Null) => Value::Bytes(Arc::new(Vec::new())),
        (Shape::Bytes, Json::String(s)) => Value::Bytes(Arc::new(
            crate::base::base64::decode_lenient(s)
                .map_err(|_| format!("{path}: illegal base64 data"))?,
        )),
        (Shape::StrMap | Shape::ListMap, Json::Null) => empty_map(),
        (Shape::StrMap, Json::Object(m)) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, v) in m {
                let Json::String(s) = v else {
                    return Err(mismatch(d, v, &format!("{path}[{k}]"), "string"));
                };
                out.push((k.clone(), Value::String(Arc::new(s.clone()))));
            }
            map_of(out)
        }
        (Shape::ListMap, Json::Object(m)) => {
            let mut out = Vec::with_capacity(m.len());
            for (k, v) in m {
                let items = match v {
                    Json::Null => Vec::new(),
                    Json::Array(items) => items
                        .iter()
                        .map(|i| match i {
                            Json::String(s) => Ok(Value::String(Arc::new(s.clone()))),
                            other => Err(mismatch(d, other, &format!("{path}[{k}]"), "string")),
                        })
                        .collect::<Result<_, _>>()?,
                    other => return Err(mismatch(d, other, &format!("{path}[{k}]"), "[]string")),
                };
                out.push((k.clone(), Value::List(Arc::new(items))));
            }
            map_of(out)
        }
        (shape, v) => {
            let want = match shape {
                Shape::Str => "string",
                Shape::Int => "int64",
                Shape::Bytes => "[]uint8",
                Shape::StrMap => "map[string]string",
                _ => "map[string][]string",
            };
            return Err(mismatch(d, v, path, want));
        }
    })
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn mismatch(d: Dialect, v: &Json, path: &str, want: &str) -> String {
    match d {
        Dialect::GoJson => format!(
            "json: cannot unmarshal {} into Go struct field {path} of type {want}",
            json_kind(v)
        ),
        Dialect::ProtoJson => format!(
            "proto: invalid value for {want} field {path}: {}",
            json_kind(v)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::Activation;

    fn eval(object: Value, expr: &str) -> Result<Value, String> {
        let (p, e) = crate::cel::compile(expr, crate::source::Span::EMPTY);
        assert!(e.is_none(), "{e:?}");
        let mut act = Activation::new();
        act.set("object", object);
        act.eval(&p)
    }

    #[test]
    fn http_fields_have_zero_values_and_match_any_case() {
        let o = http_request(
            r#"{"Attributes": {"METHOD": "GET", "header": {"A": ["1"]}, "body": "aGk="}}"#,
        )
        .unwrap();
        assert_eq!(
            eval(o.clone(), "object.attributes.method"),
            Ok(Value::from("GET"))
        );
        assert_eq!(
            eval(o.clone(), "object.attributes.path"),
            Ok(Value::from(""))
        );
        assert_eq!(
            eval(o.clone(), "object.attributes.contentLength"),
            Ok(Value::Int(0))
        );
        assert_eq!(
            eval(o.clone(), "string(object.attributes.body)"),
            Ok(Value::from("hi"))
        );
        assert_eq!(
            eval(o.clone(), "object.attributes.Header('a')"),
            eval(o.clone(), "['1']")
        );
        assert_eq!(eval(o, "object.mcp.request"), Ok(Value::Null));
        // Unknown fields are ignored, as Go's decoder does.
        assert!(http_request(r#"{"other": 1}"#).is_ok());
    }

    #[test]
    fn http_wrong_types_are_errors() {
        let e = http_request(r#"{"attributes": {"method": 5}}"#).unwrap_err();
        assert!(
            e.contains("cannot unmarshal number") && e.contains("method"),
            "{e}"
        );
        let e = http_request(r#"{"attributes": {"header": {"a": "x"}}}"#).unwrap_err();
        assert!(e.contains("[]string"), "{e}");
        assert!(http_request("{").is_err());
    }

    #[test]
    fn envoy_reads_proto_and_json_names_with_defaults() {
        let o = envoy_request(
            r#"{"attributes": {"request": {"http": {"method": "GET", "headers": {"x": "1"}, "rawBody": "aGk=", "size": "3"}}, "contextExtensions": {"k": "v"}}}"#,
        )
        .unwrap();
        let get = |e: &str| eval(o.clone(), e);
        assert_eq!(
            get("object.attributes.request.http.method"),
            Ok(Value::from("GET"))
        );
        assert_eq!(
            get("object.attributes.request.http.size"),
            Ok(Value::Int(3))
        );
        assert_eq!(
            get("object.attributes.request.http.path"),
            Ok(Value::from(""))
        );
        assert_eq!(
            get("object.attributes.context_extensions.k"),
            Ok(Value::from("v"))
        );
        assert_eq!(
            get("object.attributes.source.principal"),
            Ok(Value::from(""))
        );
        assert_eq!(
            get("object.attributes.request.http.headers[?'y'].orValue('none')"),
            Ok(Value::from("none"))
        );
        // An empty request still has every message.
        let empty = envoy_request("{}").unwrap();
        assert_eq!(
            eval(empty, "object.attributes.request.http.headers.size()"),
            Ok(Value::Int(0))
        );
    }

    #[test]
    fn envoy_unknown_fields_and_wrong_types_are_errors() {
        let e = envoy_request(r#"{"attributes": {"request": {"htp": {}}}}"#).unwrap_err();
        assert!(e.contains("unknown field \"htp\""), "{e}");
        let e = envoy_request(r#"{"attributes": {"request": {"http": {"headers": {"a": 1}}}}}"#)
            .unwrap_err();
        assert!(e.contains("invalid value"), "{e}");
        assert!(envoy_request("[]").is_err());
    }
}
