//! Scalar matching: one resource value against one scalar pattern (validate.md §5,
//! `kyverno/kyverno:pkg/engine/pattern/pattern.go` `Validate`, `pkg/engine/operator`).
//!
//! String patterns are a small expression language: `|` alternatives of `&` conjunctions of
//! terms, each an optional operator (`>=`, `<=`, `>`, `<`, `!`) or a range (`a-b`, `a!-b`),
//! compared as a Go duration, else a Kubernetes quantity, else a wildcard string.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

// Go `time.ParseDuration`, shared with the JMESPath duration functions.
use crate::base::duration::parse as parse_go_duration;
use crate::base::quantity::nanos as parse_quantity;
use crate::number::{format_go_e, format_go_f6};
use crate::yaml::Value;

/// A term operator (`kyverno/kyverno:pkg/engine/operator/operator.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Equal,
    NotEqual,
    More,
    Less,
    MoreEqual,
    LessEqual,
    InRange,
    NotInRange,
}

impl Op {
    /// The operator's text, whose length Kyverno strips from the term.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Op::Equal => "",
            Op::NotEqual => "!",
            Op::More => ">",
            Op::Less => "<",
            Op::MoreEqual => ">=",
            Op::LessEqual => "<=",
            Op::InRange => "-",
            Op::NotInRange => "!-",
        }
    }
}

// Go's `\d` is ASCII-only; Rust's is Unicode, hence `[0-9]`. The `|` in the sign class is
// literal (a quirk of the upstream regex, kept).
const ENDPOINT: &str = r"([-|+]?[0-9]+(?:\.[0-9]+)?[A-Za-z]*)";

static IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^{ENDPOINT}-{ENDPOINT}$")).ok());
static NOT_IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^{ENDPOINT}!-{ENDPOINT}$")).ok());

/// Splits a range term into its endpoints.
fn range_endpoints<'a>(re: &LazyLock<Option<Regex>>, term: &'a str) -> Option<(&'a str, &'a str)> {
    // Every range starts with a sign or a digit; skip the regex for everything else.
    let first = *term.as_bytes().first()?;
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'|')) {
        return None;
    }
    let caps = re.as_ref()?.captures(term)?;
    Some((caps.get(1)?.as_str(), caps.get(2)?.as_str()))
}

/// `GetOperatorFromStringPattern`.
pub(crate) fn operator_of(term: &str) -> Op {
    if term.len() < 2 {
        return Op::Equal;
    }
    if term.starts_with(">=") {
        Op::MoreEqual
    } else if term.starts_with("<=") {
        Op::LessEqual
    } else if term.starts_with('>') {
        Op::More
    } else if term.starts_with('<') {
        Op::Less
    } else if term.starts_with('!') {
        Op::NotEqual
    } else if range_endpoints(&NOT_IN_RANGE, term).is_some() {
        Op::NotInRange
    } else if range_endpoints(&IN_RANGE, term).is_some() {
        Op::InRange
    } else {
        Op::Equal
    }
}

/// Kyverno wildcard matching (`ext/wildcard`, go-wildcard v1): `*` any run, `?` exactly one
/// character, everything else literal, case-sensitive.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    crate::base::wildcard::matches(pattern, text)
}

