//! `kpol test --format json`: one document with every row (flattened, with its test file),
//! every file's verdict, and the totals. Documented in docs/test-json.md; the conformance
//! ratchet (tests/conformance.rs) reads it.

use serde::Serialize;

use crate::cli::test::report::{FileReport, Totals};

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    files: Vec<FileOut<'a>>,
    rows: Vec<RowOut<'a>>,
    totals: &'a Totals,
}

#[derive(Serialize)]
struct FileOut<'a> {
    file: &'a str,
    ok: bool,
    rows: usize,
    rows_not_ok: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<&'a str>,
}

#[derive(Serialize)]
struct RowOut<'a> {
    file: &'a str,
    test: &'a str,
    id: usize,
    policy: &'a str,
    rule: &'a str,
    resource: &'a str,
    kind: &'a str,
    expected: &'a str,
    actual: &'a str,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

/// The JSON document; `detailed` adds each row's rule message.
pub fn render(files: &[FileReport], totals: &Totals, detailed: bool) -> String {
    let mut out = Output {
        version: 1,
        files: Vec::with_capacity(files.len()),
        rows: Vec::new(),
        totals,
    };
    for f in files {
        let all_rows = f.tests.iter().flat_map(|t| &t.rows);
        out.files.push(FileOut {
            file: &f.path,
            ok: f.ok(),
            rows: all_rows.clone().count(),
            rows_not_ok: all_rows.filter(|r| !r.ok).count(),
            reason: f.failure_reason(),
            errors: f
                .error
                .iter()
                .chain(f.tests.iter().filter_map(|t| t.error.as_ref()))
                .chain(f.tests.iter().flat_map(|t| &t.errors))
                .map(String::as_str)
                .collect(),
            warnings: f
                .tests
                .iter()
                .flat_map(|t| &t.warnings)
                .map(String::as_str)
                .collect(),
        });
        for t in &f.tests {
            for (i, r) in t.rows.iter().enumerate() {
                out.rows.push(RowOut {
                    file: &f.path,
                    test: &t.name,
                    id: i + 1,
                    policy: &r.policy,
                    rule: &r.rule,
                    resource: &r.resource,
                    kind: &r.kind,
                    expected: &r.expected,
                    actual: &r.actual,
                    ok: r.ok,
                    reason: (!r.ok).then_some(r.reason.as_str()),
                    message: detailed.then_some(r.message.as_str()),
                });
            }
        }
    }
    let mut s =
        serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
