//! Patches as byte edits of the original text (the way ruff applies fixes): the patched tree is
//! compared with the spanned tree it came from, and only the nodes that differ are rewritten.
//! Everything else — comments, key order, quoting, indentation, blank lines, other documents —
//! is left byte-for-byte. Map entries are inserted, removed or changed in place; a list whose
//! length changed is rewritten as a whole; a flow collection is rewritten in flow style.

use super::merge::value_eq;
use super::render;
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

/// Replace `[start, end)` of the text with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Where a node sits, which decides how a replacement is written.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// The value of the entry whose key is at `key` (the key's column is `col`).
    Entry { key: Span, col: usize },
    /// An item of a block list.
    Item,
    /// A value inside a flow collection (`{…}`, `[…]`, JSON).
    Flow,
    /// A document root.
    Root,
}

/// The edits that turn `before` (spanned, from `text`) into `after`.
pub fn diff(text: &str, before: &Node, after: &Node) -> Result<Vec<Edit>, String> {
    let mut edits = Vec::new();
    Differ { text }.node(before, after, Place::Root, &mut edits)?;
    Ok(edits)
}

/// Applies non-overlapping edits.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for e in sorted {
        if e.start < pos || e.end < e.start || e.end > text.len() {
            return Err("overlapping edits".to_owned());
        }
        let chunk = text.get(pos..e.start).ok_or("edit inside a character")?;
        out.push_str(chunk);
        out.push_str(&e.text);
        pos = e.end;
    }
    out.push_str(text.get(pos..).ok_or("edit inside a character")?);
    Ok(out)
}

struct Differ<'a> {
    text: &'a str,
}

