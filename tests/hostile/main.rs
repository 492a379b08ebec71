//! Hostile input: every case ends with a clear message (file, and line:column where there is
//! one), a bounded run, and the other files still checked. Static cases live in
//! `testdata/hostile/`; large ones are generated into a temporary directory.
//!
//! Every run is bounded: killed after [`HANG`] (a hang fails the test instead of the suite),
//! and its peak RSS, sampled from `/proc` while it runs, must stay under [`MAX_RSS_KB`]. Each
//! run prints its wall time and peak RSS (`-- --nocapture`); `KPOL_BIN` runs the suite against
//! another binary, e.g. an optimised build, and `KPOL_HOSTILE_MAX_SECS` bounds each run's CPU
//! time, user and system (CI: 2 s against the `ci-release` build; docs/FUZZING.md has the
//! figures). CPU time, not wall time: a host busy with other work stretches the wall clock of a
//! run, not the work it does; a run that waits forever is caught by [`HANG`]. It is read from
//! the children this process has waited for, so the bound needs `--test-threads 1`.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A run this long is a hang.
const HANG: Duration = Duration::from_secs(120);
/// Peak resident memory any hostile case may reach (300 MB).
const MAX_RSS_KB: u64 = 300 * 1000;

// Each part of the hostile-input review has its module; the runner and helpers above them are
// shared.
mod eval;
mod fs;
mod input;

pub(crate) const GOOD_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec:\n  containers:\n  - name: a\n    image: nginx:1.27\n    resources: {limits: {cpu: 100m, memory: 64Mi}}\n";

/// kpol's `add-default-labels` policy (relative to the crate root, where kpol runs):
/// `kpol mutate` applies only the policies it is given.
pub(crate) const LABELS: &str = "policies/add-default-labels.yaml";

/// Runs kpol with the bounds above.
pub(crate) fn kpol(args: &[&str]) -> Output {
    let bin = std::env::var_os("KPOL_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_kpol").into());
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kpol");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let cpu_before = children_cpu_secs();
    let mut peak_kb = 0;
    let status = loop {
        peak_kb = peak_kb.max(peak_rss_kb(child.id()).unwrap_or(0));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("kpol {args:?} ran for more than {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let cpu = children_cpu_secs() - cpu_before;
    eprintln!(
        "kpol {args:?}: {} ms wall, {:.0} ms CPU, peak RSS {peak_kb} kB",
        start.elapsed().as_millis(),
        cpu * 1000.0
    );
    if let Some(max) = std::env::var("KPOL_HOSTILE_MAX_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    {
        assert!(
            cpu < max,
            "kpol {args:?} took {cpu:.2} s of CPU time (bound {max} s)"
        );
    }
    assert!(
        peak_kb < MAX_RSS_KB,
        "kpol {args:?} reached {peak_kb} kB of resident memory"
    );
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// User and system time of the children this process has waited for, in seconds:
/// `cutime` and `cstime` of `/proc/self/stat`, in Linux's clock ticks (USER_HZ, 100 a second
/// on every architecture Linux exports it for).
fn children_cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command name (in parentheses, which may hold spaces): state is
    // field 3, cutime field 16, cstime field 17.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(13) + ticks(14)) / 100.0
}

/// `kpol check` of a path with the resource-limits policy: exit code and standard output.
pub(crate) fn limits_check(path: &Path) -> (Option<i32>, String) {
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        path.to_str().unwrap(),
    ]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// `kpol check` of the sample debug Pod with one policy: exit code and standard output.
pub(crate) fn policy_on_debug_pod(policy: &str) -> (Option<i32>, String) {
    let o = kpol(&["check", "-p", policy, "testdata/sample/debug-pod.yaml"]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// `VmHWM` of a running process (Linux); `None` elsewhere or once it has exited.
pub(crate) fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Checks `bad` beside a good Pod with the resource-limits policy: exit 2, the message, and the
/// good Pod still evaluated (one pass).
pub(crate) fn assert_reported_beside_good(bad: &Path, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, GOOD_POD).unwrap();
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{text}");
    for e in expected {
        assert!(text.contains(e), "expected {e:?} in:\n{text}");
    }
    assert!(
        text.contains("pass: 1,"),
        "the good file was not checked:\n{text}"
    );
}

#[test]
fn alias_bomb_is_refused_with_its_position() {
    assert_reported_beside_good(
        Path::new("testdata/hostile/alias-bomb.yaml"),
        &["error[yaml]", "alias expansion", "alias-bomb.yaml:"],
    );
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("deep.yaml");
    std::fs::write(
        &p,
        "a: ".to_owned() + &"[".repeat(10_000) + &"]".repeat(10_000),
    )
    .unwrap();
    assert_reported_beside_good(&p, &["error[yaml]", "deep.yaml:1:"]);
}

#[test]
fn invalid_utf8_and_binary_files_are_encoding_errors() {
    assert_reported_beside_good(
        Path::new("testdata/hostile/invalid-utf8.yaml"),
        &["error[encoding]", "invalid-utf8.yaml:4:"],
    );
    assert_reported_beside_good(
        Path::new("testdata/hostile/binary.yaml"),
        &["error[encoding]", "binary.yaml:"],
    );
}

#[test]
fn tab_indentation_is_a_yaml_error_with_line() {
    assert_reported_beside_good(
        Path::new("testdata/hostile/tab-indent.yaml"),
        &["error[yaml]", "tab-indent.yaml:4:"],
    );
}

#[test]
fn oversized_file_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.yaml");
    // 200 MB of one ConfigMap's data: refused by size, never parsed.
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(200 * 1024 * 1024).unwrap();
    assert_reported_beside_good(&p, &["error[limit]", "huge.yaml", "64 MiB"]);
}

#[test]
fn a_directory_named_like_a_manifest_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("not-a-file.yaml");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("inner.txt"), "x").unwrap();
    // Named explicitly, a directory is walked, never read as a file; it holds no manifest,
    // and a run with nothing to check is incomplete (exit 2), not clean.
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        p.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to check"));
}

