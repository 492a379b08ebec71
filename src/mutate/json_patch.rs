//! `patchesJson6902`: RFC 6902 operations on the resource tree, with the options Kyverno turns
//! on in evanphx/json-patch v5 (mutate.md §5): missing parents created on `add`, negative
//! indexes, a missing path on `remove` is a no-op, a failed `test` is an error.

use crate::source::Span;
use crate::yaml::{Limits, Map, Node, Value, parse_documents};

/// One operation.
#[derive(Clone, Debug)]
pub struct Op {
    pub op: String,
    pub path: Vec<String>,
    pub from: Option<Vec<String>>,
    pub value: Option<Node>,
}

/// Parses the patch string: JSON when it starts with `[`, else YAML.
pub fn parse(text: &str) -> Result<Vec<Op>, String> {
    let root = if text.starts_with('[') {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("invalid JSON patch: {e}"))?;
        Node::from_json(&json)
    } else {
        let docs = parse_documents(text, Limits::default())
            .map_err(|e| format!("invalid JSON patch: {}", e.message))?;
        docs.into_iter().next().map_or_else(Node::null, |d| d.root)
    };
    let Value::Seq(items) = root.value else {
        return Err("invalid JSON patch: not a list of operations".into());
    };
    items
        .iter()
        .map(|item| {
            let get = |k: &str| item.get(k);
            let op = get("op")
                .and_then(Node::as_str)
                .ok_or("invalid JSON patch: operation without op")?
                .to_owned();
            let path = get("path")
                .and_then(Node::as_str)
                .ok_or("invalid JSON patch: operation without path")
                .and_then(|p| pointer(p).ok_or("invalid JSON patch: path must start with /"))?;
            let from = match get("from").and_then(Node::as_str) {
                Some(f) => Some(pointer(f).ok_or("invalid JSON patch: from must start with /")?),
                None => None,
            };
            Ok(Op {
                op,
                path,
                from,
                value: get("value").cloned(),
            })
        })
        .collect()
}

/// Splits a JSON pointer into unescaped segments; `""` is the root.
pub fn pointer(p: &str) -> Option<Vec<String>> {
    if p.is_empty() {
        return Some(Vec::new());
    }
    let rest = p.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// The evanphx/json-patch options that differ between Kyverno's `patchesJson6902` and
/// Kubernetes' JSONPatch mutations.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// `EnsurePathExistsOnAdd`: `add` creates missing parents.
    pub ensure_path_on_add: bool,
    /// `AllowMissingPathOnRemove`: `remove` of a missing path is a no-op.
    pub allow_missing_on_remove: bool,
}

impl Options {
    /// Kyverno's `patchesJson6902` (mutate.md §5).
    pub(crate) const KYVERNO: Options = Options {
        ensure_path_on_add: true,
        allow_missing_on_remove: true,
    };
    /// Kubernetes' JSONPatch mutations (`gopkg.in/evanphx/json-patch.v4` defaults, as
    /// `apiserver/pkg/admission/plugin/policy/mutating/patch/json_patch.go` applies them).
    pub(crate) const KUBERNETES: Options = Options {
        ensure_path_on_add: false,
        allow_missing_on_remove: false,
    };
}

/// Applies the operations in order, with Kyverno's options.
pub fn apply(doc: &mut Node, ops: &[Op]) -> Result<(), String> {
    apply_with(doc, ops, Options::KYVERNO)
}

/// Applies the operations in order.
pub(crate) fn apply_with(doc: &mut Node, ops: &[Op], options: Options) -> Result<(), String> {
    for op in ops {
        let value = || {
            op.value
                .clone()
                .ok_or_else(|| format!("{} operation has no value", op.op))
        };
        match op.op.as_str() {
            "add" if options.ensure_path_on_add => add(doc, &op.path, value()?)?,
            "add" => {
                let value = value()?;
                match op.path.split_last() {
                    None => *doc = value,
                    Some((_, parents)) => {
                        let parent =
                            get_mut(doc, parents).ok_or_else(|| missing("add", &op.path))?;
                        insert(parent, &op.path, value)?;
                    }
                }
            }
            "remove" => {
                remove(doc, &op.path, options.allow_missing_on_remove)?;
            }
            "replace" => {
                get(doc, &op.path).ok_or_else(|| missing("replace", &op.path))?;
                remove(doc, &op.path, false)?;
                add(doc, &op.path, value()?)?;
            }
            "move" | "copy" => {
                let from = op.from.as_deref().ok_or("operation has no from")?;
                let v = get(doc, from)
                    .cloned()
                    .ok_or_else(|| missing(&op.op, from))?;
                if op.op == "move" {
                    remove(doc, from, false)?;
                }
                add(doc, &op.path, v)?;
            }
            "test" => {
                let want = value()?;
                let ok = get(doc, &op.path)
                    .is_some_and(|have| super::merge::value_eq(&have.value, &want.value));
                if !ok {
                    return Err(format!(
                        "testing value {} failed: test failed",
                        render(&op.path)
                    ));
                }
            }
            other => return Err(format!("unexpected operation {other:?}")),
        }
    }
    Ok(())
}

fn render(path: &[String]) -> String {
    path.iter().map(|s| format!("/{s}")).collect()
}