impl Differ<'_> {
    fn byte(&self, pos: u32) -> Option<u8> {
        self.text.as_bytes().get(pos as usize).copied()
    }

    fn is_flow(&self, n: &Node) -> bool {
        !n.span.is_empty() && matches!(self.byte(n.span.start), Some(b'{' | b'['))
    }

    fn line_start(&self, pos: usize) -> usize {
        self.text[..pos.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1)
    }

    fn line_end(&self, pos: usize) -> usize {
        let pos = pos.min(self.text.len());
        self.text[pos..]
            .find('\n')
            .map_or(self.text.len(), |i| pos + i)
    }

    fn col(&self, pos: usize) -> usize {
        pos - self.line_start(pos)
    }

    /// The end of the last byte written for a node (block collections end at their last leaf).
    fn content_end(&self, n: &Node) -> Option<usize> {
        if self.is_flow(n) {
            return Some(n.span.end as usize);
        }
        match &n.value {
            Value::Map(m) => m
                .entries()
                .iter()
                .filter_map(|e| {
                    let k = (!e.key_span.is_empty()).then_some(e.key_span.end as usize);
                    k.max(self.content_end(&e.value))
                })
                .max(),
            Value::Seq(items) => items.iter().filter_map(|i| self.content_end(i)).max(),
            _ => (!n.span.is_empty()).then_some(n.span.end as usize),
        }
    }

    /// The byte just after the `:` of an entry.
    fn colon_end(&self, key: Span) -> Result<usize, String> {
        let from = key.end as usize;
        self.text[from..]
            .find(':')
            .map(|i| from + i + 1)
            .ok_or_else(|| "no ':' after a key".to_owned())
    }

    fn node(
        &self,
        before: &Node,
        after: &Node,
        place: Place,
        out: &mut Vec<Edit>,
    ) -> Result<(), String> {
        if value_eq(&before.value, &after.value) {
            return Ok(());
        }
        let mut inner = Vec::new();
        let flow = self.is_flow(before);
        let attempt = match (&before.value, &after.value) {
            (Value::Map(b), Value::Map(a)) if !b.is_empty() && !flow => self.map(b, a, &mut inner),
            (Value::Map(b), Value::Map(a)) if !b.is_empty() => {
                self.flow_map(before, b, a, &mut inner)
            }
            (Value::Seq(b), Value::Seq(a)) if !b.is_empty() && !flow => {
                self.block_seq(b, a, &mut inner)
            }
            (Value::Seq(b), Value::Seq(a)) if b.len() == a.len() => b
                .iter()
                .zip(a)
                .try_for_each(|(x, y)| self.node(x, y, Place::Flow, &mut inner)),
            _ => Err("replace".to_owned()),
        };
        match attempt {
            Ok(()) => {
                out.extend(inner);
                Ok(())
            }
            Err(_) => self.replace(before, after, place, out),
        }
    }

    /// A block list: item by item when the length is kept, else rebuilt from the original
    /// items' text (matched by value or `name`) and newly rendered items.
    fn block_seq(&self, b: &[Node], a: &[Node], out: &mut Vec<Edit>) -> Result<(), String> {
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
    fn dash_of(&self, item: &Node) -> Option<usize> {
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
    fn flow_map(&self, node: &Node, b: &Map, a: &Map, out: &mut Vec<Edit>) -> Result<(), String> {
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
            .map(|(k, v)| format!(", {}", render::flow(&Value::Map(one(k, v)))))
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

    /// The end of a replaced value, taking a comment that follows it on its line.
    fn absorb_comment(&self, end: usize) -> usize {
        let le = self.line_end(end);
        let rest = self.text[end..le].trim_start();
        if rest.starts_with('#') { le } else { end }
    }

    fn map(&self, b: &Map, a: &Map, out: &mut Vec<Edit>) -> Result<(), String> {
        let first = b
            .entries()
            .iter()
            .find(|e| !e.key_span.is_empty())
            .ok_or("synthetic map")?;
        let col = self.col(first.key_span.start as usize);
        for e in b.entries() {
            match a.get(&e.key) {
                Some(av) => {
                    let place = Place::Entry {
                        key: e.key_span,
                        col,
                    };
                    if e.key_span.is_empty() {
                        if value_eq(&e.value.value, &av.value) {
                            continue;
                        }
                        return Err("synthetic entry".to_owned());
                    }
                    self.node(&e.value, av, place, out)?;
                }
                None => out.push(self.remove_entry(e.key_span, &e.value)?),
            }
        }
        let added: Vec<(&str, &Node)> = a.iter().filter(|(k, _)| !b.contains_key(k)).collect();
        if !added.is_empty() {
            let end = self.content_end_of_map(b).ok_or("no end")?;
            let at = self.line_end(end);
            let pad = " ".repeat(col);
            let text: String = added
                .iter()
                .map(|(k, v)| {
                    format!(
                        "\n{pad}{}:{}",
                        render::string(k),
                        render::entry_value(&v.value, col + 2)
                    )
                })
                .collect();
            out.push(Edit {
                start: at,
                end: at,
                text,
            });
        }
        Ok(())
    }

    fn content_end_of_map(&self, b: &Map) -> Option<usize> {
        b.entries()
            .iter()
            .filter_map(|e| {
                let k = (!e.key_span.is_empty()).then(|| self.colon_end(e.key_span).ok());
                k.flatten().max(self.content_end(&e.value))
            })
            .max()
    }

    /// Deletes a whole `key: value` entry, lines included; only for a key that starts its line.
    fn remove_entry(&self, key: Span, value: &Node) -> Result<Edit, String> {
        if key.is_empty() {
            return Err("synthetic entry".to_owned());
        }
        let ks = key.start as usize;
        let start = self.line_start(ks);
        if !self.text[start..ks].chars().all(|c| c == ' ') {
            return Err("key shares its line".to_owned());
        }
        let end = self
            .content_end(value)
            .unwrap_or(0)
            .max(self.colon_end(key)?);
        // The newline before the entry goes with it, so that its line end stays free for an
        // entry added after it.
        Ok(Edit {
            start: start.saturating_sub(1),
            end: self.line_end(end),
            text: String::new(),
        })
    }

    fn replace(
        &self,
        before: &Node,
        after: &Node,
        place: Place,
        out: &mut Vec<Edit>,
    ) -> Result<(), String> {
        match place {
            Place::Root => Err("the document root cannot be rewritten in place".to_owned()),
            Place::Entry { key, col } => {
                if key.is_empty() {
                    return Err("synthetic entry".to_owned());
                }
                let start = self.colon_end(key)?;
                let end = self.content_end(before).unwrap_or(start).max(start);
                let end = if render::is_block(&after.value) {
                    self.absorb_comment(end)
                } else {
                    end
                };
                // A block list keeps its dash column (indentless lists stay indentless).
                let indent = match &before.value {
                    Value::Seq(items) if !items.is_empty() && !self.is_flow(before) => items
                        .first()
                        .and_then(|i| self.dash_of(i))
                        .map_or(col + 2, |d| self.col(d)),
                    _ => col + 2,
                };
                let text = if self.is_flow(before) && render::is_block(&after.value) {
                    format!(" {}", render::flow(&after.value))
                } else {
                    render::entry_value(&after.value, indent)
                };
                out.push(Edit { start, end, text });
                Ok(())
            }
            Place::Flow => {
                if before.span.is_empty() {
                    return Err("synthetic value".to_owned());
                }
                let start = before.span.start as usize;
                let end = self.content_end(before).unwrap_or(start).max(start);
                out.push(Edit {
                    start,
                    end,
                    text: render::flow(&after.value),
                });
                Ok(())
            }
            Place::Item => {
                if before.span.is_empty() {
                    return Err("synthetic item".to_owned());
                }
                let start = before.span.start as usize;
                let end = self.content_end(before).unwrap_or(start).max(start);
                let text = if render::is_block(&after.value)
                    && render::is_block(&before.value)
                    && !self.is_flow(before)
                {
                    let col = self.col(start);
                    let b = render::block(&after.value, col);
                    b[col.min(b.len())..].to_owned()
                } else {
                    render::flow(&after.value)
                };
                out.push(Edit { start, end, text });
                Ok(())
            }
        }
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
