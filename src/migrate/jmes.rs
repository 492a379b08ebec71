//! Kyverno's `{{ }}` JMESPath, the part of it that has a faithful CEL spelling: paths from
//! `request.object`, `request.oldObject`, `request.operation`/`namespace`/`name`/`userInfo`,
//! the foreach `element` and the rule's context variables; projections and filters over
//! lists; literals, comparisons, `&&`, `||` (a default), `!`; `length`, `to_string`,
//! `contains`, `starts_with`, `ends_with`, `split` (by a literal), `join` (by a literal),
//! `sort`. Anything else is refused with its reason.
//!
//! JMESPath gives `null` for a missing field where CEL fails, so every path carries its
//! presence tests (`guards`): a comparison sees `null` where the path is missing, and a
//! condition whose key is missing is false (Kyverno: a null key meets no operator).

use ::jmespath::ast::{Ast, Comparator};

use crate::source::Span;

use super::Blocked;
use super::cel_text::{and, has, paren, quote, select};

/// A translated expression: its CEL text, the presence tests it needs, and whether it is a
/// list.
#[derive(Clone, Debug)]
pub(crate) struct Tr {
    pub(crate) guards: Vec<String>,
    pub(crate) expr: String,
    pub(crate) list: bool,
    /// A boolean (a comparison, `&&`, `!`, a predicate function).
    pub(crate) boolean: bool,
    /// A flattened projection of lists (`a[].b[]`), which CEL can only test element by
    /// element; `expr` is then [`FLATTENED`].
    pub(crate) nest: Option<Box<Nest>>,
}

/// `outer[].inner[]`: the lists `inner` (an expression of `var`) of the elements of `outer`.
#[derive(Clone, Debug)]
pub(crate) struct Nest {
    pub(crate) outer: String,
    pub(crate) var: String,
    pub(crate) inner: Tr,
}

/// The text of a flattened list used where only a value would do; an expression holding it
/// is refused.
const FLATTENED: &str = "<flattened list>";

/// The refusal of an expression that uses a flattened list of lists as a value.
fn flattened_value(text: &str, span: Span) -> Blocked {
    Blocked::new(
        span,
        format!(
            "`{}`: a flattened list of lists is used as a value; standard CEL has no flatten",
            text.trim()
        ),
    )
}

impl Tr {
    /// Whether the expression or one of its guards holds a flattened list as a value.
    fn flattens(&self) -> bool {
        self.expr.contains(FLATTENED) || self.guards.iter().any(|g| g.contains(FLATTENED))
    }

    fn plain(expr: String) -> Self {
        Tr {
            nest: None,
            guards: Vec::new(),
            expr,
            list: false,
            boolean: false,
        }
    }

    /// Some element satisfies `pred` (a CEL expression of `var`).
    pub(crate) fn exists(&self, var: &str, pred: &str) -> String {
        match &self.nest {
            Some(n) => format!(
                "{}.exists({}, {})",
                n.outer,
                n.var,
                and(&[
                    and(&n.inner.guards),
                    format!("{}.exists({var}, {pred})", paren(&n.inner.expr))
                ])
            ),
            None => format!("{}.exists({var}, {pred})", paren(&self.expr)),
        }
    }

    /// Every element satisfies `pred`.
    pub(crate) fn all(&self, var: &str, pred: &str) -> String {
        match &self.nest {
            Some(n) => format!(
                "{}.all({}, {})",
                n.outer,
                n.var,
                super::cel_text::or(&[
                    super::cel_text::not(&and(&n.inner.guards)),
                    format!("{}.all({var}, {pred})", paren(&n.inner.expr))
                ])
            ),
            None => format!("{}.all({var}, {pred})", paren(&self.expr)),
        }
    }

    /// `item` is an element.
    pub(crate) fn has_item(&self, item: &str) -> String {
        match &self.nest {
            Some(_) => self.exists("y", &format!("y == {}", paren(item))),
            None => format!("{} in {}", paren(item), paren(&self.folded())),
        }
    }

    /// The list as one CEL list: a flattened one through the lists library's `flatten()`
    /// (Kyverno's CEL has it), the inner lists that are missing skipped as JMESPath does.
    pub(crate) fn flat(&self) -> String {
        match &self.nest {
            Some(n) => format!(
                "{}.map({}, {} ? {} : []).flatten()",
                n.outer,
                n.var,
                and(&n.inner.guards),
                paren(&n.inner.expr)
            ),
            None => paren(&self.expr),
        }
    }

    /// The number of elements.
    pub(crate) fn size(&self) -> String {
        match &self.nest {
            Some(n) => format!(
                "{}.map({}, {} ? size({}) : 0).sum()",
                n.outer,
                n.var,
                and(&n.inner.guards),
                n.inner.expr
            ),
            None => format!("size({})", self.expr),
        }
    }

    fn boolean(expr: String) -> Self {
        Tr {
            boolean: true,
            ..Tr::plain(expr)
        }
    }

    /// As a JMESPath truth value: a boolean as it is; anything else true when present (an
    /// empty string, list or map is false).
    pub(crate) fn truthy(&self) -> String {
        if self.boolean {
            return and(&[and(&self.guards), self.expr.clone()]);
        }
        let nonempty = if self.list {
            format!("size({}) > 0", self.expr)
        } else {
            format!("{} != null", super::cel_text::nullable(&self.expr))
        };
        and(&[and(&self.guards), nonempty])
    }

    /// The expression with its guards folded in: `null` where a path is missing.
    pub(crate) fn folded(&self) -> String {
        self.folded_or("null")
    }

