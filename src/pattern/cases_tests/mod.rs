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

/// The walk's shortcut for certain passes (`walk::surely_passes`, docs/PERFORMANCE.md) says
/// yes only where the full walk is `Ok`, and says it for the plain keys and simple anchors it
/// is meant for (else it would buy nothing); it leaves everything else to the walk.
#[test]
fn certain_passes_are_found_and_only_those() {
    use super::Plan;
    use super::path::PathNode;
    use super::walk::{Walker, surely_passes};
    let rows: &[(&str, &str, &str, bool)] = &[
        ("plain", "{a: {b: '?*'}}", "{a: {b: x, c: y}}", true),
        ("star", "{a: '*'}", "{a: 1}", true),
        ("star-null", "{a: '*'}", "{a: null}", false),
        ("scalar-list", "{a: '>1'}", "{a: [2, 3]}", true),
        (
            "array-of-maps",
            "{a: [{b: 1}]}",
            "{a: [{b: 1}, {b: 1, c: 2}]}",
            true,
        ),
        (
            "array-one-fails",
            "{a: [{b: 1}]}",
            "{a: [{b: 1}, {b: 2}]}",
            false,
        ),
        ("equality-absent", "{'=(a)': {b: 1}}", "{c: 1}", true),
        ("equality-present", "{'=(a)': {b: 1}}", "{a: {b: 1}}", true),
        ("equality-fails", "{'=(a)': {b: 1}}", "{a: {b: 2}}", false),
        ("negation-absent", "{'X(a)': null}", "{b: 1}", true),
        ("negation-present", "{'X(a)': null}", "{a: 1}", false),
        ("global-absent", "{'<(a)': 1, b: 2}", "{b: 2}", true),
        ("condition-holds", "{'(a)': 1, b: 2}", "{a: 1, b: 2}", true),
        ("condition-absent", "{'(a)': 1, b: 2}", "{b: 2}", false),
        // A skipped element still passes the walk; the shortcut leaves it to the walk.
        (
            "condition-skips",
            "{a: [{'(name)': x, v: 1}]}",
            "{a: [{name: x, v: 1}, {name: z}]}",
            false,
        ),
        ("existence", "{'^(a)': [{b: 1}]}", "{a: [{b: 1}]}", false),
        ("add-anchor", "{'+(a)': 1}", "{a: 1}", false),
        ("structure", "{a: {b: 1}}", "{a: [1]}", false),
        (
            "label-wildcard",
            "{metadata: {labels: {'app*': '?*'}}}",
            "{metadata: {labels: {app: x}}}",
            false,
        ),
        (
            "label-plain",
            "{metadata: {labels: {app: '?*'}}}",
            "{metadata: {labels: {app: x}}}",
            true,
        ),
    ];
    for &(id, pattern, res, expected) in rows {
        let (resource, pattern) = (resource(res), yaml(pattern));
        let plan = Plan::of(&pattern.value);
        let sure = surely_passes(&resource.value, &pattern.value, Some(&plan));
        assert_eq!(sure, expected, "{id}");
        let walk = Walker::default().element(
            &resource.value,
            &pattern.value,
            Some(&plan),
            &PathNode::root(),
        );
        if sure {
            assert!(
                walk.is_ok(),
                "{id}: the walk fails where the shortcut passed"
            );
        }
        if id == "condition-skips" {
            assert!(
                walk.is_ok(),
                "{id}: the walk passes with a skipped element: {walk:?}"
            );
        }
    }
}
