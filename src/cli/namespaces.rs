//! The Namespaces `kpol check` knows (CEL's `namespaceObject`): a cheap pass over the input
//! files before any resource is evaluated — only files that mention `Namespace` are parsed,
//! only `v1` Namespace documents are kept — then the values file's `namespaces` and
//! `namespaceSelector` entries for names no input defines.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use kpol::manifest::read_manifests;
use kpol::request::values::Values;
use kpol::source::SourceFile;
use kpol::yaml::Node;

use super::discover::Input;
use super::policies;

/// Namespaces by name: inputs first (the first in input order wins), then the values file.
/// Standard input is not read twice, so Namespaces given on stdin are not collected; an
/// unreadable file is left to the main pass to report.
pub fn collect(inputs: &[Input], max_bytes: u64, values: &Values) -> BTreeMap<String, Node> {
    let found: Vec<Vec<(String, Node)>> = inputs
        .par_iter()
        .map(|input| match input {
            Input::Stdin => Vec::new(),
            Input::File(_) => from_input(input, max_bytes),
        })
        .collect();
    let mut out = BTreeMap::new();
    for (name, ns) in found.into_iter().flatten() {
        out.entry(name).or_insert(ns);
    }
    for (name, ns) in &values.namespace_objects {
        out.entry(name.clone()).or_insert_with(|| ns.clone());
    }
    for (name, labels) in &values.namespace_labels {
        out.entry(name.clone())
            .or_insert_with(|| Node::from_json(&stub(name, labels)));
    }
    out
}

fn from_input(input: &Input, max_bytes: u64) -> Vec<(String, Node)> {
    let Ok(text) = policies::read(input, max_bytes) else {
        return Vec::new();
    };
    if !text.contains("Namespace") {
        return Vec::new();
    }
    let source = Arc::new(SourceFile::new(input.display(), text));
    read_manifests(&source, super::discover::input_limits())
        .resources
        .into_iter()
        .filter(|r| r.kind == "Namespace" && r.api_version == "v1" && !r.name.is_empty())
        .map(|r| (r.name, r.root))
        .collect()
}

/// A Namespace known only by its name and labels (values file `namespaceSelector`).
fn stub(name: &str, labels: &BTreeMap<String, String>) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": labels},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_win_over_the_values_file() {
        let dir = std::env::temp_dir().join(format!("kpol-ns-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ns.yaml");
        std::fs::write(
            &file,
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  annotations: {team: x}\n\
             ---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n",
        )
        .unwrap();
        let mut values = Values::default();
        values.namespace_labels.insert("a".into(), BTreeMap::new());
        values
            .namespace_labels
            .insert("b".into(), BTreeMap::from([("env".into(), "prod".into())]));
        let got = collect(&[Input::File(file), Input::Stdin], 1 << 20, &values);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got.keys().collect::<Vec<_>>(), ["a", "b"]);
        let team = got["a"].get_path(&["metadata", "annotations", "team"]);
        assert_eq!(team.and_then(Node::as_str), Some("x"));
        let env = got["b"].get_path(&["metadata", "labels", "env"]);
        assert_eq!(env.and_then(Node::as_str), Some("prod"));
    }
}
