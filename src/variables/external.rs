//! Cluster-backed context entries served offline (super::entries), as the Kyverno 1.19 CLI
//! serves them: `apiCall` from the test's `apiCallResponses` mocks
//! (`cmd/cli/kubectl-kyverno/store/contextloader.go`: loaded at once, non-2xx is an error),
//! else from the virtual cluster in `clusterResources` mode (`pkg/engine/apicall`, the fake
//! client's raw paths); `configMap` from the virtual cluster
//! (`pkg/engine/context/loaders/configmap.go`); `globalReference` from the mocked
//! `globalContextEntries` (`loaders/globalcontext.go`, `store/mock.go`).

use super::substitute::{substitute_at, substitute_str};
use super::{Context, VarError};
use crate::jmespath::{Expr, value};
use crate::yaml::{Node, Value};

fn field<'a>(n: &'a Node, path: &[&str]) -> &'a str {
    n.get_path(path).and_then(Node::as_str).unwrap_or("")
}

fn search(path: &str, data: &Node) -> Result<Node, String> {
    let expr = Expr::cached(path).map_err(|e| e.to_string())?;
    expr.search(data)
        .map(|v| v.into_owned())
        .map_err(|e| e.to_string())
}

/// Whether a cleaned path names a namespace (`^/api(s)?/.*?/namespaces/([^/]+)`): the
/// namespace, if so.
fn path_namespace(path: &str) -> Option<&str> {
    let rest = path
        .strip_prefix("/apis/")
        .or_else(|| path.strip_prefix("/api/"))?;
    let i = rest.find("/namespaces/")?;
    let ns = rest[i + "/namespaces/".len()..].split('/').next()?;
    (!ns.is_empty()).then_some(ns)
}

