//! validate-cases.md sections A (maps, missing keys, null, scalar types) and B (arrays).

#![allow(clippy::unwrap_used, clippy::panic)]

use super::Expect::*;
use super::*;

#[test]
fn a_maps_missing_keys_null_scalar_types() {
    check(&[
        (
            "A1",
            r#"{metadata: {labels: {app: "?*"}}}"#,
            r#"{metadata: {labels: {app: ""}}}"#,
            Fail("/metadata/labels/app/"),
        ),
        (
            "A2",
            r#"{metadata: {labels: {app: "?*"}}}"#,
            "{metadata: {name: web}}",
            Fail("/metadata/labels/"),
        ),
        (
            "A3",
            r#"{spec: {loadBalancerSourceRanges: "*"}}"#,
            "{spec: {type: LoadBalancer}}",
            Fail("/spec/"),
        ),
        ("A4", r#"{spec: {x: "*"}}"#, r#"{spec: {x: ""}}"#, Pass),
        (
            "A5",
            r#"{spec: {x: "*"}}"#,
            "{spec: {x: null}}",
            Fail("/spec/"),
        ),
        ("A6", r#"{spec: {x: "*"}}"#, "{spec: {x: {a: 1}}}", Pass),
        ("A6b", r#"{spec: {x: "*"}}"#, "{spec: {x: [1]}}", Pass),
        ("A6c", r#"{spec: {x: "*"}}"#, "{spec: {x: 0}}", Pass),
        ("A6d", r#"{spec: {x: "*"}}"#, "{spec: {x: false}}", Pass),
        (
            "A7",
            r#"{spec: {"=(x)": "*"}}"#,
            "{spec: {x: {a: 1}}}",
            Fail("/spec/x/"),
        ),
        ("A8", "{spec: {hostNetwork: null}}", "{spec: {}}", Pass),
        ("A9", "{spec: {x: null}}", "{spec: {x: false}}", Pass),
        ("A9b", "{spec: {x: null}}", "{spec: {x: 0}}", Pass),
        ("A9c", "{spec: {x: null}}", r#"{spec: {x: ""}}"#, Pass),
        ("A9d", "{spec: {x: null}}", "{spec: {x: 0.0}}", Pass),
        (
            "A9e",
            "{spec: {x: null}}",
            "{spec: {x: a}}",
            Fail("/spec/x/"),
        ),
        (
            "A9f",
            "{spec: {x: null}}",
            "{spec: {x: {}}}",
            Fail("/spec/x/"),
        ),
        // Corrected: a scalar pattern against a list checks every element, so an empty list
        // passes (validate.go validateResourceElement); the case file says fail.
        ("A9g", "{spec: {x: null}}", "{spec: {x: []}}", Pass),
        (
            "A9h",
            "{spec: {x: null}}",
            "{spec: {x: [1]}}",
            Fail("/spec/x/"),
        ),
        ("A10", r#"{spec: {x: ""}}"#, "{spec: {}}", Fail("/spec/x/")),
        (
            "A11",
            "{spec: {x: {y: 1}}}",
            "{spec: {x: str}}",
            Fail("/spec/x/"),
        ),
        (
            "A12",
            "{spec: {x: true}}",
            r#"{spec: {x: "true"}}"#,
            Fail("/spec/x/"),
        ),
        ("A13", r#"{spec: {x: "true"}}"#, "{spec: {x: true}}", Pass),
        ("A14", "{spec: {x: 1}}", r#"{spec: {x: "1"}}"#, Pass),
        (
            "A14b",
            "{spec: {x: 1}}",
            r#"{spec: {x: "1.0"}}"#,
            Fail("/spec/x/"),
        ),
        ("A15", r#"{spec: {x: "1"}}"#, "{spec: {x: 1}}", Pass),
        ("A16", "{spec: {x: 8.0}}", "{spec: {x: 8}}", Pass),
        (
            "A16b",
            "{spec: {x: 8.1}}",
            "{spec: {x: 8}}",
            Fail("/spec/x/"),
        ),
        (
            "A16c",
            "{spec: {x: 8}}",
            "{spec: {x: 8.1}}",
            Fail("/spec/x/"),
        ),
        ("A17", "{spec: {a: 1}}", "{spec: {a: 1, b: 2}}", Pass),
        (
            "A18",
            "{}",
            "{metadata: {annotations: {test/bar: value1}}}",
            Pass,
        ),
    ]);
}

#[test]
fn b_arrays() {
    check(&[
        (
            "B1",
            r#"{spec: {containers: [{name: "*", image: "!*:latest"}]}}"#,
            r#"{spec: {containers: [{name: a, image: "nginx:1.2"}, {name: b, image: "redis:latest"}]}}"#,
            Fail("/spec/containers/1/image/"),
        ),
        (
            "B2",
            r#"{spec: {containers: [{image: "!*:latest"}]}}"#,
            "{spec: {containers: []}}",
            Pass,
        ),
        (
            "B3",
            r#"{spec: {containers: [{image: "!*:latest"}]}}"#,
            "{spec: {}}",
            Fail("/spec/containers/"),
        ),
        (
            "B4",
            r#"{spec: {a: ["x", "y"]}}"#,
            r#"{spec: {a: ["x", "x"]}}"#,
            Pass,
        ),
        (
            "B4b",
            r#"{spec: {a: ["x", "y"]}}"#,
            r#"{spec: {a: ["y"]}}"#,
            Fail("/spec/a/"),
        ),
        (
            "B5",
            r#"{spec: {a: [{"n": x}, {"n": "y"}]}}"#,
            r#"{spec: {a: [{"n": "y"}]}}"#,
            Fail("/spec/a/0/n/"),
        ),
        (
            "B6",
            "{spec: {a: []}}",
            r#"{spec: {a: ["q"]}}"#,
            Fail("/spec/a/"),
        ),
        (
            "B7",
            r#"{spec: {args: "!*--privileged*"}}"#,
            r#"{spec: {args: ["--a", "--privileged"]}}"#,
            Fail("/spec/args/"),
        ),
        (
            "B8",
            r#"{spec: {supplementalGroups: ">0 & <100001"}}"#,
            r#"{spec: {supplementalGroups: ["2", "5", "10"]}}"#,
            Pass,
        ),
        (
            "B9",
            r#"{spec: {"=(supplementalGroups)": [">0"]}}"#,
            r#"{spec: {supplementalGroups: ["2", "0"]}}"#,
            Fail("/spec/supplementalGroups/"),
        ),
        (
            "B9b",
            r#"{spec: {"=(supplementalGroups)": [">0"]}}"#,
            r#"{spec: {supplementalGroups: ["2", "5"]}}"#,
            Pass,
        ),
    ]);
}
