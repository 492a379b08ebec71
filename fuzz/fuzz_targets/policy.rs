//! Policy loading, validation and compilation (autogen, JMESPath, CEL) on arbitrary YAML.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let source = Arc::new(kpol::source::SourceFile::new("fuzz.yaml", text));
    if let Ok(docs) = kpol::yaml::parse_documents(source.text(), kpol::yaml::Limits::default()) {
        let _ = kpol::load_policies(&source, docs);
    }
});
