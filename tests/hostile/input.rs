//! Hostile YAML and names: per-file budgets, large maps, nested Lists, terminal and log injection.

use super::*;

/// A small document whose aliases copy about 181,000 nodes: one anchored list of 1,000
/// scalars, aliased 180 times. Alone it is within the alias budget.
fn aliasing_doc() -> String {
    let mut doc = String::from("a: &a [");
    doc.push_str(&vec!["x"; 1_000].join(","));
    doc.push_str("]\nb: [");
    doc.push_str(&vec!["*a"; 180].join(","));
    doc.push_str("]\n");
    doc
}

/// 1,000 such documents in one file: 181 million nodes if each document had its own budget
/// (4 GB); the file's budget refuses it at its second document.
#[test]
fn a_thousand_aliasing_documents_share_the_files_budget() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many-aliases.yaml");
    let doc = aliasing_doc();
    let text = format!("---\n{doc}").repeat(1_000);
    std::fs::write(&p, &text).unwrap();
    // The second document's aliases (line 6) are where the budget runs out.
    assert_reported_beside_good(
        &p,
        &[
            "error[yaml]",
            "alias expansion exceeds 200000 nodes in one file",
            "many-aliases.yaml:6:",
        ],
    );
}

/// Files each within their own budget still draw on the run's: twelve files of 181,000 copied
/// nodes exceed its two million, and the files past it are refused; the rest is checked.
#[test]
fn aliasing_files_share_the_runs_budget() {
    let dir = tempfile::tempdir().unwrap();
    let doc = aliasing_doc();
    for i in 0..12 {
        std::fs::write(dir.path().join(format!("aliases-{i:02}.yaml")), &doc).unwrap();
    }
    std::fs::write(dir.path().join("good.yaml"), GOOD_POD).unwrap();
    let (code, text) = limits_check(dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("alias expansion exceeds 2000000 nodes in this run"),
        "{text}"
    );
    assert!(!text.contains("in one file"), "{text}");
    assert!(text.contains("pass: 1,"), "{text}");
}

/// A ConfigMap of `keys` keys, `k0: v0` …, with `dup` written again last as `dup: last`.
fn big_config_map(keys: usize) -> String {
    let mut text = String::with_capacity(keys * 16 + 100);
    text.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  dup: first\n");
    for i in 0..keys {
        text.push_str(&format!("  k{i}: v{i}\n"));
    }
    text.push_str("  dup: last\n");
    text
}

/// 400,000 keys in one map (5.6 MB): built in linear time (a linear search per key never
/// finished) and checked.
#[test]
fn a_map_of_400000_keys_is_read_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big-configmap.yaml");
    std::fs::write(&p, big_config_map(400_000)).unwrap();
    let (code, text) = limits_check(&p);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("pass: 0,"), "{text}");
}

/// With its key index a large map still reads as Kubernetes reads it: source order, and a
/// duplicate key last-wins in the first key's place.
#[test]
fn a_large_map_keeps_order_and_last_wins() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("configmap.yaml");
    std::fs::write(&p, big_config_map(20_000)).unwrap();
    let o = kpol(&[
        "jp",
        "query",
        "-i",
        p.to_str().unwrap(),
        "[keys(data)[0], keys(data)[20000], length(keys(data)), data.dup, data.k19999]",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!(["dup", "k19999", 20_001, "last", "v19999"])
    );
}

/// A Pod inside a List inside a List is checked, and its finding points at its own line.
#[test]
fn a_pod_in_a_nested_list_is_found_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nested-list.yaml");
    std::fs::write(
        &p,
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: nested}\n    spec:\n      containers:\n      - name: no-limits\n        image: nginx:1.27\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: outer}\n  spec:\n    containers:\n    - name: a\n      image: nginx:1.27\n      resources: {limits: {cpu: 100m, memory: 64Mi}}\n",
    )
    .unwrap();
    let (code, text) = limits_check(&p);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("nested-list.yaml:12:9"), "{text}");
    assert!(text.contains("resource: Pod default/nested"), "{text}");
    assert!(text.contains("pass: 1, fail: 1,"), "{text}");
}

/// Lists nested past kpol's limit (32) are an error at the List too deep, with the run
/// marked incomplete; the items above it and the other files are still checked.
#[test]
fn lists_nested_too_deep_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("deep-list.yaml");
    let mut text = String::new();
    for d in 0..40 {
        let pad = "  ".repeat(d);
        if d > 0 {
            text.push_str(&"  ".repeat(d - 1));
            text.push_str("- ");
        }
        text.push_str(&format!("apiVersion: v1\n{pad}kind: List\n{pad}items:\n"));
    }
    std::fs::write(&p, text).unwrap();
    // The 34th List, on line 3 × 33 + 1.
    assert_reported_beside_good(
        &p,
        &[
            "error[limit]",
            "kind: List nested more than 32 levels deep",
            "deep-list.yaml:100:",
        ],
    );
}
