//! Structured-merge-diff apply: a partial object (a MutatingPolicy or MutatingAdmissionPolicy
//! `ApplyConfiguration`) merged into a resource the way the Kubernetes apiserver does it
//! (`k8s.io/apiserver` `policy/mutating/patch` `ApplyStructuredMergeDiff`, over
//! `sigs.k8s.io/structured-merge-diff/v6` `typed`), cel.md §6.3 and §11.1 items 11–12.
//!
//! [`apply`] types both sides with the Kubernetes 1.32 built-in schemas (what Kyverno v1.19's
//! CLI uses: kubectl-validate's hard-coded builtins, one type converter per group-version):
//!
//! 1. a group-version with no schema has no type converter, and a kind its document does not
//!    declare has no type: both are errors — unless the inputs hold the kind's CRD, whose
//!    structural schema then types it ([`apply_crd`]);
//! 2. the patch must fit the schema: a field the schema does not declare, a value of the wrong
//!    kind, a repeated key of an associative list are errors;
//! 3. unless [`Options::server_side_apply`] (Kyverno's `evaluation.useServerSideApply`, which
//!    drops this guard), a patch that sets an atomic list, map or struct is refused, since
//!    merging it would drop what it does not restate;
//! 4. the resource must fit the schema too (repeated keys are allowed there);
//! 5. the merge: scalars and atomic parts are replaced, structs and granular maps merge key by
//!    key, associative lists by their keys (sets by value), nulls as the walk treats them (a
//!    null replaces a scalar or an atomic part; over a non-empty granular map or keyed list
//!    it changes nothing).
//!
//! [`apply_deduced`] is the schema-less variant MutatingAdmissionPolicies get
//! (`managedfields.NewDeducedTypeConverter`): maps merge key by key, every list (and every map
//! inside a list) is atomic, nothing is refused. Kubernetes' atomic guard never looks past the
//! top-level map of a deduced value (it follows declared struct fields only, and a deduced map
//! declares none), so a list in the patch replaces the resource's list rather than failing.
//! (cel.md §11.1.12 reads the guard as refusing any list; the code it names does not.)
//!
//! The result is the resource tree with the patch merged in; untouched nodes keep their spans,
//! nodes from the patch keep the patch's (see [`merge`]).

mod crd;
mod merge;
mod schema;
mod typed;

#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod tests;

use std::fmt;

use self::schema::{BUILTIN, DEDUCED, Schema, TypeRef};
use crate::source::Span;
use crate::yaml::{Node, Value};

/// How [`apply_with`] merges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Let the patch replace atomic lists, maps and structs (Kyverno
    /// `evaluation.useServerSideApply: true`) instead of refusing it.
    pub server_side_apply: bool,
}

/// Why an ApplyConfiguration could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SmdError {
    /// The embedded schema did not parse (a build problem, reported rather than a panic).
    Schema(String),
    /// No schema for the group-version: Kyverno has no type converter for it.
    NoTypeConverter { api_version: String },
    /// The group-version's schema does not declare the kind.
    NoType { api_version: String, kind: String },
    /// The patch does not fit the schema.
    Patch(Vec<String>),
    /// The patch sets atomic parts (their paths).
    Atomic(Vec<String>),
    /// The resource does not fit the schema.
    Object(Vec<String>),
    /// The patch or the resource is not an object.
    NotAnObject(&'static str),
}

impl fmt::Display for SmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmdError::Schema(e) => write!(f, "the built-in schema is unreadable: {e}"),
            SmdError::NoTypeConverter { api_version } => write!(
                f,
                "no schema for {api_version}, so no typed merge (type converter is nil): an \
                 ApplyConfiguration needs the kind's OpenAPI schema"
            ),
            SmdError::NoType { api_version, kind } => {
                write!(f, "the {api_version} schema has no type for kind {kind}")
            }
            SmdError::Patch(errors) => {
                write!(
                    f,
                    "the patch does not fit the schema: {}",
                    errors.join("; ")
                )
            }
            SmdError::Atomic(paths) => write!(
                f,
                "invalid ApplyConfiguration: it may not set atomic lists, maps or structs, \
                 which it would replace whole: {}",
                paths.join(", ")
            ),
            SmdError::Object(errors) => {
                write!(
                    f,
                    "the resource does not fit the schema: {}",
                    errors.join("; ")
                )
            }
            SmdError::NotAnObject(what) => write!(f, "the {what} is not an object"),
        }
    }
}

