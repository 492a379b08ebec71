//! The one CEL environment kpol evaluates every expression in (cel.md §4.4–4.5): the `cel`
//! crate's standard library and extensions (strings, lists, math, base64), plus what Kyverno
//! and Kubernetes add at parse time — the `orValue` compatibility rewrite, `cel.bind`, a capped
//! `lists.range`, cel-go's two-variable comprehensions ([`super::two_var`]) — and the
//! functions of [`super::libs`], registered once on a shared root context that every
//! evaluation opens an inner scope of.

use std::sync::{Arc, LazyLock};

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, ListExpr, LiteralValue};
use cel::parser::Macro;
use cel::{Context, Env};

/// What `x.orValue(y)` is rewritten to (`kyverno/kyverno:pkg/cel/compiler/env.go`: cel-go 0.28
/// made a non-optional receiver an error; Kyverno keeps the old behaviour).
pub(crate) const OR_VALUE_COMPAT: &str = "__orValueCompat__";
/// What `lists.range(n)` is rewritten to: the same, with `n` capped (evaluation stays bounded).
pub(crate) const BOUNDED_RANGE: &str = "__kpolRange__";

type Extension = fn(&mut Env) -> Result<(), cel::DeclarationError>;

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(build_env()));

/// The root context: the environment plus kpol's functions. Built once; evaluations bind their
/// variables in an inner scope of it.
pub(crate) static ROOT: LazyLock<Context<'static, 'static>> = LazyLock::new(|| {
    let mut ctx = Context::with_env(Arc::clone(&ENV));
    super::libs::register(&mut ctx);
    ctx
});

/// The shared environment (compiling needs it for its macros).
pub fn env() -> &'static Env {
    &ENV
}

fn build_env() -> Env {
    let mut env = Env::stdlib();
    // cel-go keeps the last entry of a repeated map key; Kubernetes compiles with cel-go.
    env.set_error_on_duplicate_map_keys(false);
    let extensions: [Extension; 7] = [
        cel::extensions::strings,
        cel::extensions::lists,
        cel::extensions::math,
        cel::extensions::encoders,
        super::k8s_lists::extension,
        super::k8s_types::extension,
        super::transform::extension,
    ];
    for ext in extensions {
        // Declaration conflicts cannot happen between the crate's own libraries; ignoring the
        // result keeps a future clash from taking the whole environment down.
        let _ = env.add_extension(ext);
    }
    let _ = env.add_macro(Macro::receiver("orValue", 1, or_value_macro));
    let _ = env.add_macro(Macro::receiver("bind", 3, bind_macro));
    let _ = env.add_macro(Macro::receiver("range", 1, range_macro));
    for m in super::two_var::macros() {
        let _ = env.add_macro(m);
    }
    env
}

/// `x.orValue(y)` → `__orValueCompat__(x, y)` (cel.md §4.4).
fn or_value_macro(
    helper: &mut cel::parser::MacroExprHelper<'_>,
    target: &mut Option<cel::IdedExpr>,
    args: &mut Vec<cel::IdedExpr>,
) -> Result<Option<cel::IdedExpr>, cel::ParseError> {
    let (Some(t), Some(a)) = (target.take(), args.pop()) else {
        return Ok(None);
    };
    Ok(Some(helper.next_expr(Expr::Call(CallExpr {
        func_name: OR_VALUE_COMPAT.to_owned(),
        target: None,
        args: vec![t, a],
    }))))
}

fn is_ident(target: &Option<cel::IdedExpr>, name: &str) -> bool {
    matches!(target, Some(t) if matches!(&t.expr, Expr::Ident(i) if i == name))
}

/// `cel.bind(v, init, expr)` (cel-go `ext.Bindings`): a comprehension over an empty list whose
/// accumulator is `v`, so `expr` sees `v` bound to `init`.
fn bind_macro(
    helper: &mut cel::parser::MacroExprHelper<'_>,
    target: &mut Option<cel::IdedExpr>,
    args: &mut Vec<cel::IdedExpr>,
) -> Result<Option<cel::IdedExpr>, cel::ParseError> {
    if !is_ident(target, "cel") {
        return Ok(None);
    }
    let (Some(result), Some(init), Some(var)) = (args.pop(), args.pop(), args.pop()) else {
        return Ok(None);
    };
    let Expr::Ident(name) = &var.expr else {
        return Err(helper.new_error(
            var.id,
            "cel.bind() variable name must be a simple identifier",
        ));
    };
    let name = name.clone();
    let bind = ComprehensionExpr {
        iter_range: helper.next_expr(Expr::List(ListExpr::new(Vec::new()))),
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: name.clone(),
        accu_init: init,
        loop_cond: helper.next_expr(Expr::Literal(LiteralValue::Boolean(false.into()))),
        loop_step: helper.next_expr(Expr::Ident(name)),
        result,
    };
    Ok(Some(helper.next_expr(Expr::Comprehension(Box::new(bind)))))
}

/// `lists.range(n)` → `__kpolRange__(n)`, which refuses huge ranges.
fn range_macro(
    helper: &mut cel::parser::MacroExprHelper<'_>,
    target: &mut Option<cel::IdedExpr>,
    args: &mut Vec<cel::IdedExpr>,
) -> Result<Option<cel::IdedExpr>, cel::ParseError> {
    if !is_ident(target, "lists") {
        return Ok(None);
    }
    let Some(n) = args.pop() else {
        return Ok(None);
    };
    Ok(Some(helper.next_expr(Expr::Call(CallExpr {
        func_name: BOUNDED_RANGE.to_owned(),
        target: None,
        args: vec![n],
    }))))
}
