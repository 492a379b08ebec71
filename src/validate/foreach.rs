//! `validate.foreach` (validate.md §10): each entry's `list` evaluated as raw JMESPath, every
//! element checked with `pattern`/`anyPattern`/`deny` or a nested `foreach`, with Kyverno's
//! rules for skipped elements, empty lists and the first failure.

use std::borrow::Cow;

use crate::base::budget;
use crate::report::Status;
use crate::source::Span;
use crate::variables::Context;
use crate::yaml::{Node, Value};

use super::{PatternScan, Verdict, deny_check, pattern_check, preconditions_block};

/// One `foreach` entry, read once at load (its fields looked up, its patterns scanned and
/// planned) instead of per element.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// `list`, a raw JMESPath expression (`""` when missing).
    list: String,
    element_scope: Option<bool>,
    context: Option<Node>,
    preconditions: Option<Node>,
    body: Body,
}

/// What an entry checks each element with.
#[derive(Clone, Debug)]
enum Body {
    Deny(Node),
    /// `pattern` (one node, `any` false) or `anyPattern`.
    Patterns {
        nodes: Vec<Node>,
        any: bool,
        scan: PatternScan,
    },
    Foreach(Vec<Entry>),
    /// None of them: the element is not counted.
    Nothing,
}

/// The entries of a `foreach` value (a list, or one entry).
pub(crate) fn compile(entries: &Node) -> Vec<Entry> {
    let list = match &entries.value {
        Value::Seq(items) => items.as_slice(),
        _ => std::slice::from_ref(entries),
    };
    list.iter().map(compile_entry).collect()
}

fn compile_entry(entry: &Node) -> Entry {
    let patterns = |nodes: &[Node], any: bool| Body::Patterns {
        nodes: nodes.to_vec(),
        any,
        scan: PatternScan::of(nodes),
    };
    let body = if let Some(deny) = entry.get("deny") {
        Body::Deny(deny.clone())
    } else if let Some(p) = entry.get("pattern") {
        patterns(std::slice::from_ref(p), false)
    } else if let Some(Value::Seq(ps)) = entry.get("anyPattern").map(|n| &n.value) {
        patterns(ps, true)
    } else if let Some(nested) = entry.get("foreach") {
        Body::Foreach(compile(nested))
    } else {
        Body::Nothing
    };
    Entry {
        list: entry
            .get("list")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned(),
        element_scope: entry.get("elementScope").and_then(Node::as_bool),
        context: entry.get("context").cloned(),
        preconditions: entry.get("preconditions").cloned(),
        body,
    }
}

/// What a foreach list (or a whole rule) came to.
enum Outcome {
    /// Some element passed and none failed.
    Pass,
    /// The first element that failed or errored, with its message.
    Stop(Verdict),
    /// Nothing was counted: no response (unless a list failed to evaluate).
    Nothing { list_error: Option<String> },
}

/// Evaluates a rule's `validate.foreach` list ([`compile`]d). `None`: no rule response at all.
pub(crate) fn foreach_rule(
    rule_name: &str,
    message: Option<&str>,
    entries: &[Entry],
    resource: &Node,
    ctx: &mut Context,
) -> Option<Verdict> {
    match run_entries(rule_name, message, entries, resource, ctx, 0) {
        Outcome::Pass => Some(Verdict::new(Status::Pass, "rule passed")),
        // A failure always says where it is: its path is relative to the element, so it
        // must not be located from the resource again (an element without a place: the
        // resource).
        Outcome::Stop(mut v) => {
            v.span.get_or_insert(resource.span);
            Some(v)
        }
        Outcome::Nothing {
            list_error: Some(e),
        } => Some(Verdict::new(
            Status::Error,
            format!("failed to evaluate list: {e}"),
        )),
        Outcome::Nothing { list_error: None } => None,
    }
}

/// Runs each foreach entry in order; the first entry that does not pass decides.
fn run_entries(
    rule_name: &str,
    message: Option<&str>,
    entries: &[Entry],
    scope: &Node,
    ctx: &mut Context,
    level: usize,
) -> Outcome {
    let mut passed = false;
    let mut list_error = None;
    for entry in entries {
        match run_entry(rule_name, message, entry, scope, ctx, level) {
            Outcome::Pass => passed = true,
            Outcome::Stop(v) => return Outcome::Stop(v),
            Outcome::Nothing { list_error: e } => list_error = list_error.or(e),
        }
    }
    if passed {
        Outcome::Pass
    } else {
        Outcome::Nothing { list_error }
    }
}

