//! What the HTML report shows, computed once from the rule results: the same [`Page`] from a
//! `kpol check` run ([`Page::from_report`]) and from its saved `--format json` document
//! ([`Page::from_json`], `kpol report`), so both write the same bytes.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::saved::{Document, Entry, Line, Resource};
use crate::cli::check::{CheckReport, Summary};

/// A result's status, in the order the report counts them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum St {
    Pass = 0,
    Fail = 1,
    Warn = 2,
    Error = 3,
    Skip = 4,
}

impl St {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pass" => Self::Pass,
            "fail" => Self::Fail,
            "warn" => Self::Warn,
            "error" => Self::Error,
            "skip" => Self::Skip,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        ["pass", "fail", "warn", "error", "skip"][self as usize]
    }

    fn is_problem(self) -> bool {
        matches!(self, Self::Fail | Self::Warn | Self::Error)
    }
}

/// Results per status: pass, fail, warn, error, skip.
pub type Counts = [usize; 5];

/// A finding the table lists (a fail, warn or error; a skip with an exception or a
/// suppression).
pub struct Row {
    pub status: St,
    pub action: String,
    pub policy: usize,
    pub rule: String,
    pub message: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub exceptions: Vec<String>,
    pub suppression: Option<(Option<String>, Option<String>)>,
}

#[derive(Default)]
pub struct PolicyStat {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    /// Lowercased `policies.kyverno.io/severity`, or empty.
    pub severity: String,
    pub counts: Counts,
    /// The strongest action among its results: Enforce, Warn, Audit.
    pub action: String,
    pub resources: usize,
    pub failing_resources: usize,
}

/// Counts of one group (a namespace, a kind, a severity).
#[derive(Default, Clone)]
pub struct Group {
    pub counts: Counts,
    pub resources: usize,
    pub failing_resources: usize,
    pub policies: usize,
}

pub struct DiagRow {
    pub severity: String,
    pub code: String,
    pub message: String,
    pub position: String,
}

pub struct Page {
    pub summary: Summary,
    pub resources: usize,
    pub failing_resources: usize,
    pub policies: Vec<PolicyStat>,
    pub namespaces: BTreeMap<String, Group>,
    pub kinds: BTreeMap<String, Group>,
    pub severities: BTreeMap<String, Group>,
    pub rows: Vec<Row>,
    pub waived: Vec<Row>,
    pub diagnostics: Vec<DiagRow>,
    pub timestamp: u64,
}

/// A resource seen, with the statuses it got.
struct Seen {
    namespace: usize,
    kind: usize,
    failed: bool,
}

/// Folds results into a [`Page`].
struct Builder {
    policies: Vec<PolicyStat>,
    policy_index: HashMap<String, usize>,
    resources: HashMap<String, Seen>,
    /// (policy, resource key) pairs, with whether that policy failed the resource.
    policy_resources: HashMap<(usize, String), bool>,
    namespace_names: Vec<String>,
    namespace_index: HashMap<String, usize>,
    kind_names: Vec<String>,
    kind_index: HashMap<String, usize>,
    namespace_counts: Vec<Counts>,
    kind_counts: Vec<Counts>,
    rows: Vec<Row>,
    waived: Vec<Row>,
}

fn intern(names: &mut Vec<String>, index: &mut HashMap<String, usize>, s: &str) -> usize {
    if let Some(i) = index.get(s) {
        return *i;
    }
    names.push(s.to_owned());
    index.insert(s.to_owned(), names.len() - 1);
    names.len() - 1
}

fn action_rank(a: &str) -> u8 {
    match a {
        "Enforce" => 3,
        "Warn" => 2,
        "Audit" => 1,
        _ => 0,
    }
}

