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

/// The hostile names of `testdata/hostile/injection-names.yaml`, as the resources hold them.
const EVIL_NAME: &str = "evil\n::error file=x::pwned";
const EVIL_NAMESPACE: &str = "ns\n::stop-commands::tok";
const RAW_NAME: &str = "raw\u{85}nel\u{2028}ls";
/// The label the injection policy's message quotes: ESC [31m, OSC title + BEL, DEL, NEL, LS.
const EVIL_NOTE: &str = "\u{1b}[31mred\u{1b}]0;title\u{7}\u{7f}\u{85}\u{2028}";

/// `kpol check` of the injection fixture with the policy quoting names and the limits policy.
fn injection_check(format: &str, file: &str) -> Output {
    kpol(&[
        "check",
        "-p",
        "testdata/hostile/injection-policy.yaml",
        "-p",
        "policies/require-resource-limits.yaml",
        "--format",
        format,
        // Names and messages are matched whole: no wrapping.
        "--width",
        "0",
        file,
    ])
}

/// Text that may go to a terminal or a CI log: no control character but line feeds and tabs,
/// no line or paragraph separator, and no line starting with a workflow command unless
/// `commands` allows its prefix.
fn assert_log_safe(what: &str, text: &str, commands: &[&str]) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}')
        })
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in:\n{text}");
    for line in text.lines() {
        assert!(
            !line.starts_with("::") || commands.iter().any(|c| line.starts_with(c)),
            "{what}: a line starts a workflow command: {line:?}"
        );
    }
}

/// `--format human` (and `-v`): every name and message is printed escaped, on its own line
/// prefix; the source excerpt shows the raw NEL and LINE SEPARATOR escaped, carets under them.
#[test]
fn injection_names_are_escaped_in_human_output() {
    let o = injection_check("human", "testdata/hostile/injection-names.yaml");
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_log_safe("human", &text, &[]);
    assert!(
        text.contains("= resource: Pod ns\\n::stop-commands::tok/evil\\n::error file=x::pwned"),
        "{text}"
    );
    assert!(
        text.contains("pod evil\\n::error file=x::pwned (\\u{1b}[31mred\\u{1b}]0;title\\u{7}\\u{7f}\\u{85}\\u{2028}) is not safe"),
        "{text}"
    );
    assert!(
        text.contains(
            "24 |   - name: raw\\u{85}nel\\u{2028}ls\n   |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ /spec/containers/0/resources/\n"
        ),
        "{text}"
    );
    let o = kpol(&[
        "check",
        "-v",
        "-p",
        "testdata/hostile/injection-policy.yaml",
        "testdata/hostile/injection-names.yaml",
    ]);
    assert_log_safe("human -v", &String::from_utf8(o.stdout).unwrap(), &[]);
}

/// A file whose name holds a workflow command: its name is escaped in every line kpol writes
/// about it, in the human and github formats and in `kpol mutate --check` on standard error.
#[cfg(unix)]
#[test]
fn an_injection_file_name_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x\n::error file=y::pwned.yaml");
    std::fs::copy("testdata/hostile/injection-names.yaml", &p).unwrap();
    let file = p.to_str().unwrap();
    let o = injection_check("human", file);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_log_safe("human", &text, &[]);
    assert!(
        text.contains("x\\n::error file=y::pwned.yaml:9:9"),
        "{text}"
    );
    let o = injection_check("github", file);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_log_safe("github", &text, &["::error file="]);
    assert!(
        text.contains("x%0A%3A%3Aerror file=y%3A%3Apwned.yaml,line=9,"),
        "{text}"
    );
    let o = kpol(&["mutate", "-p", crate::LABELS, "--check", file]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_log_safe("mutate stderr", &err, &[]);
    assert!(err.contains("would change: "), "{err}");
    assert!(err.contains("x\\n::error file=y::pwned.yaml"), "{err}");
}

/// `--format github`: one workflow command per line, `%`, CR and LF percent-encoded as the
/// runner decodes them, other control characters escaped; no name starts a line.
#[test]
fn injection_names_cannot_start_workflow_commands() {
    let o = injection_check("github", "testdata/hostile/injection-names.yaml");
    let text = String::from_utf8(o.stdout).unwrap();
    assert_log_safe("github", &text, &["::error file="]);
    for line in text.lines() {
        assert!(
            line.starts_with("::error file=") || line.starts_with("pass: "),
            "{line:?}"
        );
    }
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(
        text.contains("(Pod ns%0A::stop-commands::tok/evil%0A::error file=x::pwned)"),
        "{text}"
    );
    assert!(
        text.contains("(\\u{1b}[31mred\\u{1b}]0;title\\u{7}\\u{7f}\\u{85}\\u{2028})"),
        "{text}"
    );
}

