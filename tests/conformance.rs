//! The conformance ratchet: `kpol test` over the Kyverno policy library's own test files,
//! against a committed list of the test files known to fail
//! (`tests/conformance-known-failures.txt`, `path: reason`). An unlisted failure fails this
//! test, and so does a listed file that now passes (or no longer exists): the list only
//! shrinks. `KPOL_CONFORMANCE_BLESS=1` rewrites the list from the current results, keeping
//! the reasons already written (`KPOL_CONFORMANCE_BLESS=reasons` refreshes them too). The library is found through `KPOL_CONFORMANCE_DIR`
//! (`.ci/run` sets it); without it the test says it is skipped and passes.
//!
//! Also here: `kpol test` on kpol's own small fixtures (`testdata/test/`).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const KNOWN: &str = "tests/conformance-known-failures.txt";

fn kpol_test(args: &[&str]) -> (i32, Value, String) {
    let run = common::kpol_test(args);
    (run.code.unwrap_or(-1), run.json, run.stderr)
}

/// Known failures: `relative/path/kyverno-test.yaml: reason` per line; `#` comments.
fn read_known(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(": ") {
            Some((p, r)) => (p.to_owned(), r.to_owned()),
            None => (l.trim_end_matches(':').to_owned(), String::new()),
        })
        .collect()
}

fn write_known(path: &Path, failing: &BTreeMap<String, String>) {
    let mut s = String::from(
        "# Kyverno policy library test files that kpol does not pass yet (tests/conformance.rs).\n\
         # `path: reason`; paths relative to KPOL_CONFORMANCE_DIR. This list only shrinks:\n\
         # regenerate with `KPOL_CONFORMANCE_BLESS=1 cargo test --test conformance` (reasons\n\
         # already written are kept). See docs/TEST-FORMAT.md.\n",
    );
    for (p, r) in failing {
        s.push_str(&format!("{p}: {r}\n"));
    }
    std::fs::write(path, s).expect("write the known-failures list");
}

#[test]
fn kyverno_policy_library_ratchet() {
    let Some(dir) = std::env::var_os("KPOL_CONFORMANCE_DIR").map(PathBuf::from) else {
        eprintln!("conformance ratchet skipped: KPOL_CONFORMANCE_DIR is not set");
        return;
    };
    if !dir.is_dir() {
        eprintln!(
            "conformance ratchet skipped: {} is not a directory",
            dir.display()
        );
        return;
    }
    let dir_arg = dir.to_string_lossy().into_owned();
    let (_, json, stderr) = kpol_test(&[&dir_arg]);
    let files = json["files"].as_array().expect("files array");
    assert!(!files.is_empty(), "no test files found; stderr:\n{stderr}");
    let prefix = format!("{}/", dir_arg.trim_end_matches('/'));
    let mut failing = BTreeMap::new();
    let mut passing = Vec::new();
    for f in files {
        let path = f["file"].as_str().unwrap_or_default();
        let rel = path.strip_prefix(&prefix).unwrap_or(path).to_owned();
        if f["ok"].as_bool() == Some(true) {
            passing.push(rel);
        } else {
            // Paths in reasons are made relative so the list reads the same on every machine.
            let reason = f["reason"]
                .as_str()
                .unwrap_or("failed")
                .replace('\n', " ")
                .replace(&prefix, "");
            failing.insert(rel, reason);
        }
    }
    let t = &json["totals"];
    eprintln!(
        "conformance: {}/{} test files pass, {}/{} rows ok ({} unsupported)",
        t["files_passed"], t["files"], t["rows_ok"], t["rows"], t["unsupported"]
    );

    let known_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(KNOWN);
    let known = read_known(&known_path);
    let bless = std::env::var("KPOL_CONFORMANCE_BLESS").unwrap_or_default();
    if bless == "1" || bless == "reasons" {
        // `1` keeps the reasons already written (they may be hand-edited); `reasons`
        // rewrites them all from the current results.
        let blessed: BTreeMap<String, String> = failing
            .into_iter()
            .map(|(p, r)| match known.get(&p) {
                Some(k) if !k.is_empty() && bless == "1" => (p, k.clone()),
                _ => (p, r),
            })
            .collect();
        write_known(&known_path, &blessed);
        eprintln!(
            "conformance: wrote {} known failures to {KNOWN}",
            blessed.len()
        );
        return;
    }

    let new: Vec<String> = failing
        .iter()
        .filter(|(p, _)| !known.contains_key(*p))
        .map(|(p, r)| format!("  {p}: {r}"))
        .collect();
    let fixed: Vec<String> = known
        .keys()
        .filter(|p| !failing.contains_key(*p))
        .map(|p| {
            let why = if passing.contains(p) {
                "passes now"
            } else {
                "no such test file"
            };
            format!("  {p} ({why})")
        })
        .collect();
    let mut msg = String::new();
    if !new.is_empty() {
        msg.push_str(&format!(
            "{} test file(s) fail that are not in {KNOWN}:\n{}\n",
            new.len(),
            new.join("\n")
        ));
    }
    if !fixed.is_empty() {
        msg.push_str(&format!(
            "{} test file(s) listed in {KNOWN} no longer fail — remove them (the list only shrinks):\n{}\n",
            fixed.len(),
            fixed.join("\n")
        ));
    }
    if !msg.is_empty() {
        msg.push_str("To accept the current results: KPOL_CONFORMANCE_BLESS=1 cargo test --test conformance\n");
        panic!("{msg}");
    }
}

