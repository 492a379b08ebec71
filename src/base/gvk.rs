//! Kind selectors: `resources.kinds` entries parsed into (group, version, kind, subresource)
//! as `kyverno/kyverno:pkg/utils/kube/kind.go` `ParseKindSelector` does (match.md §5.1), and
//! the kind-name helpers autogen uses (`GetKindFromGVK`, `ContainsKind`).

use crate::base::wildcard::Pattern;

/// Whether a selector part is a version: Go's `^(v\d+((alpha|beta)\d+)?|\*)$`, whose `\d` is
/// an ASCII digit. Read by hand: compiling the regex cost more than all of start-up's kind
/// selectors (perf).
fn version_like(s: &str) -> bool {
    fn digits(s: &str) -> Option<&str> {
        let rest = s.trim_start_matches(|c: char| c.is_ascii_digit());
        (rest.len() < s.len()).then_some(rest)
    }
    if s == "*" {
        return true;
    }
    let Some(rest) = s.strip_prefix('v').and_then(digits) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    rest.strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
        .and_then(digits)
        .is_some_and(str::is_empty)
}

/// `ParseKindSelector`: the four parts, or `None` for a selector with more than four parts
/// (which never matches).
pub fn parse_kind_selector(input: &str) -> Option<(String, String, String, String)> {
    let mut parts: Vec<&str> = input.split('/').collect();
    // The last segment is split again on `.`: `Pod.exec` ≡ `Pod/exec`.
    if let Some(last) = parts.pop() {
        parts.extend(last.split('.'));
    }
    let s = |x: &str| x.to_owned();
    match parts.as_slice() {
        [k] => Some((s("*"), s("*"), s(k), String::new())),
        ["*", "*"] => Some((s("*"), s("*"), s("*"), s("*"))),
        ["*", sub] if sub.to_lowercase() == *sub => Some((s("*"), s("*"), s("*"), s(sub))),
        [v, k] if version_like(v) => Some((s("*"), s(v), s(k), String::new())),
        [k, sub] => Some((s("*"), s("*"), s(k), s(sub))),
        [v, k, sub] if version_like(v) => Some((s("*"), s(v), s(k), s(sub))),
        [g, v, k] => Some((s(g), s(v), s(k), String::new())),
        [g, v, k, sub] => Some((s(g), s(v), s(k), s(sub))),
        _ => None,
    }
}

/// A compiled `kinds` entry.
#[derive(Clone, Debug)]
pub struct KindSelector {
    pub text: String,
    parts: Option<[Pattern; 4]>,
}

impl KindSelector {
    pub fn new(text: &str) -> Self {
        let parts = parse_kind_selector(text).map(|(g, v, k, s)| {
            [
                Pattern::new(&g),
                Pattern::new(&v),
                Pattern::new(&k),
                Pattern::new(&s),
            ]
        });
        Self {
            text: text.to_owned(),
            parts,
        }
    }

    /// The kind name this entry can match: `Some(None)` when it matches nothing (more than
    /// four parts), `None` when its kind part is a wildcard.
    pub fn kind_name(&self) -> Option<Option<&str>> {
        match &self.parts {
            None => Some(None),
            Some([_, _, k, _]) => k.literal().map(Some),
        }
    }

    /// `CheckKind` for one entry, with ephemeral containers allowed (match.go passes `true`).
    pub fn matches(&self, group: &str, version: &str, kind: &str, subresource: &str) -> bool {
        let Some([g, v, k, s]) = &self.parts else {
            return false;
        };
        if !(g.matches(group) && v.matches(version) && k.matches(kind)) {
            return false;
        }
        s.matches(subresource)
            || (group.is_empty()
                && version == "v1"
                && kind == "Pod"
                && subresource == "ephemeralcontainers")
    }
}

/// `GetKindFromGVK` followed by `SplitSubresource`: the bare kind name of a kinds entry
/// (`apps/v1/Deployment` → `Deployment`, `Pod/exec` → `Pod`, `Pod.exec` → `Pod`).
pub fn bare_kind(entry: &str) -> String {
    let parts: Vec<&str> = entry.split('/').collect();
    let format_sub = |s: &str| s.replacen('.', "/", 1);
    let kind = match parts.as_slice() {
        [k] => format_sub(k),
        ["*", "*"] => "*/*".to_owned(),
        [v, k] if version_like(v) => format_sub(k),
        [a, b] => format!("{a}/{b}"),
        [v, k, s] if version_like(v) => format!("{k}/{s}"),
        [_, _, k] => format_sub(k),
        [_, _, k, s] => format!("{k}/{s}"),
        _ => String::new(),
    };
    // SplitSubresource only splits when there are exactly two parts.
    let split: Vec<&str> = kind.split('/').collect();
    match split.as_slice() {
        [k, _] => (*k).to_owned(),
        _ => kind,
    }
}

/// `ContainsKind`: whether any entry names `kind` (ignoring group, version, subresource).
pub fn contains_kind<S: AsRef<str>>(list: &[S], kind: &str) -> bool {
    list.iter().any(|e| bare_kind(e.as_ref()) == kind)
}

