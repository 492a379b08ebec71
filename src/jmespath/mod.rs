//! Kyverno's JMESPath dialect (validate.md §12): the `kyverno/go-jmespath` fork's semantics
//! with every Kyverno custom function.
//!
//! Parsing uses the `jmespath` crate (its AST is public; 891/892 compliance). Evaluation is
//! kpol's own, for two reasons:
//! * the fork raises `Unknown key "k" in path` when a field is missing from an object and
//!   swallows that error only in some places (§12.1); the crate returns null everywhere;
//! * it runs directly over `crate::yaml::Node`, borrowing sub-trees (`Cow`), so nothing is
//!   converted per document (the crate's `Variable` conversion costs ~13 µs per resource).
//!
//! ```
//! use kpol::jmespath::Expr;
//! use kpol::yaml::Node;
//! let data = Node::from_json(&serde_json::json!({"a": {"b": "x"}}));
//! let e = Expr::compile("to_upper(a.b)").unwrap();
//! assert_eq!(e.search(&data).unwrap().as_str(), Some("X"));
//! assert!(Expr::compile("a.missing").unwrap().search(&data).is_err());
//! ```
//!
//! An unparsable expression or an unknown function name is a compile error. Wrong argument
//! counts and types are evaluation errors, with go-jmespath's and Kyverno's messages.

mod functions;
mod interp;
mod ir;
pub mod time;
pub mod value;
pub mod x509;

use std::borrow::Cow;
use std::fmt;

use crate::yaml::Node;

pub(crate) use interp::Lent;

/// Longest expression accepted (hostile input guard; real policies stay far below).
const MAX_EXPR_LEN: usize = 64 * 1024;
/// Deepest nesting of brackets, parentheses and prefix operators accepted before parsing.
const MAX_NESTING: usize = 128;
/// Longest chain of links (`.`, `|`, `||`, `&&`, comparisons) in one operand, summed over
/// the enclosing brackets, accepted before parsing: the parsed tree of `a.a.a…` is as deep as
/// the chain, and the parser's tree is dropped recursively (a 30,000-link chain overflowed a
/// 2 MiB worker stack). Longer chains than [`MAX_DEPTH`] are refused after parsing anyway.
const MAX_CHAIN: usize = 1024;
/// Deepest evaluation recursion (the compiled tree is at most this deep too).
pub(crate) const MAX_DEPTH: u32 = 128;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The expression does not parse; `offset` is the byte in the expression where the parser
    /// stopped (clamped to a character boundary), when it names one.
    Syntax {
        message: String,
        offset: Option<usize>,
    },
    /// A function name that neither JMESPath nor Kyverno defines.
    UnknownFunction(String),
    /// The fork's `NotFoundError`: a field missing from an object.
    NotFound(String),
    /// Any other evaluation error (function argument errors, ...).
    Eval(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax { message: m, .. } | Error::Eval(m) => f.write_str(m),
            Error::UnknownFunction(n) => write!(f, "unknown function: {n}"),
            Error::NotFound(k) => write!(f, "Unknown key \"{k}\" in path"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    #[cfg(test)]
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }

    /// A syntax error that names no place in the expression.
    pub(crate) fn syntax(message: &str) -> Error {
        Error::Syntax {
            message: message.to_owned(),
            offset: None,
        }
    }

    /// Where in the expression a syntax error is, as a byte offset.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Error::Syntax { offset, .. } => *offset,
            _ => None,
        }
    }
}

/// A compiled expression; `Send + Sync`, compile once and search many times.
#[derive(Clone, Debug)]
pub struct Expr {
    text: String,
    ir: ir::Ir,
    /// [`Expr::exposes`]`("request")`, asked of every variable query: found once.
    exposes_request: bool,
}

/// Parses as `kyverno/go-jmespath` does. Its multi-select hash needs no comma between pairs
/// (`parseMultiSelectHash` goes on with the next key when neither `,` nor `}` follows a
/// value), which the `jmespath` crate refuses with "Expected '}' or ','" at the next key: a
/// comma is put there and the text parsed again. Returns the tree and the text it was
/// parsed from (its offsets refer to that text).
fn parse_kyverno(text: &str) -> Result<(::jmespath::ast::Ast, Cow<'_, str>), Error> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    // Every repair adds a comma before a key, so there are at most as many as bytes.
    for _ in 0..=text.len() {
        let e = match ::jmespath::parse(&current) {
            Ok(ast) => return Ok((ast, current)),
            Err(e) => e,
        };
        let message = e.to_string();
        let at_key = message.contains("Expected '}' or ','")
            && (message.contains("found Identifier(")
                || message.contains("found QuotedIdentifier("));
        if !at_key || !current.is_char_boundary(e.offset) || e.offset == 0 {
            // Report the error against the text as written.
            return Err(match ::jmespath::parse(text) {
                Err(first) => Error::Syntax {
                    message: first.to_string(),
                    offset: Some(char_floor(text, first.offset)),
                },
                Ok(_) => Error::syntax(&message),
            });
        }
        let mut repaired = String::with_capacity(current.len() + 1);
        repaired.push_str(&current[..e.offset]);
        repaired.push(',');
        repaired.push_str(&current[e.offset..]);
        current = Cow::Owned(repaired);
    }
    Err(Error::syntax("expression does not parse"))
}

