//! clusterResources mode, as the Kyverno v1.19.0 CLI runs it (each dir's expectations were
//! checked with its `kyverno test`): objects of a CRD kind are stored under the guessed
//! resource (`testdata/cluster/crd-store`), and a resource whose kind the REST mapper does not
//! know stops the test (`testdata/cluster/unmapped-kind`), and so does a resource whose
//! Namespace the cluster does not hold (`testdata/cluster/namespace-lookup`).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

/// The exit code and everything the run printed (stdout, then stderr).
fn kpol(args: &[&str]) -> (Option<i32>, String) {
    let (code, out, err) = common::kpol_in(".", args);
    (code, out + &err)
}

#[test]
fn crd_objects_are_found_by_the_guessed_resource() {
    let (code, out) = kpol(&["test", "testdata/cluster/crd-store", "--detailed-results"]);
    assert!(out.contains("7 tests passed and 0 tests failed"), "{out}");
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn an_unmapped_kind_stops_the_test() {
    let (code, out) = kpol(&["test", "testdata/cluster/unmapped-kind"]);
    assert!(
        out.contains(
            "failed to apply policies on resource loud (failed to map gvk to gvr \
             birds.example.com/v1, Kind=Goose: no matches for kind \"Goose\" in version \
             \"birds.example.com/v1\")"
        ),
        "{out}"
    );
    // No row of the test is reported: the run is incomplete.
    assert!(!out.contains("cm-check"), "{out}");
    assert_eq!(code, Some(2), "{out}");
}

const LOOKUP: &str = "testdata/cluster/namespace-lookup";

fn missing(resource: &str, namespace: &str) -> String {
    format!(
        "failed to apply policies on resource {resource} (failed to get the resource's \
         namespace (namespaces \"{namespace}\" not found))"
    )
}

#[test]
fn a_missing_namespace_stops_the_test() {
    for (dir, resource, namespace) in [
        ("missing", "stray", "attic"),
        ("defaulted", "unplaced", "default"),
        ("empty-labels", "labelled", "shop"),
        ("vpol", "labelled", "shop"),
    ] {
        let (code, out) = kpol(&["test", &format!("{LOOKUP}/{dir}")]);
        assert!(out.contains(&missing(resource, namespace)), "{dir}: {out}");
        // No row of the test is reported: the run is incomplete.
        assert!(!out.contains("need-team"), "{dir}: {out}");
        assert!(
            out.contains("0 tests passed and 0 tests failed"),
            "{dir}: {out}"
        );
        assert_eq!(code, Some(2), "{dir}: {out}");
    }
}

#[test]
fn a_namespace_in_the_cluster_or_the_values_lets_the_test_run() {
    for dir in ["present", "in-resources", "values"] {
        let (code, out) = kpol(&["test", &format!("{LOOKUP}/{dir}")]);
        assert!(!out.contains("failed to get"), "{dir}: {out}");
        assert!(
            out.contains("2 tests passed and 0 tests failed"),
            "{dir}: {out}"
        );
        assert_eq!(code, Some(0), "{dir}: {out}");
    }
}

#[test]
fn only_the_stopped_tests_are_missing_from_a_run() {
    let (code, out) = kpol(&["test", LOOKUP]);
    assert!(out.contains("6 tests passed and 0 tests failed"), "{out}");
    assert!(out.contains("found 4 errors after loading tests"), "{out}");
    assert_eq!(code, Some(2), "{out}");
}

const LABELS: &str = "testdata/cluster/namespace-labels";

/// The rows of a run, one `RESOURCE │ RESULT │ REASON` per line, from the human table.
fn rows(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("│ ") && !l.contains("│ ID "))
        .map(|l| {
            let cells: Vec<&str> = l.split('│').map(str::trim).collect();
            cells[3..7].join(" ")
        })
        .collect()
}

