//! Building one generated rule document from a Pod rule (`generateRule`,
//! `generateRuleForControllers`, `generateCronJobRule` in
//! `kyverno/kyverno:pkg/autogen/v1/rule.go`; match.md §8.4–8.5).
//!
//! Works on the rule's YAML tree. Moved subtrees keep their spans; wrapper nodes created here
//! take the span of the node they wrap, so findings still point into the policy file.

use super::rewrite::shift_references;
use crate::base::gvk::contains_kind;
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

/// The six non-CronJob controllers Kyverno validates in the annotation.
const STANDARD: &[&str] = &[
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
];

/// `ConvertKindsToGVK`.
pub fn to_gvk(kind: &str) -> String {
    match kind {
        "DaemonSet" => "apps/v1/DaemonSet",
        "Deployment" => "apps/v1/Deployment",
        "Job" => "batch/v1/Job",
        "StatefulSet" => "apps/v1/StatefulSet",
        "ReplicaSet" => "apps/v1/ReplicaSet",
        "ReplicationController" => "v1/ReplicationController",
        "CronJob" => "batch/v1/CronJob",
        "Pod" => "v1/Pod",
        other => other,
    }
    .to_owned()
}

/// `splitKinds`: split on `,` (no trimming) and sort.
pub fn split_kinds(controllers: &str) -> Vec<String> {
    let mut v: Vec<String> = controllers.split(',').map(str::to_owned).collect();
    v.sort();
    v
}

/// `getAutogenRuleName`: `prefix-name`, cut to 63 bytes.
pub fn autogen_name(prefix: &str, name: &str) -> String {
    let mut s = format!("{prefix}-{name}");
    if s.len() > 63 {
        let mut cut = 63;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

fn str_list(node: Option<&Node>) -> Vec<String> {
    node.map(Node::str_items).unwrap_or_default()
}

fn seq_nonempty(m: &Map, key: &str) -> bool {
    m.get(key)
        .and_then(Node::as_seq)
        .is_some_and(|s| !s.is_empty())
}

/// Kinds of a block: flat, then any, then all (`GetKinds`).
fn block_kinds(block: Option<&Node>) -> Vec<String> {
    let Some(b) = block else {
        return Vec::new();
    };
    let mut out = str_list(b.get_path(&["resources", "kinds"]));
    for key in ["any", "all"] {
        for f in b.get(key).and_then(Node::as_seq).unwrap_or(&[]) {
            out.extend(str_list(f.get_path(&["resources", "kinds"])));
        }
    }
    out
}

fn kinds_node(kinds: &[String], span: Span) -> Node {
    Node::new(
        Value::Seq(
            kinds
                .iter()
                .map(|k| Node::new(Value::Str(to_gvk(k)), span))
                .collect(),
        ),
        span,
    )
}

/// Sets `resources.kinds` of a filter map, creating `resources` if needed.
fn set_kinds(filter: &mut Node, kinds: &[String]) {
    let span = filter
        .get_path(&["resources", "kinds"])
        .or_else(|| filter.get("resources"))
        .map_or(filter.span, |n| n.span);
    let fspan = filter.span;
    let Value::Map(fm) = &mut filter.value else {
        return;
    };
    if !matches!(fm.get("resources").map(|n| &n.value), Some(Value::Map(_))) {
        fm.insert(
            "resources".into(),
            fspan,
            Node::new(Value::Map(Map::new()), fspan),
        );
    }
    if let Some(Node {
        value: Value::Map(rm),
        ..
    }) = fm.get_mut("resources")
    {
        let key_span = rm.entry("kinds").map_or(span, |e| e.key_span);
        rm.insert("kinds".into(), key_span, kinds_node(kinds, span));
    }
}

/// Which filters of an any/all list get the new kinds.
#[derive(Clone, Copy)]
enum Replace {
    /// Filters whose kinds name `Pod`.
    PodFilters,
    /// Every filter (CronJob rules).
    All,
}

fn rewrite_block(block: &mut Node, kinds: &[String], how: Replace, is_match: bool) {
    let Value::Map(m) = &mut block.value else {
        return;
    };
    let list_key = ["any", "all"].into_iter().find(|k| seq_nonempty(m, k));
    if let Some(key) = list_key {
        if let Some(Node {
            value: Value::Seq(filters),
            ..
        }) = m.get_mut(key)
        {
            for f in filters {
                let replace = match how {
                    Replace::All => true,
                    Replace::PodFilters => {
                        contains_kind(&str_list(f.get_path(&["resources", "kinds"])), "Pod")
                    }
                };
                if replace {
                    set_kinds(f, kinds);
                }
            }
        }
        return;
    }
    // Flat form: match kinds are always replaced, exclude kinds only when present.
    let has_kinds = !str_list(block.get_path(&["resources", "kinds"])).is_empty();
    if is_match || has_kinds {
        set_kinds(block, kinds);
    }
}

fn wrap(tpl_key: &str, inner: Node) -> Node {
    let span = inner.span;
    let mut t = Map::new();
    t.insert(tpl_key.to_owned(), span, inner);
    let mut s = Map::new();
    s.insert("spec".to_owned(), span, Node::new(Value::Map(t), span));
    Node::new(Value::Map(s), span)
}

fn present<'a>(m: &'a Map, key: &str) -> Option<&'a Node> {
    m.get(key).filter(|n| !n.is_null())
}

