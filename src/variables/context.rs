//! The evaluation context (validate.md §11.6): one JSON document plus pending context
//! entries, with checkpoints for foreach (`Checkpoint`/`Restore` upstream).

use std::borrow::Cow;

use super::VarError;
use super::checkpoint::{Mark, Undo};
use super::entries::Pending;
use super::image::may_read_images;
use crate::jmespath::{Expr, Lent, value};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::source::Span;
use crate::yaml::{Map, Node, Value};

#[derive(Clone, Debug)]
pub struct Context<'r> {
    pub(super) root: Node,
    /// `request.object` / `request.oldObject`: the resource, lent instead of copied into
    /// `root` (a copy per resource was the largest cost of building a context,
    /// docs/PERFORMANCE.md). Queries see them through [`Lent`]; a query that could see the
    /// `request` map whole, and any change below them, first copies them in
    /// ([`Context::materialize_objects`]). An entry `root` holds shadows the lent one.
    pub(super) object: Option<&'r Node>,
    pub(super) old_object: Option<&'r Node>,
    /// Top-level variables lent the same way: foreach `element`/`element<n>` taken from the
    /// resource. A key is here or in `root`, never both; a change to one is made in `root`.
    pub(super) lent_top: Vec<(String, &'r Node)>,
    pub(super) operation: Operation,
    pub(super) pending: Vec<Pending>,
    /// The level and sequence number of the context entry being loaded, while its first
    /// queries run (`deferredLoaders.level`/`index` upstream, super::entries).
    pub(super) loading: Option<(usize, u64)>,
    /// The sequence number the next registered context entry gets (declaration order).
    pub(super) next_seq: u64,
    /// Why `images` could not be built (an unparsable image), reported when queried.
    pub(super) images_error: Option<String>,
    /// The kind whose `images` map is still to be built from `request.object` (built on the
    /// first query that may read it, or before `request`/`images` change): most rules never
    /// look at `images`, and parsing image references is costly (docs/PERFORMANCE.md).
    pub(super) images_pending: Option<String>,
    /// Open checkpoints and the changes since the first one (super::checkpoint).
    pub(super) marks: Vec<Mark<'r>>,
    pub(super) undo: Vec<Undo>,
    /// What cluster-backed context entries are served from (the request's, super::entries).
    pub(super) offline: std::sync::Arc<crate::cluster::Offline>,
    /// The namespace of a namespaced policy: its apiCall paths and ConfigMaps stay in it.
    pub(super) policy_namespace: String,
}

impl<'r> Context<'r> {
    /// A context over an arbitrary document (tests, values).
    pub fn from_root(root: Node) -> Self {
        let root = if matches!(root.value, Value::Map(_)) {
            root
        } else {
            value::node(Value::Map(Map::new()))
        };
        Self {
            root,
            object: None,
            old_object: None,
            lent_top: Vec::new(),
            operation: Operation::Create,
            pending: Vec::new(),
            loading: None,
            next_seq: 0,
            images_error: None,
            images_pending: None,
            marks: Vec::new(),
            undo: Vec::new(),
            offline: Default::default(),
            policy_namespace: String::new(),
        }
    }

