//! `generate[].template` (`kyverno/kyverno:pkg/cel/policies/gpol/template`): a YAML string,
//! one document per resource, compiled once. With `interpolate: cel`, `(( … ))` placeholders
//! are CEL expressions evaluated in the policy's activation:
//!
//! - a scalar that is one placeholder is replaced by the value (any type: a map, a list, a
//!   scalar);
//! - a placeholder inside a longer string is written into it and must give a scalar;
//! - `\((` writes a literal `((`; placeholders in mapping keys are refused.
//!
//! With `interpolate: none` (the default) the template is plain YAML. kpol reads it with its
//! own YAML reader (YAML 1.1, as Kubernetes manifests); Kyverno uses yaml.v3 (1.2), which
//! differs on scalars such as `yes`/`on` (strings there).

use cel::Value;
use serde_json::{Map, Value as Json};

use crate::cel::{Activation, Program, compile};
use crate::source::{SourceFile, Span};
use crate::yaml::{Limits, Node, Value as Y, parse_documents};

/// A compiled template: one part per YAML document.
#[derive(Debug)]
pub struct Template {
    docs: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    /// A subtree without placeholders, as written.
    Literal(Json),
    Map(Vec<(String, Part)>),
    Seq(Vec<Part>),
    /// A scalar that is one placeholder.
    Splice(Program),
    /// A string of text and placeholders.
    Text(Vec<Segment>),
}

#[derive(Debug)]
enum Segment {
    Text(String),
    Expr(Program),
}

/// A template problem: its message and, when known, the 1-based line in the template.
#[derive(Debug)]
pub struct TemplateError {
    pub line: Option<u32>,
    pub message: String,
}

impl Template {
    /// Compiles `value`; `interpolate` is `interpolate: cel`. Every placeholder is parsed here.
    pub fn compile(value: &str, interpolate: bool) -> Result<Self, TemplateError> {
        let source = SourceFile::new("template", value);
        let docs = parse_documents(value, Limits::default()).map_err(|e| TemplateError {
            line: Some(source.line_col(e.offset).line),
            message: format!("failed to parse YAML: {}", e.message),
        })?;
        let c = Compiler {
            source: &source,
            interpolate,
        };
        let mut out = Vec::new();
        for doc in docs {
            if doc.root.is_null() {
                continue;
            }
            let part = c.node(&doc.root)?;
            let mapping = match &part {
                Part::Map(_) | Part::Splice(_) => true,
                Part::Literal(j) => j.is_object(),
                _ => false,
            };
            if !mapping {
                return Err(c.error(
                    doc.root.span,
                    "document must be a mapping describing a resource",
                ));
            }
            out.push(part);
        }
        if out.is_empty() {
            return Err(TemplateError {
                line: None,
                message: "template must contain at least one YAML document".to_owned(),
            });
        }
        Ok(Self { docs: out })
    }

    /// One resource per document, in order. Errors name the document (from 1) and the path
    /// to the placeholder.
    pub fn render(&self, act: &Activation) -> Result<Vec<Json>, String> {
        let mut out = Vec::with_capacity(self.docs.len());
        for (i, doc) in self.docs.iter().enumerate() {
            let v = render(doc, act).map_err(|e| format!("document {}: {e}", i + 1))?;
            if !v.is_object() {
                return Err(format!(
                    "document {}: expected a mapping describing a resource, got {}",
                    i + 1,
                    json_type(&v)
                ));
            }
            out.push(v);
        }
        Ok(out)
    }
}

struct Compiler<'a> {
    source: &'a SourceFile,
    interpolate: bool,
}

impl Compiler<'_> {
    fn error(&self, span: Span, message: &str) -> TemplateError {
        TemplateError {
            line: Some(self.source.line_col(span.start).line),
            message: message.to_owned(),
        }
    }

    fn node(&self, n: &Node) -> Result<Part, TemplateError> {
        if !self.interpolate || !has_placeholder(n) {
            return Ok(Part::Literal(n.to_json()));
        }
        match &n.value {
            Y::Map(m) => {
                let mut entries = Vec::with_capacity(m.len());
                for (k, v) in m.iter() {
                    if contains_placeholder(k) {
                        return Err(self.error(
                            v.span,
                            "placeholders are not supported in mapping keys; use a whole-value placeholder on the parent field instead",
                        ));
                    }
                    entries.push((k.to_owned(), self.node(v)?));
                }
                Ok(Part::Map(entries))
            }
            Y::Seq(items) => Ok(Part::Seq(
                items
                    .iter()
                    .map(|i| self.node(i))
                    .collect::<Result<_, _>>()?,
            )),
            Y::Str(s) => self.scalar(s, n.span),
            _ => Ok(Part::Literal(n.to_json())),
        }
    }

    fn scalar(&self, s: &str, span: Span) -> Result<Part, TemplateError> {
        let segments = scan(s).map_err(|e| self.error(span, &e))?;
        let mut parts = Vec::with_capacity(segments.len());
        for seg in segments {
            parts.push(match seg {
                Scanned::Text(t) => Segment::Text(t),
                Scanned::Expr(e) => {
                    let (program, err) = compile(&e, span);
                    if let Some(err) = err {
                        let msg = format!("invalid placeholder expression {e:?}: {}", err.message);
                        return Err(self.error(span, &msg));
                    }
                    Segment::Expr(program)
                }
            });
        }
        let exprs = parts
            .iter()
            .filter(|p| matches!(p, Segment::Expr(_)))
            .count();
        Ok(match (exprs, parts.len()) {
            // Only escapes: the text with them resolved.
            (0, _) => Part::Literal(Json::String(
                parts
                    .iter()
                    .map(|p| match p {
                        Segment::Text(t) => t.as_str(),
                        Segment::Expr(_) => "",
                    })
                    .collect(),
            )),
            (1, 1) => match parts.pop() {
                Some(Segment::Expr(p)) => Part::Splice(p),
                _ => Part::Text(parts),
            },
            _ => Part::Text(parts),
        })
    }
}

