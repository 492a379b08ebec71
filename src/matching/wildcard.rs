//! Kyverno's wildcard matcher (match.md §5.10): `*` any run of characters, `?` exactly one,
//! everything else literal and case-sensitive. Backed by `wildmatch`, which has the same
//! semantics as `github.com/IGLOU-EU/go-wildcard` v1.0.3 on real data.

use wildmatch::WildMatch;

/// A compiled wildcard pattern that remembers its source text.
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    how: How,
}

/// How a pattern is matched, chosen once (perf: most kinds, names and namespaces in policies
/// are literal or `*`).
#[derive(Clone, Debug)]
enum How {
    Literal,
    Anything,
    Ascii,
    Unicode(WildMatch),
}

impl Pattern {
    pub fn new(text: &str) -> Self {
        let how = if !contains_wildcard(text) {
            How::Literal
        } else if text.bytes().all(|b| b == b'*') {
            How::Anything
        } else if text.is_ascii() {
            How::Ascii
        } else {
            How::Unicode(WildMatch::new(text))
        };
        Self {
            text: text.to_owned(),
            how,
        }
    }

    pub fn matches(&self, s: &str) -> bool {
        match &self.how {
            How::Literal => self.text == s,
            How::Anything => true,
            How::Ascii if s.is_ascii() => ascii_matches(self.text.as_bytes(), s.as_bytes()),
            How::Ascii => WildMatch::new(&self.text).matches(s),
            How::Unicode(w) => w.matches(s),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text, when the pattern has no wildcard (it then matches only itself).
    pub fn literal(&self) -> Option<&str> {
        matches!(self.how, How::Literal).then_some(self.text.as_str())
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// One-off wildcard comparison (`wildcard.Match(pattern, s)`), without allocating: literal
/// patterns compare directly, ASCII ones byte by byte; only non-ASCII text with wildcards goes
/// through `wildmatch` (whose `?` is one `char`).
pub fn matches(pattern: &str, s: &str) -> bool {
    if !contains_wildcard(pattern) {
        return pattern == s;
    }
    if pattern.is_ascii() && s.is_ascii() {
        return ascii_matches(pattern.as_bytes(), s.as_bytes());
    }
    WildMatch::new(pattern).matches(s)
}

/// The greedy `*`/`?` matcher with one backtrack point (what `wildmatch` runs, on bytes).
fn ascii_matches(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // Position after the last `*` seen, and the text position it is tried from.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                pi += 1;
                star = Some((pi, si));
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
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

    /// The byte matcher agrees with `wildmatch` on every pattern/text pair over a small
    /// alphabet (all strings up to length 4 against patterns up to length 4).
    #[test]
    fn ascii_matcher_agrees_with_wildmatch() {
        fn all(alphabet: &[char], max: usize) -> Vec<String> {
            let mut out = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                last = last
                    .iter()
                    .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                    .collect();
                out.extend(last.iter().cloned());
            }
            out
        }
        let texts = all(&['a', 'b', '*', '?'], 4);
        let pats = all(&['a', 'b', '*', '?'], 4);
        for p in &pats {
            let w = WildMatch::new(p);
            for t in &texts {
                assert_eq!(matches(p, t), w.matches(t), "{p:?} vs {t:?}");
            }
        }
        assert!(matches("é*", "éa") && !matches("?", "éé") && matches("??", "éé"));
        // Compiled patterns agree with the one-off comparison.
        for p in pats
            .iter()
            .chain(&["é?".to_owned(), "a?".to_owned(), "**".to_owned()])
        {
            let compiled = Pattern::new(p);
            for t in texts.iter().chain(&["éa".to_owned(), "aé".to_owned()]) {
                assert_eq!(compiled.matches(t), matches(p, t), "{p:?} vs {t:?}");
            }
        }
    }
}
