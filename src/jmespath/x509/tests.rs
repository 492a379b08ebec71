//! Fixtures: `cert.pem` (RSA, every extension kind kpol decodes), `csr.pem` (RSA, SHA-384,
//! SAN extension request) and `ec-cert.pem` (ECDSA), made with openssl; the `.json` files are
//! what Go 1.26's `encoding/json` writes for the parsed `x509.Certificate` /
//! `x509.CertificateRequest` with `PublicKey` replaced by `{N, E}` as Kyverno does, decoded
//! back into a map.

use super::*;

fn go_json(text: &str) -> Node {
    value::from_json(&serde_json::from_str(text).unwrap())
}

fn assert_same(ours: &Node, go: &Node) {
    let (Value::Map(a), Value::Map(b)) = (&ours.value, &go.value) else {
        panic!("not maps");
    };
    for (k, v) in b.iter() {
        let mine = a.get(k).unwrap_or_else(|| panic!("missing {k}"));
        assert!(
            value::deep_equal(mine, v),
            "{k}: ours {} go {}",
            value::to_json_string(mine),
            value::to_json_string(v)
        );
    }
    for k in a.keys() {
        assert!(b.get(k).is_some(), "extra {k}");
    }
}

#[test]
fn certificate_matches_go() {
    let ours = decode(include_str!("cert.pem")).unwrap();
    assert_same(&ours, &go_json(include_str!("cert.json")));
}

#[test]
fn certificate_request_matches_go() {
    let ours = decode(include_str!("csr.pem")).unwrap();
    assert_same(&ours, &go_json(include_str!("csr.json")));
}

#[test]
fn cel_subset() {
    let cel = decode_for_cel(include_str!("cert.pem")).unwrap();
    assert!(cel.get("Subject").is_none());
    assert!(cel.get("Version").is_none());
    assert!(matches!(field(&cel, &["Issuer", "CommonName"]), Value::Str(s) if s == "kpol.example"));
    // SerialNumber 0x1f2e3d4c5b6a79880123456789abcdef → Int64() keeps the low 64 bits.
    let low = 0x0123_4567_89ab_cdef_i64 as f64;
    assert!(matches!(field(&cel, &["SerialNumber"]), Value::Float(f) if *f == low));
    assert_eq!(
        cel.get_path(&["NotBefore"]).and_then(Node::as_str),
        Some("2026-12-01T14:20:13Z")
    );
}

#[test]
fn errors() {
    assert_eq!(decode("x").unwrap_err(), "failed to decode PEM block");
    assert_eq!(
        decode("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n").unwrap_err(),
        "PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST"
    );
    assert_eq!(
        decode(include_str!("ec-cert.pem")).unwrap_err(),
        "certificate should use rsa algorithm"
    );
    assert!(decode("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").is_err());
}

#[test]
fn big_integers() {
    assert_eq!(decimal(&[]), "0");
    assert_eq!(decimal(&[0x01, 0x00]), "256");
    assert_eq!(decimal(&[0xff; 8]), u64::MAX.to_string());
    assert_eq!(integer_text(&[0xff]), "-1");
    assert_eq!(integer_text(&[0x80, 0x00]), "-32768");
    assert_eq!(integer_int64(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0x05]), 5);
}
