//! Events from `granit-parser` → spanned [`Node`] trees, one per document.
//!
//! Reads as Kubernetes does (go-yaml v2 through sigs.k8s.io/yaml): YAML 1.1 scalars
//! ([`super::resolve`]), `<<` merge keys, aliases expanded, duplicate keys last-wins, map keys
//! stringified, empty and comment-only documents dropped. Aliases, documents and nesting are
//! bounded per file and, with a [`RunBudget`], per run ([`Limits`]), so a hostile file costs an
//! error, not the machine.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use granit_parser::{Event, Options, Parser, ScalarStyle};

use super::node::{Map, Node, Value};
use super::resolve::{key_string, resolve_plain};
use crate::source::{Span, to_u32};

/// Bounds on what one file (and, with [`Limits::run`], one run) may make kpol build.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Deepest nesting of maps and sequences.
    pub max_depth: usize,
    /// Most nodes that alias expansion may copy in one file, all its documents together (a
    /// billion-laughs guard: a budget per document would let many documents multiply it).
    pub max_alias_nodes: usize,
    /// Most documents in one file.
    pub max_documents: usize,
    /// The budgets shared by every file of a run, where the caller keeps them.
    pub run: Option<&'static RunBudget>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 512,
            max_alias_nodes: 200_000,
            max_documents: 1_000_000,
            run: None,
        }
    }
}

impl Limits {
    /// These limits, with `run`'s budgets over them.
    pub fn with_run(self, run: &'static RunBudget) -> Self {
        Self {
            run: Some(run),
            ..self
        }
    }
}

/// Budgets that all files of one run draw on, from any thread: alias-expanded nodes and
/// documents. Spent, they refuse the file that asks for more (and every later one that does);
/// what a refused file used stays spent.
#[derive(Debug)]
pub struct RunBudget {
    max_alias_nodes: usize,
    max_documents: usize,
    alias_nodes: AtomicUsize,
    documents: AtomicUsize,
}

impl RunBudget {
    /// A run's budgets: `alias_nodes` copied nodes and `documents` documents in all.
    pub const fn new(alias_nodes: usize, documents: usize) -> Self {
        Self {
            max_alias_nodes: alias_nodes,
            max_documents: documents,
            alias_nodes: AtomicUsize::new(alias_nodes),
            documents: AtomicUsize::new(documents),
        }
    }

    /// kpol's budgets for one run: ten files' worth of alias expansion, and two million
    /// documents.
    pub const fn standard() -> Self {
        Self::new(2_000_000, 2_000_000)
    }

    /// The alias-expanded nodes the run may still copy.
    #[cfg(test)]
    pub(crate) fn alias_nodes_left(&self) -> usize {
        self.alias_nodes.load(Ordering::Relaxed)
    }

    /// Takes `n` from `pool`; `false` (and nothing taken) when less is left.
    fn take(pool: &AtomicUsize, n: usize) -> bool {
        pool.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(n)
        })
        .is_ok()
    }
}

/// A document that failed to parse: the message and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    pub message: String,
    /// Byte offset of the problem.
    pub offset: u32,
}

/// One document of a stream.
#[derive(Clone, Debug)]
pub struct Document {
    pub root: Node,
    /// Index of the document in its file (0-based, counting empty ones).
    pub index: usize,
}

/// Parses every document of `text`. On a syntax error the documents read so far are returned
/// with the error: Kubernetes rejects the whole file, and so does the caller.
pub fn parse_documents(text: &str, limits: Limits) -> Result<Vec<Document>, YamlError> {
    parse_reading(text, limits, Reading::default())
}

/// How values are read besides YAML's own rules, applied to each value as the tree is built
/// (perf: a caller that rewrites values, like the CLI's resource normalisation, does not walk
/// the tree again). Keys are not values and are read as they are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reading {
    /// Integers are read as floats.
    pub ints_as_floats: bool,
    /// Map keys whose null value is read as an empty map.
    pub empty_map_for_null: &'static [&'static str],
}

impl Reading {
    /// Applies the reading to one value placed under `key` in a map (`None`: in a sequence or
    /// as a document's root).
    #[inline]
    pub fn apply(&self, key: Option<&str>, value: &mut Value) {
        match value {
            Value::Int(i) if self.ints_as_floats => *value = Value::Float(*i as f64),
            Value::Null if key.is_some_and(|k| self.empty_map_for_null.contains(&k)) => {
                *value = Value::Map(Map::new())
            }
            _ => {}
        }
    }
}

