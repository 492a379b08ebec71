//! Rule and foreach `context` entries (validate.md §11.8), loaded lazily: an entry is
//! evaluated the first time a query mentions its name (`(?:\A|\z|\s|[^.0-9A-Za-z])name\b`,
//! `pkg/engine/context/deferred.go`), so a failing entry that is never used costs nothing.
//! An entry's own queries see only the entries declared before it at its level or outer
//! ones (rule context before foreach context), see `Context::load_pending`.
//!
//! `variable` entries are evaluated as in `loaders/variable.go`. `configMap`, `apiCall` and
//! `globalReference` are served from the request's [`crate::cluster::Offline`] data as the
//! Kyverno CLI serves them (super::external): mocked API calls, the virtual cluster of
//! `clusterResources` mode, mocked global context entries. Without that data (and for
//! `imageRegistry`) the CLI does not load them, so their data must come from values (see
//! [`Context::set_variable`]) or from [`Context::add_context_entries`]'s `external` map
//! (name → JSON); otherwise a reference to the name fails with `Unknown key "<name>" in path`.

use std::collections::BTreeMap;

use super::{Context, VarError, substitute::substitute_at};
use crate::jmespath::{Expr, value};
use crate::yaml::{Node, Value};

#[derive(Clone, Debug)]
pub(crate) struct Pending {
    name: String,
    kind: Kind,
    /// How many checkpoints were open when the entry was registered (rule context before
    /// foreach context: `len(jsonRawCheckpoints)` at `AddDeferredLoader`).
    level: usize,
    /// Declaration order across every `context:` list registered (the loader's index).
    seq: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    /// A `variable` entry (the raw `variable` map).
    Variable(Node),
    /// Data supplied by the caller for a cluster-backed entry.
    Data(Node),
    /// An `apiCall` served by the virtual cluster (the raw `apiCall` map).
    ApiCall(Node),
    /// A `configMap` served by the virtual cluster.
    ConfigMap(Node),
    /// A `globalReference` served by the mocked global context entries.
    Global(Node),
}

/// Whether `query` mentions `name` as Kyverno's deferred loader regex decides.
pub(crate) fn mentions(query: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = query[from..].find(name) {
        let start = from + i;
        let end = start + name.len();
        let before_ok = query[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c == '.' || c.is_ascii_alphanumeric()));
        let last_is_word = name.chars().next_back().is_some_and(word);
        let next = query[end..].chars().next();
        let boundary = match next {
            None => last_is_word,
            Some(c) => last_is_word != word(c),
        };
        if before_ok && boundary {
            return true;
        }
        from = start + name.chars().next().map_or(1, char::len_utf8);
    }
    false
}

