//! Condition blocks (`preconditions`, `deny.conditions`; validate.md §8) as CEL: `any` is a
//! disjunction, `all` a conjunction, a bare list `all`. A condition whose key is a missing
//! path is false, as Kyverno's operators are for a null key.

use crate::yaml::{Node, Value};

use super::Blocked;
use super::cel_text::{and, not, or, paren, quote, wildcard_regex};
use super::jmes::{Tr, Translator};

/// The block as one CEL boolean (`true` for an empty or null block).
pub(crate) fn block(node: &Node, jmes: &Translator) -> Result<String, Blocked> {
    match &node.value {
        Value::Null => Ok("true".to_owned()),
        Value::Seq(items) => all(items, jmes),
        Value::Map(m) => {
            let mut parts = Vec::new();
            if let Some(any) = m.get("any") {
                let items = any.as_seq().unwrap_or(&[]);
                if !items.is_empty() {
                    let each: Vec<String> = items
                        .iter()
                        .map(|c| condition(c, jmes))
                        .collect::<Result<_, _>>()?;
                    parts.push(or(&each));
                }
            }
            if let Some(a) = m.get("all") {
                parts.push(all(a.as_seq().unwrap_or(&[]), jmes)?);
            }
            Ok(and(&parts))
        }
        _ => Err(Blocked::new(
            node.span,
            "a condition block must be a map or a list".to_owned(),
        )),
    }
}

fn all(items: &[Node], jmes: &Translator) -> Result<String, Blocked> {
    let each: Vec<String> = items
        .iter()
        .map(|c| condition(c, jmes))
        .collect::<Result<_, _>>()?;
    Ok(and(&each))
}

