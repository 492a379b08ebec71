//! kpol's typed merge against recorded outputs of the real one (`testdata/oracle.json`, whose
//! `source` names the versions): structured-merge-diff's merge over the 1.32 built-in type
//! converters, the deduced converter, and the apiserver's atomic-field check. Results compare
//! as JSON (list order counts, key order does not); errors by their kind and the paths they
//! name.

use serde_json::Value as J;

use super::{Options, SmdError, apply_deduced, apply_with};
use crate::yaml::Node;

const ORACLE: &str = include_str!("testdata/oracle.json");

/// The path an error line names (`path: message`), or the whole line when it names none.
fn error_path(line: &str) -> &str {
    line.split_once(": ").map_or(line, |(p, _)| p)
}

#[test]
fn the_merge_agrees_with_structured_merge_diff() {
    let oracle: J = serde_json::from_str(ORACLE).unwrap();
    let objects = &oracle["objects"];
    let cases = oracle["cases"].as_array().unwrap();
    assert!(cases.len() > 200, "{}", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let object = match &case["object"] {
            J::String(id) => &objects[id],
            inline => inline,
        };
        let patch = &case["patch"];
        let (gv, kind) = (
            case["apiVersion"].as_str().unwrap(),
            case["kind"].as_str().unwrap(),
        );
        let (object, patch) = (Node::from_json(object), Node::from_json(patch));
        let got = if case["file"] == "deduced" {
            apply_deduced(&object, &patch, gv, kind)
        } else {
            let options = Options {
                server_side_apply: case["ssa"] == true,
            };
            apply_with(&object, &patch, gv, kind, options)
        };
        let verdict = match (&case["error"], got) {
            (J::Null, Ok(out)) => (out.to_json() == case["result"])
                .then_some(())
                .ok_or_else(|| format!("got {}\nwant {}", out.to_json(), case["result"])),
            (J::Null, Err(e)) => Err(format!("got error {e}")),
            (J::String(want), Ok(out)) => Err(format!("want error {want}, got {}", out.to_json())),
            (J::String(want), Err(e)) => check_error(want, &e),
            (other, _) => Err(format!("bad case: {other}")),
        };
        if let Err(why) = verdict {
            failures.push(format!("{name}: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Whether kpol names the problem Go names. Go checks a map's keys in its random iteration
/// order and stops at a map's first undeclared field, so with several problems the ones it
/// reports vary from run to run: only a single problem is compared by path.
fn same_problems(detail: &str, errors: &[String]) -> bool {
    if detail.starts_with("errors:") {
        return errors.len() > 1;
    }
    errors.len() == 1 && error_path(&errors[0]) == error_path(detail)
}

fn check_error(want: &str, got: &SmdError) -> Result<(), String> {
    let (class, detail) = want.split_once(": ").unwrap_or((want, ""));
    let ok = match (class, got) {
        ("patch", SmdError::NoType { .. }) => detail.starts_with("no corresponding type"),
        ("patch", SmdError::Patch(errors)) | ("object", SmdError::Object(errors)) => {
            same_problems(detail, errors)
        }
        ("atomic", SmdError::Atomic(paths)) => {
            let mut want: Vec<&str> = detail.split(", ").collect();
            let mut got: Vec<&str> = paths.iter().map(String::as_str).collect();
            want.sort_unstable();
            got.sort_unstable();
            want == got
        }
        _ => false,
    };
    ok.then_some(())
        .ok_or_else(|| format!("want error {want}, got {got:?}"))
}
