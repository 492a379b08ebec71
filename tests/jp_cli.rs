//! `kpol jp`: Kyverno's JMESPath from the command line.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

fn jp(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .arg("jp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Kyverno's functions work on the document, and results print as Go's JSON encoder does.
#[test]
fn query_uses_kyverno_functions() {
    let doc = "spec:\n  containers:\n  - name: a\n    image: nginx:1.2\n";
    let (code, out, _) = jp(
        &[
            "query",
            "divide('1Gi', '512Mi')",
            "spec.containers[0].image | split(@, ':')",
        ],
        doc,
    );
    assert_eq!(code, Some(0));
    assert_eq!(out, "2\n[\n  \"nginx\",\n  \"1.2\"\n]\n");
}

/// A missing key is an error in Kyverno's dialect; an unknown function is refused.
#[test]
fn missing_keys_and_unknown_functions_are_errors() {
    let (code, _, err) = jp(&["query", "spec.missing"], "spec: {}\n");
    assert_eq!(code, Some(1));
    assert!(err.contains("Unknown key \"missing\""), "{err}");
    let (code, _, err) = jp(&["query", "nope(@)"], "a: 1\n");
    assert_eq!(code, Some(1));
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn function_lists_kyverno_functions() {
    let (code, out, _) = jp(&["function"], "");
    assert_eq!(code, Some(0));
    for f in ["base64_decode", "divide", "semver_compare", "to_upper"] {
        assert!(out.lines().any(|l| l == f), "{f} missing");
    }
}

/// `x509_decode` on a PEM certificate read from the document.
#[test]
fn x509_decode_reads_a_certificate() {
    let pem = include_str!("../src/jmespath/x509/cert.pem");
    let doc = serde_json::json!({ "cert": pem }).to_string();
    let (code, out, err) = jp(
        &[
            "query",
            "x509_decode(cert).[Subject.CommonName, IsCA, DNSNames[1], PublicKey.E]",
        ],
        &doc,
    );
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!(["kpol.example", true, "*.kpol.example", 65537])
    );
}