fn run_entry<'r>(
    rule_name: &str,
    message: Option<&str>,
    entry: &Entry,
    scope: &Node,
    ctx: &mut Context<'r>,
    level: usize,
) -> Outcome {
    // perf: a list in the resource is borrowed, not copied (docs/PERFORMANCE.md).
    let list = match ctx.query_lent(&entry.list) {
        Ok(list) => list,
        // A missing field: the entry is silently skipped; other errors are remembered.
        Err(e) if e.is_unknown_key() => return Outcome::Nothing { list_error: None },
        Err(e) => {
            return Outcome::Nothing {
                list_error: Some(e.message),
            };
        }
    };
    fn items(list: &Node) -> &[Node] {
        match &list.value {
            Value::Seq(items) => items,
            _ => std::slice::from_ref(list),
        }
    }
    // Elements of a borrowed list are lent to the context too, not copied.
    let lendable: Option<&'r [Node]> = match &list {
        Cow::Borrowed(l) => Some(items(l)),
        Cow::Owned(_) => None,
    };
    let elements = lendable.unwrap_or_else(|| items(&list));
    let element_scope = entry.element_scope;
    let mut counted = false;
    ctx.checkpoint();
    for (i, element) in elements.iter().enumerate() {
        if element.is_null() {
            continue;
        }
        if let Err(e) = budget::work(budget::FOREACH_ELEMENT_COST) {
            ctx.reset();
            return Outcome::Stop(Verdict {
                status: Status::Error,
                message: e.to_string(),
                path: None,
                span: None,
            });
        }
        ctx.restore();
        match lendable {
            Some(items) => ctx.lend_element(&items[i], i, level),
            None => ctx.add_element(element, i, level),
        }
        let outcome = run_element(
            rule_name,
            message,
            entry,
            element,
            element_scope,
            scope,
            ctx,
            level,
        );
        match outcome {
            Some(v) if v.status == Status::Pass => counted = true,
            Some(mut v) if matches!(v.status, Status::Fail | Status::Error) => {
                ctx.reset();
                // Where the element failed: what the body located in it (a pattern's field,
                // a nested foreach's element), else the element itself.
                if v.span.is_none() && element.span != Span::EMPTY {
                    v.span = Some(element.span);
                }
                return Outcome::Stop(Verdict {
                    message: format!("validation failure: {}", v.message),
                    ..v
                });
            }
            _ => {}
        }
    }
    ctx.reset();
    if counted {
        Outcome::Pass
    } else {
        Outcome::Nothing { list_error: None }
    }
}

/// One element: scope, context, preconditions, then the body. `None`: not counted.
#[allow(clippy::too_many_arguments)]
fn run_element(
    rule_name: &str,
    message: Option<&str>,
    entry: &Entry,
    element: &Node,
    element_scope: Option<bool>,
    outer: &Node,
    ctx: &mut Context,
    level: usize,
) -> Option<Verdict> {
    let is_map = matches!(element.value, Value::Map(_));
    if element_scope == Some(true) && !is_map {
        return Some(Verdict::new(
            Status::Error,
            "failed to process foreach: cannot use elementScope=true foreach rules for elements that are not maps, expected type=map got type=".to_owned()
                + element.value.type_name(),
        ));
    }
    let scope = if is_map && element_scope != Some(false) {
        element
    } else {
        outer
    };
    if let Some(entries) = &entry.context
        && let Err(e) = ctx.add_context_entries(entries, &Default::default())
    {
        return Some(Verdict::new(
            Status::Error,
            format!("failed to load context: {e}"),
        ));
    }
    // Preconditions false, or failing to evaluate, skip the element (§9).
    if let Some(pre) = &entry.preconditions
        && !preconditions_block(pre, ctx)
    {
        return None;
    }
    let mut verdict = match &entry.body {
        Body::Deny(deny) => deny_check(rule_name, message, deny, ctx),
        Body::Patterns { nodes, any, scan } => pattern_check(
            rule_name,
            message,
            *any,
            scan.patterns(nodes),
            scope,
            Some(ctx),
        ),
        Body::Foreach(nested) => {
            return match run_entries(rule_name, message, nested, scope, ctx, level + 1) {
                Outcome::Pass => Some(Verdict::new(Status::Pass, "rule passed")),
                Outcome::Stop(v) => Some(v),
                Outcome::Nothing { .. } => None,
            };
        }
        Body::Nothing => return None,
    };
    // A pattern path is relative to the scope (the element, or the outer scope under
    // `elementScope: false`): locate it there (lists keep the resource's spans). A located
    // node without a place leaves the span to the element (run_entry).
    if let Some(path) = &verdict.path {
        let (span, _) = scope.locate(path);
        if span != Span::EMPTY {
            verdict.span = Some(span);
        }
    }
    Some(verdict)
}