impl std::error::Error for SmdError {}

/// Merges `patch` into `object` (of `api_version`/`kind`), typed by the built-in schemas, with
/// the apiserver's guard against patching atomic parts (the tests' entry; kinds call
/// [`apply_with`] with their options).
#[cfg(test)]
pub fn apply(object: &Node, patch: &Node, api_version: &str, kind: &str) -> Result<Node, SmdError> {
    apply_with(object, patch, api_version, kind, Options::default())
}

/// [`apply`] with [`Options`].
pub fn apply_with(
    object: &Node,
    patch: &Node,
    api_version: &str,
    kind: &str,
    options: Options,
) -> Result<Node, SmdError> {
    let schema = builtin()?;
    if !schema.has_group_version(api_version) {
        return Err(SmdError::NoTypeConverter {
            api_version: api_version.to_owned(),
        });
    }
    let patch = with_gvk(patch, api_version, kind)?;
    let Some(root) = schema.kind(api_version, kind) else {
        return Err(SmdError::NoType {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        });
    };
    run(
        schema,
        &TypeRef::named(root),
        object,
        &patch,
        !options.server_side_apply,
    )
}

/// [`apply_with`] for a custom kind, typed by its CRD's `openAPIV3Schema` (`crd_schema`) as
/// structured-merge-diff types a CRD (see `crd.rs`: a list without `x-kubernetes-list-type`
/// is atomic, `metadata` is the built-in `ObjectMeta`).
pub fn apply_crd(
    object: &Node,
    patch: &Node,
    api_version: &str,
    kind: &str,
    crd_schema: &Node,
    options: Options,
) -> Result<Node, SmdError> {
    let schema = builtin()?;
    let patch = with_gvk(patch, api_version, kind)?;
    let root = crd::root_type(schema, crd_schema);
    run(schema, &root, object, &patch, !options.server_side_apply)
}

/// Merges `patch` into `object` with no schema (MutatingAdmissionPolicy): maps merge key by
/// key, lists are replaced.
pub fn apply_deduced(
    object: &Node,
    patch: &Node,
    api_version: &str,
    kind: &str,
) -> Result<Node, SmdError> {
    let schema = builtin()?;
    let patch = with_gvk(patch, api_version, kind)?;
    run(schema, &TypeRef::named(DEDUCED), object, &patch, true)
}

fn builtin() -> Result<&'static Schema, SmdError> {
    BUILTIN.as_ref().map_err(|e| SmdError::Schema(e.clone()))
}

/// The patch with the object's apiVersion and kind, as the apiserver sets them on it.
fn with_gvk(patch: &Node, api_version: &str, kind: &str) -> Result<Node, SmdError> {
    let mut patch = patch.clone();
    let Value::Map(m) = &mut patch.value else {
        return Err(SmdError::NotAnObject("patch"));
    };
    for (key, value) in [("apiVersion", api_version), ("kind", kind)] {
        m.insert(
            key.to_owned(),
            Span::EMPTY,
            Node::synthetic(Value::Str(value.to_owned())),
        );
    }
    Ok(patch)
}

