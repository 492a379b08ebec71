//! `kpol check` end to end: the binary on fixture trees, its output and exit code.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;
use std::path::Path;
use std::process::{Command, Output};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The missing-limits Deployment fails the autogen rule, at the line of the container's
/// `resources` field, with exit 1.
#[test]
fn missing_limits_in_deployment_points_at_the_container_field() {
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        "testdata/check/mixed/c-no-limits-deployment.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("fail[require-resource-limits/autogen-validate-resources]"),
        "{text}"
    );
    // `resources:` of the first container is line 11 of the file.
    assert!(
        text.contains("--> testdata/check/mixed/c-no-limits-deployment.yaml:11:11"),
        "{text}"
    );
    assert!(
        text.contains("pass: 0, fail: 1, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// Malformed YAML and a binary file among good files: the good ones are still reported, the bad
/// ones get file:line:column, and the exit code says the run was incomplete.
#[test]
fn malformed_files_are_reported_and_the_rest_still_checked() {
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        "testdata/check/mixed",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("error[yaml]"), "{text}");
    assert!(
        text.contains("--> testdata/check/mixed/b-broken.yaml:"),
        "{text}"
    );
    assert!(text.contains("error[encoding]"), "{text}");
    assert!(
        text.contains("--> testdata/check/mixed/d-binary.yaml:4:9"),
        "{text}"
    );
    // a-good-pod passes, c-no-limits fails.
    assert!(text.contains("pass: 1, fail: 1,"), "{text}");
}

/// Output is byte-identical whatever the number of threads.
#[test]
fn output_is_identical_for_any_thread_count() {
    let (a, b) = ("testdata/sample", "testdata/check");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(a).is_dir());
    let one = kpol(&["check", "-j1", "--format", "json", a, b]);
    let two = kpol(&["check", "-j2", "--format", "json", a, b]);
    let eight = kpol(&["check", "-j8", a, b]);
    let one_h = kpol(&["check", "-j1", a, b]);
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(one.status.code(), two.status.code());
    assert_eq!(one_h.stdout, eight.stdout);
    assert!(!one.stdout.is_empty());
}

/// One file with many resources is split across threads, and many files stream in input
/// order: either way the output is the one a single thread writes.
#[test]
fn large_files_and_many_files_give_the_single_thread_output() {
    let dir = tempfile::tempdir().unwrap();
    let pod = |i: usize| {
        // Every third Pod runs privileged, every fifth has no limits.
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n  containers:\n  - name: c\n    \
             image: nginx:1.{i}\n    securityContext:\n      privileged: {}\n{}",
            i.is_multiple_of(3),
            if i.is_multiple_of(5) {
                ""
            } else {
                "    resources:\n      limits: {memory: 64Mi, cpu: 100m}\n      requests: {memory: 64Mi, cpu: 100m}\n"
            }
        )
    };
    let large: Vec<String> = (0..60).map(pod).collect();
    std::fs::write(dir.path().join("large.yaml"), large.join("---\n")).unwrap();
    for i in 0..40 {
        std::fs::write(dir.path().join(format!("f{i:02}.yaml")), pod(i)).unwrap();
    }
    let path = dir.path().to_str().unwrap();
    for format in ["human", "json", "github"] {
        let one = kpol(&["check", "-j1", "--format", format, path]);
        let four = kpol(&["check", "-j4", "--format", format, path]);
        assert_eq!(one.status.code(), Some(1), "{}", stdout(&one));
        assert_eq!(stdout(&one), stdout(&four), "{format}");
    }
    let text = stdout(&kpol(&["check", "-j4", "--max-findings", "0", path]));
    // Input order: the small files (f00 … f39), then large.yaml, document by document.
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    assert!(at("f00.yaml:") < at("f39.yaml:"));
    assert!(at("f39.yaml:") < at("large.yaml:"));
    assert!(at("Pod default/p42 (") < at("Pod default/p57 ("), "{text}");
}

