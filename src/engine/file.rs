//! One manifest file through the mutate phase: every resource mutated, the patches turned into
//! byte edits of the file, the result checked to re-parse to the mutated resources.

use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::engine::Engine;
use crate::manifest::read_manifests;
use crate::mutate::{edit, merge::value_eq};
use crate::report::{RuleResponse, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::source::{LineCol, Source, SourceFile};
use crate::yaml::Limits;

/// A rule response worth showing for one resource of the file.
#[derive(Clone, Debug)]
pub struct MutateFinding {
    pub policy: String,
    /// Index of the policy in [`Engine::policies`].
    pub policy_index: usize,
    /// Index of the resource in [`FileMutation::mutations`].
    pub resource_index: usize,
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
    /// Each resource in file order, with its patched copy when a rule changed it.
    pub mutations: Vec<(Resource, Option<Resource>)>,
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

/// Mutates every resource of `text` (named `name`, read within `limits`) with the engine's
/// policies.
pub fn mutate_file(
    engine: &Engine,
    request: &Request,
    name: &str,
    text: String,
    limits: Limits,
) -> FileMutation {
    let source: Source = Arc::new(SourceFile::new(name, text));
    let manifests = read_manifests(&source, limits);
    let mut diagnostics = manifests.diagnostics;
    let mut findings = Vec::new();
    let mut edits: Vec<Vec<edit::Edit>> = Vec::new();
    let mut mutations = Vec::new();
    for (resource_index, resource) in manifests.resources.into_iter().enumerate() {
        let (patched, policies) = engine.mutate_responses(&resource, request);
        // Written back only when a rule passed, as `Mutation::changed` decides.
        let patched = patched.filter(|_| crate::mutate::any_rule_passed(&policies));
        let start = Some(source.line_col(resource.root.span.start));
        for pm in &policies {
            let policy = engine.policies()[pm.response.policy].key();
            for r in &pm.response.rules {
                findings.push(MutateFinding {
                    policy: policy.clone(),
                    policy_index: pm.response.policy,
                    resource_index,
                    response: r.clone(),
                    resource: resource.display_name(),
                    start,
                });
            }
        }
        let mut mine = Vec::new();
        if let Some(patched) = &patched {
            match edit::diff(source.text(), &resource.root, &patched.root) {
                Ok(e) => mine = e,
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
        edits.push(mine);
        mutations.push((resource, patched));
    }
    let text = settle(&source, edits, &mutations, &mut diagnostics);
    FileMutation {
        source,
        text,
        findings,
        diagnostics,
        mutations,
    }
}

/// Applies the edits and checks that the text reads back as exactly the patched resources.
/// A resource whose edits change more than it (a YAML anchor shared with an alias) keeps its
/// original text and gets an error; anything else unexpected leaves the whole file unchanged.
fn settle(
    source: &Source,
    mut edits: Vec<Vec<edit::Edit>>,
    mutations: &[(Resource, Option<Resource>)],
    diagnostics: &mut Vec<Diagnostic>,
) -> String {
    let original = source.text();
    let give_up = |diagnostics: &mut Vec<Diagnostic>, why: &str| {
        diagnostics.push(Diagnostic::error(
            Code::Io,
            format!("the patches cannot be written into the file ({why}); left unchanged"),
            Some(Location::file(source.name())),
        ));
        original.to_owned()
    };
    for _ in 0..=mutations.len() {
        let all: Vec<edit::Edit> = edits.iter().flatten().cloned().collect();
        if all.is_empty() {
            return original.to_owned();
        }
        let text = match edit::apply(original, &all) {
            Ok(t) => t,
            Err(why) => return give_up(diagnostics, &why),
        };
        let reread = read_manifests(
            &Arc::new(SourceFile::new(source.name(), text.clone())),
            Limits::default(),
        );
        if reread.resources.len() != mutations.len() {
            return give_up(diagnostics, "the edited text has other documents");
        }
        let bad: Vec<usize> = (0..mutations.len())
            .filter(|&i| {
                let (before, patched) = &mutations[i];
                let want = match patched {
                    Some(p) if !edits[i].is_empty() => &p.root,
                    _ => &before.root,
                };
                !value_eq(&reread.resources[i].root.value, &want.value)
            })
            .collect();
        if bad.is_empty() {
            return text;
        }
        for i in bad {
            if edits[i].is_empty() {
                return give_up(diagnostics, "an edit changed another resource");
            }
            edits[i].clear();
            let resource = &mutations[i].0;
            diagnostics.push(Diagnostic::error(
                Code::Io,
                format!(
                    "{}: the patch cannot be written into the file without changing other \
                     nodes (a YAML anchor shared with an alias?); the resource is left unchanged",
                    resource.display_name()
                ),
                Some(Location::at(source, resource.root.span)),
            ));
        }
    }
    give_up(diagnostics, "the edits do not settle")
}
