//! Reading PolicyException documents (exceptions.md §1–§2) into [`PolicyException`]s.
//!
//! Files given with `--exception` must hold only PolicyExceptions (Kyverno aborts otherwise;
//! kpol reports an error and goes on); exceptions found among policy files are taken as they
//! come. `policies.kyverno.io` ones (for CEL policies) are read by [`super::cel`].

use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::matching::{MatchBlock, Schema};
use crate::source::{SourceFile, Span};
use crate::yaml::Node;

use super::{Filter, PolicyException};

/// What one file gave.
#[derive(Default)]
pub struct Loaded {
    pub exceptions: Vec<PolicyException>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    pub fn extend(&mut self, other: Loaded) {
        self.exceptions.extend(other.exceptions);
        self.diagnostics.extend(other.diagnostics);
    }
}

/// Loads the PolicyExceptions of parsed documents. With `only_exceptions`, any other document
/// is an error (an `--exception` file); otherwise other documents are ignored.
pub fn load_documents<'a>(
    source: &SourceFile,
    roots: impl IntoIterator<Item = &'a Node>,
    only_exceptions: bool,
) -> Loaded {
    let mut out = Loaded::default();
    for root in roots {
        if root.is_null() {
            continue;
        }
        let kind = root.get("kind").and_then(Node::as_str).unwrap_or("");
        let api = root.get("apiVersion").and_then(Node::as_str).unwrap_or("");
        let at = Some(Location::at(source, root.span));
        // Exceptions among policy files were checked by the policy loader.
        let schema_errors = if only_exceptions {
            crate::policy::schema::check(source, root)
        } else {
            Vec::new()
        };
        let since = out.diagnostics.len();
        match (kind, api) {
            ("PolicyException", "kyverno.io/v2" | "kyverno.io/v2beta1") => {
                match build(source, root) {
                    Ok(e) => {
                        out.exceptions.push(e);
                    }
                    Err(d) => out.diagnostics.push(d),
                }
            }
            (
                "PolicyException",
                "policies.kyverno.io/v1alpha1"
                | "policies.kyverno.io/v1beta1"
                | "policies.kyverno.io/v1",
            ) => match super::cel::build(source, root, &mut out.diagnostics) {
                Ok((name, namespace, cel)) => out.exceptions.push(PolicyException {
                    name,
                    namespace: if namespace.is_empty() {
                        "default".to_owned()
                    } else {
                        namespace
                    },
                    entries: Vec::new(),
                    entry_locations: Vec::new(),
                    any: Vec::new(),
                    all: Vec::new(),
                    conditions: None,
                    pod_security: Vec::new(),
                    cel: Some(Arc::new(cel)),
                }),
                Err(d) => out.diagnostics.push(d),
            },
            _ if only_exceptions || kind == "PolicyException" => {
                out.diagnostics.push(Diagnostic::error(
                    Code::InvalidPolicy,
                    format!("policy exception type not supported {api}, Kind={kind}"),
                    at,
                ));
            }
            _ => {}
        }
        crate::policy::schema::merge(&mut out.diagnostics, since, schema_errors);
    }
    out
}

fn build(source: &SourceFile, root: &Node) -> Result<PolicyException, Diagnostic> {
    let err = |msg: String, span: Span| {
        Diagnostic::error(Code::InvalidPolicy, msg, Some(Location::at(source, span)))
    };
    let name = root
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    let namespace = root
        .get_path(&["metadata", "namespace"])
        .and_then(Node::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
        .to_owned();
    let Some(spec) = root.get("spec") else {
        return Err(err(
            format!("PolicyException {name}: spec is required"),
            root.span,
        ));
    };
    let Some(items) = spec.get("exceptions").and_then(Node::as_seq) else {
        return Err(err(
            format!("PolicyException {name}: spec.exceptions is required"),
            spec.span,
        ));
    };
    let mut entries = Vec::new();
    let mut entry_locations = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let policy = item.get("policyName").and_then(Node::as_str);
        let rules = item.get("ruleNames").and_then(Node::as_seq);
        let (Some(policy), Some(rules)) = (policy, rules) else {
            return Err(err(
                format!(
                    "PolicyException {name}: spec.exceptions[{i}] needs policyName and ruleNames"
                ),
                item.span,
            ));
        };
        let rules = rules
            .iter()
            .filter_map(Node::as_str)
            .map(str::to_owned)
            .collect();
        entries.push((policy.to_owned(), rules));
        let at = item.get("policyName").map_or(item.span, |n| n.span);
        entry_locations.push(Location::at(source, at));
    }
    let Some(raw) = spec.get("match") else {
        return Err(err(
            format!("PolicyException {name}: spec.match is required"),
            spec.span,
        ));
    };
    let block = MatchBlock::compile(raw, "spec.match", Schema::V2beta1)
        .map_err(|e| err(format!("PolicyException {name}: {}", e.message), e.span))?;
    let filters = |list: Vec<crate::matching::ResourceFilter>| -> Vec<Filter> {
        list.into_iter()
            .map(|mut f| {
                let empty = f.is_empty();
                // Exceptions ignore `operations` (exceptions.md §4).
                f.resources.operations.clear();
                Filter { filter: f, empty }
            })
            .collect()
    };
    let pod_security = spec
        .get("podSecurity")
        .and_then(Node::as_seq)
        .map(<[Node]>::to_vec)
        .unwrap_or_default();
    Ok(PolicyException {
        name,
        namespace,
        entries,
        entry_locations,
        any: filters(block.any),
        all: filters(block.all),
        conditions: spec.get("conditions").filter(|c| !c.is_null()).cloned(),
        pod_security,
        cel: None,
    })
}
