//! One document's analysis, made on the worker thread from the editor's text: the diagnostics
//! to publish, the flagged fields that hover and code actions answer about, and the mutation
//! the policies' mutate rules would write. A manifest is checked as `kpol check` checks a
//! file; a policy file (ClusterPolicy, ValidatingPolicy, PolicyException, …) is loaded as
//! `kpol check` loads `-p` files, and its problems are shown where they are.

use std::path::Path;
use std::sync::Arc;

use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Range, TextEdit, Uri,
};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::policy::Policy;
use kpol::report::{FailureAction, RuleType, Status};
use kpol::source::{LineCol, Source, SourceFile};
use kpol::yaml::{Limits, Node};

use super::text::{Lines, path_uri};
use super::workspace::Workspace;

/// What the server keeps of a document's last analysis.
#[derive(Default)]
pub struct Analysis {
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    pub flagged: Vec<Flagged>,
    pub mutation: Option<Mutation>,
}

/// A finding at a field of the document.
pub struct Flagged {
    pub range: Range,
    /// `policy/rule` (the policy alone for a rule without a name).
    pub rule_id: String,
    /// The policy's key (`name`, or `namespace/name`) and the rule's name.
    pub policy: String,
    pub rule: String,
    /// The hover text (Markdown).
    pub hover: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// The edit of the document the mutate rules would make (`kpol mutate --write`'s bytes).
pub struct Mutation {
    /// The passing mutate rules, `policy/rule`.
    pub rules: Vec<String>,
    pub edit: TextEdit,
    /// The resources it changes.
    pub ranges: Vec<Range>,
}

/// The analysis of `text`, the document at `path` (`name` when it has no path).
pub fn analyze(ws: &Workspace, path: Option<&Path>, name: &str, text: &str) -> Analysis {
    if path.is_some_and(|p| ws.excludes(p)) {
        return Analysis::default();
    }
    let source: Source = Arc::new(SourceFile::new(name, text));
    let lines = Lines::new(text);
    if let Some(problems) = policy_problems(&source) {
        return Analysis {
            diagnostics: problems
                .iter()
                .filter_map(|d| file_diagnostic(&lines, d))
                .collect(),
            ..Analysis::default()
        };
    }
    let report =
        super::super::check::check_text(&ws.engine, &ws.request, &source, Limits::default());
    let mut out = Analysis::default();
    out.diagnostics.extend(
        report
            .diagnostics
            .iter()
            .filter_map(|d| file_diagnostic(&lines, d)),
    );
    for f in &report.findings {
        let Some(severity) = severity(f.status, f.response.failure_action) else {
            continue;
        };
        let Some(policy) = ws.engine.policies().get(f.policy_index) else {
            continue;
        };
        let start = f
            .start
            .map_or(lsp_types::Position::new(0, 0), |lc| lines.at_line_col(lc));
        let end = f.end.map_or_else(
            || end_of_line(&lines, start.line),
            |lc| lines.at_line_col(lc),
        );
        let range = lines.shown(Range::new(start, end));
        let rule_id = f.rule_id();
        let rule = rule_node(policy, &f.rule);
        let related = (!ws.embedded())
            .then(|| policy_uri(ws, policy))
            .flatten()
            .and_then(|uri| {
                let node = rule?;
                let plines = Lines::new(policy.source.text());
                Some(vec![DiagnosticRelatedInformation {
                    location: Location::new(uri, plines.range(node.span)),
                    message: format!("the rule {rule_id}"),
                }])
            });
        out.diagnostics.push(lsp_types::Diagnostic {
            range,
            severity: Some(severity),
            code: Some(NumberOrString::String(rule_id.clone())),
            code_description: policy_href(ws, policy).map(|href| CodeDescription { href }),
            source: Some("kpol".to_owned()),
            message: f.response.message.clone(),
            related_information: related,
            tags: None,
            data: None,
        });
        out.flagged.push(Flagged {
            range,
            hover: hover_text(ws, policy, f, rule),
            rule_id,
            policy: f.policy.clone(),
            rule: f.rule.clone(),
            kind: f.kind.clone(),
            name: f.name.clone(),
            namespace: f.namespace.clone(),
        });
    }
    out.mutation = mutation(ws, name, text, &lines);
    out
}

/// The problems of `source` read as a policy file, or `None` when it holds no policy,
/// PolicyException or policy kind kpol knows of (a manifest).
fn policy_problems(source: &Source) -> Option<Vec<Diagnostic>> {
    let mut set = super::super::policies::PolicySet {
        policies: Vec::new(),
        exceptions: Vec::new(),
        diagnostics: Vec::new(),
        exception_kinds: Vec::new(),
        params: Vec::new(),
    };
    let mut exceptions = kpol::exception::Loaded::default();
    super::super::policies::load_text(source.clone(), Limits::default(), &mut set, &mut exceptions);
    let is_policy = !set.policies.is_empty()
        || !exceptions.exceptions.is_empty()
        || !exceptions.diagnostics.is_empty()
        || set
            .diagnostics
            .iter()
            .any(|d| d.code != kpol::diagnostic::Code::Yaml);
    if !is_policy {
        return None;
    }
    let mut out = set.diagnostics;
    out.extend(exceptions.diagnostics);
    Some(out)
}

/// A diagnostic of kpol's own (YAML error, invalid policy, …) at its place in the document;
/// notes (info) are left out, as `kpol check` shows them with `-v` only.
fn file_diagnostic(lines: &Lines, d: &Diagnostic) -> Option<lsp_types::Diagnostic> {
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => return None,
    };
    let (start, end) = match &d.location {
        Some(loc) => (loc.start, loc.end),
        None => (None, None),
    };
    let start = start.map_or(lsp_types::Position::new(0, 0), |lc| lines.at_line_col(lc));
    let end = end.map_or_else(
        || end_of_line(lines, start.line),
        |lc| lines.at_line_col(lc),
    );
    Some(lsp_types::Diagnostic {
        range: lines.shown(Range::new(start, end)),
        severity: Some(severity),
        code: Some(NumberOrString::String(d.code.as_str().to_owned())),
        source: Some("kpol".to_owned()),
        message: d.message.clone(),
        ..lsp_types::Diagnostic::default()
    })
}

