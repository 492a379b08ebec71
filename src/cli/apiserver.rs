//! `kpol check --apiserver-defaults`: each resource evaluated as the API server hands it to
//! Kyverno (the table of `kpol::defaults`), and a note on each result that the defaults
//! changed.

use std::borrow::Cow;

use kpol::defaults;
use kpol::engine::Engine;
use kpol::report::{RuleType, Status};
use kpol::request::Request;
use kpol::resource::Resource;

use super::check::Finding;

/// The rules whose results the defaults changed, with the defaults that changed each.
pub type Changed = Vec<defaults::Change>;

/// `resource` defaulted (borrowed as it is when the flag is off or nothing is defaulted),
/// and the results the defaults changed.
pub fn prepare<'r>(
    engine: &Engine,
    request: &Request,
    resource: &'r Resource,
    on: bool,
) -> (Cow<'r, Resource>, Changed) {
    if !on {
        return (Cow::Borrowed(resource), Vec::new());
    }
    match defaults::defaulted(engine, request, resource) {
        None => (Cow::Borrowed(resource), Vec::new()),
        Some((defaulted, changed)) => (Cow::Owned(defaulted), changed),
    }
}

/// Notes on the findings of one resource whose result the defaults changed: the labels in
/// [`Finding::defaults`], and a sentence after the message.
pub fn annotate(findings: &mut [Finding], changed: &Changed) {
    if changed.is_empty() {
        return;
    }
    let mut seen: Vec<(usize, String)> = Vec::new();
    for f in findings.iter_mut() {
        if f.response.rule_type != RuleType::Validation {
            continue;
        }
        let id = (f.policy_index, f.response.rule.clone());
        let n = seen.iter().filter(|s| **s == id).count();
        seen.push(id);
        let Some(c) = changed
            .iter()
            .find(|c| c.policy == f.policy_index && c.rule == f.response.rule && c.occurrence == n)
        else {
            continue;
        };
        let was = c.written.map_or("does not apply", Status::as_str);
        f.response.message = format!(
            "{} (verdict changed by API-server defaults, {was} as written: {})",
            f.response.message,
            c.defaults.join(", ")
        );
        f.defaults = c.defaults.clone();
    }
}
