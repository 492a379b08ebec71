//! The text rewrites autogen applies to a generated rule: `updateFields` (plain substring
//! replacement over the serialised rule, `kyverno/kyverno:pkg/autogen/v1/rule.go`) and
//! `FindAndShiftReferences` for `$(...)` references in messages
//! (`kyverno/kyverno:pkg/engine/variables/vars.go`).

use std::sync::LazyLock;

use regex::Regex;

use crate::yaml::{Map, Node, Value};

/// Which controller family a rule is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// DaemonSet, Deployment, Job, ReplicaSet, ReplicationController, StatefulSet
    /// (Kyverno's `"Pod"` case of `updateFields`).
    Controllers,
    CronJob,
}

const POD: &[(&str, &str)] = &[
    ("request.object.spec", "request.object.spec.template.spec"),
    (
        "request.oldObject.spec",
        "request.oldObject.spec.template.spec",
    ),
    (
        "request.object.metadata",
        "request.object.spec.template.metadata",
    ),
    (
        "request.oldObject.metadata",
        "request.oldObject.spec.template.metadata",
    ),
];
const POD_CEL: &[(&str, &str)] = &[
    ("object.spec", "object.spec.template.spec"),
    ("oldObject.spec", "oldObject.spec.template.spec"),
    ("object.metadata", "object.spec.template.metadata"),
    ("oldObject.metadata", "oldObject.spec.template.metadata"),
];
const CRON: &[(&str, &str)] = &[
    (
        "request.object.spec",
        "request.object.spec.jobTemplate.spec.template.spec",
    ),
    (
        "request.oldObject.spec",
        "request.oldObject.spec.jobTemplate.spec.template.spec",
    ),
    (
        "request.object.metadata",
        "request.object.spec.jobTemplate.spec.template.metadata",
    ),
    (
        "request.oldObject.metadata",
        "request.oldObject.spec.jobTemplate.spec.template.metadata",
    ),
];
const CRON_CEL: &[(&str, &str)] = &[
    ("object.spec", "object.spec.jobTemplate.spec.template.spec"),
    (
        "oldObject.spec",
        "oldObject.spec.jobTemplate.spec.template.spec",
    ),
    (
        "object.metadata",
        "object.spec.jobTemplate.spec.template.metadata",
    ),
    (
        "oldObject.metadata",
        "oldObject.spec.jobTemplate.spec.template.metadata",
    ),
];

/// `updateFields`: Kyverno serialises the generated rule to JSON and replaces substrings in
/// the bytes. No pattern contains a character JSON escapes, so replacing inside every string
/// and map key of the tree is the same operation. Token boundaries are not respected
/// (match.md §8.5), on purpose.
pub fn update_fields(rule: &mut Node, target: Target, cel: bool) {
    let table = match (target, cel) {
        (Target::Controllers, false) => POD,
        (Target::Controllers, true) => POD_CEL,
        (Target::CronJob, false) => CRON,
        (Target::CronJob, true) => CRON_CEL,
    };
    let mut stack = vec![rule];
    while let Some(n) = stack.pop() {
        match &mut n.value {
            Value::Str(s) => *s = replace_all(s, table),
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(m) => {
                let renamed = m
                    .entries()
                    .iter()
                    .any(|e| replace_all(&e.key, table) != e.key);
                if renamed {
                    let mut fresh = Map::with_capacity(m.len());
                    for e in m.entries() {
                        fresh.insert(replace_all(&e.key, table), e.key_span, e.value.clone());
                    }
                    *m = fresh;
                }
                stack.extend(m.entries_mut().iter_mut().map(|e| &mut e.value));
            }
            _ => {}
        }
    }
}

fn replace_all(s: &str, table: &[(&str, &str)]) -> String {
    let mut out = s.to_owned();
    for (from, to) in table {
        if out.contains(from) {
            out = out.replace(from, to);
        }
    }
    out
}

static REFERENCES: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\$\(.[^ ]*\)|[^\\]\$\(.[^ ]*\)").ok());

/// `FindAndShiftReferences(value, shift, pivot)`: each `$(...)` reference containing `pivot`
/// gets `pivot` replaced by `pivot/shift`. Reproduces upstream quirks: for `anyPattern` the
/// pivot grows with the index of the first reference and stays grown for later ones.
pub fn shift_references(value: &str, shift: &str, pivot: &str) -> String {
    let Some(re) = REFERENCES.as_ref() else {
        return value.to_owned();
    };
    let refs: Vec<String> = re.find_iter(value).map(|m| m.as_str().to_owned()).collect();
    let mut value = value.to_owned();
    let mut pivot = pivot.to_owned();
    for old in refs {
        let initial = old.starts_with("$(");
        let (prefix, reference) = if initial {
            ("", old.as_str())
        } else {
            let cut = old.chars().next().map_or(0, char::len_utf8);
            old.split_at(cut)
        };
        if pivot == "anyPattern"
            && let Some(idx) = reference.find(&pivot)
        {
            let rest = reference.get(idx + pivot.len() + 1..).unwrap_or("");
            let index = rest.split('/').next().unwrap_or("");
            pivot = format!("{pivot}/{index}");
        }
        let shifted = reference.replace(&pivot, &format!("{pivot}/{shift}"));
        value = value.replacen(&old, &format!("{prefix}{shifted}"), 1);
    }
    value
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    #[test]
    fn update_fields_replaces_substrings_everywhere() {
        let mut n = parse_documents(
            "a: '{{request.object.metadata.labels.app}}'\nb: [\"{{ request.object.spec.x }}\"]\nrequest.object.specX: 1\nc: '{{request.\"object\".metadata.name}}'\n",
            Limits::default(),
        )
        .unwrap()
        .remove(0)
        .root;
        update_fields(&mut n, Target::Controllers, false);
        assert_eq!(
            n.get("a").and_then(Node::as_str),
            Some("{{request.object.spec.template.metadata.labels.app}}")
        );
        assert_eq!(
            n.get("b").and_then(Node::as_seq).unwrap()[0].as_str(),
            Some("{{ request.object.spec.template.spec.x }}")
        );
        assert!(n.get("request.object.spec.template.specX").is_some());
        assert_eq!(
            n.get("c").and_then(Node::as_str),
            Some("{{request.\"object\".metadata.name}}")
        );
        let mut c = parse_documents(
            "e: object.spec.containers.all(c, true)\n",
            Limits::default(),
        )
        .unwrap()
        .remove(0)
        .root;
        update_fields(&mut c, Target::CronJob, true);
        assert_eq!(
            c.get("e").and_then(Node::as_str),
            Some("object.spec.jobTemplate.spec.template.spec.containers.all(c, true)")
        );
    }

    #[test]
    fn references_are_shifted() {
        assert_eq!(
            shift_references(
                "must match $(./pattern/metadata/name) x",
                "spec/template",
                "pattern"
            ),
            "must match $(./pattern/spec/template/metadata/name) x"
        );
        assert_eq!(
            shift_references("$(anyPattern/0/spec/x)", "spec/template", "anyPattern"),
            "$(anyPattern/0/spec/template/spec/x)"
        );
        assert_eq!(
            shift_references("no refs", "spec/template", "pattern"),
            "no refs"
        );
        assert_eq!(
            shift_references("a \\$(pattern/x)", "spec/template", "pattern"),
            "a \\$(pattern/x)"
        );
    }
}
