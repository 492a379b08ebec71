//! A validate pattern (validate.md §3–7) as one CEL boolean over the value it is matched
//! against.
//!
//! A pattern walk has three outcomes — pass, fail, and skip (a conditional or global anchor
//! did not hold). A CEL validation has two, so each pattern has two translations: `strict`,
//! true when the walk passes, and `lenient`, true when it passes or skips. A conditional
//! anchor's value must hold strictly (any failure inside it is a skip); a policy's validation
//! is the lenient form, so where Kyverno skipped the converted policy passes (the header of
//! the output says so when a pattern has such anchors). Where the translation would differ
//! from the walk, the construct is refused with the reason instead.

use crate::pattern::{AnchorKind, Op, operator_of, parse_anchor, scalar_match};
use crate::yaml::{Map, Node, Value};

use super::Blocked;
use super::cel_text::{and, has, not, or, quote, select, wildcard_test};
use super::jmes::Translator;

/// Whether a translation must be strict (pass only) or lenient (pass or skip).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Strict,
    Lenient,
}

/// Translates patterns, naming iteration variables uniquely.
pub(crate) struct Patterns<'t> {
    pub(crate) jmes: &'t Translator,
    next_var: usize,
}

impl<'t> Patterns<'t> {
    pub(crate) fn new(jmes: &'t Translator) -> Self {
        Patterns { jmes, next_var: 0 }
    }

    fn fresh(&mut self, hint: &str) -> String {
        self.next_var += 1;
        let stem: String = hint
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .take(12)
            .collect();
        let stem = if stem.is_empty() {
            "e".to_owned()
        } else {
            stem
        };
        format!("{stem}{}", self.next_var)
    }

    /// `pattern` against the CEL value `v`.
    pub(crate) fn translate(
        &mut self,
        pattern: &Node,
        v: &str,
        mode: Mode,
    ) -> Result<String, Blocked> {
        match &pattern.value {
            Value::Map(m) => self.map(m, pattern, v, mode),
            Value::Seq(items) => self.seq(items, pattern, v, mode),
            _ => scalar(pattern, v, self.jmes),
        }
    }

    fn map(&mut self, m: &Map, at: &Node, v: &str, mode: Mode) -> Result<String, Blocked> {
        let mut conditions = Vec::new();
        let mut rest = Vec::new();
        for entry in m.entries() {
            let key = entry.key.as_str();
            let pv = &entry.value;
            let in_metadata =
                v.ends_with(".metadata.labels") || v.ends_with(".metadata.annotations");
            let inner_key = parse_anchor(key).map_or(key, |a| a.key);
            if in_metadata && super::cel_text::has_wildcard(inner_key) {
                let kind = parse_anchor(key).map(|a| a.kind);
                let e = self.metadata_wildcard(kind, inner_key, pv, v, entry.key_span)?;
                match kind {
                    Some(AnchorKind::Condition | AnchorKind::Global) => conditions.push(e),
                    _ => rest.push(e),
                }
                continue;
            }
            let Some(anchor) = parse_anchor(key) else {
                rest.push(self.plain(key, pv, v, mode)?);
                continue;
            };
            let k = anchor.key;
            let child = select(v, k);
            let present = has(v, k);
            match anchor.kind {
                AnchorKind::Condition => {
                    let inner = self.translate(pv, &child, Mode::Strict)?;
                    conditions.push(and(&[present, inner]));
                }
                AnchorKind::Global => {
                    let inner = self.translate(pv, &child, Mode::Strict)?;
                    conditions.push(or(&[not(&present), inner]));
                }
                AnchorKind::Equality => {
                    let inner = self.translate(pv, &child, mode)?;
                    rest.push(or(&[not(&present), inner]));
                }
                AnchorKind::Negation => rest.push(not(&present)),
                AnchorKind::Existence => {
                    let Value::Seq(items) = &pv.value else {
                        return Err(Blocked::new(
                            pv.span,
                            "an existence anchor `^()` needs a list of patterns".to_owned(),
                        ));
                    };
                    let mut each = Vec::new();
                    for item in items {
                        if !matches!(item.value, Value::Map(_)) {
                            return Err(Blocked::new(
                                item.span,
                                "an existence anchor's patterns must be maps".to_owned(),
                            ));
                        }
                        let var = self.fresh(k);
                        let inner = self.translate(item, &var, Mode::Strict)?;
                        each.push(format!("{child}.exists({var}, {inner})"));
                    }
                    rest.push(or(&[not(&present), and(&each)]));
                }
                AnchorKind::AddIfNotPresent => {
                    return Err(Blocked::new(
                        entry.key_span,
                        "the add-if-not-present anchor `+()` belongs to mutate patterns; Kyverno rejects it in validate".to_owned(),
                    ));
                }
            }
        }
        let _ = at;
        let body = and(&rest);
        Ok(match (mode, conditions.is_empty()) {
            (_, true) => body,
            (Mode::Strict, false) => {
                conditions.push(body);
                and(&conditions)
            }
            (Mode::Lenient, false) => or(&[not(&and(&conditions)), body]),
        })
    }

