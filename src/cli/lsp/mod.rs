//! `kpol lsp`: a Language Server over standard input and output (docs/EDITORS.md). The main
//! loop only reads messages, keeps each open document's text and answers requests from the
//! document's last analysis; analyses run on one worker thread ([`worker`]) from the unsaved
//! text. A change after a quiet spell is analysed at once; changes in a burst (each within
//! [`DEBOUNCE`] of the last) wait until it ends; a result older than the document's version
//! is dropped. Closing a document drops everything kept for it.

// Documents are keyed by `Uri`, whose hash and equality are its text (lsp-types); the cell
// inside it is the URI parser's cache, which changes neither.
#![allow(clippy::mutable_key_type)]

mod actions;
mod analysis;
mod text;
mod worker;
mod workspace;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, LogMessage, Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{CodeActionRequest, HoverRequest, RegisterCapability, Request as _};
use lsp_types::{
    CodeActionProviderCapability, Hover, HoverContents, HoverProviderCapability, InitializeParams,
    MarkupContent, MarkupKind, MessageType, PublishDiagnosticsParams, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri,
};

use super::args::LspArgs;
use super::exit;
use analysis::Analysis;
use worker::{Job, Outcome};
use workspace::Workspace;

/// Changes closer together than this are a burst: analysed once it ends (a document just
/// opened, or changed after a quiet spell, is analysed at once).
const DEBOUNCE: Duration = Duration::from_millis(10);

pub fn run(_args: LspArgs) -> u8 {
    let (connection, io) = Connection::stdio();
    let result = serve(&connection);
    drop(connection);
    let joined = io.join();
    match (result, joined) {
        (Ok(()), Ok(())) => exit::CLEAN,
        (Err(e), _) => {
            eprintln!("kpol lsp: {e}");
            exit::INCOMPLETE
        }
        (_, Err(e)) => {
            eprintln!("kpol lsp: {e}");
            exit::INCOMPLETE
        }
    }
}

/// An open document.
struct Doc {
    version: i32,
    text: Arc<str>,
    path: Option<PathBuf>,
    /// The last analysis published, with the version it was made of.
    analysis: Option<(i32, Arc<Analysis>)>,
    /// When the text last changed (the latency logged with each publication).
    changed_at: Instant,
}

struct Server<'a> {
    connection: &'a Connection,
    jobs: Sender<Job>,
    docs: HashMap<Uri, Doc>,
    /// Documents waiting to be analysed, with when.
    pending: HashMap<Uri, Instant>,
    workspace: Option<Arc<Workspace>>,
    client: actions::ClientEdits,
    next_request: i32,
}

fn serve(connection: &Connection) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|e| format!("bad initialize params: {e}"))?;
    let root = root_of(&params);
    let caps = &params.capabilities;
    let client = actions::ClientEdits {
        create_files: caps
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.resource_operations.as_ref())
            .is_some_and(|ops| ops.contains(&lsp_types::ResourceOperationKind::Create)),
    };
    let watch = caps
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        .unwrap_or(false);
    let result = lsp_types::InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "kpol".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    };
    let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    connection
        .initialize_finish(id, result)
        .map_err(|e| e.to_string())?;
    let (jobs, outcomes) = worker::spawn(root);
    let mut server = Server {
        connection,
        jobs,
        docs: HashMap::new(),
        pending: HashMap::new(),
        workspace: None,
        client,
        next_request: 0,
    };
    if watch {
        server.watch_files();
    }
    server.main_loop(&outcomes)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// The workspace folder: the first of `workspaceFolders`, else `rootUri`.
fn root_of(params: &InitializeParams) -> Option<PathBuf> {
    let folder = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| f.uri.clone());
    #[allow(deprecated)]
    let uri = folder.or_else(|| params.root_uri.clone())?;
    text::uri_path(&uri)
}