fn missing(op: &str, path: &[String]) -> String {
    format!(
        "{op} operation does not apply: doc is missing path: \"{}\"",
        render(path)
    )
}

/// An array index: `-` is `len`, negatives count from the end (`-1` is `len` for add).
fn index(seg: &str, len: usize, for_add: bool) -> Option<usize> {
    if seg == "-" {
        return for_add.then_some(len);
    }
    if seg.len() > 1 && seg.starts_with('0') {
        return None;
    }
    let i: i64 = seg.parse().ok()?;
    let len_i = i64::try_from(len).ok()?;
    let i = if i < 0 {
        i + len_i + i64::from(for_add)
    } else {
        i
    };
    let max = if for_add { len_i } else { len_i - 1 };
    (0..=max)
        .contains(&i)
        .then(|| usize::try_from(i).ok())
        .flatten()
}

fn get<'a>(doc: &'a Node, path: &[String]) -> Option<&'a Node> {
    path.iter().try_fold(doc, |n, seg| match &n.value {
        Value::Map(m) => m.get(seg),
        Value::Seq(items) => index(seg, items.len(), false).and_then(|i| items.get(i)),
        _ => None,
    })
}

fn get_mut<'a>(doc: &'a mut Node, path: &[String]) -> Option<&'a mut Node> {
    path.iter().try_fold(doc, |n, seg| match &mut n.value {
        Value::Map(m) => m.get_mut(seg),
        Value::Seq(items) => {
            let i = index(seg, items.len(), false)?;
            items.get_mut(i)
        }
        _ => None,
    })
}

fn is_array_segment(seg: &str) -> bool {
    seg == "-" || seg.parse::<i64>().is_ok()
}

/// `add` with `EnsurePathExistsOnAdd`: missing parents become arrays (next segment numeric
/// or `-`) or objects; short arrays are padded with nulls.
fn add(doc: &mut Node, path: &[String], value: Node) -> Result<(), String> {
    let Some((_, parents)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    let mut node = doc;
    for (i, seg) in parents.iter().enumerate() {
        let next_is_array = path.get(i + 1).is_some_and(|s| is_array_segment(s));
        let fresh = || {
            Node::synthetic(if next_is_array {
                Value::Seq(Vec::new())
            } else {
                Value::Map(Map::new())
            })
        };
        node = match &mut node.value {
            Value::Map(m) => {
                if !m.contains_key(seg) || m.get(seg).is_some_and(Node::is_null) {
                    m.insert(seg.clone(), Span::EMPTY, fresh());
                }
                m.get_mut(seg).ok_or_else(|| missing("add", path))?
            }
            Value::Seq(items) => {
                let present = index(seg, items.len(), false).filter(|&i| !items[i].is_null());
                let idx = match present {
                    Some(i) => i,
                    None => {
                        let i = create_index(seg, items)?;
                        items.insert(i, fresh());
                        i
                    }
                };
                &mut items[idx]
            }
            _ => return Err(missing("add", path)),
        };
    }
    insert(node, path, value)
}

/// Where `add` with `EnsurePathExistsOnAdd` creates a parent at array segment `seg` when the
/// element there is missing or null: the array is first padded with nulls up to a
/// non-negative index past its end, then the new parent is *inserted* at the index as an
/// `add` would insert it — so a null at that index moves one place on rather than being
/// replaced (Kyverno v1.19.0: `/a/0/b` on `a: [null]` gives `[{b: …}, null]`), `-` appends,
/// and a negative index counts from the end of the array one longer.
fn create_index(seg: &str, items: &mut Vec<Node>) -> Result<usize, String> {
    if seg == "-" {
        return Ok(items.len());
    }
    let i: i64 = seg
        .parse()
        .map_err(|_| format!("invalid array index {seg:?}"))?;
    if i > 100_000 {
        return Err(format!("array index {i} too large"));
    }
    if let Ok(want) = usize::try_from(i) {
        while items.len() < want {
            items.push(Node::null());
        }
    }
    index(seg, items.len(), true).ok_or_else(|| format!("invalid array index {seg:?}"))
}

/// `add`'s last step: `value` put at `path`'s last segment of `node`, its parent.
fn insert(node: &mut Node, path: &[String], value: Node) -> Result<(), String> {
    let Some(last) = path.last() else {
        return Err(missing("add", path));
    };
    match &mut node.value {
        Value::Map(m) => {
            m.insert(last.clone(), Span::EMPTY, value);
            Ok(())
        }
        Value::Seq(items) => {
            let i = index(last, items.len(), true).ok_or_else(|| {
                format!(
                    "add operation does not apply: index out of bounds at {}",
                    render(path)
                )
            })?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err(missing("add", path)),
    }
}

/// `remove`; with `allow_missing` a missing target is a no-op (`AllowMissingPathOnRemove`).
fn remove(doc: &mut Node, path: &[String], allow_missing: bool) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        *doc = Node::null();
        return Ok(());
    };
    let parent = get_mut(doc, parents);
    let done = match parent.map(|p| &mut p.value) {
        Some(Value::Map(m)) => m.remove(last).is_some(),
        Some(Value::Seq(items)) => match index(last, items.len(), false) {
            Some(i) => {
                items.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    };
    if done || allow_missing {
        Ok(())
    } else {
        Err(missing("remove", path))
    }
}
