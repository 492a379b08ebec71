//! Compiling one CEL expression written in a policy: parse once (with the environment's
//! macros), instrument every comprehension with the evaluation budget, and turn a syntax error
//! into a diagnostic at the expression's line:column in the policy file (cel.md §4.4).

use cel::IdedExpr;
use cel::common::ast::{CallExpr, Expr};

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::source::{LineCol, SourceFile, Span};

/// The function every comprehension's range goes through (see [`super::budget`]).
pub(crate) const BUDGET: &str = "__kpolBudget__";
/// The function every `+` goes through: what it builds is charged ([`super::eval`]).
pub(crate) const SIZE: &str = "__kpolSize__";

/// One compiled expression.
#[derive(Debug)]
pub struct Program {
    /// The expression as written.
    pub text: String,
    /// Where it is written.
    pub span: Span,
    /// The parsed expression, or the syntax error.
    pub expr: Result<IdedExpr, String>,
}

/// A syntax error with its position inside the expression (1-based line, 0-based column).
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// A limit of kpol's parser (nesting depth, the parser thread), not an error of the
    /// language: cel-go may accept the expression.
    pub limit: bool,
}

/// Parses `text`; `span` is where its node is written.
pub fn compile(text: &str, span: Span) -> (Program, Option<SyntaxError>) {
    match parse(text) {
        Ok(expr) => (
            Program {
                text: text.to_owned(),
                span,
                expr: Ok(expr),
            },
            None,
        ),
        Err(e) => {
            let msg = format!(
                "compilation failed: ERROR: <input>:{}:{}: {}",
                e.line,
                e.column + 1,
                e.message
            );
            (
                Program {
                    text: text.to_owned(),
                    span,
                    expr: Err(msg),
                },
                Some(e),
            )
        }
    }
}

/// Compiles the string node `node` (a non-string is compiled as its YAML text, which fails).
#[cfg(test)]
pub(crate) fn compile_node(node: &crate::yaml::Node) -> (Program, Option<SyntaxError>) {
    let text = node.as_str().unwrap_or("");
    compile(text, node.span)
}

/// Deepest expression tree accepted: the interpreter recurses once per level (about 20 KiB
/// of stack a level in a debug build; a 2 MiB worker stack overflowed between 40 and 100
/// levels). cel-go refuses expressions nested beyond 250 levels (`maxRecursionDepth`); the
/// policies of the Kyverno library stay below 20.
pub(crate) const MAX_DEPTH: usize = 32;
/// Longest operator/selector chain, summed over open brackets (weighted: the parser recurses
/// several rules deep per bracket), accepted before parsing at all.
const MAX_CHAIN: usize = 1000;
/// Stack of the thread the parser runs on: its recursion is bounded by [`MAX_CHAIN`] and does
/// not depend on the calling thread's stack (a rayon worker's is 2 MiB).
pub(super) const PARSER_STACK: usize = 256 * 1024 * 1024;

fn too_deep(what: &str) -> SyntaxError {
    SyntaxError {
        line: 1,
        column: 0,
        message: format!("expression {what} too deeply (more than {MAX_DEPTH} levels)"),
        limit: true,
    }
}

/// Parses `text`, or gives a copy of what an earlier call with the same text gave (perf:
/// start-up, docs/PERFORMANCE.md: the parser costs ~350,000 instructions an expression, and
/// autogen and the library's policies repeat many texts; a copy costs a fraction of that).
/// Parsing is a pure function of the text, so a copy is what a fresh parse would give.
fn parse(text: &str) -> Result<IdedExpr, SyntaxError> {
    static MEMO: Memo<String, Reply> = Memo::new();
    if text.len() > MEMO_TEXT {
        return parse_uncached(text);
    }
    MEMO.get_or(text.to_owned(), || parse_uncached(text))
}

/// Texts longer than this (bytes) are not kept in a [`Memo`].
pub(super) const MEMO_TEXT: usize = 16 * 1024;

