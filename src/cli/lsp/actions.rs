//! Code actions on a document's last analysis: apply the mutation the mutate rules would make
//! (the bytes `kpol mutate --write` writes), create a PolicyException for a flagged resource
//! (a new file next to the document, or in the config's exceptions directory), and insert an
//! inline suppression comment (`# kpol:ignore policy/rule -- `, the reason left for the user to
//! write) above a flagged field.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CreateFile, CreateFileOptions,
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    Position, Range, ResourceOp, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

use super::analysis::{Analysis, Flagged};
use super::text::{Lines, overlaps, path_uri};
use super::workspace::Workspace;

/// What the client can apply, from its capabilities.
#[derive(Clone, Copy, Default)]
pub struct ClientEdits {
    /// `workspace.workspaceEdit.resourceOperations` includes `create`.
    pub create_files: bool,
}

/// The code actions for `range` of the document `uri` (at `path`, text `text`).
pub fn code_actions(
    ws: &Workspace,
    client: ClientEdits,
    uri: &Uri,
    path: Option<&Path>,
    text: &str,
    analysis: &Analysis,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    if let Some(m) = &analysis.mutation
        && m.ranges.iter().any(|r| overlaps(r, &range))
    {
        let title = if m.rules.is_empty() {
            "kpol: apply the mutate rules' changes".to_owned()
        } else {
            format!("kpol: apply mutation ({})", m.rules.join(", "))
        };
        out.push(action(
            title,
            CodeActionKind::QUICKFIX,
            changes(uri, vec![m.edit.clone()]),
        ));
    }
    let lines = Lines::new(text);
    for f in analysis
        .flagged
        .iter()
        .filter(|f| overlaps(&f.range, &range))
    {
        out.push(action(
            format!("kpol: suppress {} here (# kpol:ignore)", f.rule_id),
            CodeActionKind::QUICKFIX,
            changes(uri, vec![suppression(&lines, f)]),
        ));
        if client.create_files
            && let Some(edit) = exception_file(ws, path, f)
        {
            out.push(action(
                format!(
                    "kpol: create a PolicyException for {} {} ({})",
                    f.kind, f.name, f.rule_id
                ),
                CodeActionKind::QUICKFIX,
                edit,
            ));
        }
    }
    out
}

fn action(title: String, kind: CodeActionKind, edit: WorkspaceEdit) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(kind),
        edit: Some(edit),
        ..CodeAction::default()
    })
}

fn changes(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}

/// A comment line above the flagged field's line, at its indentation (the grammar of inline
/// suppressions: `<policy>[/<rule>] -- <reason>`; the reason is for the user to write).
fn suppression(lines: &Lines, f: &Flagged) -> TextEdit {
    let line = lines.line(f.range.start.line);
    let indent: String = line.chars().take_while(|c| *c == ' ').collect();
    TextEdit {
        range: Range::new(
            Position::new(f.range.start.line, 0),
            Position::new(f.range.start.line, 0),
        ),
        // No reason is written for the user: until they write one after `--`, kpol refuses the
        // entry (`invalid-suppression`), so an accepted action cannot hide a finding silently.
        new_text: format!("{indent}# kpol:ignore {} -- \n", f.rule_id),
    }
}

/// A PolicyException exempting the flagged resource from the rule, as a new file: in the
/// config's first `exceptions` directory, else beside the document; a name not yet taken.
fn exception_file(ws: &Workspace, path: Option<&Path>, f: &Flagged) -> Option<WorkspaceEdit> {
    let dir = ws
        .exception_paths
        .iter()
        .find(|p| p.is_dir())
        .cloned()
        .or_else(|| path.and_then(Path::parent).map(Path::to_path_buf))?;
    let dir = std::path::absolute(dir).ok()?;
    let stem = format!(
        "{}-{}-exception",
        slug(&f.name),
        slug(f.policy.rsplit('/').next().unwrap_or(&f.policy))
    );
    let target = free_name(&dir, &stem);
    let uri = path_uri(&target)?;
    let text = exception_yaml(f, &stem);
    Some(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(vec![
            DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                uri: uri.clone(),
                options: Some(CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(false),
                }),
                annotation_id: None,
            })),
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits: vec![OneOf::Left(TextEdit {
                    range: Range::default(),
                    new_text: text,
                })],
            }),
        ])),
        ..WorkspaceEdit::default()
    })
}

/// `dir/stem.yaml`, or `dir/stem-2.yaml`, … the first that does not exist.
fn free_name(dir: &Path, stem: &str) -> PathBuf {
    let first = dir.join(format!("{stem}.yaml"));
    if !first.exists() {
        return first;
    }
    (2..1000)
        .map(|i| dir.join(format!("{stem}-{i}.yaml")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// A Kubernetes name made of the lowercase letters, digits and dashes of `s`.
fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(60);
    let t = out.trim_matches('-');
    if t.is_empty() {
        "resource".to_owned()
    } else {
        t.to_owned()
    }
}

/// The PolicyException document (kyverno.io/v2): the policy and rule (with the rule an
/// autogen rule was generated from, so that the exception holds for either name), and the
/// resource by kind, name and namespace. Values are written as JSON strings, which YAML
/// reads as they are.
pub fn exception_yaml(f: &Flagged, name: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    // A namespaced Policy is named `namespace/name`, as `kpol check` keys it.
    let policy_name = &f.policy;
    let mut rules = vec![f.rule.clone()];
    if let Some(base) = f
        .rule
        .strip_prefix("autogen-cronjob-")
        .or_else(|| f.rule.strip_prefix("autogen-"))
    {
        rules.insert(0, base.to_owned());
    }
    let mut out = format!(
        "# Exempts {} {} from {} (written by kpol lsp). kpol check honours it when this file\n\
         # is among the policies or exceptions it loads (.kpol.yaml, -p, -e).\n\
         apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata:\n  name: {}\n",
        f.kind, f.name, f.rule_id, name
    );
    if !f.namespace.is_empty() {
        out.push_str(&format!("  namespace: {}\n", q(&f.namespace)));
    }
    out.push_str(&format!(
        "spec:\n  exceptions:\n    - policyName: {}\n      ruleNames:\n",
        q(policy_name)
    ));
    for r in rules.iter().filter(|r| !r.is_empty()) {
        out.push_str(&format!("        - {}\n", q(r)));
    }
    out.push_str(&format!(
        "  match:\n    any:\n      - resources:\n          kinds:\n            - {}\n          names:\n            - {}\n",
        q(&f.kind),
        q(&f.name)
    ));
    if !f.namespace.is_empty() {
        out.push_str(&format!(
            "          namespaces:\n            - {}\n",
            q(&f.namespace)
        ));
    }
    out
}