impl Builder {
    fn new(metas: impl IntoIterator<Item = PolicyStat>) -> Self {
        let mut b = Builder {
            policies: Vec::new(),
            policy_index: HashMap::new(),
            resources: HashMap::new(),
            policy_resources: HashMap::new(),
            namespace_names: Vec::new(),
            namespace_index: HashMap::new(),
            kind_names: Vec::new(),
            kind_index: HashMap::new(),
            namespace_counts: Vec::new(),
            kind_counts: Vec::new(),
            rows: Vec::new(),
            waived: Vec::new(),
        };
        for m in metas {
            if !b.policy_index.contains_key(&m.name) {
                b.policy_index.insert(m.name.clone(), b.policies.len());
                b.policies.push(m);
            }
        }
        b
    }

    fn policy(&mut self, name: &str) -> usize {
        if let Some(i) = self.policy_index.get(name) {
            return *i;
        }
        self.policies.push(PolicyStat {
            name: name.to_owned(),
            ..PolicyStat::default()
        });
        self.policy_index
            .insert(name.to_owned(), self.policies.len() - 1);
        self.policies.len() - 1
    }

    fn add(&mut self, e: &Entry<'_>) {
        let Some(status) = St::parse(&e.result) else {
            return;
        };
        let p = self.policy(&e.policy);
        let r = &e.resource;
        let file = e.file.as_deref().unwrap_or("");
        let key = format!(
            "{file}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
            r.api_version, r.kind, r.namespace, r.name
        );
        let ns = intern(
            &mut self.namespace_names,
            &mut self.namespace_index,
            &r.namespace,
        );
        let kind = intern(&mut self.kind_names, &mut self.kind_index, &r.kind);
        for (counts, i) in [
            (&mut self.namespace_counts, ns),
            (&mut self.kind_counts, kind),
        ] {
            if counts.len() <= i {
                counts.resize(i + 1, [0; 5]);
            }
            if let Some(c) = counts.get_mut(i) {
                c[status as usize] += 1;
            }
        }
        let failed = matches!(status, St::Fail | St::Error);
        let seen = self.resources.entry(key.clone()).or_insert(Seen {
            namespace: ns,
            kind,
            failed: false,
        });
        seen.failed |= failed;
        *self.policy_resources.entry((p, key)).or_insert(false) |= failed;
        if let Some(stat) = self.policies.get_mut(p) {
            stat.counts[status as usize] += 1;
            if action_rank(&e.action) > action_rank(&stat.action) {
                stat.action = e.action.to_string();
            }
        }
        let waived = status == St::Skip && (!e.exceptions.is_empty() || e.suppression.is_some());
        if status.is_problem() || waived {
            let row = Row {
                status,
                action: e.action.to_string(),
                policy: p,
                rule: e.rule.to_string(),
                message: e.message.to_string(),
                kind: r.kind.to_string(),
                namespace: r.namespace.to_string(),
                name: r.name.to_string(),
                file: e.file.as_ref().map(|f| f.to_string()),
                line: e.start.map(|s| s.line),
                exceptions: e.exceptions.iter().map(|x| x.to_string()).collect(),
                suppression: e.suppression.as_ref().map(|s| {
                    (
                        s.reason.as_ref().map(|r| r.to_string()),
                        s.until.as_ref().map(|x| x.to_string()),
                    )
                }),
            };
            if waived {
                self.waived.push(row);
            } else {
                self.rows.push(row);
            }
        }
    }

