//! Generate rules in test files (cli-compat.md §3.1, `commands/test/command.go`
//! `checkResult`): `cloneSourceResource` files feed the rule's clone sources, and each
//! resource a generate rule created is compared with the one in `generatedResource` (or any
//! of `generatedResources`) that has the same apiVersion, kind, namespace and name — after
//! the CLI's label fixup and tidying ([`kpol::generate::same_resource`]).

use std::path::Path;

use serde_json::Value;

use super::load::{joined, read_yaml};
use kpol::resource::Resource;
use kpol::testfile::{ResultEntry, TestSpec};

/// What the test's result entries name for generate rules, loaded once per test.
#[derive(Debug, Default)]
pub struct GenerateInputs {
    /// `(policy, rule, resource)` from `cloneSourceResource` files.
    pub clone_sources: Vec<(String, String, Resource)>,
    /// Expected-resource files by the path as written: their documents, or why they could
    /// not be read.
    pub expected: Vec<(String, Result<Vec<Value>, String>)>,
}

/// Loads the clone sources and expected files the test's entries name. Unreadable files are
/// kept as errors: they fail the rows that need them, as upstream does.
pub fn load(dir: &Path, spec: &TestSpec) -> GenerateInputs {
    let mut out = GenerateInputs::default();
    for entry in &spec.results {
        if let Some(file) = &entry.clone_source_resource
            && let Ok((src, docs)) = read_yaml(&joined(dir, file))
        {
            let policy = entry.policy.rsplit('/').next().unwrap_or("").to_owned();
            for d in docs {
                if let Ok(r) = Resource::from_document(d.root, Some(src.clone()), d.index) {
                    out.clone_sources
                        .push((policy.clone(), entry.rule.clone(), r));
                }
            }
        }
        let files = entry
            .generated_resource
            .iter()
            .chain(&entry.generated_resources);
        for file in files {
            if out.expected.iter().any(|(f, _)| f == file) {
                continue;
            }
            let loaded = read_yaml(&joined(dir, file))
                .map(|(_, docs)| docs.iter().map(|d| d.root.to_json()).collect())
                .map_err(|e| e.to_string());
            out.expected.push((file.clone(), loaded));
        }
    }
    out
}

/// The check of one generated resource against the entry's expected files: `Ok` to go on
/// with the result comparison, else the row's message and reason.
pub fn check(
    entry: &ResultEntry,
    expected: &[(String, Result<Vec<Value>, String>)],
    actual: &Value,
) -> Result<(), (String, String)> {
    if let Some(file) = &entry.generated_resource
        && entry.generated_resources.is_empty()
    {
        return match compare(expected, file, actual, "GeneratedResource") {
            Err(e) => Err((e, "Resource error".to_owned())),
            Ok(true) => Ok(()),
            Ok(false) => Err((
                "Patched resource didn't match the generated resource in the test result"
                    .to_owned(),
                "Resource diff".to_owned(),
            )),
        };
    }
    if entry.generated_resources.is_empty() {
        return Ok(());
    }
    let mut last_err = None;
    let mut diff = false;
    for file in &entry.generated_resources {
        match compare(expected, file, actual, "GeneratedResources") {
            Ok(true) => return Ok(()),
            Ok(false) => diff = true,
            Err(e) => last_err = Some(e),
        }
    }
    match last_err {
        Some(e) if !diff => Err((e, "Resource error".to_owned())),
        _ => Err((
            "Generated resource didn't match any of the expected generated resources in the test result"
                .to_owned(),
            "Resource diff".to_owned(),
        )),
    }
}

/// `getAndCompareResource`: the expected document with the actual one's identity, compared.
fn compare(
    expected: &[(String, Result<Vec<Value>, String>)],
    file: &str,
    actual: &Value,
    what: &str,
) -> Result<bool, String> {
    let docs = match expected.iter().find(|(f, _)| f == file) {
        Some((_, Ok(docs))) => docs,
        Some((_, Err(e))) => return Err(format!("error: failed to load {what} resource ({e})")),
        None => return Err(format!("error: failed to load {what} resource ({file})")),
    };
    let id = |v: &Value| -> [String; 4] {
        let s = |p: &str| {
            v.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        [
            s("/apiVersion"),
            s("/kind"),
            s("/metadata/namespace"),
            s("/metadata/name"),
        ]
    };
    let want = id(actual);
    match docs.iter().find(|d| id(d) == want) {
        Some(doc) => Ok(kpol::generate::same_resource(actual, doc)),
        None => Err(format!(
            "error: failed to load {what} resource (resource with name {} not found in manifest)",
            want[3]
        )),
    }
}
