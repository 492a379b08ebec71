//! A mutate rule's `patchStrategicMerge` as MutatingPolicy `ApplyConfiguration` mutations.
//!
//! The overlay becomes one `Object{…}` literal: a map whose keys are all identifiers is the
//! typed `Object.path{…}`, any other map (labels, annotations) a CEL map literal, a list of
//! maps a list of `Object.path{…}` elements. A subtree under an add-if-not-present anchor
//! `+(key)` becomes a mutation of its own that applies only where the key is missing. `{{ }}`
//! values are translated as in validate rules. Conditional, equality, existence and global
//! anchors and `foreach` are refused. A `patchesJson6902` becomes `JSONPatch` mutations
//! ([`json6902`]).

use std::cell::RefCell;

use crate::mutate::merge_keys::{ListStrategy, SchemaType};
use crate::pattern::{AnchorKind, parse_anchor};
use crate::smd::FieldShape;
use crate::yaml::{Map, Node, Value};

use super::Blocked;
use super::cel_text::{and, has, quote, select};
use super::jmes::{Translator, literal};

/// The mutations (CEL `ApplyConfiguration` expressions) of one `patchStrategicMerge`, and
/// when it is known, the condition under which it changes the object ([`changes`]), and the
/// conditions of its conditional and global anchors on map paths (`(key): "pattern"` where
/// no list is above: Kyverno skips the whole patch when one fails, so they hold where the
/// rule applies).
pub(crate) fn strategic_merge(
    patch: &Node,
    jmes: &Translator,
    kinds: &[String],
) -> Result<Merge, Blocked> {
    let Value::Map(m) = &patch.value else {
        return Err(Blocked::new(
            patch.span,
            "`patchStrategicMerge` must be a map".to_owned(),
        ));
    };
    let mut adds: Vec<Add> = Vec::new();
    let cx = Cx {
        jmes,
        kinds: kinds
            .iter()
            .map(|k| k.rsplit('/').next().unwrap_or(k).to_owned())
            .collect(),
        patches: RefCell::new(Vec::new()),
        conditions: RefCell::new(Vec::new()),
        opaque: std::cell::Cell::new(false),
        keyed_changes: RefCell::new(Vec::new()),
    };
    let body = object(m, "Object", "object", &mut adds, &[], &cx)?;
    let mut out = Vec::new();
    if let Some(b) = body {
        out.push(b);
    }
    for a in adds {
        let present = and(&a.presence);
        if a.when {
            out.push(format!("{} ? {} : Object{{}}", present, a.object));
        } else {
            // Only where the anchored key is missing (or a parent of it is).
            out.push(format!("{} ? Object{{}} : {}", present, a.object));
        }
    }
    let mut out: Vec<Mutation> = out.into_iter().map(Mutation::apply).collect();
    let patches = cx.patches.into_inner();
    let changes = if !cx.opaque.get() {
        changes(m, "object", &[], &cx.keyed_changes.borrow())
            .map(|terms| super::cel_text::or(&terms))
    } else {
        None
    };
    out.extend(patches);
    Ok(Merge {
        mutations: out,
        changes,
        conditions: cx.conditions.into_inner(),
    })
}

/// A converted `patchStrategicMerge` ([`strategic_merge`]).
pub(crate) struct Merge {
    pub(crate) mutations: Vec<Mutation>,
    /// When the patch changes the object, where that is written ([`changes`]).
    pub(crate) changes: Option<String>,
    /// The conditions of its anchors on map paths; the rule applies where all hold.
    pub(crate) conditions: Vec<String>,
}

/// When the strategic merge of overlay `m` at CEL path `at` (the presence tests of its
/// parents in `presence`) changes the object, as terms of a disjunction; `None` where that
/// is not written here (lists, `null`, anchors other than `+()`, directives, variables).
/// Kyverno skips a mutate rule whose patch changes nothing ("no patches applied"), where a
/// MutatingPolicy that matched passes: the condition keeps the two verdicts equal. A plain
/// scalar changes the object unless it is there with that value; a `+(key)` subtree unless
/// the key is there.
fn changes(
    m: &Map,
    at: &str,
    presence: &[String],
    keyed: &[(String, String)],
) -> Option<Vec<String>> {
    if m.is_empty() {
        return None;
    }
    let mut terms = Vec::new();
    for e in m.entries() {
        let key = match parse_anchor(&e.key) {
            None if !e.key.starts_with('$') => e.key.as_str(),
            Some(a) if a.kind == AnchorKind::AddIfNotPresent => {
                let mut there = presence.to_vec();
                there.push(has(at, a.key));
                terms.push(super::cel_text::not(&and(&there)));
                continue;
            }
            _ => return None,
        };
        let mut there = presence.to_vec();
        there.push(has(at, key));
        let child = select(at, key);
        match &e.value.value {
            Value::Seq(items) if global_only(items) => {}
            Value::Seq(_) => {
                let (_, term) = keyed.iter().find(|(p, _)| *p == child)?;
                terms.push(term.clone());
            }
            Value::Map(inner) => terms.extend(changes(inner, &child, &there, keyed)?),
            Value::Str(s) if s.contains("{{") || s.contains("$(") => return None,
            Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                there.push(format!("{child} == {}", literal(&e.value.to_json())));
                terms.push(super::cel_text::not(&and(&there)));
            }
            _ => return None,
        }
    }
    Some(terms)
}

/// What the walk of one overlay needs besides the translator: the matched kinds (to look
/// fields up in the schema) and the `JSONPatch` mutations written for atomic maps.
struct Cx<'a> {
    jmes: &'a Translator,
    kinds: Vec<String>,
    patches: RefCell<Vec<Mutation>>,
    conditions: RefCell<Vec<String>>,
    /// Whether some of `patches` change the object under a condition [`changes`] does not
    /// write (the atomic fields merged key by key).
    opaque: std::cell::Cell<bool>,
    /// The change conditions of lists of atomic elements merged by key ([`keyed_atomic_list`]),
    /// by their CEL path.
    keyed_changes: RefCell<Vec<(String, String)>>,
}

impl Cx<'_> {
    /// The strategic-merge schema positions of the field at map keys `keys` from the root,
    /// in every API version of every matched kind.
    fn positions(&self, keys: &[String]) -> Vec<(SchemaType, ListStrategy)> {
        let mut types = Vec::new();
        for kind in &self.kinds {
            for gv in crate::smd::builtin_api_versions(kind) {
                let mut t = (SchemaType::root(&gv, kind), ListStrategy::Replace);
                for k in keys {
                    t = t.0.field(k);
                }
                types.push(t);
            }
        }
        types
    }

    /// The schema shapes of the field the type name `ty` (`Object.spec.nodeSelector`) names,
    /// in every matched kind that has it.
    fn shapes(&self, ty: &str) -> Vec<FieldShape> {
        let steps: Vec<&str> = ty.split('.').skip(1).collect();
        self.kinds
            .iter()
            .flat_map(|k| crate::smd::field_shapes(k, &steps))
            .collect()
    }
}

/// A field the schema marks atomic (an atomic map, list or struct), set by the overlay at
/// `path` (keys from the root; `None` inside a list element) to `n`. An ApplyConfiguration
/// may not set it, so the subtree becomes `JSONPatch` mutations that do what Kyverno's
/// strategic merge does: maps merge key by key (one `add` per scalar, missing parents
/// created as the merge creates them), a list the merge replaces (no merge key in its
/// schema) is added whole. Lists merged by keys, `null` (a deletion), `$patch` directives,
/// anchors, and anything inside a list element are refused.
fn atomic_field(
    shapes: &[FieldShape],
    n: &Node,
    path: Option<&[(String, String)]>,
    ty: &str,
    cx: &Cx,
) -> Result<bool, Blocked> {
    let atomic = shapes.iter().any(|s| {
        matches!(
            s,
            FieldShape::AtomicList
                | FieldShape::AtomicStruct
                | FieldShape::FreeMap { atomic: true, .. }
        )
    });
    if !atomic {
        return Ok(false);
    }
    let shown = ty.strip_prefix("Object.").unwrap_or(ty);
    let Some(path) = path else {
        return Err(Blocked::new(
            n.span,
            format!(
                "`{shown}` is atomic in the Kubernetes schema (an ApplyConfiguration may not set it), and inside a list element it is not translated to a JSON patch"
            ),
        ));
    };
    let keys: Vec<String> = path.iter().map(|(k, _)| k.clone()).collect();
    let types = cx.positions(&keys);
    smp_json(&keys, n, &types, cx)?;
    cx.opaque.set(true);
    Ok(true)
}

/// The first field at or below type name `ty` that overlay `n` sets and the schema marks
/// atomic, shown without the `Object.` prefix.
fn atomic_inside(cx: &Cx, ty: &str, n: &Node) -> Option<String> {
    let atomic = cx.shapes(ty).iter().any(|s| {
        matches!(
            s,
            FieldShape::AtomicList
                | FieldShape::AtomicStruct
                | FieldShape::FreeMap { atomic: true, .. }
        )
    });
    if atomic {
        return Some(ty.strip_prefix("Object.").unwrap_or(ty).to_owned());
    }
    match &n.value {
        Value::Map(m) => m.entries().iter().find_map(|e| {
            let k = parse_anchor(&e.key).map_or(e.key.as_str(), |a| a.key);
            atomic_inside(cx, &format!("{ty}.{k}"), &e.value)
        }),
        Value::Seq(items) => items.iter().find_map(|i| atomic_inside(cx, ty, i)),
        _ => None,
    }
}

