//! Inline suppressions: `<policy>[/<rule>] [until=YYYY-MM-DD] -- <reason>` (docs/SUPPRESSIONS.md).
//!
//! One grammar, written in two places: the `kpol.io/ignore` annotation of a resource (several
//! entries separated by `;` or line breaks) and a `# kpol:ignore …` comment on the line above
//! a document or a field ([`scan`]). This module parses entries and says which rule results
//! they cover; it evaluates nothing and reads no file, so the CLI and an editor (the language
//! server) share it. Names match with Kyverno's wildcards (`*`, `?`, [`crate::base::wildcard`]).
//! An entry without a reason is refused: a suppression nobody can review is not allowed.

pub mod scan;

use crate::base::wildcard::Pattern;
use chrono::NaiveDate;

/// The annotation that holds a resource's suppressions.
pub const ANNOTATION: &str = "kpol.io/ignore";

/// The word that starts a suppression comment (`# kpol:ignore …`).
pub const COMMENT_WORD: &str = "kpol:ignore";

/// One parsed entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The policy's name (without a namespaced Policy's namespace), a wildcard pattern.
    pub policy: Pattern,
    /// The rule, a wildcard pattern; `None`: every rule of the policy.
    pub rule: Option<Pattern>,
    /// The last day the entry applies (inclusive); `None`: no expiry.
    pub until: Option<NaiveDate>,
    /// Why the finding is accepted: never empty.
    pub reason: String,
    /// The entry as written, trimmed.
    pub text: String,
}

/// Why an entry was refused, at a byte offset into the text given to [`parse_entry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl Entry {
    /// Whether the entry names this rule result: `policy` is the policy's name, `rule` the
    /// rule's ("" for a policy without named rules, which only a policy-wide entry covers).
    pub fn names(&self, policy: &str, rule: &str) -> bool {
        self.policy.matches(policy)
            && match &self.rule {
                None => true,
                Some(r) => !rule.is_empty() && r.matches(rule),
            }
    }

    /// Whether the entry has expired on `today` (it applies through its `until` day).
    pub fn expired(&self, today: NaiveDate) -> bool {
        self.until.is_some_and(|u| today > u)
    }

    /// `policy[/rule]` as written.
    pub fn selector(&self) -> String {
        match &self.rule {
            Some(r) => format!("{}/{}", self.policy.as_str(), r.as_str()),
            None => self.policy.as_str().to_owned(),
        }
    }
}

/// Parses one entry, `<policy>[/<rule>] [until=YYYY-MM-DD] -- <reason>`. Leading and trailing
/// white space is ignored; offsets in errors are into `text` as given.
pub(crate) fn parse_entry(text: &str) -> Result<Entry, ParseError> {
    let lead = text.len() - text.trim_start().len();
    let body = text.trim();
    let err = |offset: usize, message: String| ParseError {
        offset: lead + offset,
        message,
    };
    if body.is_empty() {
        return Err(err(0, "empty suppression entry".to_owned()));
    }
    // The reason follows the first `--` that stands alone (names may contain `--`).
    let Some(sep) = separator(body) else {
        return Err(err(
            0,
            format!("suppression `{body}` has no reason: write `{body} -- <why>`"),
        ));
    };
    let reason = body[sep + 2..].trim();
    if reason.is_empty() {
        return Err(err(
            sep,
            format!("suppression `{body}` has an empty reason after `--`"),
        ));
    }
    let head = &body[..sep];
    let mut words = words(head);
    let Some((at, selector)) = words.next() else {
        return Err(err(0, "suppression entry names no policy".to_owned()));
    };
    let (policy, rule) = match selector.split_once('/') {
        Some((p, r)) => (p, Some(r)),
        None => (selector, None),
    };
    if policy.is_empty() || rule.is_some_and(|r| r.is_empty() || r.contains('/')) {
        return Err(err(
            at,
            format!("`{selector}` is not `<policy>` or `<policy>/<rule>`"),
        ));
    }
    let mut until = None;
    for (at, word) in words {
        let Some(date) = word.strip_prefix("until=") else {
            return Err(err(
                at,
                format!(
                    "unexpected `{word}` in suppression (only `until=YYYY-MM-DD` may follow the name)"
                ),
            ));
        };
        if until.is_some() {
            return Err(err(at, "`until=` given twice".to_owned()));
        }
        until = Some(parse_date(date).ok_or_else(|| {
            err(
                at,
                format!("`{word}`: the date must be a real day written YYYY-MM-DD"),
            )
        })?);
    }
    Ok(Entry {
        policy: Pattern::new(policy),
        rule: rule.map(Pattern::new),
        until,
        reason: reason.to_owned(),
        text: body.to_owned(),
    })
}