/// `offset` moved back to a character boundary of `text` (the parser's offsets are bytes, and
/// the end of the text is where an expression that stops short fails).
fn char_floor(text: &str, offset: usize) -> usize {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl Expr {
    pub fn compile(text: &str) -> Result<Expr, Error> {
        if text.len() > MAX_EXPR_LEN {
            return Err(Error::syntax("expression too long"));
        }
        if nesting(text) > MAX_NESTING || chain(text) > MAX_CHAIN {
            return Err(Error::syntax("expression nested too deeply"));
        }
        let (ast, parsed) = parse_kyverno(text)?;
        let ir = ir::lower(&ast, &parsed, 0)?;
        let exposes_request = ir.exposes("request");
        Ok(Expr {
            text: text.to_owned(),
            ir,
            exposes_request,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// [`Expr::compile`] through a per-thread cache: the variables of a rule are the same text
    /// for every resource, so each is parsed once per thread instead of once per resource. The
    /// cache is bounded (texts built from resource values — nested variables — are unbounded in
    /// number) and simply starts over when full.
    pub fn cached(text: &str) -> Result<std::rc::Rc<Expr>, Error> {
        use std::cell::RefCell;
        use std::collections::HashMap;
        use std::rc::Rc;
        const CAPACITY: usize = 4096;
        // perf: the texts are the policies' own, hashed on every query: a fast hash, not
        // SipHash (a hostile text can only slow its own lookups, in a bounded table).
        type Cache = HashMap<String, Result<Rc<Expr>, Error>, foldhash::fast::FixedState>;
        thread_local! {
            static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
        }
        CACHE.with(|cache| {
            if let Some(hit) = cache.borrow().get(text) {
                return hit.clone();
            }
            let compiled = Expr::compile(text).map(Rc::new);
            let mut cache = cache.borrow_mut();
            if cache.len() >= CAPACITY {
                cache.clear();
            }
            cache.insert(text.to_owned(), compiled.clone());
            compiled
        })
    }

    /// Evaluates against `data`. The result borrows from `data` where it can.
    pub fn search<'a>(&self, data: &'a Node) -> Result<Cow<'a, Node>, Error> {
        let _budget = crate::base::budget::Scope::enter();
        interp::eval(&self.ir, data, 0)
    }

    /// [`Expr::search`] with fields lent to one map node of `data` (see [`Lent`]); only
    /// sound when the expression does not [`expose`](Expr::exposes) that map.
    pub(crate) fn search_lent<'a>(
        &self,
        data: &'a Node,
        lent: &Lent<'a>,
    ) -> Result<Cow<'a, Node>, Error> {
        let _budget = crate::base::budget::Scope::enter();
        interp::eval_in(&self.ir, data, 0, lent)
    }

    /// The fields of a plain `a.b.c` path (no index, function or projection), in order.
    pub(crate) fn field_chain(&self) -> Option<Vec<&str>> {
        let mut out = Vec::new();
        self.ir.field_chain(&mut out).then_some(out)
    }

    /// Whether searching a document may yield the document itself or its field `key` whole
    /// (returned, listed, printed, compared) rather than only look fields up in them.
    pub(crate) fn exposes(&self, key: &str) -> bool {
        if key == "request" {
            return self.exposes_request;
        }
        self.ir.exposes(key)
    }
}

/// The characters of `text` outside its quoted literals (`'…'`, `"…"`, `` `…` ``, with `\`
/// escapes): each literal is its opening quote alone.
fn outside_quotes(text: &str) -> impl Iterator<Item = char> + '_ {
    let mut in_quote: Option<char> = None;
    let mut escaped = false;
    text.chars().filter(move |&c| {
        if let Some(q) = in_quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_quote = None;
            }
            return false;
        }
        if matches!(c, '\'' | '"' | '`') {
            in_quote = Some(c);
        }
        true
    })
}

/// A cheap upper bound of the parser's recursion: brackets, parentheses, braces and prefix
/// operators (`!`, `&`) counted as nesting.
fn nesting(text: &str) -> usize {
    let mut depth: usize = 0;
    let mut max = 0;
    let mut prefix_run = 0;
    for c in outside_quotes(text) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c == '!' || c == '&' {
            prefix_run += 1;
        } else if !c.is_whitespace() {
            prefix_run = 0;
        }
        max = max.max(depth + prefix_run);
    }
    max
}

/// An upper bound of the parsed tree's depth from chains: the links of each operand (commas
/// start a new one) summed over the open brackets, plus the brackets.
fn chain(text: &str) -> usize {
    let mut levels: Vec<usize> = vec![0];
    let mut max = 0;
    for c in outside_quotes(text) {
        match c {
            '(' | '[' | '{' => levels.push(0),
            ')' | ']' | '}' if levels.len() > 1 => {
                levels.pop();
            }
            ',' => {
                if let Some(l) = levels.last_mut() {
                    *l = 0;
                }
            }
            '.' | '|' | '&' | '=' | '<' | '>' => {
                if let Some(l) = levels.last_mut() {
                    *l += 1;
                }
            }
            _ => {}
        }
        max = max.max(levels.len() + levels.iter().sum::<usize>());
    }
    max
}

/// Names of every function available (standard and Kyverno), sorted.
pub fn function_names() -> Vec<&'static str> {
    functions::names()
}

#[cfg(test)]
mod tests;