// ---- kpol's own fixtures (testdata/test/) ----

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/test")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `(rule, resource, actual, ok, reason)` of every row of the first file.
fn rows_of(json: &Value) -> Vec<(String, String, String, bool, String)> {
    common::rows_of(json)
        .into_iter()
        .map(|r| (r.rule, r.resource, r.actual, r.ok, r.reason))
        .collect()
}

// The row rules of cli-compat.md §8 on a small test: Excluded, Not found, Invalid Policy,
// a CEL policy evaluated on the mutated resource, a mutate rule evaluated, and the fallback to
// every resource when a name matches nothing.
#[test]
fn fixture_rows_follow_kyverno_rules() {
    let (code, json, _) = kpol_test(&[&fixture("rows")]);
    assert_eq!(code, 1, "rows failed, nothing incomplete");
    let rows = rows_of(&json);
    let row = |i: usize| rows[i].clone();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        row(0),
        (
            s("check-team"),
            s("v1/Service/apps/frontend"),
            s("excluded"),
            true,
            s("")
        )
    );
    assert_eq!(
        row(1),
        (
            s("check-team"),
            s("v1/Pod/apps/labelled"),
            s("not found"),
            false,
            s("Not found")
        )
    );
    assert_eq!(
        row(2),
        (
            s("any-rule"),
            s("v1/Pod/apps/labelled"),
            s("invalid policy"),
            true,
            s("")
        )
    );
    // The ValidatingPolicy is evaluated (crate::vpol) on the resource as add-owner mutated it.
    assert!(row(3).3);
    assert_eq!(row(3).4, "");
    assert_eq!(
        row(4),
        (
            s("add-owner-label"),
            s("v1/Pod/default/unlabelled"),
            s("pass"),
            true,
            s("")
        )
    );
    // `typo` names no resource: all three are checked (two Pods mutated, a Service excluded).
    let fallback: Vec<_> = rows[5..].iter().map(|r| (r.1.as_str(), r.3)).collect();
    assert_eq!(
        fallback,
        [
            ("v1/Pod/apps/labelled", true),
            ("v1/Pod/default/unlabelled", true),
            ("v1/Service/apps/frontend", true)
        ]
    );
    assert_eq!(json["totals"]["rows"], 8);
    assert_eq!(json["totals"]["skip"], 3);
}