/// Whether a string contains a Kyverno wildcard (`ext/wildcard.ContainsWildcard`).
pub(crate) fn contains_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Go's `int64(f)` on amd64: out-of-range values (and NaN) become `i64::MIN`.
fn go_f64_to_i64(f: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// Go `strconv.ParseFloat(s, 64)` for the decimal forms; out-of-range is an error in Go.
pub(crate) fn go_parse_float(s: &str) -> Option<f64> {
    let f: f64 = s.parse().ok()?;
    if f.is_infinite() {
        let lower = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
        if lower != "inf" && lower != "infinity" {
            return None;
        }
    }
    Some(f)
}

/// `pattern.Validate`: does `value` satisfy the scalar `pattern`? A missing resource value is
/// passed as `Value::Null`, as Go sees `nil` for both.
pub(crate) fn scalar_match(value: &Value, pattern: &Value) -> bool {
    match pattern {
        Value::Bool(p) => matches!(value, Value::Bool(v) if v == p),
        Value::Int(p) => match value {
            Value::Int(v) => v == p,
            Value::Float(v) => *v == v.trunc() && go_f64_to_i64(*v) == *p,
            Value::Str(s) => s.parse::<i64>().is_ok_and(|v| v == *p),
            _ => false,
        },
        Value::Float(p) => match value {
            Value::Int(v) => *p == p.trunc() && go_f64_to_i64(*p) == *v,
            Value::Float(v) => v == p,
            Value::Str(s) => go_parse_float(s).is_some_and(|v| v == *p),
            _ => false,
        },
        Value::Null => match value {
            Value::Float(v) => *v == 0.0,
            Value::Int(v) => *v == 0,
            Value::Str(s) => s.is_empty(),
            Value::Bool(b) => !b,
            Value::Null => true,
            Value::Map(_) | Value::Seq(_) => false,
        },
        // Only existence of a map is checked (unreachable from the walk, kept for parity).
        Value::Map(_) => matches!(value, Value::Map(_)),
        Value::Seq(_) => false,
        Value::Str(p) => string_pattern_match(value, p),
    }
}

/// `validateStringPatterns`, parsing the pattern as it goes (a condition's values, a
/// substituted pattern).
fn string_pattern_match(value: &Value, pattern: &str) -> bool {
    // The whole pattern equal to a string value matches before any parsing (§5.2).
    if matches!(value, Value::Str(s) if s == pattern) {
        return true;
    }
    pattern.split('|').any(|alt| {
        alt.trim_matches(' ')
            .split('&')
            .all(|t| Term::parse(t.trim_matches(' ')).matches(value))
    })
}

/// A string pattern parsed once: its `|` alternatives of `&` terms, each term's operator and
/// operands, and each operand read as a duration and as a quantity. perf: a rule's pattern
/// scalars are parsed at load ([`super::Plan`]), not for every value they meet
/// (docs/PERFORMANCE.md).
#[derive(Clone, Debug)]
pub(crate) struct StringPattern {
    text: String,
    alternatives: Vec<Vec<Term<String>>>,
}

impl StringPattern {
    pub(crate) fn new(pattern: &str) -> Self {
        let alternatives = pattern
            .split('|')
            .map(|alt| {
                alt.trim_matches(' ')
                    .split('&')
                    .map(|t| Term::parse(t.trim_matches(' ')).to_owned())
                    .collect()
            })
            .collect();
        StringPattern {
            text: pattern.to_owned(),
            alternatives,
        }
    }

    /// [`string_pattern_match`] of the parsed pattern.
    pub(crate) fn matches(&self, value: &Value) -> bool {
        if matches!(value, Value::Str(s) if *s == self.text) {
            return true;
        }
        self.alternatives
            .iter()
            .any(|terms| terms.iter().all(|t| t.matches(value)))
    }
}

/// One term of a string pattern; `S` holds the operand texts.
#[derive(Clone, Debug)]
enum Term<S> {
    /// An operator and its operand.
    Compare(Op, Operand<S>),
    /// `lo-hi` (`inside`) or `lo!-hi`.
    Range {
        lo: Operand<S>,
        hi: Operand<S>,
        inside: bool,
    },
    /// A range whose endpoints do not parse: matches nothing.
    Never,
}

/// One side of a comparison, read every way Kyverno tries it.
#[derive(Clone, Debug)]
struct Operand<S> {
    text: S,
    duration: Option<i64>,
    quantity: Option<i128>,
}

impl<'a> Term<&'a str> {
    fn parse(term: &'a str) -> Self {
        let range = |re, inside| match range_endpoints(re, term) {
            Some((lo, hi)) => Term::Range {
                lo: Operand::new(lo.trim()),
                hi: Operand::new(hi.trim()),
                inside,
            },
            None => Term::Never,
        };
        match operator_of(term) {
            Op::InRange => range(&IN_RANGE, true),
            Op::NotInRange => range(&NOT_IN_RANGE, false),
            op => Term::Compare(op, Operand::new(term[op.text().len()..].trim())),
        }
    }

    fn to_owned(&self) -> Term<String> {
        match self {
            Term::Compare(op, o) => Term::Compare(*op, o.to_owned()),
            Term::Range { lo, hi, inside } => Term::Range {
                lo: lo.to_owned(),
                hi: hi.to_owned(),
                inside: *inside,
            },
            Term::Never => Term::Never,
        }
    }
}

impl<S: AsRef<str>> Term<S> {
    /// `validateStringPattern`.
    fn matches(&self, value: &Value) -> bool {
        match self {
            Term::Compare(op, operand) => operand.compare(value, *op),
            Term::Range {
                lo,
                hi,
                inside: true,
            } => lo.compare(value, Op::MoreEqual) && hi.compare(value, Op::LessEqual),
            Term::Range {
                lo,
                hi,
                inside: false,
            } => lo.compare(value, Op::Less) || hi.compare(value, Op::More),
            Term::Never => false,
        }
    }
}

impl<'a> Operand<&'a str> {
    fn new(text: &'a str) -> Self {
        Operand {
            text,
            duration: parse_go_duration(text),
            quantity: parse_quantity(text),
        }
    }

    fn to_owned(&self) -> Operand<String> {
        Operand {
            text: self.text.to_owned(),
            duration: self.duration,
            quantity: self.quantity,
        }
    }
}

impl<S: AsRef<str>> Operand<S> {
    /// `validateString`: duration, then quantity, then wildcard string comparison.
    fn compare(&self, value: &Value, op: Op) -> bool {
        if let Some(p) = self.duration
            && let Some(v) = number_to_string(value).and_then(|s| parse_go_duration(&s))
        {
            return ordered(v.cmp(&p), op);
        }
        if let Some(p) = self.quantity
            && let Some(v) = number_to_string(value).and_then(|s| parse_quantity(&s))
        {
            return ordered(v.cmp(&p), op);
        }
        compare_string(value, self.text.as_ref(), op)
    }
}

fn ordered(ord: std::cmp::Ordering, op: Op) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    match op {
        Op::Equal => ord == Equal,
        Op::NotEqual => ord != Equal,
        Op::More => ord == Greater,
        Op::Less => ord == Less,
        Op::MoreEqual => ord != Less,
        Op::LessEqual => ord != Greater,
        Op::InRange | Op::NotInRange => false,
    }
}