/// `JSONPatch` mutations for the strategic merge of overlay `n` at `keys`; `types` are its
/// strategic-merge schema positions in the matched kinds (see [`atomic_field`]).
fn smp_json(
    keys: &[String],
    n: &Node,
    types: &[(SchemaType, ListStrategy)],
    cx: &Cx,
) -> Result<(), Blocked> {
    let at = keys.join(".");
    let refuse = |span, why: &str| {
        Blocked::new(
            span,
            format!(
                "`{at}` is atomic in the Kubernetes schema (an ApplyConfiguration may not set it): {why}"
            ),
        )
    };
    let Some((last, parents)) = keys.split_last() else {
        return Err(refuse(n.span, "the root is not translated"));
    };
    match &n.value {
        Value::Map(m) => {
            if m.is_empty() {
                return Err(refuse(
                    n.span,
                    "an empty map in the overlay is not translated",
                ));
            }
            for e in m.entries() {
                if parse_anchor(&e.key).is_some() || e.key.starts_with('$') {
                    return Err(refuse(
                        e.key_span,
                        &format!(
                            "the key `{}` (an anchor or a directive) is not translated",
                            e.key
                        ),
                    ));
                }
                let mut child = keys.to_vec();
                child.push(e.key.clone());
                let child_types: Vec<_> = types.iter().map(|(t, _)| t.field(&e.key)).collect();
                smp_json(&child, &e.value, &child_types, cx)?;
            }
        }
        Value::Seq(_) => {
            if types.iter().any(|(_, s)| *s != ListStrategy::Replace) {
                return Err(refuse(
                    n.span,
                    "the strategic merge merges this list by keys, which is not translated",
                ));
            }
            if !plain(n) {
                return Err(refuse(
                    n.span,
                    "a list with nulls, anchors, directives or variables is not translated",
                ));
            }
            let v = literal(&n.to_json());
            cx.patches.borrow_mut().push(json_add(parents, last, &v));
        }
        Value::Null => {
            return Err(refuse(n.span, "a `null` (a deletion) is not translated"));
        }
        _ => {
            let v = scalar(n, cx.jmes)?;
            cx.patches.borrow_mut().push(json_add(parents, last, &v));
        }
    }
    Ok(())
}

/// Whether `n` holds no null, no anchored or `$` key and no `{{ }}` or `$( )` string: a
/// value the strategic merge copies as it is.
fn plain(n: &Node) -> bool {
    match &n.value {
        Value::Null => false,
        Value::Str(s) => !s.contains("{{") && !s.contains("$("),
        Value::Seq(items) => items.iter().all(plain),
        Value::Map(m) => m
            .entries()
            .iter()
            .all(|e| parse_anchor(&e.key).is_none() && !e.key.starts_with('$') && plain(&e.value)),
        _ => true,
    }
}

/// A `JSONPatch` `add` of CEL value `v` at key `last` under the map at `keys`, creating the
/// missing parents as maps.
fn json_add(keys: &[String], last: &str, v: &str) -> Mutation {
    Mutation {
        json_patch: true,
        expr: json_add_below("object", None, keys, last, v),
    }
}

/// [`json_add`] below the node `base` (a CEL expression) whose JSON pointer is the CEL string
/// expression `pointer` (`None`: the root): the CEL list of the patches.
fn json_add_below(
    base: &str,
    pointer: Option<&str>,
    keys: &[String],
    last: &str,
    v: &str,
) -> String {
    let below = |ks: &[String]| {
        ks.iter()
            .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
            .collect::<String>()
    };
    let patch = |at: &str, value: &str| {
        let at = match pointer {
            Some(p) => format!("{p} + {}", quote(at)),
            None => quote(at),
        };
        format!(
            "JSONPatch{{op: {}, path: {at}, value: {value}}}",
            quote("add")
        )
    };
    let pointer = below;
    let mut all = keys.to_vec();
    all.push(last.to_owned());
    let mut sel = base.to_owned();
    let mut present = Vec::new();
    for k in keys {
        let q = quote(k);
        present.push(format!(
            "(type({sel}) != map || ({q} in {sel} && {sel}[{q}] != null))"
        ));
        sel = format!("{sel}[{q}]");
    }
    let mut e = format!("[{}]", patch(&pointer(&all), v));
    for j in (0..keys.len()).rev() {
        let mut inner = format!("{{{}: {v}}}", quote(last));
        for k in keys[j + 1..].iter().rev() {
            inner = format!("{{{}: {inner}}}", quote(k));
        }
        e = format!(
            "{} ? {} : [{}]",
            and(&present[..=j]),
            paren_list(&e),
            patch(&pointer(&keys[..=j]), &inner)
        );
    }
    e
}

/// The presence tests of the map keys `path` from the root, and the CEL path they reach.
fn root_presence(path: &[(String, String)]) -> (Vec<String>, String) {
    let mut there = Vec::new();
    let mut cur = "object".to_owned();
    for (k, _) in path {
        there.push(has(&cur, k));
        cur = select(&cur, k);
    }
    (there, cur)
}

/// One `+(key)` subtree, as its own `Object{…}` and the presence tests of its key.
struct Add {
    presence: Vec<String>,
    object: String,
    /// Applies where `presence` holds (a list element condition), rather than where it
    /// does not (`+()`).
    when: bool,
}

/// The typed literal for map `m` at type `ty` (`Object.spec…`) and CEL path `at`; `None`
/// when every key is an add-if-not-present anchor (collected into `adds`). `parents` are
/// the (type, path, key) steps above, used to rebuild the path to an anchored key.
fn object(
    m: &Map,
    ty: &str,
    at: &str,
    adds: &mut Vec<Add>,
    parents: &[(String, String)],
    cx: &Cx,
) -> Result<Option<String>, Blocked> {
    let free = cx
        .shapes(ty)
        .iter()
        .any(|s| matches!(s, FieldShape::FreeMap { .. }));
    let typed = !free
        && m.keys().all(|k| {
            let k = parse_anchor(k).map_or(k, |a| a.key);
            is_field(k)
        });
    let mut fields = Vec::new();
    for e in m.entries() {
        let (key, add) = match parse_anchor(&e.key) {
            None => (e.key.as_str(), false),
            Some(a) if a.kind == AnchorKind::AddIfNotPresent => (a.key, true),
            Some(a)
                if matches!(a.kind, AnchorKind::Condition | AnchorKind::Global)
                    && at.starts_with("object")
                    && parents.len() == ty.matches('.').count() =>
            {
                // On a path of map keys from the root: the whole patch applies only where
                // the resource has the key with a value meeting the pattern.
                let Value::Str(pat) = &e.value.value else {
                    return Err(Blocked::new(
                        e.value.span,
                        format!(
                            "the anchor `{}` on a value that is not a string is not translated",
                            e.key
                        ),
                    ));
                };
                if pat.contains("{{") || pat.contains("$(") {
                    return Err(Blocked::new(
                        e.value.span,
                        "variables in a mutate condition anchor are not translated".to_owned(),
                    ));
                }
                let (mut there, cur) = root_presence(parents);
                there.push(has(&cur, a.key));
                let test = super::pattern::string_pattern(pat, &select(&cur, a.key))
                    .map_err(|r| Blocked::new(e.value.span, r))?;
                there.push(test);
                cx.conditions.borrow_mut().push(and(&there));
                continue;
            }
            Some(_) => {
                return Err(Blocked::new(
                    e.key_span,
                    format!(
                        "the anchor `{}` in a mutate overlay (a condition on the resource) is not translated",
                        e.key
                    ),
                ));
            }
        };
        let child_ty = format!("{ty}.{key}");
        let child_at = select(at, key);
        let mut path = parents.to_vec();
        path.push((key.to_owned(), child_ty.clone()));
        let rooted = path
            .iter()
            .map(|(k, _)| format!(".{k}"))
            .collect::<String>()
            == child_ty.strip_prefix("Object").unwrap_or_default();
        if add {
            if let Some(p) = atomic_inside(cx, &child_ty, &e.value) {
                let keys: Vec<String> = path.iter().map(|(k, _)| k.clone()).collect();
                if rooted
                    && plain(&e.value)
                    && let Some((last, above)) = keys.split_last()
                {
                    // Where the key is missing, the merge adds the overlay's subtree as it
                    // is: one `add` of the whole value (missing parents created), written
                    // only where the key or a parent of it is missing.
                    let (presence, _) = root_presence(&path);
                    let patch = json_add(above, last, &literal(&e.value.to_json()));
                    cx.patches.borrow_mut().push(Mutation {
                        json_patch: true,
                        expr: format!("{} ? [] : {}", and(&presence), paren_list(&patch.expr)),
                    });
                    continue;
                }
                return Err(Blocked::new(
                    e.value.span,
                    format!(
                        "`{p}` is atomic in the Kubernetes schema (an ApplyConfiguration may not set it), and under `+()` it is not translated to a JSON patch"
                    ),
                ));
            }
            let v = value(
                &e.value,
                &child_ty,
                &child_at,
                &mut Vec::new(),
                &path,
                true,
                cx,
            )?;
            let (presence, _) = root_presence(&path);
            adds.push(Add {
                presence,
                object: wrap(&path, v),
                when: false,
            });
            continue;
        }
        let shapes = cx.shapes(&child_ty);
        if atomic_field(
            &shapes,
            &e.value,
            rooted.then_some(path.as_slice()),
            &child_ty,
            cx,
        )? {
            continue;
        }
        if let Some(v) = value(&e.value, &child_ty, &child_at, adds, &path, false, cx)? {
            let k = if typed { key.to_owned() } else { quote(key) };
            fields.push(format!("{k}: {v}"));
        }
    }
    if fields.is_empty() && !m.is_empty() {
        return Ok(None);
    }
    Ok(Some(if typed {
        format!("{ty}{{{}}}", fields.join(", "))
    } else {
        format!("{{{}}}", fields.join(", "))
    }))
}

