//! Kyverno's CEL `hash`, `json` and `x509` libraries (`kyverno/sdk:extensions/cel/libs/hash`,
//! `json`, `x509`), all pure:
//! * `sha1(s)`, `sha256(s)`, `md5(s)` and their `hash.`-prefixed forms: lowercase hex digests
//!   of the string's UTF-8 bytes;
//! * `json.unmarshal(s)`: Go's `json.Unmarshal` into `any` (every number a `double`);
//!   `json.marshal(v)`: Go's `json.Marshal` (keys sorted, `<>&` escaped, floats in Go's form);
//! * `yaml.parse(s)`: sigs.k8s.io/yaml's `Unmarshal` into `any` — the first document, every
//!   number a `double` (YAML goes through JSON), an empty document `null`;
//! * `x509.decode(pem)`: the certificate or CSR map of [`crate::jmespath::x509`], restricted for
//!   certificates to the fields Kyverno's CEL output struct keeps.

use std::sync::Arc;

use cel::objects::Key;
use cel::{ExecutionError, Value};
use md5::Digest as _;

use crate::jmespath::value;
use crate::yaml::Node;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha1_hex(s: Arc<String>) -> String {
    hex(&sha1::Sha1::digest(s.as_bytes()))
}

fn sha256_hex(s: Arc<String>) -> String {
    hex(&sha2::Sha256::digest(s.as_bytes()))
}

fn md5_hex(s: Arc<String>) -> String {
    hex(&md5::Md5::digest(s.as_bytes()))
}

fn unmarshal(s: Arc<String>) -> Result<Value, ExecutionError> {
    // Go's decoder words the syntax errors (cel-go returns them as they are).
    let parsed: serde_json::Value = serde_json::from_str(&s).map_err(|e| {
        let why = super::go_errors::json_syntax_error(&s).unwrap_or_else(|| e.to_string());
        ExecutionError::function_error("json.unmarshal", why)
    })?;
    Ok(super::convert::to_cel(&value::from_json(&parsed)))
}

fn yaml_parse(s: Arc<String>) -> Result<Value, ExecutionError> {
    let docs = crate::yaml::parse_documents(&s, crate::yaml::Limits::default()).map_err(|e| {
        ExecutionError::function_error(
            "yaml.parse",
            format!("error converting YAML to JSON: {}", e.message),
        )
    })?;
    Ok(docs.into_iter().next().map_or(Value::Null, |d| {
        super::convert::to_cel(&value::json_round_trip(&d.root))
    }))
}

/// A CEL value as the JSON tree Go's encoder sees: bytes as base64, timestamps as RFC 3339,
/// durations as nanoseconds; NaN, infinities and non-string map keys are refused.
fn json_node(v: &Value) -> Result<Node, String> {
    Ok(match v {
        Value::Null => value::null(),
        Value::Bool(b) => value::boolean(*b),
        Value::Int(i) => value::node(crate::yaml::Value::Int(*i)),
        Value::UInt(u) => match i64::try_from(*u) {
            Ok(i) => value::node(crate::yaml::Value::Int(i)),
            Err(_) => value::float(*u as f64),
        },
        Value::Float(f) if f.is_finite() => value::float(*f),
        Value::Float(f) => return Err(format!("json: unsupported value: {}", go_float_name(*f))),
        Value::String(s) => value::string(s.as_str()),
        Value::Bytes(b) => value::string(crate::jmespath::x509::base64_encode(b)),
        Value::Timestamp(t) => {
            value::string(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        }
        Value::Duration(d) => value::node(crate::yaml::Value::Int(
            d.num_nanoseconds().unwrap_or(i64::MAX),
        )),
        Value::List(items) => value::seq(items.iter().map(json_node).collect::<Result<_, _>>()?),
        Value::Map(m) => {
            let mut entries = Vec::with_capacity(m.map.len());
            for (k, v) in m.map.iter() {
                let Key::String(k) = k else {
                    return Err(format!("unsupported map key type for JSON: {k:?}"));
                };
                entries.push((k.to_string(), json_node(v)?));
            }
            value::map(entries)
        }
        other => return Err(format!("json: unsupported type: {other:?}")),
    })
}

fn go_float_name(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "+Inf"
    } else {
        "-Inf"
    }
}

