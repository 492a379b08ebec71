//! The Kyverno CLI's own files on arbitrary YAML: every document read as a Test
//! (`kyverno-test.yaml`), a values file, an inline values spec and a userinfo file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let source = kpol::source::SourceFile::new("kyverno-test.yaml", text);
    let Ok(docs) = kpol::yaml::parse_documents(source.text(), kpol::yaml::Limits::default()) else {
        return;
    };
    let mut warnings = Vec::new();
    for doc in &docs {
        let _ = kpol::testfile::parse_test(&source, &doc.root);
        let _ = kpol::request::values::Values::from_file(&source, &doc.root, &mut warnings);
        let _ = kpol::request::values::Values::from_spec(&source, &doc.root);
        let _ = kpol::testfile::user_info(&source, &doc.root, &mut warnings);
    }
});
