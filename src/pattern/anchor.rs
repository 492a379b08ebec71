//! Anchor keys (`(k)`, `=(k)`, `X(k)`, `^(k)`, `<(k)`, `+(k)`) and the walk's anchor-key
//! registry (validate.md §3.1, §4; `kyverno/kyverno:pkg/engine/anchor/{anchor,anchormap}.go`).

/// The modifier of an anchor key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnchorKind {
    /// `(k)`: if-clause.
    Condition,
    /// `<(k)`: rule-level if-clause.
    Global,
    /// `X(k)`: key must be absent.
    Negation,
    /// `+(k)`: mutate only; a plain key for validation.
    AddIfNotPresent,
    /// `=(k)`: if present, must match.
    Equality,
    /// `^(k)`: some list element must match.
    Existence,
}

impl AnchorKind {
    pub(crate) fn modifier(self) -> &'static str {
        match self {
            AnchorKind::Condition => "",
            AnchorKind::Global => "<",
            AnchorKind::Negation => "X",
            AnchorKind::AddIfNotPresent => "+",
            AnchorKind::Equality => "=",
            AnchorKind::Existence => "^",
        }
    }

    /// Anchors handled in the anchor phase of a map (the rest are plain keys, §3.3).
    pub(crate) fn is_phase_one(self) -> bool {
        matches!(
            self,
            AnchorKind::Condition
                | AnchorKind::Equality
                | AnchorKind::Negation
                | AnchorKind::Existence
        )
    }
}

/// A parsed anchor: its kind and inner key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Anchor<'a> {
    pub kind: AnchorKind,
    pub key: &'a str,
}

/// `anchor.Parse`: the key, trimmed, must match `^([+<=X^])?\((.+)\)$` (`.` excludes `\n`).
pub(crate) fn parse_anchor(key: &str) -> Option<Anchor<'_>> {
    // perf: most keys are plain; an ASCII last byte that is neither `)` nor a space rules an
    // anchor out before the (Unicode) trim (docs/PERFORMANCE.md).
    let last = *key.as_bytes().last()?;
    if last.is_ascii() && last != b')' && !char::from(last).is_whitespace() {
        return None;
    }
    let s = key.trim();
    let (kind, rest) = match s.as_bytes().first()? {
        b'+' => (AnchorKind::AddIfNotPresent, &s[1..]),
        b'<' => (AnchorKind::Global, &s[1..]),
        b'=' => (AnchorKind::Equality, &s[1..]),
        b'X' => (AnchorKind::Negation, &s[1..]),
        b'^' => (AnchorKind::Existence, &s[1..]),
        _ => (AnchorKind::Condition, s),
    };
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    if inner.is_empty() || inner.contains('\n') {
        return None;
    }
    Some(Anchor { kind, key: inner })
}

/// `anchor.String`: rebuilds an anchor key.
pub(crate) fn anchor_string(kind: AnchorKind, key: &str) -> String {
    format!("{}({key})", kind.modifier())
}

/// The anchor-key registry (`AnchorMap`): every conditional and existence anchor key met while
/// comparing a pattern map with a resource map, and whether any such resource map had the key.
/// Negation keys are recorded upstream too but never count as missing, so they are left out.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    keys: Vec<(String, bool)>,
}

impl Registry {
    /// `CheckAnchorInResource` for one conditional or existence anchor key of a pattern map
    /// and whether the resource map has its inner key.
    pub(crate) fn record(&mut self, key: &str, present: bool) {
        match self.keys.iter_mut().find(|(k, _)| k == key) {
            Some((_, seen)) => *seen |= present,
            None => self.keys.push((key.to_owned(), present)),
        }
    }

    /// `KeysAreMissing`.
    pub(crate) fn keys_are_missing(&self) -> bool {
        self.keys.iter().any(|(_, seen)| !seen)
    }
}

/// The first key in a validate pattern that uses an anchor validation does not allow (`+(k)`,
/// mutate only): its dotted path and the key. Kyverno rejects such a policy
/// (`pkg/policy/validate/validate.go`, "unsupported anchor").
pub(crate) fn unsupported_in_validate(
    pattern: &crate::yaml::Node,
) -> Option<(String, String, crate::source::Span)> {
    use crate::yaml::Value;
    let mut stack = vec![(pattern, String::new())];
    while let Some((node, path)) = stack.pop() {
        match &node.value {
            Value::Map(m) => {
                for e in m.entries() {
                    let here = if path.is_empty() {
                        e.key.clone()
                    } else {
                        format!("{path}.{}", e.key)
                    };
                    if parse_anchor(&e.key).is_some_and(|a| a.kind == AnchorKind::AddIfNotPresent) {
                        return Some((here, e.key.clone(), e.key_span));
                    }
                    stack.push((&e.value, here));
                }
            }
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, format!("{path}[{i}]")));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_anchors() {
        let p = |s| parse_anchor(s).map(|a| (a.kind, a.key));
        assert_eq!(p("(name)"), Some((AnchorKind::Condition, "name")));
        assert_eq!(p("=(x)"), Some((AnchorKind::Equality, "x")));
        assert_eq!(p("X(x)"), Some((AnchorKind::Negation, "x")));
        assert_eq!(p("^(x)"), Some((AnchorKind::Existence, "x")));
        assert_eq!(p("<(x)"), Some((AnchorKind::Global, "x")));
        assert_eq!(p("+(x)"), Some((AnchorKind::AddIfNotPresent, "x")));
        assert_eq!(p(" (x) "), Some((AnchorKind::Condition, "x")));
        assert_eq!(p("((a))"), Some((AnchorKind::Condition, "(a)")));
        assert_eq!(p("X(*-snippet)"), Some((AnchorKind::Negation, "*-snippet")));
        assert_eq!(p("()"), None);
        assert_eq!(p("x(a)"), None);
        assert_eq!(p("name"), None);
        assert_eq!(p("(a\nb)"), None);
        assert_eq!(p(""), None);
        // Trailing Unicode and ASCII spaces (vertical tab included) are trimmed, as Go does.
        assert_eq!(p("(x)\u{2003}"), Some((AnchorKind::Condition, "x")));
        assert_eq!(p("(x)\u{b}"), Some((AnchorKind::Condition, "x")));
        assert_eq!(p("(x)\t\n"), Some((AnchorKind::Condition, "x")));
        assert_eq!(p("(x)é"), None);
        assert_eq!(anchor_string(AnchorKind::Condition, "k"), "(k)");
        assert_eq!(anchor_string(AnchorKind::Negation, "k"), "X(k)");
    }
}