    /// The expression, or `default` where a path is missing.
    pub(crate) fn folded_or(&self, default: &str) -> String {
        if self.guards.is_empty() {
            return self.expr.clone();
        }
        // JMESPath reads an explicit null as missing; with a default other than null the
        // difference shows.
        let mut guards = self.guards.clone();
        if default != "null" {
            guards.push(format!("{} != null", super::cel_text::nullable(&self.expr)));
        }
        let then = if default == "null" {
            super::cel_text::nullable(&self.expr)
        } else {
            self.expr.clone()
        };
        format!("({} ? {then} : {default})", and(&guards))
    }
}

/// What names mean in the rule being converted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Translator {
    /// The foreach element's CEL name, inside a foreach.
    pub(crate) element: Option<String>,
    /// The rule's context variables (converted to `variables.NAME`).
    pub(crate) variables: Vec<String>,
    /// Those of them that always hold a list.
    pub(crate) list_variables: Vec<String>,
    /// The expressions substituted into the pattern being translated: Kyverno resolves them
    /// all before the walk, so a missing one is an error whatever the walk would find.
    pub(crate) substituted: std::cell::RefCell<Vec<String>>,
    /// `to_upper`/`to_lower` may be translated: set only while a condition operand is
    /// translated whose result is compared with ASCII literals alone (see
    /// [`case_fold_shape`]).
    pub(crate) case_fold: std::cell::Cell<bool>,
    /// Set while the operands of deny conditions are translated: Kyverno substitutes them
    /// all before evaluating, and a path reading a key its map lacks is an error there, so
    /// each such path's presence test is recorded in [`Translator::substituted`].
    pub(crate) missing_keys_fail: std::cell::Cell<bool>,
    /// Kyverno's `images` may be read (no context entry shadows it): it becomes the variable
    /// [`super::images`] builds.
    pub(crate) images: bool,
}

impl Translator {
    /// `e` evaluated only after every substitution of the pattern resolved (a missing one
    /// is an error, as in Kyverno); the list is emptied.
    pub(crate) fn after_substitutions(&self, e: String) -> String {
        let subs = std::mem::take(&mut *self.substituted.borrow_mut());
        if subs.is_empty() {
            return e;
        }
        format!("size([{}]) >= 0 ? {} : false", subs.join(", "), paren(&e))
    }
}

impl Translator {
    /// One JMESPath expression (the text between `{{` and `}}`).
    pub(crate) fn expr(&self, text: &str, span: Span) -> Result<Tr, Blocked> {
        if text.contains("{{") {
            return self.nested(text, span, |t| self.expr(t, span));
        }
        let ast = ::jmespath::parse(text.trim()).map_err(|e| {
            Blocked::new(span, format!("the JMESPath `{text}` does not parse: {e}"))
        })?;
        let tr = self
            .ast(&ast, None)
            .map_err(|reason| Blocked::new(span, format!("`{}`: {reason}", text.trim())))?;
        if tr.nest.is_none() && tr.flattens() {
            return Err(flattened_value(text, span));
        }
        Ok(tr)
    }

    /// A JMESPath expression evaluated on the variable `root` (an API response) rather
    /// than on Kyverno's context: `root.(text)`.
    pub(crate) fn expr_over(&self, root: &str, text: &str, span: Span) -> Result<Tr, Blocked> {
        if text.contains("{{") {
            return self.nested(text, span, |t| self.expr_over(root, t, span));
        }
        let ast = ::jmespath::parse(text.trim()).map_err(|e| {
            Blocked::new(span, format!("the JMESPath `{text}` does not parse: {e}"))
        })?;
        let wrapped = Ast::Subexpr {
            offset: 0,
            lhs: Box::new(Ast::Field {
                offset: 0,
                name: root.to_owned(),
            }),
            rhs: Box::new(ast),
        };
        let tr = self
            .ast(&wrapped, None)
            .map_err(|reason| Blocked::new(span, format!("`{}`: {reason}", text.trim())))?;
        if tr.nest.is_some() || tr.flattens() {
            return Err(flattened_value(text, span));
        }
        Ok(tr)
    }

    /// A JMESPath text holding `{{ }}` (Kyverno substitutes the innermost first, as text: a
    /// string as it is, `null` for a missing value, and the outer expression is read from the
    /// result): each nested one must lie in a raw string literal (`'…'`) or a quoted name
    /// (`"…"`), and becomes a concatenation with its text there. Its text holding that
    /// literal's delimiter or a backslash (which would change what Kyverno parses) is an
    /// error. `translate` is the outer translation of the text with the nested ones marked.
    fn nested(
        &self,
        text: &str,
        span: Span,
        translate: impl Fn(&str) -> Result<Tr, Blocked>,
    ) -> Result<Tr, Blocked> {
        let refuse = |why: &str| {
            Blocked::new(
                span,
                format!("`{}`: a nested `{{{{ }}}}` {why}", text.trim()),
            )
        };
        if text.contains("#kpol") {
            return Err(refuse("beside the text `#kpol` is not translated"));
        }
        let pieces = split_template(text).ok_or_else(|| refuse("is unbalanced"))?;
        let mut marked = String::new();
        let mut inner = Vec::new();
        let mut originals = Vec::new();
        for p in &pieces {
            match p {
                Piece::Text(t) => marked.push_str(t),
                Piece::Expr(e) => {
                    marked.push_str(&nested_mark(inner.len()));
                    originals.push(format!("{{{{{e}}}}}"));
                    inner.push(self.template_text(&format!("{{{{{e}}}}}"), span, true)?);
                }
            }
        }
        let (contexts, holding) = mark_contexts(&marked, inner.len());
        let mut values = Vec::new();
        for (n, (value, ctx)) in inner.iter().zip(&contexts).enumerate() {
            let Some(q) = ctx else {
                return Err(refuse(
                    "outside a string literal or a quoted name is not translated",
                ));
            };
            let v = format!("nested{n}");
            let why = format!(
                "a value substituted into `{}` holds {q} or a backslash",
                text.trim()
            );
            values.push(format!(
                "cel.bind({v}, {value}, ({v}.contains({}) || {v}.contains('\\\\')) ? dyn({}) : {v})",
                quote(&q.to_string()),
                super::cel_text::runtime_error(&why)
            ));
        }
        let allowed: Vec<String> = holding.iter().map(|h| quote(h)).collect();
        let tr = translate(&marked).map_err(|mut b| {
            for (n, o) in originals.iter().enumerate() {
                b.reason = b.reason.replace(&nested_mark(n), o);
            }
            b
        })?;
        let splice = |e: &str| {
            splice_marks(e, &allowed, &values)
                .ok_or_else(|| refuse("is used where its text would be read as more than a string"))
        };
        fn walk(tr: &Tr, splice: &dyn Fn(&str) -> Result<String, Blocked>) -> Result<Tr, Blocked> {
            let guards = tr
                .guards
                .iter()
                .map(|g| splice(g))
                .collect::<Result<Vec<_>, _>>()?;
            let nest = match &tr.nest {
                Some(n) => Some(Box::new(Nest {
                    outer: splice(&n.outer)?,
                    var: n.var.clone(),
                    inner: walk(&n.inner, splice)?,
                })),
                None => None,
            };
            Ok(Tr {
                guards,
                expr: splice(&tr.expr)?,
                list: tr.list,
                boolean: tr.boolean,
                nest,
            })
        }
        walk(&tr, &splice)
    }