    fn finish(self, summary: Summary, diagnostics: Vec<DiagRow>, timestamp: u64) -> Page {
        let mut policies = self.policies;
        for ((p, _), failed) in &self.policy_resources {
            if let Some(stat) = policies.get_mut(*p) {
                stat.resources += 1;
                stat.failing_resources += usize::from(*failed);
            }
        }
        let group = |names: &[String], counts: &[Counts]| -> Vec<Group> {
            (0..names.len())
                .map(|i| Group {
                    counts: counts.get(i).copied().unwrap_or_default(),
                    ..Group::default()
                })
                .collect()
        };
        let mut ns_groups = group(&self.namespace_names, &self.namespace_counts);
        let mut kind_groups = group(&self.kind_names, &self.kind_counts);
        let mut failing_resources = 0;
        for seen in self.resources.values() {
            failing_resources += usize::from(seen.failed);
            for g in [
                ns_groups.get_mut(seen.namespace),
                kind_groups.get_mut(seen.kind),
            ]
            .into_iter()
            .flatten()
            {
                g.resources += 1;
                g.failing_resources += usize::from(seen.failed);
            }
        }
        // Severity: the failing results, failing resources and failing policies of each.
        let mut severities: BTreeMap<String, Group> = BTreeMap::new();
        let mut sev_resources: HashSet<(&str, &str)> = HashSet::new();
        for ((p, key), failed) in &self.policy_resources {
            if let (true, Some(stat)) = (*failed, policies.get(*p)) {
                sev_resources.insert((stat.severity.as_str(), key.as_str()));
            }
        }
        for stat in &policies {
            if stat.counts.iter().all(|n| *n == 0) {
                continue;
            }
            let g = severities.entry(stat.severity.clone()).or_default();
            for (a, b) in g.counts.iter_mut().zip(stat.counts) {
                *a += b;
            }
            if stat.counts[1] + stat.counts[2] + stat.counts[3] > 0 {
                g.policies += 1;
            }
        }
        for (sev, _) in sev_resources {
            if let Some(g) = severities.get_mut(sev) {
                g.failing_resources += 1;
            }
        }
        let by_name = |names: Vec<String>, groups: Vec<Group>| -> BTreeMap<String, Group> {
            names.into_iter().zip(groups).collect()
        };
        Page {
            summary,
            resources: self.resources.len(),
            failing_resources,
            policies,
            namespaces: by_name(self.namespace_names, ns_groups),
            kinds: by_name(self.kind_names, kind_groups),
            severities,
            rows: self.rows,
            waived: self.waived,
            diagnostics,
            timestamp,
        }
    }
}

fn meta(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    category: Option<&str>,
    severity: Option<&str>,
) -> PolicyStat {
    PolicyStat {
        name: name.to_owned(),
        title: title.map(str::to_owned),
        description: description.map(str::to_owned),
        category: category.map(str::to_owned),
        severity: severity
            .map(|s| s.trim().to_lowercase())
            .unwrap_or_default(),
        ..PolicyStat::default()
    }
}

impl Page {
    /// `--baseline`: (findings the baseline recorded, so left out; recorded findings gone,
    /// counted under `--baseline-strict`), when the run's summary counts either. A baseline
    /// that matched nothing and lost nothing leaves no trace in a saved result, so the page
    /// then shows the findings as a run without one.
    pub fn baseline(&self) -> Option<(usize, usize)> {
        let s = &self.summary;
        (s.baselined > 0 || s.baseline_stale > 0).then_some((s.baselined, s.baseline_stale))
    }

    /// The page of a `kpol check` run.
    pub fn from_report(report: &CheckReport) -> Self {
        let metas = report.policies.iter().map(|p| {
            let key = match &p.namespace {
                Some(ns) => format!("{ns}/{}", p.name),
                None => p.name.clone(),
            };
            meta(
                &key,
                p.title.as_deref(),
                p.description.as_deref(),
                p.category.as_deref(),
                p.severity.as_deref(),
            )
        });
        let mut b = Builder::new(metas);
        for f in report.files.iter().flat_map(|f| f.findings.iter()) {
            let entry = Entry {
                policy: Cow::Borrowed(&f.policy),
                rule: Cow::Borrowed(&f.rule),
                result: Cow::Borrowed(f.status.as_str()),
                action: Cow::Borrowed(f.response.failure_action.as_str()),
                message: Cow::Borrowed(&f.response.message),
                resource: Resource {
                    api_version: Cow::Borrowed(&f.api_version),
                    kind: Cow::Borrowed(&f.kind),
                    namespace: Cow::Borrowed(&f.namespace),
                    name: Cow::Borrowed(&f.name),
                },
                file: f.source.as_deref().map(|s| Cow::Borrowed(s.name())),
                start: f.start.map(|s| Line {
                    line: s.line,
                    column: s.column,
                }),
                exceptions: f
                    .exceptions
                    .iter()
                    .map(|x| Cow::Borrowed(x.as_str()))
                    .collect(),
                suppression: f.suppressed.as_ref().map(|s| super::saved::Suppression {
                    reason: Some(Cow::Borrowed(s.reason.as_str())),
                    until: s.until.map(|u| Cow::Owned(u.to_string())),
                }),
            };
            b.add(&entry);
        }
        let diagnostics = report
            .diagnostics
            .iter()
            .chain(report.files.iter().flat_map(|f| f.diagnostics.iter()))
            .filter(|d| d.severity != kpol::diagnostic::Severity::Info)
            .map(|d| DiagRow {
                severity: match d.severity {
                    kpol::diagnostic::Severity::Error => "error",
                    _ => "warning",
                }
                .to_owned(),
                code: d.code.as_str().to_owned(),
                message: d.message.clone(),
                position: d.position(),
            })
            .collect();
        b.finish(report.summary, diagnostics, report.timestamp)
    }