/// The plural resource name of a kind, as API discovery would give it for built-in kinds, and
/// by the usual English rules otherwise.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    match lower.as_str() {
        "endpoints" => return lower,
        "podsecuritypolicy" => return "podsecuritypolicies".to_owned(),
        _ => {}
    }
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if lower.ends_with('s') || lower.ends_with("ch") || lower.ends_with('x') {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_like_reads_as_gos_regex() {
        for v in ["v1", "v10", "v1beta1", "v2alpha3", "*", "v0"] {
            assert!(version_like(v), "{v}");
        }
        for v in [
            "", "v", "V1", "1", "v1beta", "v1alpha", "v1gamma1", "v1beta1x", "vbeta1", "**",
            "v1.2", " v1", "v1 ", "v١", "apps",
        ] {
            assert!(!version_like(v), "{v}");
        }
    }

    fn p(s: &str) -> Option<(String, String, String, String)> {
        parse_kind_selector(s)
    }

    fn t(g: &str, v: &str, k: &str, s: &str) -> Option<(String, String, String, String)> {
        Some((g.into(), v.into(), k.into(), s.into()))
    }

    #[test]
    fn kind_selector_table() {
        assert_eq!(p("Pod"), t("*", "*", "Pod", ""));
        assert_eq!(p("*"), t("*", "*", "*", ""));
        assert_eq!(p("*/*"), t("*", "*", "*", "*"));
        assert_eq!(p("*/scale"), t("*", "*", "*", "scale"));
        assert_eq!(p("v1/Pod"), t("*", "v1", "Pod", ""));
        assert_eq!(p("*/Pod"), t("*", "*", "Pod", ""));
        assert_eq!(p("v2beta1/Foo"), t("*", "v2beta1", "Foo", ""));
        assert_eq!(p("Pod/exec"), t("*", "*", "Pod", "exec"));
        assert_eq!(p("Pod.exec"), t("*", "*", "Pod", "exec"));
        assert_eq!(p("v1/Pod/status"), t("*", "v1", "Pod", "status"));
        assert_eq!(p("v1/Pod.status"), t("*", "v1", "Pod", "status"));
        assert_eq!(p("apps/v1/Deployment"), t("apps", "v1", "Deployment", ""));
        assert_eq!(
            p("apps/v1/Deployment/scale"),
            t("apps", "v1", "Deployment", "scale")
        );
        // `networking.k8s.io/v1/Ingress`: only the last segment is split on dots.
        assert_eq!(
            p("networking.k8s.io/v1/Ingress"),
            t("networking.k8s.io", "v1", "Ingress", "")
        );
        assert_eq!(p("a/b/c/d/e"), None);
    }

    #[test]
    fn plurals() {
        assert_eq!(plural("Pod"), "pods");
        assert_eq!(plural("Ingress"), "ingresses");
        assert_eq!(plural("NetworkPolicy"), "networkpolicies");
        assert_eq!(plural("Gateway"), "gateways");
        assert_eq!(plural("Endpoints"), "endpoints");
        assert_eq!(plural("StorageClass"), "storageclasses");
    }

    #[test]
    fn kind_matching() {
        let pod = KindSelector::new("Pod");
        assert!(pod.matches("", "v1", "Pod", ""));
        assert!(!pod.matches("", "v1", "Pod", "exec"));
        assert!(pod.matches("", "v1", "Pod", "ephemeralcontainers"));
        assert!(KindSelector::new("Pod/*").matches("", "v1", "Pod", "exec"));
        assert!(KindSelector::new("Pod/*").matches("", "v1", "Pod", ""));
        assert!(KindSelector::new("*/*").matches("apps", "v1", "Deployment", ""));
        let dep = KindSelector::new("apps/v1/Deployment");
        assert!(dep.matches("apps", "v1", "Deployment", ""));
        assert!(!dep.matches("extensions", "v1beta1", "Deployment", ""));
        assert!(!KindSelector::new("v1/Pod").matches("", "v2", "Pod", ""));
        assert!(!KindSelector::new("a/b/c/d/e").matches("a", "b", "c", "d"));
        assert!(KindSelector::new("Depl*").matches("apps", "v1", "Deployment", ""));
    }

    #[test]
    fn bare_kinds() {
        assert_eq!(bare_kind("Pod"), "Pod");
        assert_eq!(bare_kind("v1/Pod"), "Pod");
        assert_eq!(bare_kind("Pod/exec"), "Pod");
        assert_eq!(bare_kind("Pod.exec"), "Pod");
        assert_eq!(bare_kind("apps/v1/Deployment"), "Deployment");
        assert_eq!(bare_kind("apps/v1/Deployment/scale"), "Deployment");
        assert_eq!(bare_kind("v1/Pod/status"), "Pod");
        assert!(contains_kind(&["Service", "v1/Pod"], "Pod"));
        assert!(!contains_kind(&["Service"], "Pod"));
    }
}