/// JSON and SARIF (serde) carry the names exactly: parsed back, they are the same strings.
#[test]
fn injection_names_round_trip_in_json_and_sarif() {
    let o = injection_check("json", "testdata/hostile/injection-names.yaml");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["resource"]["name"], EVIL_NAME);
    assert_eq!(results[0]["resource"]["namespace"], EVIL_NAMESPACE);
    assert_eq!(results[3]["resource"]["name"], RAW_NAME);
    let message = results[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("pod {EVIL_NAME} ({EVIL_NOTE})")),
        "{message:?}"
    );
    let o = injection_check("sarif", "testdata/hostile/injection-names.yaml");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let texts: Vec<&str> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["message"]["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 4);
    assert!(
        texts[0].contains(&format!("pod {EVIL_NAME} ({EVIL_NOTE})")),
        "{texts:?}"
    );
    assert!(
        texts[3].contains(&format!("(Pod default/{RAW_NAME})")),
        "{texts:?}"
    );
}

/// JUnit: well-formed XML 1.0 (no control character it cannot hold), names escaped in
/// attributes and text alike.
#[test]
fn injection_names_keep_junit_well_formed() {
    let o = injection_check("junit", "testdata/hostile/injection-names.yaml");
    let xml = String::from_utf8(o.stdout).unwrap();
    assert_log_safe("junit", &xml, &[]);
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut names = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Start(e) if e.name().as_ref() == "testcase" => {
                for a in e.attributes() {
                    let a = a.unwrap();
                    if a.key.as_ref() == "name" {
                        names.push(a.value.into_owned());
                    }
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(names.len(), 4, "{xml}");
    assert_eq!(
        names[0],
        "quote-the-name/name-is-safe Pod ns\\n::stop-commands::tok/evil\\n::error file=x::pwned"
    );
    assert_eq!(
        names[3],
        "require-resource-limits/validate-resources Pod default/raw\\u{85}nel\\u{2028}ls"
    );
}

/// The policy report is YAML that holds any character: read back with kpol's own loader, the
/// names and the quoted message are the resources' own.
#[test]
fn injection_names_round_trip_in_the_policy_report() {
    for format in ["policy-report", "policy-report-v1alpha2"] {
        let o = injection_check(format, "testdata/hostile/injection-names.yaml");
        let text = String::from_utf8(o.stdout).unwrap();
        assert_log_safe(format, &text, &[]);
        let docs = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()).unwrap();
        let report = docs[0].root.to_json();
        let results = report["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "{text}");
        let named = |name: &str| {
            results
                .iter()
                .filter(|r| r["resources"][0]["name"] == name)
                .count()
        };
        assert_eq!((named(EVIL_NAME), named(RAW_NAME)), (2, 2), "{text}");
        assert!(
            results
                .iter()
                .any(|r| r["resources"][0]["namespace"] == EVIL_NAMESPACE)
        );
        assert!(results.iter().any(|r| {
            r["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("pod {EVIL_NAME} ({EVIL_NOTE})")))
        }));
    }
}

/// `kpol test`: the table's cells (a resource selector naming the hostile resources, the
/// messages with `--detailed-results`) are escaped.
#[test]
fn injection_names_are_escaped_in_kpol_test_output() {
    let o = kpol(&[
        "test",
        "testdata/hostile/injection-test",
        "--detailed-results",
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_log_safe("kpol test", &text, &[]);
    assert!(
        text.contains("v1/Pod/ns\\n::stop-commands::tok/evil\\n::error file=x::pwned"),
        "{text}"
    );
    assert!(
        text.contains("v1/Pod/default/raw\\u{85}nel\\u{2028}ls"),
        "{text}"
    );
    assert!(
        text.contains("(\\u{1b}[31mred\\u{1b}]0;title\\u{7}"),
        "{text}"
    );
}

/// `--format html`: no raw control, separator or bidirectional character; every name is
/// text, the escape sequences shown as `\u{…}` (docs/OUTPUT.md).
#[test]
fn injection_names_are_escaped_text_in_html() {
    let o = injection_check("html", "testdata/hostile/injection-names.yaml");
    let html = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_log_safe("html", &html, &[]);
    assert!(!html.contains('\u{85}') && !html.contains('\u{202e}'));
    assert!(
        html.contains("<td>evil&#10;::error file=x::pwned</td>"),
        "{html}"
    );
    assert!(html.contains("raw\\u{85}nel\\u{2028}ls"), "{html}");
    assert!(
        html.contains("\\u{1b}[31mred\\u{1b}]0;title\\u{7}\\u{7f}\\u{85}\\u{2028}"),
        "{html}"
    );
}
