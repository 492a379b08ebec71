//! Label selectors (`selector`, `namespaceSelector`; match.md §5.5–5.6): Kubernetes
//! `LabelSelectorAsSelector` semantics plus Kyverno's wildcard rewrite of `matchLabels`
//! (`kyverno/kyverno:pkg/engine/wildcards/wildcards.go` `ReplaceInSelector`).

use std::collections::BTreeMap;

use crate::base::wildcard::{contains_wildcard, matches};

#[derive(Clone, Debug, PartialEq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// A `metav1.LabelSelector` as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    pub match_labels: Vec<(String, String)>,
    pub match_expressions: Vec<Requirement>,
}

impl LabelSelector {
    /// `LabelSelectorContainsWildcard`: any matchLabels key or value with `*`/`?`.
    pub fn contains_wildcard(&self) -> bool {
        self.match_labels
            .iter()
            .any(|(k, v)| contains_wildcard(k) || contains_wildcard(v))
    }

    /// Whether the selector matches `labels`; `Err` when it cannot be built (then Kyverno
    /// reports "failed to parse selector" and the filter does not match).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> Result<bool, String> {
        let rewritten = self.rewrite_wildcards(labels);
        let reqs = requirements(&rewritten)?;
        Ok(reqs.iter().all(|r| requirement_matches(r, labels)))
    }

    /// `ReplaceInSelector`: a wildcard matchLabels entry becomes the first resource label that
    /// matches it, else its wildcards are replaced by `0`. The result is a map, so a later
    /// entry with the same key wins.
    fn rewrite_wildcards(&self, labels: &BTreeMap<String, String>) -> LabelSelector {
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in &self.match_labels {
            let (nk, nv) = if contains_wildcard(k) || contains_wildcard(v) {
                labels
                    .iter()
                    .find(|(lk, lv)| matches(k, lk) && matches(v, lv))
                    .map(|(lk, lv)| (lk.clone(), lv.clone()))
                    .unwrap_or_else(|| (k.replace(['*', '?'], "0"), v.replace(['*', '?'], "0")))
            } else {
                (k.clone(), v.clone())
            };
            if let Some(e) = out.iter_mut().find(|(ek, _)| *ek == nk) {
                e.1 = nv;
            } else {
                out.push((nk, nv));
            }
        }
        LabelSelector {
            match_labels: out,
            match_expressions: self.match_expressions.clone(),
        }
    }

    /// The requirements Kubernetes would build, for validation (§1.4 item 9).
    pub fn requirements(&self) -> Result<Vec<Requirement>, String> {
        requirements(self)
    }
}

fn requirements(sel: &LabelSelector) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    for (k, v) in &sel.match_labels {
        validate_key(k)?;
        validate_value(v)?;
        out.push(Requirement {
            key: k.clone(),
            operator: "=".to_owned(),
            values: vec![v.clone()],
        });
    }
    for e in &sel.match_expressions {
        validate_key(&e.key)?;
        match e.operator.as_str() {
            "In" | "NotIn" => {
                if e.values.is_empty() {
                    return Err("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".to_owned());
                }
            }
            "Exists" | "DoesNotExist" => {
                if !e.values.is_empty() {
                    return Err(
                        "values: Invalid value: for 'exists', 'doesnotexist' operators, values set must be empty"
                            .to_owned(),
                    );
                }
            }
            op => return Err(format!("{op:?} is not a valid label selector operator")),
        }
        for v in &e.values {
            validate_value(v)?;
        }
        out.push(e.clone());
    }
    Ok(out)
}

fn requirement_matches(r: &Requirement, labels: &BTreeMap<String, String>) -> bool {
    let got = labels.get(&r.key);
    match r.operator.as_str() {
        "=" | "In" => got.is_some_and(|v| r.values.contains(v)),
        "NotIn" => got.is_none_or(|v| !r.values.contains(v)),
        "Exists" => got.is_some(),
        "DoesNotExist" => got.is_none(),
        _ => false,
    }
}

fn is_label_name(s: &str) -> bool {
    // `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|p| {
            let b = p.as_bytes();
            !b.is_empty()
                && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// A label key: a qualified name, `[prefix/]name`.
fn validate_key(k: &str) -> Result<(), String> {
    let ok = match k.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(k),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "key: Invalid value: {k:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

/// A label value: empty or a label name.
fn validate_value(v: &str) -> Result<(), String> {
    if v.is_empty() || is_label_name(v) {
        Ok(())
    } else {
        Err(format!(
            "values[0][{v}]: Invalid value: {v:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn ml(pairs: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            match_expressions: vec![],
        }
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_labels: vec![],
            match_expressions: vec![Requirement {
                key: key.into(),
                operator: op.into(),
                values: values.iter().map(|s| (*s).to_owned()).collect(),
            }],
        }
    }

    #[test]
    fn match_labels_and_wildcards() {
        let l = labels(&[("app", "web"), ("kyverno.io/skip", "yes")]);
        assert_eq!(ml(&[("app", "web")]).matches(&l), Ok(true));
        assert_eq!(ml(&[("app", "db")]).matches(&l), Ok(false));
        assert_eq!(ml(&[("kyverno.io/skip", "?*")]).matches(&l), Ok(true));
        assert_eq!(ml(&[("*", "*")]).matches(&labels(&[])), Ok(false));
        assert_eq!(ml(&[("*", "*")]).matches(&l), Ok(true));
        assert_eq!(ml(&[]).matches(&l), Ok(true));
    }

    #[test]
    fn expressions() {
        let l = labels(&[("env", "prod")]);
        assert_eq!(expr("env", "In", &["prod", "x"]).matches(&l), Ok(true));
        assert_eq!(expr("env", "NotIn", &["prod"]).matches(&l), Ok(false));
        assert_eq!(expr("team", "NotIn", &["a"]).matches(&l), Ok(true));
        assert_eq!(expr("env", "Exists", &[]).matches(&l), Ok(true));
        assert_eq!(expr("env", "DoesNotExist", &[]).matches(&l), Ok(false));
        assert!(expr("env", "In", &[]).matches(&l).is_err());
        assert!(expr("env", "Foo", &["a"]).matches(&l).is_err());
        // matchExpressions get no wildcard treatment.
        assert_eq!(expr("env", "In", &["pr*"]).matches(&l).ok(), None);
    }

    #[test]
    fn invalid_values_fail_to_parse() {
        assert!(ml(&[("app", "a b")]).matches(&labels(&[])).is_err());
        assert!(ml(&[("-app", "a")]).matches(&labels(&[])).is_err());
        assert!(ml(&[("example.com/app", "")]).matches(&labels(&[])).is_ok());
    }
}