fn marshal(v: Value) -> Result<Value, ExecutionError> {
    let node = json_node(&v).map_err(|e| ExecutionError::function_error("json.marshal", e))?;
    Ok(Value::from(value::to_json_string(&node)))
}

fn x509_decode(s: Arc<String>) -> Result<Value, ExecutionError> {
    let node = crate::jmespath::x509::decode_for_cel(&s)
        .map_err(|e| ExecutionError::function_error("x509.decode", e))?;
    Ok(super::convert::to_cel(&node))
}

pub(super) fn register(ctx: &mut cel::Context<'static, 'static>) {
    for (sha1, sha256, md5) in [
        ("sha1", "sha256", "md5"),
        ("hash.sha1", "hash.sha256", "hash.md5"),
    ] {
        let _ = ctx.add_function(sha1, sha1_hex);
        let _ = ctx.add_function(sha256, sha256_hex);
        let _ = ctx.add_function(md5, md5_hex);
    }
    let _ = ctx.add_function("json.unmarshal", unmarshal);
    let _ = ctx.add_function("json.marshal", marshal);
    let _ = ctx.add_function("yaml.parse", yaml_parse);
    let _ = ctx.add_function("x509.decode", x509_decode);
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

    #[test]
    fn hashes_refuse_what_is_not_a_string() {
        for e in ["sha1(1)", "sha256(b'x')", "hash.md5(null)"] {
            assert!(eval_expr(e).is_err(), "{e}");
        }
    }

    #[test]
    fn hashes() {
        assert_eq!(
            s("sha1('hello')"),
            "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"
        );
        assert_eq!(
            s("hash.sha256('hello')"),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(s("md5('')"), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(s("hash.md5('hello')"), s("md5('hello')"));
    }

    #[test]
    fn x509_decode_in_cel() {
        let pem = include_str!("../jmespath/x509/cert.pem");
        let cert = format!("x509.decode('''{pem}''')");
        assert_eq!(s(&format!("{cert}.Issuer.CommonName")), "kpol.example");
        assert_eq!(
            eval_expr(&format!("{cert}.IsCA && !has({cert}.Subject)")),
            Ok(Value::Bool(true))
        );
        let e = eval_expr("x509.decode('nope')").unwrap_err();
        assert!(e.contains("failed to decode PEM block"), "{e}");
    }

    #[test]
    fn json_round_trip() {
        assert_eq!(
            eval_expr("json.unmarshal('{\"a\": [1, \"x\"]}').a[0] == 1.0"),
            Ok(Value::Bool(true))
        );
        // A double equals the int of the same value (cel-go's heterogeneous equality).
        assert_eq!(
            eval_expr("json.unmarshal('{\"a\": 1}').a == 1"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            eval_expr("type(json.unmarshal('{\"a\": 1}').a) == double"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            s("json.marshal({'b': 1, 'a': [true, null, 1.5, 2.0], 'c': '<&>'})"),
            r#"{"a":[true,null,1.5,2],"b":1,"c":"\u003c\u0026\u003e"}"#
        );
        assert_eq!(s("json.marshal(b'hi')"), "\"aGk=\"");
        assert!(eval_expr("json.unmarshal('{')").is_err());
        assert!(eval_expr("json.marshal({1: 2})").is_err());
    }

    #[test]
    fn yaml_parse_first_document_numbers_as_doubles() {
        assert_eq!(
            eval_expr("yaml.parse('a: 1\\nb: [x, true]').b[1]"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            eval_expr("type(yaml.parse('a: 1').a) == double && yaml.parse('a: 1').a == 1"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            eval_expr("yaml.parse('- a\\n- b\\n---\\nc: d')"),
            eval_expr("['a', 'b']")
        );
        assert_eq!(eval_expr("yaml.parse('')"), Ok(Value::Null));
    }

    #[test]
    fn yaml_parse_errors_are_worded_as_kyverno_s() {
        // cel-go returns the library's error as it is, with no function name in front.
        let e = eval_expr("yaml.parse('a: [1')").unwrap_err();
        assert!(e.starts_with("error converting YAML to JSON: "), "{e}");
        assert!(eval_expr("yaml.parse(1)").is_err());
    }
}
