//! Inline suppressions and baselines end to end (docs/SUPPRESSIONS.md), with kpol's embedded
//! default policies over testdata/suppress and testdata/baseline; `KPOL_TODAY` fixes the day
//! suppressions are judged on.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn kpol(dir: &Path, args: &[&str], today: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .arg("check")
        .arg("--no-config")
        // Reasons and messages are matched whole: no wrapping.
        .args(["--width", "0"])
        .args(args)
        .current_dir(dir)
        .env("KPOL_TODAY", today)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run kpol")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stdout));
    })
}

/// (policy/rule, resource name, result, suppression reason) of every listed result that is
/// not a pass.
fn rows(doc: &Value) -> Vec<(String, String, String, String)> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] != "pass")
        .map(|r| {
            (
                format!(
                    "{}/{}",
                    r["policy"].as_str().unwrap(),
                    r["rule"].as_str().unwrap()
                ),
                r["resource"]["name"].as_str().unwrap().to_owned(),
                r["result"].as_str().unwrap().to_owned(),
                r["suppression"]["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn has(
    rows: &[(String, String, String, String)],
    rule: &str,
    name: &str,
    result: &str,
    reason: &str,
) -> bool {
    rows.iter()
        .any(|r| r.0 == rule && r.1 == name && r.2 == result && r.3 == reason)
}

// The annotation (two entries, one with `until=`), the comment above a document and the
// comment above a field each turn the findings they cover into skips with their reason.
#[test]
fn each_suppression_form_skips_what_it_covers_with_its_reason() {
    let o = kpol(
        root(),
        &["testdata/suppress/forms.yaml", "--format", "json"],
        "2026-12-01",
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = json(&o);
    let rows = rows(&doc);
    // Annotation: the whole Job.
    assert!(
        has(
            &rows,
            "require-resource-limits/autogen-validate-resources",
            "migrate",
            "skip",
            "batch job, limits set by the operator"
        ),
        "{rows:#?}"
    );
    // Not named by the annotation: still a finding.
    assert!(
        has(
            &rows,
            "pod-security-restricted/autogen-restricted",
            "migrate",
            "fail",
            ""
        ),
        "{rows:#?}"
    );
    // Comment above a document, with a wildcard.
    assert!(
        has(
            &rows,
            "pod-security-restricted/restricted",
            "agent",
            "skip",
            "legacy agent, tracked in OPS-123"
        ),
        "{rows:#?}"
    );
    // Comment above a field: the container it stands above...
    assert!(
        has(
            &rows,
            "disallow-latest-tag/validate-image-tag",
            "web",
            "skip",
            "upstream publishes only latest"
        ),
        "{rows:#?}"
    );
    assert!(
        has(
            &rows,
            "pod-security-restricted/restricted",
            "web",
            "fail",
            ""
        ),
        "{rows:#?}"
    );
    // ...and not the other container's failure (web2's is at containers/0, the comment above containers/1).
    assert!(
        has(
            &rows,
            "disallow-latest-tag/validate-image-tag",
            "web2",
            "fail",
            ""
        ),
        "{rows:#?}"
    );
    let suppressed: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["suppression"].is_null())
        .collect();
    assert_eq!(suppressed.len(), 3);
    let s = &suppressed[0]["suppression"];
    assert_eq!(s["origin"], "annotation");
    assert_eq!(s["until"], "2027-03-31");
    assert_eq!(s["was"], "fail");
    assert_eq!(s["line"], 7);
    assert_eq!(suppressed[2]["suppression"]["origin"], "comment");
    assert_eq!(doc["summary"]["suppressed"], 3);
    assert_eq!(doc["summary"]["skip"], 3);
    // The entries that covered nothing are info notes: `require-probes` of the Job (no such
    // finding), and web2's comment above its second container (the failure is at the first).
    let notes: Vec<String> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}:{}",
                d["severity"].as_str().unwrap(),
                d["code"].as_str().unwrap(),
                d["location"]["start"]["line"],
                d["location"]["start"]["column"]
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            "info unused-suppression 7:105",
            "info unused-suppression 58:17"
        ]
    );

    // Human output lists them with the reason, and the summary counts them.
    let o = kpol(root(), &["testdata/suppress/forms.yaml"], "2026-12-01");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("skip[disallow-latest-tag/validate-image-tag]: suppressed (# kpol:ignore, line 37, until 2027-06-30): upstream publishes only latest (Pod shop/web)\n --> testdata/suppress/forms.yaml:39:12\n"), "{text}");
    assert!(text.contains("skip: 3 (3 suppressed)"), "{text}");
}

