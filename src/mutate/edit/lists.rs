//! Lists and flow collections as edits: a block list item by item, or rebuilt from its
//! original items' text when elements were added, removed or reordered; a flow map (`{…}`,
//! JSON) with entries edited in place and new ones before its closing brace.

use super::{Differ, Edit, Place, apply};
use crate::mutate::merge::value_eq;
use crate::mutate::render;
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

impl Differ<'_> {
    /// A block list: item by item when the length is kept, else rebuilt from the original
    /// items' text (matched by value or `name`) and newly rendered items.
    pub(super) fn block_seq(
        &self,
        b: &[Node],
        a: &[Node],
        out: &mut Vec<Edit>,
    ) -> Result<(), String> {
        if b.len() == a.len() {
            let mut inner = Vec::new();
            let same = b
                .iter()
                .zip(a)
                .try_for_each(|(x, y)| self.node(x, y, Place::Item, &mut inner));
            if same.is_ok() && b.iter().zip(a).all(|(x, y)| same_item(x, y)) {
                out.extend(inner);
                return Ok(());
            }
        }
        let mut dashes = Vec::with_capacity(b.len());
        for item in b {
            dashes.push(self.dash_of(item).ok_or("list item shares its line")?);
        }
        let mut ranges = Vec::with_capacity(b.len());
        for (i, item) in b.iter().enumerate() {
            let start = self.line_start(dashes[i]);
            let end = match dashes.get(i + 1) {
                Some(&next) => self.line_start(next),
                // The last item ends before its newline, so that an entry added after the
                // list does not overlap.
                None => self.line_end(self.content_end(item).ok_or("synthetic item")?),
            };
            ranges.push((start, end));
        }
        let dash_col = self.col(dashes[0]);
        let mut used = vec![false; b.len()];
        let mut text = String::new();
        for ai in a {
            let found = (0..b.len())
                .find(|&j| !used[j] && value_eq(&b[j].value, &ai.value))
                .or_else(|| (0..b.len()).find(|&j| !used[j] && same_item(&b[j], ai)));
            match found {
                Some(j) => {
                    used[j] = true;
                    let (rs, re) = ranges[j];
                    let mut sub = Vec::new();
                    self.node(&b[j], ai, Place::Item, &mut sub)?;
                    if sub.iter().any(|e| e.start < rs || e.end > re) {
                        return Err("edit outside its item".to_owned());
                    }
                    let shifted: Vec<Edit> = sub
                        .into_iter()
                        .map(|e| Edit {
                            start: e.start - rs,
                            end: e.end - rs,
                            text: e.text,
                        })
                        .collect();
                    text.push_str(&apply(&self.text[rs..re], &shifted)?);
                }
                None => {
                    let one = Value::Seq(vec![ai.clone()]);
                    text.push_str(&render::block(&one, dash_col));
                }
            }
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        let (start, _) = ranges[0];
        let end = ranges[ranges.len() - 1].1;
        text.pop();
        out.push(Edit { start, end, text });
        Ok(())
    }

    /// The `-` of a block list item, when it is the first thing on its line.
    pub(super) fn dash_of(&self, item: &Node) -> Option<usize> {
        if item.span.is_empty() {
            return None;
        }
        let start = item.span.start as usize;
        let before = self.text.get(..start)?;
        let trimmed = before.trim_end_matches([' ', '\t']);
        let dash = trimmed.len().checked_sub(1)?;
        if !trimmed.ends_with('-') {
            return None;
        }
        let ls = self.line_start(dash);
        self.text[ls..dash]
            .chars()
            .all(|c| c == ' ')
            .then_some(dash)
    }

    /// A flow map (`{…}`, JSON): values edited in place, new entries before the `}`.
    pub(super) fn flow_map(
        &self,
        node: &Node,
        b: &Map,
        a: &Map,
        out: &mut Vec<Edit>,
    ) -> Result<(), String> {
        let entries = b.entries();
        for (i, e) in entries.iter().enumerate() {
            if e.key_span.is_empty() {
                if a.get(&e.key)
                    .is_some_and(|av| value_eq(&e.value.value, &av.value))
                {
                    continue;
                }
                return Err("synthetic entry".to_owned());
            }
            match a.get(&e.key) {
                Some(av) => self.node(&e.value, av, Place::Flow, out)?,
                None => {
                    let vend = self.content_end(&e.value).ok_or("no end")?;
                    let (start, end) = match (entries.get(i + 1), i.checked_sub(1)) {
                        (Some(next), _) => {
                            (e.key_span.start as usize, next.key_span.start as usize)
                        }
                        (None, Some(p)) => {
                            let pend = self.content_end(&entries[p].value).ok_or("no end")?;
                            (pend, vend)
                        }
                        (None, None) => return Err("last entry".to_owned()),
                    };
                    out.push(Edit {
                        start,
                        end,
                        text: String::new(),
                    });
                }
            }
        }
        let added: Vec<String> = a
            .iter()
            .filter(|(k, _)| !b.contains_key(k))
            .map(|(k, v)| format!(", {}", self.flow(&Value::Map(one(k, v)))))
            .map(|s| s.replacen('{', "", 1))
            .map(|s| s[..s.len() - 1].to_owned())
            .collect();
        if !added.is_empty() {
            let close = (node.span.end as usize).checked_sub(1).ok_or("no end")?;
            if self.byte(close as u32) != Some(b'}') {
                return Err("no closing brace".to_owned());
            }
            let at = self.text[..close].trim_end().len();
            out.push(Edit {
                start: at,
                end: at,
                text: added.concat(),
            });
        }
        Ok(())
    }
}

fn one(k: &str, v: &Node) -> Map {
    let mut m = Map::new();
    m.insert(k.to_owned(), Span::EMPTY, v.clone());
    m
}

/// Whether two list items are "the same element": equal, or maps with the same `name`.
fn same_item(x: &Node, y: &Node) -> bool {
    if value_eq(&x.value, &y.value) {
        return true;
    }
    match (x.get("name"), y.get("name")) {
        (Some(p), Some(q)) => value_eq(&p.value, &q.value),
        _ => false,
    }
}
