//! Patches as byte edits of the original text (the way ruff applies fixes): the patched tree is
//! compared with the spanned tree it came from, and only the nodes that differ are rewritten.
//! Everything else — comments, key order, quoting, indentation, blank lines, other documents —
//! is left byte-for-byte. Map entries are inserted, removed or changed in place; a list whose
//! length changed is rewritten as a whole; a flow collection is rewritten in flow style.

mod lists;

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
    let json = text.trim_start().starts_with(['{', '[']);
    Differ { text, json }.node(before, after, Place::Root, &mut edits)?;
    // A CRLF file keeps its line breaks in what is written into it.
    if text.contains("\r\n") {
        for e in &mut edits {
            e.text = e.text.replace("\r\n", "\n").replace('\n', "\r\n");
        }
    }
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
    /// The document is JSON: flow values are written as JSON.
    json: bool,
}

impl Differ<'_> {
    fn flow(&self, v: &Value) -> String {
        if self.json {
            render::flow(v)
        } else {
            render::flow_yaml(v)
        }
    }

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
        let end = self.text[pos..]
            .find('\n')
            .map_or(self.text.len(), |i| pos + i);
        // Before a CR of a CRLF line break.
        if end > pos && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
            end - 1
        } else {
            end
        }
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
            // Block scalars end after their last line break; the content ends before.
            _ => (!n.span.is_empty()).then(|| {
                let (start, end) = (n.span.start as usize, n.span.end as usize);
                start
                    + self
                        .text
                        .get(start..end)
                        .map_or(end - start, |t| t.trim_end().len())
            }),
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
            (Value::Seq(b), Value::Seq(a)) if !b.is_empty() && !a.is_empty() && !flow => {
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
        let mut written: Vec<(&str, &Node)> = Vec::new();
        for e in b.entries() {
            match a.get(&e.key) {
                Some(av) => {
                    let place = Place::Entry {
                        key: e.key_span,
                        col,
                    };
                    // A synthetic entry (the default namespace) is not in the text: when a
                    // patch changes it, it is written as a new entry.
                    if e.key_span.is_empty() {
                        if !value_eq(&e.value.value, &av.value) {
                            written.push((e.key.as_str(), av));
                        }
                        continue;
                    }
                    self.node(&e.value, av, place, out)?;
                }
                None => out.push(self.remove_entry(e.key_span, &e.value)?),
            }
        }
        let mut added = written;
        added.extend(a.iter().filter(|(k, _)| !b.contains_key(k)));
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
        let newline = if self.text[..start].ends_with("\r\n") {
            2
        } else {
            1
        };
        Ok(Edit {
            start: start.saturating_sub(newline),
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
                    format!(" {}", self.flow(&after.value))
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
                    text: self.flow(&after.value),
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
                    self.flow(&after.value)
                };
                out.push(Edit { start, end, text });
                Ok(())
            }
        }
    }
}