// SARIF keeps a suppressed result, with its level, and says why in `suppressions`.
#[test]
fn sarif_results_carry_in_source_suppressions() {
    let o = kpol(
        root(),
        &["testdata/suppress/forms.yaml", "--format", "sarif"],
        "2026-12-01",
    );
    let doc = json(&o);
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let suppressed: Vec<&Value> = results
        .iter()
        .filter(|r| r.get("suppressions").is_some())
        .collect();
    assert_eq!(suppressed.len(), 3);
    let r = suppressed
        .iter()
        .find(|r| r["ruleId"] == "disallow-latest-tag/validate-image-tag")
        .unwrap();
    assert_eq!(
        r["suppressions"],
        serde_json::json!([{"kind": "inSource", "justification": "upstream publishes only latest"}])
    );
    assert_eq!(r["level"], "warning");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        39
    );
    assert!(r["partialFingerprints"]["kpolFinding/v2"].is_string());
    // Unsuppressed results have none.
    assert!(
        results
            .iter()
            .filter(|r| r.get("suppressions").is_none())
            .count()
            >= 5
    );
}

// Past its `until=` day an entry is a warning of its own and the finding is reported again;
// on the day itself it still holds.
#[test]
fn an_expired_suppression_warns_and_the_finding_comes_back() {
    let args = ["testdata/suppress/expired.yaml", "--format", "json"];
    let doc = json(&kpol(root(), &args, "2026-02-01"));
    let rows = rows(&doc);
    assert!(
        has(
            &rows,
            "disallow-latest-tag/validate-image-tag",
            "old",
            "fail",
            ""
        ),
        "{rows:#?}"
    );
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "expired-suppression");
    assert_eq!(d["severity"], "warning");
    assert_eq!(
        d["location"]["start"],
        serde_json::json!({"line": 8, "column": 17})
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("expired on 2026-01-31 (today is 2026-02-01)")
    );

    let doc = json(&kpol(root(), &args, "2026-01-31"));
    let rows = self::rows(&doc);
    assert!(
        has(
            &rows,
            "disallow-latest-tag/validate-image-tag",
            "old",
            "skip",
            "until the January release"
        ),
        "{rows:#?}"
    );
    assert!(doc["diagnostics"].as_array().unwrap().is_empty());

    // A KPOL_TODAY that is no date is refused.
    let o = kpol(root(), &args, "tomorrow");
    assert_eq!(o.status.code(), Some(2));
}

// An entry without a reason is refused: an error at its line and column, exit 2.
#[test]
fn a_suppression_without_a_reason_is_refused_at_its_place() {
    let o = kpol(
        root(),
        &["testdata/suppress/no-reason.yaml", "--format", "concise"],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("testdata/suppress/no-reason.yaml:8:17: error[invalid-suppression]: suppression `disallow-latest-tag` has no reason: write `disallow-latest-tag -- <why>`\n"), "{text}");
}

// `--no-inline-ignores` reports every finding, for an audit.
#[test]
fn no_inline_ignores_reports_everything() {
    let doc = json(&kpol(
        root(),
        &[
            "testdata/suppress/forms.yaml",
            "--format",
            "json",
            "--no-inline-ignores",
        ],
        "2026-12-01",
    ));
    assert!(doc["summary"].get("suppressed").is_none());
    assert_eq!(doc["summary"]["skip"], 0);
    assert!(has(
        &rows(&doc),
        "disallow-latest-tag/validate-image-tag",
        "web",
        "fail",
        ""
    ));
    // The refused entry is not read either.
    let o = kpol(
        root(),
        &["testdata/suppress/no-reason.yaml", "--no-inline-ignores"],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(1));
}

