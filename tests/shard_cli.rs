//! `kpol check --shard I/N` and `kpol merge`: the shards' JSON reports merged are the
//! unsharded report, byte for byte, with its exit code.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::kpol;

fn merged_equals_unsharded(args: &[&str], n: usize) -> i32 {
    merged_equals_unsharded_in(args, n, "json")
}

fn merged_equals_unsharded_in(args: &[&str], n: usize, format: &str) -> i32 {
    let dir = tempfile::tempdir().unwrap();
    let mut full_args = vec!["check", "--no-config", "--format", format];
    full_args.extend_from_slice(args);
    let full = kpol(&full_args);
    let mut files = Vec::new();
    // Given to `kpol merge` in reverse order: it orders them itself.
    for i in (1..=n).rev() {
        let spec = format!("{i}/{n}");
        let mut shard_args = full_args.clone();
        shard_args.extend(["--shard", spec.as_str()]);
        let o = kpol(&shard_args);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let shard = if format == "sarif" {
            &v["runs"][0]["properties"]["kpolShard"]
        } else {
            &v["shard"]
        };
        assert_eq!(shard["index"], i, "{spec}");
        assert_eq!(shard["count"], n, "{spec}");
        let path = dir.path().join(format!("shard-{i}.{format}"));
        std::fs::write(&path, &o.stdout).unwrap();
        files.push(path.display().to_string());
    }
    let mut merge_args = vec!["merge"];
    merge_args.extend(files.iter().map(String::as_str));
    let merged = kpol(&merge_args);
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&full.stdout)
    );
    assert_eq!(merged.status.code(), full.status.code());
    // `-o FILE` writes the same bytes.
    let out = dir.path().join(format!("merged.{format}"));
    let out_s = out.display().to_string();
    merge_args.extend(["-o", out_s.as_str()]);
    let to_file = kpol(&merge_args);
    assert_eq!(to_file.status.code(), full.status.code());
    assert_eq!(std::fs::read(&out).unwrap(), full.stdout);
    full.status.code().unwrap()
}

/// Failures, an input that is not YAML, an invalid policy and a skip spread over 3 shards.
#[test]
fn three_shards_merge_to_the_unsharded_report_with_errors() {
    let code = merged_equals_unsharded(
        &[
            "testdata/report/resources",
            "-p",
            "testdata/report/policies",
        ],
        3,
    );
    assert_eq!(code, 2);
}

/// A run that only fails rules (exit 1), in more shards than some directories have files.
#[test]
fn shards_merge_to_the_unsharded_exit_code() {
    let args = [
        "-p",
        "policies/disallow-latest-tag.yaml",
        "testdata/check/invalid/pod.yaml",
        "testdata/check/mixed/a-good-pod.yaml",
        "testdata/check/mixed/c-no-limits-deployment.yaml",
        "testdata/report/resources/pod.yaml",
    ];
    assert_eq!(merged_equals_unsharded(&args, 2), 1);
    assert_eq!(merged_equals_unsharded(&args, 5), 1);
}

/// The SARIF logs of 2 and 3 shards merge to the unsharded log, byte for byte: findings,
/// an input that is not YAML and an invalid policy (results of kpol's own rules, and
/// notifications every shard repeats), rules renumbered, `executionSuccessful` false.
#[test]
fn sarif_shards_merge_to_the_unsharded_log() {
    let args = [
        "testdata/report/resources",
        "-p",
        "testdata/report/policies",
    ];
    for n in [2, 3] {
        assert_eq!(
            merged_equals_unsharded_in(&args, n, "sarif"),
            2,
            "{n} shards"
        );
    }
    let args = [
        "-p",
        "policies/disallow-latest-tag.yaml",
        "-p",
        "testdata/report/policies",
        "testdata/check/mixed",
        "testdata/report/resources/pod.yaml",
    ];
    for n in [2, 3] {
        merged_equals_unsharded_in(&args, n, "sarif");
    }
}

/// JSON reports and SARIF logs are not merged together (exit 2).
#[test]
fn merge_refuses_mixed_formats() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "check",
        "--no-config",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "testdata/check/mixed",
    ];
    let mut paths = Vec::new();
    for (i, format) in [(1, "json"), (2, "sarif")] {
        let spec = format!("{i}/2");
        let mut args = base.to_vec();
        args.extend(["--format", format, "--shard", spec.as_str()]);
        let p = dir.path().join(format!("{i}.{format}"));
        std::fs::write(&p, kpol(&args).stdout).unwrap();
        paths.push(p.display().to_string());
    }
    let o = kpol(&["merge", paths[0].as_str(), paths[1].as_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not all one format"));
    assert!(o.stdout.is_empty());
    // An unsharded SARIF log is refused as the JSON one is.
    let plain = dir.path().join("plain.sarif");
    let mut args = base.to_vec();
    args.extend(["--format", "sarif"]);
    std::fs::write(&plain, kpol(&args).stdout).unwrap();
    let o = kpol(&["merge", plain.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("without `properties.kpolShard`"));
}

/// A shard missing, a report that is not a shard, a bad `--shard`: exit 2 with a reason.
#[test]
fn merge_refuses_what_is_not_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "check",
        "--no-config",
        "--format",
        "json",
        "-p",
        "policies/disallow-latest-tag.yaml",
        "testdata/check/invalid/pod.yaml",
    ];
    let mut one = base.to_vec();
    one.extend(["--shard", "1/2"]);
    let p1 = dir.path().join("1.json");
    std::fs::write(&p1, kpol(&one).stdout).unwrap();
    let missing = kpol(&["merge", p1.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not shards 1/1"));

    let plain = dir.path().join("plain.json");
    std::fs::write(&plain, kpol(&base).stdout).unwrap();
    let o = kpol(&["merge", plain.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("without `shard`"));

    for bad in ["0/3", "4/3", "x"] {
        let mut args = base.to_vec();
        args.extend(["--shard", bad]);
        assert_eq!(kpol(&args).status.code(), Some(2), "{bad}");
    }
}
