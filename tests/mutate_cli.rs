//! `kpol mutate` end to end: every case of `testdata/mutate/` (output, re-parse, second pass a
//! no-op), `--diff`/`--write`/`--check`/`-o` on kpol's `add-default-labels` policy (`-p`), and
//! `kpol check` validating the mutated resource.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

/// kpol's `add-default-labels` policy: `kpol mutate` applies only the policies it is given.
const LABELS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/policies/add-default-labels.yaml"
);

fn kpol_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run kpol: {e}"))
}

fn kpol(args: &[&str]) -> Output {
    kpol_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Each case: `policy.yaml` on `resource.yaml` prints `expected.yaml`, which parses, and a
/// second pass over it changes nothing.
#[test]
fn every_case_matches_reparses_and_is_idempotent() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/mutate");
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let expected = dir.join("expected.yaml");
        if !expected.exists() {
            continue;
        }
        cases += 1;
        let p = dir.join("policy.yaml");
        let r = dir.join("resource.yaml");
        let (p, r) = (p.to_str().unwrap(), r.to_str().unwrap());
        let o = kpol(&["mutate", "-p", p, r]);
        let want = std::fs::read_to_string(&expected).unwrap();
        assert_eq!(
            text(&o.stdout),
            want,
            "{}: {}",
            dir.display(),
            text(&o.stderr)
        );
        assert!(
            kpol::yaml::parse_documents(&want, kpol::yaml::Limits::default()).is_ok(),
            "{}",
            dir.display()
        );
        let again = kpol(&["mutate", "--diff", "-p", p, expected.to_str().unwrap()]);
        assert_eq!(text(&again.stdout), "", "second pass of {}", dir.display());
    }
    assert!(cases >= 7, "only {cases} cases");
}

/// A patch that cannot apply is a finding with the rule and the resource's line; exit 1.
#[test]
fn a_failing_patch_is_reported_with_rule_and_line() {
    let o = kpol(&[
        "mutate",
        "-p",
        "testdata/mutate/patch-error/policy.yaml",
        "testdata/mutate/patch-error/resource.yaml",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "resource.yaml:1:1: error bad-patch/labels-as-string: failed to patch resource"
        ),
        "{err}"
    );
    assert!(err.contains("bad-patch/replace-missing"), "{err}");
}

/// `--format` writes the report on standard output, so it is refused where standard output
/// carries the documents (printing, `--diff`, `--write` of standard input), before anything
/// is read; with `--check` it is the report alone.
#[test]
fn format_needs_standard_output_free() {
    let p = "testdata/mutate/patch-error/policy.yaml";
    let r = "testdata/mutate/patch-error/resource.yaml";
    for extra in [&[][..], &["--diff"], &["--write", "-"]] {
        let mut args = vec!["mutate", "--no-config", "-p", p, r, "--format", "json"];
        args.extend_from_slice(extra);
        let o = kpol(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert_eq!(text(&o.stdout), "", "{extra:?}");
        assert!(
            text(&o.stderr).contains("--format writes the report"),
            "{extra:?}"
        );
    }
    let o = kpol(&[
        "mutate",
        "--no-config",
        "-p",
        p,
        r,
        "--check",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(report["summary"]["error"], 2, "{report}");
    assert_eq!(text(&o.stderr), "");
}

const LABEL: &str = "    app.kubernetes.io/managed-by: kpol\n";

/// The embedded add-default-labels policy: `--diff` shows only the added labels, `--write`
/// keeps every comment, and a second run changes nothing.
#[test]
fn add_default_labels_diff_write_check() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/mutate/add-default-labels/resource.yaml");
    let original = std::fs::read_to_string(&src).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("app.yaml"), &original).unwrap();
    std::fs::write(tmp.path().join("untouched.yaml"), "# no kind here\na: 1\n").unwrap();

    let diff = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--diff", "app.yaml"]);
    let d = text(&diff.stdout);
    let added: Vec<&str> = d
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    let removed = d
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    assert_eq!(
        added,
        [
            "+    app.kubernetes.io/managed-by: kpol",
            "+  labels:",
            "+    app.kubernetes.io/managed-by: kpol"
        ],
        "{d}"
    );
    assert_eq!(removed, 0, "{d}");

    let check = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--check", "."]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stderr));

    let w = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--write", "."]);
    assert_eq!(w.status.code(), Some(0), "{}", text(&w.stderr));
    let written = std::fs::read_to_string(tmp.path().join("app.yaml")).unwrap();
    let want = original
        .replacen(
            "    team: \"frontend\"\n",
            &format!("    team: \"frontend\"\n{LABEL}"),
            1,
        )
        .replacen(
            "  name: settings\n",
            &format!("  name: settings\n  labels:\n{LABEL}"),
            1,
        );
    assert_eq!(written, want);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("untouched.yaml")).unwrap(),
        "# no kind here\na: 1\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");

    let again = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--check", "."]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
}