impl Context<'_> {
    /// An `apiCall` answered by a mock: substituted, looked up by `METHOD:url` then `url`
    /// (`service.url`, else `urlPath`), its `jmesPath` applied, and added at once. `false`
    /// when no mock answers it.
    pub(super) fn load_mocked_api_call(
        &mut self,
        name: &str,
        call: &Node,
    ) -> Result<bool, VarError> {
        if self.offline.api_calls.is_empty() {
            return Ok(false);
        }
        let call = substitute_at(call, self, "").map_err(|e| {
            VarError::new(format!(
                "failed to substitute variables in apiCall context entry {name:?}: {e}"
            ))
        })?;
        let url = match field(&call, &["service", "url"]) {
            "" => field(&call, &["urlPath"]),
            u => u,
        };
        if url.is_empty() {
            return Ok(false);
        }
        let offline = self.offline.clone();
        let Some(mock) = offline.api_calls.lookup(field(&call, &["method"]), url) else {
            return Ok(false);
        };
        if !(200..300).contains(&mock.status) {
            return Err(VarError::new(format!(
                "HTTP {} from apiCall mock for context entry {name:?} (v1 apiCall treats non-2xx as failure)",
                mock.status
            )));
        }
        let mut data = value::json_round_trip(&mock.body);
        let jp = field(&call, &["jmesPath"]);
        if !jp.is_empty() {
            data = search(jp, &data).map_err(|e| {
                VarError::new(format!(
                    "failed to apply JMESPath {jp:?} for context entry {name:?}: {e}"
                ))
            })?;
        }
        self.set_path(&[name], value::json_round_trip(&data));
        Ok(true)
    }

    /// An `apiCall` answered by the virtual cluster (`clusterResources` mode).
    pub(super) fn load_cluster_api_call(
        &mut self,
        name: &str,
        raw: &Node,
    ) -> Result<Node, VarError> {
        let url_path = field(raw, &["urlPath"]).to_owned();
        let call = substitute_at(raw, self, "").map_err(|e| {
            VarError::new(format!(
                "failed to substitute variables in context entry {name} {url_path}: {e}"
            ))
        })?;
        let path = field(&call, &["urlPath"]).to_owned();
        let method = match field(&call, &["method"]) {
            "" => "GET".to_owned(),
            m => m.to_owned(),
        };
        if !self.policy_namespace.is_empty() {
            match path_namespace(&path) {
                Some(ns) if ns == self.policy_namespace => {}
                Some(ns) => {
                    return Err(VarError::new(format!(
                        "path {path} refers to namespace {ns}, which is different from the policy namespace {}",
                        self.policy_namespace
                    )));
                }
                None => {
                    return Err(VarError::new(format!(
                        "path {path} does not contain a namespace segment, which is required for namespaced policies"
                    )));
                }
            }
        }
        let fetched = if path.is_empty() {
            let url = field(&call, &["service", "url"]);
            Err(format!(
                "failed to execute HTTP request for APICall {name}: {url} cannot be reached offline (mock it in apiCallResponses)"
            ))
        } else if method != "GET" {
            Err(format!(
                "failed to {method} resource with raw url: {path}: method {method} not supported for fake client"
            ))
        } else {
            self.offline
                .cluster
                .as_ref()
                .ok_or_else(|| "no cluster".to_owned())
                .and_then(|c| c.raw_get(&path))
                .map_err(|e| format!("failed to GET resource with raw url: {path}: {e}"))
        };
        let data = match fetched {
            Ok(d) => value::json_round_trip(&d),
            Err(e) => match raw.get("default").filter(|d| !d.is_null()) {
                // The default is stored as written, without the jmesPath.
                Some(d) => return Ok(value::json_round_trip(d)),
                None => return Err(VarError::new(e)),
            },
        };
        let jp_raw = field(raw, &["jmesPath"]);
        if jp_raw.is_empty() {
            return Ok(data);
        }
        let jp = match substitute_str(jp_raw, self, "") {
            Ok(Node {
                value: Value::Str(s),
                ..
            }) => s,
            Ok(other) => value::go_sprint(&other),
            Err(e) => {
                return Err(VarError::new(format!(
                    "failed to substitute variables in context entry {name} JMESPath {jp_raw}: {e}"
                )));
            }
        };
        search(&jp, &data)
            .map(|r| value::json_round_trip(&r))
            .map_err(|e| {
                VarError::new(format!(
                    "failed to apply JMESPath {jp} for context entry {name}: {e}"
                ))
            })
    }

    /// A `configMap` entry: `{data, metadata}` of the ConfigMap in the virtual cluster.
    pub(super) fn load_config_map(&mut self, name: &str, cm: &Node) -> Result<Node, VarError> {
        let fail = |e: String| {
            VarError::new(format!(
                "failed to retrieve config map for context entry {name}: {e}"
            ))
        };
        let read = |key: &str, ctx: &mut Self| -> Result<String, VarError> {
            let raw = field(cm, &[key]);
            match substitute_str(raw, ctx, "") {
                Ok(Node {
                    value: Value::Str(s),
                    ..
                }) => Ok(s),
                Ok(other) => Err(fail(format!(
                    "failed to substitute variables in context {name} configMap.{key} {raw}: expected string, got {}",
                    other.value.type_name()
                ))),
                Err(e) => Err(fail(format!(
                    "failed to substitute variables in context {name} configMap.{key} {raw}: {e}"
                ))),
            }
        };
        let cm_name = read("name", self)?;
        let mut ns = read("namespace", self)?;
        if ns.is_empty() {
            ns = if self.policy_namespace.is_empty() {
                "default".to_owned()
            } else {
                self.policy_namespace.clone()
            };
        }
        if !self.policy_namespace.is_empty() && ns != self.policy_namespace {
            return Err(fail(format!(
                "context entry {name}: configMap namespace {ns:?} is different from policy namespace {:?}",
                self.policy_namespace
            )));
        }
        let obj = self
            .offline
            .cluster
            .as_ref()
            .ok_or_else(|| fail("a ConfigmapResolver is required".to_owned()))?
            .config_map(&ns, &cm_name)
            .map_err(|e| fail(format!("failed to get configmap {ns}/{cm_name} : {e}")))?;
        // `ObjectMeta` marshals a zero creationTimestamp as null.
        let mut meta = obj
            .get("metadata")
            .cloned()
            .unwrap_or_else(|| value::map(Vec::new()));
        if let Value::Map(m) = &mut meta.value
            && !m.contains_key("creationTimestamp")
        {
            m.insert(
                "creationTimestamp".to_owned(),
                crate::source::Span::EMPTY,
                value::null(),
            );
        }
        let data = obj.get("data").cloned().unwrap_or_else(value::null);
        Ok(value::json_round_trip(&value::map(vec![
            ("data".to_owned(), data),
            ("metadata".to_owned(), meta),
        ])))
    }

    /// A `globalReference` entry: `name` (or `name.projection`) from the mocked entries,
    /// then its `jmesPath`.
    pub(super) fn load_global(&mut self, name: &str, g: &Node) -> Result<Node, VarError> {
        let fail = |e: String| {
            VarError::new(format!(
                "failed to marshal APICall data for context entry {name}: {e}"
            ))
        };
        let rc = substitute_at(g, self, "").map_err(|e| fail(e.to_string()))?;
        let full = field(&rc, &["name"]);
        let mut parts = full.split('.');
        let entry = parts.next().unwrap_or("");
        let projection = parts.next().unwrap_or("");
        let data = match self.offline.globals.get(entry, projection) {
            None => return Err(fail(format!("failed to fetch entry key={entry}"))),
            Some(r) => r.map_err(fail)?,
        };
        let data = value::json_round_trip(&data);
        let jp = field(&rc, &["jmesPath"]);
        if jp.is_empty() {
            return Ok(data);
        }
        search(jp, &data)
            .map(|r| value::json_round_trip(&r))
            .map_err(|e| {
                fail(format!(
                    "failed to apply JMESPath {jp} for context entry {name}: {e}"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cluster::mocks::{ApiCalls, Globals};
    use crate::cluster::{Cluster, Offline};
    use crate::request::Request;
    use crate::resource::Resource;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        Node::from_json(&v)
    }

    fn pod() -> Resource {
        let doc = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "team"}, "spec": {"containers": []}});
        Resource::from_document(node(doc), None, 0).unwrap()
    }

    fn request(cluster: bool, mocks: &[serde_json::Value]) -> Request {
        let mut c = Cluster::default();
        for o in [
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "team"}, "data": {"k": "v"}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "team"}}),
        ] {
            c.add(&node(o)).unwrap();
        }
        let list: Vec<Node> = mocks.iter().map(|m| node(m.clone())).collect();
        Request {
            offline: Arc::new(Offline {
                cluster: cluster.then(|| Arc::new(c)),
                api_calls: ApiCalls::from_list(&list).unwrap(),
                globals: Globals::default(),
                objects: None,
            }),
            ..Request::default()
        }
    }

    fn load(
        req: &Request,
        policy_ns: &str,
        entries: serde_json::Value,
        query: &str,
    ) -> Result<serde_json::Value, String> {
        let res = pod();
        let mut ctx = Context::for_resource(&res, req);
        ctx.set_policy_namespace(policy_ns);
        ctx.add_context_entries(&node(entries), &Default::default())
            .map_err(|e| e.message)?;
        ctx.query(query).map(|n| n.to_json()).map_err(|e| e.message)
    }

    #[test]
    fn cluster_api_calls_get_list_default_and_refuse_other_methods() {
        let req = request(true, &[]);
        let get = json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/namespaces/{{request.namespace}}/pods/q", "jmesPath": "metadata.name"}}]);
        assert_eq!(load(&req, "", get, "x"), Ok(json!("q")));
        let missing =
            json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/namespaces/team/pods/zz"}}]);
        let e = load(&req, "", missing, "x").unwrap_err();
        assert!(
            e.contains("failed to GET resource with raw url: /api/v1/namespaces/team/pods/zz"),
            "{e}"
        );
        assert!(e.contains("pods \"zz\" not found"), "{e}");
        let default = json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/namespaces/team/pods/zz", "default": {"d": 1}, "jmesPath": "ignored"}}]);
        assert_eq!(load(&req, "", default, "x.d"), Ok(json!(1.0)));
        let post = json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/pods", "method": "POST"}}]);
        assert!(
            load(&req, "", post, "x")
                .unwrap_err()
                .contains("method POST not supported")
        );
        // A namespaced policy stays in its namespace.
        let other =
            json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/namespaces/kube-system/pods"}}]);
        let e = load(&req, "team", other, "x").unwrap_err();
        assert!(
            e.contains("different from the policy namespace team"),
            "{e}"
        );
        let all = json!([{"name": "x", "apiCall": {"urlPath": "/api/v1/pods"}}]);
        assert!(
            load(&req, "team", all, "x")
                .unwrap_err()
                .contains("does not contain a namespace segment")
        );
    }

    #[test]
    fn config_maps_read_data_and_metadata() {
        let req = request(true, &[]);
        let cm = json!([{"name": "c", "configMap": {"name": "cm", "namespace": "team"}}]);
        assert_eq!(load(&req, "", cm.clone(), "c.data.k"), Ok(json!("v")));
        assert_eq!(
            load(&req, "", cm, "c.metadata.creationTimestamp"),
            Ok(json!(null))
        );
        // No namespace: `default` for a ClusterPolicy, where there is no such ConfigMap.
        let bare = json!([{"name": "c", "configMap": {"name": "cm"}}]);
        let e = load(&req, "", bare.clone(), "c").unwrap_err();
        assert!(e.contains("failed to get configmap default/cm"), "{e}");
        // A namespaced policy's own namespace.
        assert_eq!(load(&req, "team", bare, "c.data.k"), Ok(json!("v")));
        // Without a cluster the entry is not loaded at all.
        let cm = json!([{"name": "c", "configMap": {"name": "cm", "namespace": "team"}}]);
        let e = load(&request(false, &[]), "", cm, "c").unwrap_err();
        assert!(e.contains("Unknown key \"c\""), "{e}");
    }

    #[test]
    fn mocked_api_calls_load_at_once() {
        let mocks = [
            json!({"url": "https://svc.example/v", "response": {"body": {"items": [1, 2]}}}),
            json!({"urlPath": "/bad", "response": {"statusCode": 500, "body": {}}}),
        ];
        let req = request(false, &mocks);
        let svc = json!([{"name": "s", "apiCall": {"service": {"url": "https://svc.example/v"}, "jmesPath": "items | length(@)"}}]);
        assert_eq!(load(&req, "", svc, "s"), Ok(json!(2.0)));
        // A non-2xx mock fails while the entries load, before any query.
        let bad = json!([{"name": "b", "apiCall": {"urlPath": "/bad"}}]);
        let e = load(&req, "", bad, "`1`").unwrap_err();
        assert!(
            e.contains("HTTP 500 from apiCall mock for context entry \"b\""),
            "{e}"
        );
    }
}
