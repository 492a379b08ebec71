//! Kubernetes' CEL `format` library (`k8s.io/apiserver/pkg/cel/library/format.go`):
//! `format.dns1123Label()` and the other named formats, `format.named(name)` (an optional
//! format) and `f.validate(s)`: an empty optional when `s` conforms, else an optional list of
//! the reasons, worded as `k8s.io/apimachinery` validation words them.

use std::sync::{Arc, LazyLock};

use cel::extractors::This;
use cel::objects::{Opaque, OptionalValue};
use cel::{Context, ExecutionError, Value};
use regex::Regex;

/// One named format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format(&'static str);

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

const LABEL_1123: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_1035: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const KEY: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// The patterns are constants that compile; `None` would match nothing.
fn anchored(re: &str) -> Option<Regex> {
    Regex::new(&format!("^(?:{re})$")).ok()
}

fn full_match(re: &Option<Regex>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

static RE_1123: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(LABEL_1123));
static RE_SUB: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(&subdomain_fmt()));
static RE_1035: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(LABEL_1035));
static RE_KEY: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(KEY));

fn subdomain_fmt() -> String {
    format!("{LABEL_1123}(\\.{LABEL_1123})*")
}

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let eg: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        eg.join(" or ")
    )
}

/// `maskTrailingDash` as apimachinery has it (it drops the last two bytes).
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') && s.is_char_boundary(s.len() - 2) {
        format!("{}a", &s[..s.len() - 2])
    } else {
        s.to_owned()
    }
}

pub(super) fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len(63));
    }
    if !full_match(&RE_1123, s) {
        if full_match(&RE_SUB, s) {
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                LABEL_1123,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// The length check and one pattern's check, as apimachinery's validators make them.
fn length_and_pattern(
    s: &str,
    max: usize,
    re: &Option<Regex>,
    (msg, fmt, examples): (&str, &str, &[&str]),
) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > max {
        errs.push(max_len(max));
    }
    if !full_match(re, s) {
        errs.push(regex_error(msg, fmt, examples));
    }
    errs
}

pub(super) fn dns1123_subdomain(s: &str) -> Vec<String> {
    length_and_pattern(
        s,
        253,
        &RE_SUB,
        (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            &subdomain_fmt(),
            &["example.com"],
        ),
    )
}

fn dns1035_label(s: &str) -> Vec<String> {
    length_and_pattern(
        s,
        63,
        &RE_1035,
        (
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            LABEL_1035,
            &["my-name", "abc-123"],
        ),
    )
}

fn qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(KEY_MSG, KEY, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63)));
    }
    if !full_match(&RE_KEY, name) {
        errs.push(format!(
            "name part {}",
            regex_error(KEY_MSG, KEY, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

fn label_value(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    length_and_pattern(
        s,
        63,
        &RE_KEY,
        (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            &format!("({KEY})?"),
            &["MyValue", "my_value", "12345"],
        ),
    )
}

// The CRD formats, as kube-openapi's strfmt checks them (`pkg/validation/strfmt`).
static RE_UUID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    anchored("(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
});
static RE_BASE64: LazyLock<Option<Regex>> = LazyLock::new(|| {
    anchored("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
});
// The clock part of a date-time, lowercased: `.` is any character, as in strfmt's pattern.
static RE_CLOCK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    anchored("([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
});

/// strfmt's `IsDate`: Go's `time.Parse("2006-01-02", s)` succeeds — four digits of year, two
/// of month (1–12) and two of day (a day the month has), nothing else.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) {
        return false;
    }
    if !digits(8..10) {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: lowercased and split at each `t`, the first part a date and the
/// second a clock time whose hours, minutes and seconds compare (as text) at most 23, 59, 59.
fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(clock)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(m) = RE_CLOCK.as_ref().and_then(|r| r.captures(clock)) else {
        return false;
    };
    let part = |i: usize| m.get(i).map_or("", |g| g.as_str());
    part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
}

/// The reasons `s` does not conform to `name` (none: it does).
fn validate(name: &str, s: &str) -> Vec<String> {
    match name {
        "dns1123Label" => dns1123_label(s),
        "dns1123Subdomain" => dns1123_subdomain(s),
        "dns1035Label" => dns1035_label(s),
        "qualifiedName" => qualified_name(s),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(s)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&mask_trailing_dash(s)),
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(s)),
        "labelValue" => label_value(s),
        "uri" => match super::k8s_types::parse_request_uri(s) {
            Ok(()) => Vec::new(),
            Err(e) => vec![e],
        },
        "uuid" if !full_match(&RE_UUID, s) => vec!["does not match the UUID format".to_owned()],
        "byte" if !full_match(&RE_BASE64, s) => vec!["invalid base64".to_owned()],
        "date" if !is_date(s) => vec!["invalid date".to_owned()],
        "datetime" if !is_datetime(s) => vec!["invalid datetime".to_owned()],
        _ => Vec::new(),
    }
}

