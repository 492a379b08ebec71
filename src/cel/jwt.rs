//! kyverno-authz's `jwt` library (`pkg/cel/libs/jwt`, loaded by the HTTP and Envoy evaluation
//! modes): `jwt.Decode(token, key)` verifies a compact JWS with a shared secret and returns
//! `{Claims, Valid}`.
//!
//! What kpol does, offline and with the key from the policy or the payload:
//! * the token is three base64url parts; its header's `alg` must be `HS256`, `HS384` or
//!   `HS512` (a string key is a symmetric key, and kyverno-authz infers the algorithm from the
//!   key), and the HMAC of `header.payload` must equal the signature — otherwise the call is
//!   an error (as in kyverno-authz: a token that does not verify is never a decoded token);
//! * `Claims` is the payload's object, numbers as doubles (the claims go through a protobuf
//!   `Struct`), the time claims `exp`, `nbf`, `iat` as whole seconds; an `aud` claim makes the
//!   call an error, as it does in kyverno-authz (its audience list does not convert);
//! * `Valid` is whether the time claims hold now: `exp` in the future, `nbf` and `iat` not.
//!
//! `jwt.Decode(token, jwks.Fetch(url))` needs the network: `jwks.Fetch` is an
//! `unsupported offline` error ([`super::libs::OFFLINE_UNSUPPORTED`]).

use std::sync::Arc;

use cel::{Context, ExecutionError, Value};
use serde_json::Value as Json;
use sha2::Digest;

use super::convert::map_of;

const NAME: &str = "jwt.Decode";

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function(NAME, decode_value);
}

fn decode_value(token: Arc<String>, key: Value) -> Result<Value, ExecutionError> {
    let Value::String(key) = key else {
        return Err(ExecutionError::function_error(
            NAME,
            format!("no such overload: {NAME}(string, {})", key.type_of()),
        ));
    };
    let now = chrono::Utc::now().timestamp();
    let token =
        decode(&token, key.as_bytes(), now).map_err(|e| ExecutionError::function_error(NAME, e))?;
    Ok(token)
}

/// A decoded token as CEL sees it (`jwt.Token`): `{Claims, Valid}`; `now` in Unix seconds.
pub(crate) fn decode(token: &str, key: &[u8], now: i64) -> Result<Value, String> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("failed to parse token: invalid number of segments".to_owned());
    };
    let header: Json = serde_json::from_slice(&base64url(h)?)
        .map_err(|e| format!("failed to parse token: invalid JWS header: {e}"))?;
    let alg = header.get("alg").and_then(Json::as_str).unwrap_or("");
    let signature = base64url(s)?;
    let signing_input = format!("{h}.{p}");
    let expected = match alg {
        "HS256" => hmac(
            64,
            |d| sha2::Sha256::digest(d).to_vec(),
            key,
            signing_input.as_bytes(),
        ),
        "HS384" => hmac(
            128,
            |d| sha2::Sha384::digest(d).to_vec(),
            key,
            signing_input.as_bytes(),
        ),
        "HS512" => hmac(
            128,
            |d| sha2::Sha512::digest(d).to_vec(),
            key,
            signing_input.as_bytes(),
        ),
        other => {
            return Err(format!(
                "jwt.Parse: failed to parse token: jws.Verify: could not verify message using any of the signatures or keys: algorithm {other:?} does not fit a symmetric key"
            ));
        }
    };
    if !constant_eq(&expected, &signature) {
        return Err(
            "jwt.Parse: failed to parse token: jws.Verify: could not verify message using any of the signatures or keys: jws.Verify: failed to verify signature #1 with key *jwk.symmetricKey: invalid HMAC signature"
                .to_owned(),
        );
    }
    let payload: Json = serde_json::from_slice(&base64url(p)?)
        .map_err(|e| format!("failed to parse token: invalid JWT payload: {e}"))?;
    let Json::Object(claims) = payload else {
        return Err("failed to parse token: the payload is not a JSON object".to_owned());
    };
    let mut valid = true;
    let mut out = Vec::with_capacity(claims.len());
    for (name, value) in &claims {
        let v = match name.as_str() {
            "exp" | "nbf" | "iat" => {
                let Some(secs) = value.as_f64() else {
                    return Err(format!(
                        "failed to parse token: invalid {name} claim: not a number"
                    ));
                };
                let secs = secs.trunc() as i64;
                valid &= match name.as_str() {
                    "exp" => now < secs,
                    _ => now >= secs,
                };
                Value::Float(secs as f64)
            }
            "aud" => return Err("proto: invalid type: []string".to_owned()),
            _ => struct_value(value),
        };
        out.push((name.clone(), v));
    }
    Ok(map_of([
        ("Claims", map_of(out)),
        ("Valid", Value::Bool(valid)),
    ]))
}

