//! Kyverno's anchor preprocessing of a `patchStrategicMerge` overlay (mutate.md §4.2–4.4):
//! `+(k)` add-if-absent, `(k)` conditions, `<(k)` global conditions, then the anchors are
//! stripped. Follows `kyverno/kyverno:pkg/engine/mutate/patch/strategicPreprocessing.go`,
//! including its observable quirks (one shared copy per list element, the deletion-index
//! defect of `deleteConditionElements`).

use crate::pattern::{Outcome, match_pattern};
use crate::yaml::{Map, Node, Value};

/// The anchor a PSM key carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `(k)`
    Condition,
    /// `<(k)`
    Global,
    /// `+(k)`
    AddIfAbsent,
    /// `=(k)`, `X(k)`, `^(k)`: validate-only, merged verbatim in PSM.
    Other,
}

/// Parses `^([+<=X^])?\((.+)\)$` after trimming spaces.
pub(crate) fn parse_anchor(key: &str) -> Option<(Anchor, &str)> {
    let key = key.trim();
    let (kind, rest) = match key.as_bytes().first()? {
        b'+' => (Anchor::AddIfAbsent, &key[1..]),
        b'<' => (Anchor::Global, &key[1..]),
        b'=' | b'X' | b'^' => (Anchor::Other, &key[1..]),
        _ => (Anchor::Condition, key),
    };
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    (!inner.is_empty()).then_some((kind, inner))
}

fn is_condition(key: &str) -> bool {
    matches!(
        parse_anchor(key),
        Some((Anchor::Condition | Anchor::Global, _))
    )
}

/// Why the overlay is discarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Discard {
    Condition,
    Global,
}

/// Preprocesses the overlay in place against the resource; `Err` means the whole patch is
/// discarded (the rule then skips with `no patches applied`).
pub(crate) fn preprocess(overlay: &mut Node, resource: &Node) -> Result<(), Discard> {
    walk(overlay, Some(resource))?;
    if let Value::Map(m) = &mut overlay.value {
        let keys: Vec<String> = m.keys().map(str::to_owned).collect();
        for k in keys {
            let remove_scalars = is_condition(&k);
            if m.get_mut(&k).is_some_and(|v| strip(v, remove_scalars)) {
                m.remove(&k);
            }
        }
    }
    Ok(())
}

