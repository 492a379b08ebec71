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
    /// `*` is the only wildcard ([`stars_match`]); the position of the first.
    Stars(usize),
    Ascii,
    Unicode(WildMatch),
}

impl Pattern {
    pub fn new(text: &str) -> Self {
        let how = if !contains_wildcard(text) {
            How::Literal
        } else if text.bytes().all(|b| b == b'*') {
            How::Anything
        } else if !text.contains('?') {
            How::Stars(text.find('*').unwrap_or(0))
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
            How::Stars(first) => stars_match(self.text.as_bytes(), *first, s.as_bytes()),
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
    // perf: patterns are short; one pass finds what a few `memchr` calls would.
    let p = pattern.as_bytes();
    let mut star = None;
    for (i, &b) in p.iter().enumerate() {
        match b {
            b'?' => {
                if pattern.is_ascii() && s.is_ascii() {
                    return ascii_matches(p, s.as_bytes());
                }
                return WildMatch::new(pattern).matches(s);
            }
            b'*' => star = star.or(Some(i)),
            _ => {}
        }
    }
    match star {
        None => pattern == s,
        Some(first) => stars_match(p, first, s.as_bytes()),
    }
}

/// A pattern whose only wildcard is `*`, the first at `first`: the text starts with the part
/// before it, ends with the part after the last, and holds the parts between in order, each
/// found leftmost (which loses no match: `*` takes any run). Bytes are compared, which is
/// exact for UTF-8: a literal part found in the text starts and ends on character boundaries.
/// perf: `!*:latest`, `registry.io/*`, `*-prod-*` are the usual shapes; the general matcher
/// backtracks over every position.
fn stars_match(p: &[u8], first: usize, s: &[u8]) -> bool {
    let last = p.iter().rposition(|&b| b == b'*').unwrap_or(first);
    let (prefix, suffix) = (&p[..first], &p[last + 1..]);
    if s.len() < prefix.len() + suffix.len() || !s.starts_with(prefix) || !s.ends_with(suffix) {
        return false;
    }
    let mut rest = &s[prefix.len()..s.len() - suffix.len()];
    for part in p[first..=last]
        .split(|&b| b == b'*')
        .filter(|x| !x.is_empty())
    {
        match memchr::memmem::find(rest, part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
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
                // perf: a final `*` takes whatever is left (`?*` is the usual non-empty test).
                if pi == p.len() {
                    return true;
                }
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
    memchr::memchr2(b'*', b'?', s.as_bytes()).is_some()
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
        // Star-only patterns over longer texts, non-ASCII included (`stars_match`).
        let star_texts = all(&['a', 'b', 'é'], 5);
        for p in all(&['a', 'é', '*'], 5) {
            let w = WildMatch::new(&p);
            for t in &star_texts {
                assert_eq!(matches(&p, t), w.matches(t), "{p:?} vs {t:?}");
                assert_eq!(Pattern::new(&p).matches(t), w.matches(t), "{p:?} vs {t:?}");
            }
        }
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
