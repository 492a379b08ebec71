//! The admission inputs of a CEL evaluation, the one entry point every CEL policy kind binds
//! them through (cel.md §4.2): `object`, `oldObject` and `request` for one resource and
//! request, each built at most once per resource evaluation in its [`ResourceValues`] and
//! shared by every policy and rule evaluated on it (docs/PERFORMANCE.md). A kind binds what
//! else it needs (`namespaceObject`, `params`, …) with [`Activation::bind`] and
//! [`ResourceValues::shared`] under a key of its own.

use cel::Value;

use super::convert::{map_of, string, strings};
use super::eval::node_val;
use super::{Activation, ResourceValues, Shared};
use crate::request::{Operation, Request};
use crate::resource::Resource;

/// The key of the resource itself in a [`ResourceValues`].
pub(crate) const OBJECT: &str = "object";
/// The key of the previous revision a request carries (`kpol check --old`).
pub(crate) const OLD_OBJECT: &str = "oldObject";

/// Binds `object`, `oldObject` and `request` for an admission request with `op`, each taken
/// from (or built once into) `values`. `with_objects`: Kyverno's request also carries
/// `object`/`oldObject` (§4.2). For one resource the request depends on `op` and
/// `with_objects` alone, so it is shared under a key per combination.
pub(crate) fn bind_admission(
    act: &mut Activation,
    resource: &Resource,
    request: &Request,
    values: &ResourceValues,
    op: Operation,
    with_objects: bool,
) {
    let (object_key, old_key): (Option<&'static str>, Option<&'static str>) = match op {
        // The previous revision when one is given (`kpol check --old`), else the resource.
        Operation::Update => match &request.old_object {
            Some(_) => (Some(OBJECT), Some(OLD_OBJECT)),
            None => (Some(OBJECT), Some(OBJECT)),
        },
        Operation::Delete => (None, Some(OBJECT)),
        _ => (Some(OBJECT), None),
    };
    // The node each key names: the resource, or the request's previous revision.
    let node_of = |key: &'static str| match key {
        OBJECT => Some(&resource.root),
        _ => request.old_object.as_ref().map(|old| &old.root),
    };
    let shared_of = |key: Option<&'static str>| match key.map(|k| (k, node_of(k))) {
        None => Shared::null(),
        Some((k, Some(node))) => values.shared_node(k, node),
        Some((k, None)) => values.shared(k, || Value::Null),
    };
    let request_key = match (op, with_objects) {
        (Operation::Create, true) => "request/create+objects",
        (Operation::Create, false) => "request/create",
        (Operation::Update, true) => "request/update+objects",
        (Operation::Update, false) => "request/update",
        (Operation::Delete, true) => "request/delete+objects",
        (Operation::Delete, false) => "request/delete",
        (Operation::Connect, true) => "request/connect+objects",
        (Operation::Connect, false) => "request/connect",
    };
    act.bind(
        "request",
        values.shared_with(request_key, || {
            let fields = request_value(resource, request, op, None, !with_objects);
            // perf: the objects go in converted straight from the tree, not through a
            // `cel::Value` of each (what `request_value` with them holds).
            let mut extra = Vec::new();
            if with_objects {
                for (name, key) in [("object", object_key), ("oldObject", old_key)] {
                    if let Some(node) = key.and_then(node_of) {
                        extra.push((name, node_val(node)));
                    }
                }
            }
            Shared::map_with(fields, extra)
        }),
    );
    act.bind("object", shared_of(object_key));
    act.bind("oldObject", shared_of(old_key));
}

/// The admission request as CEL sees it; empty optional fields are absent (§4.2).
pub(crate) fn request_value(
    resource: &Resource,
    request: &Request,
    op: Operation,
    objects: Option<(&Value, &Value)>,
    sentinel_user: bool,
) -> Value {
    let (group, version) = resource.group_version();
    let gvk = map_of([
        ("group", string(group)),
        ("version", string(version)),
        ("kind", string(&resource.kind)),
    ]);
    let gvr = map_of([
        ("group", string(group)),
        ("version", string(version)),
        (
            "resource",
            string(&crate::cel::context::resource_name(group, &resource.kind)),
        ),
    ]);
    let mut user: Vec<(&str, Value)> = Vec::new();
    match &request.user_info {
        Some(u) => {
            if !u.username.is_empty() {
                user.push(("username", string(&u.username)));
            }
            if !u.uid.is_empty() {
                user.push(("uid", string(&u.uid)));
            }
            if !u.groups.is_empty() {
                user.push(("groups", strings(u.groups.iter().map(String::as_str))));
            }
            if !u.extra.is_empty() {
                let extra = u
                    .extra
                    .iter()
                    .map(|(k, v)| (k.as_str(), strings(v.iter().map(String::as_str))));
                user.push(("extra", map_of(extra)));
            }
        }
        None if sentinel_user => {
            user.push(("username", string("system:kyverno:background-scan")));
            user.push(("groups", strings(["system:authenticated"])));
        }
        None => {}
    }
    let mut fields: Vec<(&str, Value)> = vec![
        ("uid", string("")),
        ("kind", gvk.clone()),
        ("resource", gvr.clone()),
        ("requestKind", gvk),
        ("requestResource", gvr),
        ("operation", string(op.as_str())),
        ("userInfo", map_of(user)),
    ];
    if !resource.name.is_empty() {
        fields.push(("name", string(&resource.name)));
    }
    if !resource.namespace.is_empty() {
        fields.push(("namespace", string(&resource.namespace)));
    }
    if let Some((object, old)) = objects {
        if *object != Value::Null {
            fields.push(("object", object.clone()));
        }
        if *old != Value::Null {
            fields.push(("oldObject", old.clone()));
        }
    }
    map_of(fields)
}