impl Context<'_> {
    /// Registers a `context:` list. Entries load lazily; `external` holds data for entries
    /// that need a cluster (keyed by entry name).
    pub(crate) fn add_context_entries(
        &mut self,
        entries: &Node,
        external: &BTreeMap<String, Node>,
    ) -> Result<(), VarError> {
        let Some(list) = entries.as_seq() else {
            return Ok(());
        };
        for e in list {
            let Some(name) = e.get("name").and_then(Node::as_str) else {
                continue;
            };
            let kind = if let Some(v) = e.get("variable") {
                Kind::Variable(v.clone())
            } else if let Some(data) = external.get(name) {
                Kind::Data(data.clone())
            } else if let Some(call) = e.get("apiCall") {
                // A mocked call is loaded at once (the CLI's wrapper loads mocks eagerly).
                if self.load_mocked_api_call(name, call)? {
                    continue;
                }
                if self.offline.cluster.is_none() {
                    continue;
                }
                Kind::ApiCall(call.clone())
            } else if let Some(cm) = e
                .get("configMap")
                .filter(|_| self.offline.cluster.is_some())
            {
                Kind::ConfigMap(cm.clone())
            } else if let Some(g) = e
                .get("globalReference")
                .filter(|_| !self.offline.globals.is_empty())
            {
                Kind::Global(g.clone())
            } else {
                // imageRegistry, and the entries above without their data: not loaded offline.
                continue;
            };
            self.pending.push(Pending {
                name: name.to_owned(),
                kind,
                level: self.marks.len(),
                seq: self.next_seq,
            });
            self.next_seq += 1;
        }
        Ok(())
    }

    /// Loads, in registration order, every pending entry the query mentions that it may see
    /// (`deferredLoaders.LoadMatching`/`match`): a query made while no entry is loading sees
    /// every entry at the current checkpoint level or outer ones; a query made while entry E
    /// loads sees only entries declared before E at E's level or outer ones, so a later entry
    /// (one of the same name too) is invisible to it. As upstream, the limit is lifted
    /// (`setLevelAndIndex(-1, -1)`) once any entry finishes loading, so E's queries after
    /// a nested load see every entry again.
    pub(super) fn load_pending(&mut self, query: &str) -> Result<(), VarError> {
        let (level, before) = self.loading.unwrap_or((self.marks.len(), u64::MAX));
        while let Some(i) = self
            .pending
            .iter()
            .position(|p| p.seq < before && p.level <= level && mentions(query, &p.name))
        {
            let p = self.pending.remove(i);
            self.loading = Some((p.level, p.seq));
            let v = match &p.kind {
                Kind::Data(d) => Ok(value::json_round_trip(d)),
                Kind::Variable(v) => self.load_variable(&p.name, v),
                Kind::ApiCall(c) => self.load_cluster_api_call(&p.name, c),
                Kind::ConfigMap(c) => self.load_config_map(&p.name, c),
                Kind::Global(g) => self.load_global(&p.name, g),
            };
            self.loading = None;
            self.set_path(&[&p.name], v?);
        }
        Ok(())
    }

    fn load_variable(&mut self, name: &str, var: &Node) -> Result<Node, VarError> {
        let jp_text = var.get("jmesPath").and_then(Node::as_str).unwrap_or("");
        let mut path = String::new();
        if !jp_text.is_empty() {
            let jp = substitute_at(&value::string(jp_text), self, "").map_err(|e| {
                VarError::new(format!(
                    "failed to substitute variables in context entry {name} {jp_text}: {e}"
                ))
            })?;
            path = match jp.value {
                Value::Str(s) => s,
                _ => {
                    return Err(VarError::new(format!(
                        "jmespath value must be a string {name} {jp_text}: <nil>"
                    )));
                }
            };
        }
        let mut default = None;
        if let Some(d) = var.get("default").filter(|d| !d.is_null()) {
            let v = substitute_at(d, self, "").map_err(|e| {
                VarError::new(format!(
                    "failed to substitute variables in context entry {name} {}: {e}",
                    value::go_sprint(d)
                ))
            })?;
            default = (!v.is_null()).then_some(v);
        }
        let mut output = default.clone();
        if let Some(raw) = var.get("value").filter(|v| !v.is_null()) {
            let v = substitute_at(raw, self, "").map_err(|e| {
                VarError::new(format!(
                    "failed to substitute variables in context entry {name} {}: {e}",
                    value::go_sprint(raw)
                ))
            })?;
            if path.is_empty() {
                output = Some(v);
            } else {
                match apply(&path, &v) {
                    Ok(r) => output = Some(r),
                    Err(e) if default.is_none() => {
                        return Err(VarError::new(format!(
                            "failed to apply jmespath {path} to variable <nil>: {e}"
                        )));
                    }
                    Err(_) => {}
                }
            }
        } else if !path.is_empty() {
            match self.query(&path) {
                Ok(r) if !r.is_null() => output = Some(r),
                Ok(_) => {}
                Err(e) if default.is_none() => {
                    return Err(VarError::new(format!(
                        "failed to apply jmespath {path} to variable <nil>: {e}"
                    )));
                }
                Err(_) => {}
            }
        }
        match output {
            Some(v) if !v.is_null() => Ok(value::json_round_trip(&v)),
            _ => Err(VarError::new(format!(
                "failed to add context entry for variable {name} since it evaluated to nil"
            ))),
        }
    }
}