/// A value of the overlay; `inside_add` refuses nested anchors under `+()`.
fn value(
    n: &Node,
    ty: &str,
    at: &str,
    adds: &mut Vec<Add>,
    path: &[(String, String)],
    inside_add: bool,
    cx: &Cx,
) -> Result<Option<String>, Blocked> {
    match &n.value {
        Value::Map(m) => {
            let mut nested = Vec::new();
            let v = object(m, ty, at, &mut nested, path, cx)?;
            if !nested.is_empty() {
                if inside_add {
                    return Err(Blocked::new(
                        n.span,
                        "an anchor nested under `+()` is not translated".to_owned(),
                    ));
                }
                adds.extend(nested);
            }
            Ok(v)
        }
        Value::Seq(items) => {
            if global_only(items) {
                if inside_add
                    || !(at.starts_with("object") && path.len() == ty.matches('.').count())
                {
                    return Err(Blocked::new(
                        n.span,
                        "list elements of global anchors under `+()` or below a list are not translated"
                            .to_owned(),
                    ));
                }
                cx.conditions
                    .borrow_mut()
                    .push(global_elements(items, path)?);
                return Ok(None);
            }
            if let [only] = items.as_slice()
                && let Value::Map(m) = &only.value
                && m.keys()
                    .any(|k| parse_anchor(k).is_some_and(|a| a.kind == AnchorKind::Condition))
            {
                if inside_add {
                    return Err(Blocked::new(
                        n.span,
                        "an anchor nested under `+()` is not translated".to_owned(),
                    ));
                }
                if let Some(add) = conditional_elements(m, only, ty, path, cx)? {
                    adds.push(add);
                }
                return Ok(None);
            }
            // Elements the schema marks atomic (`imagePullSecrets`' references): an
            // ApplyConfiguration may not set them.
            let steps: Vec<&str> = ty.split('.').skip(1).collect();
            let atomic_elements = items.iter().any(|i| matches!(i.value, Value::Map(_)))
                && cx.kinds.iter().any(|k| {
                    crate::smd::element_shapes(k, &steps)
                        .iter()
                        .any(|s| matches!(s, FieldShape::AtomicStruct))
                });
            if atomic_elements {
                keyed_atomic_list(items, n, ty, at, path, inside_add, cx)?;
                return Ok(None);
            }
            let mut out = Vec::new();
            for item in items {
                match &item.value {
                    Value::Map(m) => {
                        let mut nested = Vec::new();
                        let v = object(m, ty, "x", &mut nested, &[], cx)?;
                        if !nested.is_empty() {
                            return Err(Blocked::new(
                                item.span,
                                "anchors inside list elements of a mutate overlay are not translated".to_owned(),
                            ));
                        }
                        out.push(v.unwrap_or_else(|| format!("{ty}{{}}")));
                    }
                    _ => out.push(scalar(item, cx.jmes)?),
                }
            }
            Ok(Some(format!("[{}]", out.join(", "))))
        }
        _ => Ok(Some(scalar(n, cx.jmes)?)),
    }
}

/// An overlay list whose elements the schema marks atomic (`imagePullSecrets`' references,
/// which an ApplyConfiguration may not set) and which the strategic merge merges by one key:
/// one `JSONPatch` `add` of the whole merged list, as kyaml's merge (Kyverno's, overlay
/// elements first) builds it: one element per key, the overlay's keys in order, then the
/// resource's other keys in the order they first appear, each the resource's last element of
/// that key where it has one, else the overlay's element (kyaml collects the keys, then sets
/// each resource element over the element of its key, so a key the resource repeats is left
/// once) — and the change condition "the merged list differs from the resource's" for
/// [`changes`]. Translated where the list is on a path of plain keys
/// from the root, not under `+()`, and its elements hold only the merge key with distinct
/// non-empty literal strings (an element is then the resource's element unchanged). A
/// resource list that is not a list, or holds an element that is not a map with a non-empty
/// string key (which the merge would take as a match of any overlay element), is an error.
fn keyed_atomic_list(
    items: &[Node],
    n: &Node,
    ty: &str,
    at: &str,
    path: &[(String, String)],
    inside_add: bool,
    cx: &Cx,
) -> Result<(), Blocked> {
    let shown = ty.strip_prefix("Object.").unwrap_or(ty);
    let refuse = |span, why: &str| {
        Blocked::new(
            span,
            format!(
                "the elements of `{shown}` are atomic in the Kubernetes schema (an ApplyConfiguration may not set them): {why}"
            ),
        )
    };
    let rooted = path
        .iter()
        .map(|(k, _)| format!(".{k}"))
        .collect::<String>()
        == ty.strip_prefix("Object").unwrap_or_default();
    if inside_add || !rooted {
        return Err(refuse(
            n.span,
            "a JSON patch merging them by key is written only on a path of plain keys from the root, not under `+()`",
        ));
    }
    let keys: Vec<String> = path.iter().map(|(k, _)| k.clone()).collect();
    let strategies: Vec<ListStrategy> = cx.positions(&keys).into_iter().map(|t| t.1).collect();
    let key = match strategies.first() {
        Some(ListStrategy::Keys([k])) if strategies.iter().all(|s| s == &strategies[0]) => *k,
        _ => {
            return Err(refuse(
                n.span,
                "the strategic merge does not merge this list by one key in every matched kind, which is not translated",
            ));
        }
    };
    let mut names: Vec<String> = Vec::new();
    for item in items {
        let name = match &item.value {
            Value::Map(m) if m.len() == 1 => match m.get(key).map(|v| &v.value) {
                Some(Value::Str(s)) if !s.is_empty() && !s.contains("{{") && !s.contains("$(") => {
                    Some(s.clone())
                }
                _ => None,
            },
            _ => None,
        };
        match name {
            Some(s) if !names.contains(&s) => names.push(s),
            _ => {
                return Err(refuse(
                    item.span,
                    &format!(
                        "only elements holding just the merge key `{key}`, distinct non-empty literal strings, are translated"
                    ),
                ));
            }
        }
    }
    let (presence, cur) = root_presence(path);
    let k = quote(key);
    let current = format!(
        "cel.bind(ds0, {} ? {cur} : null, ds0 == null ? [] : ds0)",
        and(&presence)
    );
    let ok = format!(
        "type(ds) == list && ds.all(d, type(d) == map && {k} in d && type(d[{k}]) == string && d[{k}] != '')"
    );
    let firsts: Vec<String> = names
        .iter()
        .map(|s| {
            let q = quote(s);
            format!(
                "cel.bind(m, ds.filter(d, d[{k}] == {q}), size(m) > 0 ? m[size(m) - 1] : {{{k}: {q}}})"
            )
        })
        .collect();
    let named: Vec<String> = names.iter().map(|s| quote(s)).collect();
    let merged = format!(
        "dyn([{}] + lists.range(size(ds)).filter(j, !(ds[j][{k}] in [{}]) && !lists.range(j).exists(i, ds[i][{k}] == ds[j][{k}])).map(j, cel.bind(m, ds.filter(d, d[{k}] == ds[j][{k}]), m[size(m) - 1])))",
        firsts.join(", "),
        named.join(", ")
    );
    let fail = super::cel_text::runtime_error(&format!(
        "`{shown}` is not a list of maps with a non-empty string `{key}` (the merge by key would match an element without one)"
    ));
    let Some((last, above)) = keys.split_last() else {
        return Err(refuse(n.span, "the root is not translated"));
    };
    let add = json_add(above, last, "r");
    cx.patches.borrow_mut().push(Mutation {
        json_patch: true,
        expr: format!(
            "cel.bind(ds, {current}, cel.bind(r, {ok} ? {merged} : dyn({fail}), r == ds ? [] : {}))",
            paren_list(&add.expr)
        ),
    });
    cx.keyed_changes.borrow_mut().push((
        at.to_owned(),
        format!("cel.bind(ds, {current}, !({ok}) || {merged} != ds)"),
    ));
    Ok(())
}

/// Whether the overlay list's elements are maps of global anchors only, directly or under
/// plain keys (`- <(image): "x/*"`, `- hostPath: {<(path): "*"}`): conditions on the
/// resource's list that Kyverno removes from the patch (an element with an anchor is deleted
/// from it).
fn global_only(items: &[Node]) -> bool {
    fn conditions_only(m: &Map) -> bool {
        !m.is_empty()
            && m.entries().iter().all(|e| match parse_anchor(&e.key) {
                Some(a) => a.kind == AnchorKind::Global,
                None => {
                    !e.key.starts_with('$')
                        && matches!(&e.value.value, Value::Map(inner) if conditions_only(inner))
                }
            })
    }
    !items.is_empty()
        && items
            .iter()
            .all(|item| matches!(&item.value, Value::Map(m) if conditions_only(m)))
}

/// A list of global-anchor elements at the map path `path` from the root: Kyverno checks each
/// pattern element against the resource's elements and skips the whole patch where some
/// element of the resource's list was checked and none met it, or where the list is missing;
/// an empty list meets every element. The elements themselves are removed from the patch.
/// Each anchor's value is a string pattern, or `{}` (the value is a map).
fn global_elements(items: &[Node], path: &[(String, String)]) -> Result<String, Blocked> {
    let (mut there, cur) = root_presence(path);
    there.push(format!("{cur} != null"));
    let var = "x";
    for item in items {
        let Value::Map(m) = &item.value else {
            continue;
        };
        there.push(format!(
            "(size({cur}) == 0 || {cur}.exists({var}, {}))",
            and(&element_conditions(m, var)?)
        ));
    }
    Ok(and(&there))
}

