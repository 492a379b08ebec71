//! validate-cases.md as tests: every case about patterns, anyPattern, scalar matching and
//! their messages (sections A–F, H14, K1–K2, K4). Rule name `r`, no message unless stated;
//! resources are normalised like the CLI does (every integer a float, validate.md §2.1).
//! Each table row starts with its case id; variants carry a letter suffix.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::pattern::{
    PatternVerdict, check_any_pattern, check_pattern, has_references, validate_any_pattern,
    validate_pattern,
};
use crate::report::Status;
use crate::yaml::{Limits, Node, Value, parse_documents};

#[derive(Clone, Copy, Debug)]
enum Expect {
    Pass,
    Skip,
    Error,
    /// Fail at this Kyverno path.
    Fail(&'static str),
}

fn yaml(text: &str) -> Node {
    parse_documents(text, Limits::default()).unwrap()[0]
        .root
        .clone()
}

/// The CLI turns every resource integer into a float64 (validate.md §2.1).
fn floatify(node: &mut Node) {
    match &mut node.value {
        Value::Int(i) => node.value = Value::Float(*i as f64),
        Value::Seq(items) => items.iter_mut().for_each(floatify),
        Value::Map(m) => m
            .entries_mut()
            .iter_mut()
            .for_each(|e| floatify(&mut e.value)),
        _ => {}
    }
}

fn resource(text: &str) -> Node {
    let mut n = yaml(text);
    floatify(&mut n);
    n
}

/// Runs the pattern planned at load (as a rule's is) and planned during the walk (as a
/// substituted one is): both must give the same verdict.
fn run(pattern: &str, res: &str) -> PatternVerdict {
    let (resource, pattern) = (resource(res), yaml(pattern));
    let planned = validate_pattern("r", None, &resource, &pattern);
    let references = has_references(&pattern.value);
    let unplanned = check_pattern("r", None, &resource, &pattern, references, None);
    assert_eq!(planned, unplanned, "planned and unplanned walks differ");
    planned
}

fn check(rows: &[(&str, &str, &str, Expect)]) {
    let mut failures = Vec::new();
    for &(id, pattern, res, expect) in rows {
        let v = run(pattern, res);
        let ok = match expect {
            Expect::Pass => v.status == Status::Pass && v.message == "validation rule 'r' passed.",
            Expect::Skip => v.status == Status::Skip,
            Expect::Error => v.status == Status::Error,
            Expect::Fail(path) => {
                v.status == Status::Fail
                    && v.message == format!("validation error: rule r failed at path {path}")
                    && v.path
                        .as_ref()
                        .map(|p| super::path::render_segments(p))
                        .as_deref()
                        == Some(path)
            }
        };
        if !ok {
            failures.push(format!("{id}: expected {expect:?}, got {v:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn any(message: Option<&str>, patterns: &str, res: &str) -> PatternVerdict {
    let Value::Seq(items) = yaml(patterns).value else {
        panic!("not a list")
    };
    let resource = resource(res);
    let planned = validate_any_pattern("r", message, &resource, &items);
    let references = items.iter().any(|p| has_references(&p.value));
    let unplanned = check_any_pattern("r", message, &resource, &items, references, None);
    assert_eq!(planned, unplanned, "planned and unplanned walks differ");
    planned
}

mod anchor_cases;
mod map_array_cases;
mod reference_message_cases;
mod scalar_cases;
mod wildcard_any_cases;

use Expect::{Error, Fail, Pass};

#[test]
fn walk_edges() {
    check(&[
        // Nested arrays shorter than the pattern: empty path → Error (§3.4).
        ("nested-short", "{a: [[1], [2]]}", "{a: [[1]]}", Error),
        ("nested-ok", "{a: [[1], [2]]}", "{a: [[1], [2], [3]]}", Pass),
        // Existence on a non-list resource value.
        (
            "exist-scalar",
            r#"{"^(a)": [{b: 1}]}"#,
            "{a: x}",
            Fail("/a/"),
        ),
        // Map pattern at the root against a map is fine; against a list item of scalars not.
        ("map-vs-list", "{a: {b: 1}}", "{a: [1]}", Fail("/a/")),
        ("list-vs-map", "{a: [1]}", "{a: {b: 1}}", Fail("/a/")),
        // An equality anchor on a present null walks the value.
        ("eq-null", r#"{"=(a)": {b: 1}}"#, "{a: null}", Fail("/a/")),
    ]);
}