    /// A string holding `{{ }}`: one expression alone is its value (folded), text around
    /// them is a string concatenation.
    pub(crate) fn template(&self, s: &str, span: Span) -> Result<String, Blocked> {
        self.template_with(s, span, false, |x| format!("string({x})"))
    }

    /// [`Translator::template`] where a piece inside text may be null: Kyverno writes a
    /// null (or missing) value spliced into text as `null`, so each piece is
    /// `(X == null ? 'null' : string(X))`. (A map or list spliced into text is written as
    /// JSON by Kyverno and is an error in CEL.)
    pub(crate) fn template_kyverno_text(&self, s: &str, span: Span) -> Result<String, Blocked> {
        self.template_text(s, span, false)
    }

    /// [`Translator::template_kyverno_text`]; with `always_text` a lone `{{ }}` is text too
    /// (it was spliced into a patch's text before the patch was read).
    pub(crate) fn template_text(
        &self,
        s: &str,
        span: Span,
        always_text: bool,
    ) -> Result<String, Blocked> {
        self.template_with(s, span, always_text, |x| {
            format!(
                "({} == null ? 'null' : string({x}))",
                super::cel_text::nullable(x)
            )
        })
    }

    /// A `{{ }}` string as CEL: a lone expression is its value (folded) unless
    /// `always_text`; otherwise the text pieces quoted and each expression `X` written as
    /// `piece(X)`, joined by `+`.
    fn template_with(
        &self,
        s: &str,
        span: Span,
        always_text: bool,
        piece: impl Fn(&str) -> String,
    ) -> Result<String, Blocked> {
        let pieces = split_template(s)
            .ok_or_else(|| Blocked::new(span, format!("unbalanced `{{{{ }}}}` in `{s}`")))?;
        if let [Piece::Expr(e)] = pieces.as_slice()
            && !always_text
        {
            return Ok(self.expr(e, span)?.folded());
        }
        let mut parts = Vec::new();
        for p in pieces {
            match p {
                Piece::Text(t) => parts.push(quote(t)),
                Piece::Expr(e) => parts.push(piece(&self.expr(e, span)?.folded())),
            }
        }
        Ok(parts.join(" + "))
    }

    /// [`Translator::template`] without presence guards: a missing path is an error, as
    /// a failed substitution is in Kyverno (inside patterns).
    pub(crate) fn template_unguarded(&self, s: &str, span: Span) -> Result<String, Blocked> {
        let pieces = split_template(s)
            .ok_or_else(|| Blocked::new(span, format!("unbalanced `{{{{ }}}}` in `{s}`")))?;
        let mut parts = Vec::new();
        for p in &pieces {
            match p {
                Piece::Text(t) => parts.push(quote(t)),
                Piece::Expr(e) => {
                    let tr = self.expr(e, span)?;
                    if tr.nest.is_some() {
                        return Err(Blocked::new(
                            span,
                            format!("`{e}`: a flattened list of lists is used as a value"),
                        ));
                    }
                    self.substituted.borrow_mut().push(tr.expr.clone());
                    parts.push(if pieces.len() == 1 {
                        tr.expr
                    } else {
                        format!("string({})", tr.expr)
                    });
                }
            }
        }
        Ok(parts.join(" + "))
    }

    /// A value of a condition or a pattern scalar: a template, or a literal.
    pub(crate) fn operand(&self, node: &crate::yaml::Node) -> Result<Tr, Blocked> {
        if let crate::yaml::Value::Str(s) = &node.value
            && s.contains("{{")
        {
            let pieces = split_template(s).ok_or_else(|| {
                Blocked::new(node.span, format!("unbalanced `{{{{ }}}}` in `{s}`"))
            })?;
            if self.missing_keys_fail.get() {
                for p in &pieces {
                    if let Piece::Expr(e) = p
                        && let Some(present) = key_presence(e, self.element.as_deref(), self.images)
                    {
                        let why = format!(
                            "failed to substitute variables in deny conditions: `{}` reads a missing key",
                            e.trim()
                        );
                        let fail = format!("dyn({})", super::cel_text::runtime_error(&why));
                        self.substituted
                            .borrow_mut()
                            .push(super::cel_text::or(&[present, fail]));
                    }
                }
            }
            if let [Piece::Expr(e)] = pieces.as_slice() {
                return self.expr(e, node.span);
            }
            return Ok(Tr::plain(self.template(s, node.span)?));
        }
        let json = node.to_json();
        Ok(Tr {
            nest: None,
            guards: Vec::new(),
            list: json.is_array(),
            boolean: json.is_boolean(),
            expr: literal(&json),
        })
    }