/// Results of a pure function of the key, kept for the next call with the same key: at most
/// [`Memo::CAPACITY`] entries, then it starts afresh. Shared between threads.
pub(super) struct Memo<K, V> {
    map: std::sync::Mutex<std::collections::HashMap<K, V, foldhash::fast::FixedState>>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Memo<K, V> {
    const CAPACITY: usize = 4096;

    pub(super) const fn new() -> Self {
        Self {
            map: std::sync::Mutex::new(std::collections::HashMap::with_hasher(
                foldhash::fast::FixedState::with_seed(0),
            )),
        }
    }

    /// The value kept for `key`, or `compute()`'s (then kept). A poisoned lock only skips
    /// the memo.
    pub(super) fn get_or(&self, key: K, compute: impl FnOnce() -> V) -> V {
        if let Some(hit) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return hit;
        }
        let value = compute();
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= Self::CAPACITY {
                map.clear();
            }
            map.insert(key, value.clone());
        }
        value
    }
}

fn parse_uncached(text: &str) -> Result<IdedExpr, SyntaxError> {
    let chain = chain(text);
    if chain > MAX_CHAIN {
        return Err(too_deep("nested"));
    }
    // perf: shallow expressions (most) parse here; deeper ones on the parser's thread.
    if chain >= 12 {
        return on_parser_thread(Job::Parse(text.to_owned())).unwrap_or_else(|| {
            Err(SyntaxError {
                line: 1,
                column: 0,
                message: "the CEL parser could not run".to_owned(),
                limit: true,
            })
        });
    }
    match parse_here(text) {
        Err(Deep(expr)) => {
            // Dropped on the parser's own large stack, not this one.
            let _ = on_parser_thread(Job::Drop(expr));
            Err(too_deep("nested"))
        }
        Ok(r) => r,
    }
}

/// A parsed expression nested beyond [`MAX_DEPTH`], to be dropped on a large stack.
struct Deep(IdedExpr);

/// Parses and instruments `text` on the calling thread.
fn parse_here(text: &str) -> Result<Result<IdedExpr, SyntaxError>, Deep> {
    match super::env::env().parser().parse_with_source_info(text) {
        Ok((mut expr, _)) => {
            if depth(&expr) > MAX_DEPTH {
                return Err(Deep(expr));
            }
            let mut next_id = u64::MAX / 2;
            instrument(&mut expr, &mut next_id);
            Ok(Ok(expr))
        }
        Err(errors) => {
            let first = errors.errors.first();
            Ok(Err(SyntaxError {
                line: first.map_or(1, |e| usize::try_from(e.pos.0).unwrap_or(1).max(1)),
                // The parser's columns are 1-based.
                column: first.map_or(0, |e| usize::try_from(e.pos.1 - 1).unwrap_or(0)),
                message: first.map_or_else(|| "syntax error".to_owned(), |e| e.msg.clone()),
                limit: false,
            }))
        }
    }
}

/// Work for the parser's thread.
enum Job {
    Parse(String),
    Drop(IdedExpr),
}

type Reply = Result<IdedExpr, SyntaxError>;
type Request = (Job, std::sync::mpsc::Sender<Reply>);

/// The one long-lived thread with a [`PARSER_STACK`] stack that parses deep expressions and
/// drops deep trees (perf: a thread per expression cost a stack mapping and a fresh allocator
/// heap each; the library's 523 policies started ~500 of them). `None`: it could not start.
static PARSER: std::sync::LazyLock<Option<std::sync::mpsc::Sender<Request>>> =
    std::sync::LazyLock::new(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("kpol-cel-parser".to_owned())
            .stack_size(PARSER_STACK)
            .spawn(move || {
                for (job, reply) in rx {
                    let text = match job {
                        Job::Drop(expr) => {
                            drop(expr);
                            continue;
                        }
                        Job::Parse(text) => text,
                    };
                    let r = std::panic::catch_unwind(|| parse_here(&text));
                    let r = match r {
                        Ok(Ok(r)) => r,
                        Ok(Err(Deep(expr))) => {
                            drop(expr);
                            Err(too_deep("nested"))
                        }
                        Err(_) => Err(SyntaxError {
                            line: 1,
                            column: 0,
                            message: "the CEL parser could not run".to_owned(),
                            limit: true,
                        }),
                    };
                    let _ = reply.send(r);
                }
            })
            .ok()
            .map(|_| tx)
    });

