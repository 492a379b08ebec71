//! `kpol test` in `clusterResources` mode (testdata/cluster/, issue #23): the test's
//! resources and ClusterResource objects form the virtual cluster that `context.apiCall`,
//! `context.configMap` and CEL `resource.List` read, giving Kyverno v1.19.0's verdicts; the
//! same tests without the cluster file load none of those entries (Kyverno's skip behaviour:
//! the rule reads an unknown variable and errors), and mocks answer without a cluster.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

/// `(resource, expected, actual, ok)` of a row.
type Row = (String, String, String, bool);

fn run(dir: &Path) -> (Option<i32>, Vec<Row>) {
    let run = common::kpol_test(&[dir.to_str().unwrap()]);
    let rows = run
        .rows()
        .into_iter()
        .map(|r| (r.resource, r.expected, r.actual, r.ok))
        .collect();
    (run.code, rows)
}

/// A copy of a fixture directory, with the test file rewritten by `edit`.
fn copy_with(name: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cluster")
        .join(name);
    let tmp = tempfile::tempdir().expect("tempdir");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = if p.ends_with("kyverno-test.yaml") {
            edit(&text)
        } else {
            text
        };
        std::fs::write(tmp.path().join(p.file_name().unwrap()), text).unwrap();
    }
    tmp
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cluster")
        .join(name)
}

#[test]
fn cluster_mode_gives_kyvernos_verdicts() {
    for (name, failing, passing) in [
        ("apicall-list", "v1/Pod/busy/newcomer", "v1/Pod/quiet/alone"),
        (
            "configmap",
            "v1/Pod/apps/gamma-app",
            "v1/Pod/apps/alpha-app",
        ),
        ("cel-list", "v1/Pod/ci/uses-ghost", "v1/Pod/ci/uses-builder"),
    ] {
        let (code, rows) = run(&fixture(name));
        let s = String::from;
        assert_eq!(
            rows,
            [
                (s(failing), s("fail"), s("fail"), true),
                (s(passing), s("pass"), s("pass"), true)
            ],
            "{name}"
        );
        assert_eq!(code, Some(0), "{name}");
    }
}

// `resource.ToGVR` (testdata/cluster/to-gvr, rows as Kyverno v1.19.0 gives them): in cluster
// mode built-in and CRD kinds map and feed Get/List, an unknown kind or version is an error;
// without the cluster the CLI's fake provider maps nothing, so every row is an error.
#[test]
fn to_gvr_maps_kinds_in_cluster_mode_only() {
    let out = common::kpol_test(&[fixture("to-gvr").to_str().unwrap()]);
    common::assert_outcomes(
        &out,
        &[
            ("v1/ConfigMap/shop/to-widget", "pass", true),
            ("v1/ConfigMap/shop/to-deployment", "pass", true),
            ("v1/ConfigMap/yard/to-absent-widget", "fail", true),
            ("v1/ConfigMap/shop/to-unknown-kind", "error", true),
            ("v1/ConfigMap/shop/to-unserved-version", "error", true),
        ],
    );
    assert_eq!(out.code, Some(0));
    let dir = copy_with("to-gvr", |t| {
        t.replace("clusterResources: [cluster.yaml]\n", "")
    });
    let (code, rows) = run(dir.path());
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.2 == "error"), "{rows:?}");
    assert_eq!(rows.iter().filter(|r| r.3).count(), 2, "{rows:?}");
    assert_eq!(code, Some(1));
}

#[test]
fn without_the_cluster_the_entries_are_not_loaded() {
    for name in ["apicall-list", "configmap", "cel-list"] {
        let dir = copy_with(name, |t| {
            t.replace("clusterResources: [cluster.yaml]\n", "")
        });
        let (code, rows) = run(dir.path());
        assert_eq!(rows.len(), 2, "{name}");
        for r in &rows {
            assert_eq!(r.2, "error", "{name}: {r:?}");
            assert!(!r.3, "{name}: {r:?}");
        }
        assert_eq!(code, Some(1), "{name}");
    }
}

