//! One manifest file through the mutate phase: every resource mutated, the patches turned into
//! byte edits of the file, the result checked to re-parse to the mutated resources.

use std::sync::Arc;

use super::{Mutation, edit, merge::value_eq};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::engine::Engine;
use crate::manifest::read_manifests;
use crate::report::{RuleResponse, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::source::{LineCol, Source, SourceFile};
use crate::yaml::Limits;

/// A rule response worth showing for one resource of the file.
#[derive(Clone, Debug)]
pub struct MutateFinding {
    pub policy: String,
    pub response: RuleResponse,
    /// `Kind namespace/name`.
    pub resource: String,
    /// Where the resource starts.
    pub start: Option<LineCol>,
}

/// What the mutate phase did to one file.
#[derive(Debug)]
pub struct FileMutation {
    pub source: Source,
    /// The file's new text (equal to the old one when nothing changed).
    pub text: String,
    /// Every rule response (pass, skip and error), in resource then policy then rule order.
    pub findings: Vec<MutateFinding>,
    /// Problems reading the file, or applying a patch to its text.
    pub diagnostics: Vec<Diagnostic>,
    /// The mutation of each resource, in file order.
    pub mutations: Vec<(Resource, Mutation)>,
}

impl FileMutation {
    pub fn changed(&self) -> bool {
        self.text != self.source.text()
    }

    pub fn has_errors(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.response.status == Status::Error)
    }
}

/// Mutates every resource of `text` (named `name`) with the engine's policies.
pub fn mutate_file(engine: &Engine, request: &Request, name: &str, text: String) -> FileMutation {
    let source: Source = Arc::new(SourceFile::new(name, text));
    let manifests = read_manifests(&source, Limits::default());
    let mut diagnostics = manifests.diagnostics;
    let mut findings = Vec::new();
    let mut edits = Vec::new();
    let mut mutations = Vec::new();
    for resource in manifests.resources {
        let m = engine.mutate(&resource, request);
        let start = Some(source.line_col(resource.root.span.start));
        for pm in &m.policies {
            let policy = engine.policies()[pm.response.policy].key();
            for r in &pm.response.rules {
                findings.push(MutateFinding {
                    policy: policy.clone(),
                    response: r.clone(),
                    resource: resource.display_name(),
                    start,
                });
            }
        }
        if m.changed() {
            match edit::diff(source.text(), &resource.root, &m.resource.root) {
                Ok(e) => edits.extend(e),
                Err(why) => diagnostics.push(Diagnostic::error(
                    Code::Io,
                    format!(
                        "{}: the patch cannot be written into the file: {why}",
                        resource.display_name()
                    ),
                    Some(Location::at(&source, resource.root.span)),
                )),
            }
        }
        mutations.push((resource, m));
    }
    let text = match edit::apply(source.text(), &edits) {
        Ok(t) => t,
        Err(why) => {
            diagnostics.push(Diagnostic::error(
                Code::Io,
                format!("the patches cannot be written into the file: {why}"),
                Some(Location::file(name)),
            ));
            source.text().to_owned()
        }
    };
    let text = verify(&source, text, &mutations, &mut diagnostics);
    FileMutation {
        source,
        text,
        findings,
        diagnostics,
        mutations,
    }
}

/// The edited text must read back as exactly the mutated resources; otherwise it is dropped.
fn verify(
    source: &Source,
    text: String,
    mutations: &[(Resource, Mutation)],
    diagnostics: &mut Vec<Diagnostic>,
) -> String {
    if text == source.text() {
        return text;
    }
    let reread = read_manifests(
        &Arc::new(SourceFile::new(source.name(), text.clone())),
        Limits::default(),
    );
    let same = reread.resources.len() == mutations.len()
        && reread
            .resources
            .iter()
            .zip(mutations)
            .all(|(r, (_, m))| value_eq(&r.root.value, &m.resource.root.value));
    if same {
        text
    } else {
        diagnostics.push(Diagnostic::error(
            Code::Io,
            "internal error: the edited file does not read back as the patched resources; \
             left unchanged"
                .to_owned(),
            Some(Location::file(source.name())),
        ));
        source.text().to_owned()
    }
}
