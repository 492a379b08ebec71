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