    fn ast(&self, ast: &Ast, current: Option<&Tr>) -> Result<Tr, String> {
        match ast {
            Ast::Literal { value, .. } => {
                let json = serde_json::to_value(&**value).map_err(|e| e.to_string())?;
                Ok(Tr {
                    nest: None,
                    guards: Vec::new(),
                    list: json.is_array(),
                    boolean: json.is_boolean(),
                    expr: literal(&json),
                })
            }
            Ast::Identity { .. } => match current {
                Some(c) => Ok(Tr {
                    guards: Vec::new(),
                    ..c.clone()
                }),
                None => Err("`@` outside a projection or pipe".to_owned()),
            },
            Ast::Field { .. } | Ast::Index { .. } => self.path(ast, current),
            Ast::Subexpr { lhs, rhs, .. } => {
                if path_only(ast) {
                    return self.path(ast, current);
                }
                let l = self.ast(lhs, current)?;
                let r = self.ast(rhs, Some(&l))?;
                let mut guards = l.guards;
                guards.extend(r.guards);
                Ok(Tr { guards, ..r })
            }
            Ast::MultiList { elements, .. } => {
                let items: Vec<String> = elements
                    .iter()
                    .map(|e| self.ast(e, current).map(|t| t.folded()))
                    .collect::<Result<_, _>>()?;
                Ok(Tr {
                    nest: None,
                    guards: Vec::new(),
                    expr: format!("[{}]", items.join(", ")),
                    list: true,
                    boolean: false,
                })
            }
            Ast::Flatten { node, .. } => self.flatten(node, current),
            Ast::Projection { lhs, rhs, .. } => {
                let mut base = self.ast(lhs, current)?;
                if base.nest.is_some() {
                    if matches!(rhs.as_ref(), Ast::Identity { .. }) {
                        return Ok(base);
                    }
                    // A projection over `a[].b[]`: over the one list the lists library's
                    // `flatten()` makes of it (a non-list element kept, as JMESPath does).
                    base = Tr {
                        guards: Vec::new(),
                        expr: base.flat(),
                        list: true,
                        boolean: false,
                        nest: None,
                    };
                }
                let var = format!("x{}", depth(current));
                let elem = Tr::plain(var.clone());
                let (filter, then) = match rhs.as_ref() {
                    Ast::Condition {
                        predicate, then, ..
                    } => (Some(self.ast(predicate, Some(&elem))?), then.as_ref()),
                    other => (None, other),
                };
                let mut expr = paren(&base.expr);
                if let Some(f) = filter {
                    expr = format!("{expr}.filter({var}, {})", f.truthy());
                }
                if !matches!(then, Ast::Identity { .. }) {
                    let t = self.ast(then, Some(&elem))?;
                    if t.list {
                        return Err(
                            "a projection onto lists needs flattening, which standard CEL lacks"
                                .to_owned(),
                        );
                    }
                    if !t.guards.is_empty() {
                        expr = format!("{expr}.filter({var}, {})", and(&t.guards));
                    }
                    expr = format!("{expr}.map({var}, {})", t.expr);
                }
                Ok(Tr {
                    nest: None,
                    guards: base.guards,
                    expr,
                    list: true,
                    boolean: false,
                })
            }
            Ast::Comparison {
                comparator,
                lhs,
                rhs,
                ..
            } => {
                let l = self.ast(lhs, current)?;
                let r = self.ast(rhs, current)?;
                let op = match comparator {
                    Comparator::Equal => "==",
                    Comparator::NotEqual => "!=",
                    Comparator::LessThan => "<",
                    Comparator::LessThanEqual => "<=",
                    Comparator::GreaterThan => ">",
                    Comparator::GreaterThanEqual => ">=",
                };
                Ok(Tr::boolean(format!(
                    "{} {op} {}",
                    paren(&l.folded()),
                    paren(&r.folded())
                )))
            }
            Ast::And { lhs, rhs, .. } => {
                let l = self.ast(lhs, current)?;
                let r = self.ast(rhs, current)?;
                Ok(Tr::boolean(and(&[l.truthy(), r.truthy()])))
            }
            Ast::Or { lhs, rhs, .. } => {
                let l = self.ast(lhs, current)?;
                let r = self.ast(rhs, current)?;
                if l.boolean && r.boolean {
                    return Ok(Tr::boolean(super::cel_text::or(&[l.truthy(), r.truthy()])));
                }
                // A flattened list is empty where its paths are missing already.
                if l.nest.is_some() && r.list && r.expr == "[]" {
                    return Ok(l);
                }
                // `a || default`: the default where `a` is missing.
                Ok(Tr {
                    nest: None,
                    guards: Vec::new(),
                    list: l.list && r.list,
                    boolean: false,
                    expr: l.folded_or(&paren(&r.folded())),
                })
            }
            Ast::Not { node, .. } => {
                let n = self.ast(node, current)?;
                Ok(Tr::boolean(super::cel_text::not(&n.truthy())))
            }
            Ast::Function { name, args, .. } => self.function(name, args, current),
            // `m.*`: the values of a map (null for anything else), in CEL's key order where
            // Go's is random.
            Ast::ObjectValues { node, .. } => {
                let t = self.ast(node, current)?;
                if t.nest.is_some() || t.list {
                    return Err("`*` over a list is not translated".to_owned());
                }
                let m = paren(&t.expr);
                let var = format!("v{}", depth(current));
                let mut guards = t.guards;
                guards.push(format!("type({m}) == map"));
                Ok(Tr {
                    nest: None,
                    guards,
                    expr: format!("{m}.map({var}, {m}[{var}])"),
                    list: true,
                    boolean: false,
                })
            }
            _ => Err("this JMESPath form has no translation here".to_owned()),
        }
    }

