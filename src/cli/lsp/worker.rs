//! The analysis worker: one thread that owns the loaded [`Workspace`], loads it again when
//! asked, and analyses documents. Jobs that queued while it was busy are taken together, so
//! that only the newest text of each document is analysed (the older ones would be dropped
//! as stale anyway). A panic inside one analysis is caught and reported; the worker goes on.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use lsp_types::Uri;

use super::analysis::{Analysis, analyze};
use super::workspace::Workspace;

pub enum Job {
    Analyze {
        uri: Uri,
        version: i32,
        path: Option<PathBuf>,
        text: Arc<str>,
    },
    /// Load the config, policies and exceptions again.
    Reload,
}

pub enum Outcome {
    Loaded {
        workspace: Arc<Workspace>,
        elapsed: Duration,
    },
    Analyzed {
        uri: Uri,
        version: i32,
        analysis: Box<Analysis>,
        elapsed: Duration,
    },
}

/// Starts the worker for the workspace at `root`; it loads the workspace first. It stops when
/// the job sender is dropped.
pub fn spawn(root: Option<PathBuf>) -> (Sender<Job>, Receiver<Outcome>) {
    let (jobs, job_rx) = crossbeam_channel::unbounded::<Job>();
    let (out_tx, outcomes) = crossbeam_channel::unbounded::<Outcome>();
    std::thread::spawn(move || run(root, &job_rx, &out_tx));
    (jobs, outcomes)
}

fn load(root: Option<PathBuf>, out: &Sender<Outcome>) -> Option<Arc<Workspace>> {
    let started = Instant::now();
    let loaded = std::panic::catch_unwind(|| Workspace::load(root));
    match loaded {
        Ok(ws) => {
            let ws = Arc::new(ws);
            let _ = out.send(Outcome::Loaded {
                workspace: ws.clone(),
                elapsed: started.elapsed(),
            });
            Some(ws)
        }
        Err(_) => {
            eprintln!("kpol lsp: internal error loading the policies (a bug; please report it)");
            None
        }
    }
}

fn run(root: Option<PathBuf>, jobs: &Receiver<Job>, out: &Sender<Outcome>) {
    let mut ws = load(root.clone(), out).unwrap_or_else(|| Arc::new(Workspace::load(None)));
    while let Ok(first) = jobs.recv() {
        let batch: Vec<Job> = std::iter::once(first).chain(jobs.try_iter()).collect();
        if batch.iter().any(|j| matches!(j, Job::Reload))
            && let Some(new) = load(root.clone(), out)
        {
            ws = new;
        }
        // The newest job of each document, in the order the documents were first asked for.
        let mut order: Vec<Uri> = Vec::new();
        let mut newest: HashMap<Uri, (i32, Option<PathBuf>, Arc<str>)> = HashMap::new();
        for job in batch {
            if let Job::Analyze {
                uri,
                version,
                path,
                text,
            } = job
            {
                if !newest.contains_key(&uri) {
                    order.push(uri.clone());
                }
                newest.insert(uri, (version, path, text));
            }
        }
        for uri in order {
            let Some((version, path, text)) = newest.remove(&uri) else {
                continue;
            };
            let started = Instant::now();
            let name = path
                .as_ref()
                .map_or_else(|| uri.as_str().to_owned(), |p| p.display().to_string());
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                analyze(&ws, path.as_deref(), &name, &text)
            }));
            let analysis = result.unwrap_or_else(|_| {
                eprintln!("kpol lsp: internal error analysing {name} (a bug; please report it)");
                Analysis::default()
            });
            let sent = out.send(Outcome::Analyzed {
                uri,
                version,
                analysis: Box::new(analysis),
                elapsed: started.elapsed(),
            });
            if sent.is_err() {
                return;
            }
        }
    }
}