/// [`parse_documents`], with each value read as `reading` says. A value an alias copies is
/// read again where the alias stands; merged entries come as read in their own map.
pub(crate) fn parse_reading(
    text: &str,
    limits: Limits,
    reading: Reading,
) -> Result<Vec<Document>, YamlError> {
    let mut opts = Options::default();
    // go-yaml drops the final newline of a block scalar that ends the file without one.
    opts.block_scalar_eof_without_line_feed = true;
    opts.emit_comments = false;
    let parser = Parser::new_from_str_with_options(text, opts);
    let mut builder = Builder::new(limits, reading);
    let mut docs = Vec::new();
    let mut index = 0usize;
    for ev in parser {
        let (event, span) = ev.map_err(|e| {
            let m = e.marker();
            YamlError {
                message: e.info().to_owned(),
                offset: m
                    .byte_offset()
                    .map_or_else(|| char_to_byte(text, m.index()), to_u32),
            }
        })?;
        let span = span
            .byte_range()
            .map_or(Span::EMPTY, |r| Span::new(to_u32(r.start), to_u32(r.end)));
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Anchor(..) => {}
            Event::DocumentStart(..) => {
                if index >= limits.max_documents {
                    return Err(YamlError {
                        message: format!(
                            "more than {} documents in one file (kpol's limit)",
                            limits.max_documents
                        ),
                        offset: span.start,
                    });
                }
                if let Some(run) = limits.run
                    && !RunBudget::take(&run.documents, 1)
                {
                    return Err(YamlError {
                        message: format!(
                            "more than {} documents in this run (kpol's limit, all files together)",
                            run.max_documents
                        ),
                        offset: span.start,
                    });
                }
                builder.reset();
            }
            Event::DocumentEnd => {
                if let Some(root) = builder.take_root().filter(|r| !r.is_null()) {
                    docs.push(Document { root, index });
                }
                index += 1;
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar_value(&text, style, tag.as_deref());
                builder.plain_merge = style == ScalarStyle::Plain && tag.is_none() && text == "<<";
                builder.push_node(Node::new(value, span), anchor, span)?;
            }
            Event::SequenceStart(_, anchor, _) => {
                builder.open(Frame::Seq(Vec::new()), anchor, span)?
            }
            Event::MappingStart(_, anchor, _) => builder.open(
                Frame::Map {
                    map: Map::new(),
                    key: None,
                },
                anchor,
                span,
            )?,
            Event::SequenceEnd | Event::MappingEnd => builder.close(span)?,
            Event::Alias(id) => builder.alias(id, span)?,
            Event::UnresolvedAlias(name) => {
                return Err(YamlError {
                    message: format!("unknown anchor '{name}' referenced"),
                    offset: span.start,
                });
            }
            // Comments and any presentation event a newer parser adds carry no data.
            _ => {}
        }
    }
    Ok(docs)
}

fn char_to_byte(text: &str, chars: usize) -> u32 {
    to_u32(
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(b, _)| b),
    )
}

fn scalar_value(text: &str, style: ScalarStyle, tag: Option<&granit_parser::Tag>) -> Value {
    if let Some(tag) = tag.filter(|t| t.handle() == "tag:yaml.org,2002:") {
        {
            match tag.suffix() {
                "str" => return Value::Str(text.to_owned()),
                "null" => return Value::Null,
                "bool" | "int" | "float" => {
                    let v = resolve_plain(text);
                    return match (tag.suffix(), v) {
                        ("float", Value::Int(i)) => Value::Float(i as f64),
                        (_, v) => v,
                    };
                }
                _ => {}
            }
        }
    }
    match style {
        ScalarStyle::Plain => resolve_plain(text),
        _ => Value::Str(text.to_owned()),
    }
}

enum Frame {
    Seq(Vec<Node>),
    Map {
        map: Map,
        /// The key waiting for its value, with its span and whether it is a plain `<<`
        /// (a merge); `None` when a key comes next.
        key: Option<(Node, Span, bool)>,
    },
}

struct Open {
    frame: Frame,
    anchor: usize,
    start: u32,
}

struct Builder {
    limits: Limits,
    stack: Vec<Open>,
    /// The current document's anchors by id (the latest definition of an id wins).
    anchors: HashMap<usize, Node, foldhash::fast::FixedState>,
    root: Option<Node>,
    /// What alias expansion may still copy in this file.
    alias_budget: usize,
    /// The scalar being placed is a plain `<<` (a merge key when in key position).
    plain_merge: bool,
    /// Applied to each value placed.
    reading: Reading,
}

impl Builder {
    fn new(limits: Limits, reading: Reading) -> Self {
        Self {
            limits,
            stack: Vec::new(),
            anchors: HashMap::default(),
            root: None,
            alias_budget: limits.max_alias_nodes,
            plain_merge: false,
            reading,
        }
    }

    /// Starts a document. The alias budget is the file's: it is not renewed.
    fn reset(&mut self) {
        self.stack.clear();
        self.anchors.clear();
        self.root = None;
    }

