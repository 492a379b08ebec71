//! Kyverno's `images` context where its extractor or the reference grammar refuses
//! (`testdata/images-extract`, rows checked with the Kyverno v1.19.0 CLI): digests go-digest
//! refuses, a container without a name, a bracketed IPv6 registry, a name given twice.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{kpol, text};

#[test]
fn the_test_file_passes_as_in_kyverno() {
    let o = kpol(&["test", "testdata/images-extract"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("5 tests passed and 0 tests failed"));
}

#[test]
fn check_gives_kyvernos_messages() {
    let o = kpol(&[
        "check",
        "--no-config",
        "--format",
        "concise",
        "-p",
        "testdata/images-extract/policy.yaml",
        "testdata/images-extract/resources.yaml",
    ]);
    let out = text(&o.stdout);
    let digest = |why: &str| {
        format!("defaultRegistry: docker.io, enableDefaultRegistryMutation: true: {why})")
    };
    assert!(
        out.contains(&digest("invalid checksum digest format")),
        "{out}"
    );
    assert!(
        out.contains(&digest("invalid checksum digest length")),
        "{out}"
    );
    assert!(out.contains("at path : invalid key"), "{out}");
    assert!(
        out.contains("pass: 2, fail: 0, warn: 0, error: 3, skip: 0"),
        "{out}"
    );
}
