//! The layering of the library (docs/ARCHITECTURE.md), checked from the source text.
//!
//! Every top-level module of `src/` has a layer; a module may import (`crate::…`) only from
//! its own layer or below, and the imports between top-level modules must form no cycle.
//! `policy` (the envelope every kind shares) must import no evaluator. Test code (anything
//! after a file's first `#[cfg(test)]`, and `tests.rs` / `*_tests` files) is not counted: tests
//! may reach upward to build their inputs; so may `src/test_support.rs`, the unit tests' shared
//! set-up.
//!
//! `KNOWN` lists the edges that still break these rules while the house is rebuilt (#21):
//! each is a debt, and the list must match the source exactly, so it can only shrink.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lowest first. The binary (`src/main.rs`, `src/cli/`) sits above all of them.
const LAYERS: &[&[&str]] = &[
    // The floor: primitives and the YAML layer.
    &["base", "number", "source", "yaml"],
    // Outcomes and their diagnostics.
    &["report", "diagnostic"],
    // What is checked: resources, requests, values and test files; and the typed
    // (structured-merge-diff) merge of partial objects into resources; the inline suppressions
    // written in manifests.
    &[
        "resource", "manifest", "payload", "request", "testfile", "smd", "cluster", "suppress",
    ],
    // The expression languages.
    &["jmespath", "cel"],
    // Variables, conditions and patterns, written in those languages.
    &["variables", "conditions", "pattern"],
    // Rule selection.
    &["matching"],
    // The policy envelope and the loader table.
    &["policy"],
    // The kinds and their evaluators, and the loader table of the kinds above `policy`.
    &[
        "kinds",
        "autogen",
        "validate",
        "pss",
        "vpol",
        "mpol",
        "gpol",
        "dpol",
        "ivpol",
        "mapol",
        "exception",
        "pipeline",
        "mutate",
        "generate",
        "verify_images",
    ],
    // The phase table, and the runs of a Kyverno test over it (`engine::test_run`).
    &["engine"],
    // What runs around the engine: API-server defaulting, and which defaults changed a verdict.
    &["defaults"],
    // ClusterPolicy → CEL kinds conversion (`kpol migrate`): reads policy trees, writes YAML.
    &["migrate"],
];

/// Evaluators that sit below `policy` in the layers and that it must still not import (the
/// layer rule already forbids every evaluator above it: the kinds, the engine).
const EVALUATORS_BELOW: &[&str] = &["pattern"];

/// Edges (`from -> to`) that break the layering or close a cycle today; each one is work left.
const KNOWN: &[&str] = &[];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("top-level module `{module}` has no layer in LAYERS"))
}

/// The top-level module names a piece of Rust source imports through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}` on one line.
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn is_test_file(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem == "tests"
        || stem == "test_support"
        || stem.ends_with("_tests")
        || path.components().any(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|s| s == "tests" || s.ends_with("_tests"))
        })
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `from -> {to}` between the library's top-level modules.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let top = first.strip_suffix(".rs").unwrap_or(first).to_owned();
        if matches!(top.as_str(), "main" | "cli" | "lib") || is_test_file(rel) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let deps = graph.entry(top.clone()).or_default();
        for to in imports(&text) {
            if to != top {
                deps.insert(to);
            }
        }
    }
    graph
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Edges that go up a layer, or that `policy` takes to an evaluator.
fn violations(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (from, tos) in graph {
        for to in tos {
            let up = layer_of(to) > layer_of(from);
            let evaluator = from == "policy" && EVALUATORS_BELOW.contains(&to.as_str());
            if up || evaluator {
                out.insert(format!("{from} -> {to}"));
            }
        }
    }
    out
}

#[test]
fn every_module_has_a_layer() {
    for module in graph().keys() {
        layer_of(module);
    }
}

#[test]
fn imports_follow_the_layers() {
    let found = violations(&graph());
    let known: BTreeSet<String> = KNOWN.iter().map(|s| (*s).to_owned()).collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "imports that break the layering (docs/ARCHITECTURE.md): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "edges fixed since: remove them from KNOWN in tests/architecture.rs: {gone:?}"
    );
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = graph();
    let known: BTreeSet<&str> = KNOWN.iter().copied().collect();
    // The known upward edges are the only ones allowed to close a cycle.
    let mut rest = graph.clone();
    for (from, tos) in rest.iter_mut() {
        tos.retain(|to| !known.contains(format!("{from} -> {to}").as_str()));
    }
    let found = cycles(&rest);
    assert!(
        found.is_empty(),
        "import cycles between top-level modules: {found:?}"
    );
}

#[test]
fn the_scanner_sees_imports() {
    let text = "use crate::yaml::Node;\nuse crate::{policy, report::Status};\n// crate::engine\nlet x = crate::vpol::f();\n#[cfg(test)]\nuse crate::cli;\n";
    let got: Vec<_> = imports(text).into_iter().collect();
    assert_eq!(got, ["policy", "report", "vpol", "yaml"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycles(&g), vec![vec!["a".to_owned(), "b".to_owned()]]);
}