fn walk(p: &mut Node, r: Option<&Node>) -> Result<(), Discard> {
    match &mut p.value {
        Value::Map(m) => walk_map(m, r),
        Value::Seq(items) => {
            if matches!(items.first().map(|n| &n.value), Some(Value::Map(_))) {
                walk_list_of_maps(items, r)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Step 1 of a map: `+(k)` keys are dropped when the resource has `k`, else renamed to `k`.
fn add_if_absent(m: &mut Map, r: Option<&Node>) {
    let rmap = r.and_then(Node::as_map);
    let mut drop = Vec::new();
    for e in m.entries_mut() {
        if let Some((Anchor::AddIfAbsent, k)) = parse_anchor(&e.key) {
            if rmap.is_some_and(|rm| rm.contains_key(k)) {
                drop.push(e.key.clone());
            } else {
                e.key = k.to_owned();
            }
        }
    }
    for k in drop {
        m.remove(&k);
    }
}

fn walk_map(m: &mut Map, r: Option<&Node>) -> Result<(), Discard> {
    add_if_absent(m, r);
    for (wanted, err) in [
        (Anchor::Global, Discard::Global),
        (Anchor::Condition, Discard::Condition),
    ] {
        for e in m.entries_mut() {
            if let Some((a, k)) = parse_anchor(&e.key)
                && a == wanted
            {
                let k = k.to_owned();
                if !check(&mut e.value, r, &k) {
                    return Err(err);
                }
            }
        }
    }
    let rmap = r.and_then(Node::as_map);
    for e in m.entries_mut() {
        if matches!(
            parse_anchor(&e.key),
            Some((Anchor::Condition | Anchor::Global | Anchor::AddIfAbsent, _))
        ) {
            continue;
        }
        walk(&mut e.value, rmap.and_then(|rm| rm.get(&e.key)))?;
    }
    Ok(())
}

fn check(pv: &mut Node, r: Option<&Node>, k: &str) -> bool {
    let Some(rv) = r.and_then(Node::as_map).and_then(|rm| rm.get(k)) else {
        return false;
    };
    if let Value::Map(pm) = &mut pv.value
        && pm
            .keys()
            .any(|key| matches!(parse_anchor(key), Some((Anchor::AddIfAbsent, _))))
    {
        add_if_absent(pm, Some(rv));
        return true;
    }
    matches!(match_pattern(&rv.value, &pv.value, None), Outcome::Pass)
}

/// Whether a node has a `()`, `<()` or `+()` key at any depth.
fn has_anchor(n: &Node, only_global: bool) -> bool {
    match &n.value {
        Value::Map(m) => m.iter().any(|(k, v)| {
            let hit = match parse_anchor(k) {
                Some((Anchor::Global, _)) => true,
                Some((Anchor::Condition | Anchor::AddIfAbsent, _)) => !only_global,
                _ => false,
            };
            hit || has_anchor(v, only_global)
        }),
        Value::Seq(items) => items.iter().any(|i| has_anchor(i, only_global)),
        _ => false,
    }
}

fn walk_list_of_maps(p: &mut Vec<Node>, r: Option<&Node>) -> Result<(), Discard> {
    let relems: &[Node] = r.and_then(Node::as_seq).unwrap_or(&[]);
    let original = p.len();
    for i in 0..original {
        let Some(e) = p.get(i) else { break };
        if !has_anchor(e, false) {
            continue;
        }
        let global = has_anchor(e, true);
        let mut c = e.clone();
        let mut any_global_ok = false;
        let mut last_global_err = None;
        for relem in relems {
            match walk(&mut c, Some(relem)) {
                Err(Discard::Condition) => continue,
                Err(Discard::Global) => {
                    last_global_err = Some(Discard::Global);
                    continue;
                }
                Ok(()) => {}
            }
            if global {
                any_global_ok = true;
            } else {
                add_named_copy(p, &c, relem);
            }
        }
        if r.is_none() {
            match walk(&mut c, None) {
                Err(Discard::Condition) => continue,
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            if global {
                any_global_ok = true;
            }
        }
        if let (false, Some(e)) = (any_global_ok, last_global_err) {
            return Err(e);
        }
    }
    Ok(())
}

fn add_named_copy(p: &mut Vec<Node>, c: &Node, relem: &Node) {
    let Some(name) = relem
        .get("name")
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
    else {
        return;
    };
    let mut n = c.clone();
    if strip(&mut n, true) {
        return;
    }
    if let Value::Map(m) = &mut n.value {
        m.insert(
            "name".to_owned(),
            crate::source::Span::EMPTY,
            Node::synthetic(Value::Str(name.to_owned())),
        );
        p.push(n);
    }
}

/// Removes anchors from an overlay node; returns whether the node itself should be deleted.
fn strip(node: &mut Node, remove_scalars: bool) -> bool {
    match &mut node.value {
        Value::Map(m) => {
            let anchored: Vec<String> = m
                .keys()
                .filter(|k| is_condition(k))
                .map(str::to_owned)
                .collect();
            let mut remain = false;
            for a in anchored {
                if m.get_mut(&a).is_some_and(|v| strip(v, true)) {
                    m.remove(&a);
                } else {
                    remain = true;
                }
            }
            if remain {
                for e in m.entries_mut() {
                    if let Some((Anchor::Condition | Anchor::Global, k)) = parse_anchor(&e.key) {
                        e.key = k.to_owned();
                    }
                }
            }
            let keys: Vec<String> = m.keys().map(str::to_owned).collect();
            for k in keys {
                if m.get_mut(&k).is_some_and(|v| strip(v, false)) {
                    m.remove(&k);
                }
            }
            m.is_empty()
        }
        Value::Seq(items) => {
            let was_empty = items.is_empty();
            let snapshot = items.clone();
            for (i, e) in snapshot.iter().enumerate() {
                let anchored = has_anchor(e, false) || e.as_str().is_some_and(is_condition);
                // Upstream deletes by the snapshot's index on the shortened list.
                if (anchored || strip(&mut e.clone(), false)) && i < items.len() {
                    items.remove(i);
                }
            }
            for it in items.iter_mut() {
                if !has_anchor(it, false) {
                    strip(it, false);
                }
            }
            items.is_empty() && !was_empty
        }
        _ => remove_scalars,
    }
}

#[cfg(test)]
#[path = "anchors_tests.rs"]
mod tests;