/// The global anchors of one overlay list element ([`global_only`]) as tests on the
/// resource's element `at`: each plain key is there and holds a map, each anchored key is
/// there and meets its pattern.
fn element_conditions(m: &Map, at: &str) -> Result<Vec<String>, Blocked> {
    let mut conds = vec![format!("type({at}) == map")];
    for e in m.entries() {
        let Some(a) = parse_anchor(&e.key) else {
            let child = select(at, &e.key);
            conds.push(has(at, &e.key));
            if let Value::Map(inner) = &e.value.value {
                conds.extend(element_conditions(inner, &child)?);
            }
            continue;
        };
        let field = select(at, a.key);
        let test = match &e.value.value {
            Value::Str(p) if !p.contains("{{") && !p.contains("$(") => {
                super::pattern::string_pattern(p, &field)
                    .map_err(|r| Blocked::new(e.value.span, r))?
            }
            Value::Map(inner) if inner.is_empty() => format!("type({field}) == map"),
            _ => {
                return Err(Blocked::new(
                    e.value.span,
                    format!(
                        "the global anchor `{}` in a list element: only a string pattern without variables or `{{}}` is translated",
                        e.key
                    ),
                ));
            }
        };
        conds.push(has(at, a.key));
        conds.push(test);
    }
    Ok(conds)
}

/// `[{(name): "*", k: v}]`: every element of the resource's list that meets the conditions
/// gets the rest merged, as the list's elements keyed by `name` (the merge key of the pod
/// lists: containers, volumes, env); a mutation of its own, applied when some element meets
/// them.
fn conditional_elements(
    m: &Map,
    at: &Node,
    ty: &str,
    path: &[(String, String)],
    cx: &Cx,
) -> Result<Option<Add>, Blocked> {
    let var = "x";
    let mut conds = Vec::new();
    let mut rest = Map::new();
    for e in m.entries() {
        match parse_anchor(&e.key) {
            Some(a) if a.kind == AnchorKind::Condition => {
                let Value::Str(p) = &e.value.value else {
                    return Err(Blocked::new(
                        e.value.span,
                        "a list element condition on a non-string value is not translated"
                            .to_owned(),
                    ));
                };
                let field = select(var, a.key);
                let test = super::pattern::string_pattern(p, &field)
                    .map_err(|r| Blocked::new(e.value.span, r))?;
                conds.push((a.key.to_owned(), and(&[has(var, a.key), test])));
            }
            Some(_) => {
                return Err(Blocked::new(
                    e.key_span,
                    format!(
                        "the anchor `{}` in a list element of a mutate overlay is not translated",
                        e.key
                    ),
                ));
            }
            None => rest.insert(e.key.clone(), e.key_span, e.value.clone()),
        }
    }
    if !conds.iter().any(|(k, _)| k == "name") {
        return Err(Blocked::new(
            at.span,
            "a list element condition that is not on `name` (the merge key) is not translated"
                .to_owned(),
        ));
    }
    let cond = and(&conds.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>());
    let mut atomic = Vec::new();
    let rest = split_atomic(&rest, ty, &[], cx, &mut atomic);
    if !atomic.is_empty() {
        atomic_in_elements(&atomic, ty, path, var, &cond, cx)?;
        if rest.is_empty() {
            return Ok(None);
        }
    }
    let mut nested = Vec::new();
    let body = object(&rest, ty, var, &mut nested, &[], cx)?;
    if !nested.is_empty() {
        return Err(Blocked::new(
            at.span,
            "anchors nested in a conditional list element are not translated".to_owned(),
        ));
    }
    let body = body.unwrap_or_else(|| format!("{ty}{{}}"));
    let prefix = format!("{ty}{{");
    let element = match body.strip_prefix(&prefix) {
        Some("}") => format!("{prefix}name: {var}.name}}"),
        Some(fields) => format!("{prefix}name: {var}.name, {fields}"),
        None => {
            return Err(Blocked::new(
                at.span,
                "a list element with non-field keys is not translated".to_owned(),
            ));
        }
    };
    let (mut presence, cur) = root_presence(path);
    presence.push(format!("{cur}.exists({var}, {cond})"));
    let list = format!("{cur}.filter({var}, {cond}).map({var}, {element})");
    Ok(Some(Add {
        presence,
        object: wrap(path, Some(list)),
        when: true,
    }))
}

/// The fields of a selected list element's overlay `m` (type `ty`) that the schema marks
/// atomic, at paths of plain keys (`rel` the keys above), taken out into `out`; the rest of
/// the overlay is returned (maps left empty by it dropped).
fn split_atomic(
    m: &Map,
    ty: &str,
    rel: &[String],
    cx: &Cx,
    out: &mut Vec<(Vec<String>, Node)>,
) -> Map {
    let mut kept = Map::new();
    for e in m.entries() {
        let child_ty = format!("{ty}.{}", e.key);
        let plain_key = parse_anchor(&e.key).is_none() && !e.key.starts_with('$');
        if plain_key {
            let mut keys = rel.to_vec();
            keys.push(e.key.clone());
            let atomic = cx.shapes(&child_ty).iter().any(|s| {
                matches!(
                    s,
                    FieldShape::AtomicList
                        | FieldShape::AtomicStruct
                        | FieldShape::FreeMap { atomic: true, .. }
                )
            });
            if atomic {
                out.push((keys, e.value.clone()));
                continue;
            }
            if let Value::Map(inner) = &e.value.value
                && atomic_inside(cx, &child_ty, &e.value).is_some()
            {
                let sub = split_atomic(inner, &child_ty, &keys, cx, out);
                if !sub.is_empty() {
                    let node = Node {
                        value: Value::Map(sub),
                        span: e.value.span,
                    };
                    kept.insert(e.key.clone(), e.key_span, node);
                }
                continue;
            }
        }
        kept.insert(e.key.clone(), e.key_span, e.value.clone());
    }
    kept
}

/// Atomic lists set in the elements a `(name)` condition selects ([`split_atomic`]): a list
/// the strategic merge replaces (no merge key in Kyverno's schema), added whole in each
/// selected element (its missing parents created as maps) by one `JSONPatch` mutation over
/// the resource's list. Other atomic values, lists merged by keys and lists with nulls,
/// anchors, directives or variables are refused.
fn atomic_in_elements(
    atomic: &[(Vec<String>, Node)],
    ty: &str,
    path: &[(String, String)],
    var: &str,
    cond: &str,
    cx: &Cx,
) -> Result<(), Blocked> {
    let list_keys: Vec<String> = path.iter().map(|(k, _)| k.clone()).collect();
    let rooted = list_keys
        .iter()
        .map(|k| format!(".{k}"))
        .collect::<String>()
        == ty.strip_prefix("Object").unwrap_or_default();
    let mut patches = Vec::new();
    for (keys, n) in atomic {
        let shown = format!(
            "{}.{}",
            ty.strip_prefix("Object.").unwrap_or(ty),
            keys.join(".")
        );
        let refuse = |why: &str| {
            Blocked::new(
                n.span,
                format!(
                    "`{shown}` is atomic in the Kubernetes schema (an ApplyConfiguration may not set it), and in a selected list element {why}"
                ),
            )
        };
        if !rooted {
            return Err(refuse(
                "below another list it is not translated to a JSON patch",
            ));
        }
        if !matches!(n.value, Value::Seq(_)) || !plain(n) {
            return Err(refuse(
                "only a list without nulls, anchors, directives or variables is translated to a JSON patch",
            ));
        }
        let mut merges = false;
        for kind in &cx.kinds {
            for gv in crate::smd::builtin_api_versions(kind) {
                let mut t = (SchemaType::root(&gv, kind), ListStrategy::Replace);
                for k in list_keys.iter().chain(keys.iter()) {
                    t = t.0.field(k);
                }
                merges |= t.1 != ListStrategy::Replace;
            }
        }
        if merges {
            return Err(refuse(
                "the strategic merge merges this list by keys, which is not translated",
            ));
        }
        let Some((last, above)) = keys.split_last() else {
            continue;
        };
        patches.push(json_add_below(
            var,
            Some("base"),
            above,
            last,
            &literal(&n.to_json()),
        ));
    }
    let (there, cur) = root_presence(path);
    let base = quote(&format!(
        "{}/",
        list_keys
            .iter()
            .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
            .collect::<String>()
    ));
    let joined = patches
        .iter()
        .map(|p| paren_list(p))
        .collect::<Vec<_>>()
        .join(" + ");
    cx.patches.borrow_mut().push(Mutation {
        json_patch: true,
        expr: format!(
            "cel.bind(items, {} ? {cur} : [], type(items) != list ? [] : lists.range(size(items)).filter(i, cel.bind({var}, items[i], {cond})).map(i, cel.bind({var}, items[i], cel.bind(base, {base} + string(i), {joined}))).flatten())",
            and(&there)
        ),
    });
    cx.opaque.set(true);
    Ok(())
}

fn scalar(n: &Node, jmes: &Translator) -> Result<String, Blocked> {
    if let Value::Str(s) = &n.value
        && s.contains("{{")
    {
        return jmes.template(s, n.span);
    }
    if let Value::Str(s) = &n.value
        && s.contains("$(")
    {
        return Err(Blocked::new(
            n.span,
            "a `$(...)` reference has no CEL translation here".to_owned(),
        ));
    }
    Ok(literal(&n.to_json()))
}

/// `value` placed at `path` (keys from the root) as an `Object{…}`.
fn wrap(path: &[(String, String)], value: Option<String>) -> String {
    let mut inner = value.unwrap_or_else(|| "{}".to_owned());
    for i in (0..path.len()).rev() {
        let (key, _) = &path[i];
        let parent_ty = if i == 0 {
            "Object".to_owned()
        } else {
            path[i - 1].1.clone()
        };
        let k = if is_field(key) {
            key.clone()
        } else {
            quote(key)
        };
        inner = if is_field(key) {
            format!("{parent_ty}{{{k}: {inner}}}")
        } else {
            format!("{{{k}: {inner}}}")
        };
    }
    inner
}