    /// The page of a saved `kpol check --format json` (or `kpol merge`) document.
    pub fn from_json(text: &str, timestamp: u64) -> Result<Self, String> {
        let doc: Document<'_> = serde_json::from_str(text)
            .map_err(|e| format!("not a kpol check --format json report: {e}"))?;
        if doc.version != 1 {
            return Err(format!(
                "schema version {} of kpol check --format json is not supported (1 is)",
                doc.version
            ));
        }
        let metas = doc.policies.iter().map(|p| {
            meta(
                &p.policy,
                p.title.as_deref(),
                p.description.as_deref(),
                p.category.as_deref(),
                p.severity.as_deref(),
            )
        });
        let mut b = Builder::new(metas);
        for e in &doc.results {
            b.add(e);
        }
        let s = &doc.summary;
        let summary = Summary {
            pass: s.pass,
            fail: s.fail,
            warn: s.warn,
            error: s.error,
            skip: s.skip,
            input_errors: s.input_errors,
            policy_errors: s.policy_errors,
            other_errors: s.other_errors,
            suppressed: s.suppressed,
            baselined: s.baselined,
            baseline_stale: s.baseline_stale,
        };
        let diagnostics = doc
            .diagnostics
            .iter()
            .filter(|d| d.severity == "error" || d.severity == "warning")
            .map(|d| DiagRow {
                severity: d.severity.to_string(),
                code: d.code.to_string(),
                message: d.message.to_string(),
                position: d
                    .location
                    .as_ref()
                    .map_or_else(String::new, |l| match l.start {
                        Some(s) => format!("{}:{}:{}", l.file, s.line, s.column),
                        None => l.file.clone(),
                    }),
            })
            .collect();
        Ok(b.finish(summary, diagnostics, timestamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(policy: &str, result: &str, action: &str, name: &str, ns: &str) -> String {
        format!(
            r#"{{"policy": "{policy}", "rule": "r", "result": "{result}", "action": "{action}",
                "message": "m", "file": "a.yaml", "start": {{"line": 3, "column": 1}},
                "resource": {{"apiVersion": "v1", "kind": "Pod", "namespace": "{ns}", "name": "{name}"}}}}"#
        )
    }

    /// Resources are counted once however many rules they got; a warn keeps a resource
    /// compliant, a fail or an error does not; severities are lowercased; a policy's action
    /// is the strongest of its results; skips with an exception or a suppression are listed.
    #[test]
    fn a_saved_result_gives_the_counts_the_page_shows() {
        let results = [
            result("p1", "fail", "Audit", "a", "ns1"),
            result("p2", "pass", "Enforce", "a", "ns1"),
            result("p1", "warn", "Warn", "b", "ns1"),
            result("p2", "fail", "Enforce", "b", "ns1"),
            result("p1", "pass", "Audit", "c", ""),
            result("p2", "error", "Enforce", "d", "ns2"),
            result("p2", "skip", "Enforce", "e", "ns2").replace(
                r#""message": "m""#,
                r#""message": "m", "exceptions": ["ex1"]"#,
            ),
            result("p1", "skip", "Audit", "f", "ns2").replace(
                r#""message": "m""#,
                r#""message": "m", "suppression": {"reason": "legacy", "until": "2027-01-01"}"#,
            ),
            result("p1", "skip", "Audit", "g", "ns2"),
        ];
        let text = format!(
            r#"{{"version": 1, "results": [{}], "diagnostics": [],
                "summary": {{"pass": 2, "fail": 2, "warn": 1, "error": 1, "skip": 3}},
                "policies": [{{"policy": "p2", "title": "Two", "severity": " High "}}]}}"#,
            results.join(",")
        );
        let page = Page::from_json(&text, 0).unwrap();
        assert_eq!((page.resources, page.failing_resources), (7, 3));
        assert_eq!(page.summary.fail, 2);
        let names: Vec<&str> = page.policies.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["p2", "p1"]);
        let p2 = &page.policies[0];
        assert_eq!(
            (p2.severity.as_str(), p2.title.as_deref()),
            ("high", Some("Two"))
        );
        assert_eq!(
            (p2.action.as_str(), p2.counts),
            ("Enforce", [1, 1, 0, 1, 1])
        );
        assert_eq!((p2.resources, p2.failing_resources), (4, 2));
        assert_eq!(page.policies[1].action, "Warn");
        assert_eq!(page.rows.len(), 4);
        assert_eq!(page.waived.len(), 2);
        assert_eq!(page.waived[0].exceptions, ["ex1"]);
        let s = page.waived[1].suppression.clone().unwrap();
        assert_eq!(
            s,
            (Some("legacy".to_owned()), Some("2027-01-01".to_owned()))
        );
        let ns1 = &page.namespaces["ns1"];
        assert_eq!((ns1.resources, ns1.failing_resources), (2, 2));
        assert_eq!(page.namespaces[""].resources, 1);
        let high = &page.severities["high"];
        assert_eq!((high.policies, high.failing_resources), (1, 2));
        assert_eq!(page.severities[""].failing_resources, 1);
    }

    /// A saved result of a `--baseline` run: its counts reach the page, and the page says
    /// the findings are the new ones; without them, no baseline is shown.
    #[test]
    fn a_baseline_run_shows_what_was_baselined_and_what_is_gone() {
        let doc = |summary: &str| {
            format!(
                r#"{{"version": 1, "results": [{}], "summary": {{"fail": 1{summary}}}}}"#,
                result("p1", "fail", "Audit", "a", "ns1")
            )
        };
        let page = Page::from_json(&doc(""), 0).unwrap();
        assert_eq!(page.baseline(), None);
        let html = super::super::write_page(&page, None);
        assert!(!html.contains("id=\"n-baselined\""));
        assert!(html.contains("<h2>Findings</h2>"));
        let page = Page::from_json(
            &doc(r#", "skip": 4, "suppressed": 3, "baselined": 7, "baselineStale": 2"#),
            0,
        )
        .unwrap();
        assert_eq!(page.baseline(), Some((7, 2)));
        assert_eq!(page.summary.suppressed, 3);
        let html = super::super::write_page(&page, None);
        assert!(html.contains("<h2>New findings</h2>"));
        assert!(html.contains(r#"<span class="n" id="n-baselined">7</span>"#));
        assert!(html.contains(r#"<span class="n" id="n-baseline-stale">2</span>"#));
        assert!(html.contains(r#"(<span id="n-suppressed">3</span> suppressed)"#));
        assert!(html.contains("7 recorded findings are left out"));
        assert!(html.contains("2 recorded findings are gone"));
        // Stale entries alone (every recorded finding fixed) still say a baseline was used.
        let page = Page::from_json(&doc(r#", "baselineStale": 1"#), 0).unwrap();
        assert_eq!(page.baseline(), Some((0, 1)));
    }

    #[test]
    fn what_is_not_a_saved_result_is_refused() {
        let e = Page::from_json("[]", 0).err().unwrap();
        assert!(
            e.starts_with("not a kpol check --format json report"),
            "{e}"
        );
        let e = Page::from_json(r#"{"version": 2, "results": [], "summary": {}}"#, 0)
            .err()
            .unwrap();
        assert!(e.contains("schema version 2"), "{e}");
    }
}