/// `-o DIR` mirrors the input tree with the same relative names.
#[test]
fn output_dir_mirrors_the_input_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in/sub");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::write(
        input.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    )
    .unwrap();
    let o = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "in", "-o", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = std::fs::read_to_string(tmp.path().join("out/sub/cm.yaml")).unwrap();
    assert!(out.contains("managed-by: kpol"), "{out}");
}

/// `--write` on a file it cannot replace leaves the original and exits 2: here the file has a
/// second hard link, which a rename would split from it (works for root too).
#[test]
fn write_failure_keeps_the_original() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cm.yaml");
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    std::fs::write(&file, body).unwrap();
    std::fs::hard_link(&file, tmp.path().join("twin.yaml.bak")).unwrap();
    let o = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--write", "cm.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), body);
    assert!(
        text(&o.stderr).contains("cannot write cm.yaml: it has 2 hard links"),
        "{}",
        text(&o.stderr)
    );
}

/// `--write` refuses a read-only file (a rename would replace it), reads and patches the
/// others, and exits 2; the read-only file is unchanged.
#[test]
fn write_refuses_a_read_only_file() {
    let tmp = tempfile::tempdir().unwrap();
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    let locked = tmp.path().join("locked.yaml");
    std::fs::write(&locked, body).unwrap();
    std::fs::write(tmp.path().join("open.yaml"), body).unwrap();
    let mut perms = std::fs::metadata(&locked).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&locked, perms).unwrap();
    let o = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--write", "."]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("read-only"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&locked).unwrap(), body);
    assert!(std::fs::metadata(&locked).unwrap().permissions().readonly());
    let open = std::fs::read_to_string(tmp.path().join("open.yaml")).unwrap();
    assert!(open.contains("managed-by: kpol"), "{open}");
}

/// Whatever an interrupted run (a crash, a kill) or anybody else left beside a file, even at
/// the fixed name earlier versions used, is neither reused nor in the way: the temporary has a
/// fresh random name, and only the rename touches the target.
#[test]
fn leftovers_beside_a_file_are_not_reused() {
    let tmp = tempfile::tempdir().unwrap();
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    std::fs::write(tmp.path().join("cm.yaml"), body).unwrap();
    std::fs::write(tmp.path().join(".cm.yaml.kpol.tmp"), "apiVersion: v1\nki").unwrap();
    std::fs::create_dir(tmp.path().join(".cm.yaml.x.kpol.tmp")).unwrap();
    let o = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "--write", "cm.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let now = std::fs::read_to_string(tmp.path().join("cm.yaml")).unwrap();
    assert!(
        now.starts_with("apiVersion: v1\nkind: ConfigMap\n"),
        "{now}"
    );
    assert!(now.contains("managed-by: kpol"), "{now}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join(".cm.yaml.kpol.tmp")).unwrap(),
        "apiVersion: v1\nki"
    );
    let mut names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".cm.yaml.kpol.tmp", ".cm.yaml.x.kpol.tmp", "cm.yaml"]
    );
}

