//! Globs as `gobwas/glob` compiles them without separators (Kyverno's ImageValidatingPolicy
//! `matchImageReferences[].glob`, `pkg/cel/compiler/image.go`): `*` any run of characters,
//! `?` one character, `[abc]` / `[a-z]` / `[!abc]` a class, `{a,b}` alternatives (which may
//! hold patterns), `\` escapes the next character.

/// A compiled glob.
#[derive(Clone, Debug, PartialEq)]
pub struct Glob(Vec<Token>);

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Char(char),
    Any,
    One,
    /// `(negated, ranges)`.
    Class(bool, Vec<(char, char)>),
    Alternatives(Vec<Glob>),
}

impl Glob {
    /// Compiles `pattern`; an unclosed `[` or `{`, or a trailing `\`, is an error.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let (glob, end) = parse(&chars, 0, false)?;
        if end != chars.len() {
            return Err(format!("unexpected {:?} in glob {pattern:?}", chars[end]));
        }
        Ok(glob)
    }

    pub fn matches(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        matches_at(&self.0, &chars)
    }
}

/// Parses from `i` to the end, or (inside `{…}`) to the next `,` or `}` at this depth.
fn parse(chars: &[char], mut i: usize, nested: bool) -> Result<(Glob, usize), String> {
    let mut out = Vec::new();
    while let Some(&c) = chars.get(i) {
        match c {
            ',' | '}' if nested => break,
            '*' => out.push(Token::Any),
            '?' => out.push(Token::One),
            '\\' => {
                i += 1;
                let escaped = chars.get(i).ok_or("glob ends with an escape")?;
                out.push(Token::Char(*escaped));
            }
            '[' => {
                let mut j = i + 1;
                let negated = chars.get(j) == Some(&'!');
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    let c = *chars.get(j).ok_or("unclosed [ in glob")?;
                    if c == ']' {
                        break;
                    }
                    if chars.get(j + 1) == Some(&'-') && chars.get(j + 2).is_some_and(|e| *e != ']')
                    {
                        let hi = chars[j + 2];
                        ranges.push((c, hi));
                        j += 3;
                    } else {
                        ranges.push((c, c));
                        j += 1;
                    }
                }
                out.push(Token::Class(negated, ranges));
                i = j;
            }
            '{' => {
                let mut alternatives = Vec::new();
                let mut j = i + 1;
                loop {
                    let (g, end) = parse(chars, j, true)?;
                    alternatives.push(g);
                    match chars.get(end) {
                        Some(',') => j = end + 1,
                        Some('}') => {
                            j = end;
                            break;
                        }
                        _ => return Err("unclosed { in glob".to_owned()),
                    }
                }
                out.push(Token::Alternatives(alternatives));
                i = j;
            }
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    Ok((Glob(out), i))
}

fn matches_at(tokens: &[Token], s: &[char]) -> bool {
    let Some((first, rest)) = tokens.split_first() else {
        return s.is_empty();
    };
    match first {
        Token::Char(c) => s.first() == Some(c) && matches_at(rest, &s[1..]),
        Token::One => !s.is_empty() && matches_at(rest, &s[1..]),
        Token::Class(negated, ranges) => {
            s.first()
                .is_some_and(|c| ranges.iter().any(|(lo, hi)| lo <= c && c <= hi) != *negated)
                && matches_at(rest, &s[1..])
        }
        Token::Any => (0..=s.len()).any(|k| matches_at(rest, &s[k..])),
        Token::Alternatives(alts) => alts.iter().any(|alt| {
            let mut joined = alt.0.clone();
            joined.extend_from_slice(rest);
            matches_at(&joined, s)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn gobwas_glob_without_separators() {
        let m = |p: &str, s: &str| Glob::new(p).unwrap().matches(s);
        assert!(m(
            "ghcr.io/kyverno/test-verify-image*",
            "ghcr.io/kyverno/test-verify-image:signed"
        ));
        // No separators: `*` crosses `/`.
        assert!(m("docker.io/*", "docker.io/library/nginx:1"));
        assert!(!m("docker.io/*", "ghcr.io/x"));
        assert!(m("*", ""));
        assert!(m("nginx:1.?", "nginx:1.2"));
        assert!(!m("nginx:1.?", "nginx:1.25"));
        assert!(m("reg[0-9].io/*", "reg7.io/a"));
        assert!(!m("reg[!0-9].io/*", "reg7.io/a"));
        assert!(m("{ghcr.io,quay.io}/*", "quay.io/a"));
        assert!(m(
            "{ghcr.io/*,docker.io/library/*}",
            "docker.io/library/nginx"
        ));
        assert!(!m("{ghcr.io,quay.io}/*", "docker.io/a"));
        assert!(m(r"a\*b", "a*b"));
        assert!(!m(r"a\*b", "axb"));
        for bad in ["[abc", "{a,b", "a\\"] {
            assert!(Glob::new(bad).is_err(), "{bad}");
        }
    }
}