impl Server<'_> {
    fn main_loop(&mut self, outcomes: &Receiver<Outcome>) -> Result<(), String> {
        loop {
            let now = Instant::now();
            let wait = self
                .pending
                .values()
                .min()
                .map_or(Duration::from_secs(3600), |d| {
                    d.saturating_duration_since(now)
                });
            select! {
                recv(self.connection.receiver) -> msg => match msg {
                    // The client went away without `exit`.
                    Err(_) => return Ok(()),
                    Ok(Message::Request(req)) => {
                        if self.connection.handle_shutdown(&req).map_err(|e| e.to_string())? {
                            return Ok(());
                        }
                        self.request(req);
                    }
                    Ok(Message::Notification(n)) => {
                        if n.method == lsp_types::notification::Exit::METHOD {
                            return Ok(());
                        }
                        self.notification(n);
                    }
                    Ok(Message::Response(_)) => {}
                },
                recv(outcomes) -> o => match o {
                    Ok(o) => self.outcome(o),
                    Err(_) => return Err("the analysis worker stopped".to_owned()),
                },
                default(wait) => {}
            }
            self.dispatch_due();
        }
    }

    fn send(&self, message: Message) {
        // A send fails only when the writer thread is gone (the client closed its end);
        // the reader then ends the loop.
        let _ = self.connection.sender.send(message);
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Message::Notification(Notification::new(
            N::METHOD.to_owned(),
            params,
        )));
    }

    fn log(&self, message: String) {
        self.notify::<LogMessage>(lsp_types::LogMessageParams {
            typ: MessageType::LOG,
            message,
        });
    }

    /// Asks the client to report changes of YAML and JSON files (policies and the config are
    /// among them; [`Workspace::is_input`] picks those that matter).
    fn watch_files(&mut self) {
        let options = lsp_types::DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![lsp_types::FileSystemWatcher {
                glob_pattern: lsp_types::GlobPattern::String("**/*.{yaml,yml,json}".to_owned()),
                kind: None,
            }],
        };
        let registration = lsp_types::Registration {
            id: "kpol-watch".to_owned(),
            method: DidChangeWatchedFiles::METHOD.to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        self.next_request += 1;
        self.send(Message::Request(Request::new(
            RequestId::from(format!("kpol-{}", self.next_request)),
            RegisterCapability::METHOD.to_owned(),
            lsp_types::RegistrationParams {
                registrations: vec![registration],
            },
        )));
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let response = match req.method.as_str() {
            HoverRequest::METHOD => match serde_json::from_value(req.params) {
                Ok(p) => Response::new_ok(id, self.hover(&p)),
                Err(e) => invalid(id, &e),
            },
            CodeActionRequest::METHOD => match serde_json::from_value(req.params) {
                Ok(p) => Response::new_ok(id, self.code_actions(&p)),
                Err(e) => invalid(id, &e),
            },
            other => Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("kpol lsp does not answer {other}"),
            ),
        };
        self.send(Message::Response(response));
    }

    /// The analysis of `uri` when it is of the text the editor holds now.
    fn current(&self, uri: &Uri) -> Option<(&Doc, &Analysis)> {
        let doc = self.docs.get(uri)?;
        match &doc.analysis {
            Some((v, a)) if *v == doc.version => Some((doc, a)),
            _ => None,
        }
    }

    fn hover(&self, p: &lsp_types::HoverParams) -> Option<Hover> {
        let pos = p.text_document_position_params.position;
        let (_, analysis) = self.current(&p.text_document_position_params.text_document.uri)?;
        // The narrowest flagged range under the cursor; all findings there are shown.
        let under: Vec<_> = analysis
            .flagged
            .iter()
            .filter(|f| text::contains(&f.range, pos))
            .collect();
        let narrowest = under.iter().min_by_key(|f| {
            (
                f.range.end.line - f.range.start.line,
                f.range
                    .end
                    .character
                    .saturating_sub(f.range.start.character),
            )
        })?;
        let same: Vec<&str> = under
            .iter()
            .filter(|f| f.range == narrowest.range)
            .map(|f| f.hover.as_str())
            .collect();
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: same.join("\n---\n"),
            }),
            range: Some(narrowest.range),
        })
    }

    fn code_actions(&self, p: &lsp_types::CodeActionParams) -> Vec<lsp_types::CodeActionOrCommand> {
        let (Some((doc, analysis)), Some(ws)) =
            (self.current(&p.text_document.uri), &self.workspace)
        else {
            return Vec::new();
        };
        actions::code_actions(
            ws,
            self.client,
            &p.text_document.uri,
            doc.path.as_deref(),
            &doc.text,
            analysis,
            p.range,
        )
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                {
                    let doc = p.text_document;
                    let path = text::uri_path(&doc.uri);
                    self.docs.insert(
                        doc.uri.clone(),
                        Doc {
                            version: doc.version,
                            text: Arc::from(doc.text),
                            path,
                            analysis: None,
                            changed_at: Instant::now(),
                        },
                    );
                    self.pending.insert(doc.uri, Instant::now());
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidChangeTextDocumentParams>(
                    DidChangeTextDocument::METHOD,
                ) && let Some(doc) = self.docs.get_mut(&p.text_document.uri)
                {
                    let mut text = doc.text.to_string();
                    for change in p.content_changes {
                        apply_change(&mut text, change);
                    }
                    doc.text = Arc::from(text);
                    doc.version = p.text_document.version;
                    // The first change after a quiet spell is analysed at once; one that
                    // follows within DEBOUNCE (a burst: a paste, a macro) waits for the
                    // next.
                    let now = Instant::now();
                    let quiet = now.duration_since(doc.changed_at) >= DEBOUNCE;
                    doc.changed_at = now;
                    let at = if quiet { now } else { now + DEBOUNCE };
                    let at = self
                        .pending
                        .get(&p.text_document.uri)
                        .map_or(at, |&was| was.max(at));
                    self.pending.insert(p.text_document.uri, at);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidSaveTextDocumentParams>(DidSaveTextDocument::METHOD)
                    && let Some(path) = text::uri_path(&p.text_document.uri)
                    && self.workspace.as_ref().is_some_and(|w| w.is_input(&path))
                {
                    self.reload(&path);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    let uri = p.text_document.uri;
                    self.docs.remove(&uri);
                    self.pending.remove(&uri);
                    self.publish(uri, Vec::new(), None);
                }
            }
            DidChangeWatchedFiles::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidChangeWatchedFilesParams>(
                    DidChangeWatchedFiles::METHOD,
                ) {
                    let changed = p.changes.iter().find_map(|c| {
                        let path = text::uri_path(&c.uri)?;
                        self.workspace
                            .as_ref()
                            .is_some_and(|w| w.is_input(&path))
                            .then_some(path)
                    });
                    if let Some(path) = changed {
                        self.reload(&path);
                    }
                }
            }
            _ => {}
        }
    }

    fn reload(&self, why: &std::path::Path) {
        self.log(format!(
            "kpol: {} changed; reloading the policies",
            why.display()
        ));
        let _ = self.jobs.send(Job::Reload);
    }

    /// Hands the worker every document whose wait is over.
    fn dispatch_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> = self
            .pending
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(u, _)| u.clone())
            .collect();
        for uri in due {
            self.pending.remove(&uri);
            if let Some(doc) = self.docs.get(&uri) {
                let _ = self.jobs.send(Job::Analyze {
                    uri,
                    version: doc.version,
                    path: doc.path.clone(),
                    text: doc.text.clone(),
                });
            }
        }
    }

    fn outcome(&mut self, o: Outcome) {
        match o {
            Outcome::Loaded { workspace, elapsed } => {
                let n = workspace.engine.policies().len();
                let from = if workspace.embedded() {
                    "kpol's embedded policies".to_owned()
                } else {
                    workspace
                        .config_file
                        .as_ref()
                        .map_or_else(String::new, |p| p.display().to_string())
                };
                self.log(format!(
                    "kpol: {n} policies loaded from {from} in {:.1} ms",
                    elapsed.as_secs_f64() * 1000.0
                ));
                let errors: Vec<&kpol::diagnostic::Diagnostic> = workspace
                    .problems
                    .iter()
                    .filter(|d| d.severity == kpol::diagnostic::Severity::Error)
                    .collect();
                if let Some(first) = errors.first() {
                    self.notify::<ShowMessage>(lsp_types::ShowMessageParams {
                        typ: MessageType::WARNING,
                        message: format!(
                            "kpol: {} problem(s) loading the policies; the first: {} {}",
                            errors.len(),
                            first.position(),
                            first.message
                        ),
                    });
                }
                // Every open document again, against the new policies (after the first
                // load the worker analyses documents with it anyway).
                if self.workspace.replace(workspace).is_some() {
                    let now = Instant::now();
                    for uri in self.docs.keys() {
                        self.pending.insert(uri.clone(), now);
                    }
                }
            }
            Outcome::Analyzed {
                uri,
                version,
                analysis,
                elapsed,
            } => {
                let Some(doc) = self.docs.get_mut(&uri) else {
                    return; // closed meanwhile
                };
                if doc.version != version {
                    return; // a newer text is on its way
                }
                let since_change = doc.changed_at.elapsed();
                let diagnostics = analysis.diagnostics.clone();
                doc.analysis = Some((version, Arc::from(analysis)));
                let n = diagnostics.len();
                self.publish(uri.clone(), diagnostics, Some(version));
                self.log(format!(
                    "kpol: {} v{version}: {n} diagnostics, analysed in {:.2} ms, published {:.2} ms after the change",
                    uri.as_str(),
                    elapsed.as_secs_f64() * 1000.0,
                    since_change.as_secs_f64() * 1000.0
                ));
            }
        }
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        });
    }
}

fn invalid(id: RequestId, e: &serde_json::Error) -> Response {
    Response::new_err(
        id,
        ErrorCode::InvalidParams as i32,
        format!("invalid params: {e}"),
    )
}

/// Applies one change of `textDocument/didChange`: a range replaced, or the whole text.
fn apply_change(text: &mut String, change: lsp_types::TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let lines = text::Lines::new(text);
            let (start, end) = (lines.offset(range.start), lines.offset(range.end));
            let (start, end) = (start.min(end), start.max(end));
            text.replace_range(start..end, &change.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranged changes splice the text; a change without a range replaces it.
    #[test]
    fn changes_apply_in_order() {
        let mut text = "a: 1\nb: 2\n".to_owned();
        let at = |l, c| lsp_types::Position::new(l, c);
        apply_change(
            &mut text,
            lsp_types::TextDocumentContentChangeEvent {
                range: Some(lsp_types::Range::new(at(1, 3), at(1, 4))),
                range_length: None,
                text: "20".to_owned(),
            },
        );
        assert_eq!(text, "a: 1\nb: 20\n");
        apply_change(
            &mut text,
            lsp_types::TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "c: 3\n".to_owned(),
            },
        );
        assert_eq!(text, "c: 3\n");
    }
}