/// Runs `job` on the parser's thread; its reply for a parse (`None` for a drop, or when the
/// thread is not there).
fn on_parser_thread(job: Job) -> Option<Reply> {
    let tx = PARSER.as_ref()?;
    let (reply_tx, reply_rx) = std::sync::mpsc::channel();
    let parse = matches!(job, Job::Parse(_));
    tx.send((job, reply_tx)).ok()?;
    if parse { reply_rx.recv().ok() } else { None }
}

/// An upper bound of the parser's recursion from the text alone: operator runs and selector
/// dots of each operand (commas start a new one), summed over the open brackets, each bracket
/// weighted 4; string literals skipped.
pub(super) fn chain(text: &str) -> usize {
    let b = text.as_bytes();
    let mut levels: Vec<usize> = vec![0];
    let mut sum = 0usize;
    let mut max = 0;
    let mut i = 0;
    let mut prev_op = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' {
            let triple = b.get(i..i + 3).is_some_and(|t| t == [c, c, c]);
            let q = if triple { 3 } else { 1 };
            let mut j = i + q;
            while j < b.len() && !(b[j] == c && (!triple || b.get(j..j + 3) == Some(&[c, c, c]))) {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            i = j + q;
            prev_op = false;
            continue;
        }
        let op = b"+-*/%=!<>&|?".contains(&c);
        match c {
            b'(' | b'[' | b'{' => {
                levels.push(0);
                sum += 4;
            }
            b')' | b']' | b'}' if levels.len() > 1 => {
                sum -= 4 + levels.pop().unwrap_or(0);
            }
            b',' => {
                if let Some(l) = levels.last_mut() {
                    sum -= *l;
                    *l = 0;
                }
            }
            b'.' => {
                if let Some(l) = levels.last_mut() {
                    *l += 1;
                    sum += 1;
                }
            }
            _ if op && !prev_op => {
                if let Some(l) = levels.last_mut() {
                    *l += 1;
                    sum += 1;
                }
            }
            _ => {}
        }
        prev_op = op;
        max = max.max(sum);
        i += 1;
    }
    max
}

/// The depth of a parsed expression (counted without recursion).
pub(super) fn depth(e: &IdedExpr) -> usize {
    let mut max = 0;
    let mut stack = vec![(e, 1usize)];
    while let Some((e, d)) = stack.pop() {
        max = max.max(d);
        let d = d + 1;
        match &e.expr {
            Expr::Call(c) => {
                if let Some(t) = c.target.as_deref() {
                    stack.push((t, d));
                }
                stack.extend(c.args.iter().map(|a| (a, d)));
            }
            Expr::Comprehension(c) => {
                for x in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    stack.push((x, d));
                }
            }
            Expr::List(l) => stack.extend(l.elements.iter().map(|a| (a, d))),
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        stack.push((&me.key, d));
                        stack.push((&me.value, d));
                    }
                }
            }
            Expr::Struct(st) => {
                for entry in &st.entries {
                    if let cel::common::ast::EntryExpr::StructField(f) = &entry.expr {
                        stack.push((&f.value, d));
                    }
                }
            }
            Expr::Select(sel) => stack.push((&sel.operand, d)),
            _ => {}
        }
    }
    max
}