// validate.pattern through the engine: pass and fail rows, autogen rule names for a
// Deployment and a CronJob, `ns/name` resources, and fail read as warn for an unscored policy.
#[test]
fn fixture_pattern_rows_pass() {
    let (code, json, stderr) = kpol_test(&[&fixture("pattern")]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<(String, String, String, bool)> = rows_of(&json)
        .into_iter()
        .map(|r| (r.0, r.1, r.2, r.3))
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        rows,
        [
            (
                s("check-team"),
                s("v1/Pod/default/good-pod"),
                s("pass"),
                true
            ),
            (
                s("autogen-cronjob-check-team"),
                s("batch/v1/CronJob/default/good-cron"),
                s("pass"),
                true
            ),
            (
                s("check-team"),
                s("v1/Pod/default/bad-pod"),
                s("fail"),
                true
            ),
            (
                s("autogen-check-team"),
                s("apps/v1/Deployment/prod/bad-deploy"),
                s("fail"),
                true
            ),
            (s("no-latest"), s("v1/Pod/default/bad-pod"), s("warn"), true),
        ]
    );
}

// A test file of Kyverno ≤ 1.14 (top-level name; resource/status/namespace) still runs.
#[test]
fn fixture_legacy_fields_are_accepted_with_a_warning() {
    let (code, json, _) = kpol_test(&[&fixture("legacy")]);
    assert_eq!(code, 0);
    let file = &json["files"][0];
    assert_eq!(file["ok"], true);
    let warnings = file["warnings"].as_array().expect("warnings");
    assert!(warnings.iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.contains("deprecated result field(s) resource, status, namespace"))
    }));
    assert_eq!(rows_of(&json)[0].1, "v1/Service/apps/frontend");
}

// A bad test names the file and line:column; the file's other test and the other files still
// run, and the exit code says the run was incomplete.
#[test]
fn fixture_broken_test_is_reported_and_the_rest_still_runs() {
    let (code, json, stderr) = kpol_test(&[&fixture("")]);
    assert_eq!(code, 2, "{stderr}");
    let files = json["files"].as_array().expect("files");
    let names: Vec<&str> = files.iter().filter_map(|f| f["file"].as_str()).collect();
    assert_eq!(names.len(), 18);
    assert!(names[0].ends_with("broken/kyverno-test.yaml"), "{names:?}");
    let reason = files[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.ends_with("broken/kyverno-test.yaml:22:1: test: unknown field \"resource\""),
        "{reason}"
    );
    let first_test_rows = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["test"] == "first-test-runs")
        .count();
    assert_eq!(first_test_rows, 1);
}

// Parallel evaluation does not change a byte of the output.
#[test]
fn fixture_output_is_identical_for_any_thread_count() {
    let run = |j: &str| {
        Command::new(env!("CARGO_BIN_EXE_kpol"))
            .args(["-j", j, "test", &fixture(""), "--detailed-results"])
            .output()
            .expect("run kpol")
    };
    let (a, b) = (run("1"), run("4"));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.status.code(), b.status.code());
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(
        text.contains("\nTest Summary: 94 tests passed and 7 tests failed\n"),
        "{text}"
    );
}

/// MutatingPolicy rows (crate::mpol): no response where its simple constraints do not match,
/// the patched resource compared, classic validate rules on the resource before it.
#[test]
fn fixture_mutating_policy_rows() {
    let (code, json, _) = kpol_test(&[&fixture("mpol")]);
    assert_eq!(code, 1, "the Not found row fails");
    let rows = rows_of(&json);
    let s = |x: &str| x.to_owned();
    assert_eq!(
        rows,
        [
            (
                s(""),
                s("v1/Pod/default/p"),
                s("not found"),
                false,
                s("Not found")
            ),
            (s(""), s("v1/ConfigMap/default/c"), s("pass"), true, s("")),
            (s("r"), s("v1/ConfigMap/default/c"), s("fail"), true, s("")),
        ]
    );
}

// A policy field its kind's CRD does not declare: Kyverno's strict decoding refuses the file,
// so the test does not run (and is never a pass).
#[test]
fn a_policy_with_an_unknown_field_fails_its_test() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write =
        |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
    write(
        "policy.yaml",
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: require-team\nspec:\n  rules:\n  - name: check-team\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      messag: team label required\n      pattern:\n        metadata:\n          labels:\n            team: \"?*\"\n",
    );
    write(
        "resource.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    team: a\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
    );
    write(
        "kyverno-test.yaml",
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\npolicies: [policy.yaml]\nresources: [resource.yaml]\nresults:\n- policy: require-team\n  rule: check-team\n  resources: [p]\n  kind: Pod\n  result: pass\n",
    );
    let (code, json, stderr) = kpol_test(&[dir.path().to_str().expect("utf-8 path")]);
    assert_ne!(code, 0, "{stderr}");
    let reason = json["files"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("policy.yaml:13:7") && reason.contains("failed to load policies"),
        "{reason}"
    );
}

