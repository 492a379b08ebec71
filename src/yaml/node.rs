//! The spanned document tree: JSON-shaped values, each node with the byte span it came from.
//!
//! Values follow what Kubernetes' YAML reading produces (sigs.k8s.io/yaml): maps have string
//! keys, duplicate keys keep the last value, numbers are `Int` (i64) or `Float` (f64).

use crate::source::Span;

/// One node of a document: a value and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Map),
}

/// An ordered map with string keys. Lookups are linear: Kubernetes maps are small, and keeping
/// source order makes output deterministic without sorting.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map {
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

impl Map {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        Self {
            entries: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries
            .iter_mut()
            .find(|e| e.key == key)
            .map(|e| &mut e.value)
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// Inserts or replaces (last wins, in the first key's position, as go-yaml does).
    pub fn insert(&mut self, key: String, key_span: Span, value: Node) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.key == key) {
            e.key_span = key_span;
            e.value = value;
        } else {
            self.entries.push(Entry {
                key,
                key_span,
                value,
            });
        }
    }

    /// Inserts a new key at `index` (clamped to the end); an existing key is replaced where
    /// it is.
    pub fn insert_at(&mut self, index: usize, key: String, key_span: Span, value: Node) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.key == key) {
            e.key_span = key_span;
            e.value = value;
        } else {
            let at = index.min(self.entries.len());
            self.entries.insert(
                at,
                Entry {
                    key,
                    key_span,
                    value,
                },
            );
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let idx = self.entries.iter().position(|e| e.key == key)?;
        Some(self.entries.remove(idx).value)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Node)> {
        self.entries.iter().map(|e| (e.key.as_str(), &e.value))
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn entries_mut(&mut self) -> &mut [Entry] {
        &mut self.entries
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }
}

impl Node {
    pub fn new(value: Value, span: Span) -> Self {
        Self { value, span }
    }

    /// A node with no place in any file.
    pub fn synthetic(value: Value) -> Self {
        Self {
            value,
            span: Span::EMPTY,
        }
    }

    pub fn null() -> Self {
        Self::synthetic(Value::Null)
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// Follows a path of map keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The string items of a sequence (other items and non-sequences give nothing).
    pub fn str_items(&self) -> Vec<String> {
        self.as_seq()
            .map(|s| {
                s.iter()
                    .filter_map(Node::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// Converts to a `serde_json::Value` (numbers keep int/float; non-finite floats become null).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(m) => {
                J::Object(m.iter().map(|(k, v)| (k.to_owned(), v.to_json())).collect())
            }
        }
    }

    /// Builds a synthetic tree (no spans) from JSON.
    pub fn from_json(v: &serde_json::Value) -> Self {
        use serde_json::Value as J;
        let value = match v {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            J::String(s) => Value::Str(s.clone()),
            J::Array(a) => Value::Seq(a.iter().map(Node::from_json).collect()),
            J::Object(o) => {
                let mut m = Map::with_capacity(o.len());
                for (k, v) in o {
                    m.insert(k.clone(), Span::EMPTY, Node::from_json(v));
                }
                Value::Map(m)
            }
        };
        Node::synthetic(value)
    }
}

impl Value {
    /// The JSON type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::Float(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "array",
            Value::Map(_) => "object",
        }
    }
}

impl Node {
    /// The place to show for a path into this tree: the node at the deepest existing step
    /// (Kyverno's failing path may name a field that is missing). A scalar points at its value;
    /// a map or list at the key that holds it, which is the line a reader looks for. Returns the
    /// span and how many steps of `path` exist.
    pub fn locate<S: AsRef<str>>(&self, path: &[S]) -> (crate::source::Span, usize) {
        let mut node = self;
        let mut key_span = None;
        let mut depth = 0;
        for seg in path {
            let seg = seg.as_ref();
            let next = match &node.value {
                Value::Map(m) => m.entry(seg).map(|e| (&e.value, Some(e.key_span))),
                Value::Seq(items) => seg
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .map(|n| (n, None)),
                _ => None,
            };
            let Some((n, ks)) = next else { break };
            // Synthetic nodes (a namespace kpol filled in) have no place; stop at the parent.
            if n.span.is_empty() && ks.is_none_or(|s| s.is_empty()) {
                break;
            }
            node = n;
            key_span = ks;
            depth += 1;
        }
        let span = match (&node.value, key_span) {
            (Value::Map(_) | Value::Seq(_), Some(ks)) if !ks.is_empty() => ks,
            _ => node.span,
        };
        (span, depth)
    }
}
