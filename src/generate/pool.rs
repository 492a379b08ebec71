//! Where clone sources come from: offline there is no cluster, so `clone` / `cloneList` read
//! the resources kpol was given. `kpol generate` offers every input manifest; `kpol test`
//! offers what the Kyverno CLI's fake cluster holds — the trigger itself, plus the rule's
//! `cloneSourceResource` file (cli-compat.md §3.1).

use std::collections::BTreeMap;

use crate::matching::selector::LabelSelector;
use crate::policy::Policy;
use crate::resource::Resource;

/// The resources generate rules may clone from, or find already present.
#[derive(Clone, Debug, Default)]
pub struct SourcePool<'a> {
    /// Offered to every rule.
    pub common: Vec<&'a Resource>,
    /// Offered to one rule only: (policy key, rule name, resource).
    pub per_rule: Vec<(String, String, &'a Resource)>,
    /// The Namespace objects the cluster holds (for PolicyExceptions' namespace labels).
    pub namespaces: Vec<&'a Resource>,
}

impl<'a> SourcePool<'a> {
    /// Every resource offered to every rule, its Namespaces known to the cluster.
    pub fn new(common: Vec<&'a Resource>) -> Self {
        let namespaces = common
            .iter()
            .copied()
            .filter(|r| r.kind == "Namespace")
            .collect();
        Self {
            common,
            per_rule: Vec::new(),
            namespaces,
        }
    }

    fn candidates<'s>(
        &'s self,
        policy: &'s Policy,
        rule: &'s str,
    ) -> impl Iterator<Item = &'a Resource> + 's {
        let key = policy.key();
        self.common.iter().copied().chain(
            self.per_rule
                .iter()
                .filter(move |(p, r, _)| (*p == key || *p == policy.name) && r == rule)
                .map(|(_, _, res)| *res),
        )
    }

    /// The resource with this identity (`api_version` empty: any version).
    pub fn get(
        &self,
        policy: &Policy,
        rule: &str,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<&'a Resource> {
        self.candidates(policy, rule).find(|r| {
            (api_version.is_empty() || r.api_version == api_version)
                && r.kind == kind
                && r.namespace == namespace
                && r.name == name
        })
    }

    /// The resources of a kind in a namespace whose labels the selector matches (first of
    /// each identity kept).
    pub fn list(
        &self,
        policy: &Policy,
        rule: &str,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: Option<&LabelSelector>,
    ) -> Vec<&'a Resource> {
        let mut out: Vec<&'a Resource> = Vec::new();
        for r in self.candidates(policy, rule) {
            if (!api_version.is_empty() && r.api_version != api_version)
                || r.kind != kind
                || r.namespace != namespace
            {
                continue;
            }
            if let Some(sel) = selector
                && !sel.matches(&labels_of(r)).unwrap_or(false)
            {
                continue;
            }
            let dup = out
                .iter()
                .any(|o| o.api_version == r.api_version && o.kind == r.kind && o.name == r.name);
            if !dup {
                out.push(r);
            }
        }
        out
    }
}

fn labels_of(r: &Resource) -> BTreeMap<String, String> {
    r.labels()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.to_owned(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}
