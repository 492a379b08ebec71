//! validate-cases.md section C: operators, ranges, quantities, durations, wildcards.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::Expect::*;
use super::*;

#[test]
fn c_scalar_expressions() {
    check(&[
        (
            "C1",
            r#"{spec: {replicas: ">=2"}}"#,
            "{spec: {replicas: 1}}",
            Fail("/spec/replicas/"),
        ),
        (
            "C1b",
            r#"{spec: {replicas: ">=2"}}"#,
            "{spec: {replicas: 2}}",
            Pass,
        ),
        (
            "C2",
            r#"{spec: {memory: "<=2Gi"}}"#,
            r#"{spec: {memory: "2048Mi"}}"#,
            Pass,
        ),
        (
            "C2b",
            r#"{spec: {memory: "<=2Gi"}}"#,
            r#"{spec: {memory: "3Gi"}}"#,
            Fail("/spec/memory/"),
        ),
        ("C3", r#"{spec: {memory: "<=2Gi"}}"#, "{spec: {}}", Pass),
        (
            "C4",
            r#"{spec: {memory: ">0"}}"#,
            "{spec: {}}",
            Fail("/spec/memory/"),
        ),
        ("C5", r#"{spec: {x: "<1h"}}"#, "{spec: {}}", Pass),
        ("C5b", r#"{spec: {x: "0-10"}}"#, "{spec: {}}", Pass),
        ("C5c", r#"{spec: {x: ">=0"}}"#, "{spec: {}}", Pass),
        ("C5d", r#"{spec: {x: "0"}}"#, "{spec: {}}", Pass),
        (
            "C6",
            r#"{spec: {cpu: "<=500m"}}"#,
            r#"{spec: {cpu: "1"}}"#,
            Fail("/spec/cpu/"),
        ),
        (
            "C6b",
            r#"{spec: {cpu: "<=500m"}}"#,
            "{spec: {cpu: 0.25}}",
            Pass,
        ),
        (
            "C7",
            r#"{spec: {timeout: ">=1h30m"}}"#,
            r#"{spec: {timeout: "90m"}}"#,
            Pass,
        ),
        (
            "C8",
            r#"{spec: {port: "1-1024"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        (
            "C8b",
            r#"{spec: {port: "1-1024"}}"#,
            "{spec: {port: 443}}",
            Pass,
        ),
        (
            "C9",
            r#"{spec: {port: "1024!-65535"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        ("C10", r#"{spec: {x: "-10--8"}}"#, "{spec: {x: -9}}", Pass),
        (
            "C11",
            r#"{spec: {x: "10-20"}}"#,
            r#"{spec: {x: "10-20"}}"#,
            Pass,
        ),
        (
            "C12",
            r#"{spec: {x: "2020-01"}}"#,
            r#"{spec: {x: "2020-02"}}"#,
            Fail("/spec/x/"),
        ),
        ("C13", r#"{spec: {x: "a | b"}}"#, "{spec: {x: b}}", Pass),
        (
            "C14",
            r#"{spec: {x: ">1 & <5 | 10"}}"#,
            "{spec: {x: 10}}",
            Pass,
        ),
        (
            "C14b",
            r#"{spec: {x: ">1 & <5 | 10"}}"#,
            "{spec: {x: 7}}",
            Fail("/spec/x/"),
        ),
        (
            "C15",
            r#"{spec: {image: "!nginx"}}"#,
            "{spec: {}}",
            Fail("/spec/image/"),
        ),
        (
            "C16",
            r#"{spec: {x: "!0"}}"#,
            "{spec: {}}",
            Fail("/spec/x/"),
        ),
        ("C17", r#"{spec: {x: "?"}}"#, r#"{spec: {x: "é"}}"#, Pass),
        (
            "C17b",
            r#"{spec: {x: "?"}}"#,
            r#"{spec: {x: "ab"}}"#,
            Fail("/spec/x/"),
        ),
        (
            "C17c",
            r#"{spec: {x: "my-?-bucket"}}"#,
            r#"{spec: {x: "my--bucket"}}"#,
            Fail("/spec/x/"),
        ),
        (
            "C18",
            r#"{spec: {port: "8?"}}"#,
            "{spec: {port: 80}}",
            Fail("/spec/port/"),
        ),
        (
            "C19",
            r#"{spec: {port: "80*"}}"#,
            "{spec: {port: 8080}}",
            Fail("/spec/port/"),
        ),
        (
            "C19b",
            r#"{spec: {port: "8*"}}"#,
            "{spec: {port: 8080}}",
            Pass,
        ),
        ("C20", r#"{spec: {port: "80"}}"#, "{spec: {port: 80}}", Pass),
        (
            "C20b",
            r#"{spec: {port: "!80"}}"#,
            "{spec: {port: 80}}",
            Fail("/spec/port/"),
        ),
        (
            "C21",
            r#"{spec: {version: ">1.4.0"}}"#,
            r#"{spec: {version: "1.4.1"}}"#,
            Fail("/spec/version/"),
        ),
        (
            "C22",
            r#"{spec: {a: "1Gi", b: "5m", c: "100m"}}"#,
            r#"{spec: {a: "1024Mi", b: "300s", c: "0.1"}}"#,
            Pass,
        ),
        (
            "C23",
            r#"{spec: {x: "a|b"}}"#,
            r#"{spec: {x: "a|b"}}"#,
            Pass,
        ),
        ("C23b", r#"{spec: {x: "a|b"}}"#, r#"{spec: {x: "a"}}"#, Pass),
    ]);
}