/// Whether `k` can name a field of a typed object literal.
fn is_field(k: &str) -> bool {
    let mut c = k.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One MutatingPolicy mutation: an `ApplyConfiguration` or a `JSONPatch` expression.
#[derive(Clone, Debug)]
pub(crate) struct Mutation {
    pub(crate) json_patch: bool,
    pub(crate) expr: String,
}

impl Mutation {
    pub(crate) fn apply(expr: String) -> Self {
        Mutation {
            json_patch: false,
            expr,
        }
    }
}

/// A `patchesJson6902` (a YAML or JSON list of operations) as one `JSONPatch` mutation per
/// operation, each seeing the object as the operations before it left it. Kyverno applies
/// the patch with missing paths allowed on `remove` (a no-op) and missing parents created
/// on `add` (a map for a key, a list for `-` or an index); the CEL form spells both out.
/// Translated: `add`, `remove`, `replace` with literal values, on paths whose parents are
/// map keys; anything else is refused.
pub(crate) fn json6902(patch: &Node) -> Result<Vec<Mutation>, Blocked> {
    let refuse = |why: &str| Blocked::new(patch.span, format!("`patchesJson6902`: {why}"));
    let Some(text) = patch.as_str() else {
        return Err(refuse("must be a string"));
    };
    if text.contains("{{") {
        return Err(refuse("variables in a JSON patch are not translated"));
    }
    let docs = crate::yaml::parse_documents(text, crate::yaml::Limits::default())
        .map_err(|e| refuse(&format!("does not parse: {}", e.message)))?;
    let [doc] = docs.as_slice() else {
        return Err(refuse("must be one YAML document"));
    };
    let ops = doc.root.to_json();
    let Some(ops) = ops.as_array() else {
        return Err(refuse("must be a list of operations"));
    };
    ops.iter()
        .map(|op| json6902_op(op).map_err(|e| refuse(&e)))
        .collect()
}

fn json6902_op(op: &serde_json::Value) -> Result<Mutation, String> {
    let kind = op.get("op").and_then(|o| o.as_str()).unwrap_or_default();
    let Some(path) = op.get("path").and_then(|p| p.as_str()) else {
        return Err("an operation without a string `path`".to_owned());
    };
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "the path `{path}` is not translated (it must start with `/`)"
        ));
    };
    let value = op.get("value").map(literal);
    let at = |tail: &str| quote(&format!("/{tail}"));
    let expr = op_expr(kind, rest, path, "object", &at, value.as_deref())?;
    Ok(Mutation {
        json_patch: true,
        expr,
    })
}

/// One JSON patch operation as a CEL list of `JSONPatch`: `rest` is its path below the node
/// `base` (a CEL expression), `at` spells the CEL string of the full path of a pointer below
/// `base`, `value` the CEL value of an `add` or `replace`; `shown` is the path as written.
fn op_expr(
    kind: &str,
    rest: &str,
    shown: &str,
    base: &str,
    at: &dyn Fn(&str) -> String,
    value: Option<&str>,
) -> Result<String, String> {
    let path = at(rest);
    let raw: Vec<&str> = rest.split('/').collect();
    let (last, parents) = raw.split_last().ok_or("an empty path")?;
    for p in parents {
        if p.is_empty() || *p == "-" {
            return Err(format!(
                "the path `{shown}`: only map keys and list indexes are translated above the last step"
            ));
        }
    }
    if last.is_empty() || last.starts_with('-') && *last != "-" {
        return Err(format!("the path `{shown}` is not translated"));
    }
    let numeric = last.parse::<usize>().ok();
    let patch = |op: &str, at: &str, value: Option<&str>| match value {
        Some(v) => format!("JSONPatch{{op: {}, path: {at}, value: {v}}}", quote(op)),
        None => format!("JSONPatch{{op: {}, path: {at}}}", quote(op)),
    };
    let need_value = || value.ok_or_else(|| "an `add` or `replace` without a `value`".to_owned());
    // The parents' presence (not null), each a test on its own map or list (a step of digits
    // is an index in a list, a key in a map); a parent of another type goes on to the patch,
    // which fails as Kyverno's does. `sels[i]` is the node below which step `i` is read.
    let mut sel = base.to_owned();
    let mut sels = Vec::new();
    let mut present = Vec::new();
    for p in parents {
        sels.push(sel.clone());
        let q = quote(&unescape(p));
        let in_map = format!("(type({sel}) != map || ({q} in {sel} && {sel}[{q}] != null))");
        match p.parse::<usize>() {
            Ok(n) => {
                present.push(format!(
                    "(type({sel}) == list ? (size({sel}) > {n} && {sel}[{n}] != null) : {in_map})"
                ));
                sel = format!("(type({sel}) == list ? {sel}[{n}] : {sel}[{q}])");
            }
            Err(_) => {
                present.push(in_map);
                sel = format!("{sel}[{q}]");
            }
        }
    }
    let expr = match kind {
        "remove" | "replace" if *last == "-" || numeric.is_some() => {
            return Err(format!(
                "`{kind}` at a list index (`{shown}`) is not translated"
            ));
        }
        "remove" => {
            let q = quote(&unescape(last));
            let mut all = present.clone();
            all.push(format!("(type({sel}) != map || {q} in {sel})"));
            format!("{} ? [{}] : []", and(&all), patch("remove", &path, None))
        }
        "replace" => format!("[{}]", patch("replace", &path, Some(need_value()?))),
        "add" => {
            let v = need_value()?;
            // Where the parents down to `j` are there and the next is missing, Kyverno
            // creates the rest (a list where the next step is an index or `-`, padded with
            // nulls up to it; a map otherwise): the CEL form adds the built value at that
            // next parent. A missing index in a shorter list is reached by padding it with
            // nulls first, as Kyverno does.
            let mut e = format!("[{}]", patch("add", &path, Some(v)));
            for j in (0..parents.len()).rev() {
                let mut inner = container(last, v);
                for step in parents[j + 1..].iter().rev() {
                    inner = container(step, &inner);
                }
                let parent = at(&raw[..=j].join("/"));
                let mut add = format!("[{}]", patch("add", &parent, Some(&inner)));
                if let Ok(n) = parents[j].parse::<usize>() {
                    let s = &sels[j];
                    let end = if j == 0 {
                        "-".to_owned()
                    } else {
                        format!("{}/-", raw[..j].join("/"))
                    };
                    let pad = patch("add", &at(&end), Some("null"));
                    add = format!(
                        "(type({s}) == list && size({s}) < {n} ? lists.range({n} - size({s})).map(i, {pad}) : []) + {add}"
                    );
                }
                e = format!(
                    "{} ? {} : {}",
                    and(&present[..=j]),
                    paren_list(&e),
                    paren_list(&add)
                );
            }
            e
        }
        other => return Err(format!("the operation `{other}` is not translated")),
    };
    Ok(expr)
}

/// The container Kyverno creates to hold `v` at step `last`: a list for `-` or an index
/// (padded with nulls up to it), a map otherwise.
fn container(last: &str, v: &str) -> String {
    if last == "-" {
        return format!("[{v}]");
    }
    match last.parse::<usize>() {
        Ok(i) => {
            let mut items = vec!["null".to_owned(); i];
            items.push(v.to_owned());
            format!("[{}]", items.join(", "))
        }
        Err(_) => format!("{{{}: {v}}}", quote(&unescape(last))),
    }
}

fn paren_list(e: &str) -> String {
    if e.starts_with('[') && e.ends_with(']') && !e.contains(" ? ") {
        e.to_owned()
    } else {
        format!("({e})")
    }
}

/// A JSON pointer step unescaped (`~1` is `/`, `~0` is `~`).
fn unescape(step: &str) -> String {
    step.replace("~1", "/").replace("~0", "~")
}

/// The placeholder `{{elementIndex}}` stands for while a foreach entry's patch is parsed.
const INDEX: &str = "__kpol_element_index__";

/// A `mutate.foreach` whose entries are `patchesJson6902` patches of the element they iterate:
/// each entry becomes one `JSONPatch` mutation (the entry sees the object as the entries
/// before it left it, as in Kyverno), its operations one per element in list order. Kyverno
/// substitutes `element` and `elementIndex` per element; the conversion binds them with
/// `cel.bind` over `lists.range`. Translated: a `list` that is a path from `request.object`,
/// an entry's `preconditions`, and one `add`, `remove` or `replace` whose path is the list's
/// own path, `/{{elementIndex}}`, then map keys (so each element patches only its own
/// subtree and the order of the elements does not matter). Nested `foreach`, `context`,
/// `patchStrategicMerge` in a foreach and anything else are refused.
pub(crate) fn foreach(
    entries: &Node,
    outer: &Translator,
    pod_autogen: bool,
) -> Result<(Vec<Mutation>, Option<String>), Blocked> {
    let items: Vec<&Node> = match &entries.value {
        Value::Seq(items) => items.iter().collect(),
        Value::Map(_) => vec![entries],
        _ => {
            return Err(Blocked::new(
                entries.span,
                "`mutate.foreach` must be a list".to_owned(),
            ));
        }
    };
    let mut out = Vec::new();
    // Each entry sees the object as the entries before it left it; when none of them changed
    // it, the next sees the original: so the rule changes the object exactly when some
    // entry's change condition holds on the original.
    let mut changes = Some(Vec::new());
    for entry in items {
        if let Some(smp) = entry.get("patchStrategicMerge") {
            let (m, c) = match foreach_smp_selected(entry, smp, outer, pod_autogen) {
                Some(r) => r?,
                None => foreach_smp(entry, smp, outer, pod_autogen)?,
            };
            out.extend(m);
            if let Some(cs) = changes.as_mut() {
                cs.push(c);
            }
        } else {
            out.push(foreach_entry(entry, outer)?);
            changes = None;
        }
    }
    Ok((out, changes.map(|c| super::cel_text::or(&c))))
}