/// The sample tree of README's first command fails on exactly the problems it describes.
#[test]
fn readme_sample_reports_its_known_problems() {
    let o = kpol(&["check", "testdata/sample"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for expected in [
        "fail[require-resource-limits/autogen-validate-resources]",
        "fail[disallow-privileged-containers/autogen-privileged-containers]",
        "fail[disallow-host-namespaces/host-namespaces]",
        "fail[disallow-latest-tag/validate-image-tag]",
    ] {
        assert!(text.contains(expected), "missing {expected} in:\n{text}");
    }
    assert!(!text.contains("web-deployment.yaml:"), "{text}");
}

/// `-` reads manifests from standard input.
#[test]
fn stdin_is_read_with_dash() {
    use std::io::Write;
    let mut child = match Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["check", "-p", "policies/require-resource-limits.yaml", "-"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("cannot run kpol: {e}"),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x:1\n",
        );
    }
    let o = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("--> <stdin>:"), "{text}");
}

/// A path that does not exist is an incomplete run, not a crash.
#[test]
fn missing_path_exits_2() {
    let o = kpol(&["check", "testdata/does-not-exist.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("does-not-exist.yaml"));
}

/// A values file supplies a context entry kpol cannot load offline; a userinfo file makes the
/// user a cluster admin, whom the rule excludes.
#[test]
fn values_and_userinfo_files_drive_check() {
    let base = [
        "check",
        "-p",
        "testdata/values/policy.yaml",
        "-f",
        "testdata/values/values.yaml",
        "testdata/values/resources.yaml",
    ];
    let o = kpol(&base);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("team 'marketing' is not one of [\"payments\",\"search\"]"),
        "{text}"
    );
    assert!(text.contains("pass: 1, fail: 1,"), "{text}");
    let mut admin = base.to_vec();
    admin.extend(["-u", "testdata/values/userinfo.yaml"]);
    let o = kpol(&admin);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // Without the values file the context entry cannot be loaded: an error, not a pass.
    let o = kpol(&[
        "check",
        "-p",
        "testdata/values/policy.yaml",
        "testdata/values/resources.yaml",
    ]);
    assert!(stdout(&o).contains("error: 2"), "{}", stdout(&o));
}

/// `--set` gives global variables as strings; with `--values-file` it is refused.
#[test]
fn set_conflicts_with_values_file() {
    let o = kpol(&[
        "check",
        "-f",
        "testdata/values/values.yaml",
        "--set",
        "a=b",
        "testdata/sample",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// The same files drive `kpol test`.
#[test]
fn values_and_userinfo_files_drive_test() {
    let o = kpol(&["test", "testdata/values"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Test Summary: 3 tests passed and 0 tests failed"),
        "{text}"
    );
    assert!(text.contains("Excluded"), "{text}");
}

/// `kpol check` on the pod of testdata/vpol-actions/ with one of its policies.
fn check_vpol_action(policy: &str, flags: &[&str]) -> (Option<i32>, String) {
    let path = format!("testdata/vpol-actions/{policy}");
    let mut args = vec!["check"];
    args.extend_from_slice(flags);
    args.extend(["-p", path.as_str(), "testdata/vpol-actions/pod.yaml"]);
    let o = kpol(&args);
    (o.status.code(), stdout(&o))
}

/// `validationActions: [Deny]` enforces: its failure fails the build even under --audit-warn,
/// and the headline names the policy without an empty rule part.
#[test]
fn vpol_deny_failure_fails_under_audit_warn() {
    let (code, text) = check_vpol_action("deny.yaml", &["--audit-warn"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("fail[require-team-deny]: label 'team' is required"),
        "{text}"
    );
    assert!(text.contains("(Enforce)"), "{text}");
    assert!(!text.contains("require-team-deny/]"), "{text}");
}

/// `validationActions: [Audit]` only reports: --audit-warn turns its failure into a warning.
#[test]
fn vpol_audit_failure_is_a_warning_under_audit_warn() {
    let (code, text) = check_vpol_action("audit.yaml", &["--audit-warn"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("warn[require-team-audit]"), "{text}");
    assert!(text.contains("(Audit)"), "{text}");
    let (code, text) = check_vpol_action("audit.yaml", &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("fail[require-team-audit]"), "{text}");
}

/// `validationActions: [Warn]` warns without any flag, for a ValidatingPolicy and for a VAP
/// whose binding warns; the github format writes a warning.
#[test]
fn vpol_and_vap_warn_actions_warn_without_flags() {
    let (code, text) = check_vpol_action("warn.yaml", &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("warn[require-team-warn]: label 'team' is required"),
        "{text}"
    );
    assert!(text.contains("(Warn)"), "{text}");
    assert!(
        text.contains("pass: 0, fail: 0, warn: 1, error: 0, skip: 0"),
        "{text}"
    );
    let (code, text) = check_vpol_action("vap-warn.yaml", &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("warn[require-team-vap/require-team-vap]"),
        "{text}"
    );
    let (code, text) = check_vpol_action("warn.yaml", &["--format", "github"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("::warning ") && text.contains("title=require-team-warn::"),
        "{text}"
    );
}

/// `kpol check` of testdata/overrides/pods.yaml (Pods in prod-1, dev and ops, none labelled).
fn check_overrides(flags: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["check"];
    args.extend_from_slice(flags);
    args.extend([
        "-p",
        "testdata/overrides/policy.yaml",
        "testdata/overrides/pods.yaml",
    ]);
    let o = kpol(&args);
    (o.status.code(), stdout(&o))
}

/// An Audit policy whose `validationFailureActionOverrides` enforce in `prod*`: the Pod in
/// prod-1 fails with Enforce, the one in dev with Audit; under --audit-warn only prod fails.
#[test]
fn spec_overrides_set_the_action_per_namespace() {
    let (code, text) = check_overrides(&[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("Pod prod-1/in-prod (Enforce)"), "{text}");
    assert!(text.contains("Pod dev/in-dev (Audit)"), "{text}");
    assert!(text.contains("Pod ops/in-ops (Audit)"), "{text}");
    let (code, text) = check_overrides(&["--audit-warn"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("pass: 0, fail: 1, warn: 2, error: 0, skip: 0"),
        "{text}"
    );
    assert!(
        text.contains("fail[require-team/check-team]") && text.contains("(Enforce)"),
        "{text}"
    );
}

/// The rule's `failureActionOverrides` select by namespace labels from the values file: ops
/// is labelled `tier: critical` there, so its Pod fails with Enforce.
#[test]
fn rule_overrides_read_namespace_labels_from_values() {
    let (code, text) = check_overrides(&["-f", "testdata/overrides/values.yaml", "--audit-warn"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("Pod ops/in-ops (Enforce)"), "{text}");
    assert!(text.contains("Pod dev/in-dev (Audit)"), "{text}");
    assert!(
        text.contains("pass: 0, fail: 2, warn: 1, error: 0, skip: 0"),
        "{text}"
    );
}

/// `kpol check` of testdata/admission/: `background-only` has `admission: false`,
/// `admission-only` has `background: false`.
fn check_admission(flags: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["check", "-v", "--width", "0"];
    args.extend_from_slice(flags);
    args.extend([
        "-p",
        "testdata/admission/policies.yaml",
        "testdata/admission/pod.yaml",
    ]);
    let o = kpol(&args);
    (o.status.code(), stdout(&o))
}

/// At admission a policy with `spec.admission: false` is not evaluated (an info note says so).
#[test]
fn admission_false_policies_are_skipped_without_background() {
    let (code, text) = check_admission(&[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(!text.contains("background-only/check-team"), "{text}");
    assert!(text.contains("fail[admission-only/check-owner]"), "{text}");
    assert!(
        text.contains(
            "info[not-evaluated]: policy background-only has spec.admission: false; not evaluated (use --background)"
        ),
        "{text}"
    );
    assert!(
        text.contains("--> testdata/admission/policies.yaml:6:14"),
        "{text}"
    );
}

/// `--background` evaluates what a background scan does: `admission: false` policies run,
/// `background: false` ones do not.
#[test]
fn background_flag_evaluates_background_policies_only() {
    let (code, text) = check_admission(&["--background"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("fail[background-only/check-team]"), "{text}");
    assert!(!text.contains("admission-only/check-owner"), "{text}");
    assert!(
        text.contains(
            "policy admission-only has spec.background: false; not evaluated in a background scan"
        ),
        "{text}"
    );
    assert!(
        text.contains("pass: 0, fail: 1, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// CEL's `namespaceObject` (ValidatingPolicy and `validate.cel`) is the Namespace as the
/// inputs give it — annotations and labels — found in another input file.
#[test]
fn namespace_object_comes_from_namespace_inputs() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/namespace-object/policies.yaml",
        "testdata/namespace-object/configmaps.yaml",
        "testdata/namespace-object/namespaces.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("pass: 2, fail: 2, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
    for rule in ["vpol-team-annotation", "cel-env-label/prod-namespace"] {
        let failed = format!("fail[{rule}]");
        assert_eq!(text.matches(&failed).count(), 1, "{text}");
    }
    assert_eq!(
        text.matches("ConfigMap web/web-config").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("payments/payments-config"), "{text}");
}

/// Without a Namespace input, the values file's `namespaces` (annotations, labels) and
/// `namespaceSelector` (labels) give `namespaceObject`, for `validate.cel` too.
#[test]
fn namespace_object_comes_from_the_values_file() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/namespace-object/policies.yaml",
        "-f",
        "testdata/namespace-object/values.yaml",
        "testdata/namespace-object/configmaps.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("pass: 2, fail: 2, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
    assert_eq!(
        text.matches("ConfigMap web/web-config").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("payments/payments-config"), "{text}");
}

const MUTATE_ERRORS: &str = "testdata/mutate-errors";

/// A mutate rule that errors (a variable that does not resolve) is an error finding at the
/// resource, exit 1: with `failurePolicy: Fail` (the default) Kyverno blocks the request.
/// With the variable from a values file it patches and nothing is reported.
#[test]
fn mutate_rule_error_is_an_error_finding() {
    let policy = format!("{MUTATE_ERRORS}/policy-fail.yaml");
    let cm = format!("{MUTATE_ERRORS}/configmap.yaml");
    let o = kpol(&["check", "-p", &policy, &cm]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error[add-owner/owner-label]: variable substitution failed"),
        "{text}"
    );
    assert!(
        text.contains("--> testdata/mutate-errors/configmap.yaml:1:1"),
        "{text}"
    );
    assert!(text.contains("(Enforce)"), "{text}");
    assert!(
        text.contains("pass: 0, fail: 0, warn: 0, error: 1, skip: 0"),
        "{text}"
    );
    let json = stdout(&kpol(&["check", "--format", "json", "-p", &policy, &cm]));
    assert!(json.contains("\"error\""), "{json}");

    let values = format!("{MUTATE_ERRORS}/values.yaml");
    let o = kpol(&["check", "-f", &values, "-p", &policy, &cm]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("pass: 0, fail: 0, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// With `failurePolicy: Ignore` Kyverno admits the request unmutated: the error is a warning
/// and the run passes (unless `--warn-exit-code`).
#[test]
fn mutate_rule_error_under_failure_policy_ignore_is_a_warning() {
    let policy = format!("{MUTATE_ERRORS}/policy-ignore.yaml");
    let cm = format!("{MUTATE_ERRORS}/configmap.yaml");
    let o = kpol(&["check", "-p", &policy, &cm]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("warn[add-owner-ignore/owner-label]: variable substitution failed"),
        "{text}"
    );
    assert!(
        text.contains("pass: 0, fail: 0, warn: 1, error: 0, skip: 0"),
        "{text}"
    );
    let o = kpol(&["check", "--warn-exit-code", "3", "-p", &policy, &cm]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
}

/// A DeletingPolicy's verdict: the Pod it would delete is an info note at the Pod (shown
/// without -v), the owned Pod nothing; no rule result is counted and the exit code is 0.
#[test]
fn a_deleting_policy_notes_what_it_would_delete_without_failing() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/check/dpol/policy.yaml",
        "testdata/check/dpol/pods.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "info[would-be-deleted]: Pod shop/debug would be deleted by clean-bare-pods (schedule not evaluated)\n --> testdata/check/dpol/pods.yaml:2:1"
        ),
        "{text}"
    );
    assert!(!text.contains("web-7d9f"), "{text}");
    assert!(
        text.contains("pass: 0, fail: 0, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// An ImageValidatingPolicy in `kpol check`: an image without a digest fails at the Pod, a
/// pinned image it selects is an error (its registry data cannot be fetched offline), never a
/// pass; a Pod with no selected image passes.
#[test]
fn an_image_validating_policy_fails_undigested_images_and_never_passes_what_needs_a_registry() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        "testdata/test/ivpol/policy.yaml",
        "testdata/test/ivpol/pods.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("fail[ghcr-images/ghcr-images]: image ghcr.io/team/app:1.0 does not have a digest\n  --> testdata/test/ivpol/pods.yaml:1:1"),
        "{text}"
    );
    assert!(
        text.contains("error[ghcr-images/evaluation]: failed to evaluate policy: registry data for ghcr.io/team/app@sha256:"),
        "{text}"
    );
    assert!(
        text.contains("pass: 1, fail: 2, warn: 0, error: 1, skip: 0"),
        "{text}"
    );
}

/// A MutatingAdmissionPolicy runs in `kpol check`'s mutate phase: the ValidatingPolicy that
/// requires the label it adds passes for the ConfigMap its binding selects and fails for
/// the one it does not.
#[test]
fn a_mutating_admission_policy_mutates_before_validation() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/test/mapol/policies.yaml",
        "testdata/test/mapol/resources.yaml",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("resource: ConfigMap default/team-b"),
        "{text}"
    );
    assert!(
        !text.contains("resource: ConfigMap default/team-a"),
        "{text}"
    );
    assert!(
        text.contains("pass: 1, fail: 2, warn: 0, error: 0, skip: 0"),
        "{text}"
    );
}

/// Per-resource `request.operation` / `request.object…` values are applied by `kpol test`
/// but not by `kpol check`, which evaluates every policy with one request: it warns, naming
/// the policy, the resource and the key, instead of ignoring them silently.
#[test]
fn per_resource_request_values_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values.yaml");
    std::fs::write(
        &values,
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicies:\n- name: team-label\n  \
         resources:\n  - name: a\n    values:\n      request.operation: UPDATE\n      \
         request.object.metadata.labels.team: core\n      request.oldObject.data.x: y\n      \
         owner: alice\n",
    )
    .unwrap();
    let d = "testdata/test/values-object";
    let o = kpol(&[
        "check",
        "--no-config",
        "--format",
        "json",
        "-f",
        values.to_str().unwrap(),
        "-p",
        &format!("{d}/pol.yaml"),
        &format!("{d}/res.yaml"),
    ]);
    let text = stdout(&o);
    for key in ["request.operation", "request.object.metadata.labels.team"] {
        assert!(
            text.contains(&format!(
                "values: policy team-label resource a: per-resource key {key}: kpol check"
            )),
            "{key}: {text}"
        );
    }
    // Keys kpol check applies per resource (old objects, variables) are not warned about.
    assert!(!text.contains("request.oldObject.data.x"), "{text}");
    assert!(!text.contains("key owner"), "{text}");
}

/// `--context-file` (`kyverno apply --context-file`): the file's `spec.images` answer
/// `image.GetMetadata` in ValidatingPolicies (testdata/test/image-data, whose rows are Kyverno
/// v1.19.0's); an ImageValidatingPolicy still needs the registry for every image it matches.
/// Without the file the same calls are unsupported offline. Both summary lines are those of
/// Kyverno v1.19.0's `kyverno apply policies.yaml -r pods.yaml [--context-file context.yaml]`.
#[test]
fn a_context_file_serves_image_data_to_cel_policies() {
    let d = "testdata/test/image-data";
    let (policies, pods, context) = (
        format!("{d}/policies.yaml"),
        format!("{d}/pods.yaml"),
        format!("{d}/context.yaml"),
    );
    let base = ["check", "--width", "0", "-p", &policies, &pods];
    let o = check_image_data_with(&context);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for want in [
        "fail[image-arch]: images must be built for amd64: ghcr.io/team/arm:2.0\n   --> testdata/test/image-data/pods.yaml:13:1",
        "fail[distroless-base]: images must be built on a distroless base\n  --> testdata/test/image-data/pods.yaml:5:3",
        "error[image-arch]: error: failed to get image data: image data for busybox:1.36 not found in the context",
        "error[ghcr-arch/evaluation]: failed to evaluate policy: registry data for ghcr.io/team/app:1.0 cannot be fetched offline",
        "pass: 11, fail: 3, warn: 0, error: 4, skip: 0",
    ] {
        assert!(text.contains(want), "{want}\n---\n{text}");
    }
    // `kpol apply` takes the flag too, with the same results.
    let apply = kpol(&["apply", &policies, "-r", &pods, "--context-file", &context]);
    assert_eq!(apply.status.code(), Some(1));
    assert!(
        stdout(&apply).contains("pass: 11, fail: 3, warn: 0, error: 4, skip: 0"),
        "{}",
        stdout(&apply)
    );
    let without = kpol(&base);
    let text = stdout(&without);
    assert!(
        text.contains("error[image-arch]: error: image.GetMetadata: unsupported offline"),
        "{text}"
    );
    assert!(
        text.contains("pass: 4, fail: 0, warn: 0, error: 14, skip: 0"),
        "{text}"
    );
}

/// `kpol check` of testdata/test/image-data's policies and Pods with `--context-file FILE`.
fn check_image_data_with(file: &str) -> Output {
    let d = "testdata/test/image-data";
    let (policies, pods) = (format!("{d}/policies.yaml"), format!("{d}/pods.yaml"));
    kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        &policies,
        &pods,
        "--context-file",
        file,
    ])
}

/// A context file is read strictly, as the Kyverno CLI reads it: an unknown field is an error
/// at its line and column, and the run is incomplete (exit 2). It cannot be combined with a
/// virtual cluster.
#[test]
fn a_context_file_with_an_unknown_field_is_an_error_at_its_line() {
    let bad = "testdata/check/context/unknown-field.yaml";
    let o = check_image_data_with(bad);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "error[invalid-test]: invalid context file: context spec: unknown field \"image\"\n --> {bad}:6:3"
        )),
        "{text}"
    );
    let pods = "testdata/test/image-data/pods.yaml";
    let o = kpol(&[
        "check",
        "-p",
        "testdata/test/image-data/policies.yaml",
        pods,
        "--context-file",
        bad,
        "--cluster-resources",
        pods,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

/// Only a context file's first document is read, even when it is empty (the Kyverno v1.19.0
/// CLI decodes the first one): the Context after an empty document gives no image data.
#[test]
fn only_the_first_document_of_a_context_file_is_read() {
    let o = check_image_data_with("testdata/check/context/empty-first-document.yaml");
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error[image-arch]: error: failed to get image data: image data for nginx:1.27 not found in the context"),
        "{text}"
    );
}
