//! Go `encoding/json` decoding rules over the YAML tree, for the pod decoder: `null` is
//! unset, and a value of the wrong JSON type is an error with Go's message
//! (`json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type
//! bool`).

use crate::yaml::{Map, Node, Value};

/// A decoding failure, with Go's `encoding/json` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DecodeError(pub(crate) String);

/// A JSON field path from the root (`spec.containers`), as Go's messages print it; a chain
/// of borrowed steps, written out only when a message names it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum GoPath<'a> {
    Root(&'a str),
    Field(&'a GoPath<'a>, &'a str),
}

impl std::fmt::Display for GoPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoPath::Root(p) => f.write_str(p),
            GoPath::Field(parent, key) => write!(f, "{parent}.{key}"),
        }
    }
}

/// Decoding position: Go's innermost struct type and the JSON field path from the root.
pub(crate) struct Cx<'a> {
    pub(crate) strukt: &'static str,
    pub(crate) path: GoPath<'a>,
}

impl<'a> Cx<'a> {
    pub(crate) fn err(&self, key: &str, n: &Node, go_type: &str) -> DecodeError {
        DecodeError(format!(
            "json: cannot unmarshal {} into Go struct field {}.{}.{key} of type {go_type}",
            json_value(n),
            self.strukt,
            self.path
        ))
    }

    /// The path of field `key` of this struct.
    pub(crate) fn sub<'s>(&'s self, key: &'s str) -> GoPath<'s> {
        GoPath::Field(&self.path, key)
    }

    pub(crate) fn bool(&self, m: &Map, key: &str) -> Result<Option<bool>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Bool(b) => Ok(Some(*b)),
                _ => Err(self.err(key, n, "bool")),
            },
        }
    }

    pub(crate) fn str(&self, m: &Map, key: &str) -> Result<Option<String>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Str(s) => Ok(Some(s.clone())),
                _ => Err(self.err(key, n, "string")),
            },
        }
    }

    pub(crate) fn int(&self, m: &Map, key: &str, bits32: bool) -> Result<Option<i64>, DecodeError> {
        let go_type = if bits32 { "int32" } else { "int64" };
        let Some(n) = m.get(key) else {
            return Ok(None);
        };
        let (lo, hi) = if bits32 {
            (f64::from(i32::MIN), f64::from(i32::MAX))
        } else {
            (-9.223_372_036_854_776e18, 9.223_372_036_854_776e18)
        };
        match &n.value {
            Value::Null => Ok(None),
            Value::Int(i) if !bits32 || i32::try_from(*i).is_ok() => Ok(Some(*i)),
            #[allow(clippy::cast_possible_truncation)]
            Value::Float(f) if f.fract() == 0.0 && *f >= lo && *f < hi => Ok(Some(*f as i64)),
            _ => Err(self.err(key, n, go_type)),
        }
    }

    pub(crate) fn map<'n>(
        &self,
        m: &'n Map,
        key: &str,
        go_type: &str,
    ) -> Result<Option<&'n Map>, DecodeError> {
        match m.get(key) {
            None => Ok(None),
            Some(n) => match &n.value {
                Value::Null => Ok(None),
                Value::Map(inner) => Ok(Some(inner)),
                _ => Err(self.err(key, n, go_type)),
            },
        }
    }

    pub(crate) fn seq<'n>(
        &self,
        m: &'n Map,
        key: &str,
        go_type: &str,
    ) -> Result<&'n [Node], DecodeError> {
        match m.get(key) {
            None => Ok(&[]),
            Some(n) => match &n.value {
                Value::Null => Ok(&[]),
                Value::Seq(items) => Ok(items),
                _ => Err(self.err(key, n, go_type)),
            },
        }
    }

    /// A list of strings of Go type `elem` (`string`, `v1.Capability`).
    pub(crate) fn strings(
        &self,
        m: &Map,
        key: &str,
        strukt: &'static str,
        elem: &str,
    ) -> Result<Vec<String>, DecodeError> {
        let cx = Cx {
            strukt,
            path: self.sub(key),
        };
        // perf: the list's Go type is spelled out only for an error.
        let items = match m.get(key) {
            None => return Ok(Vec::new()),
            Some(n) => match &n.value {
                Value::Null => return Ok(Vec::new()),
                Value::Seq(items) => items,
                _ => return Err(self.err(key, n, &format!("[]{elem}"))),
            },
        };
        items
            .iter()
            .map(|n| match &n.value {
                Value::Str(s) => Ok(s.clone()),
                Value::Null => Ok(String::new()),
                _ => Err(DecodeError(format!(
                    "json: cannot unmarshal {} into Go struct field {}.{} of type {elem}",
                    json_value(n),
                    cx.strukt,
                    cx.path
                ))),
            })
            .collect()
    }
}

/// How Go's `UnmarshalTypeError` names the JSON value it could not store.
fn json_value(n: &Node) -> String {
    match &n.value {
        Value::Bool(_) => "bool".to_owned(),
        Value::Int(_) => "number".to_owned(),
        Value::Float(f) => format!("number {f}"),
        Value::Str(_) => "string".to_owned(),
        Value::Seq(_) => "array".to_owned(),
        Value::Map(_) => "object".to_owned(),
        Value::Null => "null".to_owned(),
    }
}

static EMPTY: std::sync::LazyLock<Map> = std::sync::LazyLock::new(Map::new);

/// A list item: a map, or `null` (Go's zero value).
pub(crate) fn item<'n>(
    cx: &Cx<'_>,
    key: &str,
    n: &'n Node,
    go_type: &str,
) -> Result<&'n Map, DecodeError> {
    match &n.value {
        Value::Map(m) => Ok(m),
        Value::Null => Ok(&EMPTY),
        _ => Err(cx.err(key, n, go_type)),
    }
}