/// `kpol check` validates the resource as the mutate rules leave it.
#[test]
fn check_validates_the_mutated_resource() {
    let o = kpol(&[
        "check",
        "-p",
        "testdata/mutate/check-after-mutate/policies.yaml",
        "testdata/mutate/check-after-mutate/configmap.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let help = kpol(&["check", "--help"]);
    assert!(text(&help.stdout).contains("mutate rules are applied first"));
}

/// Standard input is read with `-` and the patched text printed; `--diff` names the files
/// without a doubled slash.
#[test]
fn stdin_and_diff_names() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(["mutate", "-p", LABELS, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"apiVersion: v1\nkind: Service\nmetadata:\n  name: s # svc\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        text(&o.stdout),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s # svc\n  labels:\n    app.kubernetes.io/managed-by: kpol\n"
    );
    let d = kpol(&[
        "mutate",
        "-p",
        LABELS,
        "--diff",
        "./testdata/mutate/add-default-labels/resource.yaml",
    ]);
    assert!(
        text(&d.stdout).starts_with("--- a/testdata/mutate/add-default-labels/resource.yaml\n"),
        "{}",
        text(&d.stdout)
    );
}

/// A patch that would change an anchor shared with an alias leaves that resource alone (with
/// an error, exit 2); the other documents are still patched.
#[test]
fn shared_anchors_are_not_edited_through_an_alias() {
    let tmp = tempfile::tempdir().unwrap();
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: &l {x: \"1\"}\n  annotations: *l\n";
    std::fs::write(tmp.path().join("cm.yaml"), body).unwrap();
    let o = kpol_in(tmp.path(), &["mutate", "-p", LABELS, "cm.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("cm.yaml:6:1: ConfigMap default/b"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        text(&o.stdout),
        body.replacen(
            "  name: a\n",
            "  name: a\n  labels:\n    app.kubernetes.io/managed-by: kpol\n",
            1
        )
    );
}

/// A PolicyException covering a mutate rule skips it for the resources it matches.
#[test]
fn exceptions_skip_mutate_rules() {
    let o = kpol(&[
        "mutate",
        "-p",
        LABELS,
        "--diff",
        "-e",
        "testdata/mutate/exception/exception.yaml",
        "testdata/mutate/add-default-labels/resource.yaml",
    ]);
    let d = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let added = d
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    assert_eq!(added, 1, "{d}");
    assert!(!d.contains("+  labels:"), "{d}");
}

/// `{{@}}` under `corp.com/retention` reads that one label (Kyverno's
/// `regex_replace_with_slash`: `days_37` becomes `days_30`); the key was split in two before.
#[test]
fn at_under_a_label_key_with_a_slash() {
    let o = kpol(&[
        "mutate",
        "-p",
        "testdata/mutate/at-key-with-slash/policy.yaml",
        "testdata/mutate/at-key-with-slash/resource.yaml",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains("    corp.com/retention: days_30\n"), "{out}");
    assert!(!out.contains("days_37"), "{out}");
}

/// `-f values.yaml` gives the variables and namespace labels, as for `kpol check`: the owner
/// comes from `globalValues`, the `tier` label from a rule whose namespaceSelector matches the
/// namespace's labels. Without it the variable does not resolve (exit 1) and the namespace
/// has no labels.
#[test]
fn values_file_feeds_variables_and_namespace_labels() {
    let d = "testdata/mutate-errors";
    let args = |extra: &[&str]| {
        let mut a = vec![
            "mutate".to_owned(),
            "-p".to_owned(),
            format!("{d}/policy-fail.yaml"),
            "-p".to_owned(),
            format!("{d}/policy-namespace.yaml"),
        ];
        a.extend(extra.iter().map(|s| (*s).to_owned()));
        a.push(format!("{d}/configmap.yaml"));
        a
    };
    let with = args(&["-f", "testdata/mutate-errors/values.yaml"]);
    let o = kpol(&with.iter().map(String::as_str).collect::<Vec<_>>());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        out.contains("  labels:\n    owner: payments\n    tier: prod\n"),
        "{out}"
    );
    let without = args(&[]);
    let o = kpol(&without.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("labels:"), "{}", text(&o.stdout));
    let set = args(&["--set", "owner=search"]);
    let o = kpol(&set.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("owner: search"),
        "{}",
        text(&o.stdout)
    );
}