// DeletingPolicy rows (testdata/test/dpol, after Kyverno v1.19.0's test-deleting-policy):
// pass when the conditions hold, fail when one does not or an exception keeps the resource,
// Not found when the constraints or the namespaced policy's namespace exclude it.
#[test]
fn fixture_dpol_rows() {
    let (code, json, _) = kpol_test(&[&fixture("dpol")]);
    assert_eq!(code, 1, "the Not found rows fail");
    let rows = rows_of(&json);
    let s = |x: &str| x.to_owned();
    let ok =
        |rule: &str, resource: &str, actual: &str| (s(rule), s(resource), s(actual), true, s(""));
    let not_found = |resource: &str| (s(""), s(resource), s("not found"), false, s("Not found"));
    assert_eq!(
        rows,
        [
            ok("old-test-pods", "v1/Pod/test/old-1", "pass"),
            ok("old-test-pods", "v1/Pod/test/new-1", "fail"),
            ok("old-test-pods", "v1/Pod/test/keep-1", "fail"),
            not_found("v1/ConfigMap/test/settings"),
            ok("in-test", "v1/Pod/test/old-1", "pass"),
            not_found("v1/Pod/other/old-2"),
        ]
    );
}

// ImageValidatingPolicy rows offline (testdata/test/ivpol): the digest check fails, a matched
// pinned image needs the registry (error), no matched image passes, an exception skips, and
// false matchConditions leave no response (Not found).
#[test]
fn fixture_ivpol_rows() {
    let (code, json, _) = kpol_test(&[&fixture("ivpol")]);
    assert_eq!(code, 1, "the Not found row fails");
    let rows = rows_of(&json);
    let s = |x: &str| x.to_owned();
    let ok =
        |rule: &str, resource: &str, actual: &str| (s(rule), s(resource), s(actual), true, s(""));
    assert_eq!(
        rows,
        [
            ok("ghcr-images", "v1/Pod/default/tagged", "fail"),
            ok("evaluation", "v1/Pod/default/pinned", "error"),
            ok("ghcr-images", "v1/Pod/default/elsewhere", "pass"),
            ok("exception", "v1/Pod/default/excepted", "skip"),
            (
                s(""),
                s("v1/Pod/default/not-prod"),
                s("not found"),
                false,
                s("Not found")
            ),
        ]
    );
}

// Image data from a test's context file (testdata/test/image-data; rows as Kyverno v1.19.0's
// CLI gives them): ValidatingPolicies read `image.GetMetadata` from `spec.images` (an image
// the file lacks is an error, an entry without `image` answers for ""), while an
// ImageValidatingPolicy errors on every image it matches (Kyverno fetches registry data
// first) and passes a Pod with no matched image.
#[test]
fn fixture_image_data_rows() {
    let (code, json, _) = kpol_test(&[&fixture("image-data")]);
    assert_eq!(code, 0, "every row as expected");
    let rows = rows_of(&json);
    let actual = |rule: &str, resource: &str| {
        let found: Vec<&str> = rows
            .iter()
            .filter(|r| r.0 == rule && r.1 == format!("v1/Pod/default/{resource}"))
            .map(|r| r.2.as_str())
            .collect();
        found.join(",")
    };
    assert_eq!(rows.len(), 18, "{rows:?}");
    assert!(rows.iter().all(|r| r.3), "{rows:?}");
    assert_eq!(actual("", "blank"), "pass,pass");
    assert_eq!(actual("", "arm"), "fail,pass");
    assert_eq!(actual("", "unknown"), "error,error");
    assert_eq!(actual("ghcr-arch", "unknown"), "pass");
    assert_eq!(actual("evaluation", "app"), "error");
    assert_eq!(actual("evaluation", "arm"), "error");
}