// apiCallResponses answer the same urlPath without a cluster (store/contextloader.go); a
// non-2xx status is an error.
#[test]
fn api_call_mocks_answer_without_a_cluster() {
    let mock = |status: u16| {
        move |t: &str| {
            t.replace(
                "clusterResources: [cluster.yaml]\n",
                &format!(
                    "apiCallResponses:\n\
                     - urlPath: /api/v1/namespaces/busy/pods\n  response: {{statusCode: {status}, body: {{items: [1, 2, 3]}}}}\n\
                     - urlPath: /api/v1/namespaces/quiet/pods\n  response: {{body: {{items: []}}}}\n"
                ),
            )
        }
    };
    let dir = copy_with("apicall-list", mock(200));
    let (code, rows) = run(dir.path());
    assert!(rows.iter().all(|r| r.3), "{rows:?}");
    assert_eq!(code, Some(0));
    let dir = copy_with("apicall-list", mock(404));
    let (_, rows) = run(dir.path());
    assert_eq!(rows[0].2, "error", "{rows:?}");
    assert!(rows[1].3, "{rows:?}");
}

// A bad mock is the test's error, at its line.
#[test]
fn invalid_mocks_stop_the_test() {
    let dir = copy_with("apicall-list", |t| {
        t.replace(
            "clusterResources: [cluster.yaml]\n",
            "apiCallResponses:\n- urlPath: relative\n  response: {body: {}}\n",
        )
    });
    let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["test", dir.path().to_str().unwrap()])
        .output()
        .expect("run kpol");
    assert_eq!(out.status.code(), Some(2));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("kyverno-test.yaml:9:3: apiCallResponses[0]: urlPath \"relative\" must be an absolute path"),
        "{text}"
    );
}

// globalContextEntries serve globalReference (name.projection, then jmesPath) and CEL
// globalContext.Get; apiCallResponses serve CEL http.Get/Post as {body, statusCode}.
#[test]
fn mocks_serve_global_references_and_cel_http() {
    let out = common::kpol_test(&[fixture("mocks").to_str().unwrap()]);
    common::assert_outcomes(
        &out,
        &[
            ("v1/Pod/apps/alpha-pod", "pass", true),
            ("v1/Pod/apps/beta-pod", "fail", true),
            ("v1/Pod/apps/alpha-pod", "pass", true),
            ("v1/Pod/apps/beta-pod", "fail", true),
            ("v1/Pod/apps/alpha-pod", "fail", true),
        ],
    );
    assert_eq!(out.code, Some(0));
    // Without the mocks, the CEL calls are unsupported offline (never a pass), and the
    // globalReference entry is not loaded.
    let dir = copy_with("mocks", |t| {
        let cut = t.find("apiCallResponses:").unwrap();
        let end = t.find("results:").unwrap();
        format!("{}{}", &t[..cut], &t[end..])
    });
    let (_, rows) = run(dir.path());
    assert!(rows.iter().all(|r| r.2 == "error" && !r.3), "{rows:?}");
}