    /// `x[]`: a list of lists written as a list (`[a, b][]`) is their concatenation; a path
    /// to a list of objects is that list.
    fn flatten(&self, node: &Ast, current: Option<&Tr>) -> Result<Tr, String> {
        let (base, elements) = match node {
            Ast::MultiList { elements, .. } => (current.cloned(), elements),
            Ast::Subexpr { lhs, rhs, .. } => match rhs.as_ref() {
                Ast::MultiList { elements, .. } => (Some(self.ast(lhs, current)?), elements),
                _ => return self.flatten_path(node, current),
            },
            _ => return self.flatten_path(node, current),
        };
        let mut guards = Vec::new();
        let mut parts = Vec::new();
        // The groups of `images` are maps (or missing): JMESPath's flatten keeps an element
        // that is not a list, null included, as it is.
        let groups = self.images
            && base
                .as_ref()
                .is_some_and(|b| b.expr == select("variables", super::images::NAME));
        for e in elements {
            let t = self.ast(e, base.as_ref())?;
            if groups && matches!(e, Ast::Field { .. }) {
                parts.push(format!("[{}]", t.folded()));
            } else {
                parts.push(t.folded_or("[]"));
            }
        }
        if let Some(b) = base {
            guards = b.guards;
        }
        Ok(Tr {
            nest: None,
            guards,
            expr: parts.join(" + "),
            list: true,
            boolean: false,
        })
    }

    fn flatten_path(&self, node: &Ast, current: Option<&Tr>) -> Result<Tr, String> {
        if let Ast::Projection { lhs, rhs, .. } = node {
            // `a[].b[]`: kept as the nesting it is, for the consumers that can test it
            // element by element (membership, any, all, size); standard CEL has no flatten.
            let base = self.ast(lhs, current)?;
            let var = format!("x{}", depth(current));
            let elem = Tr::plain(var.clone());
            let (filter, then) = match rhs.as_ref() {
                Ast::Condition {
                    predicate, then, ..
                } => (Some(self.ast(predicate, Some(&elem))?), then.as_ref()),
                other => (None, other),
            };
            let mut outer = paren(&base.folded_or("[]"));
            if let Some(f) = filter {
                outer = format!("{outer}.filter({var}, {})", f.truthy());
            }
            let mut inner = self.ast(then, Some(&elem))?;
            // JMESPath's flatten keeps an element that is not a list as it is.
            if matches!(then, Ast::Identity { .. }) {
                inner.expr = format!("dyn(type({var}) == list ? {var} : [{var}])");
            }
            if inner.nest.is_some() {
                return Err("flattening more than two levels of lists is not translated".to_owned());
            }
            return Ok(Tr {
                guards: Vec::new(),
                expr: FLATTENED.to_owned(),
                list: true,
                boolean: false,
                nest: Some(Box::new(Nest { outer, var, inner })),
            });
        }
        if matches!(node, Ast::Flatten { .. }) {
            return Err("flattening a flattened list is not translated".to_owned());
        }
        let t = self.ast(node, current)?;
        Ok(Tr { list: true, ..t })
    }

    fn function(&self, name: &str, args: &[Ast], current: Option<&Tr>) -> Result<Tr, String> {
        let a: Vec<Tr> = args
            .iter()
            .map(|x| self.ast(x, current))
            .collect::<Result<_, _>>()?;
        let guards: Vec<String> = a.iter().flat_map(|t| t.guards.clone()).collect();
        let (expr, list, boolean) = match (name, a.as_slice()) {
            ("length", [x]) => (x.size(), false, false),
            // A list stays itself (a flattened one too).
            ("to_array", [x]) if x.list => return Ok(x.clone()),
            ("keys", [x]) => (format!("{}.map(k, k)", paren(&x.expr)), true, false),
            ("to_string", [x]) => (format!("string({})", x.expr), false, false),
            ("contains", [x, y]) if x.list => (x.has_item(&y.expr), false, true),
            ("contains", [x, y]) if x.expr.starts_with('\'') => (
                format!("{}.contains({})", paren(&x.expr), y.expr),
                false,
                true,
            ),
            // A list or a string, known only at run time.
            ("contains", [x, y]) => (
                format!(
                    "type({x}) == list ? {y} in {x} : string({x}).contains({y})",
                    x = paren(&x.expr),
                    y = paren(&y.expr)
                ),
                false,
                true,
            ),
            ("starts_with", [x, y]) => (
                format!("{}.startsWith({})", paren(&x.expr), y.expr),
                false,
                true,
            ),
            ("ends_with", [x, y]) => (
                format!("{}.endsWith({})", paren(&x.expr), y.expr),
                false,
                true,
            ),
            // Go's strings.Split and CEL's split agree for a non-empty separator (an empty
            // one splits into code points in both, but only a literal is checked here).
            ("split", [x, sep]) if x.nest.is_none() && !x.list && nonempty_string(&args[1]) => (
                format!("{}.split({})", paren(&x.expr), sep.expr),
                true,
                false,
            ),
            // Both take a list of strings only (an error otherwise).
            ("join", [glue, x]) if x.nest.is_none() && x.list && string_literal(&args[0]) => (
                format!("{}.join({})", paren(&x.expr), glue.expr),
                false,
                false,
            ),
            // Both sort a list of numbers or of strings, and fail on anything else.
            ("sort", [x]) if x.list => (format!("{}.sort()", x.flat()), true, false),
            // Go's strings.ToUpper maps rune by rune; the runes it maps into ASCII are the
            // ASCII letters and `ı` → `I`, `ſ` → `S` (ToLower: `K` (Kelvin) → `k`, `İ` → `i`),
            // found by enumerating every rune. CEL's `upperAscii` after those two
            // replacements gives the same text wherever Go's result is ASCII, and a
            // non-ASCII text wherever Go's is not: the same outcome against ASCII literals,
            // the only use `case_fold` allows. A non-string is an error in both.
            ("to_upper", [x]) if self.case_fold.get() && x.nest.is_none() => (
                format!(
                    "{}.replace('\u{131}', 'I').replace('\u{17f}', 'S').upperAscii()",
                    paren(&x.expr)
                ),
                false,
                false,
            ),
            ("to_lower", [x]) if self.case_fold.get() && x.nest.is_none() => (
                format!(
                    "{}.replace('\u{212a}', 'k').replace('\u{130}', 'i').lowerAscii()",
                    paren(&x.expr)
                ),
                false,
                false,
            ),
            ("to_upper" | "to_lower", _) => {
                return Err(format!(
                    "the function `{name}` is translated only where its result is compared with ASCII literals (JMESPath's is Unicode, CEL's `upperAscii`/`lowerAscii` are ASCII only)"
                ));
            }
            ("regex_replace_all", [_, x, _]) => {
                let pattern = literal_string(&args[0]).ok_or(
                    "`regex_replace_all` is translated only with a literal regex".to_owned(),
                )?;
                let repl = literal_string(&args[2]).ok_or(
                    "`regex_replace_all` is translated only with a literal replacement".to_owned(),
                )?;
                let groups = regex::Regex::new(&pattern)
                    .map_err(|e| format!("the regex `{pattern}` is not translated: {e}"))?
                    .captures_len()
                    - 1;
                let repl = go_replacement(&repl, groups)?;
                let src = format!(
                    "cel.bind(s, {}, type(s) == string ? s : dyn({}))",
                    x.folded(),
                    super::cel_text::runtime_error(
                        "regex_replace_all: the source is not a string (a number is not translated)"
                    )
                );
                (
                    format!(
                        "regex.replace({src}, {}, {})",
                        quote(&pattern),
                        quote(&repl)
                    ),
                    false,
                    false,
                )
            }
            ("regex_match", [p, x]) => (
                format!("string({}).matches({})", x.expr, p.expr),
                false,
                true,
            ),
            _ => return Err(format!("the function `{name}` has no translation here")),
        };
        Ok(Tr {
            nest: None,
            guards,
            expr,
            list,
            boolean,
        })
    }

