//! Rule selection: `match` / `exclude` blocks against a resource (match.md §4–6), following
//! `kyverno/kyverno:pkg/engine/utils/match.go` `MatchesResourceDescription`.
//!
//! Blocks are compiled once at policy load ([`MatchBlock::compile`]): kinds parsed into
//! (group, version, kind, subresource) patterns, selectors and user info read.

mod filter;
pub mod selector;

pub use filter::{ResourceDescription, ResourceFilter, UserFilter, compile_selector};

use crate::request::Request;
use crate::resource::Resource;
use crate::yaml::Node;
use crate::yaml::fields::{FieldError, FieldResult, as_map, opt_seq};

/// A compiled `match` or `exclude` block, shaped like Kyverno's `MatchResources`.
#[derive(Clone, Debug)]
pub struct MatchBlock {
    /// The block as written (autogen rules: as rewritten).
    pub raw: Node,
    pub any: Vec<ResourceFilter>,
    pub all: Vec<ResourceFilter>,
    /// The legacy flat form (`resources` + user info directly under the block).
    pub flat: ResourceFilter,
    /// The kinds a resource must have for the block to select it, when every filter that
    /// decides names literal kinds ([`MatchBlock::kind_names`]): a first test that rules
    /// most rules out at the cost of a string comparison (perf).
    pub kinds_only: Option<Vec<String>>,
}

/// Which API version's schema a block is read with: v2beta1 has no flat form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    V1,
    V2beta1,
}

impl MatchBlock {
    /// Compiles a block; `path` is the field path for messages (`spec.rules[0].match`).
    pub fn compile(raw: &Node, path: &str, schema: Schema) -> FieldResult<Self> {
        let m = as_map(raw, path)?;
        if schema == Schema::V2beta1 {
            for key in ["resources", "subjects", "roles", "clusterRoles"] {
                if let Some(e) = m.entry(key) {
                    return Err(FieldError::new(
                        format!(
                            "{path}: unknown field \"{key}\" (kyverno.io/v2beta1 accepts only any/all)"
                        ),
                        e.key_span,
                    ));
                }
            }
        }
        let list = |key: &str| -> FieldResult<Vec<ResourceFilter>> {
            opt_seq(m, key, path)?
                .unwrap_or(&[])
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let p = format!("{path}.{key}[{i}]");
                    ResourceFilter::compile(as_map(n, &p)?, n.span, &p)
                })
                .collect()
        };
        let mut block = Self {
            raw: raw.clone(),
            any: list("any")?,
            all: list("all")?,
            flat: ResourceFilter::compile(m, raw.span, path)?,
            kinds_only: None,
        };
        block.kinds_only = block.kind_names();
        Ok(block)
    }

    /// The filters [`MatchBlock::selects`] decides with: `any`, else `all`, else the flat one.
    pub(crate) fn deciding(&self) -> &[ResourceFilter] {
        if !self.any.is_empty() {
            &self.any
        } else if !self.all.is_empty() {
            &self.all
        } else {
            std::slice::from_ref(&self.flat)
        }
    }

    /// Every kind name the deciding filters' `kinds` can match, when each of them lists kinds
    /// and none has a wildcard kind part; `None` otherwise. A resource of another kind is
    /// selected by none of them.
    fn kind_names(&self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for f in self.deciding() {
            if f.resources.kinds.is_empty() {
                return None;
            }
            for k in &f.resources.kinds {
                if let Some(name) = k.kind_name()? {
                    out.push(name.to_owned());
                }
            }
        }
        Some(out)
    }

    /// `MatchResources.IsEmpty`-like: nothing at all in the block.
    pub fn is_empty(&self) -> bool {
        self.any.is_empty() && self.all.is_empty() && self.flat.is_empty()
    }

    /// `GetKinds`: the kinds of the flat form, then of every `any`, then every `all` entry.
    pub fn kinds(&self) -> Vec<&str> {
        let mut out = self.flat.resources.kind_strings();
        for f in self.any.iter().chain(&self.all) {
            out.extend(f.resources.kind_strings());
        }
        out
    }

    /// Every filter of the block (flat, any, all), with whether it is the flat one.
    pub fn filters(&self) -> impl Iterator<Item = &ResourceFilter> {
        std::iter::once(&self.flat)
            .chain(&self.any)
            .chain(&self.all)
    }

    /// Whether this block, used as `match`, selects the resource. `any` wins over `all`,
    /// which wins over the flat form.
    pub fn selects(&self, resource: &Resource, request: &Request) -> bool {
        if let Some(kinds) = &self.kinds_only
            && !kinds.iter().any(|k| k == request.match_kind(resource).kind)
        {
            return false;
        }
        let no_user = request.user_info.as_ref().is_none_or(|u| {
            u.username.is_empty()
                && u.groups.is_empty()
                && u.roles.is_empty()
                && u.cluster_roles.is_empty()
        });
        let one = |f: &ResourceFilter| -> bool {
            // Without request user info, user filters of *match* are ignored (§4).
            let dropped = UserFilter::default();
            let user = if no_user { &dropped } else { &f.user };
            if f.resources.is_empty() && user.is_empty() {
                return false; // "match cannot be empty"
            }
            f.matches(resource, request, user)
        };
        if !self.any.is_empty() {
            self.any.iter().any(one)
        } else if !self.all.is_empty() {
            self.all.iter().all(one)
        } else {
            one(&self.flat)
        }
    }

    /// Whether this block, used as `exclude`, excludes the resource.
    pub fn excludes(&self, resource: &Resource, request: &Request) -> bool {
        if self.is_empty() {
            return false;
        }
        let one =
            |f: &ResourceFilter| -> bool { !f.is_empty() && f.matches(resource, request, &f.user) };
        if !self.any.is_empty() {
            self.any.iter().any(one)
        } else if !self.all.is_empty() {
            self.all.iter().all(one)
        } else {
            one(&self.flat)
        }
    }
}

#[cfg(test)]
mod tests;