fn render(part: &Part, act: &Activation) -> Result<Json, String> {
    Ok(match part {
        Part::Literal(j) => j.clone(),
        Part::Map(entries) => {
            let mut m = Map::with_capacity(entries.len());
            for (k, v) in entries {
                let v = render(v, act).map_err(|e| format!("field {k:?}: {e}"))?;
                m.insert(k.clone(), v);
            }
            Json::Object(m)
        }
        Part::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(render(item, act).map_err(|e| format!("item {i}: {e}"))?);
            }
            Json::Array(out)
        }
        Part::Splice(p) => native(&eval(p, act)?)
            .map_err(|e| format!("failed to convert placeholder {:?} result: {e}", p.text))?,
        Part::Text(segments) => {
            let mut s = String::new();
            for seg in segments {
                match seg {
                    Segment::Text(t) => s.push_str(t),
                    Segment::Expr(p) => match eval(p, act)? {
                        Value::String(v) => s.push_str(&v),
                        Value::Bool(b) => s.push_str(&b.to_string()),
                        Value::Int(i) => s.push_str(&i.to_string()),
                        Value::UInt(u) => s.push_str(&u.to_string()),
                        Value::Float(f) => s.push_str(&go_float(f)),
                        other => {
                            return Err(format!(
                                "placeholder {:?} embedded in a string must evaluate to a scalar, got {}; use a whole-value placeholder for structured results",
                                p.text,
                                other.type_of()
                            ));
                        }
                    },
                }
            }
            Json::String(s)
        }
    })
}

fn eval(p: &Program, act: &Activation) -> Result<Value, String> {
    act.eval(p)
        .map_err(|e| format!("failed to evaluate placeholder {:?}: {e}", p.text))
}

/// A placeholder's value for the resource: scalars keep their type, maps and lists are
/// converted as `structpb` does (numbers inside them doubles).
fn native(v: &Value) -> Result<Json, String> {
    match v {
        Value::Int(i) => Ok(Json::from(*i)),
        Value::UInt(u) => i64::try_from(*u)
            .map(Json::from)
            .map_err(|_| format!("uint value {u} overflows the supported integer range")),
        other => crate::cel::generator::to_struct_json(other),
    }
}

/// Go's `%v` of a float64 (`strconv` 'g', shortest): an exponent form below 1e-4 and from
/// 1e6 on.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if f != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "map",
    }
}

/// Whether a placeholder or an escape occurs anywhere in the subtree (keys included).
fn has_placeholder(n: &Node) -> bool {
    match &n.value {
        Y::Str(s) => contains_placeholder(s) || s.contains("\\(("),
        Y::Seq(items) => items.iter().any(has_placeholder),
        Y::Map(m) => m
            .iter()
            .any(|(k, v)| contains_placeholder(k) || has_placeholder(v)),
        _ => false,
    }
}

/// An unescaped `((`.
fn contains_placeholder(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' && b.get(i + 1..i + 3) == Some(b"((") {
            i += 3;
            continue;
        }
        if &b[i..i + 2] == b"((" {
            return true;
        }
        i += 1;
    }
    false
}

enum Scanned {
    Text(String),
    Expr(String),
}

/// Splits a scalar into text and placeholders. Inside a placeholder parentheses nest and CEL
/// string literals are skipped, so `(( f(x) ))` and `(( "))" ))` end where they should.
fn scan(s: &str) -> Result<Vec<Scanned>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("\\((") {
            text.push_str("((");
            rest = after;
            continue;
        }
        if rest.starts_with("((") {
            let start = s.len() - rest.len();
            let (expr, len) = placeholder(rest, start)?;
            if !text.is_empty() {
                out.push(Scanned::Text(std::mem::take(&mut text)));
            }
            out.push(Scanned::Expr(expr));
            rest = &rest[len..];
            continue;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            text.push(c);
        }
        rest = chars.as_str();
    }
    if !text.is_empty() {
        out.push(Scanned::Text(text));
    }
    Ok(out)
}

/// The trimmed expression of the placeholder `s` starts with, and the placeholder's length.
fn placeholder(s: &str, at: usize) -> Result<(String, usize), String> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut i = 2;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'(' => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b')' if b.get(i + 1) == Some(&b')') => {
                let expr = s[2..i].trim();
                if expr.is_empty() {
                    return Err(format!("empty placeholder at offset {at}"));
                }
                return Ok((expr.to_owned(), i + 2));
            }
            b')' => {
                return Err(format!(
                    "unbalanced parenthesis in placeholder starting at offset {at}"
                ));
            }
            _ => {}
        }
        i += 1;
    }
    if quote.is_some() {
        return Err(format!(
            "unterminated string literal in placeholder starting at offset {at}"
        ));
    }
    Err(format!(
        "unterminated placeholder starting at offset {at}: missing closing '))'"
    ))
}