    /// A chain of fields and indexes from a known root (or from `current`, inside a
    /// projection or pipe).
    fn path(&self, ast: &Ast, current: Option<&Tr>) -> Result<Tr, String> {
        let mut steps = Vec::new();
        flatten_path(ast, &mut steps)?;
        let mut steps = steps.into_iter().peekable();
        let (mut expr, mut guarded) = match current {
            Some(c) => (c.expr.clone(), true),
            None => {
                let Some(Step::Field(first)) = steps.next() else {
                    return Err("a path must start with a name".to_owned());
                };
                match first.as_str() {
                    // The empty quoted name `""`: no context entry has it, so it and any
                    // path under it are null.
                    "" => return Ok(Tr::plain("null".to_owned())),
                    "request" => {
                        let Some(Step::Field(second)) = steps.next() else {
                            return Err("`request` alone has no translation".to_owned());
                        };
                        match second.as_str() {
                            "object" => ("object".to_owned(), true),
                            "oldObject" => ("oldObject".to_owned(), true),
                            "operation" | "namespace" | "name" | "userInfo" | "kind" | "uid" => {
                                (format!("request.{second}"), false)
                            }
                            other => {
                                return Err(format!("`request.{other}` has no translation here"));
                            }
                        }
                    }
                    "element" if self.element.is_some() => {
                        (self.element.clone().unwrap_or_default(), true)
                    }
                    super::images::NAME if self.images => {
                        let v = select("variables", super::images::NAME);
                        if steps.peek().is_none() {
                            // The variable is `{}` where Kyverno has no `images`.
                            return Ok(Tr {
                                guards: vec![format!("size({v}) > 0")],
                                ..Tr::plain(v)
                            });
                        }
                        (v, true)
                    }
                    v if self.variables.iter().any(|x| x == v) => {
                        if steps.peek().is_none() && self.list_variables.iter().any(|x| x == v) {
                            return Ok(Tr {
                                list: true,
                                ..Tr::plain(select("variables", v))
                            });
                        }

                        (select("variables", v), true)
                    }
                    other => return Err(format!("the variable `{other}` has no translation here")),
                }
            }
        };
        let mut guards = Vec::new();
        for step in steps {
            match step {
                Step::Field(k) => {
                    // `object.metadata` too: autogen rewrites it to a pod template's, which
                    // may be missing.
                    if guarded {
                        guards.push(has(&expr, &k));
                    }
                    expr = select(&expr, &k);
                }
                Step::Index(i) if i >= 0 => {
                    guards.push(format!("size({expr}) > {i}"));
                    expr = format!("{expr}[{i}]");
                }
                Step::Index(_) => return Err("negative indexes are not translated".to_owned()),
            }
            guarded = true;
        }
        Ok(Tr {
            nest: None,
            guards,
            expr,
            list: false,
            boolean: false,
        })
    }
}

/// Whether a JMESPath operand uses `to_upper`/`to_lower` only where its result is the
/// operand itself: `to_upper(P)`, `P[].to_upper(@)`, either `|| LITERAL`, `P` holding no
/// other case function (so nothing computes on the folded text).
pub(crate) fn case_fold_shape(text: &str) -> bool {
    let Ok(ast) = ::jmespath::parse(text.trim()) else {
        return false;
    };
    fn folds(a: &Ast) -> bool {
        let d = format!("{a:?}");
        d.contains("\"to_upper\"") || d.contains("\"to_lower\"")
    }
    fn case_call(a: &Ast, in_projection: bool) -> bool {
        match a {
            Ast::Function { name, args, .. } if name == "to_upper" || name == "to_lower" => {
                match args.as_slice() {
                    [Ast::Identity { .. }] => in_projection,
                    [x] => !in_projection && !folds(x),
                    _ => false,
                }
            }
            _ => false,
        }
    }
    fn shape(a: &Ast) -> bool {
        match a {
            Ast::Projection { lhs, rhs, .. } => !folds(lhs) && case_call(rhs, true),
            other => case_call(other, false),
        }
    }
    match &ast {
        Ast::Or { lhs, rhs, .. } => shape(lhs) && matches!(rhs.as_ref(), Ast::Literal { .. }),
        other => shape(other),
    }
}