/// One `{key, operator, value}`.
pub(crate) fn condition(c: &Node, jmes: &Translator) -> Result<String, Blocked> {
    let (Some(key), Some(op)) = (c.get("key"), c.get("operator").and_then(Node::as_str)) else {
        return Err(Blocked::new(
            c.span,
            "a condition needs `key` and `operator`".to_owned(),
        ));
    };
    let null = Node::null();
    let value = c.get("value").unwrap_or(&null);
    let k = case_folded(jmes, key, value)?;
    let v = case_folded(jmes, value, key)?;
    let op_span = c
        .as_map()
        .and_then(|m| m.entry("operator"))
        .map_or(c.span, |e| e.key_span);
    let lower = op.to_ascii_lowercase();
    let body = match lower.as_str() {
        "equals" | "equal" => equals(&k, value, &v),
        "notequals" | "notequal" => not(&equals(&k, value, &v)),
        "anyin" | "allin" | "anynotin" | "allnotin" | "in" | "notin" => {
            if !v.list {
                return Err(Blocked::new(
                    value.span,
                    format!(
                        "`{op}` with a value that is not a list: Kyverno reads it as a wildcard, a range or a JSON array of strings, which is not translated"
                    ),
                ));
            }
            // A literal value list with wildcard entries: Kyverno's `AnyIn` and friends
            // match each entry and the key (as text) as wildcard patterns both ways; `In` and
            // `NotIn` compare exactly.
            let wildcard_values = !is_template(value)
                && value.as_seq().is_some_and(|s| {
                    s.iter()
                        .any(|n| n.as_str().is_some_and(super::cel_text::has_wildcard))
                });
            if wildcard_values && (lower == "in" || lower == "notin") {
                return Err(Blocked::new(
                    value.span,
                    format!("`{op}` with wildcard entries is not translated"),
                ));
            }
            let literal_key = k.guards.is_empty() && !k.expr.contains('.');
            // Kyverno compares with wildcards on both sides: a key `*` is in any list. Other
            // wildcard keys from the resource are compared literally (docs/MIGRATE.md).
            let member = |x: &str| {
                if wildcard_values {
                    let both = or(&[
                        paren(&wildcard_entry("y", x)),
                        format!("type({x}) == string && ({})", wildcard_entry(x, "y")),
                    ]);
                    format!("{}.exists(y, {both})", paren(&v.folded()))
                } else if literal_key && is_template(value) {
                    // A list from the resource: Kyverno matches each entry as a wildcard
                    // pattern against the key too.
                    let mut each = wildcard_entry("y", x);
                    if let Some(p) = key.as_str().filter(|p| super::cel_text::has_wildcard(p)) {
                        // The key is a pattern for the entries too.
                        each = or(&[
                            paren(&each),
                            format!(
                                "(type(y) == string || type(y) == int || type(y) == bool) && string(y).matches({})",
                                quote(&format!("(?s){}", wildcard_regex(p)))
                            ),
                        ]);
                    }
                    v.exists("y", &each)
                } else if literal_key {
                    v.has_item(x)
                } else {
                    or(&[v.has_item(x), format!("{x} == '*'")])
                }
            };
            let e = &k.expr;
            // Where only the run time knows the key's type, the list branch reads it as
            // `dyn`: Kyverno type-checks the expression, and a key typed as a string
            // (`request.operation`, a literal) cannot be the range of a comprehension.
            let kd = if k.list || literal_key || k.nest.is_some() {
                k.clone()
            } else {
                Tr {
                    expr: format!("dyn({e})"),
                    ..k.clone()
                }
            };
            let on_list = match lower.as_str() {
                "anyin" => kd.exists("k", &member("k")),
                "allin" | "in" => kd.all("k", &member("k")),
                "anynotin" => kd.exists("k", &not(&member("k"))),
                "allnotin" => kd.all("k", &not(&member("k"))),
                _ if k.guards.is_empty() && !e.contains('.') => String::new(),
                _ => {
                    return Err(Blocked::new(
                        op_span,
                        "the deprecated `NotIn` on a key that may be a list is not translated (use AllNotIn or AnyNotIn)".to_owned(),
                    ));
                }
            };
            let m = member(&paren(e));
            let on_scalar = if lower.contains("not") { not(&m) } else { m };
            // A missing (null) value list: Kyverno's `In` family is false whatever the key.
            let on_list = and(&[and(&v.guards), on_list]);
            let on_scalar = and(&[and(&v.guards), on_scalar]);
            if k.list {
                on_list
            } else if literal_key {
                // A literal key.
                on_scalar
            } else {
                // A path whose type is known only at run time: a list key is tested element
                // by element (Kyverno's `AnyIn` and friends take both).
                format!(
                    "type({e}) == list ? {} : {}",
                    paren(&on_list),
                    paren(&on_scalar)
                )
            }
        }
        "greaterthan" | "greaterthanorequals" | "lessthan" | "lessthanorequals" => {
            let cmp = match lower.as_str() {
                "greaterthan" => ">",
                "greaterthanorequals" => ">=",
                "lessthan" => "<",
                _ => "<=",
            };
            // A number, or a string of digits (Kyverno reads it as the same number).
            let numeric = |n: &Node| match &n.value {
                Value::Int(_) | Value::Float(_) => true,
                Value::Str(s) => s.parse::<i64>().is_ok(),
                _ => false,
            };
            let number = |n: &Node| matches!(n.value, Value::Int(_) | Value::Float(_));
            // A digit string counts only against a count (`length()`): any other key could
            // be a quantity or a duration, which Kyverno would compare as such.
            let counted = k.expr.starts_with("size(") || k.expr.ends_with(".sum()");
            // A literal string that Go's float parser does not read, as a quantity and as a
            // Go duration: Kyverno's comparison of a key with it is translated when it is
            // exactly one of the two.
            let literal = match &value.value {
                Value::Str(t)
                    if !is_template(value) && crate::pattern::go_parse_float(t).is_none() =>
                {
                    let quantity = crate::base::quantity::nanos(t).is_some();
                    let duration = crate::base::duration::parse(t).is_some();
                    Some((t, quantity, duration)).filter(|_| quantity != duration && !k.list)
                }
                _ => None,
            };
            let e = &k.expr;
            if let Some((q, true, _)) = literal {
                // `1Gi`: Kyverno compares only a string key that parses as a quantity
                // (`Quantity.Cmp`); any other key meets no operator.
                let body = format!(
                    "type({e}) == string && isQuantity({e}) && quantity({e}).compareTo(quantity({})) {cmp} 0",
                    quote(q)
                );
                return Ok(and(&[and(&k.guards), body]));
            }
            if let Some((d, _, true)) = literal {
                // `8h`, `90s`: Kyverno reads a string key as a duration, else as a float of
                // seconds (truncated), and a number key as seconds; any other key meets no
                // operator.
                let go_duration =
                    r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$";
                let go_float = r"^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$";
                let seconds = format!("duration(string(int(double({e}))) + 's')");
                let body = format!(
                    "(type({e}) == string ? ({e}.matches({}) ? duration({e}) {cmp} duration({d}) : {e}.matches({}) && {seconds} {cmp} duration({d})) : (type({e}) == int || type({e}) == double) && {seconds} {cmp} duration({d}))",
                    quote(go_duration),
                    quote(go_float),
                    d = quote(d),
                );
                return Ok(and(&[and(&k.guards), body]));
            }
            if !(number(value) || number(key) || (counted && numeric(value))) {
                return Err(Blocked::new(
                    op_span,
                    format!(
                        "`{op}` on values that Kyverno may read as quantities, durations or numbers (a digit string, `5m`, a template) is not translated"
                    ),
                ));
            }
            format!("double({}) {cmp} double({})", k.expr, v.folded())
        }
        _ => {
            return Err(Blocked::new(
                op_span,
                format!("the operator `{op}` is not translated"),
            ));
        }
    };
    Ok(and(&[and(&k.guards), body]))
}

