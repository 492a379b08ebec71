//! The simulated admission request around a resource: operation, user, namespace labels.
//! Offline these come from defaults, values files and userinfo files (cli-compat.md §5–7).

use std::collections::BTreeMap;
use std::sync::Arc;

pub mod values;

use crate::yaml::Node;
use values::Values;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Operation {
    #[default]
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "CREATE" => Some(Self::Create),
            "UPDATE" => Some(Self::Update),
            "DELETE" => Some(Self::Delete),
            "CONNECT" => Some(Self::Connect),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }
}

/// The requesting user (from a userinfo file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub username: String,
    pub groups: Vec<String>,
    /// `namespace:name` role keys.
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
}

/// Everything about the request that is not the resource itself.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub operation: Operation,
    /// Labels of namespaces, by namespace name (values file `namespaceSelector`).
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// `None` when no userinfo was given (match filters then ignore subjects/roles).
    pub user_info: Option<UserInfo>,
    /// Values injected into rule contexts (values file, `--set`).
    pub values: Arc<Values>,
    /// The cluster's Namespaces by name, as `kpol check` knows them (Namespace inputs, then
    /// the values file): CEL's `namespaceObject` for `validate.cel` and the CEL kinds.
    /// Empty in `kpol test`, where the Kyverno CLI reads only the values file.
    pub namespaces: Arc<BTreeMap<String, Node>>,
}

impl Request {
    /// The operation the matcher sees: CONNECT only changes variables (match.md §5.7).
    pub fn match_operation(&self) -> Operation {
        match self.operation {
            Operation::Connect => Operation::Create,
            op => op,
        }
    }
}
