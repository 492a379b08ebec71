//! The `jmespath` crate's AST lowered into the shape of go-jmespath's AST, whose node kinds
//! decide which errors are swallowed (validate.md §12.1): pipes are told apart from
//! sub-expressions by the operator at the node's offset, filter/flatten/value projections
//! get their own nodes, literals become `Node`s with float numbers, and function names are
//! resolved (unknown → compile error).

use ::jmespath::Variable;
use ::jmespath::ast::{Ast, Comparator};

use super::functions::{self, Func};
use super::value;
use super::{Error, MAX_DEPTH};
use crate::yaml::Node;

#[derive(Clone, Debug)]
pub(crate) enum Ir {
    Identity,
    Field(String),
    Index(i64),
    Literal(Node),
    /// `a.b`, `a[0]`: errors of the left side propagate.
    Sub(Box<Ir>, Box<Ir>),
    /// `a | b`: a missing key on the left gives null.
    Pipe(Box<Ir>, Box<Ir>),
    /// `a[*].b`, `a[].b`, slices: a missing key on the left gives null.
    Projection(Box<Ir>, Box<Ir>),
    /// `a[?cond].b`: any error on the left gives null.
    Filter(Box<Ir>, Box<Ir>, Box<Ir>),
    /// `a[]` (the flattening itself): any error on the left gives null.
    Flatten(Box<Ir>),
    /// `a.*` (the values of an object): any error on the left gives null.
    ObjectValues(Box<Ir>),
    Slice(Option<i64>, Option<i64>, i64),
    MultiList(Vec<Ir>),
    MultiHash(Vec<(String, Ir)>),
    Not(Box<Ir>),
    And(Box<Ir>, Box<Ir>),
    Or(Box<Ir>, Box<Ir>),
    Compare(Comparator, Box<Ir>, Box<Ir>),
    Call(&'static Func, Vec<Ir>),
    ExpRef(Box<Ir>),
}

pub(crate) fn lower(ast: &Ast, text: &str, depth: u32) -> Result<Ir, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::syntax("expression nested too deeply"));
    }
    let d = depth + 1;
    let b = |a: &Ast| lower(a, text, d).map(Box::new);
    Ok(match ast {
        Ast::Identity { .. } => Ir::Identity,
        Ast::Field { name, .. } => Ir::Field(name.clone()),
        Ast::Index { idx, .. } => Ir::Index(i64::from(*idx)),
        Ast::Literal { value, .. } => Ir::Literal(literal(value)),
        Ast::Subexpr { offset, lhs, rhs } => {
            if text.as_bytes().get(*offset) == Some(&b'|') {
                Ir::Pipe(b(lhs)?, b(rhs)?)
            } else if let Ast::Projection {
                lhs: plhs,
                rhs: prhs,
                ..
            } = rhs.as_ref()
                && matches!(plhs.as_ref(), Ast::Slice { .. })
            {
                // go-jmespath: Projection(IndexExpression(a, Slice), rhs).
                Ir::Projection(Box::new(Ir::Sub(b(lhs)?, b(plhs)?)), b(prhs)?)
            } else {
                Ir::Sub(b(lhs)?, b(rhs)?)
            }
        }
        Ast::Projection { lhs, rhs, .. } => match rhs.as_ref() {
            Ast::Condition {
                predicate, then, ..
            } => Ir::Filter(b(lhs)?, b(predicate)?, b(then)?),
            _ => Ir::Projection(b(lhs)?, b(rhs)?),
        },
        Ast::Condition {
            predicate, then, ..
        } => {
            // Only reachable inside a projection; keep the crate's meaning.
            Ir::Filter(Box::new(Ir::Identity), b(predicate)?, b(then)?)
        }
        Ast::Flatten { node, .. } => Ir::Flatten(b(node)?),
        Ast::ObjectValues { node, .. } => Ir::ObjectValues(b(node)?),
        Ast::Slice {
            start, stop, step, ..
        } => Ir::Slice(start.map(i64::from), stop.map(i64::from), i64::from(*step)),
        Ast::MultiList { elements, .. } => Ir::MultiList(
            elements
                .iter()
                .map(|e| lower(e, text, d))
                .collect::<Result<_, _>>()?,
        ),
        Ast::MultiHash { elements, .. } => Ir::MultiHash(
            elements
                .iter()
                .map(|kv| Ok((kv.key.clone(), lower(&kv.value, text, d)?)))
                .collect::<Result<_, Error>>()?,
        ),
        Ast::Not { node, .. } => Ir::Not(b(node)?),
        Ast::And { lhs, rhs, .. } => Ir::And(b(lhs)?, b(rhs)?),
        Ast::Or { lhs, rhs, .. } => Ir::Or(b(lhs)?, b(rhs)?),
        Ast::Comparison {
            comparator,
            lhs,
            rhs,
            ..
        } => Ir::Compare(comparator.clone(), b(lhs)?, b(rhs)?),
        Ast::Function { name, args, .. } => {
            let f = functions::lookup(name).ok_or_else(|| Error::UnknownFunction(name.clone()))?;
            Ir::Call(
                f,
                args.iter()
                    .map(|a| lower(a, text, d))
                    .collect::<Result<_, _>>()?,
            )
        }
        Ast::Expref { ast, .. } => Ir::ExpRef(b(ast)?),
    })
}