    /// The CLI's context for one resource (§11.6): `request.object` (or `oldObject` for
    /// DELETE; for UPDATE also `oldObject`: the request's old object, else the resource
    /// itself), `request.operation`, `request.namespace`, user info and service account when
    /// a user is given, and `images`.
    pub fn for_resource(resource: &'r Resource, request: &Request) -> Self {
        let mut ctx = Self::from_root(value::map(Vec::new()));
        ctx.operation = request.operation;
        ctx.offline = request.offline.clone();
        let obj = Some(&resource.root);
        let namespace = if request.operation == Operation::Delete {
            String::new()
        } else {
            resource.namespace.clone()
        };
        let mut req = vec![(
            "operation".to_owned(),
            value::string(request.operation.as_str()),
        )];
        req.push(("namespace".to_owned(), value::string(namespace)));
        if let Some(user) = &request.user_info {
            // RequestInfo / UserInfo fields are `omitempty`.
            let strings = |v: &[String]| value::seq(v.iter().map(value::string).collect());
            if !user.roles.is_empty() {
                req.push(("roles".to_owned(), strings(&user.roles)));
            }
            if !user.cluster_roles.is_empty() {
                req.push(("clusterRoles".to_owned(), strings(&user.cluster_roles)));
            }
            let mut info = Vec::new();
            if !user.username.is_empty() {
                info.push(("username".to_owned(), value::string(&user.username)));
            }
            if !user.uid.is_empty() {
                info.push(("uid".to_owned(), value::string(&user.uid)));
            }
            if !user.groups.is_empty() {
                info.push(("groups".to_owned(), strings(&user.groups)));
            }
            if !user.extra.is_empty() {
                let extra = user
                    .extra
                    .iter()
                    .map(|(k, v)| (k.clone(), strings(v)))
                    .collect();
                info.push(("extra".to_owned(), value::map(extra)));
            }
            req.push(("userInfo".to_owned(), value::map(info)));
        }
        ctx.set_path(&["request"], value::map(req));
        // Lent once `request` is in place (setting `request` drops lent objects).
        match request.operation {
            Operation::Delete => ctx.old_object = obj,
            Operation::Update => match &request.old_object {
                // The previous revision is copied in: it does not live as long as the
                // resource (it is seldom given, and then only for changed resources).
                Some(old) => {
                    ctx.object = obj;
                    ctx.set_path(&["request", "oldObject"], old.root.clone());
                }
                None => (ctx.object, ctx.old_object) = (obj, obj),
            },
            _ => ctx.object = obj,
        }
        if let Some(user) = &request.user_info {
            let (name, ns) = service_account(&user.username);
            ctx.set_path(&["serviceAccountName"], value::string(name));
            ctx.set_path(&["serviceAccountNamespace"], value::string(ns));
        }
        if super::image::has_images(&resource.kind) {
            ctx.images_pending = Some(resource.kind.clone());
        }
        ctx
    }

    pub fn root(&self) -> &Node {
        &self.root
    }

    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// The namespace of the namespaced policy whose rule this context serves (empty for a
    /// cluster-wide one): its `apiCall` paths and `configMap` entries must stay inside it.
    pub(crate) fn set_policy_namespace(&mut self, namespace: &str) {
        namespace.clone_into(&mut self.policy_namespace);
    }

    #[cfg(test)]
    pub(crate) fn set_operation(&mut self, op: Operation) {
        self.operation = op;
        self.set_path(&["request", "operation"], value::string(op.as_str()));
    }

    /// Sets a value at a path of map keys, creating maps on the way (replacing non-maps).
    pub(crate) fn set_path(&mut self, path: &[&str], v: Node) {
        if self.images_pending.is_some() && matches!(path.first(), Some(&("request" | "images"))) {
            self.materialize_images();
        }
        match path {
            // Replacing `request` (or the root): the lent objects go with the old one.
            [] | ["request"] => {
                self.materialize_objects();
                (self.object, self.old_object) = (None, None);
                if path.is_empty() {
                    self.materialize_top();
                }
            }
            // A change inside a lent object is made to a copy.
            ["request", "object" | "oldObject", _, ..] => self.materialize_objects(),
            [key, _, ..] => {
                if let Some(i) = self.lent_top.iter().position(|(k, _)| k == key) {
                    let (k, v) = self.lent_top.remove(i);
                    self.set_top(&k, v.clone());
                }
            }
            _ => {}
        }
        if let [key] = path {
            return self.set_top(key, v);
        }
        self.log_before(path);
        fn go(node: &mut Node, path: &[&str], v: Node) {
            let Some((first, rest)) = path.split_first() else {
                *node = v;
                return;
            };
            if !matches!(node.value, Value::Map(_)) {
                node.value = Value::Map(Map::new());
            }
            if let Value::Map(m) = &mut node.value {
                if !m.contains_key(first) {
                    m.insert(
                        (*first).to_owned(),
                        crate::source::Span::EMPTY,
                        value::map(Vec::new()),
                    );
                }
                if let Some(child) = m.get_mut(first) {
                    go(child, rest, v);
                }
            }
        }
        go(&mut self.root, path, v);
    }