/// In clusterResources mode a ClusterPolicy `namespaceSelector` (match and exclude) reads
/// the cluster Namespace's labels when the values file gives none for it (an entry with
/// `labels: {}` gives none); values labels win (rows as the Kyverno v1.19.0 CLI gives them).
#[test]
fn classic_namespace_selectors_read_the_cluster_namespace() {
    let ok = |r: &str, res: &str| format!("{r} {res} Pass Ok");
    let excluded = |r: &str, res: &str| format!("{r} {res} Pass Excluded");
    let (bare, team, play) = (
        "v1/ConfigMap/prod/prod-bare",
        "v1/ConfigMap/prod/prod-team",
        "v1/ConfigMap/play/play-bare",
    );
    for (dir, want) in [
        (
            "cluster",
            vec![
                ok("need-team", bare),
                ok("need-team", team),
                excluded("need-team", play),
                ok("no-latest", bare),
                excluded("no-latest", play),
            ],
        ),
        (
            "no-cluster",
            vec![
                excluded("need-team", bare),
                excluded("need-team", team),
                excluded("need-team", play),
                ok("no-latest", bare),
                ok("no-latest", play),
            ],
        ),
        (
            "values-win",
            vec![
                excluded("need-team", bare),
                excluded("need-team", play),
                excluded("no-latest", play),
            ],
        ),
        (
            "values-empty",
            vec![ok("need-team", bare), ok("no-latest", play)],
        ),
    ] {
        assert_rows(&format!("{LABELS}/{dir}"), &want);
    }
}

/// Runs `kpol test DIR`: its rows are `want` and it exits 0.
fn assert_rows(dir: &str, want: &[String]) {
    let (code, out) = kpol(&["test", dir]);
    assert_eq!(rows(&out), want, "{dir}: {out}");
    assert_eq!(code, Some(0), "{dir}: {out}");
}

/// In clusterResources mode a ValidatingAdmissionPolicy with bindings reads the cluster's
/// Namespace, for the binding's `namespaceSelector` and as `namespaceObject`, and not the
/// values file's labels; without a cluster it reads the values file (testdata/cluster/
/// vap-namespace, rows as the Kyverno v1.19.0 CLI gives them).
#[test]
fn vap_bindings_read_the_cluster_namespace() {
    const DIR: &str = "testdata/cluster/vap-namespace";
    let row = |res: &str, reason: &str| {
        let rule = if reason == "Excluded" {
            ""
        } else {
            "owner-from-namespace"
        };
        format!("{rule} v1/ConfigMap/{res} Pass {reason}")
    };
    for (dir, want) in [
        (
            "cluster",
            vec![
                row("prod/alice-cm", "Ok"),
                row("prod/bob-cm", "Ok"),
                row("play/play-cm", "Excluded"),
            ],
        ),
        (
            "no-cluster",
            vec![
                row("prod/alice-cm", "Excluded"),
                row("prod/bob-cm", "Excluded"),
                row("play/play-cm", "Ok"),
            ],
        ),
    ] {
        assert_rows(&format!("{DIR}/{dir}"), &want);
    }
}

/// A ValidatingAdmissionPolicy binding without `matchResources` selects every resource
/// without a cluster (the policy's own matchConstraints are not read), and only what those
/// select in clusterResources mode (testdata/cluster/vap-binding-all, rows as the Kyverno
/// v1.19.0 CLI gives them).
#[test]
fn vap_binding_without_match_resources() {
    const DIR: &str = "testdata/cluster/vap-binding-all";
    let pod = "pods-only v1/Pod/default/pod Pass Ok".to_owned();
    for (dir, cm) in [
        ("no-cluster", "pods-only v1/ConfigMap/default/cm Pass Ok"),
        ("cluster", " v1/ConfigMap/default/cm Pass Excluded"),
    ] {
        assert_rows(&format!("{DIR}/{dir}"), &[cm.to_owned(), pod.clone()]);
    }
}