/// A JSON literal as go-jmespath decodes it (numbers are float64).
fn literal(v: &Variable) -> Node {
    match v {
        Variable::Null => value::null(),
        Variable::String(s) => value::string(s.clone()),
        Variable::Bool(b) => value::boolean(*b),
        Variable::Number(n) => value::float(n.as_f64().unwrap_or(0.0)),
        Variable::Array(items) => value::seq(items.iter().map(|i| literal(i)).collect()),
        Variable::Object(m) => value::map(m.iter().map(|(k, v)| (k.clone(), literal(v))).collect()),
        Variable::Expref(_) => value::null(),
    }
}

/// Where a sub-expression is evaluated, for [`Ir::exposes`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// On the searched document.
    Root,
    /// On the document's field named by the key.
    Field,
    /// On anything else (a value computed from them, an element of a list).
    Other,
}

impl Ir {
    /// Whether evaluating this against a document may yield the document itself or its field
    /// `key` as a value (returned, listed, compared, passed to a function) rather than only
    /// look fields up in them. Conservative: `key.a`, `key.a.b` and `f(key.a)` do not expose
    /// `key`; `key`, `@`, `key.*`, `key | a` and `keys(key)` do.
    pub(crate) fn exposes(&self, key: &str) -> bool {
        self.exposes_at(key, At::Root)
    }

    /// Appends the fields of a plain `a.b.c` path, in order; `false` for anything else.
    pub(crate) fn field_chain<'a>(&'a self, out: &mut Vec<&'a str>) -> bool {
        match self {
            Ir::Field(k) => {
                out.push(k);
                true
            }
            Ir::Sub(l, r) => l.field_chain(out) && r.field_chain(out),
            _ => false,
        }
    }

    fn exposes_at(&self, key: &str, at: At) -> bool {
        match self {
            Ir::Identity => at != At::Other,
            Ir::Field(k) => at == At::Root && k == key,
            Ir::Index(_) | Ir::Literal(_) | Ir::Slice(..) => false,
            Ir::Sub(l, r) => {
                if at == At::Root && matches!(l.as_ref(), Ir::Field(k) if k == key) {
                    r.exposes_at(key, At::Field)
                } else {
                    l.exposes_at(key, at) || r.exposes_at(key, At::Other)
                }
            }
            Ir::Pipe(l, r) | Ir::Projection(l, r) => {
                l.exposes_at(key, at) || r.exposes_at(key, At::Other)
            }
            Ir::Filter(l, c, r) => {
                l.exposes_at(key, at)
                    || c.exposes_at(key, At::Other)
                    || r.exposes_at(key, At::Other)
            }
            Ir::Flatten(i) | Ir::ObjectValues(i) | Ir::Not(i) => i.exposes_at(key, at),
            Ir::And(l, r) | Ir::Or(l, r) | Ir::Compare(_, l, r) => {
                l.exposes_at(key, at) || r.exposes_at(key, at)
            }
            Ir::MultiList(items) => items.iter().any(|i| i.exposes_at(key, at)),
            Ir::MultiHash(items) => items.iter().any(|(_, i)| i.exposes_at(key, at)),
            Ir::Call(_, args) => args.iter().any(|a| a.exposes_at(key, at)),
            Ir::ExpRef(e) => e.exposes_at(key, At::Other),
        }
    }
}
