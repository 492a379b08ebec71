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

/// An ordered map with string keys, in source order (output stays deterministic without
/// sorting). Small maps, which Kubernetes maps almost all are, are searched linearly; from
/// [`INDEX_FROM`] entries on a hash index of the keys keeps lookups and insertion constant
/// time, so that a map of many keys (a large ConfigMap) builds in linear time.
#[derive(Clone, Default)]
pub struct Map {
    entries: Vec<Entry>,
    /// Positions in `entries`, hashed by key; `None` below [`INDEX_FROM`] entries, and after
    /// [`Map::entries_mut`] (which may rename keys) until the next change rebuilds it.
    index: Option<Box<Index>>,
}

/// Entries from which a map keeps a hash index (perf: below it a linear scan of a few short
/// keys is faster than hashing, and costs no memory).
const INDEX_FROM: usize = 16;

#[derive(Clone)]
struct Index {
    table: hashbrown::HashTable<u32>,
    /// Seeded per map: keys come from files kpol does not trust.
    hasher: foldhash::fast::RandomState,
}

impl Index {
    fn hash(&self, key: &str) -> u64 {
        std::hash::BuildHasher::hash_one(&self.hasher, key)
    }

    fn build(entries: &[Entry]) -> Box<Self> {
        let mut index = Box::new(Self {
            table: hashbrown::HashTable::with_capacity(entries.len()),
            hasher: foldhash::fast::RandomState::default(),
        });
        for (i, e) in entries.iter().enumerate() {
            // A key renamed onto another one (through `entries_mut`) is found at its first
            // place, as a linear scan finds it.
            if index.find(entries, &e.key).is_none() {
                index.push(entries, &e.key, i);
            }
        }
        index
    }

    /// Records that `entries[i]` holds (or is about to hold) `key`, a key not indexed yet;
    /// growing the table rehashes the entries indexed before.
    fn push(&mut self, entries: &[Entry], key: &str, i: usize) {
        let hash = self.hash(key);
        let hasher = &self.hasher;
        self.table
            .insert_unique(hash, u32::try_from(i).unwrap_or(u32::MAX), |&j| {
                std::hash::BuildHasher::hash_one(hasher, entries[j as usize].key.as_str())
            });
    }

