//! Which defaults changed a verdict: a resource's rules evaluated as written and as defaulted,
//! and, for a rule whose result differs, the defaults that make the difference.

use crate::engine::Engine;
use crate::report::Status;
use crate::request::Request;
use crate::resource::Resource;

use super::{Default, apply};

/// A rule's result: `(policy index, rule name, occurrence)` and its status.
type Verdicts = Vec<((usize, String, usize), Status)>;

/// The results of `resource`'s validate rules, after its mutate rules, as `kpol check` takes
/// them.
fn verdicts(engine: &Engine, resource: &Resource, request: &Request) -> Verdicts {
    let mutated = engine.mutated(resource, request);
    let resource = mutated.as_ref().unwrap_or(resource);
    let mut out: Verdicts = Vec::new();
    for pr in engine.validate(resource, request) {
        for r in pr.rules {
            let n = out
                .iter()
                .filter(|((p, rule, _), _)| *p == pr.policy && *rule == r.rule)
                .count();
            out.push(((pr.policy, r.rule, n), r.status));
        }
    }
    out
}

fn status(v: &Verdicts, key: &(usize, String, usize)) -> Option<Status> {
    v.iter().find(|(k, _)| k == key).map(|(_, s)| *s)
}

/// A rule whose result the defaults changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub policy: usize,
    pub rule: String,
    /// Which of the policy's responses named `rule` (0 for the first).
    pub occurrence: usize,
    /// The result as written; `None` when the rule did not apply to the resource as written.
    pub written: Option<Status>,
    /// The labels of the defaults that change it.
    pub defaults: Vec<String>,
}

/// For each rule of `defaulted` (`resource` with all of `plan` applied) whose result differs from the
/// resource's as written, the change and the defaults that make it. A default named changes the result alone; when none does, those
/// without which the result is the written one's; when neither names one, all of them.
///
/// perf: two evaluations, and two more per default only when some result changed.
pub fn changed(
    engine: &Engine,
    request: &Request,
    resource: &Resource,
    defaulted: &Resource,
    plan: &[Default],
) -> Vec<Change> {
    let written = verdicts(engine, resource, request);
    let defaulted = verdicts(engine, defaulted, request);
    let diffs: Vec<_> = defaulted
        .iter()
        .filter(|(key, s)| status(&written, key) != Some(*s))
        .collect();
    if diffs.is_empty() {
        return Vec::new();
    }
    let alone: Vec<Verdicts> = plan
        .iter()
        .map(|d| verdicts(engine, &apply(resource, &[d]), request))
        .collect();
    let mut without: Vec<Option<Verdicts>> = vec![None; plan.len()];
    let mut out = Vec::new();
    for (key, s) in diffs {
        let mut labels: Vec<String> = plan
            .iter()
            .zip(&alone)
            .filter(|(_, v)| status(v, key) == Some(*s))
            .map(|(d, _)| d.label.clone())
            .collect();
        if labels.is_empty() {
            for (i, d) in plan.iter().enumerate() {
                let v = without[i].get_or_insert_with(|| {
                    let rest: Vec<&Default> = plan
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, d)| d)
                        .collect();
                    verdicts(engine, &apply(resource, &rest), request)
                });
                if status(v, key) == status(&written, key) {
                    labels.push(d.label.clone());
                }
            }
        }
        if labels.is_empty() {
            labels = plan.iter().map(|d| d.label.clone()).collect();
        }
        out.push(Change {
            policy: key.0,
            rule: key.1.clone(),
            occurrence: key.2,
            written: status(&written, key),
            defaults: labels,
        });
    }
    out
}