// `kpol check --cluster-resources`: the same cluster from the given files.
#[test]
fn check_reads_the_cluster_from_cluster_resources() {
    let dir = fixture("apicall-list");
    let file = |f: &str| dir.join(f).to_str().unwrap().to_owned();
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check".to_owned(),
            "--no-config".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
            "--policy".to_owned(),
            file("policy.yaml"),
            file("resources.yaml"),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
            .args(&args)
            .output()
            .expect("run kpol");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (cluster, resources) = (file("cluster.yaml"), file("resources.yaml"));
    let (code, text) = check(&[
        "--cluster-resources",
        &cluster,
        "--cluster-resources",
        &resources,
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("namespace busy has 3 pods"), "{text}");
    // Without it the apiCall entry is not loaded: the rule errors.
    let (_, text) = check(&[]);
    assert!(!text.contains("has 3 pods"), "{text}");
    assert!(text.contains("\"error\""), "{text}");
}

// In cluster mode a CRD names its kind's plural for CEL matching (the REST mapper); without
// it the guessed plural (`gooses`) matches nothing, and as the policy's constraints are one
// plain resource rule the CLI drops its empty response: both rows read as Not found (both
// runs checked with the Kyverno v1.19.0 CLI).
#[test]
fn crds_name_the_plural_in_cluster_mode() {
    let (code, rows) = run(&fixture("crd-kind"));
    let s = String::from;
    assert_eq!(
        rows,
        [
            (
                s("birds.example.com/v1/Goose/pond/loud"),
                s("pass"),
                s("pass"),
                true
            ),
            (
                s("birds.example.com/v1/Goose/pond/quiet"),
                s("fail"),
                s("fail"),
                true
            )
        ]
    );
    assert_eq!(code, Some(0));
    let dir = copy_with("crd-kind", |t| {
        t.replace("clusterResources: [cluster.yaml]\n", "")
    });
    let (_, rows) = run(dir.path());
    assert!(rows.iter().all(|r| r.2 == "not found"), "{rows:?}");
}

// `kpol test --strict` (beyond Kyverno): an Excluded row expected to fail fails
// (testdata/test/vpol-unmatched: four Excluded rows expecting fail, one Not found row).
#[test]
fn strict_fails_rows_passing_only_because_excluded() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/test/vpol-unmatched");
    let run_with = |extra: &[&str]| {
        let mut args = vec!["test", path, "--format", "json"];
        args.extend(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_kpol"))
            .args(&args)
            .output()
            .expect("run kpol");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        (out.status.code(), json["totals"]["rows_not_ok"].clone())
    };
    assert_eq!(run_with(&[]), (Some(1), serde_json::json!(1)));
    assert_eq!(run_with(&["--strict"]), (Some(1), serde_json::json!(5)));
}

// A VAP binding's `paramRef` in cluster mode (testdata/cluster/vap-params, rows as Kyverno
// v1.19.0 gives them): the params come from the CLI's fake cluster, which sees every kind as
// cluster-scoped — a ConfigMap by name, or a paramRef naming a namespace, gives no response
// (rows `excluded`, passing whatever they expect); a Namespace by name and a selector over
// every namespace (one match: the object, two: a list) give the verdicts. Without the cluster
// the same bindings read `paramResources` and the ConfigMap by name decides.
#[test]
fn vap_param_refs_read_the_fake_cluster_in_cluster_mode() {
    let out = common::kpol_test(&[fixture("vap-params").to_str().unwrap()]);
    let got: Vec<(String, String, String, bool)> = out
        .rows()
        .into_iter()
        .map(|r| {
            let resource = r.resource.rsplit('/').next().unwrap_or("").to_owned();
            (r.policy, resource, r.actual, r.ok)
        })
        .collect();
    let row = |p: &str, r: &str, a: &str| (p.into(), r.into(), a.into(), true);
    assert_eq!(
        got,
        [
            row("max-from-namespace", "small", "pass"),
            row("max-from-namespace", "big", "fail"),
            row("max-from-configmap-name", "small", "excluded"),
            row("max-from-configmap-name", "big", "excluded"),
            row("max-from-one-selected", "small", "pass"),
            row("max-from-one-selected", "big", "fail"),
            row("two-selected", "small", "pass"),
            row("two-selected", "big", "fail"),
            row("namespaced-ref", "small", "excluded"),
            row("namespaced-ref", "big", "excluded"),
        ],
        "{}",
        out.stdout
    );
    assert_eq!(out.code, Some(0));
    let dir = copy_with("vap-params", |t| {
        t.replace("clusterResources: [cluster.yaml]\n", "")
    });
    let rows = common::kpol_test(&[dir.path().to_str().unwrap()]).rows();
    let of = |p: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r.policy == p)
            .map(|r| r.actual.clone())
            .collect()
    };
    assert_eq!(of("max-from-configmap-name"), ["pass", "fail"]);
}

// MutatingAdmissionPolicy bindings' `paramRef` likewise (testdata/cluster/mapol-params, rows
// as Kyverno v1.19.0 gives them): in cluster mode the Namespace by name is found and its
// label patched in; the ConfigMap by name is not (no response: `not found`); the cluster's
// Namespace is `namespaceObject`. Without the cluster `paramResources` decide: the ConfigMap
// is found and the Namespace is not, and `namespaceObject` has no labels to read.
#[test]
fn mapol_param_refs_read_the_fake_cluster_in_cluster_mode() {
    let outcome = |rows: Vec<common::Row>| -> Vec<(String, String, bool)> {
        rows.into_iter()
            .map(|r| (r.policy, r.actual, r.ok))
            .collect()
    };
    let s = String::from;
    let out = common::kpol_test(&[fixture("mapol-params").to_str().unwrap()]);
    assert_eq!(
        outcome(out.rows()),
        [
            (s("owner-from-namespace"), s("pass"), true),
            (s("owner-from-configmap"), s("not found"), false),
            (s("owner-from-namespace-object"), s("pass"), true),
        ],
        "{}",
        out.stdout
    );
    let dir = copy_with("mapol-params", |t| {
        t.replace("clusterResources: [cluster.yaml]\n", "")
    });
    let out = common::kpol_test(&[dir.path().to_str().unwrap()]);
    assert_eq!(
        outcome(out.rows()),
        [
            (s("owner-from-namespace"), s("not found"), false),
            (s("owner-from-configmap"), s("pass"), true),
            (s("owner-from-namespace-object"), s("not found"), false),
        ]
    );
}