fn end_of_line(lines: &Lines, line: u32) -> lsp_types::Position {
    let text = lines.line(line);
    lsp_types::Position::new(
        line,
        u32::try_from(text.encode_utf16().count()).unwrap_or(u32::MAX),
    )
}

/// Enforce is an error, Audit (and a warning result) a warning; passes and skips are no
/// diagnostic.
fn severity(status: Status, action: FailureAction) -> Option<DiagnosticSeverity> {
    match status {
        Status::Fail if action == FailureAction::Enforce => Some(DiagnosticSeverity::ERROR),
        Status::Fail | Status::Warn => Some(DiagnosticSeverity::WARNING),
        Status::Error => Some(DiagnosticSeverity::ERROR),
        Status::Pass | Status::Skip => None,
    }
}

/// The `file:` URI of the file a policy was loaded from (`None` for an embedded default).
pub fn policy_uri(ws: &Workspace, policy: &Policy) -> Option<Uri> {
    if ws.embedded() {
        return None;
    }
    let path = std::fs::canonicalize(policy.source.name())
        .or_else(|_| std::path::absolute(policy.source.name()))
        .ok()?;
    path_uri(&path)
}

/// Where the policy can be read: its file, or for an embedded default its file in kpol's
/// repository.
fn policy_href(ws: &Workspace, policy: &Policy) -> Option<Uri> {
    if ws.embedded() {
        let name = policy.source.name().trim_start_matches("./");
        format!("{}/blob/main/{name}", env!("CARGO_PKG_REPOSITORY"))
            .parse()
            .ok()
    } else {
        policy_uri(ws, policy)
    }
}

/// The rule's node in the policy document: by name, an autogen rule by the rule it was
/// generated from; for the CEL kinds (no rules) their `validations`.
fn rule_node<'a>(policy: &'a Policy, rule: &str) -> Option<&'a Node> {
    let spec = policy.raw.get("spec")?;
    let Some(rules) = spec.get("rules").and_then(Node::as_seq) else {
        return spec.get("validations");
    };
    let base = rule
        .strip_prefix("autogen-cronjob-")
        .or_else(|| rule.strip_prefix("autogen-"))
        .unwrap_or(rule);
    let named = |n: &str| {
        rules
            .iter()
            .find(|r| r.get("name").and_then(Node::as_str) == Some(n))
    };
    named(rule).or_else(|| named(base))
}