    /// A wildcard key of a label or annotation map (§3.5): Kyverno checks the resource key
    /// it matches (one of them, when several do), else the key as written.
    fn metadata_wildcard(
        &mut self,
        kind: Option<AnchorKind>,
        key: &str,
        pv: &Node,
        v: &str,
        span: crate::source::Span,
    ) -> Result<String, Blocked> {
        let re = quote(&super::cel_text::wildcard_regex(key));
        let matches = format!("k.matches({re})");
        let some = format!("{v}.exists(k, {matches})");
        let Value::Str(_) = pv.value else {
            return Err(Blocked::new(
                pv.span,
                "a wildcard label or annotation key with a non-string value is dropped by Kyverno"
                    .to_owned(),
            ));
        };
        let each = scalar(pv, &format!("{v}[k]"), self.jmes)?;
        let all = format!("{v}.all(k, {})", or(&[not(&matches), each]));
        let guarded = |e: String| and(&[format!("has({})", v), e]);
        Ok(match kind {
            None => {
                let missing = scalar_match(&Value::Null, &pv.value);
                if missing {
                    or(&[not(&format!("has({v})")), all])
                } else {
                    guarded(and(&[some, all]))
                }
            }
            Some(AnchorKind::Negation) => or(&[not(&format!("has({v})")), not(&some)]),
            Some(AnchorKind::Equality) => or(&[not(&format!("has({v})")), all]),
            Some(AnchorKind::Condition) => guarded(and(&[some, all])),
            Some(_) => {
                return Err(Blocked::new(
                    span,
                    format!("the anchor on the wildcard key `{key}` is not translated"),
                ));
            }
        })
    }

    /// A plain key: a missing key is matched as `null` (statically, with Kyverno's scalar
    /// rules), `"*"` asks only for presence.
    fn plain(&mut self, key: &str, pv: &Node, v: &str, mode: Mode) -> Result<String, Blocked> {
        let child = select(v, key);
        // `object.metadata` is always there, but autogen rewrites it to a pod template's
        // metadata, which may be missing: the test stays.
        let present = has(v, key);
        match &pv.value {
            Value::Str(s) if s == "*" => Ok(present),
            Value::Map(_) | Value::Seq(_) => {
                // A key written empty in YAML holds null, which meets no map or list pattern.
                let inner = self.translate(pv, &child, mode)?;
                Ok(and(&[present, format!("{child} != null"), inner]))
            }
            _ => {
                let inner = scalar(pv, &child, self.jmes)?;
                // A missing field meets the pattern as Go's nil.
                let missing = if let Value::Str(s) = &pv.value
                    && s.contains("{{")
                {
                    false
                } else {
                    scalar_match(&Value::Null, &pv.value)
                };
                if missing {
                    Ok(or(&[not(&present), inner]))
                } else {
                    Ok(and(&[present, inner]))
                }
            }
        }
    }