    fn take_root(&mut self) -> Option<Node> {
        self.root.take()
    }

    fn open(&mut self, frame: Frame, anchor: usize, span: Span) -> Result<(), YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(YamlError {
                message: format!(
                    "nesting deeper than {} levels (kpol's limit)",
                    self.limits.max_depth
                ),
                offset: span.start,
            });
        }
        self.stack.push(Open {
            frame,
            anchor,
            start: span.start,
        });
        Ok(())
    }

    fn close(&mut self, span: Span) -> Result<(), YamlError> {
        let Some(open) = self.stack.pop() else {
            return Ok(());
        };
        let full = Span::new(open.start, span.end.max(open.start));
        let value = match open.frame {
            Frame::Seq(items) => Value::Seq(items),
            Frame::Map { map, .. } => Value::Map(map),
        };
        self.push_node(Node::new(value, full), open.anchor, full)
    }

    fn alias(&mut self, id: usize, span: Span) -> Result<(), YamlError> {
        let Some(target) = self.anchors.get(&id) else {
            return Err(YamlError {
                message: "unknown anchor referenced".to_owned(),
                offset: span.start,
            });
        };
        charge_copy(&mut self.alias_budget, &self.limits, target, span)?;
        // The copy keeps the anchor's spans: a finding inside it points at the definition.
        let node = target.clone();
        self.push_node(node, 0, span)
    }

    /// Places a finished node into its parent (or as the document root).
    fn push_node(&mut self, mut node: Node, anchor: usize, span: Span) -> Result<(), YamlError> {
        if anchor != 0 {
            // Keeping the anchored node is a copy too: it counts against the same budget, so
            // nested anchors over aliases cannot multiply the work unseen.
            charge_copy(&mut self.alias_budget, &self.limits, &node, span)?;
            self.anchors.insert(anchor, node.clone());
        }
        let plain_merge = std::mem::take(&mut self.plain_merge);
        let reading = self.reading;
        // perf: only integers and nulls are ever read differently.
        let place = |key: Option<&str>, node: &mut Node| {
            if matches!(node.value, Value::Int(_) | Value::Null) {
                reading.apply(key, &mut node.value);
            }
        };
        let Some(top) = self.stack.last_mut() else {
            place(None, &mut node);
            self.root = Some(node);
            return Ok(());
        };
        match &mut top.frame {
            Frame::Seq(items) => {
                place(None, &mut node);
                items.push(node)
            }
            Frame::Map { map, key, .. } => match key.take() {
                None => *key = Some((node, span, plain_merge)),
                Some((k, kspan, is_merge)) => {
                    if is_merge {
                        merge_into(map, node, kspan)?;
                    } else {
                        let Some(name) = key_string(&k.value) else {
                            return Err(YamlError {
                                message: "invalid map key: a key must be a scalar".to_owned(),
                                offset: kspan.start,
                            });
                        };
                        place(Some(&name), &mut node);
                        map.insert(name, kspan, node);
                    }
                }
            },
        }
        Ok(())
    }
}

/// go-yaml v2 merge: a map's entries (or each map of a sequence, later ones first so earlier
/// maps win) are set into the target, overriding keys written before the `<<`.
fn merge_into(map: &mut Map, value: Node, span: Span) -> Result<(), YamlError> {
    match value.value {
        Value::Map(m) => {
            for e in m.entries() {
                map.insert(e.key.clone(), e.key_span, e.value.clone());
            }
            Ok(())
        }
        Value::Seq(items) => {
            for item in items.into_iter().rev() {
                match item.value {
                    Value::Map(m) => {
                        for e in m.entries() {
                            map.insert(e.key.clone(), e.key_span, e.value.clone());
                        }
                    }
                    _ => {
                        return Err(YamlError {
                            message: "map merge requires map or sequence of maps as the value"
                                .to_owned(),
                            offset: span.start,
                        });
                    }
                }
            }
            Ok(())
        }
        _ => Err(YamlError {
            message: "map merge requires map or sequence of maps as the value".to_owned(),
            offset: span.start,
        }),
    }
}