/// The hover of a flagged field: the rule, its action and message, the policy's title and
/// description, and what the rule expects (its `validate` block as written).
fn hover_text(
    ws: &Workspace,
    policy: &Policy,
    f: &super::super::check::Finding,
    rule: Option<&Node>,
) -> String {
    let mut out = format!(
        "**{}** ({}, {})\n\n{}\n",
        f.rule_id(),
        f.response.failure_action.as_str(),
        f.status.as_str(),
        f.response.message
    );
    let ann = |k: &str| policy.annotations.get(&format!("policies.kyverno.io/{k}"));
    if let Some(title) = ann("title") {
        out.push_str(&format!("\n**{}**", title.trim()));
        if let Some(d) = ann("description") {
            out.push_str(&format!(": {}", d.trim()));
        }
        out.push('\n');
    } else if let Some(d) = ann("description") {
        out.push_str(&format!("\n{}\n", d.trim()));
    }
    let expected = rule.and_then(|r| {
        r.get("validate")
            .map(|v| ("validate", v))
            .or_else(|| (r.get("name").is_none()).then_some(("validations", r)))
    });
    if let Some((key, node)) = expected {
        let plines = Lines::new(policy.source.text());
        let shown = plines.range(node.span);
        let (start, end) = (shown.start.line, shown.end.line);
        let body = block(&plines, start, end);
        let at = LineCol {
            line: start + 1,
            column: 1,
        };
        let file = if ws.embedded() {
            format!("{} (embedded)", policy.source.name())
        } else {
            std::fs::canonicalize(policy.source.name()).map_or_else(
                |_| policy.source.name().to_owned(),
                |p| p.display().to_string(),
            )
        };
        out.push_str(&format!(
            "\nExpected ({file}:{}):\n```yaml\n{key}:\n{body}```\n",
            at.line
        ));
    }
    out
}

/// Lines `start..=end` (0-based) of a policy, indented two spaces under their key, at most
/// [`HOVER_LINES`] of them.
fn block(lines: &Lines, start: u32, end: u32) -> String {
    let texts: Vec<&str> = (start..=end).map(|l| lines.line(l)).collect();
    let indent = texts
        .iter()
        .skip(1)
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.len() - t.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for (i, t) in texts.iter().enumerate().take(HOVER_LINES) {
        let t = if i == 0 {
            // The first line starts at the node, after its key.
            t.trim_start().trim_start_matches("validate:").trim_start()
        } else {
            t.get(indent..).unwrap_or(t.trim_start())
        };
        if i == 0 && t.is_empty() {
            continue;
        }
        out.push_str("  ");
        out.push_str(t);
        out.push('\n');
    }
    if texts.len() > HOVER_LINES {
        out.push_str("  # …\n");
    }
    out
}

const HOVER_LINES: usize = 30;

/// The mutation `kpol mutate --write` would write into this text, as one edit of the part
/// that changes, and the resources it changes.
fn mutation(ws: &Workspace, name: &str, text: &str, lines: &Lines) -> Option<Mutation> {
    let fm = kpol::engine::file::mutate_file(
        &ws.engine,
        &ws.request,
        name,
        text.to_owned(),
        Limits::default(),
    );
    if !fm.changed() {
        return None;
    }
    let mut rules: Vec<String> = Vec::new();
    for f in &fm.findings {
        if f.response.status == Status::Pass && f.response.rule_type == RuleType::Mutation {
            let id = format!("{}/{}", f.policy, f.response.rule);
            if !rules.contains(&id) {
                rules.push(id);
            }
        }
    }
    let ranges = fm
        .mutations
        .iter()
        .filter(|(_, patched)| patched.is_some())
        .map(|(r, _)| lines.range(r.root.span))
        .collect();
    let (start, end, new) = changed_part(text, &fm.text);
    Some(Mutation {
        rules,
        edit: TextEdit {
            range: Range::new(lines.position(start), lines.position(end)),
            new_text: new.to_owned(),
        },
        ranges,
    })
}