    /// A values-file variable (`a.b.c: v`, §11.6): the key is split on `.` with CSV-style
    /// `"` quoting; numbers become floats (JSON round trip).
    pub(crate) fn set_variable(&mut self, dotted: &str, v: &Node) {
        let fields = split_key(dotted);
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        self.set_path(&refs, value::json_round_trip(v));
    }

    /// Sets the foreach element variables (§10): `element`, `element<n>`, `elementIndex`,
    /// `elementIndex<n>` (the indices are Go `int64`, i.e. `Int`).
    pub(crate) fn add_element(&mut self, element: &Node, index: usize, nesting: usize) {
        self.set_path(&["element"], element.clone());
        self.set_path(&[&format!("element{nesting}")], element.clone());
        self.set_element_index(index, nesting);
    }

    /// [`Context::add_element`] for an element of the resource (a list [`Context::query_lent`]
    /// borrowed): `element` and `element<n>` are lent, not copied.
    pub(crate) fn lend_element(&mut self, element: &'r Node, index: usize, nesting: usize) {
        for key in ["element".to_owned(), format!("element{nesting}")] {
            if self.root.get(&key).is_some() {
                self.set_path(&[&key], element.clone());
            } else if let Some(e) = self.lent_top.iter_mut().find(|(k, _)| *k == key) {
                e.1 = element;
            } else {
                self.lent_top.push((key, element));
            }
        }
        self.set_element_index(index, nesting);
    }

    /// `elementIndex` and `elementIndex<n>` (Go `int64`, i.e. `Int`).
    fn set_element_index(&mut self, index: usize, nesting: usize) {
        let idx = value::node(Value::Int(index as i64));
        self.set_path(&["elementIndex"], idx.clone());
        self.set_path(&[&format!("elementIndex{nesting}")], idx);
    }

    /// `ctx.Query` upstream: loads pending entries the query mentions, compiles, searches.
    /// Compile errors read `incorrect query <q>: <err>`, search errors
    /// `JMESPath query failed: <err>`.
    pub fn query(&mut self, query: &str) -> Result<Node, VarError> {
        let expr = self.prepare(query)?;
        let lent = Lent {
            parent: self.root.get("request"),
            fields: [("object", self.object), ("oldObject", self.old_object)],
            root: Some(&self.root),
            top: &self.lent_top,
        };
        expr.search_lent(&self.root, &lent)
            .map(|v| v.into_owned())
            .map_err(|e| VarError::new(format!("JMESPath query failed: {e}")))
    }

    /// [`Context::query`], borrowing the result when it is a part of the lent resource
    /// (`request.object.spec.containers`): a foreach list is then not copied.
    pub(crate) fn query_lent(&mut self, query: &str) -> Result<Cow<'r, Node>, VarError> {
        let expr = self.prepare(query)?;
        let lent = |chain: &[&str]| -> Option<&'r Node> {
            match chain {
                ["request", "object", ..]
                    if self.root.get_path(&["request", "object"]).is_none() =>
                {
                    self.object
                }
                ["request", "oldObject", ..]
                    if self.root.get_path(&["request", "oldObject"]).is_none() =>
                {
                    self.old_object
                }
                [key, ..] => self
                    .lent_top
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| *v),
                [] => None,
            }
        };
        if let Some(chain) = expr.field_chain()
            && let Some(object) = lent(&chain)
        {
            let rest = if chain[0] == "request" {
                &chain[2..]
            } else {
                &chain[1..]
            };
            // The interpreter's walk of a field path: a missing key in a map is an error,
            // a field of anything else is null.
            let mut node: &'r Node = object;
            for k in rest {
                node = match &node.value {
                    Value::Map(m) => m.get(k).ok_or_else(|| {
                        VarError::new(format!(
                            "JMESPath query failed: {}",
                            crate::jmespath::Error::NotFound((*k).to_owned())
                        ))
                    })?,
                    _ => return Ok(Cow::Owned(value::null())),
                };
            }
            return Ok(Cow::Borrowed(node));
        }
        self.query(query).map(Cow::Owned)
    }

    /// What every query does before searching: pending `images` and context entries the
    /// query may read, then compiling (cached); a query that may see `request` whole first
    /// gets the lent objects copied in.
    fn prepare(&mut self, query: &str) -> Result<std::rc::Rc<Expr>, VarError> {
        if self.images_pending.is_some() && may_read_images(query) {
            self.materialize_images();
        }
        self.load_pending(query)?;
        let q = query.trim();
        if q.is_empty() {
            return Err(VarError::new("invalid query (nil)"));
        }
        if let Some(e) = &self.images_error
            && super::entries::mentions(q, "images")
        {
            return Err(VarError::new(e.clone()));
        }
        let expr = match Expr::cached(q) {
            Ok(e) => e,
            Err(crate::jmespath::Error::UnknownFunction(n)) => {
                return Err(VarError::new(format!(
                    "JMESPath query failed: unknown function: {n}"
                )));
            }
            Err(e) => return Err(VarError::new(format!("incorrect query {q}: {e}"))),
        };
        let lending =
            self.object.is_some() || self.old_object.is_some() || !self.lent_top.is_empty();
        if lending && expr.exposes("request") {
            self.materialize_objects();
            self.materialize_top();
        }
        Ok(expr)
    }
}