/// The CEL list of a mutate foreach `list`: a path of plain keys from `request.object`
/// (`[]` after it allowed), or such a path then a multiselect of plain keys flattened
/// (`request.object.spec.[initContainers, containers][]`: the lists there joined, in that
/// order, a missing one contributing nothing, as the flatten projection drops nulls). A
/// value there that is not a list (which the schema forbids) contributes nothing.
fn foreach_list(list_node: &Node) -> Result<String, Blocked> {
    let list = list_node.as_str().unwrap_or_default().trim();
    let refuse = || {
        Blocked::new(
            list_node.span,
            format!(
                "the foreach list `{list}`: only a path of plain keys from `request.object` (and a flattened multiselect of plain keys after it) is translated in a mutate foreach"
            ),
        )
    };
    let path = list.strip_prefix("request.object.").ok_or_else(refuse)?;
    let (base, names): (&str, Vec<&str>) = match path.strip_suffix("][]") {
        Some(head) => {
            let (base, sel) = head.rsplit_once(".[").ok_or_else(refuse)?;
            (base, sel.split(',').map(str::trim).collect())
        }
        None => (path.strip_suffix("[]").unwrap_or(path), Vec::new()),
    };
    let steps: Vec<&str> = base.split('.').collect();
    if !steps.iter().chain(names.iter()).all(|s| is_field(s)) {
        return Err(refuse());
    }
    let at = |steps: &[&str]| {
        let mut cur = "object".to_owned();
        let mut guards = Vec::new();
        for s in steps {
            guards.push(has(&cur, s));
            cur = select(&cur, s);
        }
        guards.push(format!("type({cur}) == list"));
        format!("({} ? {cur} : [])", and(&guards))
    };
    if names.is_empty() {
        return Ok(at(&steps));
    }
    let parts: Vec<String> = names
        .iter()
        .map(|n| {
            let mut all = steps.clone();
            all.push(n);
            at(&all)
        })
        .collect();
    Ok(format!("({})", parts.join(" + ")))
}

/// A mutate foreach entry with a `patchStrategicMerge` of maps whose leaves are literal
/// scalars (a leaf's key may be `+(key)`, or hold `{{ }}` when it is the only key of its
/// map): for each (non-null) element the merge sets those leaves, creating missing maps.
/// As `JSONPatch` mutations: one creating the missing maps above the leaves when some
/// element changes something, then per leaf an `add` for each element whose value is not
/// there yet (a constant value: the elements' order does not matter). Returns the
/// mutations and the condition under which the entry changes the object. JSON patches get
/// no pod-controller autogen in a MutatingPolicy, so a rule the ClusterPolicy's autogen
/// would copy for controllers is refused; lists, `null`, other anchors, variables in values
/// and entry `preconditions` are refused.
fn foreach_smp(
    entry: &Node,
    smp: &Node,
    outer: &Translator,
    pod_autogen: bool,
) -> Result<(Vec<Mutation>, String), Blocked> {
    let refuse = refuse_foreach_smp;
    if let Value::Map(em) = &entry.value {
        for e in em.entries() {
            if !matches!(e.key.as_str(), "list" | "order" | "patchStrategicMerge") {
                return Err(refuse(
                    e.key_span,
                    &format!("`{}` beside it is not translated", e.key),
                ));
            }
        }
    }
    let Some(list_node) = entry.get("list") else {
        return Err(Blocked::new(
            entry.span,
            "a foreach needs a `list`".to_owned(),
        ));
    };
    let items = foreach_list(list_node)?;
    let mut jmes = outer.clone();
    jmes.element = Some("element".to_owned());
    let Value::Map(root) = &smp.value else {
        return Err(refuse(smp.span, "it must be a map"));
    };
    let mut leaves = Vec::new();
    smp_leaves(root, &[], &jmes, &mut leaves, &refuse)?;
    usable_leaves(leaves.is_empty(), smp, pod_autogen)?;
    // Per leaf: the object's map above it (its presence tests), the key, and the change.
    let mut parents: Vec<Vec<String>> = Vec::new();
    let mut needs = Vec::new();
    let mut adds = Vec::new();
    for leaf in &leaves {
        let mut cur = "object".to_owned();
        let mut there = Vec::new();
        for k in &leaf.parents {
            let q = quote(k);
            there.push(format!("({q} in {cur} && {cur}[{q}] != null)"));
            cur = format!("{cur}[{q}]");
        }
        for j in 1..=leaf.parents.len() {
            let prefix = leaf.parents[..j].to_vec();
            if !parents.contains(&prefix) {
                parents.push(prefix);
            }
        }
        let key = &leaf.key;
        there.push(format!("{key} in {cur}"));
        let need = match &leaf.value {
            Some(v) => super::cel_text::not(&and(&[and(&there), format!("{cur}[{key}] == {v}")])),
            None => super::cel_text::not(&and(&there)),
        };
        let pointer: String = leaf
            .parents
            .iter()
            .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
            .collect();
        let value = leaf.value.clone().unwrap_or_default();
        adds.push(format!(
            "{items}.filter(element, element != null && {}).map(element, JSONPatch{{op: 'add', path: {} + '/' + jsonpatch.escapeKey({key}), value: {}}})",
            super::cel_text::paren(&need),
            quote(&pointer),
            leaf.add_value.as_deref().unwrap_or(&value)
        ));
        needs.push(need);
    }
    let some = format!(
        "{items}.exists(element, element != null && {})",
        super::cel_text::paren(&super::cel_text::or(&needs))
    );
    let mut out = Vec::new();
    if !parents.is_empty() {
        let ops: Vec<String> = parents
            .iter()
            .map(|prefix| {
                let mut cur = "object".to_owned();
                let mut there = Vec::new();
                for k in prefix {
                    let q = quote(k);
                    there.push(format!("({q} in {cur} && {cur}[{q}] != null)"));
                    cur = format!("{cur}[{q}]");
                }
                let pointer: String = prefix
                    .iter()
                    .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
                    .collect();
                format!(
                    "({} ? [] : [JSONPatch{{op: 'add', path: {}, value: {{}}}}])",
                    and(&there),
                    quote(&pointer)
                )
            })
            .collect();
        out.push(Mutation {
            json_patch: true,
            expr: format!("{some} ? {} : []", ops.join(" + ")),
        });
    }
    out.push(Mutation {
        json_patch: true,
        expr: adds.join(" + "),
    });
    Ok((out, some))
}

/// The refusal of a mutate foreach's `patchStrategicMerge`.
fn refuse_foreach_smp(span: crate::source::Span, why: &str) -> Blocked {
    Blocked::new(
        span,
        format!("`patchStrategicMerge` inside a mutate foreach: {why}"),
    )
}

/// What a foreach merge refuses once its overlay's leaves are read: an overlay without leaves,
/// and the ClusterPolicy's pod autogen (a MutatingPolicy's autogen does not rewrite the JSON
/// patches the merge becomes). Checked after the overlay, so that an overlay the conversion
/// cannot translate is the construct reported (pod-controller copies alone would not convert it).
fn usable_leaves(no_leaves: bool, smp: &Node, pod_autogen: bool) -> Result<(), Blocked> {
    if no_leaves {
        return Err(refuse_foreach_smp(smp.span, "the overlay is empty"));
    }
    if pod_autogen {
        return Err(refuse_foreach_smp(
            smp.span,
            "the ClusterPolicy's autogen copies the rule for pod controllers, and a MutatingPolicy's autogen does not rewrite the JSON patches it becomes",
        ));
    }
    Ok(())
}

/// A mutate foreach entry whose `patchStrategicMerge` is plain keys down to one list holding
/// one element selected by `(name): "{{element.name}}"` (or, where the foreach list is that
/// list, `name: "{{element.name}}"`), the rest of the element maps whose leaves are literal
/// scalars or `{{ }}` values of the element (a leaf key may be `+(k)`). Each element merges
/// into the list's element of its name: `None` where the overlay has another shape. With
/// names unique (as Kubernetes requires of containers), the descending order (Kyverno's
/// default here) moves each merged element to the front once, which restores the list's
/// order; so the entry is one `JSONPatch` mutation over the list's indexes. A null value
/// removes its key (a plain one) and creates no map; a name that is not a lowercase DNS label
/// starting with a letter (which Kyverno would read as a pattern) is an error.
fn foreach_smp_selected(
    entry: &Node,
    smp: &Node,
    outer: &Translator,
    pod_autogen: bool,
) -> Option<Result<(Vec<Mutation>, String), Blocked>> {
    // Plain keys down to the list.
    let mut keys = Vec::new();
    let mut cur = smp;
    let list = loop {
        let Value::Map(m) = &cur.value else {
            return None;
        };
        let [e] = m.entries() else {
            return None;
        };
        if !is_field(&e.key) {
            return None;
        }
        keys.push(e.key.clone());
        match &e.value.value {
            Value::Seq(items) => break items,
            Value::Map(_) => cur = &e.value,
            _ => return None,
        }
    };
    let [element] = list.as_slice() else {
        return None;
    };
    let Value::Map(em) = &element.value else {
        return None;
    };
    let is_name_template = |n: &Node| {
        n.as_str().is_some_and(|s| {
            let t = s.trim();
            t.strip_prefix("{{")
                .and_then(|t| t.strip_suffix("}}"))
                .is_some_and(|inner| inner.trim() == "element.name")
        })
    };
    let (conditional, rest): (bool, Vec<_>) = if let Some(n) = em.get("(name)") {
        if !is_name_template(n) || em.get("name").is_some() {
            return None;
        }
        (
            true,
            em.entries().iter().filter(|e| e.key != "(name)").collect(),
        )
    } else if let Some(n) = em.get("name") {
        if !is_name_template(n) {
            return None;
        }
        (
            false,
            em.entries().iter().filter(|e| e.key != "name").collect(),
        )
    } else {
        return None;
    };
    Some(selected_entry(
        entry,
        smp,
        outer,
        pod_autogen,
        &keys,
        conditional,
        &rest,
    ))
}

