//! A test's mocked external data (Kyverno 1.19 `apiCallResponses` and
//! `globalContextEntries`, `cmd/cli/kubectl-kyverno/apis/v1alpha1/test.go`), checked as the
//! CLI checks them (`ValidateAPICallResponses`, `ValidateGlobalContextEntries`).
//!
//! The global entries are kept resolved (data after `fieldPath`, or the map of projections):
//! resolving needs JMESPath, a layer above this one, so the caller resolves them
//! ([`GlobalSource`] is what the test file says, [`Globals`] what the engine reads).

use std::collections::BTreeMap;

use crate::yaml::{Node, Value};

/// One mocked response.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiResponse {
    /// The status code (`0` in the file reads as 200).
    pub status: u16,
    pub body: Node,
}

/// `apiCallResponses`, indexed as the CLI indexes them: `METHOD:url` when a method is
/// given, else `url` (the `url` or `urlPath` written).
#[derive(Clone, Debug, Default)]
pub struct ApiCalls {
    index: BTreeMap<String, ApiResponse>,
}

impl ApiCalls {
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Reads the `apiCallResponses` list. `Err` names the entry and what is wrong with it.
    pub(crate) fn from_list(list: &[Node]) -> Result<Self, String> {
        let mut index = BTreeMap::new();
        for (i, e) in list.iter().enumerate() {
            let s = |k: &str| e.get(k).and_then(Node::as_str).unwrap_or("").trim();
            let (url, url_path) = (s("url"), s("urlPath"));
            let resolved = match (url.is_empty(), url_path.is_empty()) {
                (true, true) => {
                    return Err(format!(
                        "apiCallResponses[{i}]: either url or urlPath is required"
                    ));
                }
                (false, false) => {
                    return Err(format!(
                        "apiCallResponses[{i}]: url and urlPath are mutually exclusive"
                    ));
                }
                (false, true) => {
                    let host = url
                        .strip_prefix("https://")
                        .or_else(|| url.strip_prefix("http://"));
                    match host {
                        None => {
                            return Err(format!(
                                "apiCallResponses[{i}]: url {url:?} must be an absolute https/http URL"
                            ));
                        }
                        Some(h) if h.split(['/', '?', '#']).next().is_none_or(str::is_empty) => {
                            return Err(format!(
                                "apiCallResponses[{i}]: url {url:?} has scheme but no host"
                            ));
                        }
                        Some(_) => url,
                    }
                }
                (true, false) => {
                    if !url_path.starts_with('/') {
                        return Err(format!(
                            "apiCallResponses[{i}]: urlPath {url_path:?} must be an absolute path starting with '/'"
                        ));
                    }
                    url_path
                }
            };
            let method = s("method").to_ascii_uppercase();
            if !matches!(method.as_str(), "" | "GET" | "POST") {
                return Err(format!("apiCallResponses[{i}]: method must be GET or POST"));
            }
            let response = e.get("response");
            let body = response.and_then(|r| r.get("body"));
            let body = match body {
                None => {
                    return Err(format!(
                        "apiCallResponses[{i}] {resolved:?}: response.body is required"
                    ));
                }
                Some(b) if b.is_null() => {
                    return Err(format!(
                        "apiCallResponses[{i}] {resolved:?}: response.body is required"
                    ));
                }
                Some(b) if !matches!(b.value, Value::Map(_)) => {
                    return Err(format!(
                        "apiCallResponses[{i}] {resolved:?}: response.body must be a JSON object"
                    ));
                }
                Some(b) => b.clone(),
            };
            let status = match response.and_then(|r| r.get("statusCode")).map(|n| &n.value) {
                None | Some(Value::Null) => 200,
                Some(Value::Int(0)) => 200,
                Some(Value::Int(c)) if (100..=599).contains(c) => *c as u16,
                Some(Value::Int(c)) => {
                    return Err(format!(
                        "apiCallResponses[{i}] {resolved:?}: statusCode {c} must be between 100 and 599"
                    ));
                }
                Some(_) => {
                    return Err(format!(
                        "apiCallResponses[{i}] {resolved:?}: statusCode must be an integer"
                    ));
                }
            };
            let key = if method.is_empty() {
                resolved.to_owned()
            } else {
                format!("{method}:{resolved}")
            };
            if index.contains_key(&key) {
                return Err(format!(
                    "apiCallResponses: duplicate entry for {resolved:?} (key {key:?}) — each method+url combination must be unique"
                ));
            }
            index.insert(key, ApiResponse { status, body });
        }
        Ok(Self { index })
    }