/// `generateRule`: the rule renamed, match/exclude kinds rewritten, the body wrapped under
/// `spec.<tpl_key>`. `None` when the rule has no body autogen knows how to move.
fn generate_rule(
    name: &str,
    rule: &Node,
    tpl_key: &str,
    shift: &str,
    kinds: &[String],
    how: Replace,
) -> Option<Node> {
    let mut rule = rule.clone();
    let Value::Map(m) = &mut rule.value else {
        return None;
    };
    let name_span = m.entry("name").map_or(Span::EMPTY, |e| e.value.span);
    m.insert(
        "name".into(),
        name_span,
        Node::new(Value::Str(name.to_owned()), name_span),
    );
    if let Some(b) = m.get_mut("match") {
        rewrite_block(b, kinds, how, true);
    }
    if let Some(b) = m.get_mut("exclude").filter(|n| !n.is_null()) {
        rewrite_block(b, kinds, how, false);
    }
    if let Some(mutate) = present(m, "mutate").cloned() {
        let mm = mutate.as_map()?;
        if let Some(psm) = present(mm, "patchStrategicMerge") {
            let mut nm = Map::new();
            nm.insert(
                "patchStrategicMerge".into(),
                psm.span,
                wrap(tpl_key, psm.clone()),
            );
            m.insert(
                "mutate".into(),
                mutate.span,
                Node::new(Value::Map(nm), mutate.span),
            );
            return Some(rule);
        }
        if let Some(fes) = present(mm, "foreach")
            .and_then(Node::as_seq)
            .filter(|s| !s.is_empty())
        {
            let entries = fes
                .iter()
                .map(|fe| {
                    let mut e = Map::new();
                    for key in ["list", "context", "preconditions"] {
                        if let Some(n) = fe.get(key).filter(|n| !n.is_null()) {
                            e.insert(key.into(), n.span, n.clone());
                        }
                    }
                    // A nested-foreach entry has no patch: `{spec: {template: null}}`
                    // (match.md §8.7 item 3).
                    let psm = fe
                        .get("patchStrategicMerge")
                        .cloned()
                        .unwrap_or_else(|| Node::new(Value::Null, fe.span));
                    e.insert("patchStrategicMerge".into(), fe.span, wrap(tpl_key, psm));
                    Node::new(Value::Map(e), fe.span)
                })
                .collect();
            let fspan = mm.get("foreach").map_or(mutate.span, |n| n.span);
            let mut nm = Map::new();
            nm.insert(
                "foreach".into(),
                fspan,
                Node::new(Value::Seq(entries), fspan),
            );
            m.insert(
                "mutate".into(),
                mutate.span,
                Node::new(Value::Map(nm), mutate.span),
            );
            return Some(rule);
        }
    }
    if let Some(validate) = present(m, "validate").cloned() {
        let vm = validate.as_map()?;
        let mut nv = Map::new();
        let shifted = |pivot: &str| {
            present(vm, "message")
                .and_then(Node::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    let n = vm.get("message").map_or(validate.span, |n| n.span);
                    Node::new(Value::Str(shift_references(s, shift, pivot)), n)
                })
        };
        let common = |nv: &mut Map, pivot: &str| {
            if let Some(msg) = shifted(pivot) {
                nv.insert("message".into(), msg.span, msg);
            }
            for key in [
                "failureAction",
                "failureActionOverrides",
                "allowExistingViolations",
            ] {
                if let Some(e) = vm.entry(key).filter(|e| !e.value.is_null()) {
                    nv.insert(key.into(), e.key_span, e.value.clone());
                }
            }
        };
        let body = if let Some(p) = present(vm, "pattern") {
            common(&mut nv, "pattern");
            Some(("pattern", wrap(tpl_key, p.clone())))
        } else if let Some(d) = present(vm, "deny") {
            common(&mut nv, "deny");
            Some(("deny", d.clone()))
        } else if let Some(ps) = present(vm, "podSecurity") {
            common(&mut nv, "podSecurity");
            let mut pm = Map::new();
            for key in ["level", "version", "exclude"] {
                if let Some(e) = ps.as_map().and_then(|m| m.entry(key)) {
                    pm.insert(key.into(), e.key_span, e.value.clone());
                }
            }
            Some(("podSecurity", Node::new(Value::Map(pm), ps.span)))
        } else if let Some(ap) = present(vm, "anyPattern") {
            common(&mut nv, "anyPattern");
            let items = ap
                .as_seq()
                .unwrap_or(&[])
                .iter()
                .map(|p| wrap(tpl_key, p.clone()))
                .collect();
            Some(("anyPattern", Node::new(Value::Seq(items), ap.span)))
        } else if let Some(fe) =
            present(vm, "foreach").filter(|n| n.as_seq().is_some_and(|s| !s.is_empty()))
        {
            common(&mut nv, "pattern");
            Some(("foreach", fe.clone()))
        } else if present(vm, "cel").is_some() {
            // CEL rules keep the whole validate block.
            return Some(rule);
        } else {
            None
        };
        if let Some((key, node)) = body {
            let key_span = vm.entry(key).map_or(node.span, |e| e.key_span);
            nv.insert(key.into(), key_span, node);
            m.insert(
                "validate".into(),
                validate.span,
                Node::new(Value::Map(nv), validate.span),
            );
            return Some(rule);
        }
    }
    if present(m, "verifyImages").is_some() {
        return Some(rule);
    }
    None
}