impl Context<'_> {
    /// `request.object`, else `request.oldObject`, whether held or lent.
    pub(super) fn object(&self) -> Option<&Node> {
        let held = |key| self.root.get_path(&["request", key]);
        held("object")
            .or(self.object)
            .or_else(|| held("oldObject"))
            .or(self.old_object)
    }

    /// Copies the lent objects into `root`, where [`Context::for_resource`] used to put them
    /// (after `operation`, `object` before `oldObject`), unless `root` holds them already. Not
    /// logged for checkpoints: a restore that brings back an older `request` leaves the lent
    /// ones visible, the same values.
    pub(super) fn materialize_objects(&mut self) {
        for (key, lent) in [("object", self.object), ("oldObject", self.old_object)] {
            let Some(lent) = lent else { continue };
            let Value::Map(root) = &mut self.root.value else {
                return;
            };
            let Some(Value::Map(req)) = root.get_mut("request").map(|r| &mut r.value) else {
                return;
            };
            if req.contains_key(key) {
                continue;
            }
            let after = if key == "oldObject" && req.contains_key("object") {
                "object"
            } else {
                "operation"
            };
            let at = req.keys().position(|k| k == after).map_or(0, |i| i + 1);
            req.insert_at(at, key.to_owned(), Span::EMPTY, lent.clone());
        }
    }

    /// Copies the lent top-level variables into `root` (logged, like any change).
    pub(super) fn materialize_top(&mut self) {
        for (k, v) in std::mem::take(&mut self.lent_top) {
            self.set_top(&k, v.clone());
        }
    }
}

/// `system:serviceaccount:<ns>:<name>` → (name, ns); anything else → ("", "").
fn service_account(username: &str) -> (String, String) {
    const PREFIX: &str = "system:serviceaccount:";
    let sa = if username.len() <= PREFIX.len() {
        ""
    } else {
        username.get(PREFIX.len()..).unwrap_or("")
    };
    let groups: Vec<&str> = sa.split(':').collect();
    if groups.len() >= 2 {
        (groups[1].to_owned(), groups[0].to_owned())
    } else {
        (String::new(), String::new())
    }
}

