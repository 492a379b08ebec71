//! Shared by the fuzz targets that run the engine: an engine over embedded policies.

use std::sync::Arc;

/// Loads every policy of `texts` (invalid ones are dropped) into one engine.
pub fn engine(texts: &[&str]) -> kpol::engine::Engine {
    let mut policies = Vec::new();
    for text in texts {
        let source = Arc::new(kpol::source::SourceFile::new("p.yaml", *text));
        if let Ok(docs) = kpol::yaml::parse_documents(text, kpol::yaml::Limits::default()) {
            policies.extend(kpol::load_policies(&source, docs).policies);
        }
    }
    kpol::engine::Engine::new(policies)
}
