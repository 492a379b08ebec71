//! `validationFailureActionOverrides` (spec) and `validate.failureActionOverrides` (rule):
//! a namespace-based change of a rule's failure action (match.md §2.1), compiled once at load.
//!
//! An override applies when its `namespaces` (absent: any namespace) has a wildcard pattern
//! matching the resource's namespace and its `namespaceSelector` (absent: any labels) matches
//! that namespace's labels; the first applying override in list order wins. An override whose
//! `action` is not Audit/Enforce never applies.

use std::collections::BTreeMap;

use crate::base::wildcard::Pattern;
use crate::matching::compile_selector;
use crate::matching::selector::LabelSelector;
use crate::report::FailureAction;
use crate::yaml::Map;
use crate::yaml::fields::{FieldResult, as_map, opt_seq, opt_str, opt_str_list};

/// One list entry, as compiled.
#[derive(Clone, Debug)]
struct Override {
    /// `None` for an action other than Audit/Enforce (the entry never applies).
    action: Option<FailureAction>,
    /// `None` when `namespaces` is absent (every namespace); an empty list matches none.
    namespaces: Option<Vec<Pattern>>,
    selector: Option<LabelSelector>,
}

/// A compiled overrides list (empty when the field is absent).
#[derive(Clone, Debug, Default)]
pub struct Overrides(Vec<Override>);

impl Overrides {
    /// Reads `parent.key` (a list of overrides); `path` is the parent's path.
    pub fn compile(parent: &Map, key: &str, path: &str) -> FieldResult<Self> {
        let Some(items) = opt_seq(parent, key, path)? else {
            return Ok(Self::default());
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = format!("{path}.{key}[{i}]");
            let m = as_map(item, &p)?;
            out.push(Override {
                action: opt_str(m, "action", &p)?.and_then(FailureAction::parse),
                namespaces: opt_str_list(m, "namespaces", &p)?
                    .map(|ns| ns.iter().map(|n| Pattern::new(n)).collect()),
                selector: compile_selector(m, "namespaceSelector", &p)?,
            });
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The action of the first override that applies to a resource in `namespace` whose
    /// labels are `labels`; `None` when none applies.
    pub fn resolve(
        &self,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> Option<FailureAction> {
        self.0.iter().find_map(|o| {
            let action = o.action?;
            let in_namespaces = o
                .namespaces
                .as_ref()
                .is_none_or(|ns| ns.iter().any(|p| p.matches(namespace)));
            let selected = o
                .selector
                .as_ref()
                .is_none_or(|s| s.matches(labels) == Ok(true));
            (in_namespaces && selected).then_some(action)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::yaml::Value;
    use FailureAction::{Audit, Enforce};

    fn compile(yaml: &str) -> Overrides {
        try_compile(yaml).expect("compiles")
    }

    fn try_compile(yaml: &str) -> FieldResult<Overrides> {
        let docs =
            crate::yaml::parse_documents(yaml, crate::yaml::Limits::default()).expect("yaml");
        let Value::Map(m) = &docs[0].root.value else {
            panic!("not a map")
        };
        Overrides::compile(m, "o", "spec")
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn namespaces_are_wildcards() {
        let o = compile("o:\n- action: Enforce\n  namespaces: ['prod*', staging]\n");
        let none = labels(&[]);
        assert_eq!(o.resolve("prod-1", &none), Some(Enforce));
        assert_eq!(o.resolve("staging", &none), Some(Enforce));
        assert_eq!(o.resolve("dev", &none), None);
        assert_eq!(o.resolve("", &none), None);
    }

    #[test]
    fn selector_reads_namespace_labels() {
        let o = compile("o:\n- action: enforce\n  namespaceSelector: {matchLabels: {env: prod}}\n");
        assert_eq!(o.resolve("a", &labels(&[("env", "prod")])), Some(Enforce));
        assert_eq!(o.resolve("a", &labels(&[("env", "dev")])), None);
        assert_eq!(o.resolve("a", &labels(&[])), None);
        // With namespaces too, both must match.
        let both = compile(
            "o:\n- action: Enforce\n  namespaces: ['p*']\n  namespaceSelector:\n    matchExpressions: [{key: env, operator: In, values: [prod]}]\n",
        );
        assert_eq!(
            both.resolve("p1", &labels(&[("env", "prod")])),
            Some(Enforce)
        );
        assert_eq!(both.resolve("q1", &labels(&[("env", "prod")])), None);
        assert_eq!(both.resolve("p1", &labels(&[])), None);
    }

    #[test]
    fn first_match_wins_and_invalid_actions_are_skipped() {
        let o = compile(
            "o:\n- action: Block\n  namespaces: ['*']\n- action: Audit\n  namespaces: [dev]\n- action: Enforce\n- action: Audit\n",
        );
        let none = labels(&[]);
        assert_eq!(o.resolve("dev", &none), Some(Audit));
        assert_eq!(o.resolve("prod", &none), Some(Enforce));
        // An empty namespaces list matches no namespace.
        let empty = compile("o:\n- action: Enforce\n  namespaces: []\n");
        assert_eq!(empty.resolve("x", &none), None);
        assert!(compile("a: 1\n").is_empty());
    }

    #[test]
    fn shapes_are_field_errors() {
        for bad in [
            "o: {action: Enforce}\n",
            "o:\n- action: [Enforce]\n",
            "o:\n- namespaces: prod\n",
            "o:\n- namespaceSelector: [a]\n",
        ] {
            assert!(try_compile(bad).is_err(), "{bad}");
        }
    }
}