    /// The mock for `method` (empty: GET) and `url`: `METHOD:url` first, then `url`.
    pub fn lookup(&self, method: &str, url: &str) -> Option<&ApiResponse> {
        let method = if method.is_empty() {
            "GET".to_owned()
        } else {
            method.to_ascii_uppercase()
        };
        self.index
            .get(&format!("{method}:{url}"))
            .or_else(|| self.index.get(url))
    }
}

/// One `globalContextEntries` item as written.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalSource {
    pub name: String,
    /// `data` (absent or null: `None`).
    pub data: Option<Node>,
    /// `resources`, and the documents of `resourceFiles` (read by the caller), as one list.
    pub resources: Option<Vec<Node>>,
    pub field_path: String,
    /// `projections`: (name, JMESPath) pairs.
    pub projections: Vec<(String, String)>,
}

impl GlobalSource {
    /// Reads and checks one entry; `resource_files` are the paths the caller must read and
    /// append to `resources`.
    pub(crate) fn from_node(e: &Node) -> Result<(Self, Vec<String>), String> {
        let s = |k: &str| {
            e.get(k)
                .and_then(Node::as_str)
                .unwrap_or("")
                .trim()
                .to_owned()
        };
        let name = s("name");
        if name.is_empty() {
            return Err("globalContextEntries: name is required".to_owned());
        }
        let mut projections = Vec::new();
        for p in e.get("projections").and_then(Node::as_seq).unwrap_or(&[]) {
            let ps = |k: &str| {
                p.get(k)
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .trim()
                    .to_owned()
            };
            let (pn, pp) = (ps("name"), ps("path"));
            if pn.is_empty() {
                return Err(format!(
                    "globalContextEntries entry {name:?}: projection name is required"
                ));
            }
            if pp.is_empty() {
                return Err(format!(
                    "globalContextEntries entry {name:?} projection {pn:?}: path is required"
                ));
            }
            projections.push((pn, pp));
        }
        let data = e.get("data").filter(|d| !d.is_null()).cloned();
        let resources = e
            .get("resources")
            .map(|r| r.as_seq().unwrap_or(&[]).to_vec());
        let files: Option<Vec<String>> = e.get("resourceFiles").map(Node::str_items);
        let sources = [data.is_some(), resources.is_some(), files.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if sources > 1 {
            return Err(format!(
                "globalContextEntries entry {name:?}: data, resources and resourceFiles are mutually exclusive"
            ));
        }
        if data.is_none() && resources.is_none() && files.is_none() && !projections.is_empty() {
            return Err(format!(
                "globalContextEntries {name:?}: data is required when projections are set"
            ));
        }
        let resources = match (&files, resources) {
            (Some(_), _) => Some(Vec::new()),
            (None, r) => r,
        };
        Ok((
            Self {
                name,
                data,
                resources,
                field_path: s("fieldPath"),
                projections,
            },
            files.unwrap_or_default(),
        ))
    }
}

/// The resolved global context entries: name → value, or the error resolving it gave (an
/// entry that fails is an error when read, as the CLI's mock store keeps it).
#[derive(Clone, Debug, Default)]
pub struct Globals {
    entries: BTreeMap<String, Result<Node, String>>,
}

impl Globals {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn insert(&mut self, name: String, value: Result<Node, String>) {
        self.entries.insert(name, value);
    }

    /// `storeEntry.Get(projection)`: the value, or with a projection that key of it.
    /// `None` when no entry has the name.
    pub fn get(&self, name: &str, projection: &str) -> Option<Result<Node, String>> {
        let value = self.entries.get(name)?;
        Some(match value {
            Err(e) => Err(e.clone()),
            Ok(v) if projection.is_empty() => Ok(v.clone()),
            Ok(v) => match &v.value {
                Value::Map(m) => m.get(projection).cloned().ok_or_else(|| {
                    format!("global context mock: projection {projection:?} not found")
                }),
                _ => Err(format!(
                    "global context mock: projection {projection:?} requested but value is not an object"
                )),
            },
        })
    }
}