    fn seq(&mut self, items: &[Node], at: &Node, v: &str, mode: Mode) -> Result<String, Blocked> {
        let Some(first) = items.first() else {
            return Err(Blocked::new(
                at.span,
                "an empty list pattern always fails in Kyverno".to_owned(),
            ));
        };
        if matches!(first.value, Value::Seq(_)) {
            return Err(Blocked::new(
                first.span,
                "a list pattern of lists is compared element by position; only lists of maps or scalars are translated".to_owned(),
            ));
        }
        if items.len() > 1 {
            return Err(Blocked::new(
                items[1].span,
                "Kyverno matches every element against the first entry of a list pattern only; the later entries would be ignored".to_owned(),
            ));
        }
        if !matches!(first.value, Value::Map(_)) {
            // A list pattern led by a scalar: the value must be a list whose every element
            // meets that scalar (an empty list passes).
            let each = scalar_one(first, ITEM, self.jmes)?;
            return Ok(format!("type({v}) == list && {v}.all({ITEM}, {each})"));
        }
        let var = self.fresh(last_segment(v));
        let lenient = self.translate(first, &var, Mode::Lenient)?;
        if mode == Mode::Lenient || !has_skips(first) {
            return Ok(format!("{v}.all({var}, {lenient})"));
        }
        // Strict: no element fails, and one passes unless the list is empty (a list whose
        // elements all skip is a skip).
        let var2 = self.fresh(last_segment(v));
        let strict = self.translate(first, &var2, Mode::Strict)?;
        Ok(format!(
            "{v}.all({var}, {lenient}) && (size({v}) == 0 || {v}.exists({var2}, {strict}))"
        ))
    }
}

/// The last field name of a CEL path, for readable iteration variable names.
fn last_segment(v: &str) -> &str {
    v.rsplit(['.', '[']).next().unwrap_or(v)
}

/// Whether a pattern holds a conditional or global anchor anywhere (its strict and lenient
/// forms differ).
pub(crate) fn has_skips(pattern: &Node) -> bool {
    match &pattern.value {
        Value::Map(m) => m.entries().iter().any(|e| {
            parse_anchor(&e.key)
                .is_some_and(|a| matches!(a.kind, AnchorKind::Condition | AnchorKind::Global))
                || has_skips(&e.value)
        }),
        Value::Seq(items) => items.iter().any(has_skips),
        _ => false,
    }
}

/// The iteration variable of a scalar pattern over a list value (no pattern variable is named
/// so: those end in a number).
const ITEM: &str = "item";

/// A scalar pattern against a present value `v`: Kyverno matches a list value element by
/// element (every element must meet the pattern; an empty list passes).
fn scalar(pattern: &Node, v: &str, jmes: &Translator) -> Result<String, Blocked> {
    let (one, each) = if let Value::Str(s) = &pattern.value
        && s.contains("{{")
    {
        // Substituted once, before the walk: both branches compare with the same value.
        let e = jmes.template_unguarded(s, pattern.span)?;
        let test = |x: &str| format!("string({x}) == string({e})");
        (test(v), test(ITEM))
    } else {
        (
            scalar_one(pattern, v, jmes)?,
            scalar_one(pattern, ITEM, jmes)?,
        )
    };
    Ok(format!(
        "(type({v}) == list ? {v}.all({ITEM}, {each}) : {})",
        super::cel_text::paren(&one)
    ))
}