fn optional(v: Option<Value>) -> Value {
    Value::Opaque(Arc::new(match v {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    for name in NAMES {
        let name: &'static str = name;
        let _ = ctx.add_function(format!("format.{name}").as_str(), move || {
            Value::Opaque(Arc::new(Format(name)))
        });
    }
    let _ = ctx.add_function("format.named", |n: Arc<String>| {
        optional(
            NAMES
                .iter()
                .find(|x| **x == n.as_str())
                .map(|x| Value::Opaque(Arc::new(Format(x)))),
        )
    });
    let _ = ctx.add_function(
        "validate",
        |This(f): This<Value>, s: Arc<String>| -> Result<Value, ExecutionError> {
            let Value::Opaque(o) = &f else {
                return Err(ExecutionError::no_such_member_overload(
                    "validate",
                    vec![f.type_of().to_string(), "string".to_owned()],
                ));
            };
            let Some(Format(name)) = o.downcast_ref::<Format>() else {
                return Err(ExecutionError::no_such_member_overload(
                    "validate",
                    vec![o.runtime_type_name().to_owned(), "string".to_owned()],
                ));
            };
            let errs = validate(name, &s);
            Ok(optional((!errs.is_empty()).then(|| {
                Value::List(Arc::new(errs.into_iter().map(Value::from).collect()))
            })))
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr;
    use cel::Value;

    fn t(expr: &str) {
        assert_eq!(eval_expr(expr), Ok(Value::Bool(true)), "{expr}");
    }

    #[test]
    fn named_formats_validate() {
        t("!format.dns1123Label().validate('abc').hasValue()");
        t("format.dns1123Label().validate('a.b').value() == ['must not contain dots']");
        t("format.dns1123Subdomain().validate('a.b').hasValue() == false");
        t("format.dns1035Label().validate('1abc').hasValue()");
        t("!format.dns1123LabelPrefix().validate('abc-').hasValue()");
        t("!format.qualifiedName().validate('example.com/MyName').hasValue()");
        t("format.qualifiedName().validate('a/b/c').hasValue()");
        t(
            "!format.labelValue().validate('').hasValue() && format.labelValue().validate('-a').hasValue()",
        );
        t(
            "!format.uri().validate('https://a.b').hasValue() && format.uri().validate('a b').hasValue()",
        );
        t("format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()");
        t("format.named('dns1123Label').value().validate('ABC').hasValue()");
    }

    #[test]
    fn crd_formats_validate_as_strfmt() {
        t("!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()");
        t("!format.uuid().validate('123E4567E89B12D3A456426614174000').hasValue()");
        t("format.uuid().validate('123e4567').value() == ['does not match the UUID format']");
        t("!format.byte().validate('aGVsbG8=').hasValue()");
        t("format.byte().validate('ZWxpemFiZXRocG9zZXk').value() == ['invalid base64']");
        t("format.byte().validate('').hasValue()");
        t("!format.date().validate('2024-02-29').hasValue()");
        t("format.date().validate('2023-02-29').value() == ['invalid date']");
        t("format.date().validate('2021-1-01').hasValue()");
        t("format.date().validate('2021-13-01').hasValue()");
        t("!format.datetime().validate('2021-01-01T00:00:00Z').hasValue()");
        t("!format.datetime().validate('2021-01-01t23:59:59.123+02:00').hasValue()");
        t("format.datetime().validate('2021-01-01T24:00:00Z').value() == ['invalid datetime']");
        t("format.datetime().validate('2021-01-01T10:00:00').hasValue()");
        t("format.datetime().validate('2021-01-01').hasValue()");
        t("format.named('datetime').hasValue()");
    }

    #[test]
    fn messages_are_apimachinerys() {
        assert_eq!(
            eval_expr("format.dns1123Label().validate('Abc').value()[0]"),
            Ok(Value::from(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ))
        );
        assert!(eval_expr("format.dns1123Label().validate(1)").is_err());
    }
}
