//! `mutate.foreach` (mutate.md §6): entries in order, each over its list in the entry's order
//! (descending by default for strategic merge), element by element on the accumulated
//! resource, with nested loops. The context is checkpointed per entry and restored for every
//! element, so each element sees the resource as it was before the entry.

use super::{Patch, RuleError, apply_patch};
use crate::base::budget;
use crate::conditions::evaluate_block;
use crate::resource::Resource;
use crate::variables::{Context, substitute_at};
use crate::yaml::{Node, Value};

/// Runs the entries of a `foreach` on `res`; returns the patched tree and `true` (the rule is a
/// foreach, for the skip message).
pub(crate) fn apply(
    entries: &Node,
    res: &Resource,
    ctx: &mut Context,
) -> Result<(Node, bool), RuleError> {
    let doc = run_entries(entries, res, res.root.clone(), ctx, 0, "/mutate/foreach")?;
    Ok((doc, true))
}

fn run_entries(
    entries: &Node,
    res: &Resource,
    mut doc: Node,
    ctx: &mut Context,
    nesting: usize,
    path: &str,
) -> Result<Node, RuleError> {
    let items: Vec<Node> = match &entries.value {
        Value::Seq(items) => items.clone(),
        Value::Map(_) => vec![entries.clone()],
        _ => Vec::new(),
    };
    for (i, entry) in items.iter().enumerate() {
        // Each top-level entry sees the resource as previous entries left it.
        if nesting == 0 {
            ctx.set_path(&["request", "object"], doc.clone());
        }
        let entry_path = format!("{path}/{i}");
        doc = run_entry(entry, res, doc, ctx, nesting, &entry_path)?;
    }
    Ok(doc)
}

fn run_entry(
    entry: &Node,
    res: &Resource,
    mut doc: Node,
    ctx: &mut Context,
    nesting: usize,
    path: &str,
) -> Result<Node, RuleError> {
    let list_expr = entry.get("list").and_then(Node::as_str).unwrap_or("");
    let list = match ctx.query(list_expr) {
        Ok(l) => l,
        Err(e) if e.is_unknown_key() => Node::null(),
        Err(e) => {
            return Err(RuleError::Other(format!(
                "failed to evaluate list {list_expr}: {}",
                e.message
            )));
        }
    };
    let elements: Vec<(usize, Node)> = match list.value {
        Value::Seq(items) => items.into_iter().enumerate().collect(),
        Value::Null => Vec::new(),
        _ => vec![(0, list)],
    };
    let patch = entry
        .get("patchStrategicMerge")
        .map(|p| (Patch::Strategic, "patchStrategicMerge", p))
        .or_else(|| {
            entry
                .get("patchesJson6902")
                .map(|p| (Patch::Json, "patchesJson6902", p))
        });
    let nested = entry.get("foreach");
    let descending = match entry.get("order").and_then(Node::as_str) {
        Some("Descending") => true,
        Some("Ascending") => false,
        _ => matches!(patch, Some((Patch::Strategic, _, _))) && nested.is_none(),
    };
    let mut order: Vec<(usize, Node)> =
        elements.into_iter().filter(|(_, e)| !e.is_null()).collect();
    if descending {
        order.reverse();
    }
    ctx.checkpoint();
    let result = (|| {
        // An element that patches rebuilds the resource: it costs the resource's size too.
        let per_element = budget::FOREACH_ELEMENT_COST
            + if nested.is_none() && patch.is_some() {
                doc.node_count() as u64
            } else {
                0
            };
        for (index, element) in order {
            budget::work(per_element).map_err(|e| RuleError::Other(e.to_string()))?;
            // The context is reset to the entry's start for every element (§6.4 step 1).
            ctx.restore();
            ctx.add_element(&element, index, nesting);
            if let Some(c) = entry.get("context") {
                ctx.add_context_entries(c, &Default::default())
                    .map_err(|e| {
                        RuleError::Other(format!("failed to load context: {}", e.message))
                    })?;
            }
            if let Some(p) = entry.get("preconditions") {
                let r = evaluate_block(p, ctx).map_err(|e| {
                    RuleError::Other(format!("failed to evaluate preconditions: {}", e.message))
                })?;
                if !r.holds {
                    continue;
                }
            }
            if let Some(n) = nested {
                doc = run_entries(n, res, doc, ctx, nesting + 1, &format!("{path}/foreach"))?;
            } else if let Some((kind, field, p)) = patch {
                let p =
                    substitute_at(p, ctx, &format!("{path}/{field}")).map_err(RuleError::Vars)?;
                if let Some(patched) = apply_patch(kind, &p, &doc, res)? {
                    doc = patched;
                }
            }
        }
        Ok(doc)
    })();
    ctx.reset();
    result
}