/// Charges a copy of `node` to the file's alias `budget` and to the run's; an error at `span`
/// once either is spent.
fn charge_copy(
    budget: &mut usize,
    limits: &Limits,
    node: &Node,
    span: Span,
) -> Result<(), YamlError> {
    let cost = node.node_count();
    if cost > *budget {
        return Err(YamlError {
            message: format!(
                "alias expansion exceeds {} nodes in one file (kpol's limit against alias bombs)",
                limits.max_alias_nodes
            ),
            offset: span.start,
        });
    }
    if let Some(run) = limits.run
        && !RunBudget::take(&run.alias_nodes, cost)
    {
        return Err(YamlError {
            message: format!(
                "alias expansion exceeds {} nodes in this run (kpol's limit against alias bombs, \
                 all files together)",
                run.max_alias_nodes
            ),
            offset: span.start,
        });
    }
    *budget -= cost;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> serde_json::Value {
        let docs = parse_documents(text, Limits::default()).unwrap_or_default();
        assert_eq!(docs.len(), 1, "{text}");
        docs[0].root.to_json()
    }

    #[test]
    fn spans_point_at_values() {
        let text = "a:\n  b: [1, two]\n";
        let docs = parse_documents(text, Limits::default()).unwrap_or_default();
        let b = docs[0].root.get_path(&["a", "b"]).map(|n| n.span);
        assert_eq!(
            b.map(|s| &text[s.start as usize..s.end as usize]),
            Some("[1, two]")
        );
    }

    #[test]
    fn merge_and_alias() {
        let v = one("base: &b {cpu: 100m, mem: 1Gi}\nres:\n  <<: *b\n  mem: 2Gi\n");
        assert_eq!(v["res"], serde_json::json!({"cpu": "100m", "mem": "2Gi"}));
    }

    #[test]
    fn alias_bomb_is_bounded() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='k' {
            text.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let err = parse_documents(&text, Limits::default());
        assert!(err.is_err_and(|e| e.message.contains("alias expansion")));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(10_000) + &"]".repeat(10_000);
        let err = parse_documents(&text, Limits::default());
        assert!(err.is_err());
    }

    #[test]
    fn empty_and_comment_only_documents_are_dropped() {
        let docs = parse_documents("---\na: 1\n---\n---\n# c\n---\nb: 2\n", Limits::default())
            .unwrap_or_default();
        assert_eq!(docs.len(), 2);
    }

    /// A document whose aliases copy about `nodes` nodes (one anchored list of 100 scalars,
    /// aliased `nodes / 100` times).
    fn aliasing_doc(nodes: usize) -> String {
        let mut text = String::from("a: &a [");
        text.push_str(&vec!["x"; 99].join(", "));
        text.push_str("]\nb:\n");
        for _ in 0..nodes / 100 {
            text.push_str("- *a\n");
        }
        text
    }

    #[test]
    fn the_alias_budget_is_the_files_not_each_documents() {
        // Each document alone is within the budget; three together are not.
        let doc = aliasing_doc(80_000);
        assert!(parse_documents(&doc, Limits::default()).is_ok());
        let three = format!("{doc}---\n{doc}---\n{doc}");
        let err = parse_documents(&three, Limits::default()).err();
        let err = err.map(|e| (e.message, e.offset));
        assert!(
            err.as_ref().is_some_and(
                |(m, _)| m.contains("alias expansion exceeds 200000 nodes in one file")
            ),
            "{err:?}"
        );
        // Refused in the third document, where the budget ran out.
        let third = three.rfind("---").unwrap_or(0);
        assert!(err.is_some_and(|(_, at)| at as usize > third));
    }

    #[test]
    fn the_run_budget_is_shared_by_threads() {
        // Eight files of 1,100 charged nodes (the anchored list and ten copies), read at once
        // on eight threads, spend a budget of exactly 8 × 1,100: every draw is counted once.
        let run: &'static RunBudget = Box::leak(Box::new(RunBudget::new(8 * 1_100, 100)));
        let limits = Limits::default().with_run(run);
        let doc = aliasing_doc(1_000);
        let ok = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| parse_documents(&doc, limits).is_ok()))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(false))
                .filter(|ok| *ok)
                .count()
        });
        assert_eq!(ok, 8);
        assert_eq!(run.alias_nodes_left(), 0);
        let err = parse_documents(&doc, limits).err().map(|e| e.message);
        assert!(
            err.as_ref()
                .is_some_and(|m| m.contains("exceeds 8800 nodes in this run")),
            "{err:?}"
        );
        // A file without aliases still reads.
        assert!(parse_documents("a: 1\n", limits).is_ok());
    }

    #[test]
    fn the_run_counts_documents_across_files() {
        let run: &'static RunBudget = Box::leak(Box::new(RunBudget::new(1_000, 5)));
        let limits = Limits::default().with_run(run);
        assert!(parse_documents("a: 1\n---\nb: 2\n---\nc: 3\n", limits).is_ok());
        let err = parse_documents("a: 1\n---\nb: 2\n---\nc: 3\n", limits).err();
        assert!(err.is_some_and(
            |e| e.message.contains("more than 5 documents in this run") && e.offset == 14
        ),);
    }

    #[test]
    fn an_anchor_defined_again_is_aliased_at_its_latest_value() {
        let v = one("a: &x 1\nb: *x\nc: &x 2\nd: *x\n");
        assert_eq!(v, serde_json::json!({"a": 1, "b": 1, "c": 2, "d": 2}));
    }
}