// What image.GetMetadata returns for context-file entries (testdata/test/image-data-scalars):
// each row's message is the one Kyverno v1.19.0's CLI gives (image|resolvedImage|registry|
// repository|tag|digest|config absent|config.a a double|field count).
#[test]
fn fixture_image_data_scalars() {
    let (code, json, _) = kpol_test(&[&fixture("image-data-scalars"), "--detailed-results"]);
    assert_eq!(code, 0);
    let messages: Vec<(String, String)> = common::rows_of(&json)
        .into_iter()
        .map(|r| (r.resource, r.message))
        .collect();
    let want = [
        ("a", "1.1|1e-05|true|12|3.1415927|1.234567e+06|true|false|6"),
        ("c", "x||||<none>|<none>|false|true|5"),
        ("d", "true||1000|31|8|<none>|true|false|5"),
        ("e", "z||true||1e+30|100000|true|false|6"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(r, m)| (format!("v1/Pod/default/{r}"), (*m).to_owned()))
        .collect();
    assert_eq!(messages, want);
}

// ClusterPolicy validate.cel without Kyverno's CEL libraries (testdata/test/validate-cel-libs,
// rows and messages as Kyverno v1.19.0's CLI gives them): `image(…)`, `image.GetMetadata`,
// `resource.List` and `json.Unmarshal` are compile errors there (fail), each undeclared name
// an error with its line and caret; a rule without them passes. A ValidatingAdmissionPolicy
// calling `image(…)` is an error with the same compiler text.
#[test]
fn fixture_validate_cel_has_no_kyverno_libraries() {
    let (code, json, _) = kpol_test(&[&fixture("validate-cel-libs"), "--detailed-results"]);
    assert_eq!(code, 0);
    let rows = common::rows_of(&json);
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.rule.as_str(), r.actual.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("img", "fail"),
            ("meta", "fail"),
            ("res", "fail"),
            ("parsejson", "fail"),
            ("plain", "pass"),
            ("vap", "error")
        ]
    );
    let expr =
        "object.spec.containers.all(c, image.GetMetadata(c.image).config.architecture == 'amd64')";
    assert_eq!(
        rows[1].message,
        format!(
            "compilation error: compilation failed: ERROR: <input>:1:31: undeclared reference to \
             'image' (in container '')\n | {expr}\n | {}^\nERROR: <input>:1:48: undeclared \
             reference to 'GetMetadata' (in container '')\n | {expr}\n | {}^",
            ".".repeat(30),
            ".".repeat(47)
        )
    );
    assert!(
        rows[2].message.starts_with(
            "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'resource' (in container '')"
        ),
        "{}",
        rows[2].message
    );
    assert!(
        rows[5].message.starts_with(
            "compilation error: compilation failed: ERROR: <input>:1:36: undeclared reference to 'image' (in container '')"
        ),
        "{}",
        rows[5].message
    );
}

// MutatingAdmissionPolicy rows (testdata/test/mapol): a binding's matchResources select, the
// patched resource is compared, false matchConditions skip, a resource no binding selects
// has no response (Not found), and a ValidatingPolicy sees what the MAP added.
#[test]
fn fixture_mapol_rows() {
    let (code, json, _) = kpol_test(&[&fixture("mapol")]);
    assert_eq!(code, 1, "the Not found row fails");
    let rows = rows_of(&json);
    let s = |x: &str| x.to_owned();
    assert_eq!(
        rows,
        [
            (
                s("add-owner"),
                s("v1/ConfigMap/default/team-a"),
                s("pass"),
                true,
                s("")
            ),
            (
                s("add-owner"),
                s("v1/ConfigMap/default/frozen"),
                s("skip"),
                true,
                s("")
            ),
            (
                s(""),
                s("v1/ConfigMap/default/team-b"),
                s("not found"),
                false,
                s("Not found")
            ),
            (
                s(""),
                s("v1/ConfigMap/default/team-a"),
                s("pass"),
                true,
                s("")
            ),
        ]
    );
}