#[allow(clippy::too_many_arguments)]
fn selected_entry(
    entry: &Node,
    smp: &Node,
    outer: &Translator,
    pod_autogen: bool,
    keys: &[String],
    conditional: bool,
    rest: &[&crate::yaml::Entry],
) -> Result<(Vec<Mutation>, String), Blocked> {
    let refuse = refuse_foreach_smp;
    let mut order_desc = true;
    if let Value::Map(em) = &entry.value {
        for e in em.entries() {
            match e.key.as_str() {
                "list" | "patchStrategicMerge" => {}
                "order" => order_desc = e.value.as_str() == Some("Descending"),
                _ => {
                    return Err(refuse(
                        e.key_span,
                        &format!("`{}` beside it is not translated", e.key),
                    ));
                }
            }
        }
    }
    if !order_desc {
        return Err(refuse(
            smp.span,
            "the merge moves each selected element to the front of its list; only the descending order (the default) restores the list's order",
        ));
    }
    let Some(list_node) = entry.get("list") else {
        return Err(Blocked::new(
            entry.span,
            "a foreach needs a `list`".to_owned(),
        ));
    };
    let items = foreach_list(list_node)?;
    let target_path = format!("request.object.{}", keys.join("."));
    let listed = list_node.as_str().unwrap_or_default().trim();
    if !conditional && listed.strip_suffix("[]").unwrap_or(listed) != target_path {
        return Err(refuse(
            list_node.span,
            "a `name: \"{{element.name}}\"` element adds an element where the list has none of that name; only the foreach over that very list is translated",
        ));
    }
    let target = foreach_list(&Node {
        value: Value::Str(target_path),
        span: list_node.span,
    })?;
    let mut jmes = outer.clone();
    jmes.element = Some("element".to_owned());
    let mut leaves = Vec::new();
    selected_leaves(rest, &[], &jmes, &mut leaves, &refuse)?;
    usable_leaves(leaves.is_empty(), smp, pod_autogen)?;
    let pointer = |ks: &[String]| -> String {
        ks.iter()
            .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
            .collect()
    };
    let base = format!("{} + '/' + string(j)", quote(&pointer(keys)));
    // Per leaf: where its parents are maps in `t`, whether it needs setting (`v_N` its value)
    // or removing.
    let mut binds = Vec::new();
    let mut sets = Vec::new();
    let mut removes = Vec::new();
    let mut set_conds = Vec::new();
    let mut parents: Vec<Vec<String>> = Vec::new();
    let there = |ks: &[String]| -> (Vec<String>, String) {
        let mut cur = "t".to_owned();
        let mut tests = Vec::new();
        for k in ks {
            let q = quote(k);
            tests.push(format!("({q} in {cur} && {cur}[{q}] != null)"));
            cur = format!("{cur}[{q}]");
        }
        (tests, cur)
    };
    for (n, leaf) in leaves.iter().enumerate() {
        let v = format!("v_{n}");
        binds.push((v.clone(), super::cel_text::nullable(&leaf.value)));
        let (mut tests, cur) = there(&leaf.parents);
        let q = quote(&leaf.key);
        tests.push(format!("{q} in {cur}"));
        let present = and(&tests);
        let set = if leaf.add {
            and(&[format!("{v} != null"), super::cel_text::not(&present)])
        } else {
            and(&[
                format!("{v} != null"),
                super::cel_text::not(&and(&[present.clone(), format!("{cur}[{q}] == {v}")])),
            ])
        };
        let mut all = leaf.parents.clone();
        all.push(leaf.key.clone());
        let path = format!("{base} + {}", quote(&pointer(&all)));
        // The merge keeps the leaf (a null one too, which then creates its parent maps
        // empty) unless it is `+(k)` on a present key.
        let kept = if leaf.add {
            super::cel_text::not(&present)
        } else {
            "true".to_owned()
        };
        sets.push((
            leaf.parents.clone(),
            kept,
            format!("({set} ? [JSONPatch{{op: 'add', path: {path}, value: {v}}}] : [])"),
        ));
        set_conds.push(set);
        if !leaf.add {
            let rm = and(&[format!("{v} == null"), present]);
            removes.push((
                rm.clone(),
                format!("({rm} ? [JSONPatch{{op: 'remove', path: {path}}}] : [])"),
            ));
        }
        for j in 1..=leaf.parents.len() {
            let prefix = leaf.parents[..j].to_vec();
            if !parents.contains(&prefix) {
                parents.push(prefix);
            }
        }
    }
    let mut ops = Vec::new();
    for prefix in &parents {
        let needs: Vec<String> = sets
            .iter()
            .filter(|(p, _, _)| p.starts_with(prefix))
            .map(|(_, s, _)| s.clone())
            .collect();
        let (tests, _) = there(prefix);
        ops.push(format!(
            "({} ? [JSONPatch{{op: 'add', path: {base} + {}, value: {{}}}}] : [])",
            and(&[
                super::cel_text::not(&and(&tests)),
                super::cel_text::or(&needs)
            ]),
            quote(&pointer(prefix))
        ));
    }
    ops.extend(sets.iter().map(|(_, _, o)| o.clone()));
    ops.extend(removes.iter().map(|(_, o)| o.clone()));
    let changed: Vec<String> = sets
        .iter()
        .map(|(_, s, _)| s.clone())
        .chain(removes.iter().map(|(r, _)| r.clone()))
        .collect();
    let bound = |body: String| {
        binds
            .iter()
            .rev()
            .fold(body, |acc, (v, e)| format!("cel.bind({v}, {e}, {acc})"))
    };
    let name_ok = if conditional {
        "type(e.name) == string && e.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"
    } else {
        "type(e.name) == string"
    };
    let names_ok =
        format!("items.all(e, e == null || (type(e) == map && 'name' in e && {name_ok}))");
    // A list of JSONPatch, so that both branches have the type Kyverno requires exactly
    // (`list(JSONPatch)`; a `dyn` branch makes the whole expression `dyn`, which it refuses).
    let fail = format!(
        "[JSONPatch{{op: string({})}}]",
        super::cel_text::runtime_error(
            "a foreach element has no name Kyverno could select by (`{{element.name}}`)"
        )
    );
    let selected = "type(targets[j]) == map && 'name' in targets[j] && items.exists(e, e != null && e.name == targets[j].name)";
    let per = |body: String| {
        format!(
            "cel.bind(t, targets[j], cel.bind(element, items.filter(e, e != null && e.name == t.name)[0], {}))",
            bound(body)
        )
    };
    let patch = format!(
        "cel.bind(items, {items}, cel.bind(targets, {target}, !({names_ok}) ? {fail} : lists.range(size(targets)).filter(j, {selected}).map(j, {}).flatten()))",
        per(ops.join(" + "))
    );
    let some = format!(
        "cel.bind(items, {items}, cel.bind(targets, {target}, !({names_ok}) || lists.range(size(targets)).exists(j, ({selected}) && {})))",
        per(super::cel_text::or(&changed))
    );
    Ok((
        vec![Mutation {
            json_patch: true,
            expr: patch,
        }],
        some,
    ))
}

/// A leaf of a selected list element's overlay: the keys above it, its key, its CEL value
/// (may be null at run time), and whether it is `+(key)`.
struct SelectedLeaf {
    parents: Vec<String>,
    key: String,
    value: String,
    add: bool,
}

fn selected_leaves(
    entries: &[&crate::yaml::Entry],
    parents: &[String],
    jmes: &Translator,
    out: &mut Vec<SelectedLeaf>,
    refuse: &dyn Fn(crate::source::Span, &str) -> Blocked,
) -> Result<(), Blocked> {
    for e in entries {
        let (key, add) = match parse_anchor(&e.key) {
            None if is_field(&e.key) || !e.key.contains(['{', '$', '(']) => (e.key.as_str(), false),
            Some(a) if a.kind == AnchorKind::AddIfNotPresent && !a.key.contains(['{', '$']) => {
                (a.key, true)
            }
            _ => {
                return Err(refuse(
                    e.key_span,
                    &format!(
                        "the key `{}` in a selected list element is not translated",
                        e.key
                    ),
                ));
            }
        };
        match &e.value.value {
            Value::Map(inner) if !add && !inner.is_empty() => {
                let mut p = parents.to_vec();
                p.push(key.to_owned());
                let kids: Vec<&crate::yaml::Entry> = inner.entries().iter().collect();
                selected_leaves(&kids, &p, jmes, out, refuse)?;
            }
            Value::Str(s) if s.contains("$(") => {
                return Err(refuse(e.value.span, "a `$(…)` value is not translated"));
            }
            Value::Str(s) if s.contains("{{") => out.push(SelectedLeaf {
                parents: parents.to_vec(),
                key: key.to_owned(),
                value: jmes.template_kyverno_text(s, e.value.span)?,
                add,
            }),
            Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                out.push(SelectedLeaf {
                    parents: parents.to_vec(),
                    key: key.to_owned(),
                    value: literal(&e.value.to_json()),
                    add,
                });
            }
            _ => {
                return Err(refuse(
                    e.value.span,
                    "only maps with scalar leaves are translated in a selected list element (no lists, `null`, empty maps or `+()` on a map)",
                ));
            }
        }
    }
    Ok(())
}