/// A JSON value as a protobuf `Struct` field reads in CEL: every number a double.
fn struct_value(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(struct_value).collect())),
        Json::Object(m) => map_of(m.iter().map(|(k, v)| (k.clone(), struct_value(v)))),
    }
}

/// RFC 2104 HMAC over a hash of the given block size.
fn hmac(block: usize, hash: impl Fn(&[u8]) -> Vec<u8>, key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut k = if key.len() > block {
        hash(key)
    } else {
        key.to_vec()
    };
    k.resize(block, 0);
    let mut inner: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    inner.extend_from_slice(message);
    let mut outer: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    outer.extend_from_slice(&hash(&inner));
    hash(&outer)
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Base64 of a JWS part: the URL-safe alphabet (the standard one accepted too), padding
/// optional.
fn base64url(text: &str) -> Result<Vec<u8>, String> {
    crate::base::base64::decode_lenient(text)
        .map_err(|i| format!("failed to parse token: illegal base64 data at input byte {i}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Tokens of kyverno-authz's own jwt tests (pkg/cel/libs/jwt/impl_test.go), key "secret".
    const GUEST: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjIyNDEwODE1MzksIm5iZiI6MTUxNDg1MTEzOSwicm9sZSI6Imd1ZXN0Iiwic3ViIjoiWVd4cFkyVT0ifQ.ja1bgvIt47393ba_WbSBm35NrUhdxM4mOVQN8iXz8lk";
    const EXPIRED: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE1MTQ4NTExNTAsIm5iZiI6MTUxNDg1MTEzOSwicm9sZSI6Imd1ZXN0Iiwic3ViIjoiWVd4cFkyVT0ifQ.3737qU6BTn8QHhGXxcgZ6EA2hJFY-a00V28F4mD8_98";
    const NOT_YET: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjIyNDEwODE1NTAsIm5iZiI6MjI0MTA4MTUzOSwicm9sZSI6Imd1ZXN0Iiwic3ViIjoiWVd4cFkyVT0ifQ.nzWl9VIwNT3RYgF8IlTG_IczpIZrFFsUWqnUeexWC64";
    const NOW: i64 = 1_800_000_000;

    fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
        let Value::Map(m) = v else { panic!("{v:?}") };
        m.get(&cel::objects::Key::from(name))
            .unwrap_or(&Value::Null)
    }

    #[test]
    fn a_valid_token_decodes_with_double_claims() {
        let t = decode(GUEST, b"secret", NOW).unwrap();
        assert_eq!(field(&t, "Valid"), &Value::Bool(true));
        let claims = field(&t, "Claims");
        assert_eq!(field(claims, "role"), &Value::from("guest"));
        assert_eq!(field(claims, "sub"), &Value::from("YWxpY2U="));
        assert_eq!(field(claims, "exp"), &Value::Float(2_241_081_539.0));
        assert_eq!(field(claims, "nbf"), &Value::Float(1_514_851_139.0));
    }

    #[test]
    fn time_claims_decide_valid() {
        let expired = decode(EXPIRED, b"secret", NOW).unwrap();
        assert_eq!(field(&expired, "Valid"), &Value::Bool(false));
        let early = decode(NOT_YET, b"secret", NOW).unwrap();
        assert_eq!(field(&early, "Valid"), &Value::Bool(false));
        // The same token is valid once its nbf has come.
        let later = decode(NOT_YET, b"secret", 2_241_081_540).unwrap();
        assert_eq!(field(&later, "Valid"), &Value::Bool(true));
    }

    #[test]
    fn a_wrong_key_or_a_broken_token_is_an_error() {
        let e = decode(GUEST, b"other", NOW).unwrap_err();
        assert!(e.ends_with("invalid HMAC signature"), "{e}");
        let e = decode("a.b", b"secret", NOW).unwrap_err();
        assert!(e.contains("invalid number of segments"), "{e}");
        let e = decode("a.b.c!", b"secret", NOW).unwrap_err();
        assert!(
            e.contains("JWS header") || e.contains("illegal base64"),
            "{e}"
        );
        // alg none (`{"alg":"none"}`) never verifies with a key.
        let e = decode("eyJhbGciOiJub25lIn0.e30.", b"secret", NOW).unwrap_err();
        assert!(e.contains("does not fit a symmetric key"), "{e}");
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac(
            64,
            |d| sha2::Sha256::digest(d).to_vec(),
            b"Jefe",
            b"what do ya want for nothing?",
        );
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn through_cel() {
        let expr = format!("jwt.Decode('{GUEST}', 'secret').Claims.role");
        assert_eq!(crate::cel::eval_expr(&expr), Ok(Value::from("guest")));
        let e = crate::cel::eval_expr(&format!("jwt.Decode('{GUEST}', 1)")).unwrap_err();
        assert!(e.contains("no such overload"), "{e}");
        let e = crate::cel::eval_expr("jwt.Decode('x', jwks.Fetch('https://x'))").unwrap_err();
        assert!(e.contains("unsupported offline"), "{e}");
    }
}