/// A scratch copy of testdata/baseline.
fn workspace(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["app.yaml", "db.yaml"] {
        std::fs::copy(root().join("testdata/baseline").join(f), dir.join(f)).unwrap();
    }
    dir
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

// A baseline accepts today's findings by fingerprint: after one file gains a violation and
// another is edited elsewhere (its lines shifted), `--baseline` reports only the new one.
#[test]
fn a_baseline_reports_only_new_findings_when_lines_move() {
    let ws = workspace("baseline-new");
    let o = kpol(
        &ws,
        &[".", "--write-baseline", "baseline.json"],
        "2026-12-01",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("baseline.json")).unwrap()).unwrap();
    assert_eq!(written["kpolBaseline"], 1);
    let entries = written["findings"].as_array().unwrap();
    let recorded = entries.len();
    assert!(recorded >= 5, "{written:#}");
    // Sorted by file, readable fields beside each fingerprint.
    let files: Vec<&str> = entries
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    assert!(
        files.windows(2).all(|w| w[0] <= w[1]) && files[0] == "app.yaml",
        "{files:?}"
    );
    let tag = entries
        .iter()
        .find(|e| e["policy"] == "disallow-latest-tag")
        .unwrap();
    assert_eq!(tag["resource"], "Pod shop/web");
    assert_eq!(tag["path"], "/spec/containers/0/image/");

    // The same fingerprint as SARIF's partialFingerprints.
    let sarif = json(&kpol(&ws, &[".", "--format", "sarif"], "2026-12-01"));
    let prints: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["partialFingerprints"]["kpolFinding/v2"].as_str().unwrap())
        .collect();
    for e in entries {
        assert!(prints.contains(&e["fingerprint"].as_str().unwrap()), "{e}");
    }

    // Lines shifted in db.yaml, a new violation (a second container with `latest`) in app.yaml.
    edit(
        &ws.join("db.yaml"),
        "metadata:\n",
        "metadata:\n  labels:\n    team: data\n    tier: storage\n",
    );
    edit(
        &ws.join("app.yaml"),
        "spec:\n",
        "spec:\n  hostNetwork: true\n",
    );
    let o = kpol(
        &ws,
        &[".", "--baseline", "baseline.json", "--format", "json"],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(1));
    let doc = json(&o);
    // The one new violation (hostNetwork) fails two policies; nothing else is reported.
    let new: Vec<String> = self::rows(&doc)
        .into_iter()
        .map(|r| format!("{} {} {}", r.0, r.1, r.2))
        .collect();
    assert_eq!(
        new,
        [
            "disallow-host-namespaces/host-namespaces web fail",
            "pod-security-baseline/baseline web fail"
        ]
    );
    for r in doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] != "pass")
    {
        assert_eq!(r["file"], "./app.yaml");
        assert_eq!(r["start"]["line"], 7, "{r}");
    }
    assert_eq!(doc["summary"]["baselined"], recorded);
    assert_eq!(doc["summary"]["fail"], 2);
    let o = kpol(&ws, &[".", "--baseline", "baseline.json"], "2026-12-01");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("; baselined: {recorded}")), "{text}");
}

// `--baseline-strict` fails when a recorded finding is gone, so the baseline only shrinks;
// without it, fixing a baselined finding passes.
#[test]
fn a_strict_baseline_fails_on_findings_that_are_gone() {
    let ws = workspace("baseline-strict");
    let o = kpol(
        &ws,
        &[".", "--write-baseline", "baseline.json"],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(0));
    let o = kpol(
        &ws,
        &[".", "--baseline", "baseline.json", "--baseline-strict"],
        "2026-12-01",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    edit(&ws.join("app.yaml"), "app:latest", "app:1.2.3");
    let o = kpol(&ws, &[".", "--baseline", "baseline.json"], "2026-12-01");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = kpol(
        &ws,
        &[
            ".",
            "--baseline",
            "baseline.json",
            "--baseline-strict",
            "--format",
            "json",
        ],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(1));
    let doc = json(&o);
    assert_eq!(doc["summary"]["baselineStale"], 1);
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "stale-baseline");
    assert_eq!(
        d["message"],
        "app.yaml: disallow-latest-tag/validate-image-tag on Pod shop/web at /spec/containers/0/image/ is no longer found; remove it from the baseline (--write-baseline)"
    );
    // A file that is not a baseline is refused.
    std::fs::write(ws.join("bad.json"), "{\"findings\": 3}").unwrap();
    assert_eq!(
        kpol(&ws, &[".", "--baseline", "bad.json"], "2026-12-01")
            .status
            .code(),
        Some(2)
    );
}

// `baseline:` of .kpol.yaml is the default `--baseline`, relative to the config's directory.
#[test]
fn the_config_file_names_the_baseline() {
    let ws = workspace("baseline-config");
    let o = kpol(
        &ws,
        &[".", "--write-baseline", "recorded.json"],
        "2026-12-01",
    );
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(
        ws.join(".kpol.yaml"),
        "version: 1\nbaseline: recorded.json\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["check", ".", "--format", "json"])
        .current_dir(&ws)
        .env("KPOL_TODAY", "2026-12-01")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = json(&o);
    assert!(doc["summary"]["baselined"].as_u64().unwrap() >= 5);
    assert_eq!(doc["summary"]["fail"], 0);
}

// Every format shows a suppressed result with its reason.
#[test]
fn every_format_shows_the_reason() {
    for format in [
        "human",
        "concise",
        "json",
        "sarif",
        "junit",
        "github",
        "policy-report",
        "policy-report-v1alpha2",
        "html",
    ] {
        let o = kpol(
            root(),
            &["testdata/suppress/forms.yaml", "--format", format],
            "2026-12-01",
        );
        assert_eq!(o.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&o.stdout);
        for reason in [
            "upstream publishes only latest",
            "legacy agent, tracked in OPS-123",
            "batch job, limits set by the operator",
        ] {
            assert!(text.contains(reason), "{format}: {reason}\n{text}");
        }
    }
}