// ValidatingPolicies that match nothing (testdata/test/vpol-unmatched, rows as the Kyverno
// v1.19.0 CLI gives them): an object or namespace selector, two resource rules or
// resourceNames keep the empty response (Excluded, whatever was expected); one plain
// resource rule drops it (Not found).
#[test]
fn fixture_vpol_unmatched_rows() {
    let (code, json, _) = kpol_test(&[&fixture("vpol-unmatched")]);
    assert_eq!(code, 1, "the Not found row fails");
    let s = |x: &str| x.to_owned();
    let resource = "apps/v1/Deployment/dev/backend";
    let excluded = (s(""), s(resource), s("excluded"), true, s(""));
    let not_found = (s(""), s(resource), s("not found"), false, s("Not found"));
    let policies: Vec<String> = common::rows_of(&json)
        .into_iter()
        .map(|r| r.policy)
        .collect();
    assert_eq!(
        policies,
        [
            "object-selector",
            "namespace-selector",
            "simple",
            "two-rules",
            "resource-names"
        ]
    );
    assert_eq!(
        rows_of(&json),
        [
            excluded.clone(),
            excluded.clone(),
            not_found,
            excluded.clone(),
            excluded
        ]
    );
}

// Kyverno's variable checks at policy load (testdata/test/undeclared-variables, every row and
// message checked with the Kyverno v1.19.0 CLI): a variable no context entry declares, one in
// `match`, one declared only by a nested foreach's context, a whole configMap entry, and a
// `target.` variable in a mutate target's context make the policy invalid, so its rows are
// Skip / Invalid Policy; a declared variable and a user variable in a foreground rule do not.
#[test]
fn undeclared_variables_make_rows_invalid_policy() {
    let (code, json, stderr) = kpol_test(&[&fixture("undeclared-variables"), "--detailed-results"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = common::rows_of(&json);
    let got: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r.policy.as_str(), r.actual.as_str(), r.reason.as_str()))
        .collect();
    let invalid = |p| (p, "invalid policy", "");
    assert_eq!(
        got,
        [
            invalid("undeclared"),
            ("declared", "fail", ""),
            invalid("in-match"),
            invalid("nested-foreach-context"),
            invalid("configmap-whole"),
            ("user-in-foreground", "fail", ""),
            invalid("target-in-context"),
        ]
    );
    let message = |p: &str| {
        rows.iter()
            .find(|r| r.policy == p)
            .map(|r| r.message.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        message("in-match"),
        "policy contains invalid variables: rule \"name\" should not have variables in match section"
    );
    assert!(
        message("configmap-whole").ends_with(
            "variable cm must match regex \"request\\.|element|elementIndex|@|images|images\\.|image\\.|([a-z_0-9]+\\()[^{}]\" or patterns [cm.data cm.metadata cm.data.* cm.metadata.*]"
        ),
        "{}",
        message("configmap-whole")
    );
    assert!(
        message("target-in-context").starts_with(
            "policy contains invalid variables: invalid variables defined at mutate.targets[0]: variable target.metadata.name"
        ),
        "{}",
        message("target-in-context")
    );
}

// A ValidatingPolicy that does not compile stops its test before any row, even one for
// another policy, as the Kyverno v1.19.0 CLI does (testdata/vpol-compile, checked with the
// binary): a syntax error (`syntax/`), or a matchCondition or validation whose static type
// is not bool (`not-bool/`: a field of the dyn `object`). The error names the resource and
// the policy.
#[test]
fn a_vpol_that_does_not_compile_stops_the_test() {
    for (dir, why) in [
        (
            "syntax",
            "unparsable (validations[0].expression: Syntax error:",
        ),
        (
            "not-bool",
            "dyn-condition (matchConditions[0].expression: output is expected to be of type bool)",
        ),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/vpol-compile")
            .join(dir);
        let (code, json, _) = kpol_test(&[dir.to_str().unwrap()]);
        assert_eq!(code, 2, "{json}");
        assert_eq!(json["rows"], serde_json::json!([]), "{json}");
        let reason = json["files"][0]["reason"].as_str().unwrap_or_default();
        let want =
            format!("failed to apply policies on resource empty (failed to compile policy {why}");
        assert!(reason.contains(&want), "{reason}");
    }
}