fn run(
    schema: &Schema,
    root: &TypeRef,
    object: &Node,
    patch: &Node,
    guard: bool,
) -> Result<Node, SmdError> {
    let mut checker = typed::Checker {
        schema,
        allow_duplicates: false,
        errors: Vec::new(),
    };
    checker.check(patch, root, &mut String::new());
    if !checker.errors.is_empty() {
        return Err(SmdError::Patch(checker.errors));
    }
    if guard {
        let mut atomics = Vec::new();
        typed::find_atomics(schema, patch, root, &mut String::new(), &mut atomics);
        if !atomics.is_empty() {
            return Err(SmdError::Atomic(atomics));
        }
    }
    if object.as_map().is_none() {
        return Err(SmdError::NotAnObject("resource"));
    }
    let mut checker = typed::Checker {
        schema,
        allow_duplicates: true,
        errors: Vec::new(),
    };
    checker.check(object, root, &mut String::new());
    if !checker.errors.is_empty() {
        return Err(SmdError::Object(checker.errors));
    }
    merge::Merger { schema }
        .merge(Some(object), Some(patch), root)
        .ok_or(SmdError::NotAnObject("merged value"))
}

/// The `apiVersion`s of the Kubernetes 1.32 built-in schemas that declare `kind` (empty for a
/// kind they do not know, or when the schema data does not load).
pub fn builtin_api_versions(kind: &str) -> Vec<String> {
    match &*schema::BUILTIN {
        Ok(s) => s.api_versions_of(kind),
        Err(_) => Vec::new(),
    }
}

/// What the Kubernetes 1.32 built-in schema says of one field, for a writer of patches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldShape {
    /// A map of free keys (no declared fields); `atomic` when the schema marks it so,
    /// `scalars` when its values are scalars.
    FreeMap { atomic: bool, scalars: bool },
    /// A list the schema replaces as a whole.
    AtomicList,
    /// A struct the schema replaces as a whole.
    AtomicStruct,
    /// Anything else (a granular struct or list, a scalar).
    Other,
}

/// The shape of the field at `path` (keys from the root, list elements stepped through) in
/// every built-in `apiVersion` of `kind` that has it; empty when no schema knows the path.
pub fn field_shapes(kind: &str, path: &[&str]) -> Vec<FieldShape> {
    shapes_at(kind, path, false)
}

/// The shape of the elements of the list at `path` ([`field_shapes`]); empty where the field
/// is not a list or no schema knows the path.
pub fn element_shapes(kind: &str, path: &[&str]) -> Vec<FieldShape> {
    shapes_at(kind, path, true)
}

fn shapes_at(kind: &str, path: &[&str], element: bool) -> Vec<FieldShape> {
    let Ok(s) = &*schema::BUILTIN else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for gv in s.api_versions_of(kind) {
        let Some(root) = s.kind(&gv, kind) else {
            continue;
        };
        let mut tr = TypeRef::named(root);
        let mut known = true;
        for step in path {
            let Some(mut view) = s.resolve(&tr) else {
                known = false;
                break;
            };
            if view.map.is_none()
                && let Some(list) = view.list
            {
                match s.resolve(&list.elem) {
                    Some(v) => view = v,
                    None => {
                        known = false;
                        break;
                    }
                }
            }
            let next = view.map.and_then(|m| {
                m.field(step)
                    .map(|f| f.ty.clone())
                    .or_else(|| m.elem.clone())
            });
            match next {
                Some(t) => tr = t,
                None => {
                    known = false;
                    break;
                }
            }
        }
        if !known {
            continue;
        }
        let Some(mut view) = s.resolve(&tr) else {
            continue;
        };
        if element {
            let Some(elem) = view.list.and_then(|l| s.resolve(&l.elem)) else {
                continue;
            };
            view = elem;
        }
        let shape = match (view.map, view.list) {
            (Some(m), _) if m.fields.is_empty() && m.elem.is_some() => FieldShape::FreeMap {
                atomic: view.map_atomic,
                scalars: m
                    .elem
                    .as_ref()
                    .and_then(|e| s.resolve(e))
                    .is_some_and(|e| e.scalar.is_some() && e.map.is_none() && e.list.is_none()),
            },
            (Some(_), _) if view.map_atomic => FieldShape::AtomicStruct,
            (None, Some(_)) if view.list_atomic => FieldShape::AtomicList,
            _ => FieldShape::Other,
        };
        out.push(shape);
    }
    out
}
