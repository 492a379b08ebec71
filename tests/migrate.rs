//! Round trip of `kpol migrate` on the Kyverno policy library (`KPOL_CONFORMANCE_DIR`, as the
//! conformance ratchet): every converted policy loads in kpol without a diagnostic, and the
//! share converted does not fall below the floor measured when this test was written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kpol::migrate::{migrate_loaded, to_yaml};
use kpol::source::SourceFile;
use kpol::yaml::{Limits, parse_documents};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            yaml_files(&e, out);
        } else if e.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(e);
        }
    }
}

#[test]
fn every_converted_library_policy_loads_cleanly() {
    let Some(dir) = std::env::var_os("KPOL_CONFORMANCE_DIR").map(PathBuf::from) else {
        eprintln!("migrate round trip skipped: KPOL_CONFORMANCE_DIR is not set");
        return;
    };
    let mut files = Vec::new();
    yaml_files(&dir, &mut files);
    let (mut seen, mut converted) = (0usize, 0usize);
    let mut problems = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(docs) = parse_documents(&text, Limits::default()) else {
            continue;
        };
        let original = Arc::new(SourceFile::new(f.display().to_string(), text.clone()));
        let loaded = kpol::load_policies(&original, docs);
        for m in migrate_loaded(&loaded) {
            seen += 1;
            if m.policies.is_empty() {
                continue;
            }
            converted += 1;
            let yaml = to_yaml(&m, &f.display().to_string(), 1);
            let name = format!("{} (converted)", f.display());
            let source = Arc::new(SourceFile::new(name.clone(), yaml.clone()));
            let out = match parse_documents(&yaml, Limits::default()) {
                Ok(d) => d,
                Err(e) => {
                    problems.push(format!("{name}: {}", e.message));
                    continue;
                }
            };
            let loaded = kpol::load_policies(&source, out);
            for d in &loaded.diagnostics {
                problems.push(format!("{name}: {}\n{yaml}", d.message));
            }
            for i in &loaded.invalid {
                problems.push(format!("{name}: invalid: {}", i.reason));
            }
            if loaded.policies.len() != m.policies.len() {
                problems.push(format!(
                    "{name}: {} policies written, {} loaded",
                    m.policies.len(),
                    loaded.policies.len()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{converted} of {seen} ClusterPolicies/Policies converted (some rules may be left out)"
    );
    assert!(seen > 300, "the library has {seen} policies");
    assert!(converted * 2 > seen, "only {converted} of {seen} converted");
}
