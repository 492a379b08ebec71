//! Kyverno's JMESPath dialect: the first line is the expression, the rest the document.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (expr, doc) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(e) = kpol::jmespath::Expr::compile(expr) else {
        return;
    };
    let root = kpol::yaml::parse_documents(doc, kpol::yaml::Limits::default())
        .ok()
        .and_then(|d| d.into_iter().next())
        .map_or_else(kpol::yaml::Node::null, |d| d.root);
    let _ = e.search(&root);
});