/// A scalar pattern against a present value `v` that is not a list.
fn scalar_one(pattern: &Node, v: &str, jmes: &Translator) -> Result<String, Blocked> {
    match &pattern.value {
        Value::Bool(b) => Ok(format!("{v} == {b}")),
        Value::Int(i) => Ok(format!("{v} == {i}")),
        Value::Float(f) => Ok(format!("double({v}) == {f:?}")),
        Value::Null => Ok(format!(
            "({v} == null || {v} == '' || {v} == 0 || {v} == false)"
        )),
        Value::Str(s) if s.contains("{{") => {
            // Unguarded: a path missing from the resource is an error in CEL as it is in
            // Kyverno's substitution.
            let e = jmes.template_unguarded(s, pattern.span)?;
            Ok(format!("string({v}) == string({e})"))
        }
        Value::Str(s) if s.contains("$(") => Err(Blocked::new(
            pattern.span,
            "a `$(...)` reference to another field of the resource has no CEL translation here"
                .to_owned(),
        )),
        Value::Str(s) => {
            let e = string_pattern(s, v).map_err(|r| Blocked::new(pattern.span, r))?;
            // A field written as null meets the pattern as Go's nil does.
            Ok(if scalar_match(&Value::Null, &pattern.value) {
                or(&[format!("{v} == null"), e])
            } else {
                and(&[format!("{v} != null"), e])
            })
        }
        Value::Seq(_) | Value::Map(_) => Err(Blocked::new(pattern.span, "not a scalar".to_owned())),
    }
}

/// Kyverno's string pattern language (`|` of `&` of terms) against `v`.
pub(crate) fn string_pattern(s: &str, v: &str) -> Result<String, String> {
    let alternatives: Vec<Vec<&str>> = s
        .split('|')
        .map(|alt| {
            alt.trim_matches(' ')
                .split('&')
                .map(|t| t.trim_matches(' '))
                .collect()
        })
        .collect();
    let mut ors = Vec::new();
    for terms in &alternatives {
        let mut ands = Vec::new();
        for t in terms {
            ands.push(term(t, v)?);
        }
        ors.push(and(&ands));
    }
    let e = or(&ors);
    // The whole pattern equal to the value matches before it is parsed (§5.2); only a
    // pattern with operators can differ from its own terms there.
    if alternatives.len() > 1 || alternatives.iter().any(|a| a.len() > 1) {
        return Ok(or(&[format!("string({v}) == {}", quote(s)), e]));
    }
    Ok(e)
}

/// What an operand reads as: a plain number, a Go duration, a Kubernetes quantity with a
/// suffix, or text.
enum Operand {
    Number(String),
    Duration,
    Quantity,
    Text,
}

fn operand(text: &str) -> Operand {
    if text.parse::<i64>().is_ok()
        || (text.parse::<f64>().is_ok() && text.contains('.') && !text.contains(['e', 'E']))
    {
        return Operand::Number(text.to_owned());
    }
    if crate::base::duration::parse(text).is_some() {
        return Operand::Duration;
    }
    if crate::base::quantity::nanos(text).is_some() {
        return Operand::Quantity;
    }
    Operand::Text
}

