//! The typed merge of a patch (right) into an object (left), as structured-merge-diff's
//! `TypedValue.Merge` walks them (`typed/merge.go`): scalars and atomic lists and maps take the
//! right side whole; granular maps and structs merge key by key; associative lists merge
//! element by element, matched by their keys (sets: by value), in the order the walk gives.
//!
//! Both sides have been checked against the schema first; a shape the check lets through but
//! the walk cannot use (a value of another kind than its neighbour's) takes the right side.
//!
//! Spans: a merged map or list keeps the left node's span, and an entry kept from the left its
//! key span; a value taken whole from the right keeps the left node instead when the two are
//! equal, so untouched text stays where it was.

use super::schema::{List, Schema, TypeRef, View};
use super::typed::{PathElem, list_key};
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

pub(crate) struct Merger<'a> {
    pub schema: &'a Schema,
}

/// What the left side has for a list element's key.
#[derive(Clone, Copy)]
enum Left<'a> {
    Absent,
    /// The key is repeated on the left: the walk merges as if the left had null.
    Duplicate,
    Item(&'a Node),
}

impl Merger<'_> {
    /// The merged value, or `None` when neither side gives one.
    pub(crate) fn merge(
        &self,
        lhs: Option<&Node>,
        rhs: Option<&Node>,
        tr: &TypeRef,
    ) -> Option<Node> {
        let Some(view) = self.schema.resolve(tr) else {
            return leaf(lhs, rhs);
        };
        // Each side narrows the atom to the part it takes; the right side's view decides,
        // unless there is no right side.
        let view = match rhs {
            None => view.deduce(lhs.map(|n| &n.value)),
            Some(r) => view.deduce(Some(&r.value)),
        };
        self.handle(view, lhs, rhs)
    }

    fn handle(&self, view: View<'_>, lhs: Option<&Node>, rhs: Option<&Node>) -> Option<Node> {
        if let Some(map) = view.map {
            let lm = lhs.and_then(Node::as_map);
            let rm = rhs.and_then(Node::as_map);
            // Both sides empty or absent: a leaf, so that `{}` and null stay distinct.
            let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
            if view.map_atomic || empty {
                return leaf(lhs, rhs);
            }
            let mut out = Map::with_capacity(lm.map_or(0, Map::len) + rm.map_or(0, Map::len));
            let field_type = |key: &str| map.field(key).map(|f| &f.ty).or(map.elem.as_ref());
            for e in lm.map(Map::entries).unwrap_or_default() {
                let r = rm.and_then(|m| m.get(&e.key));
                let merged = match field_type(&e.key) {
                    Some(ty) => self.merge(Some(&e.value), r, ty),
                    None => leaf(Some(&e.value), r),
                };
                if let Some(v) = merged {
                    out.insert(e.key.clone(), e.key_span, v);
                }
            }
            for e in rm.map(Map::entries).unwrap_or_default() {
                if lm.is_some_and(|m| m.contains_key(&e.key)) {
                    continue;
                }
                let merged = match field_type(&e.key) {
                    Some(ty) => self.merge(None, Some(&e.value), ty),
                    None => leaf(None, Some(&e.value)),
                };
                if let Some(v) = merged {
                    out.insert(e.key.clone(), Span::EMPTY, v);
                }
            }
            if out.is_empty() {
                return None;
            }
            let span = lhs
                .filter(|l| l.as_map().is_some())
                .map_or(Span::EMPTY, |l| l.span);
            return Some(Node::new(Value::Map(out), span));
        }
        if view.scalar.is_some() {
            return leaf(lhs, rhs);
        }
        if let Some(list) = view.list {
            let ll = lhs.and_then(Node::as_seq);
            let rl = rhs.and_then(Node::as_seq);
            let empty = ll.is_none_or(<[Node]>::is_empty) && rl.is_none_or(<[Node]>::is_empty);
            if view.list_atomic || empty {
                return leaf(lhs, rhs);
            }
            let items = self.merge_items(list, ll.unwrap_or_default(), rl.unwrap_or_default())?;
            if items.is_empty() {
                return None;
            }
            let span = lhs
                .filter(|l| l.as_seq().is_some())
                .map_or(Span::EMPTY, |l| l.span);
            return Some(Node::new(Value::Seq(items), span));
        }
        leaf(lhs, rhs)
    }

    /// The elements of two associative lists merged (`visitListItems`): left elements the
    /// right does not name stay in place; the right's elements come in the right's order, a
    /// shared one merged with its left counterpart where the right reaches it. `None` when an
    /// element has no key (the check reports that first).
    fn merge_items(&self, list: &List, lhs: &[Node], rhs: &[Node]) -> Option<Vec<Node>> {
        let rpes: Vec<PathElem<'_>> = rhs
            .iter()
            .map(|n| list_key(self.schema, list, n).ok())
            .collect::<Option<_>>()?;
        let lpes: Vec<PathElem<'_>> = lhs
            .iter()
            .map(|n| list_key(self.schema, list, n).ok())
            .collect::<Option<_>>()?;
        let rhs_index = |pe: &PathElem<'_>| rpes.iter().position(|r| r == pe);
        let left_of = |pe: &PathElem<'_>| {
            let mut found = Left::Absent;
            for (i, l) in lpes.iter().enumerate() {
                if l == pe {
                    found = match found {
                        Left::Absent => Left::Item(&lhs[i]),
                        _ => Left::Duplicate,
                    };
                }
            }
            found
        };
        // The right's elements that the left also has, in the right's order.
        let shared: Vec<usize> = (0..rpes.len())
            .filter(|&r| lpes.iter().any(|l| *l == rpes[r]))
            .collect();
        let mut shared = shared.into_iter();
        let mut next_shared = shared.next();
        let mut merged = vec![false; rpes.len()];
        let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
        let null = Node::null();
        let item = |left: Left<'_>, right: Option<&Node>, out: &mut Vec<Node>| {
            let l = match left {
                Left::Absent => None,
                Left::Duplicate => Some(&null),
                Left::Item(n) => Some(n),
            };
            if let Some(n) = self.merge(l, right, &list.elem) {
                out.push(n);
            }
        };
        let (mut li, mut ri) = (0, 0);
        while li < lpes.len() || ri < rpes.len() {
            if li < lpes.len() && ri < rpes.len() {
                let pe = &lpes[li];
                if *pe == rpes[ri] {
                    merged[ri] = true;
                    item(left_of(pe), Some(&rhs[ri]), &mut out);
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                // A shared element the right reaches later: skip it here.
                if rhs_index(pe).is_some() && next_shared.is_some_and(|s| rpes[s] != *pe) {
                    li += 1;
                    continue;
                }
            }
            if li < lpes.len() {
                match rhs_index(&lpes[li]) {
                    None => {
                        item(Left::Item(&lhs[li]), None, &mut out);
                        li += 1;
                        continue;
                    }
                    Some(r) if merged[r] => li += 1,
                    Some(_) => {}
                }
            }
            if ri < rpes.len() {
                merged[ri] = true;
                item(left_of(&rpes[ri]), Some(&rhs[ri]), &mut out);
                if next_shared == Some(ri) {
                    next_shared = shared.next();
                }
                ri += 1;
            }
        }
        Some(out)
    }
}

/// A leaf: the right side whole if there is one, else the left; the left node itself when
/// both are equal, to keep its spans.
fn leaf(lhs: Option<&Node>, rhs: Option<&Node>) -> Option<Node> {
    match (lhs, rhs) {
        (Some(l), Some(r)) if same_value(&l.value, &r.value) => Some(l.clone()),
        (_, Some(r)) => Some(r.clone()),
        (Some(l), None) => Some(l.clone()),
        (None, None) => None,
    }
}

/// Equal values of the same kinds, spans aside (an integer is not a float here: the output
/// keeps what the patch wrote).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(&a.value, &b.value))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same_value(&va.value, &vb.value))
        }
        _ => false,
    }
}
