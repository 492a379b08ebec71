//! The warning for a `kinds` entry that names a kind no cluster would have: not a built-in
//! kind (Kubernetes 1.32, the Kyverno CLI's discovery data, Kyverno's own kinds) and defined
//! by no CustomResourceDefinition among the inputs. Such a rule can never match (`kinds:
//! [Podd]`), so a gate built on it silently checks nothing.

use std::collections::BTreeSet;

use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::policy::Policy;
use kpol::policy::schema::{is_builtin_kind, kind_entries, likely_kind};
use kpol::yaml::{Node, parse_documents};

use super::discover::Input;

/// Pushes one warning per `kinds` entry of `policies` and of the exceptions (`exceptions`:
/// exception name, kind, where) that names an unknown kind. The inputs are read for CRDs
/// only when some entry is not a built-in kind (standard input is not: it can be read once).
pub fn check(
    policies: &[Policy],
    exceptions: &[(String, String, Location)],
    inputs: &[Input],
    max_bytes: u64,
    out: &mut Vec<Diagnostic>,
) {
    // (who, kind, where)
    let mut unknown: Vec<(String, String, Location)> = Vec::new();
    for p in policies.iter().filter(|p| p.rule_set().is_some()) {
        for (rule, kind, span) in kind_entries(&p.raw) {
            if !is_builtin_kind(&kind) {
                let who = format!("policy {} rule {rule}: kind {kind}", p.name);
                unknown.push((who, kind, Location::at(&p.source, span)));
            }
        }
    }
    for (name, kind, at) in exceptions {
        if !is_builtin_kind(kind) {
            let who = format!("PolicyException {name}: kind {kind}");
            unknown.push((who, kind.clone(), at.clone()));
        }
    }
    if unknown.is_empty() {
        return;
    }
    let defined = crd_kinds(inputs, max_bytes);
    for (who, kind, at) in unknown {
        if defined.contains(&kind) {
            continue;
        }
        let hint = likely_kind(&kind).map_or(String::new(), |k| format!(" (did you mean {k}?)"));
        out.push(Diagnostic::warning(
            Code::UnknownKind,
            format!(
                "{who} is neither a built-in kind nor defined by a CRD among the inputs; it never matches{hint}"
            ),
            Some(at),
        ));
    }
}

/// The kinds the CustomResourceDefinitions among the input files define.
fn crd_kinds(inputs: &[Input], max_bytes: u64) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for input in inputs {
        if matches!(input, Input::Stdin) {
            continue;
        }
        let Ok(text) = super::policies::read(input, max_bytes) else {
            continue;
        };
        if !text.contains("CustomResourceDefinition") {
            continue;
        }
        let Ok(docs) = parse_documents(&text, super::discover::input_limits()) else {
            continue;
        };
        for d in docs {
            if d.root.get("kind").and_then(Node::as_str) == Some("CustomResourceDefinition")
                && let Some(k) = d
                    .root
                    .get_path(&["spec", "names", "kind"])
                    .and_then(Node::as_str)
            {
                out.insert(k.to_owned());
            }
        }
    }
    out
}
