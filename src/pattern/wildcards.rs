//! Wildcard keys under `metadata.labels` / `metadata.annotations` (validate.md §3.5,
//! `kyverno/kyverno:pkg/engine/wildcards/wildcards.go` `ExpandInMetadata`).
//!
//! Upstream rewrites the pattern's label/annotation map in place: wildcard keys become the
//! first matching resource key, and every non-string value is dropped. Because the rewrite
//! mutates the shared pattern, it persists for the rest of the walk (the next element of an
//! array sees the already-expanded keys). [`Expansions`] keeps those rewritten copies so the
//! walk sees exactly what Kyverno's mutated pattern would hold, without touching the policy.
//! Where several resource keys match, Kyverno picks one at random (Go map order); kpol picks
//! the lexicographically smallest.

use std::rc::Rc;

use super::anchor::{anchor_string, parse_anchor};
use super::scalar::{contains_wildcard, wildcard_match};
use crate::yaml::{Map, Node, Value};

/// Rewritten `metadata` pattern maps, keyed by the address of the original pattern node.
/// Entries are never removed during a walk, so addresses stay unique.
#[derive(Debug, Default)]
pub(crate) struct Expansions {
    entries: Vec<(usize, Rc<Value>)>,
}

impl Expansions {
    fn get(&self, id: usize) -> Option<Rc<Value>> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| *k == id)
            .map(|(_, v)| Rc::clone(v))
    }
}

fn node_id(v: &Value) -> usize {
    std::ptr::from_ref(v) as usize
}

/// `getPatternValue`: the first entry whose key is `tag` or an anchor on `tag`.
fn find_tag<'m>(map: &'m Map, tag: &str) -> Option<(usize, &'m Node)> {
    map.entries()
        .iter()
        .enumerate()
        .find(|(_, e)| e.key == tag || parse_anchor(&e.key).is_some_and(|a| a.key == tag))
        .map(|(i, e)| (i, &e.value))
}

/// `getValueAsStringMap`: the `tag` map inside `data` (index of its entry and the map).
fn tag_map<'m>(tag: &str, data: &'m Value) -> Option<(usize, &'m Map)> {
    let Value::Map(map) = data else { return None };
    let (idx, node) = find_tag(map, tag)?;
    match &node.value {
        Value::Map(m) => Some((idx, m)),
        _ => None,
    }
}

/// Whether [`expand_in_metadata`] can ever change the pattern `metadata` value `meta`: only a
/// labels or annotations map holding a wildcard key or a non-string value is rewritten, so
/// otherwise the expansion leaves it as written for every resource.
pub(crate) fn may_rewrite(meta: &Value) -> bool {
    ["labels", "annotations"]
        .iter()
        .any(|tag| tag_map(tag, meta).is_some_and(|(_, p)| needs_rewrite(p)))
}

/// Whether expanding this pattern tag map can change it at all.
fn needs_rewrite(pattern: &Map) -> bool {
    pattern
        .iter()
        .any(|(k, v)| contains_wildcard(k) || !matches!(v.value, Value::Str(_)))
}

/// `replaceWildcardsInMapKeys` over the string-valued entries.
fn rewrite(pattern: &Map, resource: &Map) -> Map {
    let resource_key = |k: &str| -> String {
        resource
            .iter()
            .filter(|(rk, v)| matches!(v.value, Value::Str(_)) && wildcard_match(k, rk))
            .map(|(rk, _)| rk)
            .min()
            .unwrap_or(k)
            .to_owned()
    };
    let mut out = Map::with_capacity(pattern.len());
    for e in pattern.entries() {
        if !matches!(e.value.value, Value::Str(_)) {
            continue;
        }
        let key = if !contains_wildcard(&e.key) {
            e.key.clone()
        } else if let Some(a) = parse_anchor(&e.key) {
            anchor_string(a.kind, &resource_key(a.key))
        } else {
            resource_key(&e.key)
        };
        out.insert(key, e.key_span, e.value.clone());
    }
    out
}

/// Applies `ExpandInMetadata` for the pattern map `pattern` compared with `resource`;
/// `metadata` is the index of its metadata entry (`getPatternValue`, found once per map plan).
/// Returns that index and the value to use in its place when Kyverno's pattern would by now
/// differ from the policy text; `None` otherwise.
pub(crate) fn expand_in_metadata(
    pattern: &Map,
    metadata: Option<usize>,
    resource: &Map,
    expansions: &mut Expansions,
) -> Option<(usize, Rc<Value>)> {
    let idx = metadata?;
    let original = &pattern.entries()[idx].value.value;
    if matches!(original, Value::Null) {
        return None;
    }
    let id = node_id(original);
    let stored = expansions.get(id);
    let unchanged = |stored: Option<Rc<Value>>| stored.map(|rc| (idx, rc));
    let Some(resource_meta) = resource.get("metadata").filter(|n| n.value != Value::Null) else {
        return unchanged(stored);
    };
    let current: &Value = stored.as_deref().unwrap_or(original);
    let Value::Map(current_map) = current else {
        return unchanged(stored);
    };
    let mut replacements: Vec<(usize, Map)> = Vec::new();
    for tag in ["labels", "annotations"] {
        let Some((tag_idx, pdata)) = tag_map(tag, current) else {
            continue;
        };
        let Some((_, rdata)) = tag_map(tag, &resource_meta.value) else {
            continue;
        };
        if needs_rewrite(pdata) {
            replacements.push((tag_idx, rewrite(pdata, rdata)));
        }
    }
    if replacements.is_empty() {
        return unchanged(stored);
    }
    let mut rebuilt = Map::with_capacity(current_map.len());
    for (i, e) in current_map.entries().iter().enumerate() {
        let value = match replacements.iter().position(|(ri, _)| *ri == i) {
            Some(p) => Node::new(
                Value::Map(std::mem::take(&mut replacements[p].1)),
                e.value.span,
            ),
            None => e.value.clone(),
        };
        rebuilt.insert(e.key.clone(), e.key_span, value);
    }
    let rc = Rc::new(Value::Map(rebuilt));
    expansions.entries.push((id, Rc::clone(&rc)));
    Some((idx, rc))
}
