//! Pattern evaluation: the input's first document is the pattern, the second the resource.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(docs) = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()) else {
        return;
    };
    let mut it = docs.into_iter().map(|d| d.root);
    let (Some(pattern), Some(resource)) = (it.next(), it.next()) else {
        return;
    };
    let _ = kpol::validate_pattern("r", Some("m"), &resource, &pattern);
    let _ = kpol::validate_any_pattern("r", None, &resource, &[pattern.clone(), resource.clone()]);
});
