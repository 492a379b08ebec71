//! `--format policy-report`: the reports `kyverno apply --policy-report` prints
//! (cli-compat.md §11.4): one merged cluster report for ClusterPolicy results, then, after
//! `---`, one report per namespaced Policy. Current form `openreports.io/v1alpha1`; the form
//! before Kyverno v1.15 (`wgpolicyk8s.io/v1alpha2`) with `policy-report-v1alpha2`. Results are
//! sorted by (policy, rule, resource), which upstream leaves to map order.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::cli::check::{CheckReport, Finding};

use super::yaml_out::to_yaml;

/// `--format policy-report[-v1alpha2]`.
pub struct PolicyReport {
    api_version: &'static str,
    cluster_kind: &'static str,
    /// The top-level `source` field exists only in the openreports form.
    top_source: bool,
}

impl PolicyReport {
    pub const OPENREPORTS: Self = Self {
        api_version: "openreports.io/v1alpha1",
        cluster_kind: "ClusterReport",
        top_source: true,
    };
    pub const WGPOLICY: Self = Self {
        api_version: "wgpolicyk8s.io/v1alpha2",
        cluster_kind: "ClusterPolicyReport",
        top_source: false,
    };
}

impl super::Render for PolicyReport {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let mut cluster: Vec<&Finding> = Vec::new();
        let mut namespaced: BTreeMap<(String, String), Vec<&Finding>> = BTreeMap::new();
        for f in report.files.iter().flat_map(|f| f.findings.iter()) {
            match report
                .policies
                .get(f.policy_index)
                .and_then(|p| p.namespace.as_ref().map(|ns| (ns.clone(), p.name.clone())))
            {
                Some(key) => namespaced.entry(key).or_default().push(f),
                None => cluster.push(f),
            }
        }
        let merged = self.document(report, self.cluster_kind, "merged", None, cluster);
        out.write_all(to_yaml(&merged).as_bytes())?;
        for ((ns, name), findings) in namespaced {
            let doc = self.document(report, "PolicyReport", &name, Some(&ns), findings);
            writeln!(out, "---")?;
            out.write_all(to_yaml(&doc).as_bytes())?;
        }
        Ok(())
    }
}

impl PolicyReport {
    fn document(
        &self,
        report: &CheckReport,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        mut findings: Vec<&Finding>,
    ) -> Value {
        findings.sort_by(|a, b| {
            (&a.policy, &a.rule, &a.namespace, &a.kind, &a.name).cmp(&(
                &b.policy,
                &b.rule,
                &b.namespace,
                &b.kind,
                &b.name,
            ))
        });
        let mut summary = BTreeMap::from([
            ("error", 0),
            ("fail", 0),
            ("pass", 0),
            ("skip", 0),
            ("warn", 0),
        ]);
        for f in &findings {
            *summary.entry(f.status.as_str()).or_insert(0) += 1;
        }
        let mut metadata = json!({"creationTimestamp": null, "name": name});
        if let (Some(ns), Some(m)) = (namespace, metadata.as_object_mut()) {
            m.insert("namespace".into(), json!(ns));
        }
        let results: Vec<Value> = findings.iter().map(|f| result(report, f)).collect();
        let mut doc = json!({
            "apiVersion": self.api_version,
            "kind": kind,
            "metadata": metadata,
            "results": results,
            "summary": summary,
        });
        if let (true, Some(m)) = (self.top_source, doc.as_object_mut()) {
            m.insert("source".into(), json!(""));
        }
        doc
    }
}

fn result(report: &CheckReport, f: &Finding) -> Value {
    let info = report.policies.get(f.policy_index);
    let mut properties = Map::new();
    let background = info.is_none_or(|p| p.background);
    properties.insert(
        "process".into(),
        json!(if background {
            "background scan"
        } else {
            "admission review"
        }),
    );
    if !f.exceptions.is_empty() {
        properties.insert("exceptions".into(), json!(f.exceptions.join(",")));
    }
    if let Some(s) = &f.suppressed {
        properties.insert("kpol.io/suppressed".into(), json!(s.describe()));
    }
    let mut resource = Map::new();
    resource.insert("apiVersion".into(), json!(f.api_version));
    resource.insert("kind".into(), json!(f.kind));
    if !f.name.is_empty() {
        resource.insert("name".into(), json!(f.name));
    }
    if !f.namespace.is_empty() {
        resource.insert("namespace".into(), json!(f.namespace));
    }
    let mut r = Map::new();
    r.insert("message".into(), json!(f.response.message));
    r.insert("policy".into(), json!(f.policy));
    r.insert("properties".into(), Value::Object(properties));
    r.insert("resources".into(), json!([resource]));
    r.insert("result".into(), json!(f.status.as_str()));
    r.insert("rule".into(), json!(f.rule));
    if f.scored {
        r.insert("scored".into(), json!(true));
    }
    r.insert("source".into(), json!("kyverno"));
    r.insert(
        "timestamp".into(),
        json!({"nanos": 0, "seconds": report.timestamp}),
    );
    if let Some(c) = info.and_then(|p| p.category.as_ref()) {
        r.insert("category".into(), json!(c));
    }
    if let Some(s) = info
        .and_then(|p| p.severity.as_deref())
        .filter(|s| matches!(*s, "critical" | "high" | "medium" | "low" | "info"))
    {
        r.insert("severity".into(), json!(s));
    }
    Value::Object(r)
}
