//! `generate.foreach` (`generator.go` `generateForeach`): each entry's `list` is evaluated as
//! JMESPath; for every non-null element the entry's `context` is loaded and its
//! `preconditions` checked with `element`/`elementIndex` set, then the entry's own pattern
//! (`apiVersion`, `kind`, `name`, `namespace`, `data`/`clone`/`cloneList`) generates.

use std::collections::BTreeMap;

use super::RuleGeneration;
use super::target::{RuleCx, generate_pattern};
use crate::conditions::evaluate_block;
use crate::variables::Context;
use crate::yaml::{Node, Value};

/// Runs every foreach entry of a rule.
pub(super) fn generate_foreach(
    cx: &RuleCx<'_, '_>,
    entries: &Node,
    ctx: &mut Context,
    out: &mut RuleGeneration,
) {
    let list = match &entries.value {
        Value::Seq(items) => items.as_slice(),
        _ => std::slice::from_ref(entries),
    };
    for (i, entry) in list.iter().enumerate() {
        let expr = entry.get("list").and_then(Node::as_str).unwrap_or("");
        let elements = match ctx.query(expr) {
            Ok(Node {
                value: Value::Seq(items),
                ..
            }) => items,
            Ok(Node {
                value: Value::Null, ..
            }) => Vec::new(),
            Ok(other) => {
                out.problems.push(format!(
                    "failed to evaluate {i} foreach list: {} is not a list",
                    other.value.type_name()
                ));
                continue;
            }
            Err(e) => {
                out.problems
                    .push(format!("failed to evaluate {i} foreach list: {e}"));
                continue;
            }
        };
        let mut pattern = entry.clone();
        if let Value::Map(m) = &mut pattern.value {
            for k in ["list", "context", "preconditions"] {
                m.remove(k);
            }
        }
        ctx.checkpoint();
        for (index, element) in elements.iter().enumerate() {
            if element.is_null() {
                continue;
            }
            ctx.restore();
            ctx.add_element(element, index, 0);
            if let Some(entries) = entry.get("context")
                && let Err(e) = ctx.add_context_entries(entries, &BTreeMap::new())
            {
                out.problems.push(format!(
                    "failed to process {index} element of foreach {i}: failed to load context: {e}"
                ));
                continue;
            }
            if let Some(pre) = entry.get("preconditions") {
                match evaluate_block(pre, ctx) {
                    Ok(r) if r.holds => {}
                    Ok(_) => continue,
                    Err(e) => {
                        out.problems.push(format!(
                            "failed to process {index} element of foreach {i}: failed to evaluate preconditions: {e}"
                        ));
                        continue;
                    }
                }
            }
            generate_pattern(cx, &pattern, ctx, out);
        }
        ctx.reset();
    }
}
