//! Autogen for MutatingPolicies (cel.md §6.5, `kyverno/kyverno:pkg/cel/policies/mpol/autogen`):
//! the same eligibility and controller copies as ValidatingPolicies ([`crate::vpol::autogen`]),
//! but only matchConditions and ApplyConfiguration expressions are rewritten, by Kyverno's
//! three regular expressions, and a top-level `Object{…}` is wrapped down to the pod
//! template. JSONPatch expressions and variables are left as written. The rewrite keeps a
//! nested `Object.metadata{…}` under the template, which Kubernetes' type-name check then
//! rejects (cel.md §10/§11.1): Kyverno's copies error there too.

use std::sync::LazyLock;

use regex::Regex;

pub(crate) use crate::vpol::autogen::eligible;
pub use crate::vpol::autogen::{Target, copies};

static SPEC: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b(object|oldObject|Object)\.spec").ok());
static LABELS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b(object|oldObject|Object)\.metadata\.labels").ok());
static ANNOTATIONS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b(object|oldObject|Object)\.metadata\.annotations").ok());

/// The pod-to-template rewrite of one expression for the copy of `target`.
pub fn rewrite(expression: &str, target: Target) -> String {
    let (spec, metadata) = match target {
        Target::Template => ("spec.template.spec", "spec.template.metadata"),
        Target::CronJob => (
            "spec.jobTemplate.spec.template.spec",
            "spec.jobTemplate.spec.template.metadata",
        ),
    };
    let mut out = expression.to_owned();
    for (re, with) in [
        (&*SPEC, format!("${{1}}.{spec}")),
        (&*LABELS, format!("${{1}}.{metadata}.labels")),
        (&*ANNOTATIONS, format!("${{1}}.{metadata}.annotations")),
    ] {
        if let Some(re) = re {
            out = re.replace_all(&out, with.as_str()).into_owned();
        }
    }
    wrap_object(&out, target).unwrap_or(out)
}

/// `Object{inner}rest` → the same with `inner` moved under the pod template's literals; `None`
/// when the expression does not start with a closed `Object{`.
fn wrap_object(expression: &str, target: Target) -> Option<String> {
    let rest = expression.trim().strip_prefix("Object")?;
    let content = rest
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .strip_prefix('{')?;
    // The brace that closes the literal (braces inside strings are counted too, as upstream).
    let mut depth = 1usize;
    let mut end = None;
    for (i, c) in content.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end.filter(|e| *e > 0)?;
    let (open, close) = match target {
        Target::Template => (
            "Object{spec: Object.spec{template: Object.spec.template{",
            "}}}",
        ),
        Target::CronJob => (
            "Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{template: Object.spec.jobTemplate.spec.template{",
            "}}}}}",
        ),
    };
    Some(format!(
        "{open}{}{close}{}",
        &content[..end],
        &content[end + 1..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_and_label_paths_move_to_the_template() {
        assert_eq!(
            rewrite(
                "has(object.spec.hostNetwork) && object.metadata.labels.a == 'b'",
                Target::Template
            ),
            "has(object.spec.template.spec.hostNetwork) && object.spec.template.metadata.labels.a == 'b'"
        );
        assert_eq!(
            rewrite("oldObject.metadata.annotations", Target::CronJob),
            "oldObject.spec.jobTemplate.spec.template.metadata.annotations"
        );
        // `metadata.name` stays: only labels and annotations move.
        assert_eq!(
            rewrite("object.metadata.name", Target::Template),
            "object.metadata.name"
        );
    }

    #[test]
    fn a_top_level_object_is_wrapped() {
        assert_eq!(
            rewrite("Object{spec: Object.spec{x: 1}}", Target::Template),
            "Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{x: 1}}}}"
        );
        assert_eq!(
            rewrite(
                "Object{metadata: Object.metadata{labels: Object.metadata.labels{a: 'b'}}}",
                Target::CronJob
            ),
            "Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{template: Object.spec.jobTemplate.spec.template{metadata: Object.metadata{labels: Object.spec.jobTemplate.spec.template.metadata.labels{a: 'b'}}}}}}}"
        );
        // Not a literal at the top: only the regex rewrite.
        assert_eq!(
            rewrite(
                "[JSONPatch{op: 'add', path: '/spec/x', value: object.spec}]",
                Target::Template
            ),
            "[JSONPatch{op: 'add', path: '/spec/x', value: object.spec.template.spec}]"
        );
    }
}