/// Wraps the range of every comprehension that iterates (not `cel.bind`'s empty one) in
/// `__kpolBudget__(…)`, so the iterations of one evaluation are counted and capped, and every
/// `+` in `__kpolSize__(…)`, so what it builds is.
fn instrument(e: &mut IdedExpr, next_id: &mut u64) {
    // Each entry: whether its parent is a `+` (only the top of a chain `a + b + c` is wrapped:
    // what a chain builds is bounded by its operands, and a wrapper per `+` would double the
    // interpreter's recursion).
    let mut stack = vec![(e, false)];
    while let Some((e, in_sum)) = stack.pop() {
        let is_sum = matches!(&e.expr, Expr::Call(c) if c.func_name == "_+_");
        if is_sum && in_sum {
            if let Expr::Call(c) = &mut e.expr {
                stack.extend(c.args.iter_mut().map(|a| (a, true)));
            }
            continue;
        }
        if is_sum {
            let inner = std::mem::take(e);
            *next_id += 1;
            *e = IdedExpr {
                id: *next_id,
                expr: Expr::Call(CallExpr {
                    func_name: SIZE.to_owned(),
                    target: None,
                    args: vec![inner],
                }),
            };
            if let Expr::Call(w) = &mut e.expr
                && let Some(Expr::Call(c)) = w.args.first_mut().map(|a| &mut a.expr)
            {
                stack.extend(c.args.iter_mut().map(|a| (a, true)));
            }
            continue;
        }
        match &mut e.expr {
            Expr::Call(c) => {
                if let Some(t) = c.target.as_deref_mut() {
                    stack.push((t, false));
                }
                stack.extend(c.args.iter_mut().map(|a| (a, false)));
            }
            Expr::Comprehension(c) => {
                if c.iter_var != "#unused" {
                    let range = std::mem::take(&mut c.iter_range);
                    *next_id += 1;
                    c.iter_range = IdedExpr {
                        id: *next_id,
                        expr: Expr::Call(CallExpr {
                            func_name: BUDGET.to_owned(),
                            target: None,
                            args: vec![range],
                        }),
                    };
                }
                let c = &mut **c;
                stack.push((&mut c.iter_range, false));
                stack.push((&mut c.accu_init, false));
                stack.push((&mut c.loop_cond, false));
                stack.push((&mut c.loop_step, false));
                stack.push((&mut c.result, false));
            }
            Expr::List(l) => stack.extend(l.elements.iter_mut().map(|a| (a, false))),
            Expr::Map(m) => {
                for entry in &mut m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                        stack.push((&mut me.key, false));
                        stack.push((&mut me.value, false));
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &mut s.entries {
                    if let cel::common::ast::EntryExpr::StructField(f) = &mut entry.expr {
                        stack.push((&mut f.value, false));
                    }
                }
            }
            Expr::Select(s) => stack.push((&mut s.operand, false)),
            _ => {}
        }
    }
}

/// The policy-file position of a syntax error in the expression written at `span`: the
/// expression's own line and column (in characters), as a byte of `text`, mapped to the byte of the file that
/// wrote it ([`crate::yaml::position_in_scalar`]); the start of the node where the two do
/// not line up.
pub(crate) fn error_position(
    source: &SourceFile,
    span: Span,
    text: &str,
    e: &SyntaxError,
) -> LineCol {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line_text = text[line_start..].split('\n').next().unwrap_or("");
    // The parser's columns count characters.
    let col = line_text
        .char_indices()
        .nth(e.column)
        .map_or(line_text.len(), |(i, _)| i);
    crate::yaml::position_in_scalar(source, span, text, line_start + col)
        .unwrap_or_else(|| source.line_col(span.start))
}