/// `convertNumberToString`: the text a value is parsed from as a duration or quantity. A
/// missing value is `"0"` (validate.md §5.2 "missing fields are numerically zero").
fn number_to_string(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Null => Some(Cow::Borrowed("0")),
        Value::Str(s) => Some(Cow::Borrowed(s)),
        Value::Float(f) => Some(Cow::Owned(format_go_f6(*f))),
        Value::Int(i) => Some(Cow::Owned(i.to_string())),
        _ => None,
    }
}

/// `compareString`: only equality and `!`; floats print as Go `%E` (`8E+01`, validate.md §5.6).
fn compare_string(value: &Value, operand: &str, op: Op) -> bool {
    if !matches!(op, Op::Equal | Op::NotEqual) {
        return false;
    }
    let text: Cow<'_, str> = match value {
        Value::Float(f) => Cow::Owned(format_go_e(*f)),
        Value::Int(i) => Cow::Owned(i.to_string()),
        Value::Str(s) => Cow::Borrowed(s),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Null | Value::Map(_) | Value::Seq(_) => return false,
    };
    let matched = wildcard_match(operand, &text);
    if op == Op::NotEqual {
        !matched
    } else {
        matched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::Str(v.to_owned())
    }

    fn m(value: Value, pattern: &str) -> bool {
        scalar_match(&value, &s(pattern))
    }

    #[test]
    fn operators() {
        assert_eq!(operator_of(">=1"), Op::MoreEqual);
        assert_eq!(operator_of("<=1"), Op::LessEqual);
        assert_eq!(operator_of(">1"), Op::More);
        assert_eq!(operator_of("<1"), Op::Less);
        assert_eq!(operator_of("!1"), Op::NotEqual);
        assert_eq!(operator_of("!"), Op::Equal);
        assert_eq!(operator_of(">"), Op::Equal);
        assert_eq!(operator_of("1-2"), Op::InRange);
        assert_eq!(operator_of("-10--8"), Op::InRange);
        assert_eq!(operator_of("1!-2"), Op::NotInRange);
        assert_eq!(operator_of("!-5-5"), Op::NotEqual);
        assert_eq!(operator_of("128Mi-512Mi"), Op::InRange);
        assert_eq!(operator_of("1٣-2"), Op::Equal, "Go's \\d is ASCII only");
        assert_eq!(operator_of("a-b"), Op::Equal);
    }

    #[test]
    fn non_string_patterns() {
        assert!(scalar_match(&Value::Bool(true), &Value::Bool(true)));
        assert!(!scalar_match(&s("true"), &Value::Bool(true)));
        assert!(scalar_match(&Value::Float(8.0), &Value::Int(8)));
        assert!(!scalar_match(&Value::Float(8.1), &Value::Int(8)));
        assert!(scalar_match(&s("8"), &Value::Int(8)));
        assert!(!scalar_match(&s("8.0"), &Value::Int(8)));
        assert!(!scalar_match(&s(" 8"), &Value::Int(8)));
        assert!(scalar_match(&Value::Int(8), &Value::Float(8.0)));
        assert!(!scalar_match(&Value::Int(8), &Value::Float(8.1)));
        assert!(scalar_match(&s("8.5"), &Value::Float(8.5)));
        assert!(!scalar_match(&s("1e999"), &Value::Float(f64::INFINITY)));
        assert!(scalar_match(&s("Inf"), &Value::Float(f64::INFINITY)));
        for v in [
            Value::Null,
            Value::Int(0),
            Value::Float(0.0),
            s(""),
            Value::Bool(false),
        ] {
            assert!(scalar_match(&v, &Value::Null), "{v:?}");
        }
        for v in [
            s("a"),
            Value::Float(1.0),
            Value::Bool(true),
            Value::Seq(vec![]),
        ] {
            assert!(!scalar_match(&v, &Value::Null), "{v:?}");
        }
    }

    #[test]
    fn string_patterns() {
        assert!(m(s("a|b"), "a|b"));
        assert!(m(s("a"), "a|b"));
        assert!(m(s("b"), "a | b"));
        assert!(m(Value::Float(10.0), ">1 & <5 | 10"));
        assert!(!m(Value::Float(7.0), ">1 & <5 | 10"));
        assert!(m(s("10-20"), "10-20"));
        assert!(!m(s("2020-02"), "2020-01"));
        assert!(m(Value::Float(-9.0), "-10--8"));
        assert!(!m(Value::Float(8080.0), "1024!-65535"));
        assert!(m(Value::Float(80.0), "1024!-65535"));
        assert!(m(s("3"), ">= 3"));
        assert!(m(s("10"), ">= 3"), "numeric, not lexical");
        assert!(m(Value::Bool(true), "true"));
        assert!(!m(Value::Float(80.0), "8?"));
        assert!(m(Value::Int(80), "8?"));
        assert!(m(Value::Float(8080.0), "8*"));
        assert!(!m(Value::Float(8080.0), "80*"));
        assert!(m(Value::Float(80.0), "80"));
        assert!(!m(Value::Float(80.0), "!80"));
        assert!(!m(s("1.4.1"), ">1.4.0"));
        assert!(m(s("é"), "?"));
        assert!(!m(s("ab"), "?"));
        assert!(!m(s("my--bucket"), "my-?-bucket"));
        assert!(!m(s(""), "?*"));
        assert!(m(s(""), "*"));
        assert!(m(s(""), ""));
        assert!(!m(Value::Null, ""));
    }

    #[test]
    fn durations_and_quantities() {
        assert!(m(s("2048Mi"), "<=2Gi"));
        assert!(!m(s("3Gi"), "<=2Gi"));
        assert!(m(Value::Null, "<=2Gi"));
        assert!(!m(Value::Null, ">0"));
        assert!(m(Value::Null, "<1h"));
        assert!(m(Value::Null, "0-10"));
        assert!(m(Value::Null, ">=0"));
        assert!(m(Value::Null, "0"));
        assert!(!m(Value::Null, "!0"));
        assert!(!m(Value::Null, "1-10"));
        assert!(!m(Value::Null, "!foo"));
        assert!(!m(s("1"), "<=500m"));
        assert!(m(Value::Float(0.25), "<=500m"));
        assert!(m(s("90m"), ">=1h30m"));
        assert!(m(s("1024Mi"), "1Gi"));
        assert!(m(s("300s"), "5m"));
        assert!(m(s("0.1"), "100m"));
        assert!(m(s("500m"), "<1000m"), "minutes, same ordering");
        assert!(m(s("1m"), "<1h"));
    }
}
