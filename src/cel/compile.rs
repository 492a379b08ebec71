//! Compiling one CEL expression written in a policy: parse once (with the environment's
//! macros), instrument every comprehension with the evaluation budget, and turn a syntax error
//! into a diagnostic at the expression's line:column in the policy file (cel.md §4.4).

use cel::IdedExpr;
use cel::common::ast::{CallExpr, Expr};

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::source::{LineCol, SourceFile, Span};
use crate::yaml::Node;

/// The function every comprehension's range goes through (see [`super::budget`]).
pub const BUDGET: &str = "__kpolBudget__";

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
pub fn compile_node(node: &Node) -> (Program, Option<SyntaxError>) {
    let text = node.as_str().unwrap_or("");
    compile(text, node.span)
}

fn parse(text: &str) -> Result<IdedExpr, SyntaxError> {
    let parsed = super::env::env().parser().parse_with_source_info(text);
    match parsed {
        Ok((mut expr, _)) => {
            let mut next_id = u64::MAX / 2;
            instrument(&mut expr, &mut next_id);
            Ok(expr)
        }
        Err(errors) => {
            let first = errors.errors.first();
            Err(SyntaxError {
                line: first.map_or(1, |e| usize::try_from(e.pos.0).unwrap_or(1).max(1)),
                // The parser's columns are 1-based.
                column: first.map_or(0, |e| usize::try_from(e.pos.1 - 1).unwrap_or(0)),
                message: first.map_or_else(|| "syntax error".to_owned(), |e| e.msg.clone()),
            })
        }
    }
}

/// Wraps the range of every comprehension that iterates (not `cel.bind`'s empty one) in
/// `__kpolBudget__(…)`, so the iterations of one evaluation are counted and capped.
fn instrument(e: &mut IdedExpr, next_id: &mut u64) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &mut e.expr {
            Expr::Call(c) => {
                if let Some(t) = c.target.as_deref_mut() {
                    stack.push(t);
                }
                stack.extend(c.args.iter_mut());
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
                stack.push(&mut c.iter_range);
                stack.push(&mut c.accu_init);
                stack.push(&mut c.loop_cond);
                stack.push(&mut c.loop_step);
                stack.push(&mut c.result);
            }
            Expr::List(l) => stack.extend(l.elements.iter_mut()),
            Expr::Map(m) => {
                for entry in &mut m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                        stack.push(&mut me.key);
                        stack.push(&mut me.value);
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &mut s.entries {
                    if let cel::common::ast::EntryExpr::StructField(f) = &mut entry.expr {
                        stack.push(&mut f.value);
                    }
                }
            }
            Expr::Select(s) => stack.push(&mut s.operand),
            _ => {}
        }
    }
}

/// The policy-file position of a syntax error in the expression written at `span`: the
/// expression's own line and column mapped into the file by finding the text around the error
/// in the node's source (exact for plain, quoted and literal-block scalars; folded scalars map
/// to the line holding that text).
pub fn error_position(source: &SourceFile, span: Span, text: &str, e: &SyntaxError) -> LineCol {
    let start = source.line_col(span.start);
    let line_text = text.lines().nth(e.line.saturating_sub(1)).unwrap_or("");
    let col = e.column.min(line_text.len());
    let col = (0..=col)
        .rev()
        .find(|c| line_text.is_char_boundary(*c))
        .unwrap_or(0);
    let tail = &line_text[col..];
    let needle: String = tail.chars().take_while(|c| !c.is_whitespace()).collect();
    let written = source.slice(span);
    // Search from the start of the expression's line `e.line` in the written text.
    let found = if needle.is_empty() {
        None
    } else {
        let head: String = line_text[..col].trim_start().chars().collect();
        let probe = format!("{head}{needle}");
        written
            .find(&probe)
            .map(|at| at + head.len())
            .or_else(|| written.find(&needle))
    };
    match found {
        Some(at) => source.line_col(span.start + u32::try_from(at).unwrap_or(0)),
        None => start,
    }
}

/// The diagnostic for a syntax error in the expression written at `span` in `source`.
pub fn syntax_diagnostic(
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