/// How deep in projections `current` is (for distinct iteration variable names).
fn depth(current: Option<&Tr>) -> usize {
    current.map_or(0, |c| {
        c.expr.matches(".map(").count() + c.expr.matches(".filter(").count() + 1
    })
}

/// For a `{{ }}` expression that is a path of fields and indexes from `request.object`,
/// the foreach element or a context variable: a CEL boolean that is false exactly where
/// Kyverno's JMESPath reports a missing key (a field read on a map that lacks it; a field of
/// a value that is no map, and an index out of range, are null there, not errors).
fn key_presence(text: &str, element: Option<&str>, images: bool) -> Option<String> {
    let ast = ::jmespath::parse(text.trim()).ok()?;
    if !path_only(&ast) {
        return None;
    }
    let mut steps = Vec::new();
    flatten_path(&ast, &mut steps).ok()?;
    let mut steps = steps.into_iter();
    let root = match steps.next()? {
        Step::Field(f) if f == "request" => match steps.next()? {
            Step::Field(o) if o == "object" => "object".to_owned(),
            _ => return None,
        },
        Step::Field(f) if f == "element" => element?.to_owned(),
        // Kyverno's `images` (a map, `{}` where Kyverno has none: then its first key is
        // missing, as under Kyverno's absent variable).
        Step::Field(f) if images && f == super::images::NAME => select("variables", &f),
        // Context variables and anything else: left as they are.
        _ => return None,
    };
    let steps: Vec<Step> = steps.collect();
    fn present(x: &str, steps: &[Step]) -> String {
        let Some((first, rest)) = steps.split_first() else {
            return "true".to_owned();
        };
        match first {
            Step::Field(k) => {
                let below = present(&select(x, k), rest);
                let has_key = and(&[format!("{} in {x}", quote(k)), below]);
                if x == "object" || x == select("variables", super::images::NAME) {
                    // The resource is a map, and so is `images`.
                    return has_key;
                }
                super::cel_text::or(&[format!("type({x}) != map"), has_key])
            }
            Step::Index(i) => {
                let below = present(&format!("{x}[{i}]"), rest);
                if below == "true" {
                    return below;
                }
                super::cel_text::or(&[format!("!(type({x}) == list && size({x}) > {i})"), below])
            }
        }
    }
    let p = present(&root, &steps);
    (p != "true").then_some(p)
}

/// Whether `ast` is only fields and indexes.
fn path_only(ast: &Ast) -> bool {
    match ast {
        Ast::Field { .. } | Ast::Index { .. } => true,
        Ast::Subexpr { lhs, rhs, .. } => path_only(lhs) && path_only(rhs),
        _ => false,
    }
}

enum Step {
    Field(String),
    Index(i64),
}

fn flatten_path(ast: &Ast, out: &mut Vec<Step>) -> Result<(), String> {
    match ast {
        Ast::Identity { .. } => Ok(()),
        Ast::Field { name, .. } => {
            out.push(Step::Field(name.clone()));
            Ok(())
        }
        Ast::Index { idx, .. } => {
            out.push(Step::Index(i64::from(*idx)));
            Ok(())
        }
        Ast::Subexpr { lhs, rhs, .. } => {
            flatten_path(lhs, out)?;
            flatten_path(rhs, out)
        }
        _ => Err("only field and index paths are translated here".to_owned()),
    }
}

/// A JSON value as a CEL literal.
/// A JMESPath string literal (`'x'` or `` `"x"` ``).
fn string_literal(ast: &Ast) -> bool {
    matches!(ast, Ast::Literal { value, .. } if value.is_string())
}

/// A JMESPath string literal that is not empty.
fn nonempty_string(ast: &Ast) -> bool {
    matches!(ast, Ast::Literal { value, .. } if value.as_string().is_some_and(|s| !s.is_empty()))
}

pub(crate) fn literal(v: &serde_json::Value) -> String {
    typed_literal(v).0
}

/// A JSON value as a CEL literal, and its CEL type. Kubernetes' CEL (which Kyverno's is)
/// requires the elements of a list literal, and the values of a map literal, to have one
/// type: where they do not, each is written `dyn(…)`.
fn typed_literal(v: &serde_json::Value) -> (String, String) {
    let join = |items: Vec<(String, String)>| -> (Vec<String>, String) {
        let first = items.first().map(|(_, t)| t.clone());
        if items.iter().all(|(_, t)| Some(t) == first.as_ref()) {
            let ty = first.unwrap_or_else(|| "dyn".to_owned());
            (items.into_iter().map(|(e, _)| e).collect(), ty)
        } else {
            let texts = items
                .into_iter()
                .map(|(e, _)| format!("dyn({e})"))
                .collect();
            (texts, "dyn".to_owned())
        }
    };
    match v {
        serde_json::Value::Null => ("null".to_owned(), "null".to_owned()),
        serde_json::Value::Bool(b) => (b.to_string(), "bool".to_owned()),
        serde_json::Value::Number(n) => {
            let ty = if n.is_f64() { "double" } else { "int" };
            (n.to_string(), ty.to_owned())
        }
        serde_json::Value::String(s) => (quote(s), "string".to_owned()),
        serde_json::Value::Array(a) => {
            let (texts, ty) = join(a.iter().map(typed_literal).collect());
            (format!("[{}]", texts.join(", ")), format!("list({ty})"))
        }
        serde_json::Value::Object(m) => {
            let (texts, ty) = join(m.values().map(typed_literal).collect());
            let entries: Vec<String> = m
                .keys()
                .zip(texts)
                .map(|(k, e)| format!("{}: {e}", quote(k)))
                .collect();
            (format!("{{{}}}", entries.join(", ")), format!("map({ty})"))
        }
    }
}