/// One leaf of a foreach overlay: the constant map keys above it, its key as CEL (a string
/// literal, or a text template), and its value (`None` for `+(key)`: added only where the
/// key is missing, with `add_value`).
struct Leaf {
    parents: Vec<String>,
    key: String,
    value: Option<String>,
    add_value: Option<String>,
}

fn smp_leaves(
    m: &Map,
    parents: &[String],
    jmes: &Translator,
    out: &mut Vec<Leaf>,
    refuse: &dyn Fn(crate::source::Span, &str) -> Blocked,
) -> Result<(), Blocked> {
    let templated = m.keys().any(|k| k.contains("{{"));
    if templated && m.len() > 1 {
        return Err(refuse(
            m.entries()[0].key_span,
            "a key with `{{ }}` beside other keys (they may meet) is not translated",
        ));
    }
    for e in m.entries() {
        let (key, add) = match parse_anchor(&e.key) {
            None if e.key.starts_with('$') || e.key.contains("$(") => {
                return Err(refuse(e.key_span, "a `$` key is not translated"));
            }
            None => (e.key.as_str(), false),
            Some(a) if a.kind == AnchorKind::AddIfNotPresent && !a.key.contains("{{") => {
                (a.key, true)
            }
            Some(_) => {
                return Err(refuse(
                    e.key_span,
                    &format!("the anchor `{}` is not translated", e.key),
                ));
            }
        };
        let cel_key = if key.contains("{{") {
            if add {
                return Err(refuse(
                    e.key_span,
                    "`+()` on a key with `{{ }}` is not translated",
                ));
            }
            jmes.template_text(key, e.key_span, true)?
        } else {
            quote(key)
        };
        match &e.value.value {
            Value::Map(inner) if !add && !key.contains("{{") && !inner.is_empty() => {
                let mut p = parents.to_vec();
                p.push(key.to_owned());
                smp_leaves(inner, &p, jmes, out, refuse)?;
            }
            Value::Str(s) if s.contains("{{") || s.contains("$(") => {
                return Err(refuse(
                    e.value.span,
                    "a value with variables (the elements' order would decide) is not translated",
                ));
            }
            Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                let v = literal(&e.value.to_json());
                out.push(Leaf {
                    parents: parents.to_vec(),
                    key: cel_key,
                    value: (!add).then(|| v.clone()),
                    add_value: add.then_some(v),
                });
            }
            _ => {
                return Err(refuse(
                    e.value.span,
                    "only maps with literal scalar leaves are translated (no lists, `null`, empty maps or `+()` on a map)",
                ));
            }
        }
    }
    Ok(())
}

fn foreach_entry(entry: &Node, outer: &Translator) -> Result<Mutation, Blocked> {
    let Value::Map(m) = &entry.value else {
        return Err(Blocked::new(
            entry.span,
            "a foreach entry must be a map".to_owned(),
        ));
    };
    for e in m.entries() {
        match e.key.as_str() {
            "list" | "order" | "preconditions" | "patchesJson6902" => {}
            "patchStrategicMerge" => {
                return Err(Blocked::new(
                    e.key_span,
                    "`patchStrategicMerge` inside a mutate foreach is not converted yet".to_owned(),
                ));
            }
            other => {
                return Err(Blocked::new(
                    e.key_span,
                    format!("`{other}` inside a mutate foreach is not translated"),
                ));
            }
        }
    }
    let Some(list_node) = entry.get("list") else {
        return Err(Blocked::new(
            entry.span,
            "a foreach needs a `list`".to_owned(),
        ));
    };
    let list = list_node.as_str().unwrap_or_default().trim();
    let steps: Vec<&str> = list
        .strip_suffix("[]")
        .unwrap_or(list)
        .strip_prefix("request.object.")
        .map(|p| p.split('.').collect())
        .unwrap_or_default();
    if steps.is_empty() || !steps.iter().all(|s| is_field(s)) {
        return Err(Blocked::new(
            list_node.span,
            format!(
                "the foreach list `{list}`: only a path of plain keys from `request.object` is translated in a mutate foreach"
            ),
        ));
    }
    if let Some(o) = entry.get("order")
        && !matches!(o.as_str(), Some("Ascending" | "Descending"))
    {
        return Err(Blocked::new(
            o.span,
            "`order` must be Ascending or Descending".to_owned(),
        ));
    }
    let Some(patch) = entry.get("patchesJson6902") else {
        return Err(Blocked::new(
            entry.span,
            "a mutate foreach entry without `patchesJson6902` is not converted".to_owned(),
        ));
    };
    let mut jmes = outer.clone();
    jmes.element = Some("element".to_owned());
    let pre = match entry.get("preconditions") {
        Some(p) => Some(super::conditions::block(p, &jmes)?),
        None => None,
    };
    let refuse = |why: String| Blocked::new(patch.span, format!("`patchesJson6902`: {why}"));
    let Some(text) = patch.as_str() else {
        return Err(refuse("must be a string".to_owned()));
    };
    let text = replace_index(text);
    let docs = crate::yaml::parse_documents(&text, crate::yaml::Limits::default())
        .map_err(|e| refuse(format!("does not parse: {}", e.message)))?;
    let [doc] = docs.as_slice() else {
        return Err(refuse("must be one YAML document".to_owned()));
    };
    let ops = doc.root.to_json();
    if text.matches("{{").count() != braces_in_strings(&ops) {
        return Err(refuse(
            "a `{{ }}` outside a quoted string (Kyverno substitutes it into the text before reading it) is not translated".to_owned(),
        ));
    }
    let [op] = ops.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(refuse(
            "a foreach patch of other than one operation is not translated".to_owned(),
        ));
    };
    let path = op.get("path").and_then(|p| p.as_str()).unwrap_or_default();
    let prefix = format!("/{}/{INDEX}/", steps.join("/"));
    let Some(rest) = path.strip_prefix(&prefix) else {
        return Err(refuse(format!(
            "the path `{}` must start with the list's own path and `{{{{elementIndex}}}}` (`/{}/{{{{elementIndex}}}}/…`)",
            path.replace(INDEX, "{{elementIndex}}"),
            steps.join("/")
        )));
    };
    if rest.contains(INDEX) || rest.contains("{{") || rest.contains("$(") {
        return Err(refuse(format!(
            "variables in the path `{}` after the element's index are not translated",
            path.replace(INDEX, "{{elementIndex}}")
        )));
    }
    let value = match op.get("value") {
        Some(v) => Some(patch_value(v, &jmes).map_err(refuse)?),
        None => None,
    };
    let kind = op.get("op").and_then(|o| o.as_str()).unwrap_or_default();
    let at = |tail: &str| {
        format!(
            "{} + string(i) + {}",
            quote(&format!("/{}/", steps.join("/"))),
            quote(&format!("/{tail}"))
        )
    };
    let shown = path.replace(INDEX, "{{elementIndex}}");
    let ops = op_expr(kind, rest, &shown, "element", &at, value.as_deref()).map_err(refuse)?;
    let items = format!(
        "({} ? {} : [])",
        and(&steps
            .iter()
            .scan("object".to_owned(), |cur, s| {
                let h = has(cur, s);
                *cur = select(cur, s);
                Some(h)
            })
            .collect::<Vec<_>>()),
        steps
            .iter()
            .fold("object".to_owned(), |cur, s| select(&cur, s))
    );
    let keep = match &pre {
        Some(p) => format!("items[i] != null && cel.bind(element, items[i], {p})"),
        None => "items[i] != null".to_owned(),
    };
    Ok(Mutation {
        json_patch: true,
        expr: format!(
            "cel.bind(items, {items}, type(items) != list ? [] : lists.range(size(items)).filter(i, {keep}).map(i, cel.bind(element, items[i], {ops})).flatten())"
        ),
    })
}

/// `{{elementIndex}}` (any spacing) replaced by [`INDEX`].
fn replace_index(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(j) if after[..j].trim() == "elementIndex" => {
                out.push_str(&rest[..i]);
                out.push_str(INDEX);
                rest = &after[j + 2..];
            }
            _ => {
                out.push_str(&rest[..i + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A JSON patch value: literals as they are; a string holding `{{ }}` as Kyverno splices it
/// into the patch text (a string piece as it is, `null` as `null`).
fn patch_value(v: &serde_json::Value, jmes: &Translator) -> Result<String, String> {
    match v {
        serde_json::Value::String(s) if s.contains(INDEX) => {
            Err("`{{elementIndex}}` in a value is not translated".to_owned())
        }
        serde_json::Value::String(s) if s.contains("{{") => jmes
            .template_text(s, crate::source::Span::EMPTY, true)
            .map_err(|b| b.reason),
        serde_json::Value::Array(a) => {
            let items: Result<Vec<String>, String> =
                a.iter().map(|x| patch_value(x, jmes)).collect();
            Ok(format!("[{}]", items?.join(", ")))
        }
        serde_json::Value::Object(m) => {
            let mut items = Vec::new();
            for (k, x) in m {
                if k.contains("{{") {
                    return Err(format!("the key `{k}` holds a variable"));
                }
                items.push(format!("{}: {}", quote(k), patch_value(x, jmes)?));
            }
            Ok(format!("{{{}}}", items.join(", ")))
        }
        other => Ok(literal(other)),
    }
}

/// How many `{{` the string values of `v` hold.
fn braces_in_strings(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::String(s) => s.matches("{{").count(),
        serde_json::Value::Array(a) => a.iter().map(braces_in_strings).sum(),
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, x)| k.matches("{{").count() + braces_in_strings(x))
            .sum(),
        _ => 0,
    }
}
