//! Kyverno's wildcard matcher (match.md §5.10): `*` any run of characters, `?` exactly one,
//! everything else literal and case-sensitive. Backed by `wildmatch`, which has the same
//! semantics as `github.com/IGLOU-EU/go-wildcard` v1.0.3 on real data.

use wildmatch::WildMatch;

/// A compiled wildcard pattern that remembers its source text.
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    matcher: WildMatch,
}

impl Pattern {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            matcher: WildMatch::new(text),
        }
    }

    pub fn matches(&self, s: &str) -> bool {
        self.matcher.matches(s)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// One-off wildcard comparison (`wildcard.Match(pattern, s)`).
pub fn matches(pattern: &str, s: &str) -> bool {
    WildMatch::new(pattern).matches(s)
}

/// Whether a string contains `*` or `?` (`wildcard.ContainsWildcard`).
pub fn contains_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_wildcard_semantics() {
        assert!(matches("*", ""));
        assert!(matches("", ""));
        assert!(!matches("", "a"));
        assert!(matches("prod-*", "prod-eu"));
        assert!(!matches("prod-*", "Prod-eu"));
        assert!(matches("?at", "cat"));
        assert!(!matches("?at", "at"));
        assert!(matches("a/b*", "a/bc"));
        assert!(!matches("[ab]", "a"));
        assert!(contains_wildcard("a?"));
        assert!(!contains_wildcard("a.b"));
    }
}
