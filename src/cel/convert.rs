//! Conversions between kpol's YAML tree and CEL values. kpol's own, not the crate's JSON
//! conversion (which turns integers into `uint`): `Int` stays `int`, `Float` stays `double` —
//! resources reach here already normalised the CLI's way, numbers as doubles (cel.md §9.1),
//! while params and policy-side data keep their integers.

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::objects::{Key, Map};

use crate::yaml::{Node, Value as Y};

/// A YAML node as a CEL value.
pub(crate) fn to_cel(node: &Node) -> Value {
    match &node.value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Int(i) => Value::Int(*i),
        Y::Float(f) => Value::Float(*f),
        Y::Str(s) => Value::String(Arc::new(s.clone())),
        Y::Seq(items) => Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Y::Map(m) => {
            let map: HashMap<Key, Value> = m
                .iter()
                .map(|(k, v)| (Key::from(k.to_owned()), to_cel(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// A map value from `(key, value)` pairs.
pub(crate) fn map_of<I, K>(entries: I) -> Value
where
    I: IntoIterator<Item = (K, Value)>,
    K: Into<String>,
{
    let map: HashMap<Key, Value> = entries
        .into_iter()
        .map(|(k, v)| (Key::from(k.into()), v))
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

/// A string value.
pub fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

/// A list of strings.
pub fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    Value::List(Arc::new(items.into_iter().map(string).collect()))
}

/// A CEL value back as a YAML node (map keys as strings), for results such as params lists.
pub(crate) fn to_node(value: &Value) -> Node {
    Node::synthetic(match value {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Int(i) => Y::Int(*i),
        Value::UInt(u) => i64::try_from(*u).map_or(Y::Float(*u as f64), Y::Int),
        Value::Float(f) => Y::Float(*f),
        Value::String(s) => Y::Str(s.to_string()),
        Value::List(l) => Y::Seq(l.iter().map(to_node).collect()),
        Value::Map(m) => {
            let mut out = crate::yaml::Map::with_capacity(m.map.len());
            let mut entries: Vec<(String, &Value)> =
                m.map.iter().map(|(k, v)| (key_string(k), v)).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, v) in entries {
                out.insert(k, crate::source::Span::EMPTY, to_node(v));
            }
            Y::Map(out)
        }
        other => Y::Str(format!("{other:?}")),
    })
}

fn key_string(k: &Key) -> String {
    match k {
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
        Key::String(s) => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn node(text: &str) -> Node {
        parse_documents(text, Limits::default())
            .unwrap()
            .remove(0)
            .root
    }

    #[test]
    fn integers_stay_int_floats_stay_double() {
        let v = to_cel(&node("{a: 1, b: 1.5, c: [x], d: null, e: true}"));
        let Value::Map(m) = v else { panic!() };
        assert_eq!(m.get(&Key::from("a")), Some(&Value::Int(1)));
        assert_eq!(m.get(&Key::from("b")), Some(&Value::Float(1.5)));
        assert_eq!(m.get(&Key::from("d")), Some(&Value::Null));
        assert_eq!(m.get(&Key::from("e")), Some(&Value::Bool(true)));
    }

    #[test]
    fn round_trip_to_node() {
        let n = node("{a: 1, b: [x, 2.5]}");
        assert_eq!(to_node(&to_cel(&n)).to_json(), n.to_json());
    }
}