    fn find(&self, entries: &[Entry], key: &str) -> Option<usize> {
        self.table
            .find(self.hash(key), |&j| entries[j as usize].key == key)
            .map(|&j| j as usize)
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl std::fmt::Debug for Map {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Map")
            .field("entries", &self.entries)
            .finish()
    }
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
            index: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position of `key`.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.find(&self.entries, key),
            None => self.entries.iter().position(|e| e.key == key),
        }
    }

    /// Rebuilds the index after a change that moved entries or may have renamed keys.
    fn reindex(&mut self) {
        self.index = (self.entries.len() >= INDEX_FROM).then(|| Index::build(&self.entries));
    }

    /// The index again where [`Map::entries_mut`] dropped it.
    fn ensure_index(&mut self) {
        if self.index.is_none() && self.entries.len() >= INDEX_FROM {
            self.reindex();
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.ensure_index();
        let i = self.position(key)?;
        Some(&mut self.entries[i].value)
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.position(key).map(|i| &self.entries[i])
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Inserts or replaces (last wins, in the first key's position, as go-yaml does).
    pub fn insert(&mut self, key: String, key_span: Span, value: Node) {
        if self.index.is_none() && self.entries.len() < INDEX_FROM {
            // perf: the small map, as before there was an index: one scan, one push.
            if let Some(e) = self.entries.iter_mut().find(|e| e.key == key) {
                e.key_span = key_span;
                e.value = value;
                return;
            }
            self.entries.push(Entry {
                key,
                key_span,
                value,
            });
            if self.entries.len() == INDEX_FROM {
                self.reindex();
            }
            return;
        }
        let index = self
            .index
            .get_or_insert_with(|| Index::build(&self.entries));
        if let Some(i) = index.find(&self.entries, &key) {
            let e = &mut self.entries[i];
            e.key_span = key_span;
            e.value = value;
            return;
        }
        index.push(&self.entries, &key, self.entries.len());
        self.entries.push(Entry {
            key,
            key_span,
            value,
        });
    }

    /// Inserts a new key at `index` (clamped to the end); an existing key is replaced where
    /// it is.
    pub(crate) fn insert_at(&mut self, index: usize, key: String, key_span: Span, value: Node) {
        self.ensure_index();
        if let Some(i) = self.position(&key) {
            let e = &mut self.entries[i];
            e.key_span = key_span;
            e.value = value;
            return;
        }
        let at = index.min(self.entries.len());
        if at == self.entries.len() {
            return self.insert(key, key_span, value);
        }
        self.entries.insert(
            at,
            Entry {
                key,
                key_span,
                value,
            },
        );
        // Entries after `at` moved: as costly as the move itself.
        self.reindex();
    }

    pub fn remove(&mut self, key: &str) -> Option<Node> {
        self.ensure_index();
        let idx = self.position(key)?;
        let removed = self.entries.remove(idx).value;
        if self.index.is_some() {
            self.reindex();
        }
        Some(removed)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Node)> {
        self.entries.iter().map(|e| (e.key.as_str(), &e.value))
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries to change in place, keys included (lookups are linear until the map next
    /// changes through [`Map::insert`], [`Map::get_mut`] or [`Map::remove`]).
    pub(crate) fn entries_mut(&mut self) -> &mut [Entry] {
        self.index = None;
        &mut self.entries
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }
}

impl Node {
    /// How many nodes the tree holds (this one included), counted without recursion.
    pub(crate) fn node_count(&self) -> usize {
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            count += 1;
            match &n.value {
                Value::Seq(items) => stack.extend(items.iter()),
                Value::Map(m) => stack.extend(m.entries().iter().map(|e| &e.value)),
                _ => {}
            }
        }
        count
    }

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
    pub(crate) fn type_name(&self) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: i64) -> Node {
        Node::synthetic(Value::Int(i))
    }

    /// The map against a plain list of pairs searched linearly, across the size where the
    /// index starts: every operation agrees, duplicates replace in the first key's place.
    #[test]
    fn the_index_agrees_with_a_linear_scan() {
        let mut map = Map::new();
        let mut naive: Vec<(String, i64)> = Vec::new();
        let set = |naive: &mut Vec<(String, i64)>, k: &str, v: i64| match naive
            .iter_mut()
            .find(|(key, _)| key == k)
        {
            Some(e) => e.1 = v,
            None => naive.push((k.to_owned(), v)),
        };
        for i in 0..200i64 {
            // Every seventh key repeats an earlier one.
            let k = if i % 7 == 6 {
                format!("k{}", i / 2)
            } else {
                format!("k{i}")
            };
            map.insert(k.clone(), Span::EMPTY, n(i));
            set(&mut naive, &k, i);
            if i % 50 == 49 {
                map.insert_at(3, format!("at{i}"), Span::EMPTY, n(-i));
                naive.insert(3, (format!("at{i}"), -i));
                let gone = format!("k{}", i - 10);
                assert_eq!(
                    map.remove(&gone).map(|v| v.value),
                    naive
                        .iter()
                        .position(|(k, _)| *k == gone)
                        .map(|p| Value::Int(naive.remove(p).1))
                );
            }
            let got: Vec<(String, i64)> = map
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_owned(),
                        if let Value::Int(i) = v.value { i } else { 0 },
                    )
                })
                .collect();
            assert_eq!(got, naive, "after {i}");
        }
        for (k, v) in &naive {
            assert_eq!(map.get(k).map(|n| &n.value), Some(&Value::Int(*v)));
        }
        assert!(map.get("absent").is_none() && !map.contains_key("k1x"));
        // Keys renamed in place are found under their new names.
        for e in map.entries_mut() {
            e.key.insert(0, '+');
        }
        assert!(map.get("+k5").is_some() && map.get("k5").is_none());
        assert!(map.get_mut("+k5").is_some() && map.get("+k5").is_some());
        map.insert("k5".to_owned(), Span::EMPTY, n(5));
        assert_eq!(map.entries().last().map(|e| e.key.as_str()), Some("k5"));
    }
}