/// The string of a JMESPath string literal (raw `'…'` or JSON `` `"…"` ``).
fn literal_string(ast: &Ast) -> Option<String> {
    match ast {
        Ast::Literal { value, .. } => value.as_string().cloned(),
        _ => None,
    }
}

/// A Go `Regexp.ReplaceAll` template (`$N`, `${N}`, `$$`; a malformed `$` is itself) as
/// cel-go's `regex.replace` replacement (`\N`, `\\`). A group past the regex's count is
/// empty, as in Go; a named group or a group number above 9 is refused.
fn go_replacement(t: &str, groups: usize) -> Result<String, String> {
    let chars: Vec<char> = t.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            out.push_str("\\\\");
            i += 1;
            continue;
        }
        if c != '$' {
            out.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'$') {
            out.push('$');
            i += 2;
            continue;
        }
        let word = |from: usize| {
            chars[from..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .collect::<String>()
        };
        let (name, next) = if chars.get(i + 1) == Some(&'{') {
            let n = word(i + 2);
            if n.is_empty() || chars.get(i + 2 + n.chars().count()) != Some(&'}') {
                out.push('$');
                i += 1;
                continue;
            }
            let len = n.chars().count();
            (n, i + 3 + len)
        } else {
            let n = word(i + 1);
            if n.is_empty() {
                out.push('$');
                i += 1;
                continue;
            }
            let len = n.chars().count();
            (n, i + 1 + len)
        };
        let Ok(g) = name.parse::<usize>() else {
            return Err(format!(
                "the replacement `{t}` names a group (`{name}`), which is not translated"
            ));
        };
        if g <= groups {
            if g > 9 {
                return Err(format!(
                    "the replacement `{t}` refers to group {g}; CEL's reaches 9"
                ));
            }
            out.push('\\');
            out.push_str(&g.to_string());
        }
        i = next;
    }
    Ok(out)
}

/// A piece of a `{{ }}` template.
enum Piece<'a> {
    Text(&'a str),
    Expr(&'a str),
}

/// Where the `}}` closing a `{{` whose text starts `s` is: a `{{ }}` nested inside counts.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with("{{") {
            depth += 1;
            i += 2;
        } else if rest.starts_with("}}") {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
            i += 2;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

/// The mark a nested `{{ }}` leaves in its outer expression's text while that is translated.
fn nested_mark(i: usize) -> String {
    format!("#kpol{i}#")
}

/// Where in a JMESPath text each nested mark lies: in a raw string literal (`'…'`), in a
/// quoted name (`"…"`), or elsewhere (`None`); and the string literals and quoted names
/// holding marks, as their contents.
fn mark_contexts(text: &str, marks: usize) -> (Vec<Option<char>>, Vec<String>) {
    let mut ctx = vec![None; marks];
    let mut holding = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut state: Option<char> = None;
    let mut start = 0;
    while i < chars.len() {
        let c = chars[i];
        match state {
            None if c == '\'' || c == '"' || c == '`' => {
                state = Some(c);
                start = i + 1;
            }
            None if c == '#' => {
                // A mark outside any literal: `#kpolN#` (context `None`).
                i += 1;
                continue;
            }
            Some(q) if c == '\\' => {
                let _ = q;
                i += 2;
                continue;
            }
            Some(q) if c == q => {
                let body: String = chars[start..i].iter().collect();
                if q != '`' {
                    for (n, slot) in ctx.iter_mut().enumerate() {
                        if body.contains(&nested_mark(n)) {
                            *slot = Some(q);
                        }
                    }
                    if body.contains("#kpol") {
                        let content = if q == '"' {
                            serde_json::from_str::<String>(&format!("\"{body}\""))
                                .unwrap_or_default()
                        } else {
                            body.replace("\\'", "'")
                        };
                        holding.push(content);
                    }
                }
                state = None;
            }
            _ => {}
        }
        i += 1;
    }
    (ctx, holding)
}

/// `cel` with each string literal that is exactly one of `allowed` (CEL-quoted) and holds
/// nested marks rebuilt as a concatenation with the marks' values; `None` where a mark is
/// left anywhere else.
fn splice_marks(cel: &str, allowed: &[String], values: &[String]) -> Option<String> {
    let mut out = String::with_capacity(cel.len());
    let chars: Vec<char> = cel.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let lit: String = chars[i..(j + 1).min(chars.len())].iter().collect();
            i = j + 1;
            if !lit.contains("#kpol") {
                out.push_str(&lit);
                continue;
            }
            if !allowed.contains(&lit) || lit.len() < 2 {
                return None;
            }
            let mut body = lit[1..lit.len() - 1].to_owned();
            let mut parts = Vec::new();
            while let Some(at) = body.find("#kpol") {
                let tail = &body[at + 5..];
                let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
                let n: usize = digits.parse().ok()?;
                if !tail[digits.len()..].starts_with('#') {
                    return None;
                }
                if at > 0 {
                    parts.push(format!("{c}{}{c}", &body[..at]));
                }
                parts.push(values.get(n)?.clone());
                body = tail[digits.len() + 1..].to_owned();
            }
            if !body.is_empty() {
                parts.push(format!("{c}{body}{c}"));
            }
            out.push_str(&format!("({})", parts.join(" + ")));
            continue;
        }
        out.push(c);
        i += 1;
    }
    (!out.contains("#kpol")).then_some(out)
}

fn split_template(s: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            out.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let end = closing(after)?;
        out.push(Piece::Expr(after[..end].trim()));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Some(out)
}