/// `csv.Reader` with `Comma = '.'`: fields split on `.`, `"` quotes a field.
fn split_key(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::UserInfo;
    use crate::variables::substitute_str;
    use std::collections::BTreeMap;

    fn pod(ns: bool) -> Resource {
        let mut doc = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
        if ns {
            doc["metadata"]["namespace"] = serde_json::json!("team");
        }
        Resource::from_document(Node::from_json(&doc), None, 0).unwrap()
    }

    fn q(ctx: &mut Context, e: &str) -> Result<serde_json::Value, VarError> {
        ctx.query(e).map(|n| n.to_json())
    }

    #[test]
    fn builtin_context_for_the_cli() {
        let res = pod(false);
        let mut ctx = Context::for_resource(&res, &Request::default());
        assert_eq!(q(&mut ctx, "request.operation").unwrap(), "CREATE");
        assert_eq!(q(&mut ctx, "request.namespace").unwrap(), "default");
        assert_eq!(q(&mut ctx, "request.object.metadata.name").unwrap(), "p");
        assert!(q(&mut ctx, "request.oldObject").is_err());
        // H13.
        assert_eq!(
            q(&mut ctx, "images.containers.web.registry").unwrap(),
            "docker.io"
        );
        assert_eq!(q(&mut ctx, "images.containers.web.path").unwrap(), "nginx");
        assert_eq!(q(&mut ctx, "images.containers.web.tag").unwrap(), "latest");
        assert_eq!(
            q(&mut ctx, "images.containers.web.reference").unwrap(),
            "docker.io/nginx:latest"
        );
        assert!(
            q(&mut ctx, "images.initContainers")
                .unwrap_err()
                .message
                .contains("Unknown key \"initContainers\"")
        );
        // H15.
        assert!(q(&mut ctx, "request.userInfo").is_err());
        assert!(q(&mut ctx, "serviceAccountName").is_err());
    }

    #[test]
    fn update_delete_and_users() {
        let req = Request {
            operation: Operation::Delete,
            user_info: Some(UserInfo {
                username: "system:serviceaccount:ns1:sa1".to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let res = pod(true);
        let mut ctx = Context::for_resource(&res, &req);
        assert_eq!(q(&mut ctx, "request.namespace").unwrap(), "");
        assert_eq!(
            q(&mut ctx, "request.oldObject.metadata.namespace").unwrap(),
            "team"
        );
        // DELETE: request.object in a variable reads request.oldObject.
        let v = substitute_str("{{ request.object.metadata.name }}", &mut ctx, "").unwrap();
        assert_eq!(v.as_str(), Some("p"));
        assert_eq!(q(&mut ctx, "serviceAccountName").unwrap(), "sa1");
        assert_eq!(q(&mut ctx, "serviceAccountNamespace").unwrap(), "ns1");
        assert_eq!(
            q(&mut ctx, "request.userInfo.username").unwrap(),
            "system:serviceaccount:ns1:sa1"
        );
        let req = Request {
            operation: Operation::Update,
            ..Default::default()
        };
        let res = pod(true);
        let mut ctx = Context::for_resource(&res, &req);
        assert_eq!(q(&mut ctx, "request.oldObject.metadata.name").unwrap(), "p");
        assert_eq!(q(&mut ctx, "request.object.metadata.name").unwrap(), "p");
    }

    /// An UPDATE with a previous revision: `request.oldObject` is it, `request.object` the
    /// resource.
    #[test]
    fn update_old_object_is_the_previous_revision() {
        let res = pod(true);
        let mut old = pod(true);
        old.root = value::map(vec![("kind".to_owned(), value::string("Old"))]);
        let req = Request {
            operation: Operation::Update,
            old_object: Some(std::sync::Arc::new(old)),
            ..Default::default()
        };
        let mut ctx = Context::for_resource(&res, &req);
        assert_eq!(q(&mut ctx, "request.oldObject.kind").unwrap(), "Old");
        assert_eq!(q(&mut ctx, "request.object.metadata.name").unwrap(), "p");
        assert_eq!(q(&mut ctx, "request.operation").unwrap(), "UPDATE");
    }

    #[test]
    fn lent_objects_read_as_copies_would() {
        let res = pod(true);
        let update = Request {
            operation: Operation::Update,
            ..Default::default()
        };
        let whole = serde_json::json!(["operation", "object", "oldObject", "namespace"]);
        // Looked up field by field, then seen whole (copied in where for_resource put them).
        let mut ctx = Context::for_resource(&res, &update);
        assert_eq!(
            q(&mut ctx, "request.oldObject.spec.containers[0].name").unwrap(),
            "web"
        );
        assert!(ctx.root.get_path(&["request", "object"]).is_none());
        assert_eq!(q(&mut ctx, "keys(request)").unwrap(), whole);
        assert_eq!(q(&mut ctx, "request.object.metadata.name").unwrap(), "p");
        // A checkpoint restored to a `request` logged before the copy: still readable.
        let mut ctx = Context::for_resource(&res, &update);
        ctx.checkpoint();
        ctx.set_operation(Operation::Create);
        assert_eq!(q(&mut ctx, "length(values(request))").unwrap(), 4.0);
        ctx.restore();
        assert_eq!(q(&mut ctx, "request.operation").unwrap(), "UPDATE");
        assert_eq!(
            q(&mut ctx, "request.object.metadata.namespace").unwrap(),
            "team"
        );
        assert_eq!(q(&mut ctx, "keys(@.request)").unwrap(), whole);
        // A change inside an object changes a copy; replacing `request` drops them.
        let mut ctx = Context::for_resource(&res, &Request::default());
        ctx.set_variable("request.object.metadata.name", &value::string("q"));
        assert_eq!(q(&mut ctx, "request.object.metadata.name").unwrap(), "q");
        assert_eq!(q(&mut ctx, "request.object.kind").unwrap(), "Pod");
        assert_eq!(
            res.root
                .get_path(&["metadata", "name"])
                .and_then(Node::as_str),
            Some("p")
        );
        ctx.set_path(&["request"], value::map(Vec::new()));
        assert!(q(&mut ctx, "request.object").is_err());
        // A shadowing `request.object` (mutate foreach) wins over the lent one.
        let mut ctx = Context::for_resource(&res, &Request::default());
        ctx.set_path(&["request", "object"], value::string("patched"));
        assert_eq!(q(&mut ctx, "request.object").unwrap(), "patched");
    }

    #[test]
    fn lent_elements_read_as_copies_would() {
        let res = pod(false);
        let mut ctx = Context::for_resource(&res, &Request::default());
        let list = ctx.query_lent("request.object.spec.containers").unwrap();
        let Cow::Borrowed(list) = list else {
            panic!("a field path into the resource is borrowed")
        };
        let web = &list.as_seq().unwrap()[0];
        ctx.checkpoint();
        ctx.lend_element(web, 0, 0);
        assert_eq!(q(&mut ctx, "element.image").unwrap(), "nginx");
        assert_eq!(q(&mut ctx, "element0.name").unwrap(), "web");
        assert_eq!(q(&mut ctx, "elementIndex0").unwrap(), serde_json::json!(0));
        // Nested lists read from an element are borrowed as well.
        assert!(matches!(
            ctx.query_lent("element.name"),
            Ok(Cow::Borrowed(_))
        ));
        // Seen whole: copied in (and undone by the next restore). The order of the root's
        // keys is not Kyverno's to keep (a Go map's).
        assert_eq!(
            q(&mut ctx, "sort(keys(@))").unwrap(),
            serde_json::json!([
                "element",
                "element0",
                "elementIndex",
                "elementIndex0",
                "images",
                "request"
            ])
        );
        assert_eq!(q(&mut ctx, "element.image").unwrap(), "nginx");
        ctx.restore();
        assert!(q(&mut ctx, "element").is_err());
        ctx.lend_element(web, 0, 0);
        // A change below an element is made to a copy; a new value replaces the lent one.
        ctx.set_path(&["element", "image"], value::string("redis"));
        assert_eq!(q(&mut ctx, "element.image").unwrap(), "redis");
        assert_eq!(q(&mut ctx, "element0.image").unwrap(), "nginx");
        ctx.set_path(&["element0"], value::string("x"));
        assert_eq!(q(&mut ctx, "element0").unwrap(), "x");
        ctx.reset();
        assert!(q(&mut ctx, "element0").is_err());
        assert_eq!(web.get("image").and_then(Node::as_str), Some("nginx"));
    }

    #[test]
    fn lent_lists_are_borrowed_with_the_query_errors() {
        let res = pod(false);
        let mut ctx = Context::for_resource(&res, &Request::default());
        let list = ctx.query_lent("request.object.spec.containers").unwrap();
        assert!(matches!(list, Cow::Borrowed(_)));
        assert_eq!(
            list.to_json(),
            q(&mut ctx, "request.object.spec.containers").unwrap()
        );
        let missing = ctx.query_lent("request.object.spec.volumes").unwrap_err();
        assert_eq!(
            missing,
            ctx.query("request.object.spec.volumes").unwrap_err()
        );
        assert!(missing.is_unknown_key());
        let below_scalar = ctx.query_lent("request.object.kind.x").unwrap();
        assert!(below_scalar.is_null());
        assert!(q(&mut ctx, "request.object.kind.x").unwrap().is_null());
        // Anything but a field path is searched as usual (and copied).
        let first = ctx.query_lent("request.object.spec.containers[0]").unwrap();
        assert!(matches!(first, Cow::Owned(_)));
        assert_eq!(first.get("name").and_then(Node::as_str), Some("web"));
    }

    #[test]
    fn elements_values_and_checkpoints() {
        let mut ctx = Context::from_root(Node::from_json(&serde_json::json!({})));
        ctx.set_variable("a.\"b.c\".d", &Node::from_json(&serde_json::json!(1)));
        assert_eq!(q(&mut ctx, "a.\"b.c\".d").unwrap(), serde_json::json!(1.0));
        ctx.checkpoint();
        ctx.add_element(&Node::from_json(&serde_json::json!({"name": "x"})), 2, 0);
        assert_eq!(q(&mut ctx, "element.name").unwrap(), "x");
        assert_eq!(q(&mut ctx, "element0.name").unwrap(), "x");
        // elementIndex is a Go int64: JSON-number comparisons do not equal it.
        assert_eq!(q(&mut ctx, "elementIndex == `2`").unwrap(), false);
        assert_eq!(
            substitute_str("i={{ elementIndex0 }}", &mut ctx, "")
                .unwrap()
                .as_str(),
            Some("i=2")
        );
        ctx.restore();
        assert!(q(&mut ctx, "element").is_err());
    }

    #[test]
    fn context_entries_are_lazy() {
        let res = pod(true);
        let mut ctx = Context::for_resource(&res, &Request::default());
        let entries = Node::from_json(&serde_json::json!([
            {"name": "broken", "variable": {"jmesPath": "request.object.nope"}},
            {"name": "ns", "variable": {"jmesPath": "request.object.metadata.namespace"}},
            {"name": "withDefault", "variable": {"jmesPath": "request.object.nope", "default": "dflt"}},
            {"name": "fromValue", "variable": {"value": {"k": ["{{ request.object.metadata.name }}"]}, "jmesPath": "k[0]"}},
            {"name": "literal", "variable": {"value": 3}},
            {"name": "nullish", "variable": {"jmesPath": "request.object.metadata.labels"}},
            {"name": "cm", "configMap": {"name": "c", "namespace": "default"}},
            {"name": "api", "apiCall": {"urlPath": "/x"}}
        ]));
        let mut external = BTreeMap::new();
        external.insert(
            "api".to_owned(),
            Node::from_json(&serde_json::json!({"items": [1]})),
        );
        ctx.add_context_entries(&entries, &external).unwrap();
        assert_eq!(q(&mut ctx, "ns").unwrap(), "team");
        assert_eq!(q(&mut ctx, "withDefault").unwrap(), "dflt");
        assert_eq!(q(&mut ctx, "fromValue").unwrap(), "p");
        assert_eq!(q(&mut ctx, "literal").unwrap(), serde_json::json!(3.0));
        assert_eq!(q(&mut ctx, "api.items[0]").unwrap(), serde_json::json!(1.0));
        // H5: a configMap without values is never loaded offline.
        assert!(
            q(&mut ctx, "cm.data")
                .unwrap_err()
                .message
                .contains("Unknown key \"cm\"")
        );
        let e = q(&mut ctx, "broken").unwrap_err().message;
        assert_eq!(
            e,
            "failed to apply jmespath request.object.nope to variable <nil>: JMESPath query failed: Unknown key \"nope\" in path"
        );
        let e = q(&mut ctx, "nullish").unwrap_err().message;
        assert!(e.contains("Unknown key \"labels\""), "{e}");
        let entries = Node::from_json(
            &serde_json::json!([{"name": "nil", "variable": {"value": null, "jmesPath": "request.object.metadata.annotations || `null`"}}]),
        );
        ctx.add_context_entries(&entries, &BTreeMap::new()).unwrap();
        assert_eq!(
            q(&mut ctx, "nil").unwrap_err().message,
            "failed to add context entry for variable nil since it evaluated to nil"
        );
    }

    #[test]
    fn keys_and_accounts() {
        assert_eq!(split_key("a.b.c"), ["a", "b", "c"]);
        assert_eq!(split_key(r#"a."b.c".d"#), ["a", "b.c", "d"]);
        assert_eq!(
            service_account("system:serviceaccount:ns1:sa1"),
            ("sa1".to_owned(), "ns1".to_owned())
        );
        assert_eq!(service_account("alice"), (String::new(), String::new()));
    }
}