#[test]
fn duplicate_keys_last_wins_like_kubernetes() {
    let o = kpol(&["check", "testdata/hostile/duplicate-keys.yaml"]);
    let text = String::from_utf8_lossy(&o.stdout);
    // hostNetwork: true is overridden by the later hostNetwork: false.
    assert!(!text.contains("host-namespaces"), "{text}");
}

#[test]
fn many_documents_in_one_file_are_all_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.yaml");
    let mut text = String::with_capacity(100_000 * 60);
    for i in 0..100_000 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}}}\n"
        ));
    }
    std::fs::write(&p, text).unwrap();
    let o = kpol(&[
        "check",
        "-p",
        "policies/require-resource-limits.yaml",
        "--format",
        "json",
        p.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["pass"], 0);
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(0));
}

#[test]
fn validate_pattern_with_add_anchor_is_an_invalid_policy() {
    let (code, text) = policy_on_debug_pod("testdata/hostile/unknown-anchor-policy.yaml");
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("error[invalid-policy]"), "{text}");
    assert!(text.contains("unknown-anchor-policy.yaml:"), "{text}");
}

#[cfg(unix)]
#[test]
fn symlink_loop_is_reported_once_and_the_rest_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.yaml"), GOOD_POD).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loop")).unwrap();
    let (code, text) = limits_check(dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("symbolic link loop"), "{text}");
    assert!(text.contains("pass: 1,"), "{text}");
}

/// A policy whose JMESPath nests 5,000 levels deep: an invalid-policy diagnostic with a short
/// quote of the expression, no stack overflow, the other policy still applied.
#[test]
fn deeply_nested_jmespath_in_a_policy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let expr = "(".repeat(5_000) + "request.object.metadata.name" + &")".repeat(5_000);
    let policy = format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: deep}}\nspec:\n  rules:\n  - name: r\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    validate:\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ {expr} }}}}\"\n            operator: Equals\n            value: x\n"
    );
    let p = dir.path().join("deep.yaml");
    std::fs::write(&p, policy).unwrap();
    let pod = dir.path().join("pod.yaml");
    std::fs::write(&pod, GOOD_POD).unwrap();
    let o = kpol(&[
        "check",
        "-p",
        p.to_str().unwrap(),
        "-p",
        "policies/require-resource-limits.yaml",
        pod.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        text.contains("error[invalid-policy]"),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        text.contains("deep.yaml:12:"),
        "{}",
        &text[..text.len().min(2000)]
    );
    // The diagnostic quotes the expression shortened (the rule's runtime error keeps
    // Kyverno's full `failed to resolve <expr>` text).
    let diag = text
        .lines()
        .find(|l| l.starts_with("error[invalid-policy]"))
        .unwrap();
    assert!(
        diag.len() < 400,
        "diagnostic not shortened: {} bytes",
        diag.len()
    );
    assert!(
        text.contains("pass: 1,"),
        "{}",
        &text[..text.len().min(2000)]
    );
}

/// A policy whose deny condition calls `regex_match` with a broken expression: the rule is an
/// error for each resource it matches (Kyverno's result), naming the regex problem.
#[test]
fn invalid_regex_in_a_policy_is_a_rule_error() {
    let (code, text) = policy_on_debug_pod("testdata/hostile/invalid-regex-policy.yaml");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("error[invalid-regex/name-pattern]"), "{text}");
    assert!(text.contains("unclosed character class"), "{text}");
    assert!(text.contains("error: 1,"), "{text}");
}

/// An operator Kyverno does not know makes the policy invalid at load, pointing at the
/// operator; the run goes on without it.
#[test]
fn unknown_operator_is_an_invalid_policy_at_its_line() {
    let o = kpol(&[
        "check",
        "--width",
        "0",
        "-p",
        "testdata/hostile/unknown-operator-policy.yaml",
        "-p",
        "policies/require-resource-limits.yaml",
        "testdata/sample",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("error[invalid-policy]"), "{text}");
    assert!(
        text.contains("entered value of `operator` is invalid"),
        "{text}"
    );
    assert!(
        text.contains("unknown-operator-policy.yaml:19:23"),
        "{text}"
    );
    assert!(text.contains("fail[require-resource-limits/"), "{text}");
}

/// A file that cannot be read (here `/proc/self/mem`, which fails with EIO even for root) is an
/// io error naming it; the good file is still checked.
#[cfg(target_os = "linux")]
#[test]
fn unreadable_file_is_an_io_error() {
    assert_reported_beside_good(
        Path::new("/proc/self/mem"),
        &["error[io]", "cannot read /proc/self/mem"],
    );
}

/// A named pipe inside a tree is not a manifest: it is skipped, never opened (opening a FIFO
/// with no writer would block the run).
#[cfg(unix)]
#[test]
fn a_fifo_in_a_tree_is_skipped_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.yaml"), GOOD_POD).unwrap();
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        panic!("mkfifo is needed for this test");
    }
    let (code, text) = limits_check(dir.path());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("pass: 1,"), "{text}");
}