/// `generateRuleForControllers`: the `autogen-<name>` rule before path rewriting.
pub fn for_controllers(rule: &Node, name: &str, controllers: &str) -> Option<Node> {
    if name.starts_with("autogen-") || controllers.is_empty() {
        return None;
    }
    let match_kinds = block_kinds(rule.get("match"));
    let exclude_kinds = block_kinds(rule.get("exclude").filter(|n| !n.is_null()));
    if !contains_kind(&match_kinds, "Pod")
        || (!exclude_kinds.is_empty() && !contains_kind(&exclude_kinds, "Pod"))
    {
        return None;
    }
    let all = split_kinds(controllers);
    let standard: Vec<String> = all
        .iter()
        .filter(|k| STANDARD.contains(&k.as_str()))
        .cloned()
        .collect();
    // Only custom kinds listed: they are used as they are (match.md §8.7 item 1).
    let kinds = if standard.is_empty() { all } else { standard };
    generate_rule(
        &autogen_name("autogen", name),
        rule,
        "template",
        "spec/template",
        &kinds,
        Replace::PodFilters,
    )
}

/// `generateCronJobRule`: the `autogen-cronjob-<name>` rule before path rewriting.
pub fn for_cronjob(rule: &Node, name: &str, controllers: &str) -> Option<Node> {
    if !controllers.contains("CronJob") && !controllers.contains("all") {
        return None;
    }
    let base = for_controllers(rule, name, controllers)?;
    generate_rule(
        &autogen_name("autogen-cronjob", name),
        &base,
        "jobTemplate",
        "spec/jobTemplate/spec/template",
        &["CronJob".to_owned()],
        Replace::All,
    )
}