fn term(t: &str, v: &str) -> Result<String, String> {
    let op = operator_of(t);
    if matches!(op, Op::InRange | Op::NotInRange) {
        let sep = if op == Op::InRange { "-" } else { "!-" };
        // The endpoints: the separator after the first character (a sign may lead).
        let cut = t
            .char_indices()
            .skip(1)
            .find(|(i, _)| t[*i..].starts_with(sep))
            .map(|(i, _)| i);
        let (lo, hi) = match cut {
            Some(i) => (t[..i].trim(), t[i + sep.len()..].trim()),
            None => return Err(format!("the range `{t}` does not parse")),
        };
        let (lo, hi) = match (operand(lo), operand(hi)) {
            (Operand::Number(lo), Operand::Number(hi)) => (lo, hi),
            (
                a @ (Operand::Number(_) | Operand::Quantity),
                b @ (Operand::Number(_) | Operand::Quantity),
            ) => {
                // A quantity endpoint: both read as quantities (a number is one too), unless
                // a number also reads as a Go duration (`0`), which Kyverno tries first.
                let as_quantity = |o: &Operand, text: &str, bound: Op| match o {
                    Operand::Number(n) if crate::base::duration::parse(n).is_some() => {
                        Err(format!(
                            "the range `{t}` mixes a quantity with `{n}`, which Kyverno also reads as a duration"
                        ))
                    }
                    _ => Ok(quantity_test(text, bound, v)),
                };
                return Ok(if op == Op::InRange {
                    and(&[
                        as_quantity(&a, lo, Op::MoreEqual)?,
                        as_quantity(&b, hi, Op::LessEqual)?,
                    ])
                } else {
                    or(&[
                        as_quantity(&a, lo, Op::Less)?,
                        as_quantity(&b, hi, Op::More)?,
                    ])
                });
            }
            _ => {
                return Err(format!(
                    "the range `{t}` compares durations, which kpol does not translate in a range"
                ));
            }
        };
        let n = number(v, &lo, &hi);
        return Ok(if op == Op::InRange {
            format!("{n} >= {lo} && {n} <= {hi}")
        } else {
            format!("{n} < {lo} || {n} > {hi}")
        });
    }
    let text = t[op.text().len()..].trim();
    let cmp = match op {
        Op::More => ">",
        Op::Less => "<",
        Op::MoreEqual => ">=",
        Op::LessEqual => "<=",
        Op::Equal => "==",
        Op::NotEqual => "!=",
        Op::InRange | Op::NotInRange => "==",
    };
    match (operand(text), op) {
        (Operand::Number(n), Op::Equal | Op::NotEqual) => {
            // Kyverno compares a number's text as a quantity: `80` meets 80 and "80".
            let e = format!("string({v}) == {}", quote(&n));
            Ok(if op == Op::Equal { e } else { not(&e) })
        }
        (Operand::Number(n), _) => Ok(format!("{} {cmp} {n}", number(v, &n, &n))),
        (Operand::Duration, _) => Ok(format!(
            "duration(string({v})) {cmp} duration({})",
            quote(text)
        )),
        (Operand::Quantity, _) => Ok(quantity_test(text, op, v)),
        (Operand::Text, Op::Equal) => Ok(wildcard_test(&format!("string({v})"), text)),
        (Operand::Text, Op::NotEqual) => Ok(not(&wildcard_test(&format!("string({v})"), text))),
        // An ordering against text never holds (Kyverno's compareString).
        (Operand::Text, _) => Ok("false".to_owned()),
    }
}

/// `v` against the quantity `text` under `op`, as Kyverno's `validateString` reads it: a
/// missing value is `0`; a string, integer or decimal that parses as a quantity is compared
/// with `Quantity.Cmp` (CEL's `compareTo`, exact); anything else falls to the string
/// comparison, where an ordering never holds and equality with the quantity's own text
/// cannot (that text would have parsed). There `!` holds for strings, numbers and booleans,
/// not for maps and lists (Kyverno's `compareString` refuses them before negating).
/// Decimals: Kyverno reads a float's `%f` text (six places), CEL's `string` its shortest
/// text; they differ only for a value with a seventh decimal place.
fn quantity_test(text: &str, op: Op, v: &str) -> String {
    let cmp = match op {
        Op::More => ">",
        Op::Less => "<",
        Op::MoreEqual => ">=",
        Op::LessEqual => "<=",
        Op::NotEqual => "!=",
        Op::Equal | Op::InRange | Op::NotInRange => "==",
    };
    let p = crate::base::quantity::nanos(text).unwrap_or(0);
    let at_zero = match op {
        Op::More => 0 > p,
        Op::Less => 0 < p,
        Op::MoreEqual => 0 >= p,
        Op::LessEqual => 0 <= p,
        Op::NotEqual => 0 != p,
        Op::Equal | Op::InRange | Op::NotInRange => 0 == p,
    };
    let not_quantity = op == Op::NotEqual;
    let other = if op == Op::NotEqual {
        format!("type({v}) == bool")
    } else {
        "false".to_owned()
    };
    format!(
        "({v} == null ? {at_zero} : (type({v}) == string || type({v}) == int || type({v}) == double) ? (isQuantity(string({v})) ? quantity(string({v})).compareTo(quantity({})) {cmp} 0 : {not_quantity}) : {other})",
        quote(text)
    )
}

/// `v` as a number of the operands' kind: `int(v)` for integers, `double(v)` otherwise.
fn number(v: &str, a: &str, b: &str) -> String {
    if a.contains('.') || b.contains('.') {
        format!("double({v})")
    } else {
        format!("int({v})")
    }
}