/// Splits a list of entries (an annotation's value, a comment's text) at `;` and line breaks:
/// each non-blank piece, trimmed, with its byte offset in `text`.
pub(crate) fn split_entries(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == ';' || c == '\n' {
            out.push((start, &text[start..i]));
            start = i + 1;
        }
    }
    out.push((start, &text[start..]));
    out.into_iter()
        .filter_map(|(at, piece)| {
            let lead = piece.len() - piece.trim_start().len();
            let piece = piece.trim();
            (!piece.is_empty()).then_some((at + lead, piece))
        })
        .collect()
}

/// `YYYY-MM-DD`, four digits, two and two, a day that exists.
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

/// The offset of the first `--` with white space (or the start) before it and white space
/// (or the end) after it.
fn separator(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(found) = s[i..].find("--") {
        let at = i + found;
        let before = at == 0 || b[at - 1].is_ascii_whitespace();
        let after = b.get(at + 2).is_none_or(u8::is_ascii_whitespace);
        if before && after {
            return Some(at);
        }
        i = at + 2;
    }
    None
}

/// White-space separated words with their offsets.
fn words(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.split_ascii_whitespace()
        .map(move |w| (w.as_ptr() as usize - s.as_ptr() as usize, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        parse_date(s).unwrap()
    }

    #[test]
    fn an_entry_has_a_policy_an_optional_rule_and_expiry_and_a_reason() {
        let e = parse_entry(
            "  require-resource-limits until=2027-03-31 -- batch job, limits set by the operator ",
        )
        .unwrap();
        assert_eq!(e.policy.as_str(), "require-resource-limits");
        assert!(e.rule.is_none());
        assert_eq!(e.until, Some(day("2027-03-31")));
        assert_eq!(e.reason, "batch job, limits set by the operator");
        assert!(e.names("require-resource-limits", "validate-resources"));
        assert!(e.names("require-resource-limits", ""));
        assert!(!e.names("require-probes", "validate-resources"));

        let e = parse_entry("disallow-*/auto?en-* -- tooling image").unwrap();
        assert_eq!(e.selector(), "disallow-*/auto?en-*");
        assert!(e.names("disallow-latest-tag", "autogen-require-tag"));
        assert!(!e.names("disallow-latest-tag", "require-tag"));
        assert!(
            !e.names("disallow-latest-tag", ""),
            "a rule entry needs a rule"
        );
        // A name may hold `--`; only a free-standing one starts the reason.
        let e = parse_entry("a--b -- why -- because").unwrap();
        assert_eq!(e.policy.as_str(), "a--b");
        assert_eq!(e.reason, "why -- because");
    }

    #[test]
    fn expiry_is_inclusive_of_the_until_day() {
        let e = parse_entry("p until=2027-03-31 -- r").unwrap();
        assert!(!e.expired(day("2027-03-30")));
        assert!(!e.expired(day("2027-03-31")));
        assert!(e.expired(day("2027-04-01")));
        assert!(!parse_entry("p -- r").unwrap().expired(day("2999-01-01")));
    }

    #[test]
    fn entries_without_a_reason_or_malformed_are_refused_at_their_offset() {
        let refused = |s: &str| parse_entry(s).unwrap_err();
        let e = refused("require-resource-limits");
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("has no reason"), "{}", e.message);
        let e = refused("  p --   ");
        assert_eq!(e.offset, 4);
        assert!(e.message.contains("empty reason"), "{}", e.message);
        assert_eq!(refused("p until=2027-02-30 -- r").offset, 2);
        assert_eq!(refused("p until=27-02-03 -- r").offset, 2);
        let e = refused("p by=me -- r");
        assert_eq!(e.offset, 2);
        assert!(e.message.contains("unexpected `by=me`"), "{}", e.message);
        assert!(
            refused("p until=2027-01-01 until=2027-01-02 -- r")
                .message
                .contains("twice")
        );
        assert!(refused("/rule -- r").message.contains("is not"));
        assert!(refused("p/ -- r").message.contains("is not"));
        assert!(refused("p/r/x -- r").message.contains("is not"));
        assert!(refused(" -- r").message.contains("names no policy"));
        assert!(refused("   ").message.contains("empty"));
    }

    #[test]
    fn lists_split_at_semicolons_and_line_breaks() {
        let text = "a -- x; b/r -- y\n\n c until=2030-01-01 -- z;";
        let pieces = split_entries(text);
        let offsets: Vec<usize> = pieces.iter().map(|p| p.0).collect();
        assert_eq!(offsets, vec![0, 8, 19]);
        let names: Vec<String> = pieces
            .iter()
            .map(|(_, p)| parse_entry(p).unwrap().selector())
            .collect();
        assert_eq!(names, ["a", "b/r", "c"]);
    }

    #[test]
    fn dates_are_real_days_in_one_spelling() {
        assert!(parse_date("2028-02-29").is_some());
        for bad in [
            "2027-02-29",
            "2027-13-01",
            "2027-1-01",
            "20270101",
            "2027-01-01x",
        ] {
            assert!(parse_date(bad).is_none(), "{bad}");
        }
    }
}
