//! `--test-case-selector` (cli-compat.md §2.2): `policy=…,rule=…,resource=…` with Kyverno's
//! wildcards, filtering result entries before they are checked.

use wildmatch::WildMatch;

use kpol::testfile::ResultEntry;

/// A parsed selector; malformed parts are kept as errors (they do not stop the run).
#[derive(Debug, Default)]
pub struct Selector {
    policy: Option<String>,
    rule: Option<String>,
    resource: Option<String>,
    pub errors: Vec<String>,
}

impl Selector {
    pub fn parse(text: &str) -> Self {
        let mut s = Selector::default();
        for part in text.split(',') {
            let kv: Vec<&str> = part.split('=').collect();
            let [k, v] = kv[..] else {
                s.errors
                    .push(format!("invalid test case selector ({part})"));
                continue;
            };
            let (k, v) = (k.trim(), v.trim().to_owned());
            match k {
                "policy" => s.policy = Some(v),
                "rule" => s.rule = Some(v),
                "resource" => s.resource = Some(v),
                _ => s
                    .errors
                    .push(format!("invalid test case selector key ({k})")),
            }
        }
        s
    }

    /// The entries kept, in order. Quirk kept from upstream: a `resource=` value other than
    /// `*` replaces each kept entry's `resources` by that value.
    pub fn apply(&self, entries: &[ResultEntry]) -> Vec<ResultEntry> {
        let hit = |filter: &Option<String>, value: &str| {
            value.is_empty()
                || filter
                    .as_ref()
                    .is_none_or(|f| WildMatch::new(f).matches(value))
        };
        entries
            .iter()
            .filter(|e| hit(&self.policy, &e.policy) && hit(&self.rule, &e.rule))
            .filter(|e| {
                e.resources.is_empty() || e.resources.iter().any(|r| hit(&self.resource, r))
            })
            .map(|e| {
                let mut e = e.clone();
                if let Some(r) = self.resource.as_ref().filter(|r| r.as_str() != "*") {
                    e.resources = vec![r.clone()];
                }
                e
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(policy: &str, rule: &str, resources: &[&str]) -> ResultEntry {
        ResultEntry {
            policy: policy.to_owned(),
            rule: rule.to_owned(),
            resources: resources.iter().map(|s| (*s).to_owned()).collect(),
            ..ResultEntry::default()
        }
    }

    #[test]
    fn wildcards_select_and_resource_filter_replaces_resources() {
        let entries = [
            entry("require-labels", "check", &["web", "api"]),
            entry("other", "check", &["web"]),
            entry("require-team", "", &[]),
        ];
        let s = Selector::parse("policy=require-*, rule = check");
        assert!(s.errors.is_empty());
        let kept = s.apply(&entries);
        assert_eq!(kept.len(), 2);
        let s = Selector::parse("resource=api");
        let kept = s.apply(&entries);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].resources, ["api"]);
    }

    #[test]
    fn malformed_parts_are_errors_not_fatal() {
        let s = Selector::parse("policy=a=b,color=red,rule=x");
        assert_eq!(s.errors.len(), 2);
        assert_eq!(s.rule.as_deref(), Some("x"));
    }
}