fn apply(path: &str, data: &Node) -> Result<Node, String> {
    let expr = Expr::cached(path)
        .map_err(|e| format!("failed to compile JMESPath: {path}, error: {e}"))?;
    expr.search(data)
        .map(|v| v.into_owned())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_matching() {
        assert!(mentions("foo.bar", "foo"));
        assert!(mentions("length(foo)", "foo"));
        assert!(!mentions("x.foo", "foo"));
        assert!(!mentions("foobar", "foo"));
        assert!(!mentions("afoo", "foo"));
        assert!(mentions("a || foo", "foo"));
    }

    /// Ordering rules of upstream's deferred loading (`pkg/engine/context/deferred.go`).
    fn ctx_with(entries: serde_json::Value) -> Context<'static> {
        let mut ctx = Context::from_root(Node::from_json(&serde_json::json!({"request": {}})));
        ctx.add_context_entries(&Node::from_json(&entries), &BTreeMap::new())
            .unwrap();
        ctx
    }

    fn q(ctx: &mut Context, e: &str) -> Result<serde_json::Value, String> {
        ctx.query(e).map(|n| n.to_json()).map_err(|e| e.message)
    }

    /// `match` only looks below the loading entry's index: an entry does not see one declared
    /// after it (nor itself), though a top-level query still loads that one.
    #[test]
    fn an_entry_does_not_see_entries_declared_after_it() {
        let mut ctx = ctx_with(serde_json::json!([
            {"name": "a", "variable": {"value": "{{ b }}"}},
            {"name": "b", "variable": {"value": "bee"}},
            {"name": "me", "variable": {"value": "{{ me }}"}}
        ]));
        let e = q(&mut ctx, "a").unwrap_err();
        assert!(
            e.contains("context entry a") && e.contains("Unknown key \"b\""),
            "{e}"
        );
        assert_eq!(q(&mut ctx, "b").unwrap(), "bee");
        let e = q(&mut ctx, "me").unwrap_err();
        assert!(e.contains("Unknown key \"me\""), "{e}");
    }

    /// `match` under an entry's index: a later entry of the same name does not shadow the
    /// earlier one for the entries between them; a top-level query (`LoadMatching` with no
    /// entry loading) loads every entry of the name in declaration order, the last one wins.
    #[test]
    fn a_later_entry_of_the_same_name_does_not_shadow_an_earlier_use() {
        let entries = serde_json::json!([
            {"name": "x", "variable": {"value": "first"}},
            {"name": "y", "variable": {"value": "{{ x }}"}},
            {"name": "x", "variable": {"value": "second"}}
        ]);
        let mut ctx = ctx_with(entries.clone());
        assert_eq!(q(&mut ctx, "y").unwrap(), "first");
        assert_eq!(q(&mut ctx, "x").unwrap(), "second");
        // Loaded first at the top level, `x` is the last declaration; `y` then reads it.
        let mut ctx = ctx_with(entries);
        assert_eq!(q(&mut ctx, "x").unwrap(), "second");
        assert_eq!(q(&mut ctx, "y").unwrap(), "second");
    }

    /// Levels (`Add(dl, len(jsonRawCheckpoints))`, `dl.level <= level`): a foreach entry
    /// sees the rule's entries; a rule entry does not see a foreach entry, declared after
    /// it, even when first used inside the foreach.
    #[test]
    fn rule_entries_do_not_see_foreach_entries() {
        let mut ctx = ctx_with(serde_json::json!([
            {"name": "rule", "variable": {"value": "r"}},
            {"name": "early", "variable": {"value": "{{ inner }}"}}
        ]));
        ctx.checkpoint();
        ctx.add_context_entries(
            &Node::from_json(&serde_json::json!([
                {"name": "inner", "variable": {"value": "{{ rule }}-i"}}
            ])),
            &BTreeMap::new(),
        )
        .unwrap();
        let e = q(&mut ctx, "early").unwrap_err();
        assert!(e.contains("Unknown key \"inner\""), "{e}");
        assert_eq!(q(&mut ctx, "inner").unwrap(), "r-i");
        ctx.reset();
        let e = q(&mut ctx, "inner").unwrap_err();
        assert!(e.contains("Unknown key \"inner\""), "{e}");
    }

    /// `loadData` ends with `setLevelAndIndex(-1, -1)`, not the outer entry's limits: once a
    /// nested load has run, the rest of the loading entry's queries see every entry.
    #[test]
    fn the_limit_lifts_after_a_nested_load() {
        let mut ctx = ctx_with(serde_json::json!([
            {"name": "b", "variable": {"value": "bee"}},
            {"name": "a", "variable": {"value": "{{ b }}-{{ c }}"}},
            {"name": "c", "variable": {"value": "sea"}}
        ]));
        assert_eq!(q(&mut ctx, "a").unwrap(), "bee-sea");
        let mut ctx = ctx_with(serde_json::json!([
            {"name": "b", "variable": {"value": "bee"}},
            {"name": "a", "variable": {"value": "{{ c }}-{{ b }}"}},
            {"name": "c", "variable": {"value": "sea"}}
        ]));
        let e = q(&mut ctx, "a").unwrap_err();
        assert!(e.contains("Unknown key \"c\""), "{e}");
    }
}
