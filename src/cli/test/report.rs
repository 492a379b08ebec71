//! What running one test file produced: per test (YAML document) its rows or the error that
//! stopped it; and the totals over all files. Plain data, rendered by `human` and `json`.

use serde::Serialize;

use super::rows::{Count, Row};
use kpol::testfile::LoadError;

#[derive(Debug, Default, Serialize)]
pub struct FileReport {
    /// The test file's path, as walked.
    pub path: String,
    /// The file could not be read or parsed: no test ran.
    pub error: Option<String>,
    pub tests: Vec<TestReport>,
    /// The test file's text, where it could be read (the CI formats point into it).
    #[serde(skip)]
    pub source: Option<kpol::source::Source>,
}

#[derive(Debug, Default, Serialize)]
pub struct TestReport {
    /// `metadata.name`.
    pub name: String,
    pub warnings: Vec<String>,
    /// Non-fatal problems while loading (e.g. policy documents that were skipped).
    pub errors: Vec<String>,
    /// The problem that stopped this test.
    pub error: Option<String>,
    /// Policies, resources, exceptions loaded.
    #[serde(skip)]
    pub applying: (usize, usize, usize),
    pub rows: Vec<Row>,
    /// The rules of the policies the test loaded (`kpol policies --coverage`).
    #[serde(skip)]
    pub rules: Vec<LoadedRule>,
}

/// A rule of a policy a test loaded, as written (autogen rules are counted for the rule they
/// were made from); a CEL policy is one rule without a name.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct LoadedRule {
    /// The policy's key (`namespace/name` for a namespaced policy).
    pub policy: String,
    pub rule: String,
    /// `validate`, `mutate`, `generate`, `verifyImages`, or the CEL policy's kind.
    pub kind: String,
    /// The policy file, as the test names it, with the line of the rule.
    pub file: String,
    pub line: u32,
}

impl TestReport {
    pub fn failed(error: &LoadError, name: String) -> Self {
        Self {
            name,
            error: Some(error.to_string()),
            ..Self::default()
        }
    }
}

impl FileReport {
    /// The file passes when it loaded and every row of every test is ok.
    pub fn ok(&self) -> bool {
        self.error.is_none()
            && self
                .tests
                .iter()
                .all(|t| t.error.is_none() && t.rows.iter().all(|r| r.ok))
    }

    /// Whether anything stopped part of this file from running.
    pub fn incomplete(&self) -> bool {
        self.error.is_some() || self.tests.iter().any(|t| t.error.is_some())
    }

    /// What stopped the file, then what stopped each of its tests.
    pub fn errors(&self) -> impl Iterator<Item = &String> {
        self.error
            .iter()
            .chain(self.tests.iter().filter_map(|t| t.error.as_ref()))
    }

    /// `Path: …` / `Error: …` lines for the errors block.
    pub fn error_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in self.errors() {
            out.push(format!("Path: {}", self.path));
            out.push(format!("  Error: {e}"));
        }
        out
    }

    /// A short reason for a failing file: its error, else the distinct reasons of its not-ok
    /// rows in order of appearance (at most three).
    pub fn failure_reason(&self) -> Option<String> {
        if let Some(e) = self
            .error
            .as_ref()
            .or_else(|| self.tests.iter().find_map(|t| t.error.as_ref()))
        {
            return Some(format!("error: {e}"));
        }
        let mut reasons: Vec<String> = Vec::new();
        for t in &self.tests {
            for r in t.rows.iter().filter(|r| !r.ok) {
                let reason = r.reason.clone();
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            }
        }
        if reasons.is_empty() {
            return None;
        }
        if reasons.len() > 3 {
            reasons.truncate(3);
            reasons.push("…".to_owned());
        }
        Some(reasons.join("; "))
    }
}

/// Row and file counts over the whole run.
#[derive(Debug, Default, Serialize)]
pub struct Totals {
    pub files: usize,
    pub files_passed: usize,
    pub files_failed: usize,
    pub rows: usize,
    pub rows_ok: usize,
    pub rows_not_ok: usize,
    /// Kyverno's counters (§8.5): pass + skip are "tests passed".
    pub pass: usize,
    pub skip: usize,
    pub fail: usize,
    /// Rows not ok because kpol does not support a feature yet.
    pub unsupported: usize,
}

impl Totals {
    pub fn of(files: &[FileReport]) -> Self {
        let mut t = Totals {
            files: files.len(),
            ..Totals::default()
        };
        for f in files {
            if f.ok() {
                t.files_passed += 1;
            } else {
                t.files_failed += 1;
            }
            for r in f.tests.iter().flat_map(|t| &t.rows) {
                t.rows += 1;
                if r.ok {
                    t.rows_ok += 1;
                } else {
                    t.rows_not_ok += 1;
                }
                if r.reason.starts_with("unsupported:") {
                    t.unsupported += 1;
                }
                match r.count {
                    Count::Pass => t.pass += 1,
                    Count::Skip => t.skip += 1,
                    Count::Fail => t.fail += 1,
                }
            }
        }
        t
    }
}