/// The byte range of `old` that differs from `new`, and what `new` has there: the texts
/// without their common prefix and suffix (cut at character boundaries).
fn changed_part<'a>(old: &str, new: &'a str) -> (usize, usize, &'a str) {
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    (
        prefix,
        old.len() - suffix,
        new.get(prefix..new.len() - suffix).unwrap_or(""),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The edit replaces exactly the bytes that differ, and applying it gives the new text.
    #[test]
    fn the_changed_part_is_the_minimal_replacement() {
        let old = "a: 1\nb: é\nc: 3\n";
        let new = "a: 1\nb: è\nx: 9\nc: 3\n";
        let (s, e, t) = changed_part(old, new);
        let applied = format!("{}{t}{}", &old[..s], &old[e..]);
        assert_eq!(applied, new);
        assert!(s >= 5 && e <= old.len() - 5, "{s}..{e}");
        assert_eq!(changed_part("same", "same"), (4, 4, ""));
        assert_eq!(changed_part("ab", "aab").2, "a");
    }
}

#[cfg(test)]
mod workspace_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A workspace without `.kpol.yaml`: kpol's embedded default policies.
    fn embedded() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::load(Some(dir.path().to_path_buf()));
        assert!(ws.embedded());
        assert!(!ws.engine.policies().is_empty());
        (dir, ws)
    }

    fn codes(a: &Analysis) -> Vec<(u32, String)> {
        a.diagnostics
            .iter()
            .map(|d| {
                let code = match &d.code {
                    Some(NumberOrString::String(s)) => s.clone(),
                    _ => String::new(),
                };
                (d.range.start.line, code)
            })
            .collect()
    }

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: NAME\nspec:\n  containers:\n    - name: c\n      image: nginx:1.27\n";

    /// Every document of a multi-document file and every item of a `kind: List` is checked,
    /// each finding at its own line.
    #[test]
    fn documents_and_list_items_are_each_checked() {
        let (_dir, ws) = embedded();
        let two = format!(
            "{}---\n{}",
            POD.replace("NAME", "a"),
            POD.replace("NAME", "b")
        );
        let a = analyze(&ws, None, "two.yaml", &two);
        let limits: Vec<u32> = codes(&a)
            .into_iter()
            .filter(|(_, c)| c == "require-resource-limits/validate-resources")
            .map(|(l, _)| l)
            .collect();
        assert_eq!(limits, vec![6, 15], "{:?}", codes(&a));
        let list = "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: x\n    spec:\n      containers:\n        - name: c\n          image: nginx:1.27\n";
        let a = analyze(&ws, None, "list.yaml", list);
        assert!(
            codes(&a).contains(&(9, "require-resource-limits/validate-resources".to_owned())),
            "{:?}",
            codes(&a)
        );
        // Each finding is also a flagged range that hover and code actions find.
        assert_eq!(a.flagged.len(), a.diagnostics.len());
    }

    /// A YAML error is one diagnostic at its line; a file of policies is checked as policies,
    /// not as a manifest.
    #[test]
    fn yaml_errors_and_policy_files() {
        let (_dir, ws) = embedded();
        let a = analyze(&ws, None, "bad.yaml", "a: b\nc: [d\n");
        assert_eq!(codes(&a), vec![(1, "yaml".to_owned())]);
        let policy = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\nspec:\n  rules:\n    - name: r\n      match:\n        any:\n          - resources:\n              kinds: [Pod]\n      validate:\n        pattern:\n          spec:\n            =(hostNetwork): false\n";
        let a = analyze(&ws, None, "p.yaml", policy);
        assert!(a.diagnostics.is_empty(), "{:?}", codes(&a));
        let broken = policy.replace("validate:", "validat:");
        let a = analyze(&ws, None, "p.yaml", &broken);
        assert!(
            codes(&a).iter().any(|(_, c)| c == "invalid-policy"),
            "{:?}",
            codes(&a)
        );
    }

    /// The embedded add-default-labels rule would label the Pod: the mutation edit gives the
    /// text `kpol mutate` writes.
    #[test]
    fn the_mutation_is_the_mutate_phase_text() {
        let (_dir, ws) = embedded();
        let pod = POD.replace("NAME", "a");
        let a = analyze(&ws, None, "pod.yaml", &pod);
        let m = a.mutation.unwrap();
        assert_eq!(m.rules, vec!["add-default-labels/add-managed-by-label"]);
        let lines = Lines::new(&pod);
        let (s, e) = (
            lines.offset(m.edit.range.start),
            lines.offset(m.edit.range.end),
        );
        let applied = format!("{}{}{}", &pod[..s], m.edit.new_text, &pod[e..]);
        let expected = kpol::engine::file::mutate_file(
            &ws.engine,
            &ws.request,
            "x",
            pod.clone(),
            Limits::default(),
        );
        assert_eq!(applied, expected.text);
        assert!(applied.contains("app.kubernetes.io/managed-by: kpol"));
    }
}
