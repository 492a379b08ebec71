//! kpol reads YAML the way Kubernetes does: the reference values of `shared/yaml-k8s` (what
//! sigs.k8s.io/yaml on go-yaml v2 produces) for 21 edge cases and, when present, for every
//! file of the real-manifest corpus. The shared folder is found through `KPOL_SHARED_DIR`
//! (`.ci/run` sets it); without it these tests say so and pass.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::PathBuf;

use kpol::yaml::{Limits, parse_documents};
use serde_json::Value;

fn shared() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("KPOL_SHARED_DIR")?);
    dir.join("yaml-k8s").is_dir().then_some(dir)
}

/// Numbers compare numerically (Go prints `1e+06`, kpol keeps ints and floats apart).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Both reject the input, or both read the same documents.
fn agrees(expected: Option<Vec<Value>>, ours: &Result<Vec<Value>, String>) -> bool {
    match (expected, ours) {
        (None, Err(_)) => true,
        (Some(exp), Ok(got)) => {
            exp.len() == got.len() && exp.iter().zip(got).all(|(a, b)| same(a, b))
        }
        _ => false,
    }
}

/// kpol's reading of a file: the non-null documents as JSON, or `Err`.
fn read(text: &str) -> Result<Vec<Value>, String> {
    let docs = parse_documents(text, Limits::default()).map_err(|e| e.message)?;
    docs.iter()
        .map(|d| {
            let j = d.root.to_json();
            // Kubernetes rejects non-finite floats when converting to JSON.
            if has_non_finite(&d.root) {
                Err("json: unsupported value".to_owned())
            } else {
                Ok(j)
            }
        })
        .collect()
}

fn has_non_finite(n: &kpol::yaml::Node) -> bool {
    use kpol::yaml::Value as V;
    match &n.value {
        V::Float(f) => !f.is_finite(),
        V::Seq(items) => items.iter().any(has_non_finite),
        V::Map(m) => m.iter().any(|(_, v)| has_non_finite(v)),
        _ => false,
    }
}

/// Parses one expected cell: `ERR(...)`/`ERR`, or JSON values separated by spaces (cases) or
/// one JSON array (corpus).
fn expected_docs(cell: &str, array: bool) -> Option<Vec<Value>> {
    let cell = cell.trim();
    if cell.starts_with("ERR") {
        return None;
    }
    if array {
        return serde_json::from_str::<Vec<Value>>(cell).ok();
    }
    let stream = serde_json::Deserializer::from_str(cell).into_iter::<Value>();
    Some(stream.map(|v| v.unwrap()).collect())
}

#[test]
fn edge_cases_match_kubernetes() {
    let Some(shared) = shared() else {
        eprintln!("KPOL_SHARED_DIR not set: yaml-k8s reference cases skipped");
        return;
    };
    let dir = shared.join("yaml-k8s/cases");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut mismatches = Vec::new();
    let mut total = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let (file, cell) = line.split_once('\t').unwrap();
        total += 1;
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let ours = read(&text);
        if !agrees(expected_docs(cell, false), &ours) {
            mismatches.push(format!("{file}: expected {cell}, kpol read {ours:?}"));
        }
    }
    // Known difference (docs/DEPENDENCIES.md): 19_complexkey — go-yaml rejects a sequence as a
    // map key; kpol rejects it too, so none is expected here.
    assert!(
        mismatches.is_empty(),
        "{} of {total} cases differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn real_corpus_matches_kubernetes() {
    let Some(shared) = shared() else {
        eprintln!("KPOL_SHARED_DIR not set: corpus comparison skipped");
        return;
    };
    let corpus = shared.join("corpus/real");
    let gz = shared.join("yaml-k8s/corpus-expected.tsv.gz");
    let (Ok(file), true) = (std::fs::File::open(&gz), corpus.is_dir()) else {
        eprintln!("corpus or its reference values absent: skipped");
        return;
    };
    let mut table = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut table)
        .unwrap();
    let mut mismatches = Vec::new();
    let mut total = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let (path, cell) = line.split_once('\t').unwrap();
        let Ok(bytes) = std::fs::read(corpus.join(path)) else {
            continue;
        };
        total += 1;
        let text = String::from_utf8_lossy(&bytes);
        let ours = read(&text);
        if !agrees(expected_docs(cell, true), &ours) {
            mismatches.push(path.to_owned());
        }
    }
    eprintln!(
        "corpus: {} of {total} files read as Kubernetes reads them",
        total - mismatches.len()
    );
    // The known hard rows (shared/yaml-k8s/README.md) are allowed; anything more is a
    // regression.
    assert!(
        mismatches.len() <= KNOWN_CORPUS_DIFFERENCES,
        "{} files differ (allowed {KNOWN_CORPUS_DIFFERENCES}):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// Files of the corpus kpol is known to read differently from Kubernetes (docs/DEPENDENCIES.md):
/// one, `istio/.../serviceentry-valid.yaml`, whose flow sequence `[1.2.3.4, 001:db8::]` go-yaml
/// reads as a plain string and the YAML 1.2 parser as an implicit `key: value` pair.
const KNOWN_CORPUS_DIFFERENCES: usize = 1;
