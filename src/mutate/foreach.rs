//! `mutate.foreach` (mutate.md §6): entries in order, each over its list in the entry's order
//! (descending by default for strategic merge), element by element on the accumulated
//! resource, with nested loops.

use super::vars::{VarContext, Variables};
use super::{Patch, RuleError, apply_patch};
use crate::resource::Resource;
use crate::yaml::{Node, Value};

/// Runs the entries of a `foreach` on `res`; returns the patched tree and `true` (the rule is a
/// foreach, for the skip message).
pub(crate) fn apply(
    entries: &Node,
    res: &Resource,
    ctx: &VarContext,
    vars: &dyn Variables,
) -> Result<(Node, bool), RuleError> {
    let doc = run_entries(entries, res, res.root.clone(), ctx, vars)?;
    Ok((doc, true))
}

fn run_entries(
    entries: &Node,
    res: &Resource,
    mut doc: Node,
    ctx: &VarContext,
    vars: &dyn Variables,
) -> Result<Node, RuleError> {
    let items: Vec<Node> = match &entries.value {
        Value::Seq(items) => items.clone(),
        Value::Map(_) => vec![entries.clone()],
        _ => Vec::new(),
    };
    for entry in &items {
        // Each entry sees the resource as previous entries left it.
        let mut entry_ctx = ctx.clone();
        if ctx.elements.is_empty() {
            entry_ctx.object = doc.clone();
        }
        doc = run_entry(entry, res, doc, &entry_ctx, vars)?;
    }
    Ok(doc)
}

fn run_entry(
    entry: &Node,
    res: &Resource,
    mut doc: Node,
    ctx: &VarContext,
    vars: &dyn Variables,
) -> Result<Node, RuleError> {
    let list_expr = entry.get("list").and_then(Node::as_str).unwrap_or("");
    let list = vars.query(list_expr, ctx).map_err(RuleError::Vars)?;
    let elements: Vec<(usize, Node)> = match list.value {
        Value::Seq(items) => items.into_iter().enumerate().collect(),
        Value::Null => Vec::new(),
        _ => vec![(0, list)],
    };
    let patch = entry
        .get("patchStrategicMerge")
        .map(|p| (Patch::Strategic, p))
        .or_else(|| entry.get("patchesJson6902").map(|p| (Patch::Json, p)));
    let nested = entry.get("foreach");
    let descending = match entry.get("order").and_then(Node::as_str) {
        Some("Descending") => true,
        Some("Ascending") => false,
        _ => matches!(patch, Some((Patch::Strategic, _))) && nested.is_none(),
    };
    let mut order: Vec<(usize, Node)> =
        elements.into_iter().filter(|(_, e)| !e.is_null()).collect();
    if descending {
        order.reverse();
    }
    for (index, element) in order {
        // The context is reset to the entry's start for every element (§6.4 step 1).
        let mut el_ctx = ctx.clone();
        el_ctx.elements.push((element, index));
        if let Some(c) = entry.get("context") {
            vars.load_context(c, &mut el_ctx).map_err(RuleError::Vars)?;
        }
        if let Some(p) = entry.get("preconditions")
            && !vars.preconditions(p, &el_ctx).map_err(RuleError::Vars)?
        {
            continue;
        }
        if let Some(n) = nested {
            doc = run_entries(n, res, doc, &el_ctx, vars)?;
        } else if let Some((kind, p)) = patch {
            let p = vars.substitute(p, &el_ctx).map_err(RuleError::Vars)?;
            doc = apply_patch(kind, &p, &doc, res)?;
        }
    }
    Ok(doc)
}
