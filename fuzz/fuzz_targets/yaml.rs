//! The YAML layer and scalar resolver on arbitrary input: never a panic, bounded work.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(docs) = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()) {
        for d in docs {
            let _ = d.root.to_json();
            let _ = d.root.locate(&["spec", "containers", "0"]);
        }
    }
});
