//! The whole engine on an arbitrary manifest with the embedded default policies: reading,
//! normalisation, matching, every validate form; and the positions a finding prints (line,
//! column and line text of each resource's span, checked against counting every byte).
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;

static ENGINE: LazyLock<kpol::engine::Engine> = LazyLock::new(|| {
    common::engine(&[
        include_str!("../../policies/require-resource-limits.yaml"),
        include_str!("../../policies/disallow-privileged-containers.yaml"),
        include_str!("../../policies/disallow-latest-tag.yaml"),
        include_str!("../../policies/pod-security-baseline.yaml"),
        include_str!("../../testdata/values/policy.yaml"),
    ])
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let source = Arc::new(kpol::source::SourceFile::new("r.yaml", text));
    let m = kpol::manifest::read_manifests(&source, kpol::yaml::Limits::default());
    let request = kpol::request::Request::default();
    for r in &m.resources {
        let _ = ENGINE.validate(r, &request);
        for offset in [r.root.span.start, r.root.span.end] {
            let lc = source.line_col(offset);
            let before = &source.text().as_bytes()[..(offset as usize).min(source.text().len())];
            let breaks = before.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(lc.line as usize, breaks + 1);
            let line = source.line_text(lc.line);
            assert!(!line.contains('\n'));
        }
    }
});