/// `node` translated; `to_upper`/`to_lower` allowed in it where it is one `{{ }}` of
/// the shape [`super::jmes::case_fold_shape`] and `other` a literal of ASCII scalars
/// (Kyverno's Unicode case mapping and CEL's ASCII one then give the same outcome).
fn case_folded(jmes: &Translator, node: &Node, other: &Node) -> Result<Tr, Blocked> {
    let ascii_literal = |n: &Node| {
        let ok = |j: &serde_json::Value| match j {
            serde_json::Value::String(s) => s.is_ascii(),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => true,
            _ => false,
        };
        !is_template(n)
            && match n.to_json() {
                serde_json::Value::Array(a) => a.iter().all(ok),
                j => ok(&j),
            }
    };
    let fold = match &node.value {
        Value::Str(s) => {
            let t = s.trim();
            t.starts_with("{{")
                && t.ends_with("}}")
                && t.matches("{{").count() == 1
                && super::jmes::case_fold_shape(&t[2..t.len() - 2])
                && ascii_literal(other)
        }
        _ => false,
    };
    jmes.case_fold.set(fold);
    let r = jmes.operand(node);
    jmes.case_fold.set(false);
    r
}

fn is_template(n: &Node) -> bool {
    matches!(&n.value, Value::Str(s) if s.contains("{{"))
}

/// Kyverno's membership of a literal key (no wildcards) `key` in a list from the resource,
/// for one entry `y`: `wildcard.Match(fmt.Sprint(y), key)` — a string entry is a pattern
/// (`*` any text, `?` one character, written as a regex at run time), an integer or boolean
/// is compared as its text.
fn wildcard_entry(y: &str, key: &str) -> String {
    // `string(y)` (the identity where it runs, under `type(y) == string`) type-checks whatever
    // the static type of the list's entries is: Kyverno's checker refuses `replace` on a bool.
    let mut rx = format!("string({y})");
    for c in ['\\', '.', '+', '(', ')', '[', ']', '{', '}', '|', '^', '$'] {
        rx = format!(
            "{rx}.replace({}, {})",
            quote(&c.to_string()),
            quote(&format!("\\{c}"))
        );
    }
    rx = format!("{rx}.replace('*', '.*').replace('?', '.')");
    format!(
        "type({y}) == string ? string({key}).matches('(?s)^' + {rx} + '$') : (type({y}) == int || type({y}) == bool ? string({y}) == string({key}) : {y} == {key})"
    )
}

/// `Equals`: a string value with wildcards matches the key as a pattern.
fn equals(k: &Tr, value: &Node, v: &Tr) -> String {
    match &value.value {
        Value::Str(s) if !s.contains("{{") && super::cel_text::has_wildcard(s) => {
            format!("string({}).matches({})", k.expr, quote(&wildcard_regex(s)))
        }
        _ => format!("{} == {}", paren(&k.expr), paren(&v.folded())),
    }
}
