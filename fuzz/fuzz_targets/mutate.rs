//! The mutate phase on an arbitrary manifest: strategic merge with anchors, JSON6902,
//! foreach, and the byte edits that write the result back (re-parsed and verified).
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static ENGINE: LazyLock<kpol::engine::Engine> = LazyLock::new(|| {
    common::engine(&[
        include_str!("../../policies/add-default-labels.yaml"),
        include_str!("../../testdata/mutate/psm-containers/policy.yaml"),
        include_str!("../../testdata/mutate/json6902/policy.yaml"),
        include_str!("../../testdata/mutate/foreach/policy.yaml"),
        include_str!("../../testdata/mutate/global-anchor/policy.yaml"),
    ])
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let request = kpol::request::Request::default();
    let _ = kpol::engine::file::mutate_file(
        &ENGINE,
        &request,
        "r.yaml",
        text,
        kpol::yaml::Limits::default(),
    );
});
