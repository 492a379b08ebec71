//! The evaluation context (validate.md §11.6): one JSON document plus pending context
//! entries, with checkpoints for foreach (`Checkpoint`/`Restore` upstream).

use super::VarError;
use super::entries::Pending;
use crate::jmespath::{Expr, value};
use crate::request::{Operation, Request};
use crate::resource::Resource;
use crate::yaml::{Map, Node, Value};

#[derive(Clone, Debug)]
pub struct Context {
    pub(super) root: Node,
    pub(super) operation: Operation,
    pub(super) pending: Vec<Pending>,
    /// Why `images` could not be built (an unparsable image), reported when queried.
    images_error: Option<String>,
    checkpoints: Vec<(Node, Vec<Pending>)>,
}

impl Context {
    /// A context over an arbitrary document (tests, values).
    pub fn from_root(root: Node) -> Self {
        let root = if matches!(root.value, Value::Map(_)) {
            root
        } else {
            value::node(Value::Map(Map::new()))
        };
        Self {
            root,
            operation: Operation::Create,
            pending: Vec::new(),
            images_error: None,
            checkpoints: Vec::new(),
        }
    }

    /// The CLI's context for one resource (§11.6): `request.object` (or `oldObject` for
    /// DELETE, a copy for UPDATE), `request.operation`, `request.namespace`, user info and
    /// service account when a user is given, and `images`.
    pub fn for_resource(resource: &Resource, request: &Request) -> Self {
        let mut ctx = Self::from_root(value::map(Vec::new()));
        ctx.operation = request.operation;
        let obj = resource.root.clone();
        let namespace = if request.operation == Operation::Delete {
            String::new()
        } else {
            resource.namespace.clone()
        };
        let mut req = vec![(
            "operation".to_owned(),
            value::string(request.operation.as_str()),
        )];
        match request.operation {
            Operation::Delete => req.push(("oldObject".to_owned(), obj)),
            Operation::Update => {
                req.push(("object".to_owned(), obj.clone()));
                req.push(("oldObject".to_owned(), obj));
            }
            _ => req.push(("object".to_owned(), obj)),
        }
        req.push(("namespace".to_owned(), value::string(namespace)));
        if let Some(user) = &request.user_info {
            let strings = |v: &[String]| value::seq(v.iter().map(value::string).collect());
            req.push(("roles".to_owned(), strings(&user.roles)));
            req.push(("clusterRoles".to_owned(), strings(&user.cluster_roles)));
            req.push((
                "userInfo".to_owned(),
                value::map(vec![
                    ("username".to_owned(), value::string(&user.username)),
                    ("groups".to_owned(), strings(&user.groups)),
                ]),
            ));
        }
        ctx.set_path(&["request"], value::map(req));
        if let Some(user) = &request.user_info {
            let (name, ns) = service_account(&user.username);
            ctx.set_path(&["serviceAccountName"], value::string(name));
            ctx.set_path(&["serviceAccountNamespace"], value::string(ns));
        }
        match super::image::images_of(&resource.kind, &resource.root) {
            Ok(Some(images)) => ctx.set_path(&["images"], images),
            Ok(None) => {}
            Err(e) => ctx.images_error = Some(e),
        }
        ctx
    }

    pub fn root(&self) -> &Node {
        &self.root
    }

    pub fn operation(&self) -> Operation {
        self.operation
    }

    pub fn set_operation(&mut self, op: Operation) {
        self.operation = op;
        self.set_path(&["request", "operation"], value::string(op.as_str()));
    }

    /// Sets a value at a path of map keys, creating maps on the way (replacing non-maps).
    pub fn set_path(&mut self, path: &[&str], v: Node) {
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
    pub fn set_variable(&mut self, dotted: &str, v: &Node) {
        let fields = split_key(dotted);
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        self.set_path(&refs, value::json_round_trip(v));
    }

    /// Sets the foreach element variables (§10): `element`, `element<n>`, `elementIndex`,
    /// `elementIndex<n>` (the indices are Go `int64`, i.e. `Int`).
    pub fn add_element(&mut self, element: &Node, index: usize, nesting: usize) {
        let idx = value::node(Value::Int(index as i64));
        self.set_path(&["element"], element.clone());
        self.set_path(&[&format!("element{nesting}")], element.clone());
        self.set_path(&["elementIndex"], idx.clone());
        self.set_path(&[&format!("elementIndex{nesting}")], idx);
    }

    pub fn checkpoint(&mut self) {
        self.checkpoints
            .push((self.root.clone(), self.pending.clone()));
    }

    /// Back to the last checkpoint, which stays for the next restore.
    pub fn restore(&mut self) {
        if let Some((root, pending)) = self.checkpoints.last() {
            self.root = root.clone();
            self.pending = pending.clone();
        }
    }

    /// Back to the last checkpoint and drops it.
    pub fn reset(&mut self) {
        if let Some((root, pending)) = self.checkpoints.pop() {
            self.root = root;
            self.pending = pending;
        }
    }

    /// `ctx.Query` upstream: loads pending entries the query mentions, compiles, searches.
    /// Compile errors read `incorrect query <q>: <err>`, search errors
    /// `JMESPath query failed: <err>`.
    pub fn query(&mut self, query: &str) -> Result<Node, VarError> {
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
        let expr = match Expr::compile(q) {
            Ok(e) => e,
            Err(crate::jmespath::Error::UnknownFunction(n)) => {
                return Err(VarError::new(format!(
                    "JMESPath query failed: unknown function: {n}"
                )));
            }
            Err(e) => return Err(VarError::new(format!("incorrect query {q}: {e}"))),
        };
        expr.search(&self.root)
            .map(|v| v.into_owned())
            .map_err(|e| VarError::new(format!("JMESPath query failed: {e}")))
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