/// The diagnostic for a syntax error in the expression written at `span` in `source`.
pub(crate) fn syntax_diagnostic(
    source: &SourceFile,
    span: Span,
    what: &str,
    text: &str,
    e: &SyntaxError,
) -> Diagnostic {
    let at = error_position(source, span, text, e);
    let mut loc = Location::at(source, span);
    loc.start = Some(at);
    Diagnostic::error(
        Code::InvalidPolicy,
        format!("{what}: CEL syntax error: {}", e.message),
        Some(loc),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_hit_is_what_a_fresh_parse_gives() {
        for text in [
            "object.spec.containers.all(c, c.image != 'x' + 'y')",
            "object.spec.containers.all(c, c.image ==)",
            &format!("{}1{}", "(".repeat(13), ")".repeat(13)),
        ] {
            let fresh = parse_uncached(text);
            assert_eq!(parse(text), fresh, "{text}");
            assert_eq!(parse(text), fresh, "{text}");
        }
    }

    #[test]
    fn a_full_memo_starts_afresh() {
        let memo: Memo<usize, usize> = Memo::new();
        let mut calls = 0;
        for k in 0..Memo::<usize, usize>::CAPACITY {
            assert_eq!(
                memo.get_or(k, || {
                    calls += 1;
                    k * 2
                }),
                k * 2
            );
        }
        assert_eq!(memo.get_or(7, || unreachable!("kept")), 14);
        assert_eq!(memo.get_or(usize::MAX, || 1), 1);
        assert_eq!(memo.map.lock().map(|m| m.len()).ok(), Some(1));
        assert_eq!(memo.get_or(7, || 15), 15, "cleared when full");
        assert_eq!(calls, Memo::<usize, usize>::CAPACITY);
    }

    #[test]
    fn long_chains_are_syntax_errors_at_the_start() {
        for text in [
            vec!["1"; 5_000].join("+"),
            vec!["'a'"; 5_000].join(" + "),
            format!("object{}", ".a".repeat(5_000)),
            vec!["1"; 40].join("+"),
        ] {
            let (p, e) = compile(&text, Span::EMPTY);
            let e = e.unwrap_or_else(|| panic!("accepted {}", &text[..40]));
            assert_eq!((e.line, e.column), (1, 0));
            assert!(e.message.contains("nested too deeply"), "{}", e.message);
            assert!(p.expr.is_err());
        }
        // Parentheses make no tree: parsed on the parser's thread, accepted.
        let (_, e) = compile(&("(".repeat(60) + "1" + &")".repeat(60)), Span::EMPTY);
        assert!(e.is_none(), "{e:?}");
    }

    /// Deep expressions from many threads at once all go through the one parser thread and
    /// each gets its own result; a deep tree refused there does not stop it.
    #[test]
    fn the_parser_thread_serves_concurrent_callers() {
        let deep = vec!["1"; 20].join("+");
        assert!(chain(&deep) >= 12);
        std::thread::scope(|s| {
            for t in 0..4 {
                let deep = &deep;
                s.spawn(move || {
                    for i in 0..25 {
                        let ok = format!("{deep} + {t} + {i}");
                        let (p, e) = compile(&ok, Span::EMPTY);
                        assert!(e.is_none(), "{e:?}");
                        assert!(p.expr.is_ok());
                        let (_, e) = compile(&format!("{deep} +"), Span::EMPTY);
                        assert!(e.is_some());
                        let (_, e) = compile(&vec!["1"; 40].join("+"), Span::EMPTY);
                        assert!(e.unwrap().message.contains("too deeply"));
                    }
                });
            }
        });
    }

    /// The error's column counts characters: text that is not ASCII before it, a second line
    /// and a quoted scalar's escapes do not move it.
    #[test]
    fn a_syntax_error_is_placed_at_its_character() {
        let text = "k: \"'\\u00e9\u{e9}' == 1 &&\\n  'ü' ==)\"\n";
        let source = SourceFile::new("p.yaml", text);
        let docs = crate::yaml::parse_documents(text, Default::default()).unwrap();
        let node = docs[0].root.get("k").unwrap();
        let (_, e) = compile_node(node);
        let e = e.unwrap();
        let at = error_position(&source, node.span, node.as_str().unwrap(), &e);
        let col = text.chars().position(|c| c == ')').unwrap() + 1;
        assert_eq!((at.line, at.column as usize), (1, col), "{e:?}");
    }

    /// The deepest expression accepted evaluates on a 2 MiB stack (a rayon worker's) in any
    /// build.
    #[test]
    fn the_deepest_accepted_expression_evaluates_on_a_worker_stack() {
        let text = vec!["1"; MAX_DEPTH - 1].join("+");
        let ok = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let (p, e) = compile(&text, Span::EMPTY);
                assert!(e.is_none(), "{e:?}");
                crate::cel::eval::Activation::new().eval(&p)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(ok, Ok(cel::Value::Int(MAX_DEPTH as i64 - 1)));
    }
}
