//! Snapshots of what `kpol mutate`, `kpol generate` and `kpol test` print (their renderers are
//! src/cli/render/{mutate,generate}.rs and src/cli/render/test/), each subcommand over one set
//! of inputs rendered every way it can print them; `kpol check`'s formats are in
//! render_snapshots.rs. The snapshots are in tests/snapshots/ and plain `cargo test` compares
//! them (`INSTA_UPDATE=always cargo test --test subcommand_snapshots` rewrites them after an
//! intended change).
//!
//! Every run is from the repository root with relative paths, so the paths printed are the
//! same on every machine; what the `kpol check` formats print of the build (kpol's version,
//! SARIF's file URIs into the checkout) is replaced ([`common::shown`]), and the runs see no
//! CI variables (kpol test's JUnit has no `time` or `timestamp` attributes).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

/// Runs `kpol ARGS…` and compares what it shows with the snapshot `name`.
fn snapshot(name: &str, args: &[&str]) {
    let o = common::kpol_for_snapshot(args);
    common::snapshot(name, format!("kpol {}", args.join(" ")), &o);
}

/// `args` followed by `more`.
fn with<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(more).copied().collect()
}

/// The snapshot of each `(name, flags)`: `args` run with the flags added.
fn snapshots(args: &[&str], runs: &[(&str, &[&str])]) {
    for (name, more) in runs {
        snapshot(name, &with(args, more));
    }
}

/// `kpol mutate`: a foreach rule (applied to a Deployment's pod template too, by autogen), a
/// label added to every workload except the ConfigMap a PolicyException exempts, and a
/// MutatingPolicy; comments and layout outside the patched nodes are kept.
const MUTATE: &[&str] = &[
    "mutate",
    "--no-config",
    "-p",
    "testdata/mutate/foreach/policy.yaml",
    "-p",
    "testdata/mutate/add-default-labels/policy.yaml",
    "-p",
    "testdata/check/mpol/mpol.yaml",
    "-e",
    "testdata/mutate/exception/exception.yaml",
    "testdata/mutate/foreach/resource.yaml",
    "testdata/mutate/add-default-labels/resource.yaml",
    "testdata/check/mpol/deploy.yaml",
];

#[test]
fn mutate() {
    snapshots(
        MUTATE,
        &[
            // The documents as patched, every file in turn.
            ("mutate-print", &[]),
            // One unified diff per changed file; the exempt ConfigMap has no hunk.
            ("mutate-diff", &["--diff"]),
            // A `would change:` line per file on stderr, nothing on stdout, exit 1.
            ("mutate-check", &["--check"]),
            // `kpol check`'s formats: a failure per rule and resource that would change, at
            // the resource's line; the exempt ConfigMap's skip counted in the summary.
            ("mutate-check-concise", &["--check", "--format", "concise"]),
            ("mutate-check-github", &["--check", "--format", "github"]),
            // A format that lists passes and skips: the exception's skip is there by name.
            ("mutate-check-json", &["--check", "--format", "json"]),
        ],
    );
}

#[test]
fn mutate_rule_error() {
    // Two rules that cannot patch the ConfigMap: an error line each (the concise format's),
    // with the resource's line; the document printed unchanged, exit 1.
    let args = [
        "mutate",
        "--no-config",
        "-p",
        "testdata/mutate/patch-error/policy.yaml",
        "testdata/mutate/patch-error/resource.yaml",
    ];
    snapshot("mutate-rule-error", &args);
    // The same errors in SARIF, nothing changed.
    snapshot(
        "mutate-rule-error-sarif",
        &with(&args, &["--check", "--format", "sarif"]),
    );
}

/// `kpol generate`: a ClusterPolicy generate rule with `data` (one Namespace exempted by a
/// PolicyException) and a GeneratingPolicy (an expression and a template; kube-system left
/// out by its match condition, and a template error for the Namespaces without the `team`
/// label it reads).
const GENERATE: &[&str] = &[
    "generate",
    "--no-config",
    "-p",
    "testdata/generate/default-deny/policy.yaml",
    "-p",
    "testdata/generate/gpol/policy.yaml",
    "-e",
    "testdata/generate/default-deny/exception.yaml",
    "testdata/generate/default-deny/manifests",
    "testdata/generate/gpol/manifests",
];

#[test]
fn generate() {
    snapshots(
        GENERATE,
        &[
            ("generate-yaml", &[]),
            // The generated resources and the findings in one document, nothing on stderr.
            ("generate-json", &["--format", "json"]),
        ],
    );
}

/// `kpol test` over testdata/report/test: rows that pass (a pattern, a foreach deny, a
/// ValidatingPolicy), one that fails (a foreach pattern expected to pass), a skip by a
/// PolicyException, an expected CEL error, an invalid policy, and a second test file whose
/// resource is not YAML (a test error, exit 2).
const TEST: &[&str] = &["test", "testdata/report/test"];

#[test]
fn test_human_and_json() {
    snapshots(
        TEST,
        &[
            ("test-human", &[]),
            // The MESSAGE column.
            ("test-detailed", &["--detailed-results"]),
            // The summary, then the failing rows only.
            ("test-fail-only", &["--fail-only"]),
            ("test-json", &["--format", "json"]),
            // Each row with its `message`.
            (
                "test-json-detailed",
                &["--format", "json", "--detailed-results"],
            ),
            // `kpol check`'s CI formats: the failing row at its result entry (line 27), the
            // test that could not load a problem of its test file.
            ("test-concise", &["--format", "concise"]),
            ("test-github", &["--format", "github"]),
            ("test-sarif", &["--format", "sarif"]),
        ],
    );
}

/// `kpol test -o`'s formats (Kyverno's `kyverno test -o`).
const OUTPUT_FORMATS: &[&str] = &["json", "yaml", "markdown", "junit"];

#[test]
fn test_output_formats() {
    // Each format without and with the messages.
    for format in OUTPUT_FORMATS {
        snapshot(&format!("test-o-{format}"), &with(TEST, &["-o", format]));
        snapshot(
            &format!("test-o-{format}-detailed"),
            &with(TEST, &["-o", format, "--detailed-results"]),
        );
    }
    // Only the failing row, its ID renumbered from 1 (the same rows for every format).
    snapshot(
        "test-o-junit-fail-only",
        &with(TEST, &["-o", "junit", "--fail-only"]),
    );
}

#[test]
fn every_test_output_format_has_a_snapshot() {
    // A format added to `kpol test -o` gets snapshots here too.
    let help = kpol(&["test", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    // The values are on the flag's line, or below its description in the long help.
    let line = help
        .lines()
        .skip_while(|l| !l.contains("--output-format"))
        .find(|l| l.contains("[possible values: "))
        .expect("the values of --output-format");
    let listed: Vec<&str> = line
        .split("[possible values: ")
        .nth(1)
        .and_then(|v| v.strip_suffix(']'))
        .expect("possible values")
        .split(", ")
        .collect();
    assert_eq!(listed, OUTPUT_FORMATS);
}
