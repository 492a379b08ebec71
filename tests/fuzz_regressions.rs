//! Inputs the fuzzers found (`scripts/fuzz`, docs/FUZZING.md), kept as regression tests: each
//! must end in a clean result or a clear error, never a panic or a run away.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kpol::source::SourceFile;
use kpol::yaml::{Limits, parse_documents};

fn input(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fuzz")
        .join(name);
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

/// A mutated alias bomb whose anchors wrap aliases: keeping each anchored copy used to cost
/// unbudgeted work (a 10 s timeout under the fuzzer); it is now refused by the alias budget.
#[test]
fn anchors_over_aliases_count_against_the_alias_budget() {
    for name in ["yaml-alias-bomb-anchors.bin", "policy-alias-bomb.bin"] {
        let text = input(name);
        let err = parse_documents(&text, Limits::default());
        assert!(
            err.as_ref()
                .is_err_and(|e| e.message.contains("alias expansion")),
            "{name}: {:?}",
            err.map(|d| d.len())
        );
        let source = Arc::new(SourceFile::new(name, text));
        let m = kpol::manifest::read_manifests(&source, Limits::default());
        assert!(m.resources.is_empty());
        assert_eq!(m.diagnostics.len(), 1);
    }
}

/// `divide()` on a quantity with a long fraction and a binary suffix: rounding to nano
/// precision overflowed an `i128` (a panic in debug builds, a wrong value in release).
#[test]
fn quantity_rounding_near_the_integer_limit_does_not_overflow() {
    let text = input("jmespath-quantity-overflow.bin");
    let (expr, doc) = text.split_once('\n').unwrap();
    let e = kpol::jmespath::Expr::compile(expr).unwrap();
    let root = parse_documents(doc, Limits::default())
        .ok()
        .and_then(|d| d.into_iter().next())
        .map_or_else(kpol::yaml::Node::null, |d| d.root);
    // Whatever the value, evaluating it returns.
    let _ = e.search(&root);
    let q = kpol::jmespath::Expr::compile("divide('1Gi', '135177777.7777777777777777777777172Mi')")
        .unwrap();
    assert!(q.search(&kpol::yaml::Node::null()).is_ok());
}
